// Renders deploy/helm/atrium with the real `helm` (pinned, installed by `npm run helm:install` into
// node_modules/.cache/atrium-helm) and reads what it wrote. No cluster: `helm template` and `helm lint`
// work offline.
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';

export const ROOT = resolve(__dirname, '../..');
export const CHART = join(ROOT, 'deploy/helm/atrium');

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; [k: string]: unknown };
  [k: string]: unknown;
}

export interface HelmRun {
  status: number | null;
  output: string;
}

export function helm(binary: string, args: string[]): HelmRun {
  const r = spawnSync(binary, args, {
    cwd: ROOT,
    encoding: 'utf8',
    // Offline: no repository config, cache or plugins of whoever runs the tests.
    env: { PATH: process.env.PATH, HOME: '/nonexistent', HELM_CACHE_HOME: '/nonexistent/cache' },
    timeout: 60_000,
  });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/** `helm template` of the chart with these value files and `--set`s; throws with helm's words on failure. */
export function render(binary: string, valueFiles: string[] = [], sets: string[] = []): K8sObject[] {
  const args = ['template', 'atrium', CHART, '--namespace', 'gateways', '--kube-version', KUBE_VERSION];
  for (const f of valueFiles) args.push('--values', f);
  for (const s of sets) args.push('--set', s);
  const r = helm(binary, args);
  if (r.status !== 0) throw new Error(`helm template failed:\n${r.output}`);
  return parseAllDocuments(r.output)
    .map((d) => {
      if (d.errors.length) throw new Error(`helm wrote invalid YAML: ${d.errors[0].message}`);
      return d.toJS() as K8sObject | null;
    })
    .filter((o): o is K8sObject => o !== null);
}

/** The Kubernetes version the chart is rendered for and validated against (kubernetes-models' schemas). */
export const KUBE_VERSION = '1.33.0';
