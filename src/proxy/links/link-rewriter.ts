import type { SecretMatcher } from '../../core/logging/secret-forms.js';
import type { LinkSigner } from './link-signer.js';

export interface LinkRewriterOptions {
  readonly upstream: string;
  /** The upstream's base URL: links are recognised as pointing at the upstream when they start with it. */
  readonly baseUrl: string;
  readonly signer: LinkSigner;
}

// A URL starts at its scheme; in JSON its slashes may be escaped (`https:\/\/`, as PHP writes them).
const SCHEME = /https?:(?:\/\/|\\\/\\\/)/gi;
const HEX4 = /^[0-9A-Fa-f]{4}$/;
const ENTITY = /^&(amp|#38|#x26);/i;

function isTerminator(c: string): boolean {
  return c <= ' ' || c === '"' || c === "'" || c === '<' || c === '>' || c === '`' || c === '\u007f';
}

/**
 * Reads the URL starting at `start` of a body (as latin1 text, so indices are byte offsets): it ends at a
 * quote, an angle bracket, whitespace or a backslash that is not part of an escape. JSON escapes (`\/`,
 * `\u0026`) and, in markup, `&amp;` are decoded in the returned URL.
 */
function readUrl(text: string, start: number, markup: boolean): { end: number; url: string } {
  let url = '';
  let i = start;
  while (i < text.length) {
    const c = text[i];
    if (c === '\\') {
      const n = text[i + 1];
      if (n === '/') {
        url += '/';
        i += 2;
        continue;
      }
      if (n === 'u' && HEX4.test(text.slice(i + 2, i + 6))) {
        url += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
        i += 6;
        continue;
      }
      break;
    }
    if (isTerminator(c)) break;
    if (markup && c === '&') {
      const m = ENTITY.exec(text.slice(i, i + 6));
      if (m) {
        url += '&';
        i += m[0].length;
        continue;
      }
    }
    url += c;
    i++;
  }
  return { end: i, url };
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

/**
 * Replaces links to the upstream's own API that carry our credential (in any form) with gateway-signed
 * links (LinkSigner). Vendor-agnostic: a link is recognised by pointing at the upstream's base URL, in any
 * JSON or XML body. The parameters holding the credential are dropped from the signed target; the gateway
 * injects its own credential when the link is followed. A link that cannot be made safe this way (the
 * credential in its path, a link to another host) is left for the scrubber to mask.
 */
export class LinkRewriter {
  private readonly origin: string;
  private readonly basePath: string;

  constructor(private readonly opts: LinkRewriterOptions) {
    const url = new URL(opts.baseUrl);
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, '');
  }

  /**
   * Rewrites every credential-bearing link to the upstream in `body`. Returns the same Buffer when there
   * is none. Call it only for a body the matcher found a form in: it reads the body as text.
   */
  rewrite(
    body: Buffer,
    contentType: string | undefined,
    matcher: SecretMatcher,
  ): { body: Buffer; count: number } {
    const text = body.toString('latin1');
    const markup = contentType !== undefined && /xml|html/i.test(contentType);
    let parts: Buffer[] | undefined;
    let last = 0;
    let count = 0;
    SCHEME.lastIndex = 0;
    for (let m = SCHEME.exec(text); m; m = SCHEME.exec(text)) {
      const start = m.index;
      const { end, url } = readUrl(text, start, markup);
      SCHEME.lastIndex = Math.max(end, start + 1);
      if (!matcher.inBuffer(body.subarray(start, end)) && !matcher.inText(url)) continue;
      const link = this.signedLinkFor(url, matcher);
      if (!link) continue;
      (parts ??= []).push(body.subarray(last, start), Buffer.from(link, 'latin1'));
      last = end;
      count++;
    }
    if (!parts) return { body, count: 0 };
    parts.push(body.subarray(last));
    return { body: Buffer.concat(parts), count };
  }

  /** The signed gateway link for a credential-bearing link to the upstream, or undefined. */
  private signedLinkFor(link: string, matcher: SecretMatcher): string | undefined {
    let url: URL;
    try {
      url = new URL(link);
    } catch {
      return undefined;
    }
    if (url.origin !== this.origin) return undefined;
    const path = url.pathname;
    if (this.basePath && path !== this.basePath && !path.startsWith(this.basePath + '/')) return undefined;
    const rel = path.slice(this.basePath.length) || '/';
    // A credential in the path cannot be dropped and re-injected: leave it to the scrubber.
    if (matcher.inText(rel) || matcher.inText(decode(rel))) return undefined;
    const kept: string[] = [];
    for (const pair of url.search.slice(1).split('&')) {
      if (!pair) continue;
      if (matcher.inText(pair) || matcher.inText(decode(pair))) continue;
      kept.push(pair);
    }
    return this.opts.signer.sign(this.opts.upstream, kept.length ? `${rel}?${kept.join('&')}` : rel);
  }
}
