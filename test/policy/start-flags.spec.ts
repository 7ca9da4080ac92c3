// The gateway is started with V8's young generation capped (`--max-semi-space-size`): by package.json's start,
// the Dockerfile and the helpers that spawn the built gateway, so tests and benches run what operators run.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const FLAG = /--max-semi-space-size=\d+/;

describe('start command', () => {
  it('package.json start and the Dockerfile CMD cap the young generation with the same flag', () => {
    const start = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.start;
    const cmd = /^CMD \[(.*)\]$/m.exec(read('Dockerfile'))?.[1] ?? '';
    expect(start).toMatch(/^node --max-semi-space-size=\d+ dist\/main\.js$/);
    expect(cmd).toContain(`"${FLAG.exec(start)![0]}"`);
  });

  it.each([
    'test/helpers/gateway.ts',
    'bench/run.ts',
    'bench/lib/probed-gateway.ts',
    'bench/cache-hit.bench.ts',
    'bench/watch-fleet.ts',
  ])('%s starts the gateway with the flag', (path) => expect(read(path)).toMatch(FLAG));
});
