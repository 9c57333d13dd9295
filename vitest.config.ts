import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

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
  },
});
