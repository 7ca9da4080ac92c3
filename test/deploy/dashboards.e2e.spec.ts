// The Grafana dashboard (deploy/grafana/atrium.json) and the alert rules (deploy/prometheus/atrium-alerts.yaml)
// query only what a running gateway exports: every metric and label they name is on its /metrics (scraped
// with the metrics token), every query parses as PromQL (Prometheus' own grammar, @prometheus-io/lezer-promql),
// and the rule file has the shape Prometheus loads.
import { parser } from '@prometheus-io/lezer-promql';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { http, withGateway } from '../helpers/gateway.js';
import { parsePrometheusText, type ParsedMetrics } from '../observability/prometheus-text.js';
import { schemaProblems, typeProblems } from './kube-schemas.js';

const ROOT = join(__dirname, '../..');
const DASHBOARD = join(ROOT, 'deploy/grafana/atrium.json');
const RULES = join(ROOT, 'deploy/prometheus/atrium-alerts.yaml');
const UPSTREAM_TOKEN = 'sbx_macro_dashboards_token_83f1';
const METRICS_TOKEN = 'metrics-scrape-token-dashboards-2c7e';

type SyntaxNode = ReturnType<typeof parser.parse>['topNode'];

interface Selector {
  metric: string;
  labels: string[];
}

/** PromQL with Grafana's variables replaced by what Grafana puts there (a duration, a regex). */
const asPromQL = (expr: string) =>
  expr.replace(/\$__(rate_interval|interval|range)/g, '5m').replace(/\$\{?(\w+)\}?/g, '.*');

/** The syntax errors of a query (lezer marks them as error nodes) and the series selectors it uses. */
function analyse(expr: string): { errors: string[]; selectors: Selector[] } {
  const text = asPromQL(expr);
  const tree = parser.parse(text);
  const errors: string[] = [];
  const selectors: Selector[] = [];
  tree.iterate({
    enter: (ref) => {
      if (ref.type.isError) errors.push(`syntax error at ${ref.from} in: ${text}`);
      if (ref.name !== 'VectorSelector') return;
      const node: SyntaxNode = ref.node;
      const name = node.getChild('Identifier');
      const labels = node
        .getChildren('LabelMatchers')
        .flatMap((m) => collect(m, 'LabelName'))
        .map((n) => text.slice(n.from, n.to));
      if (name) selectors.push({ metric: text.slice(name.from, name.to), labels });
    },
  });
  return { errors, selectors };
}

function collect(node: SyntaxNode, type: string): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  const cursor = node.cursor();
  do if (cursor.name === type) out.push(cursor.node);
  while (cursor.next() && cursor.from < node.to);
  return out;
}

/** Every query of the dashboard: panel targets and `label_values(metric, label)` variables. */
function dashboardQueries(): string[] {
  const d = JSON.parse(readFileSync(DASHBOARD, 'utf8'));
  const exprs: string[] = d.panels.flatMap((p: { targets?: Array<{ expr: string }> }) =>
    (p.targets ?? []).map((t) => t.expr),
  );
  for (const v of d.templating.list as Array<{ type: string; definition?: string }>) {
    if (v.type !== 'query') continue;
    const m = /^label_values\((\w+), *(\w+)\)$/.exec(v.definition ?? '');
    if (!m) throw new Error(`variable query not understood: ${v.definition}`);
    exprs.push(`${m[1]}{${m[2]}!=""}`);
  }
  return exprs;
}

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels: { severity: string };
  annotations: { summary: string; description: string };
}

function rules(): Rule[] {
  const file = parseYaml(readFileSync(RULES, 'utf8')) as { groups: Array<{ name: string; rules: Rule[] }> };
  return file.groups.flatMap((g) => g.rules);
}

