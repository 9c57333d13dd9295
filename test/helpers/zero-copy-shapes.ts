// Zero-copy shapes beyond the fixture catalogue: each takes a catalogue
// program's spec and changes the one thing it names, for the rules and
// refusals whose broken program the catalogue does not hold, each a shape
// pytorch/TensorRT#4667 refuses or checks for: a user alias, a stamp over
// staged caches, an elided alias fed a method input, another backend reading
// a cache, caches shared by two engines or two methods, crossed and doubled
// write-backs.
import { cloneSpec, delegateOf, methodOf } from '../../src/examples/broken.js';
import { CONV_STATE_FQN, cacheFqns, kFqn, kvDecoder, vFqn, type KvDecoderOptions } from '../../src/examples/kv-decoder.js';
import { DEVICE_ARENA, HOST_ARENA, MethodWriter } from '../../src/examples/method-writer.js';
import { d2h, delegateCall, h2d, isKernel } from '../../src/examples/ops.js';
import type { DelegateSpec, DType, MethodSpec, ProgramSpec, TensorSpec } from '../../src/examples/spec.js';
import { trtDelegate, type TrtBinding } from '../../src/examples/trt.js';
import { SPEC_ZERO_COPY_KV } from '../../src/tensorrt/compile-specs.js';
import { SPEC_SHARED_KV_CACHE } from '../../src/tensorrt/shared-kv-cache.js';

export const staged = (o: KvDecoderOptions = {}) => kvDecoder({ mode: 'staged', ...o });
export const zeroCopy = (o: KvDecoderOptions = {}) => kvDecoder({ mode: 'zero-copy', ...o });
export const DECODE = { methods: ['decode'] } as const satisfies KvDecoderOptions;

function edit(spec: ProgramSpec, method: string, f: (m: MethodSpec) => void): ProgramSpec {
  const s = cloneSpec(spec);
  f(methodOf(s, method));
  return s;
}

const callIndex = (m: MethodSpec, delegate: string) => m.instructions.findIndex((i) => !isKernel(i) && i.delegate === delegate);
const callArgs = (m: MethodSpec, delegate: string) => (m.instructions[callIndex(m, delegate)] as { args: string[] }).args;

type Tensorrt = Extract<DelegateSpec['blob'], { kind: 'tensorrt' }>;
export const metadataOf = (d: DelegateSpec) => (d.blob as Tensorrt).metadata;

/** The engine's alias for `output` becomes a `user` alias (a user alias beside the caches cannot be elided: elision is all-or-nothing per delegate). */
export function userAlias(spec: ProgramSpec, output = 'output1', method = 'decode', delegate = 'kv'): ProgramSpec {
  return edit(spec, method, (m) => {
    const a = metadataOf(delegateOf(m, delegate)).aliased_io!.find((x) => x.output === output)!;
    a.kind = 'user';
  });
}

/**
 * The staged decoder with its aliased outputs elided and the stamp added,
 * but the caches still host-planned and staged: the engine updates staging
 * copies that are thrown away (a zero_copy_kv export finalized without
 * `zero_copy_backend_config`'s un-staging, pytorch/TensorRT#4667 `_zero_copy.py`).
 */
export function stampedButStaged(): ProgramSpec {
  return edit(staged(DECODE), 'decode', (m) => {
    const caches = cacheFqns(2);
    const outs = caches.map((_, i) => `kv:output${i}`);
    const hostOuts = outs.map((o) => `${o}@cpu`);
    const call = callArgs(m, 'kv');
    m.instructions[callIndex(m, 'kv')] = { delegate: 'kv', args: call.filter((a) => !outs.includes(a)) };
    m.instructions = m.instructions.filter(
      (i) => !(isKernel(i) && (outs.includes(i.args[0] as string) || (i.kernel === 'aten::copy_' && caches.includes(i.args[0] as string)))),
    );
    m.tensors = m.tensors.filter((t) => !outs.includes(t.name) && !hostOuts.includes(t.name));
    delegateOf(m, 'kv').compileSpecs.push({ key: SPEC_ZERO_COPY_KV, value: JSON.stringify(outs.map((_, i) => `output${i}`)) });
  });
}

