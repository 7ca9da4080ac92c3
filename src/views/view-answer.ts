import { hash } from 'node:crypto';
import { etagOf } from '../core/http/etag.js';
import type { ErrorEnvelope } from '../core/errors/error-envelope.js';
import { selectFields, type FieldSelection } from '../core/http/field-selection.js';
import type { ViewDefinition, ViewPart } from './view-definition.js';
import { partData, type PartOutcome, type ViewRun } from './view-runner.js';

/** One part in `parts`: how it was served. */
export interface PartReport {
  status: number;
  cache?: string;
  ageSeconds?: number;
  durationMs: number;
  error?: ErrorEnvelope['error'];
}

export interface ViewAnswer {
  readonly status: number;
  readonly body: string;
  readonly complete: boolean;
  /** Set on failures that carry one (a required part's 429). */
  readonly retryAfter?: string;
  /** Set on 200 answers. */
  readonly etag?: string;
  /** The required part that failed, if one did. */
  readonly failedPart?: string;
}

function reportOf(run: ViewRun, name: string): PartReport {
  const o = run.outcomes.get(name)!;
  return {
    status: o.status,
    ...(o.cache ? { cache: o.cache } : {}),
    ...(o.ageSeconds !== undefined ? { ageSeconds: o.ageSeconds } : {}),
    durationMs: o.durationMs,
    ...(o.status !== 200 && o.envelope ? { error: o.envelope.error } : {}),
  };
}

interface PartText {
  readonly text: string;
  readonly digest: string;
}

/**
 * A part's JSON text in the answer and its digest (the ETag covers the digests in order): those of its
 * answer as read when the part has no field selection of its own.
 */
function textOf(part: ViewPart, outcome: PartOutcome): PartText {
  if (outcome.status === 200 && !part.fields && outcome.form) return outcome.form;
  const text = JSON.stringify(partData(part, outcome));
  return { text, digest: hash('sha256', text, 'base64url') };
}

/**
 * Composes the answer: `{data: {<part>: …}, parts: {<part>: {status, cache, ageSeconds, durationMs,
 * error?}}, complete}` with a strong ETag over the bytes, or — when a required part failed — that part's
 * status and envelope, naming the part (and the view), with the part's `Retry-After`.
 */
export function composeAnswer(view: ViewDefinition, run: ViewRun, fields?: FieldSelection): ViewAnswer {
  const parts: Record<string, PartReport> = {};
  for (const p of view.parts) parts[p.name] = reportOf(run, p.name);
  const failed =
    view.parts.find((p) => p.name === run.blockedBy) ??
    view.parts.find((p) => !p.optional && run.outcomes.get(p.name)!.status !== 200);
  if (failed) {
    const o = run.outcomes.get(failed.name)!;
    const envelope = o.envelope!;
    const body = {
      ...envelope,
      error: {
        ...envelope.error,
        message: `Part "${failed.name}": ${envelope.error.message}`,
        view: view.name,
        part: failed.name,
      },
      parts,
    };
    return {
      status: o.status,
      body: JSON.stringify(body),
      complete: false,
      ...(o.retryAfter ? { retryAfter: o.retryAfter } : {}),
      failedPart: failed.name,
    };
  }
  const complete = view.parts.every((p) => run.outcomes.get(p.name)!.status === 200);
  let dataText: string;
  let etag: string;
  if (fields) {
    const data = Object.fromEntries(view.parts.map((p) => [p.name, partData(p, run.outcomes.get(p.name)!)]));
    dataText = JSON.stringify(selectFields(data, fields));
    etag = etagOf(dataText, complete);
  } else {
    // As JSON.stringify of the {name: data} object; the ETag covers the parts' digests in order.
    dataText = '{';
    let digests = '';
    for (const [i, p] of view.parts.entries()) {
      const t = textOf(p, run.outcomes.get(p.name)!);
      const name = JSON.stringify(p.name);
      dataText += (i ? ',' : '') + name + ':' + t.text;
      digests += name + ':' + t.digest + ',';
    }
    dataText += '}';
    etag = etagOfDigests(digests, complete);
  }
  const body = `{"data":${dataText},"parts":${JSON.stringify(parts)},"complete":${complete}}`;
  return { status: 200, body, complete, etag };
}

/**
 * A view's validator covers what a poller reads: data (its text, or its parts' digests) and completeness, not
 * `parts` (durations and cache ages change on every call even when nothing else did).
 */
function etagOfDigests(digests: string, complete: boolean): string {
  return etagOf(digests, complete);
}
