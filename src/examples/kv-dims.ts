// The KV-cache decoder's dimensions and names (src/examples/kv-decoder.ts
// builds the program): the small default, the scale of the 30-layer MoE from
// the upstream zero-copy KV pull request (pytorch/TensorRT#4667; KV_SEED),
// the options a caller may set, the caches' FQNs and binding names, and
// their sizes.

import { nbytesOf } from './dtypes.js';

export type KvMode = 'staged' | 'zero-copy';
export type KvMethod = 'decode' | 'prefill';

export interface KvDims {
  layers: number;
  /** KV heads. */
  heads: number;
  headDim: number;
  /** Cache length (max sequence length). */
  maxSeq: number;
  dtype: 'float32' | 'float16' | 'bfloat16';
  /** Width of the hidden state `x` fed to each step. */
  dModel: number;
  vocab: number;
  /** Positions the prefill method writes. */
  prefillLen: number;
  convChannels: number;
  convWidth: number;
  /** Streamable weight bytes each layer declares. */
  weightBytesPerLayer: bigint;
}

/** Small enough for unit tests to build by the dozen. */
export const KV_SMALL: KvDims = {
  layers: 2,
  heads: 2,
  headDim: 4,
  maxSeq: 8,
  dtype: 'float32',
  dModel: 8,
  vocab: 16,
  prefillLen: 3,
  convChannels: 4,
  convWidth: 3,
  weightBytesPerLayer: 1n << 20n,
};

/**
 * The 30-layer Gemma4-MoE of pytorch/TensorRT#4667 (prefill 2048, max length
 * 2560): 576.7 MB staged in and 577.2 MB out per decode step. Its caches mix
 * layer kinds; a uniform 30-layer bfloat16 cache of
 * 8 heads x 128 needs 4693 positions to hold the same bytes:
 * 30 x 2 x 8 x 4693 x 128 x 2 B = 576,675,840 B, plus x (2816 bfloat16) and
 * the position in = 576,681,480 B; the caches plus 262,144 bfloat16 logits
 * out = 577,200,128 B.
 */
export const KV_SEED: KvDims = {
  layers: 30,
  heads: 8,
  headDim: 128,
  maxSeq: 4693,
  dtype: 'bfloat16',
  dModel: 2816,
  vocab: 262144,
  prefillLen: 3,
  convChannels: 2816,
  convWidth: 3,
  weightBytesPerLayer: 416n << 20n,
};

export interface KvDecoderOptions extends Partial<KvDims> {
  /** Base dimensions the other options override (default 'small'). */
  scale?: 'small' | 'seed';
  mode?: KvMode;
  /** Methods to emit, written in name order as ExecuTorch does (default both). */
  methods?: KvMethod[];
  /** TensorRT engines the layers are split across, in order (default 1). */
  kvEngines?: number;
  /** A copy-back `conv_state` buffer: none, on the (last) KV engine, or on an engine of its own before it. */
  convState?: 'none' | 'same-delegate' | 'own-delegate';
  /** Zero-copy mode only: caches (by FQN) left staged on their delegate (partial elision). */
  stagedCaches?: string[];
  /** weight_streaming_budget on every TensorRT delegate. */
  budget?: bigint;
  /** CUDA device index (default 0). */
  device?: number;
  /**
   * The CUDA device of each KV engine, in order (default every engine on
   * `device`): each engine's caches are planned on its device, and the hidden
   * state one engine hands the next on another device goes through the host.
   */
  devices?: number[];
  /** Give the caches an initial-state segment (a deterministic pattern); small scales only. */
  cacheInitialState?: boolean;
  /**
   * Broken on purpose (zero-copy rule 1): treat the non-aliased conv_state
   * like a cache, un-staged and its output elided, as a rewrite that inferred
   * aliasing from graph shape would. Needs convState 'same-delegate'.
   */
  convElided?: boolean;
  /** ExecuTorch's enable_non_cpu_memory_planning (default true); off: no staging, all host-planned (method-writer.ts). */
  devicePlanning?: boolean;
}

