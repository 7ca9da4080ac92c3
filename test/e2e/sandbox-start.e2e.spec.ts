import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sandboxEnvFor } from '../../src/sandbox-env.js';
import type { GatewaySandbox as Sandbox } from '../../src/sandbox-env.js';
import { startSandbox } from '../../src/sandbox/start-sandbox.js';
import { UPSTREAMS } from '../../src/upstreams/index.js';
import { UPSTREAM_NAMES } from '../../src/upstreams/index.js';
import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { cleanEnv, http, spawnGateway } from '../helpers/gateway.js';

jest.setTimeout(60_000);

describe('npm start (node dist/main.js) as a newcomer runs it', () => {
  it('with an empty environment: the banner is the last output before the first request, and its key, console token and docs work', async () => {
    const gw = await spawnGateway(cleanEnv({ PORT: '0' }));
    try {
      const RULE = '-'.repeat(72);
      // The banner ends with a rule line; wait until it is all there.
      await eventually(() => gw.output().trimEnd().endsWith(RULE), { what: 'the banner' });
      const before = gw.output();
      const lines = before.trimEnd().split('\n');
      const start = lines.lastIndexOf(RULE, lines.length - 2);
      expect(start).toBeGreaterThanOrEqual(0);
      const banner = lines.slice(start).join('\n');
      // Nest's per-route boot lines stay quiet: at most a few lines come before the banner.
      expect(start).toBeLessThan(5);
      // The one warn line that says fakes are answering comes before the banner, never after it.
      expect(lines.slice(0, start).join('\n')).toContain('SANDBOX MODE');
      const key = /^Demo consumer key: (\S+)$/m.exec(banner)?.[1];
      const operator = /^Console operator token: (\S+)$/m.exec(banner)?.[1];
      expect(banner).toContain(`Atrium listening on ${gw.url}`);
      expect(banner).toMatch(/^Demo consumer id: demo /m);
      expect(banner).toContain(`Console: ${gw.url}/console`);
      expect(banner).toContain(`API docs: ${gw.url}/docs`);
      expect(banner).toMatch(/^ {2}curl .*\/macro\/series\/search\?keyword=GDP/m);
      expect(banner).toMatch(/^ {2}curl .*\/macro\/layout\/tables\/TB1207/m);
      expect(key).toMatch(/^atr_demo_/);
      expect(operator).toMatch(/^atr_op_/);

      const res = await http(`${gw.url}/macro/series/search?keyword=GDP&limit=3`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(res.status).toBe(200);
      expect(res.json().data.total).toBeGreaterThan(0);
      // Nothing but request lines was printed after the banner.
      await eventually(() => gw.output().length > before.length, { what: 'the request line' });
      for (const line of gw
        .output()
        .slice(before.length)
        .split('\n')
        .filter((l) => l !== ''))
        expect(line).toContain('"msg":"request"');

      const noKey = await http(`${gw.url}/macro/feeds`);
      expect(noKey.status).toBe(401);
      const consoleState = await http(`${gw.url}/console/api/state`, {
        headers: { 'x-operator-token': operator! },
      });
      expect(consoleState.status).toBe(200);
      expect((await http(`${gw.url}/console/api/state`)).status).toBe(401);
      expect((await http(`${gw.url}/docs`)).status).toBeLessThan(400);
      const ready = await http(`${gw.url}/health/ready`);
      expect(ready.json().sandbox).toBe(true);
    } finally {
      expect(await gw.stop()).toBe(0);
    }
  });

  it('a bad value stops the boot with a message naming the variable, never its value', async () => {
    const { spawnSync } = await import('node:child_process');
    const r = spawnSync(process.execPath, ['dist/main.js'], {
      cwd: join(__dirname, '../..'),
      env: cleanEnv({
        PORT: 'eighty',
        UPSTREAM_MACRO_BASE_URL: 'not a url',
        UPSTREAM_MACRO_TOKEN: 'sbx_secret_never_printed',
        ATRIUM_SANDBOX: 'off',
      }),
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(r.status).toBe(1);
    const text = r.stdout + r.stderr;
    expect(text).toContain('PORT');
    expect(text).toContain('UPSTREAM_MACRO_BASE_URL');
    expect(text).not.toContain('sbx_secret_never_printed');
    expect(text).not.toContain('eighty');
  });

  it('all four listed, one configured, a consumers file, ATRIUM_SANDBOX unset: the boot fails naming the missing interfaces, never fakes', async () => {
    const { spawnSync } = await import('node:child_process');
    const dir = mkdtempSync(join(tmpdir(), 'atrium-'));
    const file = join(dir, 'consumers.json');
    const app = testConsumer({ id: 'real-app' });
    writeFileSync(
      file,
      JSON.stringify({
        consumers: [
          { id: 'real-app', keyHashes: [app.consumer.keyHashes[0].toString('hex')], upstreams: ['company'] },
        ],
      }),
    );
    const r = spawnSync(process.execPath, ['dist/main.js'], {
      cwd: join(__dirname, '../..'),
      env: cleanEnv({
        PORT: '0',
        HOST: '127.0.0.1',
        ATRIUM_CONSUMERS_FILE: file,
        // Unset, the interfaces with a base URL would be served (test/e2e/some-interfaces.e2e.spec.ts).
        ATRIUM_UPSTREAMS: 'macro,company,documents,deals',
        UPSTREAM_MACRO_BASE_URL: 'http://127.0.0.1:9/v2',
        UPSTREAM_MACRO_TOKEN: 'sbx_macro_token_never_printed',
      }),
      encoding: 'utf8',
      timeout: 20_000,
    });
    const text = r.stdout + r.stderr;
    expect(text).not.toContain('SANDBOX MODE');
    expect(r.status).toBe(1);
    for (const name of ['COMPANY', 'DOCUMENTS', 'DEALS']) expect(text).toContain(`UPSTREAM_${name}_BASE_URL`);
    expect(text).not.toContain('UPSTREAM_MACRO_BASE_URL');
    expect(text).not.toContain('sbx_macro_token_never_printed');
  });

  it('ATRIUM_SANDBOX=on still serves fakes beside a consumers file (explicit choice)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'atrium-'));
    const file = join(dir, 'consumers.json');
    const app = testConsumer({ id: 'sbx-app' });
    writeFileSync(
      file,
      JSON.stringify({
        consumers: [
          { id: 'sbx-app', keyHashes: [app.consumer.keyHashes[0].toString('hex')], upstreams: ['company'] },
        ],
      }),
    );
    const gw = await spawnGateway(
      cleanEnv({ PORT: '0', HOST: '127.0.0.1', ATRIUM_SANDBOX: 'on', ATRIUM_CONSUMERS_FILE: file }),
    );
    try {
      const res = await http(`${gw.url}/company/dictionary/periods`, {
        headers: { authorization: `Bearer ${app.key}` },
      });
      expect(res.status).toBe(200);
      expect((await http(`${gw.url}/health/ready`)).json().sandbox).toBe(true);
    } finally {
      expect(await gw.stop()).toBe(0);
    }
  });

  describe('configured upstreams, debug logging', () => {
    let sandbox: Sandbox;
    beforeAll(async () => {
      sandbox = await startSandbox(UPSTREAMS);
    });
    afterAll(async () => sandbox?.close());

    it('no log line carries an upstream key or a consumer key, whatever happens', async () => {
      const app = testConsumer({ id: 'log-check' });
      const dir = mkdtempSync(join(tmpdir(), 'atrium-'));
      const file = join(dir, 'consumers.json');
      writeFileSync(
        file,
        JSON.stringify({
          consumers: [
            { id: 'log-check', keyHashes: [app.consumer.keyHashes[0].toString('hex')], upstreams: ['macro'] },
          ],
        }),
      );
      const c = sandbox.credentials;
      const gw = await spawnGateway(
        cleanEnv({
          PORT: '0',
          HOST: '127.0.0.1',
          LOG_LEVEL: 'trace',
          ATRIUM_SANDBOX: 'off',
          ATRIUM_CONSUMERS_FILE: file,
          ...sandboxEnvFor(sandbox, UPSTREAM_NAMES),
        }),
      );
      try {
        const h = { authorization: `Bearer ${app.key}` };
        expect((await http(`${gw.url}/macro/feeds?limit=1`, { headers: h })).status).toBe(200);
        sandbox.macro.behave({
          failWith: {
            status: 401,
            body: { errors: { status: 401, code: 'X', message: `key ${c.macro.token}` } },
            times: 1,
          },
        });
        expect((await http(`${gw.url}/macro/dictionary/units`, { headers: h })).status).toBe(502);
        sandbox.macro.behave({ failWith: { status: 500, times: 1 } });
        expect((await http(`${gw.url}/macro/dictionary/units`, { headers: h })).status).toBe(502);
        expect((await http(`${gw.url}/macro/feeds?limit=0&token=${app.key}`)).status).toBe(400);
        expect((await http(`${gw.url}/macro/feeds?token=wrong-key-123456`)).status).toBe(401);
      } finally {
        expect(await gw.stop()).toBe(0);
        sandbox.macro.reset();
      }
      const out = gw.output();
      expect(out.length).toBeGreaterThan(0);
      expect(out).toContain('SIGTERM');
      for (const secret of [c.macro.token, c.company.token, c.documents.password, c.deals.token, app.key])
        expect(out).not.toContain(secret);
    });

    it('SIGTERM drains in-flight requests before exiting', async () => {
      const app = testConsumer({ id: 'drain' });
      const dir = mkdtempSync(join(tmpdir(), 'atrium-'));
      const file = join(dir, 'consumers.json');
      writeFileSync(
        file,
        JSON.stringify({
          consumers: [
            { id: 'drain', keyHashes: [app.consumer.keyHashes[0].toString('hex')], upstreams: ['macro'] },
          ],
        }),
      );
      const c = sandbox.credentials;
      const gw = await spawnGateway(
        cleanEnv({
          PORT: '0',
          HOST: '127.0.0.1',
          ATRIUM_SANDBOX: 'off',
          ATRIUM_CONSUMERS_FILE: file,
          UPSTREAM_MACRO_BASE_URL: sandbox.macro.url,
          UPSTREAM_MACRO_TOKEN: c.macro.token,
          UPSTREAM_COMPANY_BASE_URL: sandbox.company.url,
          UPSTREAM_COMPANY_TOKEN: c.company.token,
          UPSTREAM_DOCUMENTS_BASE_URL: sandbox.documents.url,
          UPSTREAM_DOCUMENTS_TOKEN: c.documents.token,
          UPSTREAM_DEALS_BASE_URL: sandbox.deals.url,
          UPSTREAM_DEALS_TOKEN: c.deals.token,
        }),
      );
      sandbox.macro.behave({ latencyMs: 800 });
      try {
        const seen = sandbox.macro.requests.length;
        const inFlight = http(`${gw.url}/macro/dictionary/units`, {
          headers: { authorization: `Bearer ${app.key}` },
        });
        // Stop once the request is in flight: the fake has it and holds its answer for 800 ms.
        await eventually(
          () => sandbox.macro.requests.slice(seen).some((r) => r.path.endsWith('/dictionary/units')),
          { what: 'the request to reach the upstream' },
        );
        const exited = gw.stop();
        const res = await inFlight;
        expect(res.status).toBe(200);
        const code = await exited;
        if (code !== 0)
          console.log(
            gw
              .output()
              .split('\n')
              .filter((l) => /shutdown|rror|SIGTERM/.test(l))
              .join('\n'),
          );
        expect(code).toBe(0);
      } finally {
        sandbox.macro.reset();
      }
    });
  });
});
