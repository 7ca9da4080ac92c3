// Reading the `data` of Usage/reportMultiple/: the EMIS PHP client sends its serialised request entity,
// `{"_type":"Emis\\Entity\\Api\\UsageReport\\Request","documents":[{"_type":"…\\UsageReport\\Document",
// "documentId":…,"accessTime":…},…]}` (design notes, upstreams.md §6.3); hand-written callers send a bare
// list of the same documents, which is accepted too.
import { EMIS_CODES, EmisError } from '../emis/fake-emis.upstream.js';

export interface ReportedUse {
  documentId: number;
  accessTime?: string;
}

function invalid(detail: string): EmisError {
  return new EmisError(EMIS_CODES.INVALID_PARAMETER, `Invalid parameter: ${detail}`);
}

/** An access time as a string, or as the client's serialised DateTime (`{"_type":"DateTime","date":…}`). */
function accessTimeOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null && typeof (value as { date?: unknown }).date === 'string')
    return (value as { date: string }).date;
  return undefined;
}

export function readUsageReport(raw: string): ReportedUse[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw invalid('data is not JSON');
  }
  const list: unknown = Array.isArray(parsed)
    ? parsed
    : typeof parsed === 'object' && parsed !== null
      ? (parsed as { documents?: unknown }).documents
      : undefined;
  if (!Array.isArray(list)) throw invalid('data must be a UsageReport\\Request object or a list');
  return list.map((item: unknown) => {
    const rec = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
    const id = Number(rec.documentId ?? rec.id);
    if (!Number.isInteger(id)) throw invalid('documentId');
    return { documentId: id, accessTime: accessTimeOf(rec.accessTime) };
  });
}