export interface KvResolved extends KvDims {
  mode: KvMode;
  methods: KvMethod[];
  kvEngines: number;
  convState: 'none' | 'same-delegate' | 'own-delegate';
  stagedCaches: string[];
  budget?: bigint;
  device: number;
  devices: number[];
  cacheInitialState: boolean;
  convElided: boolean;
  devicePlanning: boolean;
}

export function resolveKv(opts: KvDecoderOptions = {}): KvResolved {
  const base = opts.scale === 'seed' ? KV_SEED : KV_SMALL;
  const pick = <K extends keyof KvDims>(k: K): KvDims[K] => (opts[k] ?? base[k]) as KvDims[K];
  const r: KvResolved = {
    layers: pick('layers'),
    heads: pick('heads'),
    headDim: pick('headDim'),
    maxSeq: pick('maxSeq'),
    dtype: pick('dtype'),
    dModel: pick('dModel'),
    vocab: pick('vocab'),
    prefillLen: pick('prefillLen'),
    convChannels: pick('convChannels'),
    convWidth: pick('convWidth'),
    weightBytesPerLayer: pick('weightBytesPerLayer'),
    mode: opts.mode ?? 'staged',
    methods: [...new Set(opts.methods ?? ['decode', 'prefill'])].sort() as KvMethod[],
    kvEngines: opts.kvEngines ?? 1,
    convState: opts.convState ?? 'none',
    stagedCaches: opts.stagedCaches ?? [],
    budget: opts.budget,
    device: opts.device ?? 0,
    devices: opts.devices ?? Array.from({ length: opts.kvEngines ?? 1 }, () => opts.device ?? 0),
    cacheInitialState: opts.cacheInitialState ?? false,
    convElided: opts.convElided ?? false,
    devicePlanning: opts.devicePlanning ?? true,
  };
  for (const k of [
    'layers',
    'heads',
    'headDim',
    'maxSeq',
    'dModel',
    'vocab',
    'prefillLen',
    'convChannels',
    'convWidth',
    'kvEngines',
  ] as const) {
    if (!Number.isInteger(r[k]) || r[k] < 1) throw new Error(`kvDecoder: ${k} must be a positive integer, got ${r[k]}`);
  }
  if (r.kvEngines > r.layers) throw new Error(`kvDecoder: ${r.kvEngines} engines for ${r.layers} layers`);
  if (r.devices.length !== r.kvEngines || !r.devices.every((d) => Number.isInteger(d) && d >= 0 && d <= 127)) {
    throw new Error(
      `kvDecoder: devices must name one device index (0..127) per KV engine, got [${r.devices.join(', ')}] for ${r.kvEngines}`,
    );
  }
  if (r.devices[0] !== r.device)
    throw new Error(`kvDecoder: the first KV engine's device ${r.devices[0]} is not the method's device ${r.device}`);
  if (new Set(r.devices).size > 1 && r.convState !== 'none') throw new Error('kvDecoder: conv_state needs every engine on one device');
  if (r.stagedCaches.length && r.mode !== 'zero-copy') throw new Error('kvDecoder: stagedCaches applies to zero-copy mode only');
  if (r.convElided && (r.mode !== 'zero-copy' || r.convState !== 'same-delegate'))
    throw new Error('kvDecoder: convElided needs zero-copy mode and convState same-delegate');
  return r;
}

export const CONV_STATE_FQN = 'conv_state';

export function kFqn(layer: number): string {
  return `layers.${layer}.attn.k_cache`;
}
export function vFqn(layer: number): string {
  return `layers.${layer}.attn.v_cache`;
}

/** Cache FQNs in buffer order: k, v of layer 0, then layer 1, ... */
export function cacheFqns(layers: number): string[] {
  return Array.from({ length: layers }, (_, l) => [kFqn(l), vFqn(l)]).flat();
}

/** An engine input bound to a lifted buffer is named after its placeholder (`b_` + FQN). */
export function bufferBinding(fqn: string): string {
  return `b_${fqn.replace(/\./g, '_')}`;
}

export function cacheShape(d: KvDims): number[] {
  return [1, d.heads, d.maxSeq, d.headDim];
}

/** Bytes of every cache together. */
export function cacheBytes(d: KvDims): bigint {
  return nbytesOf(d.dtype, cacheShape(d)) * BigInt(2 * d.layers);
}
