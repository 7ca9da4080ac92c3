// The fleet scenario's fake vendor: answers every series-data call with the 2 KB body after a fixed latency
// (FAKE_DELAY_MS, tens of ms as a real vendor), and records the time of every call per lane (the first path
// segment: one lane per fleet), so the runner can count calls and draw them over time. A lane can be put in
// cooldown (`POST /__cooldown?lane=x&ms=n`): for n ms it answers 429 with a Retry-After of the time left.
// node:http and nothing else: it shares the cores with the fleets it measures.
import { createServer } from 'node:http';
import { payload } from '../lib/payloads.js';

const port = Number(process.env.PORT ?? 0);
const delayMs = Number(process.env.FAKE_DELAY_MS ?? 30);
const body = payload('2k');
const RATE_LIMITED = Buffer.from(
  JSON.stringify({ errors: { status: 429, code: 'TOO_MANY_REQUESTS', message: 'Rate limit exceeded.' } }),
);

interface Lane {
  /** Milliseconds since the lane's mark, one per call. */
  times: number[];
  /** Calls with `lang` in the query (a spelling a canonical cache folds into Accept-Language). */
  langInQuery: number;
  /** Times of the calls answered 429 (during the cooldown). */
  refused: number[];
  mark: number;
  /** When the cooldown was asked for (ms since the mark), and until when it lasts (performance.now()). */
  cooldownAt: number | null;
  cooldownUntil: number;
}
const fresh = (): Lane => ({
  times: [],
  langInQuery: 0,
  refused: [],
  mark: performance.now(),
  cooldownAt: null,
  cooldownUntil: 0,
});
const lanes = new Map<string, Lane>();
const laneOf = (name: string): Lane => {
  let l = lanes.get(name);
  if (!l) lanes.set(name, (l = fresh()));
  return l;
};

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://vendor');
  if (url.pathname.startsWith('/__')) {
    const name = url.searchParams.get('lane') ?? '';
    let out: unknown = {};
    if (url.pathname === '/__mark') {
      // A fresh record for the lane: times are counted from now.
      lanes.set(name, fresh());
    } else if (url.pathname === '/__cooldown') {
      const l = laneOf(name);
      l.cooldownAt = Math.round(performance.now() - l.mark);
      l.cooldownUntil = performance.now() + Number(url.searchParams.get('ms') ?? 0);
    } else if (url.pathname === '/__stats') {
      const l = laneOf(name);
      out = { times: l.times, langInQuery: l.langInQuery, refused: l.refused, cooldownAt: l.cooldownAt };
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(out));
    return;
  }
  const slash = url.pathname.indexOf('/', 1);
  const lane = laneOf(url.pathname.slice(1, slash === -1 ? undefined : slash));
  const now = performance.now();
  const at = Math.round(now - lane.mark);
  lane.times.push(at);
  if (url.searchParams.has('lang')) lane.langInQuery++;
  if (now < lane.cooldownUntil) {
    lane.refused.push(at);
    res.writeHead(429, {
      'content-type': 'application/json',
      'content-length': RATE_LIMITED.length,
      'retry-after': String(Math.ceil((lane.cooldownUntil - now) / 1000)),
    });
    res.end(RATE_LIMITED);
    return;
  }
  // No Cache-Control or Expires: both caches keep an answer for the TTL they are configured with.
  setTimeout(() => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  }, delayMs);
});
server.keepAliveTimeout = 60_000;
server.listen(port, '127.0.0.1');
process.once('SIGTERM', () => server.close(() => process.exit(0)));
