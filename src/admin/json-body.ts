import type { FastifyRequest } from 'fastify';
import { GatewayError } from '../core/errors/gateway-error.js';

export function invalidBody(message: string, parameter = 'body'): GatewayError {
  return new GatewayError('VALIDATION_FAILED', { parameter, message });
}

/**
 * The JSON object of an admin call (bodies arrive as raw buffers: configure-app.ts). An empty body is `{}`;
 * fields outside `allowed` are refused by name, so a typo never passes silently.
 */
export function readJsonObject(req: FastifyRequest, allowed: readonly string[]): Record<string, unknown> {
  const body = req.body;
  if (!Buffer.isBuffer(body) || body.length === 0) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw invalidBody('The body must be a JSON object.');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw invalidBody('The body must be a JSON object.');
  const unknown = Object.keys(parsed).filter((k) => !allowed.includes(k));
  if (unknown.length)
    throw invalidBody(
      `Unknown field(s): ${unknown.join(', ')} (allowed: ${allowed.join(', ')}).`,
      unknown[0],
    );
  return parsed as Record<string, unknown>;
}
