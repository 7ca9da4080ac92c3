import { Injectable } from '@nestjs/common';
import { SecretMatcher, secretPattern, type SecretPattern } from './secret-forms.js';

/**
 * Holds every secret the gateway knows (upstream tokens, passwords, session ids, operator tokens) so that
 * error messages and log lines can be scrubbed as a last line of defence, in every form a vendor may echo
 * them (see secret-forms.ts). Secrets shorter than 6 characters are not registered: scrubbing them would
 * mangle ordinary text, and no real key is that short.
 */
@Injectable()
export class SecretRedactor {
  private secrets: string[] = [];
  /** Patterns per secret, compiled once at registration (a renewed session registers a new id). */
  private readonly forms = new Map<string, SecretPattern | undefined>();
  private matcher = new SecretMatcher([]);
  private scrubs = 0;
  private version = 0;

  register(secret: string | undefined): void {
    if (!secret || secret.length < 6 || this.forms.has(secret)) return;
    this.forms.set(secret, secretPattern(secret));
    this.secrets.push(secret);
    this.rebuild();
  }

  unregister(secret: string | undefined): void {
    if (!secret || !this.forms.delete(secret)) return;
    this.secrets = this.secrets.filter((s) => s !== secret);
    this.rebuild();
  }

  private rebuild(): void {
    this.matcher = new SecretMatcher(this.secrets, (s) => this.forms.get(s));
    this.version++;
  }

  /** Changes whenever a secret is registered or unregistered (text scrubbed before may need it again). */
  get generation(): number {
    return this.version;
  }

  get scrubCount(): number {
    return this.scrubs;
  }

  redact(text: string): string {
    if (!this.matcher.inText(text)) return text;
    const r = this.matcher.scrubText(text);
    this.scrubs += r.count;
    return r.text;
  }

  /** True when a body contains any known secret in any form (a byte search, no decoding). */
  bufferContainsSecret(body: Buffer): boolean {
    return this.matcher.inBuffer(body);
  }
}

/** Masks a secret for display: the first 4 characters and the length. */
export function maskSecret(secret: string | undefined): string {
  if (!secret) return '(unset)';
  return `${secret.slice(0, 4)}…(${secret.length} chars)`;
}
