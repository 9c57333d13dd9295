// Programs finalized the way Torch-TensorRT documents it (`edge.to_executorch()`,
// ExecuTorch's default emit_mutable_buffer_names=False) carry no
// fully_qualified_name on their mutable buffers. ExecuTorch's Method finds a
// tensor by name only (Method::get_attribute, MethodMeta::attribute_tensor_meta),
// so the runner could neither read such a cache for the report nor zero it
// as an application does. verify therefore runs a copy in which each unnamed
// buffer that feeds an engine input is named after that input's binding
// (`b_key_cache_0`, torch.export's placeholder name for the buffer), the same
// name in a staged program and its zero-copy twin. A name is metadata:
// nothing the program executes changes, and verify says it ran such a copy.

import { join } from 'node:path';
import { writeFromSource } from '../pte/copy.js';
import { TensorDataLocation, DeviceType, type ExecutionPlan, type Program } from '../pte/model.js';
import type { PteFile } from '../pte/open.js';
import { planName, tensorAt, tensorName } from '../pte/tensor.js';
import { aliasEdgesOf, bindArgs, copyOf, H2D_COPY, instructionsOf, mutableBuffers, type AliasEdge } from '../graph/dataflow.js';
import { aliasedOutputs, inputs, type BlobMetadata } from '../tensorrt/blob.js';
import { delegatesOf, isTensorRT, readDelegateBlob } from '../tensorrt/delegates.js';
import type { Variant, Variants } from './variants.js';
import type { ProgramFiles } from './program-files.js';
import { present } from '../util/present.js';
import type { ReportBudget } from '../util/report-budget.js';

/** Value -> the engine input binding it feeds (directly, or through its staging copy), for each unnamed mutable buffer of `plan`. */
export function unnamedBufferLabels(
  plan: ExecutionPlan,
  metas: ReadonlyMap<number, BlobMetadata>,
): Map<number, { label: string; cache: boolean }> {
  const edges: AliasEdge[] = [];
  for (const [d, meta] of metas) {
    edges.push(...aliasEdgesOf(plan, d, meta, new Set()));
    edges.push(...aliasEdgesOf(plan, d, meta, new Set(aliasedOutputs(meta).map((b) => b.name))));
  }
  const buffers = mutableBuffers(plan, edges);
  // Staging copy destination -> its source.
  const stagedFrom = new Map<number, number>();
  for (const { ins } of instructionsOf(plan)) {
    const c = copyOf(plan, ins, H2D_COPY);
    if (c) stagedFrom.set(c.dst, c.src);
  }
  const labels = new Map<number, { label: string; cache: boolean }>();
  const taken = new Set<string>();
  for (const { ins } of instructionsOf(plan)) {
    if (ins.type !== 'DelegateCall') continue;
    const meta = metas.get(ins.delegateIndex);
    if (!meta) continue;
    const args = bindArgs(ins, meta, new Set()) ?? bindArgs(ins, meta, new Set(aliasedOutputs(meta).map((b) => b.name)));
    if (!args) continue;
    for (const b of inputs(meta)) {
      const arg = args.get(b.name);
      if (arg === undefined) continue;
      const v = buffers.has(arg) ? arg : stagedFrom.get(arg);
      if (v === undefined || !buffers.has(v) || labels.has(v) || taken.has(b.name)) continue;
      const t = tensorAt(plan, v);
      if (!t || tensorName(t) !== null) continue;
      // A cache: the input an aliased output (kv_cache_update) updates in place.
      labels.set(v, { label: b.name, cache: meta.aliased_io.some((a) => a.input === b.name) });
      taken.add(b.name);
    }
  }
  return labels;
}

/**
 * Writes a copy of `pte` with its unnamed buffers named (see above) to
 * `dir/NAME.named.pte`; null when every buffer has a name already. Returns
 * the named program (a copy: `pte`'s own stays as it was) and the names
 * given, in program order.
 */
export async function namedCopy(
  pte: PteFile,
  dir: string,
  name: string,
): Promise<{ path: string; program: Program; names: string[]; caches: string[] } | null> {
  const labels: Map<number, { label: string; cache: boolean }>[] = [];
  for (const [p, plan] of pte.program.executionPlan.entries()) {
    const metas = new Map<number, BlobMetadata>();
    for (const ref of delegatesOf(pte, isTensorRT).filter((r) => r.planIndex === p))
      metas.set(ref.delegateIndex, (await readDelegateBlob(pte, ref)).metadata);
    labels.push(unnamedBufferLabels(plan, metas));
  }
  if (labels.every((l) => l.size === 0)) return null;
  const program = structuredClone(pte.program);
  const names: string[] = [];
  const caches: string[] = [];
  for (const [p, plan] of program.executionPlan.entries()) {
    for (const [v, { label, cache }] of labels[p] ?? []) {
      const t = present(tensorAt(plan, v), `${planName(plan, p)} > value %${v}`);
      t.extraTensorInfo = {
        ...(t.extraTensorInfo ?? {
          mutableDataSegmentsIdx: 0n,
          location: TensorDataLocation.SEGMENT,
          deviceType: DeviceType.CPU,
          deviceIndex: 0,
        }),
        fullyQualifiedName: label,
      };
      names.push(label);
      if (cache) caches.push(label);
    }
  }
  const path = join(dir, `${name}.named.pte`);
  await writeFromSource(pte, program, path);
  return { path, program, names: [...new Set(names)], caches: [...new Set(caches)] };
}

/** What naming made of the variants: each with a named copy to run where it needed one. */
export interface NamedVariants {
  variants: Variants;
  /** The caches by their new names when the copies named any; null: keep the pass's names. */
  caches: string[] | null;
  /** The note verify prints; null when nothing was named. */
  note: string | null;
}

/**
 * Gives every variant with unnamed buffers a named copy to run (`runPath`,
 * recorded in `programs` as made); the check still reads the variant's own
 * file. Each variant is read through `programs`: opened once per run.
 */
export async function nameVariants(
  variants: Variants,
  dir: string,
  programs: ProgramFiles,
  reportBudget: ReportBudget,
): Promise<NamedVariants> {
  const named: string[] = [];
  let caches: string[] | null = null;
  const out: Variant[] = [];
  for (const v of variants) {
    const pte = await programs.get(v.path, reportBudget);
    const copy = await namedCopy(pte, dir, v.name);
    if (!copy) {
      out.push(v);
      continue;
    }
    programs.made(copy.path, pte, copy.program);
    out.push({ ...v, runPath: copy.path });
    named.push(...copy.names);
    // The zero-copy variant's caches (updated in place), else the staged one's.
    if (v.name === 'zero-copy' || caches === null) caches = copy.caches;
  }
  // One out per variant in: as many as `variants`, which has at least one.
  const result = out as Variants;
  if (named.length === 0) return { variants: result, caches: null, note: null };
  const list = [...new Set(named)];
  return {
    variants: result,
    caches,
    note: `the program's mutable buffers carry no names (finalized without emit_mutable_buffer_names): the runner ran a copy naming them after the engine inputs they feed (${list.join(', ')}), so it could read and initialise them; nothing the program executes changed`,
  };
}
