import type { ServerResponse } from 'node:http';
import { request } from 'undici';
import { testConsumer } from '../../helpers/consumers.js';
import { startGateway, type GatewayHandle } from '../../helpers/gateway.js';
import { eventually } from '../../helpers/eventually.js';
import { stallMeter } from '../../helpers/gateway-client.js';
import { RawVendor } from '../../helpers/raw-vendor.js';

const DEADLINE_MS = 1500;
/** Issue 18: no answer later than the route deadline + 100 ms. */
const SLACK_MS = 100;
const TOKEN = 'sbx_test_hardening_06_vendor_7d1e';

/** Headers at once, then one byte every 100 ms for 5 s (a valid JSON body, had anyone waited). */
function trickle(vendor: RawVendor, res: ServerResponse, type: string): void {
  res.writeHead(200, { 'content-type': type });
  res.write('[');
  let sent = 0;
  vendor.every(100, res, () => {
    if (++sent >= 50) {
      res.end('0]');
      return false;
    }
    res.write(' ');
    return true;
  });
}

describe('a trickling vendor body is cut off at the deadline', () => {
  const reader = testConsumer({ id: 'reader', upstreams: new Set(['macro']) });
  let vendor: RawVendor;
  let gw: GatewayHandle;

  beforeAll(async () => {
    vendor = await new RawVendor().start();
    vendor.handler = (req, res) => {
      const path = new URL(req.url ?? '/', 'http://v').pathname;
      if (path === '/series/1') return trickle(vendor, res, 'application/json');
      if (path === '/series/2') {
        // Headers only after 5 s: the deadline must not wait for undici's coarse headers timer.
        vendor.every(5000, res, () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"data":[]}');
          return false;
        });
        return;
      }
      if (path === '/series/3/visual') {
        // A file whose headers come at once and whose first byte never does.
        res.writeHead(200, { 'content-type': 'image/png' });
        res.flushHeaders();
        return;
      }
      if (path === '/series/4/visual') {
        // A file that keeps moving past the deadline: 25 chunks, one every 100 ms.
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': '25' });
        res.write('x');
        let sent = 1;
        vendor.every(100, res, () => {
          res.write('x');
          if (++sent < 25) return true;
          res.end();
          return false;
        });
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"data":[]}');
    };
    gw = await startGateway({
      env: {
        UPSTREAM_MACRO_BASE_URL: vendor.url,
        UPSTREAM_MACRO_TOKEN: TOKEN,
        UPSTREAM_MACRO_TIMEOUT_MS: String(DEADLINE_MS),
        // A few timeouts must not open the breaker between the cases.
        UPSTREAM_MACRO_BREAKER_MIN_SAMPLE: '1000',
      },
      consumers: [reader.consumer],
    });
    // Warm the gateway and its connection pool, so the timings below measure the deadline only.
    const warm = await call('/macro/series/9');
    expect(warm.status).toBe(200);
  });
  afterAll(async () => {
    await gw?.close();
    await vendor?.close();
  });
  beforeEach(() => vendor.reset());

  async function call(path: string) {
    const started = performance.now();
    const res = await request(gw.url + path, { headers: { authorization: `Bearer ${reader.key}` } });
    const text = await res.body.text();
    return {
      status: res.statusCode,
      headers: res.headers,
      text,
      elapsedMs: performance.now() - started,
    };
  }

  async function expectTimeoutByDeadline(path: string) {
    // The gateway runs in this worker's event loop: while the whole suite loads both cores, the worker can
    // stall (a major GC of its heap, the scheduler) and no timer of anyone's fires meanwhile. The longest
    // stall seen during the call is added to the slack; a gateway that itself waits too long (undici's
    // coarse timers, up to ~0.5 s late on an idle loop: the defect) still fails.
    const stalls = stallMeter();
    const res = await call(path);
    const stallMs = stalls.stop();
    expect(res.status).toBe(504);
    const body = JSON.parse(res.text);
    expect(body.error).toMatchObject({ code: 'UPSTREAM_TIMEOUT', status: 504, upstream: 'macro' });
    expect(res.headers['x-request-id']).toBe(body.error.requestId);
    expect(res.elapsedMs).toBeLessThanOrEqual(DEADLINE_MS + SLACK_MS + stallMs);
    // It is the deadline that answered, not something earlier.
    expect(res.elapsedMs).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    // The gateway hung up on the vendor: the socket of that call is closed, not left trickling.
    expect(vendor.requests.length).toBeGreaterThanOrEqual(1);
    const socket = vendor.requests[vendor.requests.length - 1].socket;
    await eventually(() => socket.destroyed, { timeoutMs: 1000, what: 'the vendor socket to close' });
    return res;
  }

  it('a body trickling past the deadline: 504 UPSTREAM_TIMEOUT within deadline + 100 ms, socket closed', async () => {
    await expectTimeoutByDeadline('/macro/series/1');
    // Nothing was cached: the next call reaches the vendor again.
    vendor.reset();
    await expectTimeoutByDeadline('/macro/series/1');
    expect(vendor.requests).toHaveLength(1);
  });

  it('headers later than the deadline: 504 within deadline + 100 ms (not undici’s coarse timer)', async () => {
    await expectTimeoutByDeadline('/macro/series/2');
  });

  it('a streamed file must send its headers and first chunk by the deadline', async () => {
    await expectTimeoutByDeadline('/macro/series/3/visual');
  });

  it('a streamed file that keeps moving may outlast the deadline (bounded by the idle timeout instead)', async () => {
    const res = await call('/macro/series/4/visual');
    expect(res.status).toBe(200);
    expect(res.text).toBe('x'.repeat(25));
    expect(res.elapsedMs).toBeGreaterThan(DEADLINE_MS);
  });
});
