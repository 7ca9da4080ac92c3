// The bench's fake vendor: serves the 2 KB / 200 KB series bodies with optional latency, counts calls per
// lane (the first path segment, one per server under test, so counts cannot mix), and answers 429 with
// Retry-After on the lanes listed in FAKE_429_LANES ("the vendor in cooldown"). Deliberately tiny: it
// shares the two cores with everything else, so it records nothing but counters.
import { createServer } from 'node:http';
import { payload, sizeOfUrl } from '../lib/payloads.js';

const port = Number(process.env.PORT ?? 0);
const stormLanes = new Set((process.env.FAKE_429_LANES ?? '').split(',').filter(Boolean));
const retryAfter = String(Number(process.env.FAKE_RETRY_AFTER_S ?? 3600));
const calls = new Map<string, number>();
const DELAY = /[?&]delay=(\d+)/;
const RATE_LIMITED = Buffer.from(
  JSON.stringify({ errors: { status: 429, code: 'TOO_MANY_REQUESTS', message: 'Rate limit exceeded.' } }),
);
const bodies = { '2k': payload('2k'), '200k': payload('200k') };

const server = createServer((req, res) => {
  const url = req.url ?? '/';
  if (url.startsWith('/__')) {
    const body = url.startsWith('/__stats') ? JSON.stringify({ calls: Object.fromEntries(calls) }) : '{}';
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
    return;
  }
  const slash = url.indexOf('/', 1);
  const lane = url.slice(1, slash === -1 ? undefined : slash);
  calls.set(lane, (calls.get(lane) ?? 0) + 1);
  if (stormLanes.has(lane)) {
    res.writeHead(429, {
      'content-type': 'application/json',
      'content-length': RATE_LIMITED.length,
      'retry-after': retryAfter,
    });
    res.end(RATE_LIMITED);
    return;
  }
  const body = bodies[sizeOfUrl(url)];
  const send = () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  };
  const delay = Number(DELAY.exec(url)?.[1] ?? 0);
  if (delay > 0) setTimeout(send, delay);
  else send();
});
server.keepAliveTimeout = 60_000;
server.listen(port, '127.0.0.1');
process.once('SIGTERM', () => server.close(() => process.exit(0)));
