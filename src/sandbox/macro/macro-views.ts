// JSON views of the fake CEIC's generated data, and the search and list filters its routes share.
import { dateParam, bool, int, listParam, page } from '../fake-params.js';
import type { InsightRecord } from './insights.data.js';
import { layoutAncestors, layoutTree, type LayoutNode } from './layout.data.js';
import { seriesInfo, type SeriesInfo, seriesTimePoints, type TimePoint } from './series.data.js';

export function countSeries(node: LayoutNode): number {
  const { byId } = layoutTree();
  if (node.kind === 'table') return node.seriesIds.length;
  return node.childIds.reduce((n, id) => n + countSeries(byId.get(id) ?? node), 0);
}

export function layoutItem(node: LayoutNode): unknown {
  return {
    subscribed: true,
    seriesCount: countSeries(node),
    metadata: { id: node.id, name: node.name },
    ui: { hasChildren: node.kind !== 'table', type: node.kind },
  };
}

export function layoutFull(node: LayoutNode): unknown {
  return { data: [{ metadata: { id: node.id, name: node.name }, ancestors: layoutAncestors(node.id) }] };
}

export function seriesMetadata(info: SeriesInfo, points: TimePoint[]): Record<string, unknown> {
  return {
    id: info.id,
    name: info.name,
    country: info.country,
    frequency: info.frequency,
    unit: info.unit,
    source: info.source,
    status: info.status,
    indicator: info.indicator,
    startDate: points[0]?.date,
    endDate: points[points.length - 1]?.date,
    lastUpdateTime: points[points.length - 1]?.lastUpdateTime,
    numberOfObservations: points.length,
    keySeries: false,
  };
}

export function seriesLayout(info: SeriesInfo): unknown[] {
  if (!info.tableId) return [];
  const a = layoutAncestors(info.tableId);
  const { byId } = layoutTree();
  const ref = (id: string | undefined) => (id ? { id, name: byId.get(id)?.name ?? id } : undefined);
  return [{ database: ref(a.database), topic: ref(a.topic), section: ref(a.section), table: ref(a.table) }];
}

/** Time point narrowing from start_date, end_date, updated_after and count (latest N); a string = invalid. */
export function pointFilter(q: URLSearchParams): ((points: TimePoint[]) => TimePoint[]) | string {
  const start = dateParam(q.get('start_date'));
  const end = dateParam(q.get('end_date'));
  const updated = dateParam(q.get('updated_after'));
  const count = int(q.get('count'));
  if ([start, end, updated].some((v) => Number.isNaN(v))) return 'Invalid date parameter';
  if (count !== undefined && (Number.isNaN(count) || count < 0))
    return 'count must be a non-negative integer';
  return (all) => {
    let points = all;
    if (start !== undefined) points = points.filter((p) => Date.parse(p.date) >= start);
    if (end !== undefined) points = points.filter((p) => Date.parse(p.date) <= end);
    if (updated !== undefined) points = points.filter((p) => Date.parse(`${p.lastUpdateTime}Z`) >= updated);
    if (count !== undefined) points = points.slice(Math.max(0, points.length - count));
    return points;
  };
}

const allTableSeries = (): SeriesInfo[] => {
  const out: SeriesInfo[] = [];
  for (const node of layoutTree().byId.values()) for (const id of node.seriesIds) out.push(seriesInfo(id));
  return out;
};

export function searchSeries(
  q: URLSearchParams,
): { total: number; items: unknown[]; facets: unknown[] } | string {
  const limit = int(q.get('limit')) ?? 100;
  const offset = int(q.get('offset')) ?? 0;
  if (Number.isNaN(limit) || limit < 1 || limit > 100) return 'limit must be between 1 and 100';
  if (Number.isNaN(offset) || offset < 0) return 'offset must be a non-negative integer';
  const words = (q.get('keyword') ?? '')
    .toLowerCase()
    .split(/[\s;()]+/)
    .filter((w) => w !== '' && !['and', 'or', 'not'].includes(w));
  const freq = listParam(q, 'frequency');
  const geo = listParam(q, 'geo').concat(listParam(q, 'country'));
  const table = listParam(q, 'table');
  const matches = allTableSeries().filter(
    (s) =>
      words.every((w) => `${s.name} ${s.indicator.name} ${s.unit.name}`.toLowerCase().includes(w)) &&
      (freq.length === 0 || freq.includes(s.frequency.id)) &&
      (geo.length === 0 || geo.includes(s.country.id)) &&
      (table.length === 0 || (s.tableId !== undefined && table.includes(s.tableId))) &&
      (bool(q.get('subscribed_only')) !== true || s.subscribed),
  );
  const facet = (id: string, key: (s: SeriesInfo) => string) => {
    const counts = new Map<string, number>();
    for (const s of matches) counts.set(key(s), (counts.get(key(s)) ?? 0) + 1);
    return { id, items: [...counts].map(([k, total]) => ({ id: k, total })) };
  };
  return {
    total: matches.length,
    items: page(matches, offset, limit).map((s) => ({
      id: s.id,
      subscribed: s.subscribed,
      metadata: seriesMetadata(s, seriesTimePoints(s)),
    })),
    facets: [facet('frequency', (s) => s.frequency.id), facet('country', (s) => s.country.id)],
  };
}

export function insightJson(i: InsightRecord): Record<string, unknown> {
  return {
    id: i.id,
    name: i.name,
    description: i.description,
    categoryId: i.categoryId,
    tags: i.tags,
    created: i.created,
    seriesCount: i.seriesIds.length,
  };
}

/** Feeds and dumps share the list filters of GET /feeds. */
export function listFilter<T extends { status: string }>(
  q: URLSearchParams,
  items: T[],
  createdOf: (item: T) => string,
  extra: (item: T) => boolean,
): T[] | string {
  const limit = int(q.get('limit')) ?? 100;
  const offset = int(q.get('offset')) ?? 0;
  if (Number.isNaN(limit) || limit < 1 || limit > 100) return 'limit must be between 1 and 100';
  if (Number.isNaN(offset) || offset < 0) return 'offset must be a non-negative integer';
  const statuses = listParam(q, 'status').map((s) => s.toUpperCase());
  const badStatus = statuses.find((s) => s !== 'ACTIVE' && s !== 'DELETED' && s !== 'COMPLETED');
  if (badStatus) return `status must be ACTIVE or DELETED, got ${badStatus}`;
  const after = dateParam(q.get('created_after'));
  const before = dateParam(q.get('created_before'));
  if (Number.isNaN(after) || Number.isNaN(before)) return 'created_after/created_before must be dates';
  const order = (q.get('created_order') ?? 'ASC').toUpperCase();
  if (order !== 'ASC' && order !== 'DESC') return 'created_order must be ASC or DESC';
  const created = (item: T): number => dateParam(createdOf(item)) ?? 0;
  const filtered = items.filter(
    (item) =>
      (statuses.length === 0 || statuses.includes(item.status)) &&
      (after === undefined || created(item) > after) &&
      (before === undefined || created(item) < before) &&
      extra(item),
  );
  // Array sort is stable, so entries created the same day keep their id order either way.
  filtered.sort((a, b) => (order === 'DESC' ? created(b) - created(a) : created(a) - created(b)));
  return page(filtered, offset, limit);
}
