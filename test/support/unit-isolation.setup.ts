// Jest setupFilesAfterEnv of the unit tier only: a unit test starts no process, server or socket. Each of
// those calls throws here, so a test that needs one fails at once and names its tier (e2e, redis, fleet…)
// instead of slowing the unit tier down or depending on the machine. Restored after the file: a Jest worker
// runs files of other tiers too, and core modules are shared between them.
import childProcess from 'node:child_process';
import { Server, Socket } from 'node:net';

type Patchable = Record<string, unknown>;

const patches: Array<{ on: Patchable; name: string; original: unknown }> = [];

function forbid(on: object, name: string, what: string): void {
  const target = on as Patchable;
  patches.push({ on: target, name, original: target[name] });
  target[name] = () => {
    throw new Error(
      `a unit test may not ${what} (${name}); name the file after the tier it needs: ` +
        '*.e2e.spec.ts, *.redis.spec.ts, *.fleet.spec.ts… (jest.config.cjs)',
    );
  };
}

forbid(Server.prototype, 'listen', 'start a server');
forbid(Socket.prototype, 'connect', 'open a socket');
for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const)
  forbid(childProcess, name, 'start a process');

afterAll(() => {
  for (const { on, name, original } of patches.reverse()) on[name] = original;
});
