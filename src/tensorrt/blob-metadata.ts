// The metadata document of a TensorRT delegate blob: read strictly as JSON,
// typed, then checked binding by binding and alias by alias, and finally read
// a second time the way Torch-TensorRT's own parser reads it
// (upstream-agreement.ts): a blob the two readings disagree on is refused.
// The rules and their order are written at the top of blob-format.ts.

import {
  HINT_METADATA,
  bindingLabel,
  blobError,
  jsonError,
  loc,
  type AliasedIo,
  type BlobLocationOptions,
  type BlobMagic,
  type BlobMetadata,
  type IoBinding,
} from './blob-format.js';
import { JsonFloat, isJsonObject, parseStrictJsonBytes, type JsonObject, type JsonValue } from './strict-json.js';
import { checkUpstreamAgreement } from './upstream-agreement.js';

function kindOf(v: JsonValue | undefined): string {
  if (v === undefined) return 'nothing (the key is missing)';
  if (v === null) return 'null';
  if (v instanceof JsonFloat) return `${v.text} (an integer field must be written without a fraction or an exponent)`;
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}

// Pre-validation shape: aliased_io sides and kind may be missing or unknown,
// which the semantic pass reports under their own codes.
interface RawAlias {
  output: string | undefined;
  input: string | undefined;
  kind: string;
}

function readMetadataDocument(
  doc: JsonValue,
  opts: BlobLocationOptions | undefined,
): { meta: Omit<BlobMetadata, 'aliased_io'>; aliases: RawAlias[] } {
  if (!isJsonObject(doc)) throw jsonError(opts, 'metadata', `metadata must be a JSON object, got ${kindOf(doc)}`);

  const str = (o: JsonObject, key: string, where: string, dflt?: string): string => {
    const v = o[key];
    if (v === undefined && dflt !== undefined) return dflt;
    if (typeof v !== 'string') throw jsonError(opts, where, `${where} must be a string, got ${kindOf(v)}`);
    return v;
  };
  const bool = (o: JsonObject, key: string, where: string, dflt?: boolean): boolean => {
    const v = o[key];
    if (v === undefined && dflt !== undefined) return dflt;
    if (typeof v !== 'boolean') throw jsonError(opts, where, `${where} must be true or false, got ${kindOf(v)}`);
    return v;
  };
  const list = (o: JsonObject, key: string, where: string, optional: boolean): JsonValue[] => {
    const v = o[key];
    if (v === undefined && optional) return [];
    if (!Array.isArray(v)) throw jsonError(opts, where, `${where} must be a list, got ${kindOf(v)}`);
    return v;
  };

  const bindings: IoBinding[] = list(doc, 'io_bindings', 'metadata.io_bindings', false).map((b, i) => {
    const where = `metadata.io_bindings[${i}]`;
    if (!isJsonObject(b)) throw jsonError(opts, where, `${where} must be an object, got ${kindOf(b)}`);
    const shape = list(b, 'shape', `${where}.shape`, true).map((d, k) => {
      if (typeof d !== 'number' || !Number.isSafeInteger(d)) {
        throw jsonError(
          opts,
          `${where}.shape[${k}]`,
          `${where}.shape[${k}] must be an integer, got ${typeof d === 'number' ? d : kindOf(d)}`,
        );
      }
      return d;
    });
    return {
      name: str(b, 'name', `${where}.name`),
      dtype: str(b, 'dtype', `${where}.dtype`, ''),
      shape,
      is_input: bool(b, 'is_input', `${where}.is_input`),
    };
  });

  const aliases: RawAlias[] = list(doc, 'aliased_io', 'metadata.aliased_io', true).map((a, j) => {
    const where = `metadata.aliased_io[${j}]`;
    if (!isJsonObject(a)) throw jsonError(opts, where, `${where} must be an object, got ${kindOf(a)}`);
    const side = (key: string): string | undefined => (a[key] === undefined ? undefined : str(a, key, `${where}.${key}`));
    // An absent or empty kind is kv_cache_update, as Torch-TensorRT's parser
    // reads it (TensorRTBlobHeader.cpp: `if (ab.kind.empty())`).
    const kind = str(a, 'kind', `${where}.kind`, 'kv_cache_update');
    return { output: side('output'), input: side('input'), kind: kind === '' ? 'kv_cache_update' : kind };
  });

  const deviceId = doc['device_id'];
  if (
    deviceId !== undefined &&
    (typeof deviceId !== 'number' || !Number.isInteger(deviceId) || deviceId < -(2 ** 31) || deviceId >= 2 ** 31)
  ) {
    throw jsonError(
      opts,
      'metadata.device_id',
      `metadata.device_id must be a 32-bit integer, got ${typeof deviceId === 'number' ? deviceId : kindOf(deviceId)}`,
    );
  }

  return {
    meta: {
      io_bindings: bindings,
      hardware_compatible: bool(doc, 'hardware_compatible', 'metadata.hardware_compatible', false),
      device_id: deviceId === undefined ? 0 : deviceId,
      serialized_metadata: str(doc, 'serialized_metadata', 'metadata.serialized_metadata', ''),
      target_platform: str(doc, 'target_platform', 'metadata.target_platform', ''),
    },
    aliases,
  };
}

