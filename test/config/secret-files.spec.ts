import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config/atrium-config.js';
import { resolveSecretFiles, SecretFiles } from '../../src/config/secret-files.js';
import { UPSTREAMS } from '../../src/upstreams/index.js';
import { eventually } from '../helpers/eventually.js';

// `<NAME>_FILE` beside `<NAME>` for every secret: read at boot, kept current, both forms refused.
const MACRO_URL = { UPSTREAM_MACRO_BASE_URL: 'http://127.0.0.1:9' };

describe('secrets from files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'atrium-secrets-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };

  it('a file stands in for the variable (its trailing line break dropped), for vendor keys and tokens', () => {
    const c = loadConfig(
      {
        ...MACRO_URL,
        UPSTREAM_MACRO_TOKEN_FILE: file('macro-token', 'sbx_macro_from_file_1234\n'),
        ATRIUM_OPERATOR_TOKEN_FILE: file('op', 'operator-token-from-a-file-0001\n'),
        ATRIUM_METRICS_TOKEN_FILE: file('metrics', 'metrics-token-from-a-file-0001'),
        ATRIUM_LINK_SECRET_FILE: file('link', 'l'.repeat(40)),
        REDIS_URL_FILE: file('redis', 'redis://:pw-from-file@127.0.0.1:6379\n'),
      },
      UPSTREAMS,
    );
    expect(c.upstreams.macro.token).toBe('sbx_macro_from_file_1234');
    expect(c.operatorToken).toBe('operator-token-from-a-file-0001');
    expect(c.metricsToken).toBe('metrics-token-from-a-file-0001');
    expect(c.links).toMatchObject({ secret: 'l'.repeat(40), secretSource: 'configured' });
    expect(c.redisUrl).toBe('redis://:pw-from-file@127.0.0.1:6379');
    expect(c.secretFiles.names().sort()).toEqual([
      'ATRIUM_LINK_SECRET',
      'ATRIUM_METRICS_TOKEN',
      'ATRIUM_OPERATOR_TOKEN',
      'REDIS_URL',
      'UPSTREAM_MACRO_TOKEN',
    ]);
  });

  it('the Redis password may stay out of REDIS_URL and come from REDIS_PASSWORD_FILE, never from both', () => {
    const base = {
      ...MACRO_URL,
      UPSTREAM_MACRO_TOKEN: 'sbx_macro_redis_pw_0001',
      ATRIUM_LINK_SECRET: 'l'.repeat(40),
    };
    const c = loadConfig(
      {
        ...base,
        REDIS_URL: 'redis://127.0.0.1:6379',
        REDIS_PASSWORD_FILE: file('redis-password', 'redis-pw-from-a-file\n'),
      },
      UPSTREAMS,
    );
    expect(c.redis).toMatchObject({
      kind: 'url',
      url: 'redis://127.0.0.1:6379',
      password: 'redis-pw-from-a-file',
    });
    let message = '';
    try {
      loadConfig(
        { ...base, REDIS_URL: 'redis://:in-url@127.0.0.1:6379', REDIS_PASSWORD: 'beside-it' },
        UPSTREAMS,
      );
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      message = (e as Error).message;
    }
    expect(message).toContain('REDIS_URL carries credentials already');
    expect(message).not.toContain('in-url');
    expect(message).not.toContain('beside-it');
  });

  it('both forms, an unreadable file or an empty one stop the boot, named by variable (never the value)', () => {
    const problem = (env: Record<string, string>) => {
      try {
        loadConfig({ ...MACRO_URL, ...env }, UPSTREAMS);
      } catch (e) {
        expect(e).toBeInstanceOf(ConfigError);
        return (e as Error).message;
      }
      throw new Error('loaded');
    };
    const message = problem({
      UPSTREAM_MACRO_TOKEN: 'sbx_macro_both_forms_999',
      UPSTREAM_MACRO_TOKEN_FILE: file('both', 'sbx_macro_both_forms_888'),
    });
    expect(message).toContain('UPSTREAM_MACRO_TOKEN_FILE (UPSTREAM_MACRO_TOKEN is set too: set one of them)');
    expect(message).not.toContain('sbx_macro_both_forms');
    expect(problem({ UPSTREAM_MACRO_TOKEN_FILE: join(dir, 'absent') })).toContain(
      `UPSTREAM_MACRO_TOKEN_FILE (cannot read ${join(dir, 'absent')}: ENOENT)`,
    );
    expect(problem({ UPSTREAM_MACRO_TOKEN_FILE: file('empty', '\n') })).toContain(
      `UPSTREAM_MACRO_TOKEN_FILE (${join(dir, 'empty')} is empty)`,
    );
    // A value read from a file is checked by the variable's own rule.
    expect(
      problem({ UPSTREAM_MACRO_TOKEN: 'sbx_m', ATRIUM_METRICS_TOKEN_FILE: file('short', 'short') }),
    ).toContain('ATRIUM_METRICS_TOKEN');
  });

  it("follows a Kubernetes secret volume's ..data symlink swap within 2 s, and keeps the old value on an empty write", async () => {
    // The layout kubelet writes: token → ..data/token, ..data → ..<timestamp> (swapped atomically).
    const vol = join(dir, 'volume');
    mkdirSync(join(vol, '..v1'), { recursive: true });
    writeFileSync(join(vol, '..v1', 'token'), 'sbx_macro_volume_key_one\n');
    symlinkSync('..v1', join(vol, '..data'));
    symlinkSync('..data/token', join(vol, 'token'));
    const { env, files } = resolveSecretFiles({ UPSTREAM_MACRO_TOKEN_FILE: join(vol, 'token') }, [
      'UPSTREAM_MACRO_TOKEN',
    ]);
    const secrets = new SecretFiles(files, env);
    const changed: string[] = [];
    // A poll far longer than the test: the change must come from the directory watch.
    secrets.watch({ pollMs: 60_000, onChanged: (n) => changed.push(n) });
    try {
      const live = secrets.live('UPSTREAM_MACRO_TOKEN')!;
      const seen: string[] = [];
      live.onChange((v) => seen.push(v));
      expect(live.value()).toBe('sbx_macro_volume_key_one');

      mkdirSync(join(vol, '..v2'));
      writeFileSync(join(vol, '..v2', 'token'), 'sbx_macro_volume_key_two\n');
      symlinkSync('..v2', join(vol, '..data_tmp'));
      renameSync(join(vol, '..data_tmp'), join(vol, '..data'));
      const swapped = Date.now();
      await eventually(() => live.value() === 'sbx_macro_volume_key_two', {
        what: 'the swapped key',
        timeoutMs: 2_000,
      });
      expect(Date.now() - swapped).toBeLessThan(2_000);
      expect(seen).toEqual(['sbx_macro_volume_key_two']);
      expect(changed).toEqual(['UPSTREAM_MACRO_TOKEN']);

      // A writer caught mid-write (empty file): the key in force stays.
      writeFileSync(join(vol, '..v2', 'token'), '');
      expect(live.reread()).toBe(false);
      expect(live.value()).toBe('sbx_macro_volume_key_two');
    } finally {
      secrets.close();
    }
  });
});
