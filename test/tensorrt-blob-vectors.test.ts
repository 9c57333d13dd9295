// The shared blob vectors (test/vectors/tensorrt-blob.json, written by
// fixtures/blob-vectors.ts; the native runner's parser runs the same file):
// the committed file is current, and every refusal reaches its code at its location.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BLOB_ERROR_CODES, parseBlob, readBlobFromRange } from '../src/tensorrt/blob.js';
import { VECTORS_PATH, buildVectors, renderVectors, type BlobVector } from '../fixtures/blob-vectors.js';
import { expectRangesAvoidEngine, outcome, outcomeAsync, recorder } from './helpers/blob-outcome.js';

const vectorFile = JSON.parse(readFileSync(VECTORS_PATH, 'utf8')) as { version: number; vectors: BlobVector[] };

// Where each refusal vector must point. Kept here, not in the generator, so a
// change to a location is a visible test change.
const LOCATIONS: Record<string, string> = {
  truncated_empty: 'header',
  truncated_31_bytes: 'header',
  magic_tr03: 'header.magic',
  magic_lowercase: 'header.magic',
  magic_zero: 'header.magic',
  metadata_offset_zero: 'header.metadata_offset',
  metadata_offset_31: 'header.metadata_offset',
  engine_offset_unaligned: 'header.engine_offset',
  engine_offset_odd: 'header.engine_offset',
  metadata_size_past_end_by_one: 'header.metadata_size',
  metadata_size_u32_max: 'header.metadata_size',
  metadata_offset_u32_max_wraps: 'header.metadata_size',
  metadata_offset_past_end: 'header.metadata_size',
  engine_size_past_end_by_one: 'header.engine_size',
  engine_size_u64_max: 'header.engine_size',
  engine_size_wraps_u64: 'header.engine_size',
  engine_offset_near_u32_max: 'header.engine_size',
  engine_offset_past_end_size_zero: 'header.engine_size',
  metadata_overlaps_engine: 'header.engine_offset',
  metadata_past_engine: 'header.engine_offset',
  metadata_past_empty_engine: 'header.engine_offset',
  json_empty: 'metadata',
  json_not_json: 'metadata',
  json_truncated: 'metadata',
  json_trailing_garbage: 'metadata',
  json_trailing_nul: 'metadata',
  json_bom: 'metadata',
  json_invalid_utf8: 'metadata',
  json_raw_control_in_name: 'metadata',
  json_raw_nul_in_name: 'metadata',
  json_repeated_key: 'metadata',
  json_repeated_key_in_binding: 'metadata',
  json_single_quotes: 'metadata',
  json_nan: 'metadata',
  json_lone_surrogate_escape: 'metadata',
  json_nesting_too_deep: 'metadata',
  json_root_list: 'metadata',
  json_io_bindings_missing: 'metadata.io_bindings',
  json_io_bindings_object: 'metadata.io_bindings',
  json_binding_not_object: 'metadata.io_bindings[0]',
  json_binding_name_missing: 'metadata.io_bindings[0].name',
  json_binding_name_number: 'metadata.io_bindings[0].name',
  json_binding_is_input_missing: 'metadata.io_bindings[0].is_input',
  json_binding_is_input_string: 'metadata.io_bindings[0].is_input',
  json_binding_dtype_number: 'metadata.io_bindings[0].dtype',
  json_binding_shape_fraction: 'metadata.io_bindings[0].shape[0]',
  json_binding_shape_string: 'metadata.io_bindings[0].shape',
  json_aliased_io_object: 'metadata.aliased_io',
  json_alias_entry_not_object: 'metadata.aliased_io[0]',
  json_alias_output_number: 'metadata.aliased_io[0].output',
  json_alias_kind_number: 'metadata.aliased_io[0].kind',
  json_hardware_compatible_string: 'metadata.hardware_compatible',
  json_device_id_string: 'metadata.device_id',
  json_device_id_too_large: 'metadata.device_id',
  json_serialized_metadata_null: 'metadata.serialized_metadata',
  json_target_platform_list: 'metadata.target_platform',
  binding_name_empty: 'binding #1',
  binding_name_only_nul: 'binding "\\u0000"',
  binding_names_differ_after_nul: 'binding "y\\u0000a"',
  binding_name_trailing_nul: 'binding "x\\u0000"',
  binding_duplicate_outputs: 'binding y',
  binding_duplicate_inputs: 'binding x',
  binding_duplicate_input_and_output: 'binding x',
  binding_duplicate_escaped_vs_raw: 'binding x',
  alias_output_missing: 'aliased_io[0]',
  alias_input_missing: 'aliased_io[0]',
  alias_output_empty: 'aliased_io[0]',
  alias_second_entry_input_empty: 'aliased_io[1]',
  alias_output_unknown: 'aliased_io[0]',
  alias_input_unknown: 'aliased_io[0]',
  alias_output_with_nul: 'aliased_io[0]',
  alias_no_bindings: 'aliased_io[0]',
  alias_output_names_input: 'aliased_io[0]',
  alias_input_names_output: 'aliased_io[0]',
  alias_sides_swapped: 'aliased_io[0]',
  alias_entry_repeated: 'aliased_io[1]',
  alias_output_repeated_other_input: 'aliased_io[1]',
  alias_output_repeated_other_kind: 'aliased_io[1]',
  alias_input_repeated: 'aliased_io[1]',
  alias_kind_unknown: 'aliased_io[0]',
  alias_kind_uppercase: 'aliased_io[0]',
  alias_kind_bogus_case: 'aliased_io[0]',
  alias_in_tr01: 'aliased_io',
  alias_in_tr01_written_form: 'aliased_io',
  escaped_name_non_ascii: 'binding "caché"',
  escaped_name_control: 'binding "a\\nb"',
  escaped_key: 'binding x',
  escaped_alias_side: 'aliased_io[0]',
  key_order_aliases_before_bindings: 'metadata.aliased_io',
  key_order_device_id_before_bindings: 'metadata.device_id',
  upstream_misread_alias_named_device_id: 'metadata',
  upstream_misread_key_text_as_value: 'binding x',
  json_device_id_exponent: 'metadata.device_id',
  json_binding_shape_float_literal: 'metadata.io_bindings[0].shape[0]',
};

