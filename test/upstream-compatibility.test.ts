// docs/upstream-compatibility.md, row by row. The rows are read from the doc:
// a row without a case here, or a case without a row, fails, and each case's
// verdict must be the one its "trtx does" cell states (accepts, warns `CODE`,
// refuses `CODE`). Blob rows run through the TypeScript reader and the native
// runner's parser; spec rows through decodeCompileSpecs; export rows through
// the bridge and its named test doubles.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { VECTORS_PATH, type BlobVector } from '../fixtures/blob-vectors.js';
import { writeFixture } from '../src/examples/builder.js';
import { kvDecoder } from '../src/examples/kv-decoder.js';
import { trtSingle } from '../src/examples/programs.js';
import { runBridge } from '../src/bridge/run.js';
import { buildCheckContext } from '../src/checks/context.js';
import { checkTensorRT } from '../src/checks/tensorrt.js';
import { ScalarType } from '../src/pte/model.js';
import { exportModel } from '../src/export/export.js';
import { parseBlob } from '../src/tensorrt/blob.js';
import { decodeCompileSpecs } from '../src/tensorrt/compile-specs.js';
import { doubleEnv, exportRequest, MODELS_DIR, PYTHON, readCalls, REPO, workspace } from './helpers/bridge.js';
import { pteOf } from './helpers/memory-pte.js';
import { BUILD_TIMEOUT_MS, testRunner } from './helpers/runner.js';
import { tempDir } from './helpers/temp.js';
import { codeOf } from './helpers/refusal.js';

interface Verdict {
  verdict: 'accepts' | 'warns' | 'refuses';
  code?: string;
  /** Further text the cell must hold (what was observed beyond the verdict). */
  says?: string;
}

const DOC = join(REPO, 'docs', 'upstream-compatibility.md');

/** Row id -> the "trtx does" cell, from the doc's one table. */
function docRows(): Map<string, string> {
  const rows = new Map<string, string>();
  const lines = readFileSync(DOC, 'utf8').split('\n');
  const header = lines.findIndex((l) => l.startsWith('| id |'));
  const cols = lines[header].split('|').map((c) => c.trim());
  const trtxCol = cols.indexOf('trtx does');
  expect(trtxCol).toBeGreaterThan(0);
  for (const l of lines.slice(header + 2)) {
    if (!l.startsWith('|')) break;
    const cells = l.split(/(?<!\\)\|/).map((c) => c.trim());
    const id = /^`([a-z0-9-]+)`$/.exec(cells[1])?.[1];
    expect(id, `row id in: ${l}`).toBeDefined();
    expect(rows.has(id!), `row ${id} twice`).toBe(false);
    expect(cells.length, `row ${id}: cell count`).toBe(cols.length);
    rows.set(id!, cells[trtxCol]);
  }
  return rows;
}

// ---------------------------------------------------------------------------
// Blob rows: each names the shared vectors that are its input.

const vectors = new Map((JSON.parse(readFileSync(VECTORS_PATH, 'utf8')) as { vectors: BlobVector[] }).vectors.map((v) => [v.name, v]));