/** Zero-copy decode whose first cache argument is a method input planned on the device instead of the buffer. */
export function inputAtElidedAlias(): ProgramSpec {
  return edit(zeroCopy(DECODE), 'decode', (m) => {
    const k = m.tensors.find((t) => t.name === kFqn(0))!;
    m.tensors.push({ name: 'cache_in', dtype: k.dtype, shape: [...k.shape], arena: DEVICE_ARENA, device: 'cuda:0' });
    m.inputs.push('cache_in');
    const args = callArgs(m, 'kv');
    args[args.indexOf(kFqn(0))] = 'cache_in';
  });
}

/** Zero-copy decode with a CudaBackend delegate that also reads a cache straight from the device. */
export function anotherBackendReads(cache = kFqn(0)): ProgramSpec {
  return edit(zeroCopy(DECODE), 'decode', (m) => {
    const k = m.tensors.find((t) => t.name === cache)!;
    m.tensors.push({ name: 'aoti:out', dtype: k.dtype, shape: [...k.shape], arena: DEVICE_ARENA, device: 'cuda:0' });
    m.delegates.push({
      name: 'aoti',
      backend: 'CudaBackend',
      compileSpecs: [{ key: 'target_device', value: 'cuda:0' }],
      blob: { kind: 'bytes', bytes: new Uint8Array(64) },
    });
    m.instructions.push({ delegate: 'aoti', args: [cache, 'aoti:out'] });
  });
}

/** The staged decoder where another backend's staging copy reads a cache too (a second _h2d_copy of a moved buffer, `_device_move_is_safe` in pytorch/TensorRT#4667). */
export function anotherStagingReads(cache = kFqn(0)): ProgramSpec {
  return edit(staged(DECODE), 'decode', (m) => {
    const k = m.tensors.find((t) => t.name === cache)!;
    m.tensors.push({ name: `${cache}@cuda#aoti`, dtype: k.dtype, shape: [...k.shape], arena: DEVICE_ARENA, device: 'cuda:0' });
    m.tensors.push({ name: 'aoti:out', dtype: k.dtype, shape: [...k.shape], arena: DEVICE_ARENA, device: 'cuda:0' });
    m.delegates.push({
      name: 'aoti',
      backend: 'CudaBackend',
      compileSpecs: [{ key: 'target_device', value: 'cuda:0' }],
      blob: { kind: 'bytes', bytes: new Uint8Array(64) },
    });
    m.instructions.unshift(h2d(cache, `${cache}@cuda#aoti`), delegateCall('aoti', [`${cache}@cuda#aoti`], ['aoti:out']));
  });
}

/** The staged decoder where a cache's staging copy is also handed to another backend. */
export function stagingCopyShared(cache = kFqn(0)): ProgramSpec {
  return edit(staged(DECODE), 'decode', (m) => {
    const k = m.tensors.find((t) => t.name === cache)!;
    m.tensors.push({ name: 'aoti:out', dtype: k.dtype, shape: [...k.shape], arena: DEVICE_ARENA, device: 'cuda:0' });
    m.delegates.push({
      name: 'aoti',
      backend: 'CudaBackend',
      compileSpecs: [{ key: 'target_device', value: 'cuda:0' }],
      blob: { kind: 'bytes', bytes: new Uint8Array(64) },
    });
    m.instructions.splice(callIndex(m, 'kv'), 0, delegateCall('aoti', [`${cache}@cuda`], ['aoti:out']));
  });
}

