// Shared helpers for the benchmark scripts: run a command, time it, read its
// peak RSS (GNU time), and take medians. Benchmarks report ratios against a
// baseline measured in the same run, since absolute times on shared machines move.
import { spawnSync } from 'node:child_process';

export interface Run {
  seconds: number;
  maxRssKiB: number;
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs argv under /usr/bin/time -f, returning wall seconds and peak RSS. */
export function timed(argv: string[], env: NodeJS.ProcessEnv = process.env): Run {
  const r = spawnSync('/usr/bin/time', ['-f', '%e %M', ...argv], { encoding: 'utf8', env, maxBuffer: 64 * 1024 * 1024 });
  const lines = r.stderr.trim().split('\n');
  const [secs, rss] = lines[lines.length - 1].split(' ').map(Number);
  return { seconds: secs, maxRssKiB: rss, status: r.status, stdout: r.stdout, stderr: lines.slice(0, -1).join('\n') };
}

/** Wall time with sub-10ms resolution (GNU time prints centiseconds). */
export function wall(argv: string[], env: NodeJS.ProcessEnv = process.env): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(argv[0], argv.slice(1), { stdio: 'ignore', env });
  if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}`);
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

/** CPU and wall seconds of `python -c CODE` (GNU time). */
export function cpuOf(python: string, code: string): { cpu: number; wall: number } {
  const r = spawnSync('/usr/bin/time', ['-f', '%e %U %S', python, '-c', code], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`python -c ${code} exited ${r.status}: ${r.stderr}`);
  const last = r.stderr.trim().split('\n').at(-1) ?? '';
  const [wall, user, sys] = last.split(' ').map(Number);
  return { cpu: (user ?? NaN) + (sys ?? NaN), wall: wall ?? NaN };
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

export const MiB = 1024 * 1024;
export const GiB = 1024 * MiB;
export const fmtMs = (s: number) => `${(s * 1000).toFixed(1)} ms`;

/** Rebuilds the CLI bundle so the timed commands run what they would for a user. */
export function ensureBundle(): void {
  const r = spawnSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error('npm run build failed');
}

/** The value after `--name` on the command line, or `dflt` when the flag is absent. */
export function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(name);
  if (i < 0) return dflt;
  const value = process.argv[i + 1];
  if (value === undefined || value.startsWith('--')) throw new Error(`${name} needs a value`);
  return value;
}
