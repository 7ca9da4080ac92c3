import { testConsumer } from '../helpers/consumers.js';
import { http, withGateway } from '../helpers/gateway.js';

/**
 * Sandbox mode as `npm start` wires it (src/gateway.ts): the built-in fakes, documents through the login step
 * (username/password), the other interfaces with tokens. In-process: the spawned `npm start` itself is
 * covered by test/e2e/sandbox-start.e2e.spec.ts, and a second spawning suite would race it to rebuild dist/.
 */
describe('sandbox mode serves the company, document and deal interfaces', () => {
  const demo = testConsumer({ id: 'demo' });
  const gw = withGateway({ sandbox: true, consumers: [demo] });

  it('the examples of the README and docs/interfaces.md answer with the demo key (documents through the login step)', async () => {
    const key = demo.key;
    const h = { authorization: `Bearer ${key}` };
    const company = await http(`${gw.url}/company/companies/match?company_name=bank&limit=2`, { headers: h });
    expect(company.status).toBe(200);
    expect(company.json().data.items.length).toBeGreaterThan(0);
    const docs = await http(`${gw.url}/documents/Search/query/?countries[0]=PL&limit=2`, { headers: h });
    expect(docs.status).toBe(200);
    expect(docs.json().data._type).toBe('Emis\\Entity\\Api\\Document\\Result');
    const dealsRes = await http(`${gw.url}/deals/SearchDeal/getDeals/?limit=2&token=${key}`);
    expect(dealsRes.status).toBe(200);
    expect(dealsRes.json().data.deals).toHaveLength(2);
    // The EMIS client's way: log in with the consumer id and key, then call with the session id.
    const login = await http(`${gw.url}/news/Auth/login/?username=demo&password=${encodeURIComponent(key)}`);
    expect(login.json()).toEqual({ data: { sessionId: key } });
    const topics = await http(`${gw.url}/news/Dictionary/getTopics/?sessionId=${encodeURIComponent(key)}`);
    expect(topics.status).toBe(200);
    expect(gw.sandbox.documents.logins).toBe(1);
    const ready = (await http(`${gw.url}/health/ready`)).json();
    const documents = ready.upstreams.find((u: { name: string }) => u.name === 'documents');
    expect(documents).toMatchObject({ sandbox: true, session: { state: 'active', logins: 1 } });
  });
});
