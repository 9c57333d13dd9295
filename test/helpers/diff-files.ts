// What the diff suites (test/diff*.test.ts) share: a diff of two files, a
// program rewritten in a copy, and the fields of a report.

import { join } from 'node:path';
import { expect } from 'vitest';
import { diffPte } from '../../src/diff/diff.js';
import { writeFixture } from '../../src/examples/builder.js';
import { catalogueEntry } from '../../src/examples/catalogue.js';
import type { DiffReport, MethodDiff } from '../../src/diff/report.js';
import { writeFromSource } from '../../src/pte/copy.js';
import type { Program } from '../../src/pte/model.js';
import { openPte, withPte } from '../../src/pte/open.js';
import { delegatesOf, readDelegateBlob } from '../../src/tensorrt/delegates.js';
import { tempDir } from './temp.js';

/** A diff suite's temp folder (removed after its last test) and the catalogue programs written into it. */
export function diffWorkspace(): { dir: string; path: (name: string) => string; catalogue: (file: string) => Promise<string> } {
  const dir = tempDir('diff');
  const path = (name: string) => join(dir, name);
  const catalogue = async (file: string) => {
    await writeFixture(path(file), catalogueEntry(file).build());
    return path(file);
  };
  return { dir, path, catalogue };
}

export async function diffFiles(a: string, b: string, method?: string): Promise<DiffReport> {
  return withPte(a, (pa) => withPte(b, (pb) => diffPte(pa, pb, { method })));
}

/** Rewrites `src` to `dst` after `edit` changed its decoded program. */
export async function rewrite(src: string, dst: string, edit: (p: Program) => void): Promise<string> {
  const pte = await openPte(src);
  try {
    edit(pte.program);
    await writeFromSource(pte, pte.program, dst);
  } finally {
    await pte.close();
  }
  return dst;
}

export function expectEmpty(r: DiffReport): void {
  expect(r.header).toEqual([]);
  expect(r.program).toEqual([]);
  expect(r.segments).toEqual({ count: null, sizes: [] });
  expect(r.methods).toEqual([]);
  expect(r.changes).toBe(0);
  expect(r.equivalent).toBe(true);
}

/** The aliased outputs of a method's first delegate, and the inputs they alias, as its blob says. */
export async function decodeBlobAliases(file: string, name: string): Promise<{ aliasedOutputs: string[]; aliasedInputs: string[] }> {
  return withPte(file, async (pte) => {
    const ref = delegatesOf(pte).find((d) => d.plan.name === name && d.delegateIndex === 0)!;
    const aliased = (await readDelegateBlob(pte, ref)).metadata.aliased_io;
    return { aliasedOutputs: aliased.map((x) => x.output), aliasedInputs: aliased.map((x) => x.input) };
  });
}

export const method = (r: DiffReport, name: string): MethodDiff => {
  const m = r.methods.find((x) => x.name === name);
  if (!m) throw new Error(`no method ${name} in the diff`);
  return m;
};
