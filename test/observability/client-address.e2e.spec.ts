import { overrideDefaultLogDestination } from '../../src/core/logging/log-destination.js';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { http, withGateway } from '../helpers/gateway.js';
import { captureDestination } from './log-capture.js';

const UPSTREAM_TOKEN = 'sbx_macro_clientaddr_token_6d21';

/** Request lines the gateway logs (also written to the run's log capture). */
function requestLines(): () => Array<Record<string, unknown>> {
  const chunks: string[] = [];
  const capture = captureDestination();
  overrideDefaultLogDestination({
    write(line: string) {
      chunks.push(line);
      capture.write(line);
    },
  });
  return () =>
    chunks
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'request');
}

for (const trusted of [true, false])
  describe(`client address in the request log (${trusted ? 'behind a trusted proxy' : 'no trusted proxy'})`, () => {
    const app = testConsumer({ id: 'addr-app', upstreams: new Set(['macro']) });
    let lines: () => Array<Record<string, unknown>>;
    beforeAll(() => {
      lines = requestLines();
    });
    afterAll(() => overrideDefaultLogDestination(captureDestination()));
    const fake = new FakeMacroUpstream({ token: UPSTREAM_TOKEN });
    const gw = withGateway({
      upstreams: { macro: { fake, token: UPSTREAM_TOKEN } },
      env: { LOG_LEVEL: 'info', ATRIUM_TRUSTED_PROXIES: trusted ? '10.0.0.0/8, 127.0.0.1' : undefined },
      consumers: [app],
    });

    it(`${trusted ? 'believes' : 'ignores'} X-Forwarded-For and logs the trace id`, async () => {
      const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
      const reqId = `addr-${trusted ? 'trusted' : 'direct'}`;
      await http(`${gw.url}/macro/feeds?limit=1`, {
        headers: {
          authorization: `Bearer ${app.key}`,
          'x-request-id': reqId,
          'x-forwarded-for': '203.0.113.7, 10.1.2.3',
          traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
        },
      });
      const line = lines().find((l) => l.reqId === reqId);
      expect(line).toMatchObject({ client: trusted ? '203.0.113.7' : '127.0.0.1', traceId });
    });
  });