const BLOB_ROWS: Record<string, string[]> = {
  'blob-real-export': ['ok_tr01_written', 'ok_tr02_kv_cache_written'],
  'blob-typed-bindings': ['ok_typed_bindings', 'ok_negative_shape_dim'],
  'blob-empty-bindings': ['ok_tr01_empty_bindings_empty_engine'],
  'blob-escaped-name': ['escaped_name_non_ascii', 'escaped_name_control'],
  'blob-escaped-alias': ['escaped_alias_side', 'escaped_key'],
  'blob-escapes-upstream-decodes': ['ok_escapes_upstream_decodes'],
  'blob-escapes-in-unread-fields': ['ok_escapes_in_fields_upstream_skips'],
  'blob-raw-utf8-name': ['ok_raw_utf8_name'],
  'blob-aliases-before-bindings': ['key_order_aliases_before_bindings'],
  'blob-device-id-before-bindings': ['key_order_device_id_before_bindings'],
  'blob-keys-reordered-nothing-lost': ['ok_keys_in_other_order_nothing_lost', 'ok_device_id_between_bindings_and_aliases'],
  'blob-key-text-in-value': ['upstream_misread_key_text_as_value'],
  'blob-alias-named-like-a-key': ['upstream_misread_alias_named_device_id'],
  'blob-integer-as-float': ['json_device_id_exponent', 'json_binding_shape_float_literal'],
  'blob-alias-without-kind': ['ok_alias_without_kind', 'ok_alias_kind_empty'],
  'blob-truncated': ['truncated_empty', 'truncated_31_bytes'],
  'blob-magic': ['magic_tr03', 'magic_lowercase'],
  'blob-metadata-in-header': ['metadata_offset_zero', 'metadata_offset_31'],
  'blob-engine-unaligned': ['engine_offset_unaligned'],
  'blob-metadata-extent': ['metadata_size_past_end_by_one', 'metadata_offset_u32_max_wraps'],
  'blob-engine-extent-wraps': ['engine_size_wraps_u64', 'engine_offset_near_u32_max'],
  'blob-overlap': ['metadata_overlaps_engine'],
  'blob-json-invalid': ['json_truncated', 'json_trailing_garbage'],
  'blob-json-repeated-key': ['json_repeated_key', 'json_repeated_key_in_binding'],
  'blob-json-raw-control': ['json_raw_control_in_name'],
  'blob-json-wrong-type': ['json_binding_is_input_missing', 'json_binding_name_number'],
  'blob-device-id-out-of-range': ['json_device_id_too_large'],
  'blob-name-empty': ['binding_name_empty'],
  'blob-name-nul': ['binding_name_only_nul', 'binding_names_differ_after_nul'],
  'blob-binding-duplicate': ['binding_duplicate_input_and_output'],
  'blob-alias-missing-side': ['alias_output_missing', 'alias_input_missing'],
  'blob-alias-unknown-binding': ['alias_output_unknown'],
  'blob-alias-direction': ['alias_sides_swapped'],
  'blob-alias-duplicate-output': ['alias_output_repeated_other_input'],
  'blob-alias-duplicate-input': ['alias_input_repeated'],
  'blob-alias-kind': ['alias_kind_unknown'],
  'blob-alias-in-tr01': ['alias_in_tr01_written_form'],
};

function tsVerdict(hex: string): string {
  return codeOf(() => parseBlob(new Uint8Array(Buffer.from(hex, 'hex'))));
}

/** One runner process for every blob row's vectors. */
async function nativeVerdicts(names: string[]): Promise<Map<string, string>> {
  const file = join(tempDir('compat'), 'vectors.json');
  writeFileSync(file, JSON.stringify({ version: 1, vectors: names.map((n) => vectors.get(n)!) }));
  const run = spawnSync(await testRunner(), ['parse-blob-vectors', file], { encoding: 'utf8', maxBuffer: 16 << 20 });
  const report = JSON.parse(run.stdout) as { vectors: { name: string; actual: string }[] };
  return new Map(report.vectors.map((v) => [v.name, v.actual]));
}

// ---------------------------------------------------------------------------
// Compile-spec rows: each is a list of spec lists that must all get one verdict.

const enc = (s: string) => new TextEncoder().encode(s);
const one = (key: string, ...values: string[]) => values.map((v) => [{ key, value: enc(v) }]);

