// The Helm chart (deploy/helm/atrium), checked offline with the real, pinned helm: it lints, renders for
// the default values and for the value files of deploy/helm/atrium/ci (Sentinel, Cluster, existing
// Secrets, only the macroeconomic interface), and every rendered object validates against the Kubernetes
// 1.33 API (test/deploy/kube-schemas.ts). The rendered Deployment keeps the chart's promises: only known
// configuration variables, every secret as a file, drain and grace periods that fit, probes on the right
// endpoints, a heap below the memory limit, a locked-down container.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { join } from 'node:path';
import { parseConsumersDocument } from '../../src/core/auth/consumer-record.js';
import { MACRO_ROUTES } from '../../src/upstreams/macro/macro.routes.js';
import { secretNames } from '../../src/config/secret-files.js';
import { UPSTREAM_NAMES } from '../../src/upstreams/index.js';
import { parseViewsDocument } from '../../src/views/views-file.js';
import { describeNeeding, helmPath } from '../helpers/system-parts.js';
import { CHART, helm, KUBE_VERSION, render, ROOT, type K8sObject } from './helm.js';
import { schemaProblems, typeProblems } from './kube-schemas.js';

/**
 * Variables the chart sets that the gateway reads but whose declarations are being added on other branches
 * (secrets from files, the interfaces subset, the drain, the database and Redis topologies, tracing
 * attributes). Delete each entry once its declaration is in src/config: the test then checks it there.
 */
const PENDING_VARIABLES: string[] = [];
/** Read by Node itself, not by the gateway's configuration. */
const RUNTIME_VARIABLES = ['NODE_OPTIONS'];
/**
 * Gateway variables `settings` may not set, because the chart sets them from its own values (or they are
 * secrets, which only travel as files, or they make no sense in a cluster). Every other gateway variable
 * must be settable: the values schema's list of `settings` names is compared with the configuration.
 */
const SET_BY_THE_CHART: Record<string, string> = {
  PORT: 'the container port is fixed (3000, the image)',
  HOST: 'listens on every address of the pod',
  NODE_ENV: 'production',
  ATRIUM_SANDBOX: 'off: never fakes in a cluster',
  ATRIUM_CONSUMERS_FILE: 'consumers.entries / consumers.existingConfigMap',
  ATRIUM_VIEWS_FILE: 'views.source',
  ATRIUM_REDIS_PREFIX: 'redis.prefix',
  ATRIUM_PUBLIC_URL: 'links.publicUrl',
  ATRIUM_SHUTDOWN_GRACE_MS: 'drain.shutdownGraceMs',
  OTEL_SERVICE_NAME: 'tracing.serviceName',
  OTEL_EXPORTER_OTLP_ENDPOINT: 'tracing.endpoint',
  REDIS_URL: 'a secret (redisUrl)',
  ATRIUM_METRICS_TOKEN: 'a secret (metricsToken)',
  ATRIUM_OPERATOR_TOKEN: 'a secret (operatorToken)',
  ATRIUM_LINK_SECRET: 'a secret (linkSecret)',
  ATRIUM_ADMIN_TOKEN: 'deprecated name of the operator token',
  ATRIUM_DEMO_KEY: 'the sandbox only',
  ATRIUM_UPSTREAMS: 'upstreams.<name>.enabled',
  ATRIUM_DRAIN_DELAY_MS: 'drain.delayMs',
  OTEL_RESOURCE_ATTRIBUTES: 'tracing (the pod and namespace)',
  REDIS_SENTINELS: 'redis.sentinel',
  REDIS_SENTINEL_MASTER: 'redis.sentinel',
  REDIS_CLUSTER_NODES: 'redis.clusterNodes',
  REDIS_TLS: 'redis.tls',
  DATABASE_URL: 'a secret (databaseUrl)',
  REDIS_PASSWORD: 'a secret (redisPassword)',
  REDIS_SENTINEL_PASSWORD: 'a secret (redisSentinelPassword)',
};
/** Per-upstream fields set from `upstreams.<name>` or the Secret, never from its `settings`. */
const UPSTREAM_SET_BY_THE_CHART = ['BASE_URL', 'TOKEN', 'USERNAME', 'PASSWORD'];
/** Words that make a variable a secret: it may reach the gateway only as `<NAME>_FILE`. */
const SECRET_NAME = /(TOKEN|PASSWORD|SECRET|^DATABASE_URL|^REDIS_URL)/;