describe('shared blob vectors', () => {
  it('the committed file is what fixtures/blob-vectors.ts generates', () => {
    expect(readFileSync(VECTORS_PATH, 'utf8')).toBe(renderVectors(buildVectors()));
  });

  it('has version 1, unique names, and every refusal code at least once, plus TR01 and TR02 ok blobs', () => {
    expect(vectorFile.version).toBe(1);
    const names = vectorFile.vectors.map((v) => v.name);
    expect(new Set(names).size).toBe(names.length);
    const expects = new Set(vectorFile.vectors.map((v) => v.expect));
    for (const code of BLOB_ERROR_CODES) expect(expects, code).toContain(code);
    const okMagics = vectorFile.vectors.filter((v) => v.expect === 'ok').map((v) => v.hex.slice(0, 8));
    expect(okMagics).toContain('54523031');
    expect(okMagics).toContain('54523032');
  });

  it.each(vectorFile.vectors.map((v) => [v.name, v] as const))('%s', async (_name, v) => {
    const blob = new Uint8Array(Buffer.from(v.hex, 'hex'));
    const got = outcome(() => parseBlob(blob));
    expect(got.code).toBe(v.expect);
    if (v.expect !== 'ok') {
      expect(got.location).toBe(LOCATIONS[v.name]);
      expect(got.message.length).toBeGreaterThan(10);
    }

    // The range reader reaches the same verdict and never asks for the engine.
    const r = recorder(blob);
    const viaRange = await outcomeAsync(() => readBlobFromRange(r.read, blob.length));
    expect(viaRange).toBe(v.expect);
    expect(r.calls.length).toBeLessThanOrEqual(2);
    if (blob.length >= 32) {
      expect(r.calls[0]).toEqual([0, 32]);
      // The engine range as the header states it, valid or not.
      const dv = new DataView(blob.buffer, blob.byteOffset);
      const engine = { engineOffset: dv.getUint32(12, true), engineSize: dv.getBigUint64(16, true) };
      expectRangesAvoidEngine(r.calls, engine);
      if (v.expect === 'ok')
        expect(r.calls).toEqual([
          [0, 32],
          [dv.getUint32(4, true), dv.getUint32(8, true)],
        ]);
    } else {
      expect(r.calls).toEqual([]);
    }
  });

  it('every refusal vector has an expected location', () => {
    for (const v of vectorFile.vectors) if (v.expect !== 'ok') expect(LOCATIONS, v.name).toHaveProperty([v.name]);
  });
});