const SPEC_ROWS: Record<string, { key: string; value: Uint8Array }[][]> = {
  'spec-target-device-canonical': one('target_device', 'cuda:0', 'cuda:7', 'cuda:127'),
  'spec-target-device-bare': one('target_device', 'cuda'),
  'spec-target-device-case': one('target_device', 'CUDA:0', 'Cuda:1'),
  'spec-target-device-space': one('target_device', ' cuda:0', 'cuda:0\n', 'cuda: 1', 'cuda:+1', 'cuda:01', 'cuda:1_0'),
  'spec-target-device-cpu': one('target_device', 'cpu', 'cpu:0'),
  'spec-target-device-negative': one('target_device', 'cuda:-1'),
  'spec-target-device-past-byte': one('target_device', 'cuda:128', 'cuda:99999'),
  'spec-target-device-unknown': one('target_device', 'gpu0', 'cuda:', 'cuda:0:1', 'cuda :0'),
  'spec-target-device-non-ascii': one('target_device', 'cuda:\u0661', '\u00a0cuda:0'),
  'spec-repeated-key': [
    [
      { key: 'target_device', value: enc('cuda:0') },
      { key: 'target_device', value: enc('cuda:0') },
    ],
    [
      { key: 'other_flag', value: enc('a') },
      { key: 'other_flag', value: enc('b') },
    ],
  ],
  'spec-zero-copy-kv-repeated-differs': [
    [
      { key: 'zero_copy_kv', value: enc('["output0"]') },
      { key: 'zero_copy_kv', value: enc('["output1"]') },
    ],
  ],
  'spec-zero-copy-kv-invalid': one('zero_copy_kv', '[]', 'output0', '[""]', '["a","a"]'),
  'spec-budget-canonical': one('weight_streaming_budget', '0', '8589934592', '9223372036854775807'),
  'spec-budget-minus-zero': one('weight_streaming_budget', '-0', '-000'),
  'spec-budget-leading-zeros': one('weight_streaming_budget', '007'),
  'spec-budget-invalid': one('weight_streaming_budget', '8GiB', '-1', '+8', ' 8', '', '9223372036854775808'),
  'spec-budget-repeated': [
    [
      { key: 'weight_streaming_budget', value: enc('1') },
      { key: 'weight_streaming_budget', value: enc('1') },
    ],
  ],
};

function specVerdict(specs: { key: string; value: Uint8Array }[]): Verdict {
  const { diagnostics } = decodeCompileSpecs(specs);
  const error = diagnostics.find((d) => d.severity === 'error');
  if (error) return { verdict: 'refuses', code: error.code };
  if (diagnostics.length) return { verdict: 'warns', code: diagnostics[0].code };
  return { verdict: 'accepts' };
}

// ---------------------------------------------------------------------------
// Export rows: the bridge against its named doubles.

async function exportPath(knobs: Record<string, string>): Promise<Verdict> {
  const ws = workspace();
  try {
    const program = join(ws.dir, 'exported-by-double.pte');
    await writeFixture(program, kvDecoder());
    const summary = await exportModel({
      env: process.env,
      model: ws.file('model.pt2'),
      output: join(ws.dir, 'model.pte'),
      zeroCopyKv: true,
      // The rows are about the zero-copy path; the doubles' torch runs no eager model.
      referenceSteps: 0,
      bridgeEnv: { ...doubleEnv(ws, knobs), TRTX_DOUBLE_PROGRAM: program },
    });
    const warned = summary.warnings.find((w) => /^[A-Z_]+: /.test(w));
    const path = `path \`${summary.bridge.zero_copy_kv_path}\``;
    return warned ? { verdict: 'warns', code: warned.split(':')[0], says: path } : { verdict: 'accepts', says: path };
  } finally {
    rmSync(ws.dir, { recursive: true, force: true });
  }
}

