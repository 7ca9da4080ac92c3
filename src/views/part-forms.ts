import { hash } from 'node:crypto';

/** A JSON part answer as a view uses it: its value, its compact text and that text's digest. */
export interface PartForm {
  readonly value: unknown;
  readonly text: string;
  readonly digest: string;
}

/** The form of a JSON text, or undefined when it is not JSON. */
function formOf(json: string): PartForm | undefined {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return undefined;
  }
  const text = JSON.stringify(value);
  return { value, text, digest: hash('sha256', text, 'base64url') };
}

/**
 * The forms of part answers, kept for as long as their bytes live: a cached part answer is the cache
 * entry's own buffer each time, so the views that include it do not parse, write out and hash it again on
 * every call (a large share of a view's cost, and of its garbage under load). A part answered with new
 * bytes gets a new form. The values are shared between views and never modified (field selection and
 * templates build new values).
 */
export class PartForms {
  private readonly forms = new WeakMap<Buffer, PartForm | null>();

  of(body: Buffer): PartForm | undefined {
    const kept = this.forms.get(body);
    if (kept !== undefined) return kept ?? undefined;
    const form = formOf(body.toString('utf8'));
    this.forms.set(body, form ?? null);
    return form;
  }
}
