import { runFakeCli } from '../../src/sandbox/fake-cli.js';
import { startSandbox } from '../../src/sandbox/start-sandbox.js';
import { UPSTREAMS } from '../../src/upstreams/index.js';
import { call } from './http.js';

describe('startSandbox', () => {
  it('starts the four fakes with fresh sbx_ credentials that each fake accepts', async () => {
    const a = await startSandbox(UPSTREAMS);
    const b = await startSandbox(UPSTREAMS);
    try {
      const c = a.credentials;
      for (const secret of [
        c.macro.token,
        c.company.token,
        c.documents.token,
        c.documents.password,
        c.deals.token,
      ]) {
        expect(secret).toMatch(/^sbx_/);
      }
      expect(c.documents.username).toMatch(/^sbx_/);
      expect(b.credentials.macro.token).not.toBe(c.macro.token);
      expect(a.macro.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v2$/);
      expect(a.company.url).toMatch(/\/v2\/company$/);
      expect(a.documents.url).toMatch(/\/news$/);
      expect(a.deals.url).toMatch(/\/dw$/);

      expect((await call(`${a.macro.url}/feeds?limit=1&token=${c.macro.token}`)).json.data).toHaveLength(1);
      expect((await call(`${a.macro.url}/feeds?token=${b.credentials.macro.token}`)).status).toBe(401);
      expect((await call(`${a.company.url}/dictionary/countries?token=${c.company.token}`)).status).toBe(200);
      const login = await call(
        `${a.documents.url}/Auth/login/?username=${c.documents.username}&password=${encodeURIComponent(c.documents.password!)}`,
      );
      expect(typeof login.json.data.sessionId).toBe('string');
      const dw = await call(`${a.deals.url}/SearchDeal/getDeals/?limit=1&token=${c.deals.token}`);
      expect(dw.json.data.deals).toHaveLength(1);
    } finally {
      await a.close();
      await b.close();
    }
    expect([a.macro, a.company, a.documents, a.deals].map((f) => f.listening)).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });
});

describe('runFakeCli', () => {
  it('runs one fake and prints exactly one JSON line with its url and credentials', async () => {
    const lines: string[] = [];
    const running = await runFakeCli(UPSTREAMS, ['--kind', 'macro', '--token', 'sbx_fixed'], (l) =>
      lines.push(l),
    );
    try {
      expect(lines).toHaveLength(1);
      const info = JSON.parse(lines[0]);
      expect(info).toEqual({
        kind: 'macro',
        url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/v2$/),
        controlUrl: expect.stringMatching(/\/__fake$/),
        credentials: { token: 'sbx_fixed' },
      });
      expect((await call(`${info.url}/dictionary/units?token=sbx_fixed`)).status).toBe(200);
      await call(`${info.controlUrl}/behave`, {
        method: 'POST',
        body: '{"failWith":{"status":503,"times":1}}',
      });
      expect((await call(`${info.url}/dictionary/units?token=sbx_fixed`)).status).toBe(503);
      expect((await call(`${info.controlUrl}/calls`)).json).toEqual({ calls: 2 });
    } finally {
      await running.close();
    }
  });

  it('runs all four with --kind all', async () => {
    const lines: string[] = [];
    const running = await runFakeCli(
      UPSTREAMS,
      ['--kind', 'all', '--username', 'u', '--password', 'p'],
      (l) => lines.push(l),
    );
    try {
      const info = JSON.parse(lines[0]);
      expect(Object.keys(info.urls)).toEqual(['macro', 'company', 'documents', 'deals']);
      expect(info.credentials.documents).toMatchObject({ username: 'u', password: 'p' });
      const login = await call(`${info.urls.documents}/Auth/login/?username=u&password=p`);
      expect(typeof login.json.data.sessionId).toBe('string');
    } finally {
      await running.close();
    }
  });

  it('rejects bad arguments', async () => {
    await expect(runFakeCli(UPSTREAMS, ['--kind', 'weather'], () => undefined)).rejects.toThrow(/--kind/);
    await expect(runFakeCli(UPSTREAMS, ['--kind', 'macro', '--port', 'x'], () => undefined)).rejects.toThrow(
      /--port/,
    );
    await expect(runFakeCli(UPSTREAMS, ['--nope'], () => undefined)).rejects.toThrow();
  });
});
