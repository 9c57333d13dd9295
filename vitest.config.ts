import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Vitest runs the files it has no timing for (a fresh clone: CI) largest
 * first, and a few small files hold most of the suite's time, in child
 * processes: the real-ExecuTorch suites (test/real-*.test.ts; the zoo's three
 * files are three lines each, their body test/helpers/zoo-suite.ts), the
 * fuzzers (each a child or the runner under ASan), the managed Python
 * environment's tests (pip) and the CLI's build of the real runner. Started
 * last, they ended CI's npm test alone on one worker while the other idled
 * (issue 26). They go first, longest first (the greedy order that packs two
 * workers best), the rest after in vitest's order. The seconds are what each
 * took in npm test on 2 cores at stop 33 (vitest's JSON report, an idle hour):
 * only their order matters, so they need no update until a file's rank changes.
 */
const LONG_FILES: Record<string, number> = {
  'real-zoo-llama-like': 73,
  'real-zoo-real-size': 60,
  'real-export': 68,
  'real-zoo-decoders': 53,
  fuzz: 50,
  'real-zoo-encoders': 50,
  'real-python': 38,
  'structure-fuzz': 38,
  pyenv: 29,
  'runner-fuzz': 27,
  // Issue 43's real-size hostile shapes (child processes over sparse giants), timed alone on 2 cores.
  'giant-fuzz': 31,
  'report-amplification': 19,
  'standin-engine-extents': 15,
  'hostile-structure': 16,
  'real-runtime': 11,
  'runner-build': 9,
  'interrupt-compute': 9,
  'real-corpus': 4,
};
const longName = (f: TestSpecification) => /[/\\]test[/\\]([^/\\]+)\.test\.ts$/.exec(f.moduleId)?.[1] ?? '';

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const seconds = (f: TestSpecification) => LONG_FILES[longName(f)] ?? 0;
    const long = sorted.filter((f) => seconds(f) > 0).sort((a, b) => seconds(b) - seconds(a));
    return [...long, ...sorted.filter((f) => seconds(f) === 0)];
  }
}

export default defineConfig({
  test: {
    // Each run gets a private TMPDIR and fails when a test leaves anything in it.
    globalSetup: ['test/global-temp-dir.ts'],
    // Vitest's default is one worker fewer than the CPUs: a single worker on
    // a 2-core machine, which then runs every file in turn while most of
    // them wait on a child process (Python importing torch, pip, the native
    // runner, the CLI). Two files at a time at least keep both cores busy.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Hooks remove temp folders holding whole virtual environments (pyenv,
    // the zoo): on a loaded 2-core machine that alone passed vitest's 10 s.
    hookTimeout: 60_000,
    sequence: { sequencer: LongestFirst },
  },
});
