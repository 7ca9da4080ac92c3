import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { http, withGateway, writeConsumersFile } from '../helpers/gateway.js';

const TOKEN = 'sbx_macro_consumers_file_51ad';
const OPERATOR = 'operator-token-consumers-file-8e02';

describe('without Redis the consumers file is the source of truth (one gateway process)', () => {
  const first = testConsumer({ id: 'first-app', upstreams: new Set(['macro']) });
  const second = testConsumer({ id: 'second-app', upstreams: new Set(['macro']) });
  const fake = new FakeMacroUpstream({ token: TOKEN });
  // The test's own file (withGateway's env overrides the one it would write), rewritten as an operator would.
  const dir = mkdtempSync(join(tmpdir(), 'atrium-consumers-'));
  const path = writeConsumersFile(dir, [first.consumer]);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const gw = withGateway({
    mode: 'process',
    upstreams: { macro: { fake, token: TOKEN } },
    env: { ATRIUM_OPERATOR_TOKEN: OPERATOR, ATRIUM_CONSUMERS_FILE: path },
    spawnTimeoutMs: 40_000,
    hookTimeoutMs: 60_000,
  });
  let n = 0;
  const call = (key: string) => gw.request(`/macro/series/${++n}`, key);
  const output = () => gw.processes[0].output();

  it('an invalid file is refused with a clear log line; the consumers in force stay', async () => {
    writeFileSync(path, '{"consumers": [ {"id": "broken"');
    await eventually(() => /consumers file refused \(file changed\): .*not valid JSON/.test(output()), {
      what: 'the refusal in the log',
    });
    expect((await call(first.key)).status).toBe(200);
    writeFileSync(
      path,
      JSON.stringify({ consumers: [{ id: 'x', keyHashes: ['00'], upstreams: ['macro'] }] }),
    );
    await eventually(
      () => /consumers file refused .*keyHashes\[0\]: must be a SHA-256 hex digest/.test(output()),
      {
        what: 'the validation refusal in the log',
      },
    );
    expect((await call(first.key)).status).toBe(200);
  });

  it('a valid change of the file is in force without a restart (and a SIGHUP re-reads it)', async () => {
    writeConsumersFile(dir, [first.consumer, second.consumer]);
    await eventually(async () => (await call(second.key)).status === 200, { what: 'the added consumer' });
    // The log reaches stdout asynchronously (within 50 ms): wait for the line, not just the effect.
    await eventually(
      () => /consumers file reloaded \(file changed\): 2 consumer\(s\); added \[second-app\]/.test(output()),
      { what: 'the reload in the log' },
    );
    writeConsumersFile(dir, [second.consumer]);
    await eventually(async () => (await call(first.key)).status === 401, {
      what: 'the removed consumer refused',
    });
    gw.processes[0].child.kill('SIGHUP');
    await eventually(() => /consumers file reloaded \(SIGHUP\)/.test(output()), {
      what: 'the SIGHUP reload',
    });
    expect((await call(second.key)).status).toBe(200);
  });

  it('the admin API reads consumers but refuses changes (409): the file is the source of truth', async () => {
    const headers = { authorization: `Bearer ${OPERATOR}`, 'content-type': 'application/json' };
    const list = (await http(`${gw.url}/admin/consumers`, { headers })).json();
    expect(list).toMatchObject({ source: 'file', writable: false });
    expect(list.consumers.map((c: { id: string }) => c.id)).toEqual(['second-app']);
    const res = await http(`${gw.url}/admin/consumers`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ id: 'new-app', upstreams: ['macro'] }),
    });
    expect(res.status).toBe(409);
    expect(res.json().error).toMatchObject({ code: 'CONFLICT' });
    expect(res.json().error.message).toContain('ATRIUM_CONSUMERS_FILE');
  });
});
