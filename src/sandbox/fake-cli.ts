// The logic of `node dist/sandbox/fake-upstream.main.js`: runs one fake (or all four) and reports where
// it listens as one JSON line, so fleet tests and benchmarks can drive fakes in separate processes.
import { parseArgs } from 'node:util';
import { type SandboxUpstreamName, startSandbox } from './start-sandbox.js';

export const FAKE_KINDS: readonly SandboxUpstreamName[] = ['macro', 'company', 'documents', 'deals'];

export interface RunningFakes {
  /** The JSON object printed on stdout. */
  info: Record<string, unknown>;
  close(): Promise<void>;
}

export const CLI_USAGE =
  'usage: fake-upstream.main.js --kind macro|company|documents|deals|all [--port N] [--host H] ' +
  '[--token T] [--username U --password P] [--session-ttl-ms MS] [--error-status http200|http4xx]\n' +
  '  with --kind all, --port N gives macro N, company N+1, documents N+2, deals N+3 (0 = random ports)';

function isKind(value: string): value is SandboxUpstreamName {
  return (FAKE_KINDS as readonly string[]).includes(value);
}

/**
 * Starts the fakes named by `args` and writes one JSON line through `print` once they listen:
 * `{"kind","url","controlUrl","credentials"}` for one kind, or
 * `{"kind":"all","urls":{…},"controlUrls":{…},"credentials":{…}}` for all four.
 */
export async function runFakeCli(
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
  const kind = values.kind ?? '';
  if (kind !== 'all' && !isKind(kind))
    throw new Error(`--kind must be one of ${FAKE_KINDS.join(', ')}, all\n${CLI_USAGE}`);
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`--port must be a port number\n${CLI_USAGE}`);
  const ttl = values['session-ttl-ms'] === undefined ? undefined : Number(values['session-ttl-ms']);
  if (ttl !== undefined && !(ttl > 0)) throw new Error('--session-ttl-ms must be a positive number');
  const errorStatus = values['error-status'];
  if (errorStatus !== undefined && errorStatus !== 'http200' && errorStatus !== 'http4xx') {
    throw new Error('--error-status must be http200 or http4xx');
  }

  const kinds = kind === 'all' ? FAKE_KINDS : [kind];
  const token = values.token;
  const login = { username: values.username, password: values.password };
  // Ports of the kinds not asked for are irrelevant: those fakes are closed straight away.
  const ports = Object.fromEntries(
    FAKE_KINDS.map((k, i) => [k, port === 0 ? 0 : kind === 'all' ? port + i : port]),
  );
  const sandbox = await startSandbox({
    host: values.host,
    ports: Object.fromEntries(kinds.map((k) => [k, ports[k]])),
    credentials: {
      macro: { token },
      company: { token },
      documents: { token, ...login },
      deals: { token, ...login },
    },
    documentsSessionTtlMs: ttl,
    emisErrorStatus: errorStatus,
  });
  // startSandbox starts all four; a single-kind run keeps only the one asked for.
  await Promise.all(FAKE_KINDS.filter((k) => !kinds.includes(k)).map((k) => sandbox[k].close()));

  let info: Record<string, unknown>;
  if (kind === 'all') {
    info = {
      kind,
      urls: Object.fromEntries(FAKE_KINDS.map((k) => [k, sandbox[k].url])),
      controlUrls: Object.fromEntries(FAKE_KINDS.map((k) => [k, sandbox[k].controlUrl])),
      credentials: sandbox.credentials,
    };
  } else {
    const k = kind;
    info = {
      kind,
      url: sandbox[k].url,
      controlUrl: sandbox[k].controlUrl,
      credentials: sandbox.credentials[k],
    };
  }
  print(JSON.stringify(info));
  return { info, close: () => sandbox.close() };
}
