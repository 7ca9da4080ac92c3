import { Injectable } from '@nestjs/common';

const MASK = '[REDACTED]';

/**
 * Holds every secret the gateway knows (upstream tokens, passwords, session ids) so that error messages and
 * log lines can be scrubbed as a last line of defence. Secrets shorter than 6 characters are not registered:
 * scrubbing them would mangle ordinary text, and no real key is that short.
 */
@Injectable()
export class SecretRedactor {
  private secrets: string[] = [];
  private buffers: Buffer[] = [];
  private scrubs = 0;

  register(secret: string | undefined): void {
    if (!secret || secret.length < 6 || this.secrets.includes(secret)) return;
    this.secrets.push(secret);
    // Longest first so that a secret containing another is replaced whole.
    this.secrets.sort((a, b) => b.length - a.length);
    this.buffers = this.secrets.map((s) => Buffer.from(s));
  }

  unregister(secret: string | undefined): void {
    if (!secret) return;
    this.secrets = this.secrets.filter((s) => s !== secret);
    this.buffers = this.secrets.map((s) => Buffer.from(s));
  }

  get scrubCount(): number {
    return this.scrubs;
  }

  redact(text: string): string {
    for (const s of this.secrets) {
      if (text.includes(s)) {
        text = text.split(s).join(MASK);
        this.scrubs++;
      }
    }
    return text;
  }

  /** True when a body contains any known secret (a byte search, no decoding). */
  bufferContainsSecret(body: Buffer): boolean {
    for (const b of this.buffers) if (body.indexOf(b) !== -1) return true;
    return false;
  }
}

/** Masks a secret for display: the first 4 characters and the length. */
export function maskSecret(secret: string | undefined): string {
  if (!secret) return '(unset)';
  return `${secret.slice(0, 4)}…(${secret.length} chars)`;
}
