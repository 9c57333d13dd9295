// One run of the command line is a value (src/cli/session.ts): `main(argv,
// io)` writes to io's streams, returns its exit status and charges a report
// budget of its own, so several runs in one process go at once, each with
// its own output and status, and none touches the process's streams or
// process.exitCode (issue 28). Its working folder and cancellation are its
// own too (issue 37): relative paths mean io.cwd, io.signal stops its children.
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { catalogueEntry } from '../src/examples/catalogue.js';
import { multiEngine, trtSingle } from '../src/examples/programs.js';
import { main } from '../src/cli/main.js';
import type { CliIo } from '../src/cli/io.js';
import { runCli, type CliResult } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';
import { DOUBLE_PYTHON, REPO, alive, eventually, workspace } from './helpers/bridge.js';

const dir = tempDir('cli-parallel');
let clean: string;
let warned: string;
let broken: string;
let staged: string;
let zeroCopy: string;
beforeAll(async () => {
  clean = join(dir, 'clean.pte');
  warned = join(dir, 'warned.pte');
  broken = join(dir, 'broken-arity.pte');
  staged = join(dir, 'kv-decode-staged.pte');
  zeroCopy = join(dir, 'kv-decode-zero-copy.pte');
  await writeFixture(clean, trtSingle());
  await writeFixture(warned, multiEngine(3));
  await writeFixture(broken, catalogueEntry('broken-arity.pte').build());
  await writeFixture(staged, catalogueEntry('kv-decode-staged.pte').build());
  await writeFixture(zeroCopy, catalogueEntry('kv-decode-zero-copy.pte').build());
});
afterEach(() => vi.restoreAllMocks());

/** Runs of every exit status and both streams: results, --json documents, findings, usage errors, help. */
const runs = (): string[][] => [
  ['inspect', staged],
  ['inspect', '--json', zeroCopy],
  ['check', clean],
  ['check', '--json', broken],
  ['check', warned, '--strict'],
  ['diff', staged, zeroCopy],
  ['diff', '--json', '--exit-code', staged, zeroCopy],
  ['rewrite', warned, '-o', join(dir, 'rewritten.pte'), '--budget', '1GiB'],
  ['inspect', join(dir, 'missing.pte')],
  ['check', '--no-such-flag', clean],
  ['check', '--help'],
  ['--version'],
];

/** A log line off a terminal starts with its time: the one thing two runs of the same command differ in. */
const untime = (text: string) => text.replace(/^\d{4}-\d\d-\d\dT[\d:.]+Z /gm, '');
const untimed = (r: CliResult): CliResult => ({ ...r, stderr: untime(r.stderr), output: untime(r.output) });

