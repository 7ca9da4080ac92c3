// Starts the fakes of the upstreams it is given on loopback with fresh random credentials: what `npm start`
// uses in sandbox mode and what end-to-end tests point the gateway at. Each upstream's declaration names
// its fake (`sandbox.fake`); the caller passes the list (src/upstreams/index.ts), since the sandbox sits
// below the upstreams that load it.
import { randomBytes } from 'node:crypto';
import type {
  SandboxFake,
  SandboxFakeOptions,
  SandboxSecrets,
  UpstreamDeclaration,
} from '../upstreams/upstream-declaration.js';

/** Upstream declarations as the sandbox reads them. */
export type SandboxUpstreams = readonly UpstreamDeclaration<string, SandboxFake>[];

type FakeOf<D> = D extends UpstreamDeclaration<string, infer F> ? F : never;

/**
 * The fakes by upstream name, each of its own class (`macro` is a `FakeMacroUpstream`); none by name when
 * the names are not known to the type checker.
 */
export type SandboxFakes<U extends SandboxUpstreams> = string extends U[number]['name']
  ? unknown
  : { [D in U[number] as D['name']]: FakeOf<D> };

export type SandboxCredentials<Name extends string = string> = Record<Name, SandboxSecrets>;

export type Sandbox<U extends SandboxUpstreams = SandboxUpstreams> = SandboxFakes<U> & {
  /** The same fakes, for code that walks them by name. */
  readonly fakes: Record<U[number]['name'], SandboxFake>;
  readonly credentials: SandboxCredentials<U[number]['name']>;
  close(): Promise<void>;
};

export interface SandboxOptions {
  host?: string;
  /** By upstream name; 0 or absent: a free port. */
  ports?: Partial<Record<string, number>>;
  /** Fixed credentials instead of random ones (the CLI's --token/--username/--password). */
  credentials?: Partial<Record<string, Partial<SandboxSecrets>>>;
  /** Passed to every fake (session lifetime and error statuses of a login step). */
  fakeOptions?: SandboxFakeOptions;
}

/** Names the sandbox object keeps for itself: an upstream may not be called so. */
const OWN_FIELDS = new Set(['fakes', 'credentials', 'close']);

/** A sandbox secret: recognisably fake (`sbx_` prefix), yet random per start. */
export function sandboxSecret(label: string): string {
  return `sbx_${label}_${randomBytes(18).toString('base64url')}`;
}

/**
 * A fresh key per upstream; upstreams with a login step (`token-or-login`) share one account, as one
 * vendor's APIs accept the same login.
 */
export function sandboxCredentials<Name extends string>(
  upstreams: readonly UpstreamDeclaration<Name, SandboxFake>[],
  fixed: SandboxOptions['credentials'] = {},
): SandboxCredentials<Name> {
  const username = `sbx_user_${randomBytes(4).toString('hex')}`;
  const password = sandboxSecret('pw');
  return Object.fromEntries(
    upstreams.map(({ name, config }) => {
      const f = fixed[name] ?? {};
      const token = f.token ?? sandboxSecret(name);
      const secrets: SandboxSecrets =
        config.credentials === 'token-or-login'
          ? { token, username: f.username ?? username, password: f.password ?? password }
          : { token };
      return [name, secrets];
    }),
  ) as SandboxCredentials<Name>;
}

/** Starts the fake of every upstream in `upstreams` (each must declare one). */
export async function startSandbox<const U extends SandboxUpstreams>(
  upstreams: U,
  opts: SandboxOptions = {},
): Promise<Sandbox<U>> {
  const host = opts.host ?? '127.0.0.1';
  for (const d of upstreams) {
    if (!d.sandbox) throw new Error(`upstream ${d.name} declares no sandbox fake`);
    if (OWN_FIELDS.has(d.name)) throw new Error(`upstream ${d.name}: a name the sandbox keeps for itself`);
  }
  const credentials = sandboxCredentials(upstreams, opts.credentials);
  const builders = await Promise.all(upstreams.map((d) => d.sandbox!.fake()));
  const fakes: Record<string, SandboxFake> = {};
  upstreams.forEach((d, i) => {
    fakes[d.name] = builders[i](credentials[d.name as U[number]['name']], opts.fakeOptions ?? {});
  });
  const close = async (): Promise<void> => {
    await Promise.all(Object.values(fakes).map((f) => f.close()));
  };
  try {
    await Promise.all(upstreams.map((d) => fakes[d.name].start(opts.ports?.[d.name] ?? 0, host)));
  } catch (err) {
    await close();
    throw err;
  }
  return { ...fakes, fakes, credentials, close } as unknown as Sandbox<U>;
}