describe('deploy/grafana and deploy/prometheus', () => {
  const reader = testConsumer({ id: 'dashboards-reader', upstreams: new Set(['macro']) });
  const limited = testConsumer({
    id: 'dashboards-limited',
    upstreams: new Set(['macro']),
    limits: [{ name: 'per-minute', ttlMs: 60_000, limit: 1 }],
  });
  const fake = new FakeMacroUpstream({ token: UPSTREAM_TOKEN });
  const gw = withGateway({
    upstreams: { macro: { fake, token: UPSTREAM_TOKEN } },
    env: { ATRIUM_METRICS_TOKEN: METRICS_TOKEN },
    consumers: [reader, limited],
  });

  let metrics: ParsedMetrics;
  beforeAll(async () => {
    // Traffic that makes the labelled series appear: a vendor call, a cache hit, a quota refusal, a
    // readiness probe.
    const get = (c: typeof reader) =>
      http(gw.url + '/macro/feeds?limit=1', { headers: { authorization: `Bearer ${c.key}` } });
    for (let i = 0; i < 2; i++) expect((await get(reader)).status).toBe(200);
    expect((await get(limited)).status).toBe(200);
    expect((await get(limited)).status).toBe(429);
    await http(gw.url + '/health/ready');
    expect((await http(gw.url + '/metrics')).status).toBe(401);
    const res = await http(gw.url + '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    metrics = parsePrometheusText(res.text);
  });

  /** The family a sample name belongs to (`x_bucket` of the histogram `x`). */
  const familyOf = (name: string) => {
    if (metrics.types.has(name)) return name;
    const base = name.replace(/_(bucket|sum|count)$/, '');
    return metrics.types.get(base) === 'histogram' ? base : undefined;
  };
  /** Label names seen on a family's samples (`le` on buckets). */
  const labelsOf = (family: string) =>
    new Set(
      metrics.samples
        .filter((s) => s.name === family || s.name.startsWith(`${family}_`))
        .flatMap((s) => Object.keys(s.labels)),
    );

  function check(queries: string[]) {
    const problems: string[] = [];
    let selectors = 0;
    for (const q of queries) {
      const { errors, selectors: found } = analyse(q);
      problems.push(...errors);
      for (const s of found) {
        selectors++;
        const family = familyOf(s.metric);
        if (!family) {
          problems.push(`${s.metric} is not on /metrics`);
          continue;
        }
        const have = labelsOf(family);
        for (const l of s.labels) if (!have.has(l)) problems.push(`${s.metric} has no label ${l}`);
      }
    }
    return { problems, selectors };
  }

  it("uses only metrics and labels of the gateway's /metrics in the dashboard, in valid PromQL", () => {
    const queries = dashboardQueries();
    expect(queries.length).toBeGreaterThanOrEqual(20);
    const { problems, selectors } = check(queries);
    expect(problems).toEqual([]);
    expect(selectors).toBeGreaterThanOrEqual(queries.length);
  });

  it('uses only metrics and labels of /metrics in the alert rules, in valid PromQL', () => {
    const { problems } = check(rules().map((r) => r.expr));
    expect(problems).toEqual([]);
  });

  it('catches a metric that does not exist, a label it lacks and broken PromQL (the check can fail)', () => {
    expect(check(['rate(atrium_requests_totl[5m])']).problems).toEqual([
      'atrium_requests_totl is not on /metrics',
    ]);
    expect(check(['atrium_upstream_breaker_state{consumer="x"}']).problems).toEqual([
      'atrium_upstream_breaker_state has no label consumer',
    ]);
    expect(check(['sum(rate(atrium_requests_total[5m]) by']).problems[0]).toMatch(/syntax error/);
  });

  it('counts the readiness probe under its route pattern, as the unready alert reads it', () => {
    expect(
      metrics.samples.some((s) => s.name === 'atrium_requests_total' && s.labels.route === '/health/ready'),
    ).toBe(true);
  });

  it('has rule groups Prometheus loads: named alerts with a severity, a summary and a description', () => {
    const file = parseYaml(readFileSync(RULES, 'utf8')) as { groups: Array<{ name: string; rules: Rule[] }> };
    expect(file.groups.length).toBeGreaterThan(0);
    for (const g of file.groups) {
      expect(g.name).toMatch(/^atrium\./);
      expect(g.rules.length).toBeGreaterThan(0);
      for (const r of g.rules) {
        expect(Object.keys(r).sort()).toEqual(
          expect.arrayContaining(['alert', 'annotations', 'expr', 'labels']),
        );
        expect(
          Object.keys(r).every((k) => ['alert', 'expr', 'for', 'labels', 'annotations'].includes(k)),
        ).toBe(true);
        expect(r.alert).toMatch(/^Atrium[A-Z]\w+$/);
        expect(['page', 'ticket']).toContain(r.labels.severity);
        expect(r.annotations.summary).toBeTruthy();
        expect(r.annotations.description).toBeTruthy();
        if (r.for !== undefined) expect(r.for).toMatch(/^\d+[smh]$/);
      }
    }
    const names = rules().map((r) => r.alert);
    expect(new Set(names).size).toBe(names.length);
    // What the on-call engineer is paged or ticketed for.
    expect(names).toEqual(
      expect.arrayContaining([
        'AtriumVendorCooldownLong',
        'AtriumBreakerOpen',
        'AtriumBudgetExhausted',
        'AtriumCacheHitRatioFalling',
        'AtriumRedisErrors',
        'AtriumDatabaseUsageBacklog',
        'AtriumUsageRowsDropped',
        'AtriumReplicasUnready',
        'AtriumKeyEchoScrubbed',
      ]),
    );
  });

  it("is a valid PrometheusRule spec for the Prometheus Operator (its CRD's schema and types)", () => {
    const file = parseYaml(readFileSync(RULES, 'utf8')) as object;
    const rule = {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PrometheusRule',
      metadata: { name: 'atrium' },
      spec: file,
    };
    expect(schemaProblems([rule])).toEqual([[]]);
    expect(typeProblems([rule])).toEqual([]);
  });
});
