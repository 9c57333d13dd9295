// Benchmark: the first `npx trtx demo` of a new user, measured as the issue
// asks: a fresh clone of this working tree (tracked and untracked files git
// does not ignore, uncommitted changes included), `npm ci` in it, then
// `npx trtx demo` with an empty HOME (so an empty ~/.cache/trtx: the
// ExecuTorch SDK is downloaded and the native runner built). It reports the
// time to the first line of output, to completion, and the longest silence
// between two lines (progress must come at least every 5 s). --npm-test also
// times `npm test` in the clone (10 minutes and more on 2 cores).
//
//   npx tsx bench/first-run.ts [--reuse-node-modules] [--npm-test] [--keep]
//
// --reuse-node-modules links this checkout's node_modules into the clone and
// builds the bundle instead of `npm ci` (quicker when only the demo is
// measured). npm ci itself uses npm's usual cache (it is not what is measured).
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { homedir, availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(fileURLToPath(new URL('..', import.meta.url)));
const flag = (name: string) => process.argv.includes(name);
const work = mkdtempSync(join(tmpdir(), 'trtx-first-run-'));
const clone = join(work, 'clone');
const home = join(work, 'home');
mkdirSync(home);

function copyWorkingTree(): number {
  const r = spawnSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: repo, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ls-files failed: ${r.stderr}`);
  let n = 0;
  for (const rel of r.stdout.split('\0').filter(Boolean)) {
    if (!existsSync(join(repo, rel))) continue;
    mkdirSync(dirname(join(clone, rel)), { recursive: true });
    cpSync(join(repo, rel), join(clone, rel));
    n++;
  }
  return n;
}

function must(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): number {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { cwd: clone, env, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}`);
  return (performance.now() - t0) / 1000;
}

interface Timed {
  status: number | null;
  first: number;
  total: number;
  longestSilence: number;
  silenceAt: string;
  lines: number;
}

/** Runs a command, timing its first output, its completion and the longest gap between two lines. */
function timedRun(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<Timed> {
  return new Promise((done) => {
    const t0 = performance.now();
    let first = -1;
    let last = 0;
    let longest = 0;
    let silenceAt = '';
    let lines = 0;
    const child = spawn(cmd, args, { cwd: clone, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const onData = (chunk: Buffer) => {
      const t = (performance.now() - t0) / 1000;
      if (first < 0) first = t;
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
        if (t - last > longest) {
          longest = t - last;
          silenceAt = line.slice(0, 100);
        }
        last = t;
        lines++;
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('close', (status) => {
      const total = (performance.now() - t0) / 1000;
      if (total - last > longest) {
        longest = total - last;
        silenceAt = '(before exit)';
      }
      done({ status, first, total, longestSilence: longest, silenceAt, lines });
    });
  });
}

const s = (x: number) => `${x.toFixed(2)} s`;
const files = copyWorkingTree();
let setup: string;
if (flag('--reuse-node-modules')) {
  symlinkSync(join(repo, 'node_modules'), join(clone, 'node_modules'));
  setup = `linked node_modules, npm run build: ${s(must('npm', ['run', '--silent', 'build']))}`;
} else {
  setup = `npm ci: ${s(must('npm', ['ci', '--no-audit', '--no-fund', '--loglevel', 'error'], { ...process.env, npm_config_cache: join(homedir(), '.npm') }))}`;
}
// An empty HOME: no ~/.cache/trtx, no SDK, no runner build; nothing of the user's.
const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, NO_COLOR: '1' };
for (const k of ['TRTX_CACHE_DIR', 'TRTX_RUNNER_BIN', 'TRTX_RUNNER_ASAN', 'TRTX_PYTHON', 'TRTX_EXECUTORCH_WHEEL']) delete env[k];
const demo = await timedRun('npx', ['trtx', 'demo'], env);
const again = await timedRun('npx', ['trtx', 'demo'], env);
// Whose time the first line waits for: npm's (npx resolves the package's
// own bin through its tree loader before starting it) or trtx's. The same
// line with and without npx in front, medians of 3.
const firstOf = async (cmd: string, args: string[]) => {
  const xs: number[] = [];
  for (let i = 0; i < 3; i++) xs.push((await timedRun(cmd, args, env)).first);
  return xs.sort((a, b) => a - b)[1] ?? NaN;
};
const npxVersion = await firstOf('npx', ['trtx', '--version']);
const nodeVersion = await firstOf('node', ['bin/trtx', '--version']);
const nodeDemo = await firstOf('node', ['bin/trtx', 'demo', '--out', 'demo-node']);
console.log(
  `command: npx tsx bench/first-run.ts${process.argv.slice(2).length ? ' ' + process.argv.slice(2).join(' ') : ''}   (node ${process.version}, ${availableParallelism()} cores)`,
);
console.log(`  clone: ${files} files of this working tree; ${setup}`);
console.log(
  `  first npx trtx demo (empty HOME): exit ${demo.status}, first output after ${s(demo.first)}, done in ${s(demo.total)}, longest silence ${s(demo.longestSilence)} (before "${demo.silenceAt}"), ${demo.lines} lines`,
);
console.log(
  `  second npx trtx demo (cached SDK and runner): exit ${again.status}, first output after ${s(again.first)}, done in ${s(again.total)}`,
);
console.log(
  `  npx's own start: npx trtx --version ${s(npxVersion)} against node bin/trtx --version ${s(nodeVersion)}; node bin/trtx demo (cached) first output after ${s(nodeDemo)}`,
);
if (flag('--npm-test')) {
  const t = await timedRun('npm', ['test'], { ...process.env, NO_COLOR: '1' });
  console.log(`  npm test: exit ${t.status}, ${s(t.total)}`);
}
if (flag('--keep')) console.log(`  kept ${work}`);
else rmSync(work, { recursive: true, force: true });
