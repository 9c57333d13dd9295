// The docs' examples are real: every block of README.md and
// docs/commands/*.md whose lines start with `$ trtx ...` (or
// `$ npx trtx ...`) is run as a user would paste it (the command line in
// process, in the block's folder; bin/trtx is the thin wrapper
// test/bin-entry.test.ts and test/cli-check.test.ts run), and what each command
// prints (stdout and stderr together, as a terminal shows them) must be what
// the page shows. Normalised, because it must vary: the time a log line
// carries off a terminal. A line that is only `...` stands for one or more
// lines left out (test/helpers/doc-examples.ts parses and matches).
//
// Each block runs on its own inputs: a fresh folder holding the example
// programs (`trtx fixtures` output, written once into a template and copied)
// and whatever the block's own earlier commands write, so a block shows what
// it shows when pasted alone, whatever other blocks do. A block that starts
// with `trtx fixtures` gets an empty folder, as its page says.
//
// The runner is the test build (CPU only), so the output is the CPU's on
// any machine. After a deliberate change of output,
// `TRTX_README_UPDATE=1 npx vitest run test/readme-examples.test.ts` writes
// what the commands print back into each page (a block with `...` keeps as
// many lines before and after its elision as it had) for review in the diff.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from './helpers/bridge.js';
import {
  applyUpdates,
  blocksOf,
  exampleFiles,
  matches,
  normalise,
  updatedBlock,
  type Example,
  type ExampleBlock,
} from './helpers/doc-examples.js';
import { BUILD_TIMEOUT_MS, testRunner } from './helpers/runner.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

const UPDATE = process.env.TRTX_README_UPDATE === '1';

describe('the examples of README.md and docs/commands/*.md', () => {
  const pages = exampleFiles(REPO).map((file) => {
    const text = readFileSync(join(REPO, file), 'utf8');
    return { file, text, blocks: blocksOf(file, text) };
  });
  const blocks = pages.flatMap((p) => p.blocks);
  const updates = new Map<string, Array<{ example: Example; lines: string[] }>>();
  afterAll(() => {
    if (!UPDATE) return;
    for (const p of pages) {
      const u = updates.get(p.file);
      if (u?.length) writeFileSync(join(REPO, p.file), applyUpdates(p.text, u));
    }
  });

  const dir = tempDir('readme');
  const template = join(dir, 'fixtures');
  const tmp = join(dir, 'tmp');
  mkdirSync(tmp);
  let env: Record<string, string | undefined> = {};

  /** One command in `cwd`, as a user who typed it there; both streams in one, in the order they were written, as a terminal shows them. */
  const run = async (args: string[], cwd: string) => {
    const r = await runCli(args, { env, cwd });
    return { status: r.code, stdout: r.output };
  };

  beforeAll(async () => {
    env = { NO_COLOR: '1', TMPDIR: tmp, TRTX_RUNNER_BIN: await testRunner(), TRTX_CACHE_DIR: join(dir, 'cache'), TRTX_PYTHON: undefined };
    mkdirSync(template);
    const r = await run(['fixtures', '.'], template);
    if (r.status !== 0) throw new Error(`trtx fixtures: ${r.stdout}`);
  }, BUILD_TIMEOUT_MS);

  it('there are examples of every command', () => {
    const commands = new Set(blocks.flatMap((b) => b.examples.map((e) => e.args[0])));
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

  it('regeneration keeps the shape: the lines around every `...` that still appear, and the result matches', () => {
    const cases: Array<[string[], string[], string[]]> = [
      [['a', 'b'], ['x'], ['x']],
      [
        ['a', '...', 'c', '  ...', 'e'],
        ['A', '1', 'c', 'c2', '2', 'E'],
        ['A', '...', 'c', '  ...', 'E'],
      ],
      [
        ['a', '...', 'c', '...', 'e'],
        ['A', '1', 'C', '2', 'E'],
        ['A', '...', 'E'],
      ],
      [
        ['a', '...', 'b', 'c', 'd', '...', 'e'],
        ['A', '1', 'B', 'c', 'd', '2', 'E'],
        ['A', '...', 'c', 'd', '...', 'E'],
      ],
      [
        ['a', '...', 'e'],
        ['A', 'E'],
        ['A', 'E'],
      ],
      [
        ['h', '...', 'm', 'n', '...', 't'],
        ['H', 'p', 'm', 'n', 'q', 'T'],
        ['H', '...', 'm', 'n', '...', 'T'],
      ],
    ];
    for (const [expected, actual, updated] of cases) {
      expect(updatedBlock(expected, actual)).toEqual(updated);
      expect(matches(updated, actual)).toBe(true);
    }
  });

  const folders = new Map<ExampleBlock, string>();
  /** The block's own folder: made at its first command, kept for its later ones. */
  const folderOf = (b: ExampleBlock): string => {
    let cwd = folders.get(b);
    if (cwd === undefined) {
      cwd = join(dir, `${b.file.replace(/\W+/g, '-')}-${b.line}`);
      if (b.examples[0].args[0] === 'fixtures') mkdirSync(cwd);
      else cpSync(template, cwd, { recursive: true });
      folders.set(b, cwd);
    }
    return cwd;
  };

  for (const b of blocks) {
    for (const e of b.examples) {
      it(`${b.file}:${e.line}: $ ${e.command}`, { timeout: BUILD_TIMEOUT_MS }, async () => {
        const r = await run(e.args, folderOf(b));
        const actual = normalise(r.stdout);
        if (matches(e.expected, actual)) return;
        if (UPDATE) {
          const list = updates.get(b.file) ?? [];
          list.push({ example: e, lines: updatedBlock(e.expected, actual) });
          updates.set(b.file, list);
          return;
        }
        expect(actual.join('\n'), `${b.file}:${e.line} shows other output than "$ ${e.command}" prints (exit ${r.status})`).toBe(
          e.expected.join('\n'),
        );
      });
    }
  }
});
