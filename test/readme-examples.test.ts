// The README's examples are real: every code block that starts with
// `$ trtx ...` (or `$ npx trtx ...`) is run, in README order, in one empty
// folder, as a user would paste it, and what the command prints (stdout and
// stderr together, as a terminal shows them) must be what the README shows.
// Normalised, because it must vary: the time a log line carries off a
// terminal. A README line that is only `...` stands for one or more lines
// left out. Other shell lines (mkdir, cd) belong in blocks without `$`.
//
// The runner is the test build (CPU only), so the output is the CPU's on
// any machine. Change an example's command or output in README.md and this
// test runs the new one. After a deliberate change of output,
// `TRTX_README_UPDATE=1 npx vitest run test/readme-examples.test.ts` writes
// what the commands print back into README.md (a block with `...` keeps as
// many lines before and after its elision as it had) for review in the diff.
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from './helpers/bridge.js';
import { BUILD_TIMEOUT_MS, testRunner } from './helpers/runner.js';
import { BIN } from './helpers/spawn-trtx.js';
import { tempDir } from './helpers/temp.js';

interface Example {
  /** 1-based line of the `$` line in README.md. */
  line: number;
  command: string;
  args: string[];
  expected: string[];
}

const ELISION = /^\s*\.\.\.\s*$/;

/** Splits a command line as a shell would for the simple words the README uses ('...' and "..." quoting). */
function words(command: string): string[] {
  const out: string[] = [];
  for (const m of command.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) out.push(m[1] ?? m[2] ?? m[3]);
  return out;
}

function examplesOf(markdown: string): Example[] {
  const lines = markdown.split('\n');
  const examples: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].startsWith('```')) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !lines[end].startsWith('```')) end++;
    const block = lines.slice(start, end);
    i = end;
    if (!block[0]?.startsWith('$ ')) continue;
    let current: Example | undefined;
    block.forEach((text, k) => {
      if (text.startsWith('$ ')) {
        const command = text.slice(2);
        const w = words(command);
        const args = w[0] === 'trtx' ? w.slice(1) : w[0] === 'npx' && w[1] === 'trtx' ? w.slice(2) : null;
        if (args === null)
          throw new Error(`README.md:${start + k + 1}: "$ ${command}" is not a trtx command; put other shell lines in a block without "$"`);
        current = { line: start + k + 1, command, args, expected: [] };
        examples.push(current);
      } else {
        current!.expected.push(text);
      }
    });
  }
  for (const e of examples) while (e.expected.length && e.expected.at(-1)!.trim() === '') e.expected.pop();
  return examples;
}

/** Whether `actual` is `expected` line for line, each `...` line standing for one or more lines. */
function matches(expected: string[], actual: string[]): boolean {
  const memo = new Map<string, boolean>();
  const go = (e: number, a: number): boolean => {
    const key = `${e},${a}`;
    if (memo.has(key)) return memo.get(key)!;
    let ok: boolean;
    if (e === expected.length) ok = a === actual.length;
    else if (ELISION.test(expected[e])) {
      ok = false;
      for (let n = a + 1; n <= actual.length && !ok; n++) ok = go(e + 1, n);
    } else ok = a < actual.length && expected[e] === actual[a] && go(e + 1, a + 1);
    memo.set(key, ok);
    return ok;
  };
  return go(0, 0);
}

/** Output as the README shows it: no log times, no trailing blanks. */
function normalise(output: string): string[] {
  const lines = output.split('\n').map((l) => l.replace(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (?=trtx )/, '').replace(/\s+$/, ''));
  while (lines.length && lines.at(-1) === '') lines.pop();
  return lines;
}

/** What a block should show for `actual`: all of it, or its head and tail around one elision. */
function updatedBlock(expected: string[], actual: string[]): string[] {
  const first = expected.findIndex((l) => ELISION.test(l));
  if (first < 0) return actual;
  let last = expected.length - 1;
  while (!ELISION.test(expected[last])) last--;
  const head = first;
  const tail = expected.length - 1 - last;
  if (head + tail >= actual.length) return actual;
  return [...actual.slice(0, head), expected[first], ...actual.slice(actual.length - tail)];
}

const UPDATE = process.env.TRTX_README_UPDATE === '1';

describe('README examples', () => {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  const examples = examplesOf(readme);
  const updates: Array<{ example: Example; lines: string[] }> = [];
  afterAll(() => {
    if (!UPDATE || updates.length === 0) return;
    const lines = readme.split('\n');
    // Bottom up, so earlier line numbers stay valid.
    for (const { example, lines: out } of updates.sort((a, b) => b.example.line - a.example.line)) {
      lines.splice(example.line, example.expected.length, ...out);
    }
    writeFileSync(join(REPO, 'README.md'), lines.join('\n'));
  });
  const dir = tempDir('readme');
  const cwd = join(dir, 'try');
  const tmp = join(dir, 'tmp');
  mkdirSync(cwd);
  mkdirSync(tmp);

  it('there are examples of every command', () => {
    const commands = new Set(examples.map((e) => e.args[0]));
    for (const c of ['fixtures', 'inspect', 'check', 'rewrite', 'verify', 'diff', 'demo']) expect(commands, c).toContain(c);
  });

  it('the matcher: `...` stands for one or more lines, nothing else is loose', () => {
    expect(matches(['a', '...', 'd'], ['a', 'b', 'c', 'd'])).toBe(true);
    expect(matches(['a', '...', 'd'], ['a', 'd'])).toBe(false);
    expect(matches(['a', 'b'], ['a', 'b', 'c'])).toBe(false);
    expect(matches(['a', '  ...'], ['a', 'x'])).toBe(true);
    expect(normalise('2026-11-30T10:00:00.000Z trtx warn: x\nkeep 2026-11-30T10:00:00.000Z\n\n')).toEqual([
      'trtx warn: x',
      'keep 2026-11-30T10:00:00.000Z',
    ]);
  });

  for (const e of examples) {
    it(`README.md:${e.line}: $ ${e.command}`, { timeout: BUILD_TIMEOUT_MS }, async () => {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        NO_COLOR: '1',
        TMPDIR: tmp,
        TRTX_RUNNER_BIN: await testRunner(),
        TRTX_CACHE_DIR: join(dir, 'cache'),
      };
      delete env.TRTX_PYTHON;
      // One pipe for both streams, in the order they were written, as a terminal shows them.
      const r = spawnSync('sh', ['-c', 'exec "$0" "$@" 2>&1', process.execPath, BIN, ...e.args], { cwd, env, encoding: 'utf8' });
      const actual = normalise(r.stdout);
      if (!matches(e.expected, actual)) {
        if (UPDATE) {
          updates.push({ example: e, lines: updatedBlock(e.expected, actual) });
          return;
        }
        expect(actual.join('\n'), `README.md:${e.line} shows other output than "$ ${e.command}" prints (exit ${r.status})`).toBe(
          e.expected.join('\n'),
        );
      }
    });
  }
});
