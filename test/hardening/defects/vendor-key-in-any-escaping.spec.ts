import { randomBytes } from 'node:crypto';
import { GatewayError } from '../../../src/core/errors/gateway-error.js';
import { SecretMatcher } from '../../../src/core/logging/secret-forms.js';
import { SecretRedactor } from '../../../src/core/logging/secret-redactor.js';
import type { ProxyRequest, ProxyResponse } from '../../../src/proxy/pipeline.types.js';
import { keyEchoStage } from '../../../src/proxy/stages/key-echo.stage.js';
import { settled } from '../../helpers/answer.js';
import { streamedThroughKeyEcho } from '../../helpers/key-echo-vendor.js';

// A vendor secret echoed in an escaping a real vendor stack produces (PHP's `\/`, `\u002f`, HTML and XML
// references, double encodings, either hex case, mixed within one echo) is found and masked, in a body,
// a header, a streamed file and an error message. Each escaping below is written out here, independently
// of the product's table; a consumer decoding the answer the way its format says would read the secret.

/** A key with the full alphabet vendors use: base64 with `/`, `+` and `=`, mixed case, digits. */
function vendorKey(): string {
  for (;;) {
    const k = randomBytes(30).toString('base64');
    if (/[/]/.test(k) && /[+]/.test(k) && /[a-z]/.test(k) && /[A-Z]/.test(k)) return `${k}==`.slice(0, 42);
  }
}

const hex2 = (c: string, upper: boolean) => {
  const h = c.charCodeAt(0).toString(16).padStart(2, '0');
  return upper ? h.toUpperCase() : h;
};
const each = (s: string, f: (c: string, i: number) => string) => [...s].map(f).join('');
const punct = (c: string) => !/[A-Za-z0-9]/.test(c);

/** Every escaping, each as a function of the secret, and how a consumer reads it back. */
const ESCAPED: Record<string, (s: string) => string> = {
  'JSON \\/ (PHP json_encode)': (s) => s.replace(/\//g, '\\/'),
  'JSON \\u002f, lower-case hex': (s) => each(s, (c) => (punct(c) ? `\\u00${hex2(c, false)}` : c)),
  'JSON \\u002F, upper-case hex': (s) => each(s, (c) => (punct(c) ? `\\u00${hex2(c, true)}` : c)),
  'JSON \\uXXXX for every character': (s) => each(s, (c) => `\\u00${hex2(c, false)}`),
  'JSON inside a JSON string (\\\\\\/)': (s) => s.replace(/\//g, '\\\\\\/'),
  'HTML decimal references (&#47;)': (s) => each(s, (c) => (punct(c) ? `&#${c.charCodeAt(0)};` : c)),
  'HTML decimal references with leading zeros (&#00047;)': (s) =>
    each(s, (c) => (punct(c) ? `&#000${c.charCodeAt(0)};` : c)),
  'XML hex references (&#x2F;)': (s) => each(s, (c) => (punct(c) ? `&#x${hex2(c, true)};` : c)),
  'XML hex references, lower case with zeros (&#x002f;)': (s) =>
    each(s, (c) => (punct(c) ? `&#x00${hex2(c, false)};` : c)),
  'HTML named references (&sol; &plus; &equals;)': (s) =>
    s.replace(/\//g, '&sol;').replace(/\+/g, '&plus;').replace(/=/g, '&equals;'),
  'HTML references for every character (&#97;)': (s) => each(s, (c) => `&#${c.charCodeAt(0)};`),
  'HTML escaped twice (&amp;#47;)': (s) => each(s, (c) => (punct(c) ? `&amp;#${c.charCodeAt(0)};` : c)),
  'percent-encoded, lower-case hex (%2f %2b %3d)': (s) =>
    each(s, (c) => (punct(c) ? `%${hex2(c, false)}` : c)),
  'percent-encoded every character (%41%62)': (s) => each(s, (c) => `%${hex2(c, true)}`),
  'percent-encoded twice, lower case (%252f)': (s) => each(s, (c) => (punct(c) ? `%25${hex2(c, false)}` : c)),
  'mixed within one echo (\\/, %2B, &#61;, \\u002F)': (s) =>
    each(s, (c, i) =>
      c === '/' ? (i % 2 ? '\\/' : '\\u002F') : c === '+' ? '%2B' : c === '=' ? '&#61;' : c,
    ),
};

describe('a vendor secret is masked in any escaping a vendor stack produces', () => {
  const key = vendorKey();

  it.each(Object.entries(ESCAPED))('%s: found and masked in a body', (_name, escape) => {
    const echo = escape(key);
    expect(echo).not.toContain(key);
    const matcher = new SecretMatcher([key]);
    const body = Buffer.from(`{"data":{"link":"https:\\/\\/v.example\\/dl?sessionId=${echo}&x=1"}}`);
    const { body: out, count } = matcher.scrubBuffer(body);
    expect(count).toBe(1);
    expect(out.toString()).toBe('{"data":{"link":"https:\\/\\/v.example\\/dl?sessionId=[REDACTED]&x=1"}}');
  });

  it.each(Object.entries(ESCAPED))('%s: masked in headers and error messages', async (_name, escape) => {
    const echo = escape(key);
    const redactor = new SecretRedactor();
    redactor.register(key);
    expect(redactor.redact(`upstream said: bad key ${echo}.`)).toBe('upstream said: bad key [REDACTED].');
    const stage = keyEchoStage({ secrets: () => [key], redact: (t) => redactor.redact(t) });
    const res = await stage(async (): Promise<ProxyResponse> => ({
      status: 200,
      headers: { 'content-disposition': `attachment; filename="${echo}.csv"`, 'content-type': 'text/csv' },
      body: Buffer.from('a,b\n'),
    }))({} as ProxyRequest);
    expect(res.headers['content-disposition']).toBe('attachment; filename="[REDACTED].csv"');
    const failing = stage(async (): Promise<ProxyResponse> => {
      throw new GatewayError('UPSTREAM_BAD_REQUEST', { message: `rejected ${echo}`, upstreamCode: echo });
    });
    const err = (await settled(failing, {} as ProxyRequest).catch((e: unknown) => e)) as GatewayError;
    expect(err.message).toBe('rejected [REDACTED]');
    expect(err.upstreamCode).toBe('[REDACTED]');
  });

  it.each(Object.entries(ESCAPED))(
    '%s: masked in a streamed file whatever the chunk boundaries',
    async (_name, escape) => {
      const text = `head ${escape(key)} tail`;
      for (const cut of [1, 7, Math.floor(text.length / 2), text.length - 6]) {
        const out = await streamedThroughKeyEcho(key, text, cut);
        expect(out).toHaveLength(text.length);
        expect(out).toMatch(/^head \*+ tail$/);
      }
    },
  );

  it('leaves text that only looks escaped alone, and an answer without any echo as the same Buffer', () => {
    const matcher = new SecretMatcher([key]);
    const body = Buffer.from('{"a":"\\u0041\\/b &amp; &#47; %2F %252F \\"q\\" &lt;x&gt;","n":"AB+/=="}');
    expect(matcher.scrubBuffer(body).body).toBe(body);
    expect(matcher.scrubText('Q&A: 50%25 off &lt;b&gt;').count).toBe(0);
  });
});
