// The fake CEIC layout tree (databases → topics → sections → tables), generated.
import type { IdName } from '../data/countries.js';
import { memo } from '../data/seeded.js';
import { COUNTRIES } from '../data/countries.js';
import { CONCEPTS_BY_TOPIC, type Concept, type Frequency, TOPICS } from './macro-concepts.data.js';

export type LayoutKind = 'database' | 'topic' | 'section' | 'table';

export interface LayoutNode {
  id: string;
  name: string;
  kind: LayoutKind;
  parentId?: string;
  childIds: string[];
  /** Series ids, tables only. */
  seriesIds: string[];
  /** Tables only: what every series of the table measures, how often, and each series' country. */
  concept?: Concept;
  frequency?: Frequency;
  countryIds?: string[];
}

export interface LayoutTree {
  databases: LayoutNode[];
  byId: ReadonlyMap<string, LayoutNode>;
}

const DATABASES: readonly IdName[] = [
  { id: 'WORLD', name: 'World Trend Plus' },
  { id: 'CN', name: 'China Premium Database' },
  { id: 'EMERGE', name: 'Emerging Markets Premium Database' },
  { id: 'GLOBAL', name: 'Global Database' },
];
const TOPIC_NAMES = TOPICS;
const SECTION_NAMES = ['Annual', 'Quarterly', 'Monthly', 'By Region'];
const SECTION_FREQUENCY: Record<string, Frequency | undefined> = {
  Annual: 'Y',
  Quarterly: 'Q',
  Monthly: 'M',
};
const TABLES_PER_SECTION = 8;
const SERIES_PER_TABLE = 10;
const FIRST_TABLE_SERIES_ID = 310000;

/** Ids: databases WORLD…, topics TP301…, sections SC3310…, tables TB1200… (WORLD/TP301/SC3310/TB1207 exists). */
export const layoutTree = memo((): LayoutTree => {
  const byId = new Map<string, LayoutNode>();
  const databases: LayoutNode[] = [];
  let topicNo = 0;
  let sectionNo = 0;
  let tableNo = 0;
  for (const db of DATABASES) {
    const dbNode: LayoutNode = { id: db.id, name: db.name, kind: 'database', childIds: [], seriesIds: [] };
    databases.push(dbNode);
    byId.set(dbNode.id, dbNode);
    for (let t = 0; t < 3; t++) {
      const topic: LayoutNode = {
        id: `TP${301 + topicNo}`,
        name: `${TOPIC_NAMES[topicNo % TOPIC_NAMES.length]}: ${db.name}`,
        kind: 'topic',
        parentId: dbNode.id,
        childIds: [],
        seriesIds: [],
      };
      topicNo++;
      dbNode.childIds.push(topic.id);
      byId.set(topic.id, topic);
      for (let s = 0; s < 2; s++) {
        const section: LayoutNode = {
          id: `SC${3310 + sectionNo}`,
          name: `${topic.name.split(':')[0]}: ${SECTION_NAMES[sectionNo % SECTION_NAMES.length]}`,
          kind: 'section',
          parentId: topic.id,
          childIds: [],
          seriesIds: [],
        };
        sectionNo++;
        topic.childIds.push(section.id);
        byId.set(section.id, section);
        const topicName = TOPIC_NAMES[(topicNo - 1) % TOPIC_NAMES.length] ?? 'Prices';
        const sectionName = SECTION_NAMES[(sectionNo - 1) % SECTION_NAMES.length] ?? 'Annual';
        for (let k = 0; k < TABLES_PER_SECTION; k++) {
          // A table holds one concept at the section's frequency (its natural one when the concept has
          // no such frequency, e.g. monthly GDP) for ten countries; the window of countries rotates.
          const concepts: readonly Concept[] = CONCEPTS_BY_TOPIC[topicName];
          const concept = concepts[k % concepts.length] ?? concepts[0];
          const wanted = SECTION_FREQUENCY[sectionName];
          const frequency =
            wanted && concept.frequencies.includes(wanted) ? wanted : (concept.frequencies[0] ?? 'Y');
          const offset = (tableNo * 5) % COUNTRIES.length;
          const table: LayoutNode = {
            id: `TB${1200 + tableNo}`,
            name: `${concept.indicator}: ${concept.unit}`,
            kind: 'table',
            parentId: section.id,
            childIds: [],
            seriesIds: Array.from({ length: SERIES_PER_TABLE }, (_, i) =>
              String(FIRST_TABLE_SERIES_ID + tableNo * SERIES_PER_TABLE + i),
            ),
            concept,
            frequency,
            countryIds: Array.from(
              { length: SERIES_PER_TABLE },
              (_, i) => COUNTRIES[(offset + i) % COUNTRIES.length]?.id ?? 'US',
            ),
          };
          tableNo++;
          section.childIds.push(table.id);
          byId.set(table.id, table);
        }
      }
    }
  }
  return { databases, byId };
});

export interface LayoutAncestors {
  database?: string;
  topic?: string;
  section?: string;
  table?: string;
}

export function layoutAncestors(id: string): LayoutAncestors {
  const { byId } = layoutTree();
  const chain: LayoutNode[] = [];
  for (let node = byId.get(id); node; node = node.parentId ? byId.get(node.parentId) : undefined)
    chain.unshift(node);
  // Root first, so serialised ancestors read database → topic → section → table.
  const out: LayoutAncestors = {};
  for (const node of chain) out[node.kind] = node.id;
  return out;
}

export function tableOfSeries(seriesId: number): LayoutNode | undefined {
  const tableNo = Math.floor((seriesId - FIRST_TABLE_SERIES_ID) / SERIES_PER_TABLE);
  return tableNo >= 0 ? layoutTree().byId.get(`TB${1200 + tableNo}`) : undefined;
}
