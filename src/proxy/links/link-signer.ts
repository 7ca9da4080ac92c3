import { createHmac, timingSafeEqual } from 'node:crypto';
import { GatewayError } from '../../core/errors/gateway-error.js';

/** Path of the gateway route that follows signed links: `/links/<upstream>/<file name>?t=…`. */
export const SIGNED_LINK_PATH = '/links';

export interface LinkSignerOptions {
  /** HMAC key (ATRIUM_LINK_SECRET, or a random one per process). */
  readonly secret: string;
  /** How long a minted link may be followed. */
  readonly ttlSeconds: number;
  /** Where consumers reach the gateway (`https://atrium.internal`); absent → links are root-relative. */
  readonly publicUrl?: string;
  readonly now?: () => number;
}

/** What a valid link stands for: a GET of `target` (path below the upstream's base URL, and its query). */
export interface LinkTarget {
  readonly upstream: string;
  readonly target: string;
}

const VERSION = 'atrium-link-v1';
const UPSTREAM_NAME = /^[a-z][a-z0-9_-]{0,31}$/;
const TOKEN = /^([A-Za-z0-9_-]{1,8192})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/;
const SAFE_NAME = /[^A-Za-z0-9._-]+/g;

function invalid(message: string): GatewayError {
  return new GatewayError('FORBIDDEN', { message });
}

/**
 * Mints and checks gateway-signed download links (README "Key custody"). A vendor answer that links to the
 * vendor's own API with our credential in the link (a dump's `downloadLink`, a document's `files[].link`) is
 * given a link to the gateway instead: HMAC-SHA256 over the upstream, the expiry and the target (the
 * vendor path and query **without** the credential). Following it needs no key of any kind — like the
 * vendor's link, it is the capability, short-lived — and the gateway fetches the target with its own
 * credential injected. The link carries no vendor secret in any form.
 */
export class LinkSigner {
  private readonly key: Buffer;
  private readonly ttlSeconds: number;
  private readonly base: string;
  private readonly now: () => number;

  constructor(opts: LinkSignerOptions) {
    if (!opts.secret || opts.secret.length < 32)
      throw new Error('LinkSigner: secret of 32+ characters required');
    if (!(Number.isInteger(opts.ttlSeconds) && opts.ttlSeconds > 0))
      throw new Error('LinkSigner: ttlSeconds must be a positive integer');
    this.key = Buffer.from(opts.secret, 'utf8');
    this.ttlSeconds = opts.ttlSeconds;
    this.now = opts.now ?? Date.now;
    if (opts.publicUrl) {
      const u = new URL(opts.publicUrl);
      if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.search || u.hash || u.username)
        throw new Error('LinkSigner: publicUrl must be a plain http(s) URL');
      this.base = u.origin + u.pathname.replace(/\/+$/, '');
    } else this.base = '';
  }

  private mac(upstream: string, expires: number, target: string): string {
    return createHmac('sha256', this.key)
      .update(`${VERSION}\n${upstream}\n${expires}\n${target}`)
      .digest('base64url');
  }

  /** A link to the gateway for a GET of `target` (`/downloads/dump-1.zip?expires=…`) on `upstream`. */
  sign(upstream: string, target: string): string {
    if (!UPSTREAM_NAME.test(upstream)) throw new Error(`LinkSigner: bad upstream name ${upstream}`);
    if (!target.startsWith('/')) throw new Error('LinkSigner: target must start with /');
    const expires = Math.floor(this.now() / 1000) + this.ttlSeconds;
    const payload = Buffer.from(target, 'utf8').toString('base64url');
    const q = target.indexOf('?');
    const segments = (q === -1 ? target : target.slice(0, q)).split('/');
    // Cosmetic (browsers name a saved file after it); not signed, not used.
    const last = segments[segments.length - 1].replace(SAFE_NAME, '_').slice(0, 100);
    const name = /^\.*$/.test(last) ? 'download' : last;
    return `${this.base}${SIGNED_LINK_PATH}/${upstream}/${name}?t=${payload}.${expires}.${this.mac(upstream, expires, target)}`;
  }

  /** The target of a link's `t` parameter, or a 403 GatewayError when it is forged, altered or expired. */
  verify(upstream: string, token: unknown): LinkTarget {
    const m = typeof token === 'string' ? TOKEN.exec(token) : null;
    if (!m || !UPSTREAM_NAME.test(upstream)) throw invalid('The download link is malformed.');
    const expires = Number(m[2]);
    const target = Buffer.from(m[1], 'base64url').toString('utf8');
    const expected = Buffer.from(this.mac(upstream, expires, target));
    const given = Buffer.from(m[3]);
    if (given.length !== expected.length || !timingSafeEqual(given, expected) || !target.startsWith('/'))
      throw invalid('The download link is not valid.');
    const now = Math.floor(this.now() / 1000);
    if (now > expires)
      throw invalid(
        'The download link has expired; request the answer that carried it again for a fresh one.',
      );
    return { upstream, target };
  }
}

/** The LinkSigner of gateway-signed download links (README "Key custody"). */
export const LINK_SIGNER = Symbol('LinkSigner');
