// `trtx check --format sarif`: every broken fixture of the catalogue (and a
// clean and a warned program) gives a SARIF 2.1.0 log that validates against
// the OASIS schema (test/helpers/sarif-schema.ts), with one result per
// diagnostic, the code as rule id, the hint and the docs in the rule's help,
// and the file plus the logical path as the location.
import { beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { writeFixture } from '../src/examples/builder.js';
import { CATALOGUE } from '../src/examples/catalogue.js';
import { multiEngine, trtSingle } from '../src/examples/programs.js';
import { readFileSync } from 'node:fs';
import { artifactUri, toSarif } from '../src/report/sarif.js';
import { TRTX_VERSION } from '../src/util/version.js';
import { runCli } from './helpers/cli.js';
import { sarifValidator } from './helpers/sarif-schema.js';
import { tempDir } from './helpers/temp.js';

const dir = tempDir('sarif');

const validate = sarifValidator();
const broken = CATALOGUE.filter((e) => e.expect?.sound === false);

beforeAll(async () => {
  for (const e of broken) await writeFixture(join(dir, e.file), e.build());
  await writeFixture(join(dir, 'clean.pte'), trtSingle());
  await writeFixture(join(dir, 'warned.pte'), multiEngine(3));
}, 120_000);

async function sarifOf(file: string, extra: string[] = []) {
  const r = await runCli(['check', file, '--format', 'sarif', ...extra]);
  const json = await runCli(['check', file, '--json', ...extra]);
  return { code: r.code, log: JSON.parse(r.stdout), check: JSON.parse(json.stdout), jsonCode: json.code };
}

// The cases go at once (runCli's runs share nothing): each reads the shared inputs or writes files of its own names.
describe.concurrent('check --format sarif', () => {
  it('the validator refuses what SARIF 2.1.0 refuses (it is not vacuous)', async () => {
    const { log } = await sarifOf(join(dir, 'broken-swapped-caches.pte'));
    expect(validate(log)).toBe(true);
    const bad = structuredClone(log);
    bad.runs[0].results[0].level = 'fatal';
    expect(validate(bad)).toBe(false);
    const noRegionStart = structuredClone(log);
    noRegionStart.runs[0].results[0].locations[0].physicalLocation.region = { endLine: 1 };
    expect(validate(noRegionStart)).toBe(false);
    const badVersion = { ...structuredClone(log), version: '2.0.0' };
    expect(validate(badVersion)).toBe(false);
  });

  it.each(broken.map((e) => e.file))('%s: a valid log with one result per diagnostic', async (name) => {
    const { code, log, check, jsonCode } = await sarifOf(join(dir, name));
    expect(validate(log), JSON.stringify(validate.errors?.slice(0, 3))).toBe(true);
    expect(code).toBe(jsonCode);
    const run = log.runs[0];
    expect(run.tool.driver.name).toBe('trtx');
    expect(run.results).toHaveLength(check.diagnostics.length);
    expect(run.results.length).toBeGreaterThan(0);
    check.diagnostics.forEach((d: any, i: number) => {
      const r = run.results[i];
      expect(r.ruleId).toBe(d.code);
      expect(run.tool.driver.rules[r.ruleIndex].id).toBe(d.code);
      expect(r.level).toBe({ error: 'error', warning: 'warning', info: 'note' }[d.severity as string]);
      expect(r.message.text).toContain(d.message);
      const loc = r.locations[0];
      expect(loc.physicalLocation.artifactLocation.uri).toBe(artifactUri(join(dir, name)));
      expect(loc.logicalLocations[0].fullyQualifiedName).toBe(d.location);
      // The logical location chain: method > delegate > binding, each step a parent of the next.
      const chain: string[] = [];
      for (let li: number | undefined = loc.logicalLocations[0].index; li !== undefined; li = run.logicalLocations[li].parentIndex)
        chain.unshift(run.logicalLocations[li].name);
      expect(chain.join(' > ')).toBe(d.location);
      const rule = run.tool.driver.rules[r.ruleIndex];
      expect(rule.help.text).toContain(d.hint);
      expect(rule.help.text).toMatch(d.code.startsWith('ZC_') ? /docs\/zero-copy-kv\.md/ : /docs\/commands\/check\.md/);
    });
    expect(new Set(run.tool.driver.rules.map((x: any) => x.id)).size).toBe(run.tool.driver.rules.length);
  });

  it('a binding-level finding is located method > delegate > binding', async () => {
    const { log } = await sarifOf(join(dir, 'broken-swapped-caches.pte'));
    const run = log.runs[0];
    const r = run.results.find((x: { ruleId: string }) => x.ruleId === 'ZC_SWAPPED_CACHE');
    const leaf = run.logicalLocations[r.locations[0].logicalLocations[0].index];
    expect(leaf).toMatchObject({ name: 'binding b_layers_0_attn_k_cache', kind: 'parameter' });
    const del = run.logicalLocations[leaf.parentIndex];
    expect(del).toMatchObject({ name: 'delegate 0 (TensorRTBackend)', kind: 'module' });
    expect(run.logicalLocations[del.parentIndex]).toMatchObject({ name: 'decode', kind: 'function' });
  });

  it('a clean program: an empty, valid log and exit 0; a warning: level warning, exit 0 (1 with --strict)', async () => {
    const clean = await sarifOf(join(dir, 'clean.pte'));
    expect(validate(clean.log)).toBe(true);
    expect(clean.log.runs[0].results).toEqual([]);
    expect(clean.code).toBe(0);
    const warned = await sarifOf(join(dir, 'warned.pte'));
    expect(validate(warned.log)).toBe(true);
    expect(warned.log.runs[0].results.map((r: any) => [r.ruleId, r.level])).toEqual([['TRT_BUDGET_MULTI_ENGINE', 'warning']]);
    expect(warned.code).toBe(0);
    const strict = await sarifOf(join(dir, 'warned.pte'), ['--strict']);
    expect(strict.code).toBe(1);
    expect(strict.log.runs[0].invocations[0].exitCode).toBe(1);
  });

  it('an unparseable container is one error result, still a valid log', async () => {
    const r = await runCli(['check', join(dir, 'broken-blob-magic.pte'), '--format', 'sarif']);
    expect(validate(JSON.parse(r.stdout))).toBe(true);
    const log = toSarif({
      file: 'x.pte',
      exitCode: 1,
      diagnostics: [
        { severity: 'error', code: 'PTE_TRUNCATED', method: null, delegate: null, location: '', message: 'file ended', hint: 're-export' },
      ],
    });
    expect(validate(log)).toBe(true);
    expect((log as any).runs[0].results[0].locations[0].logicalLocations[0].fullyQualifiedName).toBe('program');
  });

  it('file names become URI references: relative stays relative and percent-encoded, absolute is a file URI', () => {
    expect(artifactUri('models/my model#1.pte')).toBe('models/my%20model%231.pte');
    expect(artifactUri('/tmp/a b.pte')).toBe('file:///tmp/a%20b.pte');
    const log = toSarif({ file: 'models/my model#1.pte', exitCode: 0, diagnostics: [] });
    expect(validate(log)).toBe(true);
  });

  it('names the tool with the package version, as --version does', async () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect(TRTX_VERSION).toBe(pkg.version);
    expect((await runCli(['--version'])).stdout.trim()).toBe(pkg.version);
    const log = toSarif({ file: 'a.pte', exitCode: 0, diagnostics: [] }) as any;
    expect(log.runs[0].tool.driver.version).toBe(pkg.version);
  });

  it('--json with another --format is a usage error; --format json is --json', async () => {
    const both = await runCli(['check', join(dir, 'clean.pte'), '--json', '--format', 'sarif']);
    expect(both.code).toBe(2);
    expect(JSON.parse(both.stdout).error.code).toBe('USAGE');
    const asJson = await runCli(['check', join(dir, 'clean.pte'), '--format', 'json']);
    expect(JSON.parse(asJson.stdout).schema).toBe('trtx.check/1');
    const missing = await runCli(['check', join(dir, 'missing.pte'), '--format', 'json']);
    expect(missing.code).toBe(2);
    expect(JSON.parse(missing.stdout).error.code).toBe('INPUT_UNREADABLE');
    const bad = await runCli(['check', join(dir, 'clean.pte'), '--format', 'xml']);
    expect(bad.code).toBe(2);
  });
});
