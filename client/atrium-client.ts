// AtriumClient: one typed method per gateway operation, typed from openapi-typescript's `operations`
// (generated/api.ts) and called by id through the table in generated/operations.ts.
import type { operations } from './generated/api.js';
import { OPERATIONS } from './generated/operations.js';
import {
  AtriumClientBase,
  type AtriumClientOptions,
  type AtriumResponse,
  type QueryValue,
  type RequestOptions,
} from './runtime.js';

export type OperationId = keyof typeof OPERATIONS;

/** Query parameters the docs do not list are forwarded as sent. */
type Undocumented = { [param: string]: QueryValue };
/** A list parameter also takes one value. */
type OneOrMany<T> = T extends readonly (infer E)[] ? E | ReadonlyArray<E> : T;
type Documented<Q> = { [K in keyof Q]: OneOrMany<Q[K]> } & Undocumented;

type PathParams<P> = P extends { path: infer X } ? { path: { [K in keyof X]: string | number } } : unknown;
type QueryParams<P> = P extends { query: infer Q }
  ? { query: Documented<Q> }
  : [NonNullable<P extends { query?: infer Q } ? Q : never>] extends [never]
    ? { query?: Undocumented }
    : { query?: Documented<NonNullable<P extends { query?: infer Q } ? Q : never>> };
/** A write whose body the document does not describe still takes one (sent as JSON unless told otherwise). */
type BodyParam<O, Method> = [NonNullable<O extends { requestBody?: infer B } ? B : never>] extends [never]
  ? Method extends 'GET' | 'DELETE'
    ? unknown
    : { body?: unknown }
  : O extends { requestBody: { content: infer C } }
    ? { body: C[keyof C] }
    : { body?: NonNullable<O extends { requestBody?: { content: infer C } } ? C[keyof C] : never> };

type Params<O, Method> = O extends { parameters: infer P }
  ? PathParams<P> & QueryParams<P> & BodyParam<O, Method>
  : never;

type Success<R> = R extends { 200: infer A } ? A : R extends { 201: infer A } ? A : never;
/** Names of an object type's own properties (its index signature left out). */
type NamedKeys<T> = keyof { [K in keyof T as string extends K ? never : number extends K ? never : K]: 0 };
/** A JSON object the document does not describe is `unknown`, as an undocumented answer is. */
type Described<T> = string extends keyof T ? ([NamedKeys<T>] extends [never] ? unknown : T) : T;
type Answer<O> =
  Success<O extends { responses: infer R } ? R : never> extends { content: infer C }
    ? 'application/octet-stream' extends keyof C
      ? Blob
      : 'application/json' extends keyof C
        ? Described<C['application/json']>
        : Extract<keyof C, `text/${string}`> extends never
          ? unknown
          : string
    : unknown;

/** Every operation: its parameters and the body of its successful answer. */
export type Operations = {
  [K in OperationId]: {
    params: Params<operations[K], (typeof OPERATIONS)[K]['method']>;
    response: Answer<operations[K]>;
  };
};

/** Params are optional when none is required. */
type Method<K extends OperationId> =
  Partial<Operations[K]['params']> extends Operations[K]['params']
    ? (
        params?: Operations[K]['params'],
        options?: RequestOptions,
      ) => Promise<AtriumResponse<Operations[K]['response']>>
    : (
        params: Operations[K]['params'],
        options?: RequestOptions,
      ) => Promise<AtriumResponse<Operations[K]['response']>>;

/** `macroFeedsList(params, options)` for `macro.feeds.list`, and so on for every operation. */
export type OperationMethods = { [K in OperationId as (typeof OPERATIONS)[K]['name']]: Method<K> };

class Client extends AtriumClientBase<Operations> {
  protected readonly operations = OPERATIONS;
}
for (const [id, { name }] of Object.entries(OPERATIONS))
  Object.defineProperty(Client.prototype, name, {
    value(this: Client, params?: Operations[OperationId]['params'], options?: RequestOptions) {
      return this.call(id as OperationId, params ?? {}, options);
    },
    writable: true,
    configurable: true,
  });

/**
 * The gateway, one typed method per operation. Failures throw `AtriumError` with the gateway envelope.
 * ```ts
 * const atrium = new AtriumClient({ baseUrl: 'https://atrium.internal', apiKey: KEY });
 * const feeds = await atrium.macroFeedsList({ query: { limit: 10 } });
 * ```
 */
export type AtriumClient = Client & OperationMethods;
export const AtriumClient = Client as new (options: AtriumClientOptions) => AtriumClient;
