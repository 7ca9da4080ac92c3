import { testConsumer } from '../../helpers/consumers.js';
import { withGateway } from '../../helpers/gateway.js';
import { call, type Answer } from '../../helpers/gateway-client.js';
import { findDecoded, findSecrets, secretForms, type SecretForm } from '../../helpers/secret-forms.js';

// The sandbox's EMIS fakes answer as the PHP stacks do: JSON written by json_encode (`\/`), session ids
// with the full base64 alphabet, document links carrying the caller's session id, and API errors whose
// `debug` field echoes the request URI and the credential. A sandbox run shows none of it to a consumer:
// links come back signed, echoes masked, in JSON and XML, in bodies and headers, and through a followed link
// (GET and HEAD).

describe('the sandbox fakes echo their credentials as PHP stacks do, and no answer carries one', () => {
  const app = testConsumer({ id: 'sandbox-echo-app' });
  const gw = withGateway({ sandbox: true, consumers: [app] });
  const auth = { authorization: `Bearer ${app.key}` };

  /** Every vendor secret of the run: the sandbox's keys and passwords and the session ids the fakes gave out. */
  const secrets = (): Map<string, SecretForm[]> => {
    const { credentials, documents, deals } = gw.sandbox;
    const all = new Map<string, string>([
      ['macro token', credentials.macro.token],
      ['company token', credentials.company.token],
      ['documents token', credentials.documents.token],
      ['documents password', credentials.documents.password!],
      ['deals token', credentials.deals.token],
      ['deals password', credentials.deals.password!],
    ]);
    for (const fake of [documents, deals])
      for (const r of fake.requests)
        for (const [k, v] of r.query) if (k === 'sessionId') all.set(`${fake.kind} session ${v}`, v);
    return new Map([...all].map(([name, s]) => [name, secretForms(s)]));
  };
  const leaks = (a: Answer) => {
    const text = `${JSON.stringify(a.headers)}\n${a.text}`;
    return [...findSecrets(text, secrets()), ...findDecoded(text, secrets())];
  };
  const get = (path: string, method: 'GET' | 'HEAD' = 'GET') =>
    call(gw.url + path, { method, headers: auth });

  it('the documents fake itself echoes its session id PHP-escaped, in links and in debug fields', async () => {
    const { documents } = gw.sandbox;
    expect((await get('/documents/Dictionary/getTopics/')).status).toBe(200);
    const session = documents.requests.flatMap((r) => r.query).find(([k]) => k === 'sessionId')![1];
    expect(session).toMatch(/\//);
    const q = `sessionId=${encodeURIComponent(session)}`;
    const search = await call(`${documents.url}/Search/query/?countries[0]=PL&limit=1&${q}`);
    expect(search.text).toContain(`&${q}`);
    expect(search.text).toContain('http:\\/\\/');
    const error = await call(`${documents.url}/Search/getDocuments/?ids[0]=x&${q}`);
    expect(error.text).toContain(`"credential":"${session.replace(/\//g, '\\/')}"`);
  });

  it.each([
    [
      'a search whose document links carry the session id',
      '/documents/Search/query/?countries[0]=PL&limit=3',
    ],
    ['documents by id, with their links', '/documents/Search/getDocuments/?ids[0]=88002&ids[1]=88217'],
    [
      'a documents API error echoing the request and the session id',
      '/documents/Search/getDocuments/?ids[0]=x',
    ],
    ['the same error as XML', '/documents/Search/getDocuments/?ids[0]=x&format=xml'],
    ['a document id the portal does not have', '/documents/Search/getDocuments/?ids[0]=999999999'],
    ['a deals API error echoing the request and the portal key', '/deals/DealInfo/getDealInfo/'],
    ['a deals search', '/deals/SearchDeal/getDeals/?limit=2'],
  ])('%s: no vendor secret in any escaping', async (_name, path) => {
    const a = await get(path);
    expect(a.status).toBeLessThan(500);
    expect(leaks(a)).toEqual([]);
  });

  it('a signed document link answers GET and HEAD alike, and neither shows a secret', async () => {
    const search = await get('/documents/Search/query/?countries[0]=PL&limit=1');
    const link = (
      JSON.parse(search.text) as { data: { documents: Array<{ files: Array<{ link: string }> }> } }
    ).data.documents[0].files[0].link;
    expect(link).toMatch(/^\/links\/documents\//);
    const got = await get(link);
    const head = await get(link, 'HEAD');
    expect(got.status).toBe(200);
    expect({ status: head.status, body: head.body.length }).toEqual({ status: 200, body: 0 });
    expect(head.headers['content-type']).toBe(got.headers['content-type']);
    expect(leaks(got)).toEqual([]);
    expect(leaks(head)).toEqual([]);
  });
});
