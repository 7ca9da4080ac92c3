import { FeedsQueryDto } from '../../src/upstreams/macro/dto/feeds-query.dto.js';
import {
  cacheKeyOf,
  canonicalQuery,
  pathOfKey,
  upstreamOfKey,
  type KeyContext,
} from '../../src/proxy/cache/cache-key.js';
import type { ProxyRequest, RouteDefinition } from '../../src/proxy/pipeline.types.js';

const feedsRoute: RouteDefinition = {
  id: 'macro.feeds.list',
  method: 'GET',
  path: '/feeds',
  family: 'feeds',
  cacheTtlMs: 30_000,
  query: FeedsQueryDto,
};
const plainRoute: RouteDefinition = {
  id: 'macro.dictionary.units',
  method: 'GET',
  path: '/dictionary/units',
  family: 'dictionary',
  cacheTtlMs: 1000,
};

function req(partial: Partial<ProxyRequest> = {}, route: RouteDefinition = feedsRoute): ProxyRequest {
  return {
    upstream: 'macro',
    route,
    method: 'GET',
    path: route.path,
    query: [],
    headers: {},
    consumerId: 'c',
    requestId: 'r',
    format: 'json',
    lang: 'en',
    credentialId: 'token:0123456789ab',
    deadline: Date.now() + 1000,
    noCache: false,
    weight: 1,
    ...partial,
  };
}

const feeds: KeyContext = { family: 'feeds' };
const plain: KeyContext = { family: 'dictionary' };
const keyOf = (r: Partial<ProxyRequest>, ctx = feeds) =>
  cacheKeyOf(req(r, ctx === feeds ? feedsRoute : plainRoute), ctx);

describe('cache key canonicalisation', () => {
  it('derives the same key for the same request, another for another', () => {
    const query: [string, string][] = [
      ['limit', String(Math.random())],
      ['offset', '4'],
    ];
    const first = keyOf({ query });
    expect(first.hash).toMatch(/^[0-9a-f]{32}$/);
    expect(keyOf({ query }).full).toBe(first.full);
    expect(keyOf({ query: [['limit', '1']] }).full).not.toBe(first.full);
  });

  it('keys the query exactly as the upstream receives it (the canonical request made it one spelling)', () => {
    // Order, case and list forms were settled by canonical-request.ts; the key merges nothing more.
    expect(
      canonicalQuery([
        ['b', '2'],
        ['a', '1'],
        ['a', '0'],
      ]),
    ).toBe('b=2&a=1&a=0');
    expect(
      keyOf(
        {
          query: [
            ['x', '1'],
            ['x', '2'],
          ],
        },
        plain,
      ).hash,
    ).not.toBe(
      keyOf(
        {
          query: [
            ['x', '2'],
            ['x', '1'],
          ],
        },
        plain,
      ).hash,
    );
    expect(keyOf({ query: [['flag', 'True']] }, plain).full).not.toBe(
      keyOf({ query: [['flag', 'true']] }, plain).full,
    );
    expect(keyOf({ query: [['status[0]', 'DELETED']] }).full).not.toBe(
      keyOf({ query: [['status', 'DELETED']] }).full,
    );
  });

  it('removes every consumer credential form: token, TOKEN, sessionId, token[0]', () => {
    const bare = keyOf({ query: [['limit', '2']] });
    for (const cred of [
      [['token', 'atr_secret_key_123']],
      [['TOKEN', 'atr_secret_key_123']],
      [['sessionId', 'atr_secret_key_123']],
      [['SESSIONID', 'x']],
      [['token[0]', 'atr_secret_key_123']],
      [
        ['token', 'None'],
        ['token', 'other'],
      ],
    ] as Array<Array<[string, string]>>) {
      const k = keyOf({ query: [...cred, ['limit', '2']] });
      expect(k.full).toBe(bare.full);
      expect(k.full).not.toContain('atr_secret_key_123');
    }
  });

  it('keys on what reaches the upstream: lang and format in the query, and the upstream-bound headers', () => {
    const header = keyOf({ headers: { 'accept-language': 'en', accept: 'application/json' } });
    // The query is forwarded: `?lang=en` reaches the upstream differently from the header alone.
    expect(
      keyOf({ headers: { 'accept-language': 'en', accept: 'application/json' }, query: [['lang', 'en']] })
        .full,
    ).not.toBe(header.full);
    expect(keyOf({ headers: { 'accept-language': 'zh', accept: 'application/json' } }).full).not.toBe(
      header.full,
    );
    expect(keyOf({ headers: { 'accept-language': 'en', accept: 'application/xml' } }).full).not.toBe(
      header.full,
    );
    expect(keyOf({ query: [['Lang', 'zh']] }).full).not.toBe(keyOf({}).full);
    // Tracing never splits the cache.
    expect(
      keyOf({ headers: { 'accept-language': 'en', accept: 'application/json', 'x-request-id': 'abc' } }).full,
    ).toBe(header.full);
  });

  it('separates credentials, paths, methods and upstreams', () => {
    const k = keyOf({});
    expect(keyOf({ credentialId: 'token:fedcba987654' }).full).not.toBe(k.full);
    expect(keyOf({ path: '/feeds/FD-1' }).full).not.toBe(k.full);
    expect(keyOf({ method: 'POST' }).hash).not.toBe(k.hash);
    expect(keyOf({ upstream: 'company' }).full).not.toBe(k.full);
  });

  it('keeps upstream, credential id, family and path readable for purges; no secret', () => {
    const k = keyOf({ path: '/feeds/FD-1', query: [['token', 'atr_secret_key_123']] });
    expect(k.scope).toBe('macro:token%3A0123456789ab:feeds');
    expect(k.full).toBe(`${k.scope}:${k.hash}:/feeds/FD-1`);
    expect(k.lockId).toBe(`${k.scope}:${k.hash}`);
    expect(k.hash).toMatch(/^[0-9a-f]{32}$/);
    expect(upstreamOfKey(k.full)).toBe('macro');
    expect(pathOfKey(k.full)).toBe('/feeds/FD-1');
    expect(pathOfKey(`${k.scope}#3:${k.hash}:/feeds/x:y`)).toBe('/feeds/x:y');
    expect(JSON.stringify(k)).not.toContain('atr_secret_key_123');
  });

  it('bounds the path kept in the key but hashes all of it', () => {
    const long = '/series/' + '1%2C'.repeat(400) + '2/data';
    const other = '/series/' + '1%2C'.repeat(400) + '3/data';
    const a = keyOf({ path: long }, plain);
    expect(a.path.length).toBe(512);
    expect(keyOf({ path: other }, plain).hash).not.toBe(a.hash);
  });
});
