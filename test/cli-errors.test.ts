// One behaviour across the commands: a missing file, a directory or a file
// that is not a .pte prints one line on stderr and exits 2 (export an
// `error:` line and at most one `hint:`, before any Python runs); every
// command's --help exits 0 with examples; human output carries no ANSI
// escape off a terminal or with NO_COLOR, whatever the terminal.
import { beforeAll, describe, expect, it } from 'vitest';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { catalogueEntry, kvDecoder } from '../src/examples/catalogue.js';
import { DOUBLE_PYTHON, REPO } from './helpers/bridge.js';
import { runCli, type CliResult } from './helpers/cli.js';
import { BUILD_TIMEOUT_MS, testRunner } from './helpers/runner.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir('cli-errors');
const good = join(dir, 'kv-decode-staged.pte');
const broken = join(dir, 'broken-arity.pte');
const zeroCopy = join(dir, 'kv-decode-zero-copy.pte');
let runner = '';

beforeAll(async () => {
  await writeFixture(good, kvDecoder());
  await writeFixture(broken, catalogueEntry('broken-arity.pte').build());
  await writeFixture(zeroCopy, catalogueEntry('kv-decode-zero-copy.pte').build());
  runner = await testRunner();
}, BUILD_TIMEOUT_MS);

const empty = join(dir, 'empty.pte');
const text = join(dir, 'notes.pte');
const short = join(dir, 'short.pte');
writeFileSync(empty, '');
writeFileSync(text, 'a text file, not a program\n');
writeFileSync(short, 'hi\n');

const BAD_INPUTS: [string, () => string][] = [
  ['a missing file', () => join(dir, 'missing.pte')],
  ['a directory', () => dir],
  ['a file that is not a .pte', () => join(REPO, 'package.json')],
  ['an empty file', () => empty],
  ['a text file', () => text],
  ['a text file shorter than a header', () => short],
];

function expectOneLine(r: CliResult): void {
  expect(r.code, r.stderr).toBe(2);
  const lines = r.stderr.split('\n').filter((l) => l !== '');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^error: [A-Z][A-Z0-9_]*: /);
  expect(r.stderr.endsWith('\n')).toBe(true);
  expect(r.stdout).toBe('');
}

// Each run is its own (test/helpers/cli.ts): every command over every input goes at once.
describe.concurrent.each(BAD_INPUTS)('%s: one line on stderr, exit 2', (what, input) => {
  it('inspect', async () => expectOneLine(await runCli(['inspect', input()])));
  it('check', async () => expectOneLine(await runCli(['check', input()])));

  it('rewrite, writing nothing', async () => {
    // A target of its own: the rewrites of the other inputs run at the same time (and would wait for its writer lock).
    const out = join(dir, `rewritten-${what.replace(/\W+/g, '-')}.pte`);
    expectOneLine(await runCli(['rewrite', input(), '-o', out]));
    expect(existsSync(out)).toBe(false);
  });

  it('verify', async () => expectOneLine(await runCli(['verify', input()], { env: { TRTX_RUNNER_BIN: runner } })));
  it('diff, as the first file', async () => expectOneLine(await runCli(['diff', input(), good])));
  it('diff, as the second file', async () => expectOneLine(await runCli(['diff', good, input()])));
});

describe('an empty file and a text file', () => {
  it.each(['inspect', 'check'])('%s: the same exit code and the same error, PTE_NOT_A_PROGRAM', async (cmd) => {
    const results = await Promise.all([empty, text, short].map((f) => runCli([cmd, f])));
    for (const r of results) {
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/^error: PTE_NOT_A_PROGRAM: /);
    }
  });

  it('a program cut inside its first 8 bytes is still a truncated program (exit 1)', async () => {
    const cut = join(dir, 'cut.pte');
    writeFileSync(cut, Buffer.from([0x18, 0, 0, 0, 0x45, 0x54]));
    const r = await runCli(['inspect', cut]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/^error: PTE_TRUNCATED: /);
  });
});

