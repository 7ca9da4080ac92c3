// The fake CEIC's answers: ResponseError bodies `{"errors":{status,code,message}}` and the route types.
import type { RouteParams } from '../fake-router.js';
import type { FakeReply, FakeRequest } from '../fake-upstream.js';
import type { MacroState } from './macro-state.js';

export interface MacroCtx {
  req: FakeRequest;
  params: RouteParams;
}

export type MacroHandler = (ctx: MacroCtx) => FakeReply;

/** What route modules need of the fake: its mutable state, clock, base URL and file answers. */
export interface MacroEnv {
  state: MacroState;
  now(): number;
  url(): string;
  fileReply(contentType: string, filename: string): FakeReply;
}

const ERRORS: Record<number, [code: string, message: string]> = {
  400: ['INVALID_INPUT_PARAMETER', 'Invalid input parameter'],
  401: ['INVALID_API_TOKEN', 'Invalid access token'],
  403: ['FORBIDDEN', 'Incorrect user permissions'],
  404: ['NOT_FOUND', 'Requested entity not found'],
  405: ['METHOD_NOT_ALLOWED', 'Method not allowed'],
  415: ['UNSUPPORTED_MEDIA_TYPE', 'Unsupported data format; only json and xml are supported'],
  429: ['TOO_MANY_REQUESTS', 'Too many requests'],
  500: ['ERR', 'Internal error'],
  502: ['BAD_GATEWAY', 'Bad gateway'],
  503: ['SERVICE_UNAVAILABLE', 'Service unavailable'],
  504: ['GATEWAY_TIMEOUT', 'Gateway timeout'],
};

/** A ResponseError answer: `{"errors":{status,code,message}}`. */
export function macroError(status: number, code?: string, message?: string): FakeReply {
  const [defCode, defMessage] = ERRORS[status] ?? ['ERR', `HTTP ${status}`];
  return { status, json: { errors: { status, code: code ?? defCode, message: message ?? defMessage } } };
}

export const bad = (message: string): FakeReply => macroError(400, 'INVALID_INPUT_PARAMETER', message);
export const notFound = (what: string): FakeReply => macroError(404, 'NOT_FOUND', `${what} not found`);
export const ok = (json: unknown): FakeReply => ({ status: 200, json });
