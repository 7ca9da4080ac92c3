import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CAPTURE_DIR_ENV, recordSecret } from './log-capture.js';
import { scanCapture } from './log-capture.global-teardown.js';

describe('the post-run log scan (log-capture.global-teardown.ts)', () => {
  function capture(files: Record<string, string>): string {
    const dir = mkdtempSync(join(tmpdir(), 'atrium-scan-test-'));
    for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
    return dir;
  }

  it('finds a journaled secret anywhere in any captured line', () => {
    const dir = capture({
      'secrets-w1-1.txt': 'plain-upstream-secret-42\n',
      'inproc-w1-1.log': '{"msg":"request","status":200}\n{"msg":"oops plain-upstream-secret-42"}\n',
    });
    const r = scanCapture(dir);
    expect(r.requestLines).toBe(1);
    expect(r.leaks).toEqual([
      { file: 'inproc-w1-1.log', line: 2, secret: 'plai…(24 chars)', how: 'journaled secret' },
    ]);
  });

  it('journals every encoded form of a secret, so an encoded echo in a log is found too', () => {
    const dir = capture({});
    const saved = process.env[CAPTURE_DIR_ENV];
    process.env[CAPTURE_DIR_ENV] = dir;
    try {
      recordSecret('ab/cd+ef==gh12345');
    } finally {
      process.env[CAPTURE_DIR_ENV] = saved;
    }
    writeFileSync(
      join(dir, 'inproc-w1-1.log'),
      '{"msg":"GET /x?token=ab%2Fcd%2Bef%3D%3Dgh12345"}\n{"msg":"ok"}\n{"msg":"echo YWIvY2QrZWY9PWdoMTIzNDU="}\n',
    );
    expect([...new Set(scanCapture(dir).leaks.map((l) => l.line))]).toEqual([1, 3]);
  });

  it('finds key-shaped strings nobody journaled', () => {
    const dir = capture({
      'inproc-w1-1.log':
        '{"msg":"x atr_test_AbCdEfGh12345678"}\n{"msg":"sbx_macro_zzzzzzzzzzzz"}\n{"msg":"sbx_user_1234abcd"}\n',
    });
    expect(scanCapture(dir).leaks.map((l) => [l.line, l.how])).toEqual([
      [1, 'key-shaped string'],
      [2, 'key-shaped string'],
    ]);
  });

  it('exempts only the sandbox banner of spawned gateways, and learns the demo key from it', () => {
    const dir = capture({
      'spawned-w1-1-1-gateway.log':
        'Atrium listening on http://127.0.0.1:1\nDemo consumer key: atr_demo_KEYKEYKEYKEY\nTry:\n  curl -H "Authorization: Bearer atr_demo_KEYKEYKEYKEY" x\n{"msg":"later atr_demo_KEYKEYKEYKEY"}\n',
      'inproc-w1-1.log': 'Demo consumer key: atr_demo_OTHEROTHER1\n',
    });
    const leaks = scanCapture(dir).leaks;
    expect(leaks.map((l) => [l.file, l.line])).toEqual([
      ['inproc-w1-1.log', 1],
      ['spawned-w1-1-1-gateway.log', 5],
    ]);
  });
});
