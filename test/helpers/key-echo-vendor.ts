import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Readable } from 'node:stream';
import type { ProxyRequest } from '../../src/proxy/pipeline.types.js';
import { keyEchoStage } from '../../src/proxy/stages/key-echo.stage.js';
import { recordSecret } from '../observability/log-capture.js';

/**
 * A hostile vendor for the key-custody regressions (vendor-key-in-answer-headers and
 * vendor-key-in-encoded-form): one node:http server on loopback playing the four upstreams under their own base paths, echoing whatever credential it received
 * in whatever the test scripts (bodies, headers, links, error messages). The documents and deals upstreams
 * use the login step: their session ids come from `nextSessionIds` and contain `/`, `+` and `=`.
 *
 * The encodings below are written out here on purpose, independently of src/core/logging/secret-forms.ts:
 * a test that asked the product which forms to look for could not catch a form the product forgot.
 */

export type UpstreamName = 'macro' | 'company' | 'documents' | 'deals';

export const BASE_PATHS: Record<UpstreamName, string> = {
  macro: '/v2',
  company: '/v2/company',
  documents: '/news',
  deals: '/dw',
};

export interface VendorRequest {
  upstream: UpstreamName;
  method: string;
  /** Raw URL as received. */
  url: string;
  /** Path below the upstream's base path. */
  path: string;
  query: URLSearchParams;
  body: string;
  /** The credential it carried (`token` or `sessionId`), '' for none. */
  credential: string;
  /** The `Accept` header it carried, '' for none. */
  accept: string;
}

export interface VendorReply {
  status?: number;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer;
}

export type VendorScript = (req: VendorRequest, vendor: KeyEchoVendor) => VendorReply;

/** A key alphabet with `/`, `+`, `=` (base64's), plus a random part so runs never share secrets. */
export function slashyKey(prefix: string): string {
  const r = randomBytes(9).toString('base64').replace(/[/+=]/g, 'x');
  const key = `${prefix}/${r.slice(0, 6)}+${r.slice(6)}==${randomBytes(3).toString('hex')}`;
  recordSecret(key);
  return key;
}

