import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FdDestination } from '../../src/core/logging/fd-destination.js';
import { eventually } from '../helpers/eventually.js';

const flushed = (d: FdDestination) => new Promise<void>((resolve) => d.flush(() => resolve()));

describe('FdDestination (the asynchronous stdout of the log)', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'atrium-fd-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes every line whole and in order, across turns, buffers and multi-byte text', async () => {
    const file = join(dir, 'log');
    const fd = openSync(file, 'w');
    const d = new FdDestination({ fd, chunkBytes: 1024 });
    const lines: string[] = [];
    for (let turn = 0; turn < 40; turn++) {
      for (let i = 0; i < 250; i++) {
        // Sizes across the buffer's: short lines, lines near 1 KB, and some far larger than a buffer.
        const size = i % 97 === 0 ? 5000 : (i * 37) % 900;
        const line = `{"n":${turn * 1000 + i},"t":"${'é€x'.repeat(size / 3)}"}\n`;
        lines.push(line);
        expect(d.write(line)).toBe(true);
      }
      await new Promise((r) => setImmediate(r));
    }
    await flushed(d);
    closeSync(fd);
    expect(readFileSync(file, 'utf8')).toBe(lines.join(''));
    expect(d.dropped).toBe(0);
  });

  it('gathers lines into one write: when 16 KB wait, or within flushMs of the first', async () => {
    const file = join(dir, 'log');
    const fd = openSync(file, 'w');
    const d = new FdDestination({ fd, flushBytes: 1024, flushMs: 30 });
    const size = () => statSync(file).size;
    d.write('first\n');
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(size()).toBe(0); // not written on the next turn: it waits for more
    // Within flushMs it lands on its own (a condition, polled: no fixed sleep).
    await eventually(() => size() > 0, { timeoutMs: 5_000, intervalMs: 5, what: 'the timed write' });
    expect(readFileSync(file, 'utf8')).toBe('first\n');
    closeSync(fd);
    // flush(cb) (pino's logger.flush) does not wait for the timer: with a minute's timer it still returns.
    const fd2 = openSync(join(dir, 'log2'), 'w');
    const d2 = new FdDestination({ fd: fd2, flushMs: 60_000 });
    d2.write('second\n');
    await flushed(d2);
    expect(readFileSync(join(dir, 'log2'), 'utf8')).toBe('second\n');
    closeSync(fd2);
  });

  it('flushSync writes what is pending at once (exit paths)', () => {
    const file = join(dir, 'log');
    const fd = openSync(file, 'w');
    const d = new FdDestination({ fd });
    d.write('a\n');
    d.write('b\n');
    d.flushSync();
    closeSync(fd);
    expect(readFileSync(file, 'utf8')).toBe('a\nb\n');
  });

  it('keeps memory bounded while the reader stalls: drops beyond the bound, then says how many', async () => {
    // A reader that reads nothing until told to: the pipe fills, the write in flight waits in the thread
    // pool, and lines pile up in the destination.
    const out = join(dir, 'read');
    const reader = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('fs');
         process.on('message', () => { process.stdin.pipe(fs.createWriteStream(${JSON.stringify(out)})); process.disconnect(); });`,
      ],
      { stdio: ['pipe', 'ignore', 'inherit', 'ipc'] },
    );
    await new Promise((r) => reader.once('spawn', r));
    const fd = (reader.stdin as unknown as { _handle: { fd: number } })._handle.fd;
    const d = new FdDestination({ fd, chunkBytes: 4096, maxPendingBytes: 256 * 1024 });
    const line = `{"msg":"${'x'.repeat(990)}"}\n`; // 1,001 bytes
    const accepted: boolean[] = [];
    // 8 MB: far more than the socket pair's buffers (a few hundred KB) and the bound hold together.
    for (let turn = 0; turn < 160; turn++) {
      for (let i = 0; i < 50; i++) accepted.push(d.write(line));
      await new Promise((r) => setImmediate(r));
    }
    const kept = accepted.filter(Boolean).length;
    expect(d.dropped).toBe(accepted.length - kept);
    expect(d.dropped).toBeGreaterThan(6000);
    // The socket pair's buffers, the buffer in flight and the bound: not the 8,000 lines offered.
    expect(kept).toBeLessThan(2000);
    // Everything accepted still arrives, in order, followed by the count of what was not.
    reader.send('read');
    await flushed(d);
    reader.stdin!.destroy();
    await new Promise((r) => reader.once('exit', r));
    // Each spell of drops is reported where it happened, after the lines accepted before it.
    const got = readFileSync(out, 'utf8').split('\n').filter(Boolean);
    const reports = got.filter((l) => l.includes('log lines dropped')).map((l) => JSON.parse(l));
    expect(got.filter((l) => !l.includes('log lines dropped'))).toEqual(Array(kept).fill(line.trimEnd()));
    expect(reports.length).toBeGreaterThan(0);
    for (const r of reports) expect(r).toMatchObject({ level: 'warn', dropped: expect.any(Number) });
    expect(reports.reduce((n, r) => n + (r.dropped as number), 0)).toBe(d.dropped);
  });

  it('tells of a failing descriptor once per spell of failures, and still settles every flush', async () => {
    const file = join(dir, 'log');
    writeFileSync(file, '');
    const fd = openSync(file, 'r'); // read-only: every write fails with EBADF
    const errors: string[] = [];
    const d = new FdDestination({ fd, onError: (e) => errors.push(e.code ?? '') });
    for (let i = 0; i < 5; i++) {
      d.write(`line ${i}\n`);
      await flushed(d);
    }
    closeSync(fd);
    expect(errors).toEqual(['EBADF']);
  });

  it('refuses options that cannot work', () => {
    expect(() => new FdDestination({ fd: -1 })).toThrow(/descriptor/);
    expect(() => new FdDestination({ fd: 1, chunkBytes: 10 })).toThrow(/chunkBytes/);
    expect(() => new FdDestination({ fd: 1, chunkBytes: 4096, maxPendingBytes: 1024 })).toThrow(
      /maxPendingBytes/,
    );
  });
});
