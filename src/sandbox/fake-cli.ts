// The logic of `node dist/fake-upstream.main.js`: runs one fake (or every one) and reports where it
// listens as one JSON line, so fleet tests and benchmarks can drive fakes in separate processes.
import { parseArgs } from 'node:util';
import { type SandboxUpstreams, startSandbox } from './start-sandbox.js';

export interface RunningFakes {
  /** The JSON object printed on stdout. */
  info: Record<string, unknown>;
  close(): Promise<void>;
}

/** The usage line, naming the kinds `upstreams` declares. */
export function cliUsage(upstreams: SandboxUpstreams): string {
  const names = upstreams.map((u) => u.name);
  return (
    `usage: fake-upstream.main.js --kind ${[...names, 'all'].join('|')} [--port N] [--host H] ` +
    '[--token T] [--username U --password P] [--session-ttl-ms MS] [--error-status http200|http4xx]\n' +
    `  with --kind all, --port N gives ${names.map((n, i) => `${n} N${i ? `+${i}` : ''}`).join(', ')} (0 = random ports)`
  );
}

/**
 * Starts the fakes named by `args`, among those of `upstreams`, and writes one JSON line through `print`
 * once they listen: `{"kind","url","controlUrl","credentials"}` for one kind, or
 * `{"kind":"all","urls":{…},"controlUrls":{…},"credentials":{…}}` for every one.
 */
export async function runFakeCli(
  upstreams: SandboxUpstreams,
  args: readonly string[],
  print: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Promise<RunningFakes> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      kind: { type: 'string' },
      port: { type: 'string', default: '0' },
      host: { type: 'string', default: '127.0.0.1' },
      token: { type: 'string' },
      username: { type: 'string' },
      password: { type: 'string' },
      'session-ttl-ms': { type: 'string' },
      'error-status': { type: 'string' },
    },
    strict: true,
  });
  const names = upstreams.map((u) => u.name);
  const usage = cliUsage(upstreams);
  const kind = values.kind ?? '';
  if (kind !== 'all' && !names.includes(kind))
    throw new Error(`--kind must be one of ${names.join(', ')}, all\n${usage}`);
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`--port must be a port number\n${usage}`);
  const ttl = values['session-ttl-ms'] === undefined ? undefined : Number(values['session-ttl-ms']);
  if (ttl !== undefined && !(ttl > 0)) throw new Error('--session-ttl-ms must be a positive number');
  const errorStatus = values['error-status'];
  if (errorStatus !== undefined && errorStatus !== 'http200' && errorStatus !== 'http4xx') {
    throw new Error('--error-status must be http200 or http4xx');
  }

  const kinds = kind === 'all' ? names : [kind];
  const fixed = { token: values.token, username: values.username, password: values.password };
  const sandbox = await startSandbox(
    upstreams.filter((u) => kinds.includes(u.name)),
    {
      host: values.host,
      ports: Object.fromEntries(kinds.map((k, i) => [k, port === 0 ? 0 : port + i])),
      credentials: Object.fromEntries(kinds.map((k) => [k, fixed])),
      fakeOptions: { sessionTtlMs: ttl, errorStatus },
    },
  );

  let info: Record<string, unknown>;
  if (kind === 'all') {
    info = {
      kind,
      urls: Object.fromEntries(kinds.map((k) => [k, sandbox.fakes[k].url])),
      controlUrls: Object.fromEntries(kinds.map((k) => [k, sandbox.fakes[k].controlUrl])),
      credentials: sandbox.credentials,
    };
  } else {
    info = {
      kind,
      url: sandbox.fakes[kind].url,
      controlUrl: sandbox.fakes[kind].controlUrl,
      credentials: sandbox.credentials[kind],
    };
  }
  print(JSON.stringify(info));
  return { info, close: () => sandbox.close() };
}