/** Every form a vendor might echo a secret in (see the file comment). */
export function echoForms(secret: string): Record<string, string> {
  const uri = encodeURIComponent(secret);
  const json = JSON.stringify(secret).slice(1, -1);
  const b64 = Buffer.from(secret).toString('base64');
  return {
    literal: secret,
    urlUpper: uri,
    urlLower: uri.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
    form: new URLSearchParams({ k: secret }).toString().slice(2),
    pythonQuote: uri.replace(/%2F/g, '/'),
    phpJson: json.replace(/\//g, '\\/'),
    jsonUnicode: secret.replace(
      /[^A-Za-z0-9]/g,
      (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'),
    ),
    base64: b64,
    base64url: Buffer.from(secret).toString('base64url'),
    // Inside a larger base64 value (an echoed Basic header): the secret's bytes at offset 5.
    basicHeader: Buffer.from(`user:${secret}`).toString('base64'),
  };
}

/** The parts of a form that must never reach a consumer (inner base64 cores are the secret's own bytes). */
function needles(secret: string): string[] {
  const forms = echoForms(secret);
  const out = new Set(Object.values(forms));
  out.delete(forms.basicHeader);
  // The characters of `base64("user:" + secret)` fully determined by the secret's bytes (offset 5 ≡ 2 mod 3).
  const full = forms.basicHeader;
  const keep = Math.floor(((5 + Buffer.byteLength(secret)) * 8) / 6);
  out.add(full.slice(Math.ceil((5 * 8) / 6), keep));
  return [...out];
}

/** Every form of every secret found in `text`: `[secretIndex:formName]` descriptions (empty = clean). */
export function findForms(text: string, secrets: readonly string[]): string[] {
  const found: string[] = [];
  secrets.forEach((s, i) => {
    for (const n of needles(s)) if (text.includes(n)) found.push(`secret#${i} as ${JSON.stringify(n)}`);
  });
  return found;
}

export class KeyEchoVendor {
  readonly requests: VendorRequest[] = [];
  /** Session ids the next logins hand out (then random slashy ones). */
  readonly nextSessionIds: string[] = [];
  readonly issuedSessions: string[] = [];
  /** The session ids issued per upstream, oldest first. */
  readonly sessions: Record<UpstreamName, string[]> = { macro: [], company: [], documents: [], deals: [] };
  script: VendorScript = () => ({ status: 200, body: '{"data":[]}' });
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private port = 0;

  constructor(readonly passwords: Partial<Record<UpstreamName, string>> = {}) {}

  async start(): Promise<void> {
    const server = createServer((req, res) => void this.onRequest(req, res));
    server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  baseUrl(upstream: UpstreamName): string {
    return this.origin + BASE_PATHS[upstream];
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    await closed;
  }

  private upstreamOf(path: string): UpstreamName | undefined {
    // Longest base path first (`/v2/company` before `/v2`).
    const names = (Object.keys(BASE_PATHS) as UpstreamName[]).sort(
      (a, b) => BASE_PATHS[b].length - BASE_PATHS[a].length,
    );
    return names.find((n) => path === BASE_PATHS[n] || path.startsWith(BASE_PATHS[n] + '/'));
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString();
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const rawPath = q === -1 ? url : url.slice(0, q);
    const query = new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
    const upstream = this.upstreamOf(rawPath);
    if (!upstream) {
      res.writeHead(404).end();
      return;
    }
    const path = rawPath.slice(BASE_PATHS[upstream].length) || '/';
    if (path === '/Auth/login/' && req.method === 'POST') {
      const form = new URLSearchParams(body);
      if (form.get('password') !== this.passwords[upstream]) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ errors: [{ code: 2001, detail: 'Invalid username or password' }] }));
        return;
      }
      const id = this.nextSessionIds.shift() ?? slashyKey('sess');
      recordSecret(id);
      this.issuedSessions.push(id);
      this.sessions[upstream].push(id);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: { sessionId: id } }));
      return;
    }
    if (path === '/Auth/logout/') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":{"loggedOut":true}}');
      return;
    }
    const credential = query.get('sessionId') ?? query.get('token') ?? '';
    const accept = String(req.headers.accept ?? '');
    const r: VendorRequest = {
      upstream,
      method: req.method ?? 'GET',
      url,
      path,
      query,
      body,
      credential,
      accept,
    };
    this.requests.push(r);
    const reply = this.script(r, this);
    const headers: Record<string, string | string[]> = {
      'content-type': 'application/json; charset=utf-8',
      ...(reply.headers ?? {}),
    };
    const payload = reply.body ?? '';
    headers['content-length'] = String(Buffer.byteLength(payload));
    res.writeHead(reply.status ?? 200, headers);
    res.end(payload);
  }
}

export interface VendorKeys {
  macro: string;
  company: string;
  documentsPassword: string;
  dealsPassword: string;
}

/** Gateway env for the four upstreams on `vendor`: static keys for macro and company, the login step for EMIS. */
export function vendorEnv(vendor: KeyEchoVendor, keys: VendorKeys): Record<string, string> {
  return {
    UPSTREAM_MACRO_BASE_URL: vendor.baseUrl('macro'),
    UPSTREAM_MACRO_TOKEN: keys.macro,
    UPSTREAM_COMPANY_BASE_URL: vendor.baseUrl('company'),
    UPSTREAM_COMPANY_TOKEN: keys.company,
    UPSTREAM_DOCUMENTS_BASE_URL: vendor.baseUrl('documents'),
    UPSTREAM_DOCUMENTS_USERNAME: 'atrium',
    UPSTREAM_DOCUMENTS_PASSWORD: keys.documentsPassword,
    UPSTREAM_DEALS_BASE_URL: vendor.baseUrl('deals'),
    UPSTREAM_DEALS_USERNAME: 'atrium',
    UPSTREAM_DEALS_PASSWORD: keys.dealsPassword,
  };
}

/**
 * A streamed answer of `text`, sent in two chunks cut at `cut`, through the key-echo stage holding `key`:
 * the text a client reads.
 */
export async function streamedThroughKeyEcho(key: string, text: string, cut: number): Promise<string> {
  const stage = keyEchoStage({ secrets: () => [key], redact: (t) => t });
  const res = await stage(async () => ({
    status: 200,
    headers: {},
    body: Readable.from([Buffer.from(text.slice(0, cut)), Buffer.from(text.slice(cut))]),
  }))({} as ProxyRequest);
  const chunks: Buffer[] = [];
  for await (const c of res.body as Readable) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString();
}