describe('runs of the command line in one process', () => {
  it('go at once, each with its own output and exit status, as each alone', async () => {
    const alone: CliResult[] = [];
    for (const args of runs()) alone.push(untimed(await runCli(args)));
    // The runs between them cover each exit status and both streams.
    expect(new Set(alone.map((r) => r.code))).toEqual(new Set([0, 1, 2]));
    expect(alone.every((r) => r.stdout !== '' || r.stderr !== '')).toBe(true);

    const together = await Promise.all(runs().map((args) => runCli(args)));
    expect(together.map(untimed)).toEqual(alone);
  });

  it('write only to the streams they are given, and leave process.exitCode alone', async () => {
    const out = vi.spyOn(process.stdout, 'write');
    const err = vi.spyOn(process.stderr, 'write');
    const captured: string[] = [];
    const io: CliIo = {
      stdout: { write: (t: string) => captured.push(t) },
      stderr: { write: (t: string) => captured.push(t) },
      env: {},
      cwd: dir,
    };
    // A warning through the logger in each format, a refusal, a usage error and help.
    const codes = [
      await main(['rewrite', warned, '-o', join(dir, 'logged.pte'), '--budget', '1GiB'], io),
      await main(['--log-format', 'json', 'rewrite', warned, '-o', join(dir, 'logged-json.pte'), '--budget', '1GiB'], io),
      await main(['check', broken], io),
      await main(['inspect'], io),
      await main(['--help'], io),
    ];
    expect(codes).toEqual([0, 0, 1, 2, 0]);
    const text = captured.join('');
    expect(text).toContain('trtx warn: TRT_BUDGET_MULTI_ENGINE');
    expect(text).toMatch(/"msg":"TRT_BUDGET_MULTI_ENGINE/);
    expect(text).toContain('TRT_ARITY');
    expect(text).toContain('Exit codes');
    expect(out).not.toHaveBeenCalled();
    expect(err).not.toHaveBeenCalled();
    expect(process.exitCode).toBeUndefined();
  });
});

describe("a run's working folder and cancellation (io.cwd, io.signal)", () => {
  it('relative paths mean the run’s folder, not the process’s: several runs in several folders at once', async () => {
    const folders = ['a', 'b'].map((n) => tempDir(`cli-cwd-${n}`));
    const runs = await Promise.all(
      folders.map(async (cwd) => {
        const wrote = await runCli(['fixtures', 'examples', '--only', 'kv-decode-staged'], { cwd });
        const checked = await runCli(['check', join('examples', 'kv-decode-staged.pte')], { cwd });
        const rewritten = await runCli(['rewrite', join('examples', 'kv-decode-staged.pte'), '-o', 'zc.pte', '--zero-copy-kv'], { cwd });
        return { cwd, wrote, checked, rewritten };
      }),
    );
    for (const { cwd, wrote, checked, rewritten } of runs) {
      expect([wrote.code, checked.code, rewritten.code], wrote.stderr + checked.stderr + rewritten.stderr).toEqual([0, 0, 0]);
      expect(existsSync(join(cwd, 'examples', 'kv-decode-staged.pte'))).toBe(true);
      expect(existsSync(join(cwd, 'zc.pte'))).toBe(true);
    }
    // Nothing landed in the process's own folder.
    expect(existsSync(join(process.cwd(), 'zc.pte'))).toBe(false);
  });

  it(
    'two runs at once, each in its own folder with its own HOME and TMPDIR, read and write only their own, and print the paths as typed',
    { timeout: 60_000 },
    async () => {
      const runs = await Promise.all(
        ['a', 'b'].map(async (n) => {
          const cwd = tempDir(`cli-place-${n}`);
          const home = tempDir(`cli-home-${n}`);
          const tmp = tempDir(`cli-tmp-${n}`);
          // A stand-in runner, named by a relative TRTX_RUNNER_BIN: it records its arguments in the run's folder and refuses.
          writeFileSync(join(cwd, 'fake-runner'), '#!/bin/sh\necho "$@" > "$TRTX_TEST_RUNNER_ARGS"\nexit 2\n', { mode: 0o755 });
          // The Python doubles' interpreter, named by a relative path: --python in one run, TRTX_PYTHON in the other.
          writeFileSync(join(cwd, 'py'), `#!/bin/sh\nexec ${DOUBLE_PYTHON} "$@"\n`, { mode: 0o755 });
          const ws = workspace();
          const program = ws.file('double-exports-this.pte');
          await writeFixture(program, catalogueEntry('kv-decode-staged.pte').build());
          copyFileSync(ws.file('model.pt2'), join(cwd, 'model.pt2'));
          const env = {
            HOME: home,
            TMPDIR: tmp,
            TRTX_CACHE_DIR: undefined,
            TRTX_RUNNER_BIN: './fake-runner',
            TRTX_TEST_RUNNER_ARGS: join(cwd, 'runner-args.txt'),
            TRTX_PYTHON: n === 'b' ? './py' : undefined,
            TRTX_DOUBLE_PROGRAM: program,
            TRTX_DOUBLE_FAULT: 'lower:raise',
          };
          const steps = [
            ['fixtures', 'examples', '--only', 'kv-decode-staged'],
            ['rewrite', join('examples', 'kv-decode-staged.pte'), '-o', 'zc.pte', '--zero-copy-kv'],
            ['verify', 'zc.pte'],
            ['export', 'model.pt2', '-o', 'out.pte', ...(n === 'a' ? ['--python', './py'] : [])],
          ];
          const results: CliResult[] = [];
          for (const args of steps) results.push(await runCli(args, { cwd, env }));
          return { cwd, home, tmp, results };
        }),
      );
      for (const { cwd, home, tmp, results } of runs) {
        const [wrote, rewritten, verified, exported] = results as [CliResult, CliResult, CliResult, CliResult];
        expect([wrote.code, rewritten.code], wrote.stderr + rewritten.stderr).toEqual([0, 0]);
        // Written in the run's folder, and named as typed.
        expect(existsSync(join(cwd, 'examples', 'kv-decode-staged.pte'))).toBe(true);
        expect(rewritten.stdout).toMatch(/^wrote zc\.pte /m);
        // The runner the run's TRTX_RUNNER_BIN names in its folder ran on its program, its files under the run's TMPDIR.
        expect(verified.code, verified.stderr).toBe(2);
        const argv = readFileSync(join(cwd, 'runner-args.txt'), 'utf8');
        expect(argv).toContain(join(cwd, 'zc.pte'));
        expect(argv).toContain(`${tmp}/trtx-runner-`);
        expect(verified.stderr).toContain('zc.pte');
        expect(verified.stderr).not.toContain(join(cwd, 'zc.pte'));
        // The export's traceback is in the cache under the run's HOME.
        expect(exported.code, exported.stderr).toBe(1);
        const tracebacks = join(home, '.cache', 'trtx', 'tracebacks');
        expect(readdirSync(tracebacks)).toHaveLength(1);
        expect(exported.stderr).toContain(`The Python traceback is in ${tracebacks}/`);
        expect(exported.stderr).not.toContain(join(cwd, 'out.pte'));
      }
      // Nothing landed in the process's own folder.
      expect(existsSync(join(process.cwd(), 'zc.pte'))).toBe(false);
    },
  );

  it('the system’s home comes in at the top only: a process without HOME runs with the one the system names (bin/trtx, processIo)', () => {
    const script = join(tempDir('cli-no-home'), 'io.mts');
    writeFileSync(
      script,
      `import { processIo } from ${JSON.stringify(join(REPO, 'src', 'cli', 'io.ts'))};\nconsole.log(processIo().env.HOME);\n`,
    );
    const env = { ...process.env };
    delete env.HOME;
    const r = spawnSync(process.execPath, ['--import', 'tsx', script], { cwd: REPO, env, encoding: 'utf8', timeout: 30_000 });
    expect(r.stdout.trim(), r.stderr).toBe(homedir());
  });

  it('verify with no file takes the one .pte of the run’s folder', async () => {
    const cwd = tempDir('cli-cwd-verify');
    await writeFixture(join(cwd, 'only.pte'), catalogueEntry('broken-arity.pte').build());
    const r = await runCli(['verify'], { cwd });
    // Refused by the check before any runner is needed: the file it found is the folder's.
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toContain('TRT_ARITY');
  });

  it('an aborted signal stops an export: the bridge and its children are killed, nothing is written', { timeout: 60_000 }, async () => {
    const ws = workspace();
    const program = join(ws.dir, 'double-program.pte');
    await writeFixture(program, catalogueEntry('kv-decode-staged.pte').build());
    const pidfile = join(ws.dir, 'grandchild.pid');
    const out = join(ws.dir, 'out', 'model.pte');
    mkdirSync(dirname(out));
    const ac = new AbortController();
    const run = runCli(['export', ws.file('model.pt2'), '-o', out, '--python', DOUBLE_PYTHON], {
      signal: ac.signal,
      env: { TRTX_DOUBLE_PROGRAM: program, TRTX_DOUBLE_CALLS: ws.calls, TRTX_DOUBLE_FAULT: 'write:hang', TRTX_DOUBLE_PIDFILE: pidfile },
    });
    expect(await eventually(() => existsSync(pidfile), 30_000)).toBe(true);
    const grandchild = Number(readFileSync(pidfile, 'utf8'));
    ac.abort();
    const r = await run;
    // An environment result (exit 2), as every bridge failure that is not the model's.
    expect([r.code, r.stderr]).toEqual([2, expect.stringContaining('BRIDGE_CANCELLED')]);
    expect(readdirSync(dirname(out))).toEqual([]);
    expect(await eventually(() => !alive(grandchild), 5000)).toBe(true);
  });
});
