// Validates rendered objects against the Kubernetes API as kubernetes-models 4.5.1 ships it (generated from
// the OpenAPI document of Kubernetes 1.33.0; its 5.x, on 1.36, requires Node 22, above what this repository
// supports), and the Prometheus Operator's CRDs for ServiceMonitor and PrometheusRule, in two ways:
//  - the package's JSON-schema validators: types, required fields, formats, enums;
//  - its TypeScript declarations: the objects are type-checked as object literals, so a field the API does
//    not have (a misspelt `readinesProbe`) is an error, as a strict API server would make it. The schemas
//    alone let unknown fields through (the API's OpenAPI document does not forbid them).
import {
  PrometheusRule,
  ServiceMonitor,
} from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import { join } from 'node:path';
import ts from 'typescript';
import type { K8sObject } from './helm.js';
import { ROOT } from './helm.js';

interface Kind {
  /** The package's class: `new Model(o).validate()` throws on a schema violation. */
  model: new (o: never) => { validate(): void };
  /** Module and interface of its TypeScript declaration. */
  types: readonly [module: string, name: string];
}

/** Every kind the chart may render, by `apiVersion/kind`: all served by Kubernetes 1.33 and later (none deprecated). */
export const KINDS = {
  'v1/ConfigMap': { model: ConfigMap, types: ['kubernetes-models/v1/ConfigMap', 'IConfigMap'] },
  'v1/Secret': { model: Secret, types: ['kubernetes-models/v1/Secret', 'ISecret'] },
  'v1/Service': { model: Service, types: ['kubernetes-models/v1/Service', 'IService'] },
  'v1/ServiceAccount': {
    model: ServiceAccount,
    types: ['kubernetes-models/v1/ServiceAccount', 'IServiceAccount'],
  },
  'apps/v1/Deployment': { model: Deployment, types: ['kubernetes-models/apps/v1/Deployment', 'IDeployment'] },
  'policy/v1/PodDisruptionBudget': {
    model: PodDisruptionBudget,
    types: ['kubernetes-models/policy/v1/PodDisruptionBudget', 'IPodDisruptionBudget'],
  },
  'autoscaling/v2/HorizontalPodAutoscaler': {
    model: HorizontalPodAutoscaler,
    types: ['kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler', 'IHorizontalPodAutoscaler'],
  },
  'networking.k8s.io/v1/NetworkPolicy': {
    model: NetworkPolicy,
    types: ['kubernetes-models/networking.k8s.io/v1/NetworkPolicy', 'INetworkPolicy'],
  },
  'monitoring.coreos.com/v1/ServiceMonitor': {
    model: ServiceMonitor,
    types: [
      '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor',
      'IServiceMonitor',
    ],
  },
  'monitoring.coreos.com/v1/PrometheusRule': {
    model: PrometheusRule,
    types: [
      '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule',
      'IPrometheusRule',
    ],
  },
} as const satisfies Record<string, Kind>;

const kindOf = (o: K8sObject): Kind | undefined =>
  (KINDS as Record<string, Kind>)[`${o.apiVersion}/${o.kind}`];

/** Schema violations of each object, in order (empty for a valid one); an unknown kind is one too. */
export function schemaProblems(objects: readonly K8sObject[]): string[][] {
  return objects.map((o) => {
    const kind = kindOf(o);
    if (!kind) return [`${o.apiVersion}/${o.kind} ${o.metadata.name}: not a kind this check knows`];
    try {
      new kind.model(o as never).validate();
      return [];
    } catch (e) {
      return [`${o.kind} ${o.metadata.name}: ${(e as Error).message}`];
    }
  });
}

/**
 * Type errors of the objects as literals of their declared types: unknown fields, wrong types. One
 * in-memory program (nothing written to disk); the declarations come from node_modules.
 */
export function typeProblems(objects: readonly K8sObject[]): string[] {
  const file = join(ROOT, 'test/deploy/__rendered__.ts');
  const lines: string[] = [];
  objects.forEach((o, i) => {
    const kind = kindOf(o);
    if (!kind) return;
    const [module, name] = kind.types;
    lines.push(`import type { ${name} as T${i} } from '${module}';`);
    lines.push(`export const o${i}: T${i} = ${JSON.stringify(o)};`);
  });
  const source = lines.join('\n');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    target: ts.ScriptTarget.ES2022,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, version, ...rest) =>
    name === file ? ts.createSourceFile(name, source, version, true) : getSourceFile(name, version, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => name === file || fileExists(name);
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
    if (!d.file || d.start === undefined) return message;
    const { line } = d.file.getLineAndCharacterOfPosition(d.start);
    const object = objects[Math.floor(line / 2)];
    return `${object ? `${object.kind} ${object.metadata.name}` : d.file.fileName}: ${message}`;
  });
}
