// The command line hands the library each path the user typed resolved
// against the run's folder (Ctx.at), and shows it as typed again in what the
// run writes (src/cli/path-names.ts): in a folder of its own (an embedder, a
// test), not only in the process's, messages name `model.pte`, not
// `/the/run/folder/model.pte`.
import { describe, expect, it } from 'vitest';
import { PathNames } from '../src/cli/path-names.js';
import { runCli } from './helpers/cli.js';
import { tempDir } from './helpers/temp.js';

describe('what a run writes names the paths its user typed as typed', () => {
  it('a remembered path, one made from it, in JSON and control-escaped; never the tail of another path', () => {
    const names = new PathNames();
    names.note('/run/a.pte', 'a.pte');
    names.note('/run/out', './out');
    names.note('/run/ctl\u0007.pte', 'ctl\u0007.pte');
    expect(names.show('wrote /run/a.pte (1 KiB) and /run/a.pte.reference.json')).toBe('wrote a.pte (1 KiB) and a.pte.reference.json');
    expect(names.show('/run/out/x.pte: PTE_TRUNCATED')).toBe('./out/x.pte: PTE_TRUNCATED');
    expect(names.show(JSON.stringify({ file: '/run/ctl\u0007.pte' }))).toBe(JSON.stringify({ file: 'ctl\u0007.pte' }));
    expect(names.show('error: /run/ctl\\x07.pte')).toBe('error: ctl\\x07.pte');
    // Inside a longer path, or the start of a longer name, it is another file, and stays.
    expect(names.show('/mnt/run/a.pte and /elsewhere/run/a.pte')).toBe('/mnt/run/a.pte and /elsewhere/run/a.pte');
    expect(names.show('/run/out-2/x.pte /run/a.pte2 /run/out_b')).toBe('/run/out-2/x.pte /run/a.pte2 /run/out_b');
    // An absolute path typed as absolute is shown as it is.
    names.note('/abs/b.pte', '/abs/b.pte');
    expect(names.show('/abs/b.pte')).toBe('/abs/b.pte');
  });

  it('a refusal and a result in a run whose folder is not the process’s name the relative paths as typed', async () => {
    const cwd = tempDir('cli-names');
    const missing = await runCli(['inspect', 'missing.pte'], { cwd });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^error: INPUT_UNREADABLE: missing\.pte/m);
    expect(missing.stderr).not.toContain(cwd);
    const wrote = await runCli(['fixtures', 'ex', '--only', 'kv-decode-staged', '--json'], { cwd });
    expect(wrote.code, wrote.stderr).toBe(0);
    expect(wrote.stdout).not.toContain(cwd);
    expect(JSON.parse(wrote.stdout).dir).toBe('ex');
  });
});
