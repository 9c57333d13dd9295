// Temporary folders for tests that remove themselves: every folder made here
// is deleted after the test file's last test, passed or failed, so a test
// run leaves the temp dir as it found it (test/global-temp-dir.ts checks).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const made: string[] = [];

afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh folder `$TMPDIR/trtx-<prefix>-XXXXXX`, removed when the test file ends. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `trtx-${prefix}-`));
  made.push(dir);
  return dir;
}