/** Zero-copy decode with one cache moved: to the host arena, to a cuda:1 arena, or kept on the device but tagged cpu. */
export function cacheOffDevice(how: 'host-arena' | 'other-device' | 'cpu-tag', cache = kFqn(0)): ProgramSpec {
  return edit(zeroCopy(DECODE), 'decode', (m) => {
    const t = m.tensors.find((x) => x.name === cache)!;
    if (how === 'host-arena') t.arena = HOST_ARENA;
    if (how === 'other-device') {
      m.arenas.push({ device: 'cuda:1' });
      t.arena = m.arenas.length;
    }
    if (how === 'cpu-tag') t.device = 'cpu';
  });
}

/** Zero-copy decode handing one cache to two of the engine's aliased inputs. */
export function oneCacheTwice(): ProgramSpec {
  return edit(zeroCopy(DECODE), 'decode', (m) => {
    const args = callArgs(m, 'kv');
    args[args.indexOf(vFqn(0))] = kFqn(0);
  });
}

/** A zero-copy program without its zero_copy_kv stamps (the buffer side survives, the delegate side does not). */
export function unstamped(o: KvDecoderOptions = DECODE): ProgramSpec {
  const s = zeroCopy(o);
  for (const m of s.methods) for (const d of m.delegates) d.compileSpecs = d.compileSpecs.filter((c) => c.key !== SPEC_ZERO_COPY_KV);
  return s;
}

/** The mixed staged program with conv_state written back twice. */
export function twoWriteBacks(): ProgramSpec {
  return edit(staged({ convState: 'same-delegate', ...DECODE }), 'decode', (m) => {
    const wb = m.instructions.find((i) => isKernel(i) && i.kernel === 'aten::copy_' && i.args[0] === CONV_STATE_FQN)!;
    m.instructions.push(structuredClone(wb));
  });
}

/** The staged decoder with the write-backs of the first two caches crossed (each gets the other's update). */
export function crossedWriteBacks(): ProgramSpec {
  return edit(staged(DECODE), 'decode', (m) => {
    const a = m.instructions.find((i) => isKernel(i) && i.kernel === 'aten::copy_' && i.args[0] === kFqn(0)) as { args: string[] };
    const b = m.instructions.find((i) => isKernel(i) && i.kernel === 'aten::copy_' && i.args[0] === vFqn(0)) as { args: string[] };
    [a.args[1], b.args[1]] = [b.args[1], a.args[1]];
  });
}

/** The staged decoder with the aliased output `kv:output0` (or its host copy) also read by something besides its write-back. */
export function aliasedOutputRead(where: 'device' | 'host'): ProgramSpec {
  return edit(staged(DECODE), 'decode', (m) => {
    const t = m.tensors.find((x) => x.name === 'kv:output0')!;
    m.tensors.push({ name: 'peek', dtype: t.dtype, shape: [...t.shape], arena: HOST_ARENA });
    m.outputs.push('peek');
    if (where === 'device') m.instructions.push(d2h('kv:output0', 'peek'));
    // After the write-back, so the write-back is the host copy's first reader.
    else
      m.instructions.push({ kernel: 'aten::add', overload: 'out', args: ['kv:output0@cpu', 'kv:output0@cpu', { int: 1 }, 'peek', 'peek'] });
  });
}

/** The staged decoder with the first cache's `_d2h_copy` and write-back gone: its update is computed and dropped. */
export function lostCacheUpdate(): ProgramSpec {
  return edit(staged(DECODE), 'decode', (m) => {
    m.instructions = m.instructions.filter(
      (i) => !(isKernel(i) && (i.args[0] === 'kv:output0' || (i.kernel === 'aten::copy_' && i.args[0] === kFqn(0)))),
    );
    m.tensors = m.tensors.filter((t) => t.name !== 'kv:output0@cpu');
  });
}

