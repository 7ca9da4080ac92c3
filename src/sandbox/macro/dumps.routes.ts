// Fake CEIC dumps (per-instance state) with signed-style download links.
import type { FakeRouter } from '../fake-router.js';
import { type MacroEnv, type MacroHandler, bad, notFound, ok } from './macro-errors.js';
import { listParam, readFields, str } from '../fake-params.js';
import { isoDateTime } from '../data/seeded.js';
import type { MacroDumpRecord } from './feeds.data.js';
import { listFilter } from './macro-views.js';

export function dumpRoutes(r: FakeRouter<MacroHandler>, env: MacroEnv): void {
  const view = (d: Omit<MacroDumpRecord, 'downloadLink'>): MacroDumpRecord => ({
    ...d,
    downloadLink: `${env.url()}/downloads/dump-${d.id}.zip?expires=${Date.parse(`${d.downloadLinkExpiration}Z`)}`,
  });
  r.add('GET', '/dumps', ({ req }) => {
    const feedIds = listParam(req.query, 'feed_id');
    const result = listFilter(
      req.query,
      env.state.dumps,
      (d) => d.created,
      (d) => feedIds.length === 0 || feedIds.includes(d.feed_id),
    );
    return typeof result === 'string' ? bad(result) : ok({ data: { dumps: result.map(view) } });
  });
  r.add('POST', '/dumps', ({ req }) => {
    const parsed = readFields(req);
    if ('error' in parsed) return bad(parsed.error);
    const feedId = str(parsed.fields.feed_id) ?? str(parsed.fields.filter_id);
    if (!feedId) return bad('feed_id or filter_id is required');
    const created = env.now();
    const dump = {
      id: env.state.nextId('DP'),
      name: str(parsed.fields.name) ?? `Dump of ${feedId}`,
      feed_id: feedId,
      status: 'COMPLETED',
      progress: 100,
      totalSeriesNumber: 100,
      collectedSeriesNumber: 100,
      downloadLinkExpiration: isoDateTime(created + 7 * 86_400_000),
      created: isoDateTime(created),
    };
    env.state.dumps.push(dump);
    return ok({ data: view(dump) });
  });
  r.add('GET', '/dumps/:id', ({ params }) => {
    const d = env.state.dumps.find((x) => x.id === params.id);
    return d ? ok({ data: view(d) }) : notFound(`Dump ${params.id}`);
  });
  r.add('DELETE', '/dumps/:id', ({ params }) => {
    const d = env.state.dumps.find((x) => x.id === params.id);
    if (!d) return notFound(`Dump ${params.id}`);
    env.state.dumps = env.state.dumps.filter((x) => x !== d);
    return ok({ data: { ...view(d), status: 'DELETED' } });
  });
}