const VALUE_FILES = readdirSync(join(CHART, 'ci'))
  .filter((f) => f.endsWith('.yaml'))
  .sort();
const CASES: Array<[string, string[]]> = [
  ['default values', []],
  ...VALUE_FILES.map((f): [string, string[]] => [f, [join(CHART, 'ci', f)]]),
];

/** Every variable of the gateway's configuration (src/config, through scripts/docs-config.mjs). */
function knownVariables(): Set<string> {
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts/docs-config.mjs'), '--list'], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`docs-config --list failed: ${r.stderr}`);
  // Every secret may also come from a file, as `<NAME>_FILE` (src/config/secret-files.ts).
  const files = secretNames(UPSTREAM_NAMES).map((n) => `${n}_FILE`);
  return new Set([...(JSON.parse(r.stdout) as string[]), ...files]);
}

type Env = { name: string; value?: string; valueFrom?: unknown };
interface Container {
  name: string;
  env?: Env[];
  envFrom?: unknown[];
  resources: { limits: { memory: string } };
  securityContext: Record<string, unknown>;
  startupProbe: { httpGet: { path: string } };
  livenessProbe: { httpGet: { path: string } };
  readinessProbe: { httpGet: { path: string } };
  lifecycle?: { preStop?: { sleep?: { seconds: number } } };
  volumeMounts: Array<{ name: string; mountPath: string }>;
}
interface PodSpec {
  terminationGracePeriodSeconds: number;
  securityContext: Record<string, unknown>;
  containers: Container[];
  volumes: Array<{ name: string; secret?: { items: Array<{ key: string; path: string }> } }>;
}

const one = (objects: K8sObject[], kind: string) => {
  const found = objects.filter((o) => o.kind === kind);
  expect(found).toHaveLength(1);
  return found[0];
};
const podOf = (objects: K8sObject[]) =>
  (one(objects, 'Deployment') as unknown as { spec: { template: { spec: PodSpec } } }).spec.template.spec;
const envOf = (c: Container) => new Map((c.env ?? []).map((e) => [e.name, e]));