/** The staged decoder whose first cache is staged from a method input (a caller-owned cache), not a buffer. */
export function callerOwnedCache(): ProgramSpec {
  return edit(staged(DECODE), 'decode', (m) => {
    const k = m.tensors.find((t) => t.name === kFqn(0))!;
    m.tensors.push({ name: 'cache_in', dtype: k.dtype, shape: [...k.shape], arena: HOST_ARENA });
    m.inputs.push('cache_in');
    const stage = m.instructions.find((i) => isKernel(i) && i.kernel === 'et_copy::_h2d_copy' && i.args[0] === kFqn(0)) as {
      args: string[];
    };
    stage.args[0] = 'cache_in';
  });
}

/** The two-engine staged decoder whose second engine's first cache input is fed the first engine's hidden state (no staging copy, no cache). */
export function aliasFedActivation(): ProgramSpec {
  return edit(staged({ ...DECODE, kvEngines: 2 }), 'decode', (m) => {
    const args = callArgs(m, 'kv1');
    args[args.indexOf(`${kFqn(1)}@cuda`)] = 'kv0:output2';
  });
}

/** Caches moved into a state arena of their own at the same offsets in every method (ExecuTorch's share_mutable_buffers layout). */
export function sharedLayout(spec: ProgramSpec, names: (m: MethodSpec) => string[] = () => cacheFqns(2)): ProgramSpec {
  const s = cloneSpec(spec);
  for (const m of s.methods) {
    m.arenas.push({ device: 'cpu' });
    const state = m.arenas.length;
    let offset = 0;
    for (const n of names(m)) {
      const t = m.tensors.find((x) => x.name === n)!;
      t.arena = state;
      t.offset = offset;
      offset += 1024;
    }
  }
  return s;
}

/**
 * One cache updated by two engines in turn, staged: `a` writes it and hands
 * it on the device to `b`, whose update is written back (a cache shared by
 * two delegates). `deviceB` puts engine b on another device.
 */
export function twoEnginesOneCache(deviceB = 0): ProgramSpec {
  const dt: DType = 'float32';
  const cshape = [1, 2, 8, 4];
  const hidden = [1, 1, 8];
  const w = new MethodWriter('decode', 'cuda:0');
  w.buffer('cache', dt, cshape, 'host');
  const x = w.userInput('x', dt, hidden);
  const pos = w.userInput('input_pos', 'int64', [1]);
  const engine = (name: string, query: string, device: number) => {
    const inputs: TrtBinding[] = [
      { name: 'b_cache', dtype: dt, shape: cshape },
      { name: query, dtype: dt, shape: hidden },
      { name: 'input_pos', dtype: 'int64', shape: [1] },
    ];
    const outputs: TrtBinding[] = [
      { name: 'output0', dtype: dt, shape: cshape },
      { name: 'output1', dtype: dt, shape: hidden },
    ];
    return trtDelegate({
      name,
      inputs,
      outputs,
      deviceIndex: device,
      aliases: [{ output: 'output0', input: 'b_cache' }],
      engine: {
        steps: [
          { op: 'KvWrite', cache: 0, position: 2, source: 1, seqDim: 2, salt: 0.5 },
          { op: 'Attend', caches: [0], query: 1, output: 4 },
        ],
        scratch: { baseBytes: 4096 },
        streamableWeightBytes: 0n,
        weightStreaming: false,
      },
    });
  };
  const a = engine('a', 'x', 0);
  const [aCache, aHidden] = w.call(
    a,
    ['cache', x, pos],
    [
      { name: 'a:output0', dtype: dt, shape: cshape },
      { name: 'a:output1', dtype: dt, shape: hidden },
    ],
  );
  const b = engine('b', 'hidden', deviceB);
  const [bCache, bOut] = w.call(
    b,
    [aCache, aHidden, pos],
    [
      { name: 'b:output0', dtype: dt, shape: cshape },
      { name: 'b:output1', dtype: dt, shape: hidden },
    ],
  );
  w.writeBack('cache', w.toHost(bCache));
  w.output(w.toHost(bOut, 'y'));
  return { methods: [w.spec()] };
}

