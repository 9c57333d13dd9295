// Refuses a blob that Torch-TensorRT's own parser would read differently from
// trtx. Once the metadata has passed every strict check, trtx reads it a
// second time the way TensorRTBlobHeader.cpp does (upstream-reading.ts) and
// compares what the runtime uses: the input and output binding names in order,
// the aliased_io entries, and device_id. (`hardware_compatible` is read there
// too but TensorRTBackend.cpp never uses it, so a difference in it is no
// difference on the device.) Where the two agree, the blob loads the same
// everywhere, whatever unusual spelling it has; where they do not, the real
// runtime fails or runs something other than what trtx checked:
//   - TRT_NAME_ESCAPED: a binding name (or an alias side, kind or key) holds a
//     JSON escape other than \" \\ \/ -- which Python's json.dumps writes for
//     every non-ASCII or control character -- and upstream keeps the escape's
//     letters, so the name TensorRTBackend::init looks up in the engine is not
//     the engine's (getProfileShape fails for an input; setTensorAddress at the
//     first execute for an output);
//   - TRT_BLOB_KEY_ORDER: aliased_io or device_id is written before
//     io_bindings, where upstream does not look: the aliases are dropped (each
//     aliased output gets storage of its own and the in-place update is lost,
//     or a zero-copy call fails its arity) or the engine is deserialized on
//     device 0;
//   - TRT_BLOB_UPSTREAM_MISREAD: any other disagreement (a key's quoted text
//     found first inside a value, a number spelled 1E1, ...), including a
//     document the upstream walk cannot read at all.

import type { TrtxError } from '../util/errors.js';
import { HINT_METADATA, bindingLabel, blobError, type BlobLocationOptions, type BlobMetadata } from './blob-format.js';
import { readLikeUpstream, type UpstreamReading } from './upstream-reading.js';
import { itemAt } from '../util/present.js';

const PARSER = "Torch-TensorRT's blob parser (TensorRTBlobHeader.cpp)";
const HINT_ESCAPED =
  'name the tensor with ASCII letters, digits and _ (Python writes every other character as a JSON escape, which the runtime does not decode), then re-export';
const HINT_ORDER = "re-export the program: Torch-TensorRT's serializer writes io_bindings first, then aliased_io, then the scalars";

function misread(opts: BlobLocationOptions | undefined, rel: string, what: string): TrtxError {
  return blobError('TRT_BLOB_UPSTREAM_MISREAD', opts, rel, `${PARSER} ${what}; the runtime would not run what trtx checked`, HINT_METADATA);
}

const q = (s: string): string => JSON.stringify(s);

/** Throws the first disagreement between trtx's reading `meta` and upstream's reading of `json`. */
export function checkUpstreamAgreement(meta: BlobMetadata, json: Uint8Array, opts?: BlobLocationOptions): void {
  const u: UpstreamReading = readLikeUpstream(json);
  if (!u.ok) throw misread(opts, 'metadata', `cannot read this metadata (${u.reason}), so TensorRTBackend::init fails`);

  // Bindings, entry by entry: both walk the same io_bindings array.
  if (u.entries.length !== meta.io_bindings.length) {
    throw misread(
      opts,
      'metadata.io_bindings',
      `walks ${u.entries.length} io_bindings entries where the JSON has ${meta.io_bindings.length}`,
    );
  }
  meta.io_bindings.forEach((b, i) => {
    const e = itemAt(u.entries, i, 'the io_bindings upstream walks');
    if (e.kept && e.name === b.name && e.isInput === b.is_input) return;
    const dir = b.is_input ? 'input' : 'output';
    const seen = e.kept ? `${e.isInput ? 'input' : 'output'} ${q(e.name)}` : 'an entry without a name, which it skips';
    if (e.lossyEscape) {
      throw blobError(
        'TRT_NAME_ESCAPED',
        opts,
        `binding ${bindingLabel(b.name)}`,
        `io_bindings[${i}] (${dir}) ${q(b.name)} is written with JSON escapes, which ${PARSER} does not decode: it reads ${seen}, so TensorRTBackend::init cannot find the engine's binding`,
        HINT_ESCAPED,
      );
    }
    throw misread(opts, `binding ${bindingLabel(b.name)}`, `reads io_bindings[${i}] (${dir}) ${q(b.name)} as ${seen}`);
  });

  // aliased_io: looked for only after the io_bindings array.
  const want = meta.aliased_io;
  if (u.aliases === null) {
    if (want.length > 0) {
      throw blobError(
        'TRT_BLOB_KEY_ORDER',
        opts,
        'metadata.aliased_io',
        `aliased_io is written before io_bindings; ${PARSER} looks for it only after io_bindings and would drop its ${want.length} alias(es): each aliased output would get storage of its own and the in-place cache update would be lost`,
        HINT_ORDER,
      );
    }
  } else {
    if (u.aliasEntries.length !== want.length) {
      throw misread(opts, 'metadata.aliased_io', `reads ${u.aliasEntries.length} aliased_io entries where the JSON has ${want.length}`);
    }
    want.forEach((a, j) => {
      const e = itemAt(u.aliasEntries, j, 'the aliased_io entries upstream walks');
      const kind = e.kind === '' ? 'kv_cache_update' : e.kind;
      if (e.output === a.output && e.input === a.input && kind === a.kind) return;
      const seen = `output ${q(e.output)}, input ${q(e.input)}, kind ${q(kind)}`;
      if (e.lossyEscape) {
        throw blobError(
          'TRT_NAME_ESCAPED',
          opts,
          `aliased_io[${j}]`,
          `the entry (output ${q(a.output)}, input ${q(a.input)}) is written with JSON escapes, which ${PARSER} does not decode: it reads ${seen}, so TensorRTBackend::init cannot match it to a binding`,
          HINT_ESCAPED,
        );
      }
      throw misread(opts, `aliased_io[${j}]`, `reads the entry (output ${q(a.output)}, input ${q(a.input)}, kind ${q(a.kind)}) as ${seen}`);
    });
  }

  // device_id: the engine is deserialized on the device upstream reads.
  if (u.deviceId !== meta.device_id) {
    if (!u.deviceIdFound) {
      throw blobError(
        'TRT_BLOB_KEY_ORDER',
        opts,
        'metadata.device_id',
        `device_id ${meta.device_id} is written before io_bindings; ${PARSER} looks for it only after io_bindings and would run the engine on device 0`,
        HINT_ORDER,
      );
    }
    throw misread(opts, 'metadata.device_id', `reads device_id ${u.deviceId} where the JSON says ${meta.device_id}`);
  }
}
