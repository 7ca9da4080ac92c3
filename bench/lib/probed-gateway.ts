import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './options.js';
import { baseEnv, freePort } from './servers.js';

export interface ProbedGateway {
  child: ChildProcess;
  url: string;
  port: number;
  /** Where the gateway's stdout and stderr go. */
  logFile: string;
}

/**
 * The built gateway (`node dist/main.js`) as its own process with the soak probe loaded
 * (bench/soak-probe.ts: samples over IPC), sandbox off, one consumer without limits, its log in `dir`;
 * resolves once /health/live answers. The soak and the watch bench measure the process, so it is not
 * started in theirs.
 */
export async function startProbedGateway(o: {
  dir: string;
  consumer: { id: string; key: string; upstreams: readonly string[] };
  logLevel: string;
  /** The upstreams' settings and anything else the run needs. */
  env: NodeJS.ProcessEnv;
  /** Node flags beside the start command's (`--expose-gc` for settled samples). */
  nodeArgs?: readonly string[];
}): Promise<ProbedGateway> {
  const consumers = join(o.dir, 'consumers.json');
  writeFileSync(
    consumers,
    JSON.stringify({
      consumers: [
        {
          id: o.consumer.id,
          keyHashes: [createHash('sha256').update(o.consumer.key).digest('hex')],
          upstreams: [...o.consumer.upstreams],
          write: false,
          limits: [],
        },
      ],
    }),
  );
  const port = await freePort();
  const logFile = join(o.dir, 'gateway.log');
  const fd = openSync(logFile, 'a');
  const probe = pathToFileURL(join(ROOT, 'dist-bench/bench/soak-probe.js')).href;
  const child = spawn(
    process.execPath,
    ['--max-semi-space-size=4', ...(o.nodeArgs ?? []), '--import', probe, join(ROOT, 'dist/main.js')],
    {
      cwd: ROOT,
      env: {
        ...baseEnv(),
        ATRIUM_SOAK_PROBE: '1',
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: o.logLevel,
        ATRIUM_SANDBOX: 'off',
        ATRIUM_CONSUMERS_FILE: consumers,
        ...o.env,
      },
      stdio: ['ignore', fd, fd, 'ipc'],
    },
  );
  closeSync(fd);
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`the gateway exited while starting; see ${logFile}`);
    const up = await fetch(`${url}/health/live`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    if (i > 300) {
      child.kill('SIGKILL');
      throw new Error('the gateway did not start in 30 s');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, url, port, logFile };
}
