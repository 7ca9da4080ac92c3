import { ConfigError, loadConfig, type UpstreamConfigSpec } from '../../src/config/atrium-config.js';
import { SecretRedactor } from '../../src/core/logging/secret-redactor.js';
import { UPSTREAM_NAMES, UPSTREAMS } from '../../src/upstreams/index.js';
import { documentsUpstream } from '../../src/upstreams/documents/documents.upstream.js';
import { macroUpstream } from '../../src/upstreams/macro/macro.upstream.js';
import { EmisSessionCredentials } from '../../src/upstreams/shared/emis-session.credentials.js';
import { upstreamDefinitionOf } from '../../src/upstreams/upstream-declaration.js';

// Issue 14 item 4: each upstream is declared as data, and what a config rule needs (may a login step stand in
// for the token?) is declared by the upstream, not spelled in the config loader.

const URLS = Object.fromEntries(
  UPSTREAM_NAMES.map((n) => [`UPSTREAM_${n.toUpperCase()}_BASE_URL`, 'http://127.0.0.1:9']),
);
const TOKENS = Object.fromEntries(
  UPSTREAM_NAMES.map((n) => [`UPSTREAM_${n.toUpperCase()}_TOKEN`, `sbx_${n}_declared_token`]),
);

function problemOf(
  env: Record<string, string>,
  upstreams: readonly UpstreamConfigSpec[] = UPSTREAMS,
): string {
  try {
    loadConfig(env, upstreams);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error('the configuration loaded');
}

describe('upstream declarations', () => {
  it('name four interfaces once each, and no two claim a path prefix', () => {
    expect(UPSTREAM_NAMES).toEqual(['macro', 'company', 'documents', 'deals']);
    const prefixes = UPSTREAMS.flatMap((u) => u.prefixes);
    expect(new Set(prefixes).size).toBe(prefixes.length);
    for (const u of UPSTREAMS) for (const r of u.routes) expect(r.id.startsWith(`${u.name}.`)).toBe(true);
  });

  it('boot without credentials names every missing variable, the login alternative where one is declared', () => {
    expect(problemOf(URLS)).toBe(
      'Invalid configuration: UPSTREAM_MACRO_TOKEN, UPSTREAM_COMPANY_TOKEN, ' +
        'UPSTREAM_DOCUMENTS_TOKEN (or UPSTREAM_DOCUMENTS_USERNAME and UPSTREAM_DOCUMENTS_PASSWORD), ' +
        'UPSTREAM_DEALS_TOKEN (or UPSTREAM_DEALS_USERNAME and UPSTREAM_DEALS_PASSWORD)',
    );
  });

  it('a username and password stand in for the token only where the upstream declares a login step', () => {
    const login = (name: string) => ({
      [`UPSTREAM_${name}_USERNAME`]: 'sbx_user',
      [`UPSTREAM_${name}_PASSWORD`]: 'sbx_password_declared',
    });
    const withoutToken = (name: string) =>
      Object.fromEntries(Object.entries(TOKENS).filter(([k]) => k !== `UPSTREAM_${name}_TOKEN`));
    const documents = loadConfig({ ...URLS, ...withoutToken('DOCUMENTS'), ...login('DOCUMENTS') }, UPSTREAMS);
    expect(documents.upstreams.documents).toMatchObject({ username: 'sbx_user', token: undefined });
    expect(problemOf({ ...URLS, ...withoutToken('MACRO'), ...login('MACRO') })).toBe(
      'Invalid configuration: UPSTREAM_MACRO_TOKEN',
    );
    // The rule follows the declaration, whatever the name.
    const env = { UPSTREAM_LABS_BASE_URL: 'http://127.0.0.1:9', ...login('LABS') };
    expect(problemOf(env, [{ name: 'labs', config: { credentials: 'token' } }])).toBe(
      'Invalid configuration: UPSTREAM_LABS_TOKEN',
    );
    const labs = loadConfig(env, [{ name: 'labs', config: { credentials: 'token-or-login' } }]);
    expect(Object.keys(labs.upstreams)).toEqual(['labs']);
  });

  it('build the proxy definition: one transport block, and readiness facts only where a session exists', () => {
    const redactor = new SecretRedactor();
    const config = loadConfig(
      {
        ...URLS,
        ...TOKENS,
        UPSTREAM_DOCUMENTS_USERNAME: 'sbx_user',
        UPSTREAM_DOCUMENTS_PASSWORD: 'sbx_password_declared',
        UPSTREAM_MACRO_TIMEOUT_MS: '4321',
      },
      UPSTREAMS,
    );
    const macro = upstreamDefinitionOf(macroUpstream, config, { redactor });
    expect(macro.transport).toMatchObject({ headersTimeoutMs: 4321, bodyTimeoutMs: 4321 });
    expect(macro.readinessFacts).toBeUndefined();
    const documents = upstreamDefinitionOf(documentsUpstream, config, { redactor });
    expect(documents.credentials).toBeInstanceOf(EmisSessionCredentials);
    expect(documents.readinessFacts?.()).toEqual({
      session: expect.objectContaining({ state: 'none', logins: 0 }),
    });
    const deals = upstreamDefinitionOf(UPSTREAMS[3], config, { redactor });
    expect(deals.readinessFacts?.()).toEqual({});
  });
});
