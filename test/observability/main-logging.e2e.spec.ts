import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { eventually } from '../helpers/eventually.js';
import { assertBuilt, cleanEnv, http, spawnGateway } from '../helpers/gateway.js';
import { teeSpawnedOutput } from './log-capture.js';

jest.setTimeout(120_000);

// Generous: on a loaded 2-core machine a cold `node dist/main.js` can take well over the default 20 s.
const START_TIMEOUT_MS = 60_000;

/** node dist/main.js as operators run it: its stdout is the log. */
describe('main.ts logging', () => {
  it('logs JSON lines on stdout by default, one per request, through the pino logger Nest uses too', async () => {
    // LOG_LEVEL set: in the sandbox Nest's own boot lines are quiet unless it asks for them.
    const gw = await spawnGateway(
      cleanEnv({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'debug' }),
      START_TIMEOUT_MS,
    );
    try {
      const key = /Demo consumer key: (\S+)/.exec(gw.output())![1];
      const res = await http(`${gw.url}/macro/feeds?limit=1`, {
        headers: { authorization: `Bearer ${key}`, 'x-request-id': 'main-json-1' },
      });
      expect(res.status).toBe(200);
      // The request line is written after the answer: wait until it is on stdout before stopping.
      await eventually(() => gw.output().includes('main-json-1'), { what: 'the request log line' });
    } finally {
      expect(await gw.stop()).toBe(0);
    }
    const json = gw
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    // Nest's own boot lines go through the same pino logger (at debug: only what an operator reads is info).
    expect(json.some((l) => l.context === 'NestApplication' && l.level === 'debug')).toBe(true);
    expect(json.filter((l) => l.msg === 'request' && l.reqId === 'main-json-1')).toEqual([
      expect.objectContaining({ route: 'macro.feeds.list', consumer: 'demo', status: 200 }),
    ]);
  });

  it('pretty-prints only with NODE_ENV=development', async () => {
    const gw = await spawnGateway(
      cleanEnv({ PORT: '0', HOST: '127.0.0.1', NODE_ENV: 'development' }),
      START_TIMEOUT_MS,
    );
    try {
      const key = /Demo consumer key: (\S+)/.exec(gw.output())![1];
      await http(`${gw.url}/macro/feeds?limit=1`, {
        headers: { authorization: `Bearer ${key}`, 'x-request-id': 'main-pretty-1' },
      });
      // The request line is written after the answer: wait until it is on stdout before stopping.
      await eventually(() => gw.output().includes('main-pretty-1'), { what: 'the request log line' });
    } finally {
      expect(await gw.stop()).toBe(0);
    }
    const out = gw.output();
    expect(out).toMatch(/INFO.*request/);
    expect(out).toContain('main-pretty-1');
    expect(out.split('\n').some((l) => l.startsWith('{"level"'))).toBe(false);
  });

  it('still prints boot errors (a port already in use) and exits 1', async () => {
    assertBuilt();
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    try {
      const child = spawn(process.execPath, ['dist/main.js'], {
        cwd: join(__dirname, '../..'),
        env: cleanEnv({ PORT: String(port), HOST: '127.0.0.1' }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      teeSpawnedOutput('boot-error', child.stdout, child.stderr);
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const code = await new Promise<number | null>((r) => child.once('exit', r));
      expect(code).toBe(1);
      expect(out).toContain('EADDRINUSE');
    } finally {
      await new Promise((r) => blocker.close(r));
    }
  });
});
