/**
 * A strict parser of the Prometheus text exposition format 0.0.4, enough to prove `/metrics` is valid:
 * every sample belongs to a family declared by `# TYPE` before it, names and labels are well formed,
 * label values are correctly escaped, values are floats, families are not declared twice, and histograms
 * have monotone cumulative buckets ending in `+Inf` equal to `_count`.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface ParsedMetrics {
  types: Map<string, string>;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

// As Prometheus reads values (Go's ParseFloat): NaN and Inf in any case (prom-client writes `Nan`).
function parseValue(s: string, where: string): number {
  if (/^\+?inf(inity)?$/i.test(s)) return Infinity;
  if (/^-inf(inity)?$/i.test(s)) return -Infinity;
  if (/^nan$/i.test(s)) return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) throw new Error(`${where}: bad value "${s}"`);
  return Number(s);
}

function parseLabels(text: string, where: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf('=', i);
    if (eq === -1) throw new Error(`${where}: label without value`);
    const name = text.slice(i, eq);
    if (!LABEL_NAME.test(name)) throw new Error(`${where}: bad label name "${name}"`);
    if (text[eq + 1] !== '"') throw new Error(`${where}: label value not quoted`);
    let j = eq + 2;
    let value = '';
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === '\\') {
        const next = text[++j];
        if (next === 'n') value += '\n';
        else if (next === '\\' || next === '"') value += next;
        else throw new Error(`${where}: bad escape \\${next}`);
      } else value += text[j];
    }
    if (text[j] !== '"') throw new Error(`${where}: unterminated label value`);
    if (name in labels) throw new Error(`${where}: duplicate label ${name}`);
    labels[name] = value;
    i = j + 1;
    if (text[i] === ',') i++;
    else if (i < text.length) throw new Error(`${where}: expected , between labels`);
  }
  return labels;
}

function familyOf(name: string, types: Map<string, string>): string | undefined {
  if (types.has(name)) return name;
  for (const suffix of ['_bucket', '_sum', '_count', '_created']) {
    if (!name.endsWith(suffix)) continue;
    const base = name.slice(0, -suffix.length);
    const t = types.get(base);
    if (t === 'histogram' || t === 'summary') return base;
  }
  return undefined;
}

export function parsePrometheusText(text: string): ParsedMetrics {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] !== '') throw new Error('the exposition must end with a newline');
  lines.forEach((line, n) => {
    const where = `line ${n + 1}`;
    if (line === '') return;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) return; // other comments are allowed
      if (!NAME.test(m[2])) throw new Error(`${where}: bad metric name ${m[2]}`);
      if (m[1] === 'TYPE') {
        if (!TYPES.has(m[3])) throw new Error(`${where}: bad type ${m[3]}`);
        if (types.has(m[2])) throw new Error(`${where}: ${m[2]} declared twice`);
        types.set(m[2], m[3]);
      }
      return;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( -?\d+)?$/.exec(line);
    if (!m) throw new Error(`${where}: not a sample: ${line}`);
    const family = familyOf(m[1], types);
    if (!family) throw new Error(`${where}: ${m[1]} has no # TYPE before it`);
    samples.push({
      name: m[1],
      labels: m[3] ? parseLabels(m[3], where) : {},
      value: parseValue(m[4], where),
    });
  });
  checkHistograms(types, samples);
  return { types, samples };
}

function seriesKey(labels: Record<string, string>, omit: string): string {
  return Object.keys(labels)
    .filter((k) => k !== omit)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join(',');
}

function checkHistograms(types: Map<string, string>, samples: Sample[]): void {
  for (const [name, type] of types) {
    if (type !== 'histogram') continue;
    const buckets = new Map<string, Array<{ le: number; value: number }>>();
    const counts = new Map<string, number>();
    for (const s of samples) {
      if (s.name === `${name}_bucket`) {
        if (s.labels.le === undefined) throw new Error(`${name}_bucket without le`);
        const key = seriesKey(s.labels, 'le');
        const list = buckets.get(key) ?? [];
        list.push({ le: parseValue(s.labels.le, name), value: s.value });
        buckets.set(key, list);
      } else if (s.name === `${name}_count`) counts.set(seriesKey(s.labels, ''), s.value);
    }
    for (const [key, list] of buckets) {
      list.sort((a, b) => a.le - b.le);
      if (list[list.length - 1].le !== Infinity) throw new Error(`${name}{${key}}: no +Inf bucket`);
      for (let i = 1; i < list.length; i++)
        if (list[i].value < list[i - 1].value) throw new Error(`${name}{${key}}: buckets not cumulative`);
      if (counts.get(key) !== list[list.length - 1].value)
        throw new Error(`${name}{${key}}: _count differs from the +Inf bucket`);
    }
  }
}

/** Sum of the samples of `name` whose labels include `match`. */
export function sum(m: ParsedMetrics, name: string, match: Record<string, string> = {}): number {
  return m.samples
    .filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v))
    .reduce((a, s) => a + s.value, 0);
}
