import type { FieldSelection } from '../core/http/field-selection.js';
import type { RouteDefinition } from '../proxy/pipeline.types.js';
import type { Template } from './view-template.js';

export type ViewParamType = 'string' | 'integer' | 'number' | 'boolean';

/** A typed parameter of a view, validated like a route's before any part runs. */
export interface ViewParam {
  readonly name: string;
  readonly type: ViewParamType;
  readonly required: boolean;
  readonly description?: string;
  readonly pattern?: RegExp;
  readonly enum?: readonly string[];
  /** Used in the view's example URL (required parameters must have one). */
  readonly example?: string;
  readonly default?: string;
}

/** A literal piece of a route path, or the name of one of its parameters. */
export type PathPiece = string | { readonly param: string };

/** A route path as literals and the names of its parameters, in order. */
export function pathPiecesOf(path: string): PathPiece[] {
  const pieces: PathPiece[] = [];
  let last = 0;
  for (const m of path.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) {
    pieces.push(path.slice(last, m.index), { param: m[1] });
    last = m.index + m[0].length;
  }
  pieces.push(path.slice(last));
  return pieces;
}

/** One call of a view: a GET route of an interface, its path and query built from templates. */
export interface ViewPart {
  /** The name the part's answer appears under in `data` and `parts`. */
  readonly name: string;
  readonly upstream: string;
  /** The canonical gateway prefix of the route's interface (`company`). */
  readonly prefix: string;
  readonly route: RouteDefinition;
  /** Path parameters of the route template, by name. */
  readonly path: Readonly<Record<string, Template>>;
  /** The route's path as literals and parameter names, in order (read from the template once, at load). */
  readonly pathPieces: readonly PathPiece[];
  /** Query parameters in declaration order. */
  readonly query: readonly (readonly [string, Template])[];
  readonly optional: boolean;
  readonly fields?: FieldSelection;
  /** Parts whose answers this one reads (run before it). */
  readonly dependsOn: readonly string[];
  /** 1 for parts that read no other part; a part reading one of step n runs at step n + 1. */
  readonly step: number;
}

export interface ViewDefinition {
  readonly name: string;
  readonly description: string;
  readonly params: readonly ViewParam[];
  /** In declaration order (the answer keeps it). */
  readonly parts: readonly ViewPart[];
  /** Indices into `parts` by step: every part after those it reads. */
  readonly runOrder: readonly number[];
  /** The view's own deadline, when it sets one (else the gateway default). */
  readonly timeoutMs?: number;
}

/** The views in force: validated as a whole, swapped as a whole on reload. */
export interface ViewSet {
  readonly views: ReadonlyMap<string, ViewDefinition>;
  /** Where they were read from (for logs and the console). */
  readonly source: string;
}