function checkBindings(
  bindings: readonly IoBinding[],
  opts: BlobLocationOptions | undefined,
): Map<string, { index: number; binding: IoBinding }> {
  const byName = new Map<string, { index: number; binding: IoBinding }>();
  bindings.forEach((b, i) => {
    const dir = b.is_input ? 'input' : 'output';
    if (b.name.length === 0) {
      throw blobError('TRT_BINDING_NAME_EMPTY', opts, `binding #${i}`, `io_bindings[${i}] (${dir}) has an empty name`, HINT_METADATA);
    }
    // TensorRT looks names up through c_str(): a NUL ends the name there, so
    // "x\0y" and "x\0z" would be one tensor to the engine and two here.
    if (b.name.includes('\0')) {
      throw blobError(
        'TRT_BINDING_NAME_NUL',
        opts,
        `binding ${bindingLabel(b.name)}`,
        `io_bindings[${i}] (${dir}) name contains a NUL character`,
        HINT_METADATA,
      );
    }
    const prev = byName.get(b.name);
    if (prev) {
      const prevDir = prev.binding.is_input ? 'input' : 'output';
      throw blobError(
        'TRT_BINDING_DUPLICATE',
        opts,
        `binding ${bindingLabel(b.name)}`,
        `io_bindings[${prev.index}] (${prevDir}) and io_bindings[${i}] (${dir}) share the name ${JSON.stringify(b.name)}; inputs and outputs share one name space`,
        HINT_METADATA,
      );
    }
    byName.set(b.name, { index: i, binding: b });
  });
  return byName;
}

function checkAliases(
  aliases: readonly RawAlias[],
  byName: Map<string, { index: number; binding: IoBinding }>,
  magic: BlobMagic,
  opts: BlobLocationOptions | undefined,
): AliasedIo[] {
  // A TR01 reader predates aliasing and would bind each aliased output to its
  // own buffer: the update would silently go nowhere.
  if (magic === 'TR01' && aliases.length > 0) {
    throw blobError(
      'TRT_ALIAS_IN_TR01',
      opts,
      'aliased_io',
      `a TR01 blob carries ${aliases.length} aliased_io entr${aliases.length === 1 ? 'y' : 'ies'}; aliasing requires magic TR02`,
    );
  }
  const outputs = new Map<string, number>();
  const inputs = new Map<string, number>();
  return aliases.map((a, j) => {
    const where = `aliased_io[${j}]`;
    for (const side of ['output', 'input'] as const) {
      if (a[side] === undefined || a[side] === '') {
        throw blobError('TRT_ALIAS_MISSING_SIDE', opts, where, `entry has no ${side} binding (needs both output and input)`, HINT_METADATA);
      }
    }
    const output = a.output as string;
    const input = a.input as string;
    if (a.kind !== 'kv_cache_update' && a.kind !== 'user') {
      throw blobError(
        'TRT_ALIAS_KIND',
        opts,
        where,
        `unknown kind ${JSON.stringify(a.kind)} (expected "kv_cache_update" or "user")`,
        HINT_METADATA,
      );
    }
    for (const [side, name] of [
      ['output', output],
      ['input', input],
    ] as const) {
      if (!byName.has(name)) {
        throw blobError(
          'TRT_ALIAS_UNKNOWN_BINDING',
          opts,
          where,
          `${side} ${JSON.stringify(name)} is not a binding in io_bindings`,
          HINT_METADATA,
        );
      }
    }
    if (byName.get(output)!.binding.is_input) {
      throw blobError('TRT_ALIAS_DIRECTION', opts, where, `output side ${JSON.stringify(output)} names an input binding`, HINT_METADATA);
    }
    if (!byName.get(input)!.binding.is_input) {
      throw blobError('TRT_ALIAS_DIRECTION', opts, where, `input side ${JSON.stringify(input)} names an output binding`, HINT_METADATA);
    }
    // Keyed on each side alone, not on the pair: a repeated output inflates
    // the runtime's aliased-output count whatever input it names.
    const prevOut = outputs.get(output);
    if (prevOut !== undefined) {
      throw blobError(
        'TRT_ALIAS_DUPLICATE_OUTPUT',
        opts,
        where,
        `output ${JSON.stringify(output)} is already aliased by aliased_io[${prevOut}]`,
        HINT_METADATA,
      );
    }
    const prevIn = inputs.get(input);
    if (prevIn !== undefined) {
      throw blobError(
        'TRT_ALIAS_DUPLICATE_INPUT',
        opts,
        where,
        `input ${JSON.stringify(input)} is already aliased by aliased_io[${prevIn}]`,
        HINT_METADATA,
      );
    }
    outputs.set(output, j);
    inputs.set(input, j);
    return { output, input, kind: a.kind };
  });
}

/** Parses and checks metadata JSON bytes for a blob with the given magic. */
export function parseBlobMetadata(json: Uint8Array, magic: BlobMagic, opts: BlobLocationOptions = {}): BlobMetadata {
  const doc = parseStrictJsonBytes(json, 'TRT_BLOB_METADATA_JSON', loc(opts, 'metadata'), { floats: 'apart' });
  const { meta, aliases } = readMetadataDocument(doc, opts);
  const byName = checkBindings(meta.io_bindings, opts);
  const aliased_io = checkAliases(aliases, byName, magic, opts);
  const metadata: BlobMetadata = {
    io_bindings: meta.io_bindings,
    aliased_io,
    hardware_compatible: meta.hardware_compatible,
    device_id: meta.device_id,
    serialized_metadata: meta.serialized_metadata,
    target_platform: meta.target_platform,
  };
  checkUpstreamAgreement(metadata, json, opts);
  return metadata;
}

/**
 * Runs the binding and alias checks on metadata built in memory, and the
 * upstream-agreement check on `json`, the bytes a writer will store for it
 * (the writer's gate: it must not emit what the parser refuses).
 */
export function validateMetadata(meta: BlobMetadata, magic: BlobMagic, json: Uint8Array, opts: BlobLocationOptions = {}): void {
  const byName = checkBindings(meta.io_bindings, opts);
  checkAliases(meta.aliased_io, byName, magic, opts);
  checkUpstreamAgreement(meta, json, opts);
}
