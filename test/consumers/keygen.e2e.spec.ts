import { parseConsumer, sha256 } from '../../src/core/auth/consumer-record.js';
import { keygen as run } from '../../src/keygen.js';
import { UPSTREAM_NAMES } from '../../src/upstreams/index.js';
import { recordSecret } from '../observability/log-capture.js';

const KNOWN = UPSTREAM_NAMES;

// The command in-process (scripts/keygen.mjs runs the same function from dist/, over the index).
function keygen(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  return run(args);
}

describe('npm run keygen', () => {
  it('emits a complete entry the consumers file accepts: sensible limits, an explicit CORS list', () => {
    const r = keygen('reports-app', '--json');
    expect(r.status).toBe(0);
    const { key, entry } = JSON.parse(r.stdout);
    recordSecret(key);
    expect(entry).toMatchObject({
      id: 'reports-app',
      upstreams: ['macro'],
      write: false,
      limits: [
        { name: 'per-second', ttlMs: 1000, limit: 10 },
        { name: 'per-minute', ttlMs: 60_000, limit: 300 },
      ],
      weight: 1,
      reservedShare: 0,
      corsOrigins: [],
      enabled: true,
    });
    const c = parseConsumer(entry, 0, KNOWN);
    expect(c.keyHashes).toEqual([sha256(key)]);
    expect(r.stdout.match(/atr_/g)).toHaveLength(1);
  });

  it('takes flags for every field and validates them', () => {
    const r = keygen(
      'web',
      '--json',
      '--upstreams',
      'macro,deals',
      '--write',
      '--per-second',
      '5',
      '--per-minute',
      '100',
      '--cors',
      'https://web.example,http://localhost:5173',
      '--weight',
      '2',
      '--reserved-share',
      '0.2',
      '--expires-at',
      '2999-01-01T00:00:00Z',
    );
    expect(r.status).toBe(0);
    const { key, entry } = JSON.parse(r.stdout);
    recordSecret(key);
    const c = parseConsumer(entry, 0, KNOWN);
    expect([...c.upstreams]).toEqual(['macro', 'deals']);
    expect([c.write, c.weight, c.reservedShare, c.corsOrigins]).toEqual([
      true,
      2,
      0.2,
      ['https://web.example', 'http://localhost:5173'],
    ]);
    expect(c.limits.map((l) => l.limit)).toEqual([5, 100]);
    expect(c.keys?.[0].expiresAt).toBe(Date.UTC(2999, 0, 1));
    for (const bad of [
      ['--upstreams', 'nope'],
      ['--per-second', '0'],
      ['--cors', '*'],
      ['--cors', 'https://web.example/path'],
      ['--reserved-share', '1'],
      ['--expires-at', '2001-01-01T00:00:00Z'],
    ]) {
      const refused = keygen('x', ...bad);
      expect({ bad, status: refused.status }).toEqual({ bad, status: 2 });
      expect(refused.stdout).toBe('');
    }
  });

  it('prints the key once and the entry for humans by default', () => {
    const r = keygen('human-app');
    expect(r.status).toBe(0);
    const key = /key {9}: (atr_\S+)/.exec(r.stdout)![1];
    recordSecret(key);
    expect(r.stdout.split(key)).toHaveLength(2);
    const entry = JSON.parse(r.stdout.slice(r.stdout.indexOf('{')));
    expect(parseConsumer(entry, 0, KNOWN).id).toBe('human-app');
  });
});
