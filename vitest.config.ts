import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Vitest runs the files it has no timing for (a fresh clone: CI) largest
 * first. Some small files hold most of the suite's work in child processes:
 * the real-ExecuTorch suites (test/real-*.test.ts; the zoo's three files are
 * three lines each, their body test/helpers/zoo-suite.ts) and the CLI's build
 * of the real runner (test/runner-build.test.ts). Started last, they ended
 * CI's npm test alone; they go first, the rest in vitest's order.
 */
class ChildProcessWorkFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const heavy = (f: TestSpecification) => /[/\\]test[/\\](real-[^/\\]+|runner-build)\.test\.ts$/.test(f.moduleId);
    return [...sorted.filter(heavy), ...sorted.filter((f) => !heavy(f))];
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
    sequence: { sequencer: ChildProcessWorkFirst },
  },
});
