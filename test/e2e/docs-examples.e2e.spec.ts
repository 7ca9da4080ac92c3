import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { testConsumer } from '../helpers/consumers.js';
import { describeNeeding } from '../helpers/system-parts.js';
import { withGateway } from '../helpers/gateway.js';

// Every curl example of README.md and docs/*.md works as written: each ```bash block's curl
// commands run with the real curl against a sandbox gateway, the gateway's address (http://127.0.0.1:3000,
// localhost:3000, $ATRIUM) pointed at it and $KEY / $ATRIUM_OPERATOR_TOKEN set as the sandbox banner gives
// them. Each answers 2xx, or the status a `# NNN …` line right below it says. A block is skipped only when
// the line before its fence says so (`<!-- examples: skip (why) -->`, an operator's production example);
// skipped blocks are counted and named in the output.

const ROOT = resolve(__dirname, '../..');
const SKIP_MARK = /<!--\s*examples:\s*skip\b([^>]*)-->\s*$/;
const GATEWAY = /https?:\/\/(?:127\.0\.0\.1|localhost):3000|(?<![\w/])localhost:3000/g;

interface Example {
  readonly where: string;
  readonly command: string;
  /** The status the docs give below the command, or undefined for any 2xx. */
  readonly expect?: number;
}

interface Extracted {
  readonly examples: Example[];
  readonly skipped: string[];
}

/** A block's lines as shell commands: `\` continuations joined, and a quoted string spanning lines kept whole. */
function commandsOf(body: readonly string[]): string[] {
  const out: string[] = [];
  let open = '';
  for (const line of body) {
    if (!open && line.trim().startsWith('#')) {
      out.push(line);
      continue;
    }
    open += (open ? '\n' : '') + line;
    const quotes = [...withoutComment(open).replace(/\\./g, '')].filter((c) => c === "'").length;
    if (open.endsWith('\\') || quotes % 2 === 1) continue;
    out.push(open.replace(/\\\n\s*/g, ' '));
    open = '';
  }
  if (open) out.push(open);
  return out;
}

/** The command without a trailing `# note` (a `#` after a space, outside quotes): the docs' note. */
function withoutComment(command: string): string {
  let quote = '';
  for (let i = 0; i < command.length; i++) {
    const c = command[i];
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(command[i - 1]))) return command.slice(0, i).trimEnd();
  }
  return command;
}

/** The curl commands of every ```bash block (continuation lines joined), with the status the docs give. */
function extract(): Extracted {
  const files = [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  const examples: Example[] = [];
  const skipped: string[] = [];
  for (const file of files) {
    const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (lines[i].trim() !== '```bash') continue;
      const start = i;
      const body: string[] = [];
      for (i++; i < lines.length && lines[i].trim() !== '```'; i++) body.push(lines[i]);
      if (!body.some((l) => /^\s*curl\s/.test(l))) continue;
      const before =
        lines
          .slice(0, start)
          .reverse()
          .find((l) => l.trim() !== '') ?? '';
      const mark = SKIP_MARK.exec(before);
      if (mark) {
        skipped.push(`${file}:${start + 1} ${mark[1].trim() || '(no reason given)'}`);
        continue;
      }
      const joined = commandsOf(body);
      joined.forEach((line, n) => {
        if (!/^\s*curl\s/.test(line)) return;
        const status = /^\s*#\s*(\d{3})\b/.exec(joined[n + 1] ?? '');
        examples.push({
          where: `${file}:${start + 1}`,
          command: withoutComment(line.trim()),
          expect: status ? Number(status[1]) : undefined,
        });
      });
    }
  }
  return { examples, skipped };
}

describeNeeding('curl', 'every curl example in README.md and docs/*.md works as written', () => {
  // The sandbox's demo consumer: every interface, writes allowed, id `demo` (the EMIS login examples).
  const demo = testConsumer({
    id: 'demo',
    upstreams: new Set(['macro', 'company', 'documents', 'deals']),
    write: true,
  });
  const OPERATOR_TOKEN = 'atr_op_docs_examples_0123456789';
  const gw = withGateway({
    sandbox: true,
    consumers: [demo],
    env: { ATRIUM_OPERATOR_TOKEN: OPERATOR_TOKEN },
  });
  const { examples, skipped } = extract();

  afterAll(() => {
    process.stdout.write(
      `docs examples: ${examples.length} run, ${skipped.length} block(s) skipped as marked` +
        (skipped.length ? `: ${skipped.join('; ')}` : '') +
        '\n',
    );
  });

  it('finds the examples (README, interfaces, front-end and operations docs)', () => {
    expect(examples.length).toBeGreaterThan(15);
    expect(new Set(examples.map((e) => e.where.split(':')[0]))).toEqual(
      new Set(['README.md', 'docs/frontend.md', 'docs/interfaces.md', 'docs/operations.md']),
    );
  });

  it.each(examples.map((e) => [`${e.where} ${e.command.slice(0, 90)}`, e] as const))(
    '%s',
    async (_name, example) => {
      const command = `${example.command.replace(GATEWAY, gw.url)} -sS -o /dev/null -w '%{http_code}'`;
      // Asynchronously: the gateway answers from this process.
      const run = await promisify(execFile)('bash', ['--norc', '--noprofile', '-c', command], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 20_000,
        env: { PATH: process.env.PATH, KEY: demo.key, ATRIUM: gw.url, ATRIUM_OPERATOR_TOKEN: OPERATOR_TOKEN },
      }).catch((e: { stdout?: string; stderr?: string; message: string }) => ({
        stdout: e.stdout ?? '',
        stderr: e.stderr || e.message,
      }));
      expect(run.stderr).toBe('');
      const status = Number(run.stdout);
      if (example.expect !== undefined) expect(status).toBe(example.expect);
      else expect({ command, status, ok: status >= 200 && status < 300 }).toMatchObject({ ok: true });
    },
  );
});
