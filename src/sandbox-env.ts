import { ConfigError } from './config/atrium-config.js';
import type { Sandbox } from './sandbox/start-sandbox.js';
import { UPSTREAMS } from './upstreams/index.js';
import type { UpstreamDeclaration } from './upstreams/upstream-declaration.js';

/** The sandbox of every upstream of the index, each fake of its own class. */
export type GatewaySandbox = Sandbox<typeof UPSTREAMS>;

/** `UPSTREAM_<NAME>_*` pointing an upstream at its built-in fake, with the credential its declaration asks. */
export function sandboxEnv(
  sandbox: Sandbox,
  name: string,
  upstreams: readonly UpstreamDeclaration[] = UPSTREAMS,
): Record<string, string | undefined> {
  const p = `UPSTREAM_${name.toUpperCase()}_`;
  const fake = (sandbox.fakes as Partial<Record<string, { url: string }>>)[name];
  const c = (sandbox.credentials as Partial<Record<string, Sandbox['credentials'][string]>>)[name];
  if (!fake || !c)
    throw new ConfigError(`Invalid configuration: ${p}BASE_URL (the sandbox has no fake for ${name})`);
  const login = upstreams.find((u) => u.name === name)?.sandbox?.credentials === 'login';
  // Whatever the operator set for a sandboxed upstream goes: the fake takes only its own credential.
  return {
    [p + 'BASE_URL']: fake.url,
    [p + 'TOKEN']: login ? undefined : c.token,
    [p + 'USERNAME']: login ? c.username : undefined,
    [p + 'PASSWORD']: login ? c.password : undefined,
    [p + 'TOKEN_FILE']: undefined,
    [p + 'USERNAME_FILE']: undefined,
    [p + 'PASSWORD_FILE']: undefined,
  };
}

/** The environment that points every upstream of `names` at its built-in fake (main.ts, tests). */
export function sandboxEnvFor(
  sandbox: Sandbox,
  names: readonly string[],
  upstreams: readonly UpstreamDeclaration[] = UPSTREAMS,
): Record<string, string | undefined> {
  return Object.assign({}, ...names.map((n) => sandboxEnv(sandbox, n, upstreams))) as Record<
    string,
    string | undefined
  >;
}
