import { ConfigError } from './config/atrium-config.js';
import type { Sandbox, SandboxUpstreamName } from './sandbox/start-sandbox.js';
import { UPSTREAMS } from './upstreams/index.js';

/** `UPSTREAM_<NAME>_*` pointing an upstream at its built-in fake, with the credential its declaration asks. */
export function sandboxEnv(sandbox: Sandbox, name: string): Record<string, string | undefined> {
  const p = `UPSTREAM_${name.toUpperCase()}_`;
  const fake = (sandbox as unknown as Partial<Record<string, { url: string }>>)[name];
  if (!fake)
    throw new ConfigError(`Invalid configuration: ${p}BASE_URL (the sandbox has no fake for ${name})`);
  const c = sandbox.credentials[name as SandboxUpstreamName] as Partial<Record<string, string>>;
  const login = UPSTREAMS.find((u) => u.name === name)?.sandboxCredentials === 'login';
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
): Record<string, string | undefined> {
  return Object.assign({}, ...names.map((n) => sandboxEnv(sandbox, n))) as Record<string, string | undefined>;
}
