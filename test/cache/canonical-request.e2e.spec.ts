import fc from 'fast-check';
import { nestPathOf } from '../../src/proxy/request-builder.js';
import type { RouteDefinition } from '../../src/proxy/pipeline.types.js';
import { UPSTREAMS, type UpstreamName } from '../../src/upstreams/index.js';
import { testConsumer } from '../helpers/consumers.js';
import type { HttpResult } from '../helpers/gateway.js';
import { RecordingUpstream, type ReceivedRequest } from '../helpers/recording-upstream.js';
import { withGateway } from '../helpers/with-gateway.js';

/** The URL Nest routes `route` at under `prefix` (no trailing slash). */
const routeUrlOf = (prefix: string, route: { path: string }): string =>
  `/${prefix.replace(/^\/|\/$/g, '')}/${nestPathOf(route.path)}`.replace(/\/$/, '');

/**
 * One canonical request: over generated spellings of requests to every cacheable route of the four
 * interfaces (parameter order, list forms, case, percent-encodings, defaults present or absent, the header
 * and query forms of lang and format), two requests share a cache entry if and only if the vendor receives
 * byte-identical requests (method, path and query as sent, every header but per-request tracing).
 */

const NAMES: UpstreamName[] = ['macro', 'company', 'documents', 'deals'];
const vendors = Object.fromEntries(NAMES.map((n) => [n, new RecordingUpstream()])) as Record<
  UpstreamName,
  RecordingUpstream
>;

interface Cacheable {
  readonly upstream: UpstreamName;
  readonly prefix: string;
  readonly route: RouteDefinition;
}

const CACHEABLE: Cacheable[] = UPSTREAMS.flatMap((u) =>
  u.routes
    .filter((r) => r.method === 'GET' && r.cacheTtlMs !== undefined && !r.file && !r.sideEffect)
    .map((route) => ({ upstream: u.name, prefix: u.prefixes[0], route })),
);
const BY_ID = new Map(CACHEABLE.map((c) => [c.route.id, c]));

/** Query spellings, each one or more `k=v` parts; small pools so equal and different calls both come up. */
const PARTS = {
  lang: [undefined, 'lang=en', 'lang=EN', 'lang=%65n', 'lang=zh', 'lang=%20zh'],
  format: [undefined, 'format=json', 'format=JSON', 'format=xml'],
  model: [
    undefined,
    'with_model_information=true',
    'with_model_information=True',
    'with_model_information=1',
    'with_model_information=0',
    'with_model_information=false',
  ],
  status: [
    undefined,
    'status=DELETED',
    'status[0]=DELETED',
    'status%5B0%5D=DELETED',
    'status[]=DELETED',
    'status=ACTIVE,DELETED',
    'status=ACTIVE%2CDELETED',
    'status=ACTIVE&status=DELETED',
    'status[0]=ACTIVE&status[1]=DELETED',
  ],
  offset: [undefined, 'offset=0', 'offset=00', 'offset=5'],
  limit: [undefined, 'limit=100', 'limit=11'],
  order: [undefined, 'created_order=ASC', 'created_order=DESC'],
  after: [
    undefined,
    'created_after=2020-01-01',
    'created_after=20200101',
    'created_after=2020-01-01T00:00',
    'created_after=2020-01-01%2000:00',
  ],
  extra: [undefined, 'audit=90', 'Audit=90', 'x=1&x=2', 'x=2&x=1'],
} as const;

interface Spelling {
  readonly id: string;
  readonly parts: string[];
  readonly accept?: string;
  readonly acceptLanguage?: string;
}

const pick = <T>(xs: readonly T[]): fc.Arbitrary<T> => fc.constantFrom(...xs);

const spelling: fc.Arbitrary<Spelling> = fc
  .record({
    id: pick(['A1', 'b2']),
    chosen: fc.tuple(...Object.values(PARTS).map((xs) => pick(xs as readonly (string | undefined)[]))),
    accept: pick([undefined, 'application/json', 'application/xml', '*/*']),
    acceptLanguage: pick([undefined, 'en', 'zh', 'zh-CN,zh;q=0.9']),
    seed: fc.nat(),
  })
  .map(({ id, chosen, accept, acceptLanguage, seed }) => {
    const parts = chosen.filter((p): p is string => p !== undefined);
    // A deterministic shuffle: parameter order is one of the things generated.
    let s = seed;
    for (let i = parts.length - 1; i > 0; i--) {
      s = (s * 1103515245 + 12345) % 2 ** 31;
      const j = s % (i + 1);
      [parts[i], parts[j]] = [parts[j], parts[i]];
    }
    return { id, parts, accept, acceptLanguage };
  });

/** What decides the vendor's answer: everything it received but per-request tracing and the connection. */
function vendorView(r: ReceivedRequest): string {
  const skip = new Set(['x-request-id', 'traceparent', 'tracestate', 'host', 'connection']);
  const headers = Object.entries(r.headers)
    .filter(([k]) => !skip.has(k))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([r.method, r.target, headers]);
}

