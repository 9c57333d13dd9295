// What `trtx demo` prints: every warning it counts, shown; a reduction that
// never claims more than happened; paths as the user can type them.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { percentLess, renderDemo, shownPath } from '../src/cli/commands/demo.js';
import { runDemo, type DemoResult } from '../src/demo/demo.js';
import { BUILD_TIMEOUT_MS, testRunner } from './helpers/runner.js';
import { tempDir } from './helpers/temp.js';

let demo: Promise<DemoResult> | undefined;
const smallDemo = () => (demo ??= testRunner().then((runner) => runDemo({ out: tempDir('demo'), scale: 'small', runner })));

describe('trtx demo output', () => {
  it('shows each warning and error the check counts', { timeout: BUILD_TIMEOUT_MS }, async () => {
    const r = await smallDemo();
    expect(r.check.warnings).toBeGreaterThan(0);
    expect(r.check.diagnostics.filter((d) => d.severity === 'warning')).toHaveLength(r.check.warnings);
    const text = renderDemo(r, { color: false, cwd: process.cwd() }).join('\n');
    for (const d of r.check.diagnostics) {
      expect(text).toContain(`${d.severity} ${d.code}  ${d.location}`);
      expect(text).toContain(d.message);
    }
  });

  it('rounds the staging reduction down: 99.9% while bytes remain, 100% only at zero', { timeout: BUILD_TIMEOUT_MS }, async () => {
    // The seed-scale decode step: 549.97 MiB + 550.46 MiB staged, 5.51 KiB + 512 KiB left.
    const seed = { before: { h2d: 576_683_008, d2h: 577_198_600 }, after: { h2d: 5_640, d2h: 524_288 } };
    const r = { ...(await smallDemo()), staging: seed };
    const line = renderDemo(r, { color: false, cwd: process.cwd() }).find((l) => l.includes('staging per decode step'))!;
    expect(line).toMatch(/\(99\.9% less\)$/);
    expect(percentLess(1000, 0)).toBe('100% less');
    expect(percentLess(100_000, 1)).toBe('99.9% less');
    expect(percentLess(2150, 104)).toBe('95.1% less');
    expect(percentLess(100, 150)).toBe('50.0% more');
    expect(percentLess(0, 0)).toBe('0% less');
  });

  it('prints paths under the working folder relative to it', () => {
    expect(shownPath('/home/u/trtx-demo/a.pte', '/home/u')).toBe('trtx-demo/a.pte');
    expect(shownPath('/elsewhere/a.pte', '/home/u')).toBe('/elsewhere/a.pte');
    expect(shownPath(join('/home/u', '..', 'v', 'a.pte'), '/home/u')).toBe('/home/v/a.pte');
  });
});
