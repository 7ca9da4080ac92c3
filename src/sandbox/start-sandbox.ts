// Starts the four fake upstreams on loopback with fresh random credentials: what `npm start` uses in
// sandbox mode and what end-to-end tests point the gateway at.
import { randomBytes } from 'node:crypto';
import { FakeCompanyUpstream } from './company/fake-company.upstream.js';
import { FakeDealsUpstream } from './deals/fake-deals.upstream.js';
import { FakeDocumentsUpstream } from './documents/fake-documents.upstream.js';
import { FakeMacroUpstream } from './macro/fake-macro.upstream.js';

export type SandboxUpstreamName = 'macro' | 'company' | 'documents' | 'deals';

export interface SandboxCredentials {
  macro: { token: string };
  company: { token: string };
  documents: { token: string; username: string; password: string };
  /** DealWatch takes the portal key; its Auth/login accepts the same EMIS account as documents. */
  deals: { token: string; username: string; password: string };
}

export interface Sandbox {
  macro: FakeMacroUpstream;
  company: FakeCompanyUpstream;
  documents: FakeDocumentsUpstream;
  deals: FakeDealsUpstream;
  credentials: SandboxCredentials;
  close(): Promise<void>;
}

export interface SandboxOptions {
  host?: string;
  ports?: Partial<Record<SandboxUpstreamName, number>>;
  /** Fixed credentials instead of random ones (the CLI's --token/--username/--password). */
  credentials?: Partial<{ [K in SandboxUpstreamName]: Partial<SandboxCredentials[K]> }>;
  /** Options passed to the EMIS fakes. */
  documentsSessionTtlMs?: number;
  emisErrorStatus?: 'http200' | 'http4xx';
}

/** A sandbox secret: recognisably fake (`sbx_` prefix), yet random per start. */
export function sandboxSecret(label: string): string {
  return `sbx_${label}_${randomBytes(18).toString('base64url')}`;
}

export function sandboxCredentials(fixed: SandboxOptions['credentials'] = {}): SandboxCredentials {
  const username = fixed.documents?.username ?? `sbx_user_${randomBytes(4).toString('hex')}`;
  const password = fixed.documents?.password ?? sandboxSecret('pw');
  return {
    macro: { token: fixed.macro?.token ?? sandboxSecret('macro') },
    company: { token: fixed.company?.token ?? sandboxSecret('company') },
    documents: { token: fixed.documents?.token ?? sandboxSecret('emis'), username, password },
    deals: {
      token: fixed.deals?.token ?? sandboxSecret('dw'),
      username: fixed.deals?.username ?? username,
      password: fixed.deals?.password ?? password,
    },
  };
}

export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  const host = opts.host ?? '127.0.0.1';
  const credentials = sandboxCredentials(opts.credentials);
  const emis = { sessionTtlMs: opts.documentsSessionTtlMs, errorStatus: opts.emisErrorStatus };
  const macro = new FakeMacroUpstream({ token: credentials.macro.token });
  const company = new FakeCompanyUpstream({ token: credentials.company.token });
  const documents = new FakeDocumentsUpstream({ ...credentials.documents, ...emis });
  const deals = new FakeDealsUpstream({ ...credentials.deals, ...emis });
  const all = [macro, company, documents, deals];
  const close = async (): Promise<void> => {
    await Promise.all(all.map((f) => f.close()));
  };
  try {
    await Promise.all([
      macro.start(opts.ports?.macro ?? 0, host),
      company.start(opts.ports?.company ?? 0, host),
      documents.start(opts.ports?.documents ?? 0, host),
      deals.start(opts.ports?.deals ?? 0, host),
    ]);
  } catch (err) {
    await close();
    throw err;
  }
  return { macro, company, documents, deals, credentials, close };
}
