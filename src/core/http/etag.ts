import { createHash, hash } from 'node:crypto';

/**
 * The gateway's one ETag: a strong validator, the first 32 base64url characters of a SHA-256 over what a
 * client reads. Views hash their data (and completeness); proxied answers hash their bytes.
 */
export function etagOf(dataText: string | Buffer, complete = true): string {
  const flag = complete ? '1' : '0';
  // A text is hashed in one call; a body's bytes are not copied to append the flag.
  const digest =
    typeof dataText === 'string'
      ? hash('sha256', dataText + flag, 'base64url')
      : createHash('sha256').update(dataText).update(flag).digest('base64url');
  return `"${digest.slice(0, 32)}"`;
}

/** Whether `If-None-Match` names this ETag (weak comparison, lists and `*` included, RFC 9110 §13.1.2). */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch
    .split(',')
    .map((t) => t.trim().replace(/^W\//, ''))
    .some((t) => t === '*' || t === etag);
}