describe('export: a missing, directory or non-model file exits 2 with an error line and at most a hint', () => {
  function expectErrorAndHint(r: CliResult): void {
    expect(r.code, r.stderr).toBe(2);
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    expect(lines[0]).toMatch(/^error: [A-Z][A-Z0-9_]*: /);
    expect(lines.length, r.stderr).toBeLessThanOrEqual(2);
    if (lines[1] !== undefined) expect(lines[1]).toMatch(/^hint: /);
    expect(r.stdout).toBe('');
  }

  // The model file is looked at before Python: a wrong path reads as a wrong
  // path, whatever the interpreter has installed, and no Python is started.
  it('with a Python that lacks torch: the missing model is named, not the packages', async () => {
    const out = join(dir, 'exported.pte');
    const r = await runCli(['export', join(dir, 'missing.pt2'), '-o', out, '--python', 'python3']);
    expectErrorAndHint(r);
    expect(r.stderr).toMatch(/^error: INPUT_UNREADABLE: .*missing\.pt2: no such file/);
    expect(r.stderr).not.toMatch(/install/);
    expect(existsSync(out)).toBe(false);
  });

  it.each(BAD_INPUTS)('with the double interpreter: %s, refused before Python starts', async (_what, input) => {
    const out = join(dir, 'exported.pte');
    const calls = join(dir, 'calls.jsonl');
    const r = await runCli(['export', input().replace(/\.pte$/, '.pt2'), '-o', out, '--python', DOUBLE_PYTHON], {
      env: { TRTX_DOUBLE_PROGRAM: good, TRTX_DOUBLE_CALLS: calls },
    });
    expectErrorAndHint(r);
    expect(r.stderr).toMatch(/^error: (INPUT_UNREADABLE|EXPORT_MODEL_FORMAT): /);
    expect(existsSync(calls)).toBe(false);
    expect(existsSync(out)).toBe(false);
  });
});

describe('--help', () => {
  /** The commands in the order of the work, as the top-level help lists them. */
  const COMMANDS = ['export', 'check', 'inspect', 'rewrite', 'diff', 'verify', 'demo', 'env', 'fixtures'];

  it.concurrent.each(COMMANDS)('%s exits 0 and shows its exit codes, its --json schema and examples', async (cmd) => {
    const r = await runCli([cmd, '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Examples:');
    expect(r.stdout).toContain(`trtx ${cmd}`);
    const exit = r.stdout.slice(r.stdout.indexOf('Exit codes (docs/exit-codes.md):'));
    expect(exit, r.stdout).toMatch(
      /^Exit codes \(docs\/exit-codes\.md\):\n {2}0 {2}\S.*\n(?: {2}[12] {2}\S.*\n)+ {2}130, 143 {2}stopped by Ctrl-C/,
    );
    // The schema named is one that exists, and its own.
    expect(r.stdout).toContain(`--json: schemas/${cmd}.schema.json (a refusal: schemas/error.schema.json)`);
    expect(existsSync(join(REPO, 'schemas', `${cmd}.schema.json`))).toBe(true);
  });

  it('verify --steps says its minimum', async () => {
    const r = await runCli(['verify', '--help']);
    expect(r.stdout.replace(/\s+/g, ' ')).toMatch(/--steps <n> steps per run, at least 2 \(/);
    expect((await runCli(['verify', 'x.pte', '--steps', '1'])).stderr).toMatch(
      /^error: VERIFY_STEPS: --steps: 1 steps: verify needs at least 2/,
    );
  });

  it('the top-level help lists the commands in the order of the work', async () => {
    const r = await runCli(['--help']);
    const listed = [...r.stdout.slice(r.stdout.indexOf('Commands:')).matchAll(/^ {2}([a-z]+) /gm)].map((m) => m[1]);
    expect(listed).toEqual([...COMMANDS, 'help']);
  });

  it('the top-level help documents the exit codes', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /Exit codes[\s\S]*0 +ok[\s\S]*1 +the program or model is refused, or a check or verify assertion failed[\s\S]*2 +usage or environment/,
    );
  });
});

describe.concurrent('colour', () => {
  const ESC = '\u001b[';
  const human = () => [
    ['inspect', broken],
    ['check', broken],
    ['diff', good, zeroCopy],
  ];

  /** Runs with stdout claiming to be a terminal (or not). */
  const onTerminal = (tty: boolean, args: string[], env: Record<string, string | undefined>) => runCli(args, { env, stdoutIsTTY: tty });

  it('none when stdout is not a terminal', async () => {
    for (const args of human()) {
      const r = await onTerminal(false, args, { NO_COLOR: undefined });
      expect(r.stdout.length, args[0]).toBeGreaterThan(0);
      expect(r.stdout, args[0]).not.toContain(ESC);
    }
  });

  it('none with NO_COLOR, even on a terminal', async () => {
    for (const args of human()) {
      const r = await onTerminal(true, args, { NO_COLOR: '1' });
      expect(r.stdout.length, args[0]).toBeGreaterThan(0);
      expect(r.stdout, args[0]).not.toContain(ESC);
    }
  });

  it('none with --no-color, even on a terminal', async () => {
    for (const args of human())
      expect((await onTerminal(true, [...args, '--no-color'], { NO_COLOR: undefined })).stdout, args[0]).not.toContain(ESC);
  });

  // The control: without it the three tests above would pass on a command that never colours.
  it('some on a terminal without NO_COLOR', async () => {
    for (const args of human()) expect((await onTerminal(true, args, { NO_COLOR: undefined })).stdout, args[0]).toContain(ESC);
  });
});
