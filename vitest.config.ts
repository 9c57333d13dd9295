import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Each run gets a private TMPDIR and fails when a test leaves anything in it.
    globalSetup: ['test/global-temp-dir.ts'],
  },
});
