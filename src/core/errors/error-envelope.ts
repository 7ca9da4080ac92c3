import { XMLBuilder } from 'fast-xml-parser';
import type { GatewayError } from './gateway-error.js';

export interface ErrorEnvelope {
  error: {
    code: string;
    message: string;
    status: number;
    upstream?: string;
    upstreamStatus?: number;
    upstreamCode?: string | number;
    parameter?: string;
    retryable: boolean;
    retryAfterSeconds?: number;
    requestId: string;
    /** W3C trace id of the request, for the operator's tracing system. */
    traceId?: string;
  };
  /** Vendor-shaped extras (see ErrorShapeRegistry), so vendor client libraries keep raising their own errors. */
  [vendorField: string]: unknown;
}

export function buildEnvelope(err: GatewayError, requestId: string, traceId?: string): ErrorEnvelope {
  const error: ErrorEnvelope['error'] = {
    code: err.code,
    message: err.message,
    status: err.status,
    retryable: err.retryable,
    requestId,
  };
  if (err.upstream !== undefined) error.upstream = err.upstream;
  if (err.upstreamStatus !== undefined) error.upstreamStatus = err.upstreamStatus;
  if (err.upstreamCode !== undefined) error.upstreamCode = err.upstreamCode;
  if (err.parameter !== undefined) error.parameter = err.parameter;
  if (err.retryAfterSeconds !== undefined) error.retryAfterSeconds = err.retryAfterSeconds;
  if (traceId !== undefined) error.traceId = traceId;
  return { error };
}

const xml = new XMLBuilder({ ignoreAttributes: true, format: false, suppressEmptyNode: true });

export function envelopeToXml(envelope: ErrorEnvelope): string {
  return '<?xml version="1.0" encoding="UTF-8"?>' + String(xml.build({ response: envelope }));
}