describeNeeding('helm', `deploy/helm/atrium (Kubernetes ${KUBE_VERSION})`, () => {
  const h = helmPath()!;
  const schema = JSON.parse(readFileSync(join(CHART, 'values.schema.json'), 'utf8'));
  let known: Set<string>;
  const rendered = new Map<string, K8sObject[]>();
  beforeAll(() => {
    known = knownVariables();
    for (const [name, files] of CASES) rendered.set(name, render(h, files));
  });

  it('passes helm lint --strict with each value file', () => {
    for (const [, files] of CASES) {
      const r = helm(h, ['lint', '--strict', CHART, ...files.flatMap((f) => ['--values', f])]);
      expect(r.output).toContain('0 chart(s) failed');
      expect(r.status).toBe(0);
    }
  });

  it.each(CASES)('renders objects valid against the Kubernetes API for %s', (name) => {
    const objects = rendered.get(name)!;
    expect(objects.map((o) => o.kind)).toEqual(expect.arrayContaining(['Deployment', 'Service']));
    expect(schemaProblems(objects).flat()).toEqual([]);
  });

  it('renders no field the Kubernetes API does not have (type-checked with its declarations)', () => {
    const all = [...rendered.values()].flat();
    expect(typeProblems(all)).toEqual([]);
  });

  it('catches a field the API does not have and a wrong type (the checks can fail)', () => {
    const [service] = rendered.get('default values')!.filter((o) => o.kind === 'Service');
    const typo = { ...service, spec: { ...(service.spec as object), selectr: { app: 'x' } } };
    expect(typeProblems([typo]).join('\n')).toMatch(/selectr/);
    const badPort = { ...service, spec: { ...(service.spec as object), ports: [{ port: 'eighty' }] } };
    expect(schemaProblems([badPort, service])).toEqual([[expect.stringContaining('port')], []]);
  });

  it('renders every kind a value file turns on', () => {
    const kinds = new Set([...rendered.values()].flat().map((o) => o.kind));
    for (const k of [
      'Deployment',
      'Service',
      'ServiceAccount',
      'ConfigMap',
      'Secret',
      'PodDisruptionBudget',
      'HorizontalPodAutoscaler',
      'NetworkPolicy',
      'ServiceMonitor',
    ])
      expect(kinds).toContain(k);
  });

  it.each(CASES)('sets only known configuration variables, each once (%s)', (name) => {
    const [container] = podOf(rendered.get(name)!).containers;
    const allowed = new Set([...known, ...PENDING_VARIABLES, ...RUNTIME_VARIABLES]);
    const names = (container.env ?? []).map((e) => e.name);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
    const unknown = names.filter((n) => !allowed.has(n));
    expect(unknown).toEqual([]);
  });

  it('keeps PENDING_VARIABLES to names src/config does not declare yet', () => {
    expect(PENDING_VARIABLES.filter((n) => known.has(n))).toEqual([]);
  });

  it('lets `settings` name every gateway variable the chart does not set itself, and nothing else', () => {
    const settable: string[] = schema.properties.settings.propertyNames.enum;
    // `<NAME>_FILE` variables are how the chart hands over secrets: never a setting.
    const gateway = [...known].filter((n) => !n.startsWith('UPSTREAM_') && !n.endsWith('_FILE'));
    expect([...settable].sort()).toEqual(gateway.filter((n) => !(n in SET_BY_THE_CHART)).sort());
    expect(Object.keys(SET_BY_THE_CHART).filter((n) => !known.has(n))).toEqual([]);
  });

  it("lets an upstream's `settings` name every UPSTREAM_<NAME>_ field but its URL and credentials", () => {
    const settable: string[] =
      schema.properties.upstreams.properties.macro.properties.settings.propertyNames.enum;
    const fields = [...known]
      .filter((n) => n.startsWith('UPSTREAM_MACRO_') && !n.endsWith('_FILE'))
      .map((n) => n.slice('UPSTREAM_MACRO_'.length));
    expect([...settable].sort()).toEqual(fields.filter((f) => !UPSTREAM_SET_BY_THE_CHART.includes(f)).sort());
    for (const u of ['company', 'documents', 'deals'])
      expect(schema.properties.upstreams.properties[u].properties.settings.propertyNames.enum).toEqual(
        settable,
      );
  });

  it.each(CASES)('hands every secret to the gateway as a file of a mounted Secret (%s)', (name) => {
    const objects = rendered.get(name)!;
    const pod = podOf(objects);
    const [container] = pod.containers;
    expect(container.envFrom).toBeUndefined();
    const env = container.env ?? [];
    // No value from a Secret, no secret variable by value.
    expect(env.filter((e) => e.valueFrom !== undefined)).toEqual([]);
    expect(
      env.filter((e) => SECRET_NAME.test(e.name) && !e.name.endsWith('_FILE')).map((e) => e.name),
    ).toEqual([]);
    const mount = container.volumeMounts.find((m) => m.name === 'secrets')!;
    const volume = pod.volumes.find((v) => v.name === 'secrets')!;
    const files = new Set(volume.secret!.items.map((i) => `${mount.mountPath}/${i.path}`));
    const fileVars = env.filter((e) => e.name.endsWith('_FILE') && SECRET_NAME.test(e.name));
    expect(fileVars.length).toBeGreaterThanOrEqual(2);
    for (const e of fileVars) expect(files).toContain(e.value);
    // Every mounted item is used, and a chart-made Secret's values never appear outside it.
    expect(fileVars.map((e) => e.value).sort()).toEqual([...files].sort());
    const secret = objects.find((o) => o.kind === 'Secret') as { data: Record<string, string> } | undefined;
    const outside = JSON.stringify(objects.filter((o) => o.kind !== 'Secret'));
    for (const v of Object.values(secret?.data ?? {}))
      expect(outside).not.toContain(Buffer.from(v, 'base64').toString());
  });

  it('mounts each interface credential the configuration needs: tokens, or passwords with the login step', () => {
    const env = (name: string) => envOf(podOf(rendered.get(name)!).containers[0]);
    expect(
      [...env('default values').keys()].filter((n) => n.startsWith('UPSTREAM_') && n.endsWith('_FILE')),
    ).toEqual([
      'UPSTREAM_MACRO_TOKEN_FILE',
      'UPSTREAM_COMPANY_TOKEN_FILE',
      'UPSTREAM_DOCUMENTS_TOKEN_FILE',
      'UPSTREAM_DEALS_TOKEN_FILE',
    ]);
    const cluster = env('cluster-values.yaml');
    expect(cluster.get('UPSTREAM_DEALS_PASSWORD_FILE')).toBeDefined();
    expect(cluster.get('UPSTREAM_DEALS_USERNAME')?.value).toBe('atrium-service');
    expect(cluster.get('UPSTREAM_DEALS_TOKEN_FILE')).toBeUndefined();
    expect(cluster.get('DATABASE_URL_FILE')).toBeDefined();
    expect(cluster.get('REDIS_CLUSTER_NODES')?.value).toContain('redis-cluster-0.redis:6379');
    const sentinel = env('sentinel-values.yaml');
    expect(sentinel.get('REDIS_SENTINELS')?.value?.split(',')).toHaveLength(3);
    expect(sentinel.get('REDIS_TLS')?.value).toBe('on');
    expect(sentinel.get('REDIS_PASSWORD_FILE')).toBeDefined();
    expect(env('existing-secrets-values.yaml').get('REDIS_URL_FILE')).toBeDefined();
    const macro = env('macro-only-values.yaml');
    expect(macro.get('ATRIUM_UPSTREAMS')?.value).toBe('macro');
    expect([...macro.keys()].filter((n) => n.startsWith('UPSTREAM_'))).toEqual([
      'UPSTREAM_MACRO_BASE_URL',
      'UPSTREAM_MACRO_TOKEN_FILE',
    ]);
  });

  it("writes a consumers file the gateway's own parser accepts, mounted as a directory", () => {
    for (const name of ['default values', 'macro-only-values.yaml']) {
      const objects = rendered.get(name)!;
      const map = one(objects, 'ConfigMap') as unknown as { data: Record<string, string> };
      const consumers = parseConsumersDocument(JSON.parse(map.data['consumers.json']), UPSTREAM_NAMES);
      expect(consumers.map((c) => c.id)).toEqual(name === 'default values' ? [] : ['dashboard-web']);
      const [c] = podOf(objects).containers;
      // No subPath: Kubernetes' updates of the ConfigMap reach the running pod, which reloads the file.
      expect(c.volumeMounts.find((m) => m.name === 'consumers')).toEqual({
        name: 'consumers',
        mountPath: '/etc/atrium/consumers',
        readOnly: true,
      });
      expect(envOf(c).get('ATRIUM_CONSUMERS_FILE')?.value).toBe('/etc/atrium/consumers/consumers.json');
    }
  });

  it("writes a custom views file the gateway's own parser accepts, and rolls the pods when it changes", () => {
    const objects = rendered.get('cluster-values.yaml')!;
    const map = one(objects, 'ConfigMap') as unknown as { data: Record<string, string> };
    const catalog = [{ name: 'macro', prefixes: ['macro'], routes: MACRO_ROUTES }];
    const set = parseViewsDocument(
      parseYaml(map.data['views.yaml']),
      catalog,
      { maxTimeoutMs: 30_000 },
      'chart',
    );
    expect([...set.views.keys()]).toEqual(['macro-home']);
    const [c] = podOf(objects).containers;
    expect(envOf(c).get('ATRIUM_VIEWS_FILE')?.value).toBe('/etc/atrium/views/views.yaml');
    const annotations = (
      one(objects, 'Deployment') as unknown as {
        spec: { template: { metadata: { annotations: Record<string, string> } } };
      }
    ).spec.template.metadata.annotations;
    const other = render(h, [join(CHART, 'ci', 'cluster-values.yaml')], ['views.definition=views: {}']);
    const otherAnnotations = (
      one(other, 'Deployment') as unknown as {
        spec: { template: { metadata: { annotations: Record<string, string> } } };
      }
    ).spec.template.metadata.annotations;
    expect(annotations['checksum/views']).toMatch(/^[0-9a-f]{64}$/);
    expect(otherAnnotations['checksum/views']).not.toBe(annotations['checksum/views']);
  });

  it('reads an existing Secret by the keys its store gave them', () => {
    const pod = podOf(rendered.get('existing-secrets-values.yaml')!);
    const volume = pod.volumes.find((v) => v.name === 'secrets') as unknown as {
      secret: { secretName: string; items: Array<{ key: string; path: string }> };
    };
    expect(volume.secret.secretName).toBe('atrium-vendor-credentials');
    expect(volume.secret.items).toContainEqual({ key: 'CEIC_API_KEY', path: 'macroToken' });
    expect(rendered.get('existing-secrets-values.yaml')!.filter((o) => o.kind === 'Secret')).toEqual([]);
  });

  it.each(CASES)(
    'gives Kubernetes more time than the drain takes, probes the right endpoints (%s)',
    (name) => {
      const pod = podOf(rendered.get(name)!);
      const [c] = pod.containers;
      const env = envOf(c);
      const drainMs =
        Number(env.get('ATRIUM_DRAIN_DELAY_MS')?.value) +
        Number(env.get('ATRIUM_SHUTDOWN_GRACE_MS')?.value) +
        (c.lifecycle?.preStop?.sleep?.seconds ?? 0) * 1000;
      expect(drainMs).toBeGreaterThan(0);
      expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(drainMs);
      // Readiness is the replica's own state; liveness and startup only ask whether the process answers.
      expect(c.readinessProbe.httpGet.path).toBe('/health/ready');
      expect(c.livenessProbe.httpGet.path).toBe('/health/live');
      expect(c.startupProbe.httpGet.path).toBe('/health/live');
    },
  );

  it.each(CASES)('sizes the V8 heap below the memory limit, runs locked down (%s)', (name) => {
    const pod = podOf(rendered.get(name)!);
    const [c] = pod.containers;
    const limit = /^(\d+)(Mi|Gi)$/.exec(c.resources.limits.memory)!;
    const limitMi = Number(limit[1]) * (limit[2] === 'Gi' ? 1024 : 1);
    const heap = Number(/--max-old-space-size=(\d+)/.exec(envOf(c).get('NODE_OPTIONS')!.value!)![1]);
    expect(heap).toBeGreaterThan(limitMi / 2);
    expect(heap).toBeLessThan(limitMi);
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(c.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
  });

  it('autoscales on CPU alone, with a ceiling', () => {
    const hpa = one(rendered.get('sentinel-values.yaml')!, 'HorizontalPodAutoscaler') as unknown as {
      spec: { maxReplicas: number; metrics: Array<{ type: string; resource: { name: string } }> };
    };
    expect(hpa.spec.maxReplicas).toBe(8);
    expect(hpa.spec.metrics.map((m) => `${m.type}/${m.resource.name}`)).toEqual(['Resource/cpu']);
  });

  it('lets the gateway reach only DNS, the vendors, Redis and the trace collector', () => {
    const policy = one(rendered.get('sentinel-values.yaml')!, 'NetworkPolicy') as unknown as {
      spec: { egress: Array<{ to: unknown[]; ports: Array<{ port: number }> }> };
    };
    expect(policy.spec.egress.map((e) => e.ports.map((p) => p.port))).toEqual([
      [53, 53],
      [443],
      [6379, 26379],
      [4318],
    ]);
    // An empty `to` would allow every destination.
    for (const rule of policy.spec.egress) expect(rule.to.length).toBeGreaterThan(0);
  });

  it('rejects a misspelt value, a fleet without Redis and a policy that reaches no vendor', () => {
    const fails = (sets: string[]) => {
      const r = helm(h, ['template', 'atrium', CHART, ...sets.flatMap((s) => ['--set', s])]);
      expect(r.status).not.toBe(0);
      return r.output;
    };
    expect(fails(['replicaCont=2'])).toMatch(/additional properties 'replicaCont' not allowed/);
    expect(fails(['upstreams.macro.settings.RATE_PER_SECOND=5'])).toMatch(/RATE_PER_SECOND/);
    expect(fails(['upstreams.macro.settings.TOKEN=abc'])).toMatch(/TOKEN/);
    expect(fails(['settings.ATRIUM_METRICS_TOKEN=abcdefghijklmnopq'])).toMatch(/ATRIUM_METRICS_TOKEN/);
    expect(fails(['replicaCount=3'])).toMatch(/more than one replica needs redis\.mode/);
    expect(fails(['networkPolicy.enabled=true'])).toMatch(/networkPolicy\.vendors\.cidrs is empty/);
    expect(fails(['secrets.create=true'])).toMatch(/secrets\.values\.macroToken is required/);
  });
});