describe('one canonical request: a shared cache entry exactly when the vendor is asked the same', () => {
  const consumer = testConsumer({ id: 'canonical-prop' });
  const gw = withGateway({
    upstreams: Object.fromEntries(
      NAMES.map((n) => [n, { fake: vendors[n], token: `sbx_${n}_canonical_key_0001` }]),
    ) as Record<UpstreamName, { fake: RecordingUpstream; token: string }>,
    env: Object.fromEntries(NAMES.map((n) => [`UPSTREAM_${n.toUpperCase()}_RATE_PER_SEC`, '100000'])),
    consumers: [consumer],
  });
  let run = 0;

  const urlOf = (c: Cacheable, s: Spelling, runId: number): string => {
    const path = routeUrlOf(c.prefix, c.route).replace(/:[A-Za-z_][A-Za-z0-9_]*/g, s.id);
    return `${path}?${[...s.parts, `run=${runId}`].join('&')}`;
  };
  const send = (url: string, s: Spelling, noCache = false): Promise<HttpResult> =>
    gw.request(url, consumer.key, {
      headers: {
        ...(s.accept ? { accept: s.accept } : {}),
        ...(s.acceptLanguage ? { 'accept-language': s.acceptLanguage } : {}),
        ...(noCache ? { 'cache-control': 'no-cache' } : {}),
      },
    });

  /**
   * Asks for `a`, then `b` under a fresh run id: whether `b` was answered from `a`'s entry, and what the
   * vendor received for each (`b` is asked again with `no-cache` when it was a hit, to see its call).
   */
  async function compare(c: Cacheable, a: Spelling, b: Spelling) {
    const vendor = vendors[c.upstream];
    const runId = run++;
    const before = vendor.received.length;
    const ra = await send(urlOf(c, a, runId), a);
    if (ra.status !== 200) return undefined;
    expect(ra.headers['x-cache']).toBe('MISS');
    const viewA = vendorView(vendor.received[vendor.received.length - 1]);
    expect(vendor.received.length).toBe(before + 1);
    const rb = await send(urlOf(c, b, runId), b);
    if (rb.status !== 200) return undefined;
    const shared = rb.headers['x-cache'] === 'HIT';
    if (shared) await send(urlOf(c, b, runId), b, true);
    const viewB = vendorView(vendor.received[vendor.received.length - 1]);
    return { shared, viewA, viewB };
  }

  it('covers every cacheable GET route of the four interfaces', () => {
    expect(new Set(CACHEABLE.map((c) => c.upstream))).toEqual(new Set(NAMES));
    expect(BY_ID.has('macro.feeds.list')).toBe(true);
  });

  it('the issue example: status[0]=DELETED is not a hit for status=DELETED unless the vendor saw the same', async () => {
    const feeds = BY_ID.get('macro.feeds.list')!;
    const r = await compare(
      feeds,
      { id: 'A1', parts: ['status[0]=DELETED', 'limit=11'] },
      { id: 'A1', parts: ['status=DELETED', 'limit=11'] },
    );
    expect(r).toBeDefined();
    expect(r!.shared).toBe(r!.viewA === r!.viewB);
  });

  it('bare, ?lang=en, Accept-Language: en and the stated defaults of /feeds share one entry', async () => {
    const feeds = BY_ID.get('macro.feeds.list')!;
    const bare: Spelling = { id: 'A1', parts: [] };
    for (const other of [
      { id: 'A1', parts: ['lang=en'] },
      { id: 'A1', parts: [], acceptLanguage: 'en' },
      { id: 'A1', parts: ['format=json'] },
      { id: 'A1', parts: ['offset=0', 'limit=100', 'created_order=ASC', 'with_model_information=false'] },
    ] as Spelling[]) {
      const r = await compare(feeds, bare, other);
      expect([other, r?.shared]).toEqual([other, true]);
      expect(r!.viewB).toBe(r!.viewA);
    }
  });

  it('on every cacheable JSON route of the macroeconomic interface, bare, ?lang=en, Accept-Language: en, ?format=json and with_model_information=false share one entry', async () => {
    const macro = CACHEABLE.filter((c) => c.upstream === 'macro' && !c.route.file);
    expect(macro.map((c) => c.route.id)).toContain('macro.series.data');
    const bare: Spelling = { id: 'A1', parts: [] };
    for (const c of macro)
      for (const other of [
        { id: 'A1', parts: ['lang=en'] },
        { id: 'A1', parts: [], acceptLanguage: 'en' },
        { id: 'A1', parts: ['format=json', 'with_model_information=false'] },
      ] as Spelling[]) {
        const r = await compare(c, bare, other);
        expect([c.route.id, other, r?.shared]).toEqual([c.route.id, other, true]);
        expect(r!.viewB).toBe(r!.viewA);
      }
  });

  it('over generated spellings of every cacheable route: shared key ⇔ byte-identical vendor request', async () => {
    await fc.assert(
      fc.asyncProperty(pick(CACHEABLE.map((c) => c.route.id)), spelling, spelling, async (id, a, b) => {
        const c = BY_ID.get(id)!;
        const r = await compare(c, a, b);
        if (!r) return;
        expect({ id, a, b, ...r }).toEqual({ id, a, b, ...r, shared: r.viewA === r.viewB });
      }),
      // Feeds, the fully specified route with the most spellings, comes up in every run too.
      {
        numRuns: 250,
        examples: [
          [
            'macro.feeds.list',
            { id: 'A1', parts: ['status[0]=DELETED'] },
            { id: 'A1', parts: ['status=DELETED'] },
          ],
        ],
      },
    );
  }, 120_000);
});