/** The staged decoder calling its engine twice. */
export function calledTwice(): ProgramSpec {
  return edit(staged(DECODE), 'decode', (m) => {
    m.instructions.splice(callIndex(m, 'kv') + 1, 0, structuredClone(m.instructions[callIndex(m, 'kv')]));
  });
}

/** twoEnginesOneCache with the cache's name gone (emit_mutable_buffer_names off). */
export function twoEnginesOneUnnamedCache(): ProgramSpec {
  return edit(twoEnginesOneCache(), 'decode', (m) => {
    delete m.tensors.find((t) => t.name === 'cache')!.fqn;
  });
}

/**
 * Two methods over one shared state buffer (share_mutable_buffers layout):
 * `set` writes it back from its input, `get` only reads it. Without `set`,
 * `get` alone holds a named buffer nothing updates.
 */
export function stateReadElsewhere(withSetter = true): ProgramSpec {
  const state: TensorSpec = { name: 'state', dtype: 'float32', shape: [4], arena: 2, offset: 0, fqn: 'state' };
  const get: MethodSpec = {
    name: 'get',
    tensors: [structuredClone(state), { name: 'y', dtype: 'float32', shape: [4], arena: 1 }],
    inputs: [],
    outputs: ['y'],
    instructions: [{ kernel: 'aten::add', overload: 'out', args: ['state', 'state', { int: 1 }, 'y', 'y'] }],
    delegates: [],
    arenas: [{ device: 'cpu' }, { device: 'cpu' }],
  };
  const set: MethodSpec = {
    name: 'set',
    tensors: [structuredClone(state), { name: 'x', dtype: 'float32', shape: [4], arena: 1 }],
    inputs: ['x'],
    outputs: [],
    instructions: [{ kernel: 'aten::copy_', overload: '', args: ['state', 'x', { bool: false }, 'state'] }],
    delegates: [],
    arenas: [{ device: 'cpu' }, { device: 'cpu' }],
  };
  return { methods: withSetter ? [get, set] : [get] };
}

/**
 * Decode (caches and conv_state staged, in a state arena of their own) beside
 * a `reset` method that shares only conv_state with it (same name, arena 3,
 * offset 4096) and writes it from its input.
 */
export function convStateSharedWithReset(): ProgramSpec {
  const s = cloneSpec(staged({ convState: 'same-delegate', ...DECODE }));
  const decode = s.methods[0];
  decode.arenas.push({ device: 'cpu' });
  cacheFqns(2).forEach((f, i) =>
    Object.assign(
      decode.tensors.find((t) => t.name === f)!,
      { arena: 3, offset: i * 1024 },
    ),
  );
  const conv = decode.tensors.find((t) => t.name === CONV_STATE_FQN)!;
  Object.assign(conv, { arena: 3, offset: 4096 });
  const reset: MethodSpec = {
    name: 'reset',
    tensors: [structuredClone(conv), { name: 'x', dtype: conv.dtype, shape: [...conv.shape], arena: 1 }],
    inputs: ['x'],
    outputs: [],
    instructions: [{ kernel: 'aten::copy_', overload: '', args: [CONV_STATE_FQN, 'x', { bool: false }, CONV_STATE_FQN] }],
    delegates: [],
    arenas: [{ device: 'cpu' }, { device: 'cpu' }, { device: 'cpu' }],
  };
  return { methods: [decode, reset] };
}

/** Adds `shared_kv_cache` naming `names` to `delegate` (a hand-made record). */
export function withSharedSpec(spec: ProgramSpec, names: string[], method = 'decode', delegate = 'kv'): ProgramSpec {
  return edit(spec, method, (m) => delegateOf(m, delegate).compileSpecs.push({ key: SPEC_SHARED_KV_CACHE, value: JSON.stringify(names) }));
}

export type { TensorSpec };
