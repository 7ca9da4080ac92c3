// The fleet scenario's pure parts (bench/lib): the recorded traffic, the minimum it allows, nginx's
// configuration and the README headline block. The scenario itself runs in test/bench/fleet.smoke.spec.ts.
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nginxConfig } from '../../bench/lib/nginx.js';
import { HEADLINE_END, HEADLINE_START, updateBlock } from '../../bench/lib/summary.js';
import {
  generateTraffic,
  minimumCalls,
  requestPath,
  urlKey,
  type TrafficOptions,
  type TrafficRequest,
} from '../../bench/lib/traffic.js';

const ROOT = join(__dirname, '..', '..');

const OPTIONS: TrafficOptions = {
  keys: 500,
  zipfS: 1.1,
  ratePerS: 200,
  durationS: 10,
  burstEveryS: 4,
  burstClients: 100,
  burstSpreadMs: 5,
  consumers: 7,
  seed: 33,
};

const req = (t: number, key: string, variant: TrafficRequest['variant'] = 'plain'): TrafficRequest => ({
  t,
  key,
  path: requestPath(key, variant),
  variant,
  consumer: 0,
  burst: false,
});

describe('the fleet traffic', () => {
  const traffic = generateTraffic(OPTIONS);

  it('is the same on every generation (both fleets get the same requests), in time order', () => {
    expect(generateTraffic(OPTIONS)).toEqual(traffic);
    for (let i = 1; i < traffic.length; i++) expect(traffic[i].t).toBeGreaterThanOrEqual(traffic[i - 1].t);
    expect(traffic[traffic.length - 1].t).toBeLessThan(OPTIONS.durationS * 1000);
    expect(new Set(traffic.map((r) => r.consumer)).size).toBe(OPTIONS.consumers);
  });

  it('draws the steady requests from a Zipf distribution: the top series is asked for far more than the 100th', () => {
    const steady = traffic.filter((r) => !r.burst);
    // About 200/s for 10 s.
    expect(steady.length).toBeGreaterThan(1700);
    expect(steady.length).toBeLessThan(2300);
    const count = (key: string) => steady.filter((r) => r.key === key).length;
    expect(count('S100000')).toBeGreaterThan(10 * Math.max(1, count('S100099')));
  });

  it('has release bursts: the clients of each ask for one new series within a few milliseconds', () => {
    const bursts = new Map<string, number[]>();
    for (const r of traffic.filter((x) => x.burst)) bursts.set(r.key, [...(bursts.get(r.key) ?? []), r.t]);
    // At 2 s and 6 s.
    expect([...bursts.keys()]).toEqual(['R200000', 'R200001']);
    for (const times of bursts.values()) {
      expect(times).toHaveLength(OPTIONS.burstClients);
      expect(Math.max(...times) - Math.min(...times)).toBeLessThanOrEqual(OPTIONS.burstSpreadMs);
    }
  });

  it('spells one request four ways: parameter order, the stated default lang=en, the header form', () => {
    expect(new Set(traffic.map((r) => r.variant))).toEqual(new Set(['plain', 'order', 'lang', 'header']));
    expect(requestPath('S1', 'plain')).toBe('/macro/series/S1/data?start_date=2015-01-01&count=40');
    expect(requestPath('S1', 'order')).toBe('/macro/series/S1/data?count=40&start_date=2015-01-01');
    expect(requestPath('S1', 'lang')).toBe('/macro/series/S1/data?start_date=2015-01-01&count=40&lang=en');
    // The header form is the plain URL: a URL-keyed cache shares it with the plain spelling.
    expect(urlKey(req(0, 'S1', 'header'))).toBe(urlKey(req(0, 'S1', 'plain')));
  });
});

describe('the minimum number of vendor calls', () => {
  it('is one per series and TTL window, each window opened by a request, all spellings one series', () => {
    const requests = [
      req(0, 'A'),
      req(10, 'A', 'lang'),
      req(999, 'A', 'order'),
      req(1000, 'A'), // a TTL after the call at 0: a new window
      req(1500, 'B', 'header'),
      req(1999, 'A'),
      req(2000, 'A'), // 1,000 after the window opened at 1,000
      req(3500, 'B'),
    ];
    expect(minimumCalls(requests, 1000)).toEqual([0, 1000, 1500, 2000, 3500]);
    // Keyed by URL, the query spellings are keys of their own; the header one is the plain URL.
    expect(minimumCalls(requests, 1000, urlKey)).toEqual([0, 10, 999, 1000, 1500, 2000, 3500]);
    expect(minimumCalls(requests, 1000, undefined, 2000)).toEqual([0, 1000, 1500]);
  });
});

describe("nginx's configuration", () => {
  const conf = nginxConfig(
    {
      id: 'fleet-nginx-1',
      bin: 'nginx',
      upstreamUrl: 'http://127.0.0.1:4000/fleet-nginx/v2',
      prefix: '/macro/',
      ttlS: 10,
      dir: '/tmp/x',
    },
    5000,
  );

  it('runs as a plain foreground process with every path inside its directory', () => {
    expect(conf).toMatch(/^daemon off;\nmaster_process off;/);
    expect(conf).toContain('pid /tmp/x/nginx.pid;');
    expect(conf).toContain('listen 127.0.0.1:5000;');
    for (const path of conf.match(/(?:_path|pid|error_log) (\/\S+)/g) ?? [])
      expect(path).toContain(' /tmp/x/');
  });

  it('caches for the TTL with one lock per key and stale answers on update or a vendor 429', () => {
    expect(conf).toContain('proxy_pass http://vendor/fleet-nginx/v2/;');
    expect(conf).toContain('server 127.0.0.1:4000;');
    expect(conf).toContain('proxy_cache_valid 200 10s;');
    expect(conf).toContain('proxy_cache_lock on;');
    expect(conf).toMatch(/proxy_cache_use_stale [^;]*updating[^;]*http_429/);
    expect(conf).toContain('proxy_ignore_headers Cache-Control Expires Set-Cookie;');
  });
});

describe("README's headline figures", () => {
  const text = readFileSync(join(ROOT, 'README.md'), 'utf8');

  it('sit between markers npm run bench finds, and only that block is replaced', () => {
    expect(text.split(HEADLINE_START)).toHaveLength(2);
    expect(text.split(HEADLINE_END)).toHaveLength(2);
    const copy = join(mkdtempSync(join(tmpdir(), 'atrium-readme-')), 'README.md');
    copyFileSync(join(ROOT, 'README.md'), copy);
    expect(updateBlock(copy, HEADLINE_START, HEADLINE_END, 'NEW HEADLINE')).toBe(true);
    const [before, rest] = text.split(HEADLINE_START);
    const [, tail] = rest.split(HEADLINE_END);
    expect(readFileSync(copy, 'utf8')).toBe(
      `${before}${HEADLINE_START}\nNEW HEADLINE\n${HEADLINE_END}${tail}`,
    );
  });
});
