import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parseConsumer } from '../../src/core/auth/consumer-record.js';
import { keygen } from '../../src/keygen.js';
import { sandboxEnvFor } from '../../src/sandbox-env.js';
import { sandboxKey } from '../../src/sandbox/demo-consumer.js';
import { runFakeCli } from '../../src/sandbox/fake-cli.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/start-sandbox.js';
import { UPSTREAM_NAMES, UPSTREAMS } from '../../src/upstreams/index.js';
import { FakeTendersUpstream } from '../fixtures/fifth-upstream/fake-tenders.upstream.js';
import { tendersUpstream } from '../fixtures/fifth-upstream/tenders.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { http, startGateway, type GatewayHandle } from '../helpers/gateway.js';
import { recordSecret } from '../observability/log-capture.js';

// A fifth upstream is its folder (test/fixtures/fifth-upstream: route table, credentials, error shape, sandbox
// fake) and one entry in the list the gateway is built from: the production list is src/upstreams/index.ts,
// here the index plus the fixture. Routes, docs, the sandbox, the console and keygen all follow the list.

const upstreams = [...UPSTREAMS, tendersUpstream] as const;
const names = upstreams.map((u) => u.name);

describe('an upstream declared as one folder', () => {
  const reader = testConsumer({ id: 'tenders-reader', upstreams: new Set(['tenders']) });
  // Allowed every upstream of the index, which does not list the fixture.
  const other = testConsumer({ id: 'index-reader' });
  const operator = sandboxKey('op');
  recordSecret(operator);
  let sandbox: Sandbox<typeof upstreams>;
  let gw: GatewayHandle;

  beforeAll(async () => {
    sandbox = await startSandbox(upstreams);
    gw = await startGateway({
      env: { ...sandboxEnvFor(sandbox, names, upstreams), ATRIUM_OPERATOR_TOKEN: operator },
      consumers: [reader.consumer, other.consumer],
      sandboxed: names,
      upstreams,
    });
  });
  afterAll(async () => {
    await gw?.close();
    await sandbox?.close();
  });
  beforeEach(() => sandbox.tenders.reset());

  const get = (path: string, key = reader.key) =>
    http(gw.url + path, { headers: { authorization: `Bearer ${key}` } });

  it('is started by the sandbox beside the fakes of the index, with a fresh key of its own', () => {
    expect(Object.keys(sandbox.fakes)).toEqual([...UPSTREAM_NAMES, 'tenders']);
    expect(sandbox.tenders).toBeInstanceOf(FakeTendersUpstream);
    expect(sandbox.tenders.listening).toBe(true);
    expect(sandbox.credentials.tenders).toEqual({ token: expect.stringMatching(/^sbx_tenders_/) });
  });

  it('serves its routes: the fake receives the call with the vendor key, never the consumer key', async () => {
    const res = await get('/tenders/notices/N-2');
    expect(res.status).toBe(200);
    expect(res.json()).toEqual({ notice: { id: 'N-2', title: 'School meals', buyer: 'Kraków district' } });
    const seen = sandbox.tenders.requests;
    expect(seen.map((r) => r.path)).toEqual(['/api/v1/notices/N-2']);
    expect(seen[0].query).toContainEqual(['apikey', sandbox.credentials.tenders.token]);
    expect(seen[0].url).not.toContain(reader.key);
    expect(seen[0].headers.authorization).toBeUndefined();
  });

  it('answers in the envelope with its own error shape, and keeps consumers to their permission', async () => {
    const missing = await get('/tenders/notices/N-9');
    expect(missing.status).toBe(404);
    const body = missing.json();
    // The gateway's message names the service by the declaration's title and quotes the vendor's words.
    expect(body.error.message).toBe(
      'The public tenders service does not know the requested entity. (no notice N-9)',
    );
    expect(body.fault).toEqual({ code: 'NOTICE_UNKNOWN', text: body.error.message });
    expect(sandbox.tenders.requests.map((r) => r.path)).toEqual(['/api/v1/notices/N-9']);

    const refused = await get('/tenders/notices', other.key);
    expect(refused.status).toBe(403);
    expect(refused.json()).toMatchObject({ fault: { code: refused.json().error.code } });
    expect(sandbox.tenders.requests.map((r) => r.path)).toEqual(['/api/v1/notices/N-9']);
  });

  it('documents its operations in the OpenAPI document', async () => {
    const doc = (await http(`${gw.url}/docs/json`)).json();
    expect(doc.tags.map((t: { name: string }) => t.name)).toContain('tenders');
    expect(doc.paths['/tenders/notices'].get).toMatchObject({ operationId: 'tenders.notices.list' });
    expect(doc.paths['/tenders/notices/{notice_id}'].get).toMatchObject({
      operationId: 'tenders.notices.get',
      tags: ['tenders'],
    });
  });

  it('is shown in the operator console, sandboxed and registered', async () => {
    await get('/tenders/notices');
    const state = await http(`${gw.url}/console/api/state`, { headers: { 'x-operator-token': operator } });
    expect(state.status).toBe(200);
    const shown = (state.json().upstreams as Array<{ name: string }>).map((u) => u.name);
    expect(shown).toEqual(names);
    expect(state.json().upstreams.find((u: { name: string }) => u.name === 'tenders')).toMatchObject({
      title: 'the public tenders service',
      registered: true,
      sandbox: true,
    });
  });

  it('is a permission keygen grants when the list holds it, and the consumers file accepts', () => {
    const r = keygen(['tenders-app', '--upstreams', 'tenders', '--json'], names);
    expect(r.status).toBe(0);
    const { key, entry } = JSON.parse(r.stdout);
    recordSecret(key);
    expect([...parseConsumer(entry, 0, names).upstreams]).toEqual(['tenders']);
    // The index alone does not hold it.
    expect(keygen(['x', '--upstreams', 'tenders'], UPSTREAM_NAMES)).toMatchObject({ status: 2, stdout: '' });
  });

  it('npm run keygen reads the list from the built index', () => {
    const script = join(__dirname, '../../scripts/keygen.mjs');
    const r = spawnSync(process.execPath, [script, 'x', '--upstreams', 'tenders'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(`keygen: --upstreams: a comma-separated list of ${UPSTREAM_NAMES.join(', ')}\n`);
  });

  it('runs alone in the fake CLI by its name', async () => {
    const lines: string[] = [];
    const running = await runFakeCli(upstreams, ['--kind', 'tenders', '--token', 'sbx_tenders_cli'], (l) =>
      lines.push(l),
    );
    try {
      const info = JSON.parse(lines[0]);
      expect(info).toMatchObject({ kind: 'tenders', credentials: { token: 'sbx_tenders_cli' } });
      expect((await http(`${info.url}/notices?apikey=sbx_tenders_cli`)).json().notices).toHaveLength(2);
    } finally {
      await running.close();
    }
  });
});
