// The broken TensorRT blobs: a valid blob's bytes patched in one field
// (BlobFault; the layout is src/tensorrt/blob-format.ts's), so each of the
// parser's refusals has a program that reaches it, and one blob whose
// device_id disagrees with its compile spec.

import { renderBlob } from './builder.js';
import type { ProgramSpec } from './spec.js';
import { BLOB_HEADER_SIZE, ENGINE_ALIGNMENT, type BlobErrorCode } from '../tensorrt/blob.js';
import { cloneSpec, delegateOf, methodOf } from './spec-edit.js';
import { itemAt } from '../util/present.js';

export type BlobFault =
  | 'truncated'
  | 'magic'
  | 'metadata-in-header'
  | 'metadata-extent'
  | 'engine-extent'
  | 'overlap'
  | 'engine-align'
  | 'metadata-json'
  | 'binding-name-empty'
  | 'binding-name-nul'
  | 'binding-duplicate'
  | 'alias-missing-side'
  | 'alias-unknown-binding'
  | 'alias-direction'
  | 'alias-duplicate-output'
  | 'alias-duplicate-input'
  | 'alias-kind'
  | 'alias-in-tr01'
  | 'name-escaped'
  | 'key-order'
  | 'upstream-misread';

/** Each fault and the refusal a parser must give (src/tensorrt/blob.ts). */
export const BLOB_FAULTS: Record<BlobFault, BlobErrorCode> = {
  truncated: 'TRT_BLOB_TRUNCATED',
  magic: 'TRT_BLOB_MAGIC',
  'metadata-in-header': 'TRT_BLOB_METADATA_IN_HEADER',
  'metadata-extent': 'TRT_BLOB_METADATA_EXTENT',
  'engine-extent': 'TRT_BLOB_ENGINE_EXTENT',
  overlap: 'TRT_BLOB_OVERLAP',
  'engine-align': 'TRT_BLOB_ENGINE_ALIGN',
  'metadata-json': 'TRT_BLOB_METADATA_JSON',
  'binding-name-empty': 'TRT_BINDING_NAME_EMPTY',
  'binding-name-nul': 'TRT_BINDING_NAME_NUL',
  'binding-duplicate': 'TRT_BINDING_DUPLICATE',
  'alias-missing-side': 'TRT_ALIAS_MISSING_SIDE',
  'alias-unknown-binding': 'TRT_ALIAS_UNKNOWN_BINDING',
  'alias-direction': 'TRT_ALIAS_DIRECTION',
  'alias-duplicate-output': 'TRT_ALIAS_DUPLICATE_OUTPUT',
  'alias-duplicate-input': 'TRT_ALIAS_DUPLICATE_INPUT',
  'alias-kind': 'TRT_ALIAS_KIND',
  'alias-in-tr01': 'TRT_ALIAS_IN_TR01',
  'name-escaped': 'TRT_NAME_ESCAPED',
  'key-order': 'TRT_BLOB_KEY_ORDER',
  'upstream-misread': 'TRT_BLOB_UPSTREAM_MISREAD',
};

const td = new TextDecoder();
const te = new TextEncoder();

function header(blob: Uint8Array) {
  const dv = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  return {
    dv,
    metadataOffset: dv.getUint32(4, true),
    metadataSize: dv.getUint32(8, true),
    engineOffset: dv.getUint32(12, true),
    engineSize: dv.getBigUint64(16, true),
  };
}

function replaceOnce(text: string, from: string, to: string): string {
  const at = text.indexOf(from);
  if (at < 0) throw new Error(`blob patch: metadata has no ${JSON.stringify(from)}`);
  return text.slice(0, at) + to + text.slice(at + from.length);
}

/**
 * Replaces the metadata text. Same length: bytes patched in place. Otherwise
 * the metadata is spliced and the header's metadata size, engine offset
 * (kept 16-aligned) and the engine bytes after it are moved to match.
 */
function editMetadata(blob: Uint8Array, edit: (json: string) => string): Uint8Array {
  const h = header(blob);
  const json = te.encode(edit(td.decode(blob.subarray(h.metadataOffset, h.metadataOffset + h.metadataSize))));
  if (json.length === h.metadataSize) {
    const out = blob.slice();
    out.set(json, h.metadataOffset);
    return out;
  }
  const engine = blob.subarray(h.engineOffset, h.engineOffset + Number(h.engineSize));
  const engineOffset = Math.ceil((h.metadataOffset + json.length) / ENGINE_ALIGNMENT) * ENGINE_ALIGNMENT;
  const out = new Uint8Array(engineOffset + engine.length);
  out.set(blob.subarray(0, BLOB_HEADER_SIZE));
  out.set(json, h.metadataOffset);
  out.set(engine, engineOffset);
  const dv = new DataView(out.buffer);
  dv.setUint32(8, json.length, true);
  dv.setUint32(12, engineOffset, true);
  return out;
}

type Alias = { output: string; input: string; kind: string };

function aliasEntries(blob: Uint8Array): Alias[] {
  const h = header(blob);
  const doc = JSON.parse(td.decode(blob.subarray(h.metadataOffset, h.metadataOffset + h.metadataSize))) as {
    aliased_io: { output: string; input: string; kind: string }[];
  };
  return doc.aliased_io;
}

const entry = (a: { output: string; input: string; kind: string }) =>
  `{"output":${JSON.stringify(a.output)},"input":${JSON.stringify(a.input)},"kind":${JSON.stringify(a.kind)}}`;

/**
 * A valid blob with one fault. Alias faults need a TR02 blob with at least
 * two `aliased_io` entries; `x` must be an input binding and `output0` an
 * output (the KV decoder's blobs are).
 */