const OTHER_ROWS: Record<string, () => Promise<Verdict>> = {
  'export-zero-copy-upstream': () => exportPath({}),
  'export-zero-copy-staged': () => exportPath({ TRTX_DOUBLE_FEATURES: 'no_zero_copy' }),
  'export-mapping-device': async () => {
    const ws = workspace();
    try {
      await runBridge(exportRequest(ws, { model: `${MODELS_DIR}/prefill_decode.py:make` }), { python: PYTHON, env: doubleEnv(ws) });
      const devices = readCalls(ws)
        .filter((c) => c.call === 'torch_tensorrt.dynamo.export')
        .flatMap((c) => (c.args.arg_inputs as { device: string }[]).map((t) => t.device));
      expect(devices.length).toBe(2);
      return { verdict: 'accepts', says: [...new Set(devices)].map((d) => `\`${d}\``).join(', ') };
    } finally {
      rmSync(ws.dir, { recursive: true, force: true });
    }
  },
};

// ---------------------------------------------------------------------------

function expectCell(id: string, cell: string, v: Verdict): void {
  expect(cell.startsWith(v.verdict), `${id}: the doc says "${cell}", trtx ${v.verdict}`).toBe(true);
  if (v.code) expect(cell, `${id}: code`).toContain(`\`${v.code}\``);
  else expect(cell, `${id}: no code expected`).not.toMatch(/`[A-Z][A-Z0-9_]+`/);
  if (v.says) expect(cell, `${id}: observed`).toContain(v.says);
}

const rows = docRows();

describe('docs/upstream-compatibility.md', () => {
  it('every row has a case and every case a row', () => {
    const cases = [...Object.keys(BLOB_ROWS), ...Object.keys(SPEC_ROWS), ...Object.keys(OTHER_ROWS)];
    expect(new Set(cases).size).toBe(cases.length);
    expect([...rows.keys()].sort()).toEqual(cases.sort());
  });

  describe('blob rows: the TypeScript reader and the native parser', () => {
    let native = new Map<string, string>();
    beforeAll(async () => {
      native = await nativeVerdicts(Object.values(BLOB_ROWS).flat());
    }, BUILD_TIMEOUT_MS);

    it.each(Object.entries(BLOB_ROWS))('%s', (id, names) => {
      const outcomes = names.map((n) => {
        expect(vectors.has(n), `vector ${n}`).toBe(true);
        const ts = tsVerdict(vectors.get(n)!.hex);
        expect(native.get(n), `${n}: native parser`).toBe(ts);
        return ts;
      });
      expect(new Set(outcomes).size, `${id}: one verdict for ${names.join(', ')}`).toBe(1);
      const code = outcomes[0];
      expectCell(id, rows.get(id) ?? '', code === 'ok' ? { verdict: 'accepts' } : { verdict: 'refuses', code });
    });

    it('blob-typed-bindings: a recorded type is compared with the call, names only are not', async () => {
      const edit = (p: Parameters<NonNullable<Parameters<typeof pteOf>[1]>>[0]) => {
        for (const c of p.executionPlan[0].chains[0].instructions) {
          if (c.type !== 'DelegateCall') continue;
          const v = p.executionPlan[0].values[c.args[1]];
          if (v.type === 'Tensor') v.tensor.scalarType = ScalarType.HALF;
        }
      };
      const typed = await buildCheckContext(pteOf(trtSingle({ typedBindings: true }), edit));
      expect(checkTensorRT(typed.ctx).map((d) => d.code)).toEqual(['TRT_ARG_DTYPE']);
      const namesOnly = await buildCheckContext(pteOf(trtSingle(), edit));
      expect(checkTensorRT(namesOnly.ctx)).toEqual([]);
    });
  });

  it.each(Object.entries(SPEC_ROWS))('%s', (id, inputs) => {
    const verdicts = inputs.map(specVerdict);
    for (const v of verdicts) expect(v, `${id}: one verdict for every spelling`).toEqual(verdicts[0]);
    expectCell(id, rows.get(id) ?? '', verdicts[0]);
  });

  it.each(Object.entries(OTHER_ROWS))('%s', { timeout: 120_000 }, async (id, run) => {
    expectCell(id, rows.get(id) ?? '', await run());
  });
});
