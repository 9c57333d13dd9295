// `trtx rewrite -o OUT` carries eager PyTorch's reference outputs along:
// IN.reference.json beside the input becomes OUT.reference.json beside the
// output (a rewrite does not change what the program computes), written
// atomically right after the program, said in text and --json; with
// --in-place there is nothing to carry; an input without one removes OUT's
// stale one; a write that fails or is interrupted leaves neither the copy nor
// its temporary file.
import { describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { kvDecoder } from '../src/examples/catalogue.js';
import { runPipeline } from '../src/pipeline/run.js';
import { tracked } from '../src/util/cleanup.js';
import { stageSidecar } from '../src/util/sidecar-copy.js';
import { runCli } from './helpers/cli.js';
import { validate } from './helpers/json-schema.js';
import { tempDir } from './helpers/temp.js';

const root = tempDir('rewrite-reference');
let n = 0;

/** A folder of its own holding a staged KV decoder and, unless `reference` is null, a reference file beside it. */
async function folder(reference: string | null = '{"recorded": "eager outputs"}\n'): Promise<{ dir: string; input: string }> {
  const dir = join(root, `case-${n++}`);
  mkdirSync(dir);
  const input = join(dir, 'model.pte');
  await writeFixture(input, kvDecoder());
  if (reference !== null) writeFileSync(`${input}.reference.json`, reference);
  return { dir, input };
}

const temporaries = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.tmp'));

const REWRITE_SCHEMA = JSON.parse(readFileSync(new URL('../schemas/rewrite.schema.json', import.meta.url), 'utf8')) as Record<
  string,
  unknown
>;

describe.concurrent('trtx rewrite -o carries the reference outputs', () => {
  it('copies IN.reference.json to OUT.reference.json, byte for byte, and says so', async () => {
    const { dir, input } = await folder();
    const out = join(dir, 'zc.pte');
    const r = await runCli(['rewrite', input, '-o', out, '--zero-copy-kv']);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(`${out}.reference.json`, 'utf8')).toBe(readFileSync(`${input}.reference.json`, 'utf8'));
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe(
      `reference: ${out}.reference.json (eager PyTorch's outputs, copied from ${input}.reference.json: the rewrite leaves what the program computes unchanged)`,
    );
    expect(temporaries(dir)).toEqual([]);
  });

  it('--json names the copy and its source, valid against schemas/rewrite.schema.json', async () => {
    const { dir, input } = await folder();
    const out = join(dir, 'zc.pte');
    const r = await runCli(['rewrite', input, '-o', out, '--zero-copy-kv', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(doc).toMatchObject({ reference: { path: `${out}.reference.json`, source: `${input}.reference.json` }, reference_removed: null });
    expect(validate(REWRITE_SCHEMA, doc)).toEqual([]);
  });

  it('--in-place leaves the reference beside the program as it is: nothing to carry', async () => {
    const { input } = await folder();
    const before = readFileSync(`${input}.reference.json`, 'utf8');
    const r = await runCli(['rewrite', input, '--in-place', '--budget', '8GiB', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ reference: null, reference_removed: null });
    expect(readFileSync(`${input}.reference.json`, 'utf8')).toBe(before);
  });

  it('an input without reference outputs removes the stale ones of the program OUT held before, and says so', async () => {
    const { dir, input } = await folder(null);
    const out = join(dir, 'zc.pte');
    writeFileSync(`${out}.reference.json`, '{"recorded": "another program"}\n');
    const r = await runCli(['rewrite', input, '-o', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(`${out}.reference.json`)).toBe(false);
    expect(r.stdout).toContain(
      `removed ${out}.reference.json: it belonged to the program ${out} held before; ${input} has no reference outputs beside it`,
    );
    // Nothing beside either: nothing said, nothing written.
    const quiet = await runCli(['rewrite', input, '-o', join(dir, 'again.pte'), '--json']);
    expect(JSON.parse(quiet.stdout)).toMatchObject({ reference: null, reference_removed: null });
    expect(existsSync(join(dir, 'again.pte.reference.json'))).toBe(false);
  });

  it('a write that fails leaves no copy and no temporary file', async () => {
    const { dir, input } = await folder();
    const out = join(dir, 'zc.pte');
    const aborted = runPipeline(input, {
      request: { zeroCopyKv: { strict: false } },
      output: {
        path: out,
        command: 'test',
        signal: AbortSignal.abort(),
        sidecars: [{ source: `${input}.reference.json`, target: `${out}.reference.json` }],
      },
    });
    await expect(aborted).rejects.toMatchObject({ code: 'WRITE_ABORTED' });
    expect(existsSync(out)).toBe(false);
    expect(existsSync(`${out}.reference.json`)).toBe(false);
    expect(temporaries(dir)).toEqual([]);
  });
});

describe('a staged copy', () => {
  it('is registered for the interrupt cleanup until it is published or discarded', async () => {
    const { dir, input } = await folder();
    const target = join(dir, 'copy.reference.json');
    const staged = await stageSidecar({ source: `${input}.reference.json`, target });
    const [tmp] = temporaries(dir);
    expect(tmp).toMatch(/^\.copy\.reference\.json\.[0-9]+-[0-9a-f]{12}\.tmp$/);
    // Ctrl-C now removes it (src/util/cleanup.ts removes every registered path).
    expect(tracked().paths).toContain(join(dir, tmp));
    await staged.discard();
    expect(temporaries(dir)).toEqual([]);
    expect(tracked().paths).not.toContain(join(dir, tmp));
    expect(existsSync(target)).toBe(false);

    const again = await stageSidecar({ source: `${input}.reference.json`, target });
    expect(await again.publish()).toMatchObject({ action: 'copied' });
    expect(tracked().paths.filter((p) => p.startsWith(dir))).toEqual([]);
    expect(readFileSync(target, 'utf8')).toBe(readFileSync(`${input}.reference.json`, 'utf8'));
  });
});
