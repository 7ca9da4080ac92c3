import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AtriumClient, AtriumError } from '../../client/index.js';
import { generateClient } from '../../src/docs/client-generator.js';
import { createDocumentApp } from '../../src/document-app.js';
import { buildOpenApiDocument } from '../../src/docs/openapi.document.js';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { withGateway } from '../helpers/gateway.js';

const ROOT = join(__dirname, '../..');

describe('generated client (npm run client:generate)', () => {
  it('is up to date: regenerating from the routed application gives the committed files byte for byte', async () => {
    const app = await createDocumentApp();
    try {
      const files = await generateClient(buildOpenApiDocument(app));
      expect(files.map((f) => f.path).sort()).toEqual([
        'generated/api.ts',
        'generated/openapi.json',
        'generated/operations.ts',
      ]);
      for (const f of files) {
        const committed = readFileSync(join(ROOT, 'client', f.path), 'utf8');
        // A failure here means the routes or their docs changed: run `npm run client:generate` and commit.
        expect({ file: f.path, upToDate: committed === f.content }).toEqual({ file: f.path, upToDate: true });
      }
    } finally {
      await app.close();
    }
  });

  describe('against a live gateway', () => {
    const TOKEN = 'sbx_macro_client_test_token_9c1f';
    const reader = testConsumer({ id: 'client-reader', upstreams: new Set(['macro']) });
    const writer = testConsumer({ id: 'client-writer', upstreams: new Set(['macro']), write: true });
    const fake = new FakeMacroUpstream({ token: TOKEN });
    const gw = withGateway({
      upstreams: { macro: { fake, token: TOKEN } },
      consumers: [reader, writer],
    });

    it('calls a typed operation with query parameters; lists go comma-separated as documented', async () => {
      const atrium = new AtriumClient({ baseUrl: gw.url, apiKey: reader.key });
      const res = await atrium.macroFeedsList({ query: { limit: 2, status: ['ACTIVE', 'DELETED'] } });
      expect(res.status).toBe(200);
      expect(res.data.data).toHaveLength(2);
      expect(res.requestId).toBeDefined();
      expect(fake.requests).toHaveLength(1);
      // The gateway forwards a list in its one canonical spelling, whatever form the client chose.
      expect(fake.requests[0].query).toEqual(
        expect.arrayContaining([
          ['status', 'ACTIVE'],
          ['status', 'DELETED'],
        ]),
      );
      expect(fake.requests[0].query).toContainEqual(['limit', '2']);
    });

    it('fills path parameters (encoded) and types the answer', async () => {
      const atrium = new AtriumClient({ baseUrl: gw.url, apiKey: () => reader.key });
      const table = await atrium.macroLayoutTable({ path: { id: 'TB1207' }, query: { lang: 'zh' } });
      expect(table.data.data?.[0]?.metadata?.id).toBe('TB1207');
      const data = await atrium.macroSeriesData({ path: { id: '1,2' }, query: { count: 5 } });
      expect(data.status).toBe(200);
      expect(fake.requests[1].path).toBe('/v2/series/1%2C2/data');
    });

    it('reads files as Blobs', async () => {
      const atrium = new AtriumClient({ baseUrl: gw.url, apiKey: reader.key });
      const img = await atrium.macroSeriesVisual({ path: { id: '310901' } });
      expect(img.data).toBeInstanceOf(Blob);
      expect(img.data.size).toBeGreaterThan(0);
    });

    it('sends writes form-urlencoded by default, JSON on request', async () => {
      const atrium = new AtriumClient({ baseUrl: gw.url, apiKey: writer.key });
      const filters = await atrium.macroFiltersList();
      const filterId = (filters.data as { data: Array<{ id: string }> }).data[0].id;
      fake.reset();
      await atrium.macroFeedsCreate({ body: { filter_id: filterId, name: 'CPI weekly', full_dump: false } });
      expect(fake.requests[0].headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(fake.requests[0].body.toString()).toBe(`filter_id=${filterId}&name=CPI+weekly&full_dump=false`);
      const created = (await atrium.macroFeedsList()).data.data ?? [];
      const id = created[created.length - 1].id!;
      fake.reset();
      await atrium.macroFeedsUpdate({ path: { id }, body: { name: 'renamed' } }, { bodyType: 'json' });
      expect(fake.requests[0].headers['content-type']).toBe('application/json');
      expect(fake.requests[0].body.toString()).toBe('{"name":"renamed"}');
    });

    it('sends an undocumented body as JSON (POST /batch)', async () => {
      const atrium = new AtriumClient({ baseUrl: gw.url, apiKey: reader.key });
      const res = await atrium.batchRun({
        body: {
          requests: [
            { id: 'units', path: '/macro/dictionary/units' },
            { id: 'bad', path: '/macro/feeds?limit=0' },
          ],
        },
      });
      const items = (res.data as { items: Array<{ id: string; status: number }> }).items;
      expect(items.map((i) => [i.id, i.status])).toEqual([
        ['units', 200],
        ['bad', 400],
      ]);
    });

    it('throws AtriumError with the gateway envelope on failure', async () => {
      const atrium = new AtriumClient({ baseUrl: gw.url, apiKey: reader.key });
      const invalid = await atrium.macroFeedsList({ query: { limit: 0 } }).catch((e: unknown) => e);
      expect(invalid).toBeInstanceOf(AtriumError);
      expect(invalid).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', retryable: false });
      expect((invalid as AtriumError).body?.parameter).toBe('limit');
      expect(fake.requests).toHaveLength(0);

      const anonymous = new AtriumClient({ baseUrl: gw.url, apiKey: 'atr_not_a_valid_key_0000' });
      await expect(anonymous.macroDictionaryUnits()).rejects.toMatchObject({
        status: 401,
        code: 'UNAUTHENTICATED',
      });

      fake.behave({ rateLimit: { afterCalls: 0, retryAfterSeconds: 11 } });
      const limited = await atrium
        .macroDictionaryFrequencies({ query: { probe: 'rl' } })
        .catch((e: unknown) => e);
      expect(limited).toMatchObject({ status: 429, code: 'UPSTREAM_RATE_LIMITED', retryAfterSeconds: 11 });
    });
  });
});