export function patchBlob(valid: Uint8Array, fault: BlobFault): Uint8Array {
  const h = header(valid);
  const set = (f: (dv: DataView, out: Uint8Array) => void) => {
    const out = valid.slice();
    f(new DataView(out.buffer), out);
    return out;
  };
  switch (fault) {
    case 'truncated':
      return valid.slice(0, 20);
    case 'magic':
      return set((_, o) => o.set(te.encode('TRX2'), 0));
    case 'metadata-in-header':
      return set((dv) => dv.setUint32(4, 16, true));
    case 'metadata-extent':
      return set((dv) => dv.setUint32(8, valid.length, true));
    case 'engine-extent':
      // offset + size wraps to 16 in u64: only a subtracting bound check sees it.
      return set((dv) => dv.setBigUint64(16, (1n << 64n) - BigInt(h.engineOffset) + 16n, true));
    case 'overlap':
      return set((dv) => dv.setUint32(12, 48, true));
    case 'engine-align':
      return set((dv) => dv.setUint32(12, h.engineOffset + 8, true));
    case 'metadata-json':
      return editMetadata(valid, (j) => replaceOnce(j, '"hardware_compatible":false', '"hardware_compatible":fals_'));
    case 'binding-name-empty':
      return editMetadata(valid, (j) => replaceOnce(j, '{"name":"x",', '{"name":"",'));
    case 'binding-name-nul':
      return editMetadata(valid, (j) => replaceOnce(j, '{"name":"x",', '{"name":"x\\u0000y",'));
    case 'binding-duplicate':
      // Inputs and outputs share one name space.
      return editMetadata(valid, (j) => replaceOnce(j, '{"name":"x",', '{"name":"output0",'));
    case 'alias-missing-side': {
      const a = itemAt(aliasEntries(valid), 0, 'the aliases of the valid blob');
      return editMetadata(valid, (j) =>
        replaceOnce(j, entry(a), `{"output":${JSON.stringify(a.output)},"kind":${JSON.stringify(a.kind)}}`),
      );
    }
    case 'alias-unknown-binding': {
      const a = itemAt(aliasEntries(valid), 0, 'the aliases of the valid blob');
      return editMetadata(valid, (j) => replaceOnce(j, entry(a), entry({ ...a, output: 'no_such_output' })));
    }
    case 'alias-direction': {
      const a = itemAt(aliasEntries(valid), 0, 'the aliases of the valid blob');
      return editMetadata(valid, (j) => replaceOnce(j, entry(a), entry({ ...a, output: a.input, input: a.output })));
    }
    case 'alias-duplicate-output': {
      const aliases = aliasEntries(valid);
      const a = itemAt(aliases, 0, 'the aliases of the valid blob');
      const b = itemAt(aliases, 1, 'the aliases of the valid blob');
      return editMetadata(valid, (j) => replaceOnce(j, entry(b), entry({ ...b, output: a.output })));
    }
    case 'alias-duplicate-input': {
      const aliases = aliasEntries(valid);
      const a = itemAt(aliases, 0, 'the aliases of the valid blob');
      const b = itemAt(aliases, 1, 'the aliases of the valid blob');
      return editMetadata(valid, (j) => replaceOnce(j, entry(b), entry({ ...b, input: a.input })));
    }
    case 'alias-kind': {
      const a = itemAt(aliasEntries(valid), 0, 'the aliases of the valid blob');
      return editMetadata(valid, (j) => replaceOnce(j, entry(a), entry({ ...a, kind: 'kv_cache_swap' })));
    }
    case 'alias-in-tr01':
      return set((_, o) => o.set(te.encode('TR01'), 0));
    case 'name-escaped':
      // As json.dumps writes "xé": Torch-TensorRT's parser reads "xu00e9".
      return editMetadata(valid, (j) => replaceOnce(j, '{"name":"x",', '{"name":"x\\u00e9",'));
    case 'key-order': {
      // aliased_io first: Torch-TensorRT's parser looks for it only after io_bindings.
      return editMetadata(valid, (j) => {
        const { aliased_io, ...rest } = JSON.parse(j) as Record<string, unknown>;
        return JSON.stringify({ aliased_io, ...rest });
      });
    }
    case 'upstream-misread':
      // An unknown key whose value spells "io_bindings", before the real key:
      // upstream's search for the quoted key text lands on the value.
      return editMetadata(valid, (j) =>
        replaceOnce(j, '{"io_bindings":', '{"note":"io_bindings","z":[{"name":"z","is_input":true}],"io_bindings":'),
      );
  }
}

/** The twin with `delegate`'s blob replaced by a patched copy of its own bytes. */
export function brokenBlob(twin: ProgramSpec, fault: BlobFault, delegate = 'kv', method = 'decode'): ProgramSpec {
  const spec = cloneSpec(twin);
  const d = delegateOf(methodOf(spec, method), delegate);
  d.blob = { kind: 'bytes', bytes: patchBlob(renderBlob(d.blob), fault) };
  return spec;
}

/**
 * The twin with one blob's device_id naming the other engine's device
 * (target_device unchanged): ExecuTorch would plan the I/O on one GPU and
 * Torch-TensorRT run the engine on the other.
 */
export function deviceIdSwapped(twin: ProgramSpec, delegate = 'kv0', other = 'kv1', method = 'decode'): ProgramSpec {
  const spec = cloneSpec(twin);
  const m = methodOf(spec, method);
  const [d, o] = [delegateOf(m, delegate), delegateOf(m, other)];
  if (d.blob.kind !== 'tensorrt' || o.blob.kind !== 'tensorrt') throw new Error('deviceIdSwapped: needs two TensorRT blobs');
  d.blob.metadata.device_id = o.blob.metadata.device_id;
  return spec;
}
