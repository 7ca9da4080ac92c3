// The fake Company v2's answers: its three error shapes, the `{"data":{total,items}}` envelope and the
// route handler type.
import type { RouteParams } from '../fake-router.js';
import type { FakeReply, FakeRequest } from '../fake-upstream.js';

export type CompanyErrorShape = 'error-object' | 'errors-array' | 'flat';

/**
 * The three error shapes the company fake uses: `{"error":{code,message}}` (401, 403, 429, 5xx),
 * `{"errors":[{code,message}]}` (400) and `{"message","code":<status>}` (404).
 */
export function companyErrorBody(
  shape: CompanyErrorShape,
  status: number,
  code: string,
  message: string,
): object {
  if (shape === 'errors-array') return { errors: [{ code, message }] };
  if (shape === 'flat') return { message, code: status };
  return { error: { code, message } };
}

const DEFAULT_ERRORS: Record<number, [CompanyErrorShape, string, string]> = {
  400: ['errors-array', 'INVALID_PARAMETER', 'Invalid parameter'],
  401: ['error-object', 'INVALID_TOKEN', 'Invalid or missing token'],
  403: ['error-object', 'FORBIDDEN', 'Access to this resource is not included in the subscription'],
  404: ['flat', 'NOT_FOUND', 'Not found'],
  405: ['error-object', 'METHOD_NOT_ALLOWED', 'Method not allowed'],
  429: ['error-object', 'RATE_LIMIT_EXCEEDED', 'Too many requests'],
};

export function companyError(status: number, message?: string): FakeReply {
  const [shape, code, defMessage] = DEFAULT_ERRORS[status] ?? [
    'error-object',
    'INTERNAL_ERROR',
    'Internal error',
  ];
  return { status, json: companyErrorBody(shape, status, code, message ?? defMessage) };
}

export const bad = (message: string): FakeReply => companyError(400, message);
export const notFound = (): FakeReply => companyError(404);
export const items = (list: unknown[], total = list.length): FakeReply => ({
  status: 200,
  json: { data: { total, items: list } },
});

export type CompanyHandler = (req: FakeRequest, params: RouteParams) => FakeReply;
