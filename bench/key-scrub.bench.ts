// Benchmark: what the key-echo scrub costs an answer, in-process (no HTTP), for the secrets one upstream
// credential holds. The case that matters is an answer without any secret: every miss pays it once before
// the answer is stored, and a cache hit pays nothing (the cache keeps the scrubbed answer). The dirty case
// shows the price of an actual echo.
//
//   npm run bench:scrub                 # 5 rounds of 2 s per case
//   BENCH_SCRUB_SECONDS=1 npm run bench:scrub
import { randomBytes } from 'node:crypto';
import { SecretMatcher } from '../src/core/logging/secret-forms.js';

const seconds = Number(process.env.BENCH_SCRUB_SECONDS ?? 2);
const rounds = Number(process.env.BENCH_SCRUB_ROUNDS ?? 5);

/** A vendor key and a session id as the vendors issue them (base64, with `/`, `+`, `=`), and a password. */
const secrets = [
  randomBytes(32).toString('base64'),
  randomBytes(24).toString('base64'),
  `Pw/${randomBytes(12).toString('base64')}`,
];

/** A JSON answer of about `bytes` bytes, shaped like the vendors' (ids, names, links, numbers). */
function answer(bytes: number): Buffer {
  const items: unknown[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const item = {
      id: `S${100000 + i}`,
      name: `Gross domestic product, real, seasonally adjusted ${i}`,
      link: `https://api.vendor.test/v2/series/S${100000 + i}?lang=en&format=json`,
      values: [1.25 * i, 2.5, 3.75],
      note: 'Q&A: "units" are 2015=100 / base-year; see &lt;notes&gt;',
    };
    size += JSON.stringify(item).length + 1;
    items.push(item);
  }
  return Buffer.from(JSON.stringify({ data: items }));
}

function measure(label: string, body: Buffer, run: (b: Buffer) => unknown): void {
  const perCall: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const until = performance.now() + seconds * 1000;
    let n = 0;
    const t0 = performance.now();
    while (performance.now() < until) {
      for (let i = 0; i < 64; i++) run(body);
      n += 64;
    }
    perCall.push(((performance.now() - t0) * 1000) / n);
  }
  perCall.sort((a, b) => a - b);
  const median = perCall[Math.floor(perCall.length / 2)];
  process.stdout.write(
    `${label.padEnd(40)} ${median.toFixed(2).padStart(9)} us/answer  (${(body.length / median).toFixed(0)} MB/s; rounds ${perCall.map((v) => v.toFixed(2)).join(' ')})\n`,
  );
}

const matcher = new SecretMatcher(secrets);
const t0 = performance.now();
new SecretMatcher(secrets);
process.stdout.write(
  `patterns for ${secrets.length} secrets built in ${(performance.now() - t0).toFixed(2)} ms\n`,
);

/** The same answer as PHP's json_encode writes it: every `/` as `\\/` (an escape to decode everywhere). */
const php = (b: Buffer): Buffer => Buffer.from(b.toString().replace(/\//g, '\\/'));

for (const size of [2 * 1024, 64 * 1024]) {
  const clean = answer(size);
  measure(`clean PHP answer, ${size / 1024} KiB: inBuffer`, php(clean), (b) => matcher.inBuffer(b));
  measure(`clean answer, ${size / 1024} KiB: inBuffer`, clean, (b) => matcher.inBuffer(b));
  measure(`clean answer, ${size / 1024} KiB: scrubBuffer`, clean, (b) => matcher.scrubBuffer(b));
  const s = secrets[1];
  const dirty = Buffer.from(
    clean
      .toString()
      .replace('"note"', `"key":"${s.replace(/\//g, '\\/')}","link2":"?t=${encodeURIComponent(s)}","note"`),
  );
  measure(`answer with 2 echoes, ${size / 1024} KiB: scrubBuffer`, dirty, (b) => matcher.scrubBuffer(b));
}
