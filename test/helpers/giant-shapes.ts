// The real-size hostile shapes as a seeded campaign (issue 43): many
// delegates on one segment with large metadata, reference engines up to
// 2 GiB - 1 with one step at their end or a step on every page, and program
// FlatBuffers touching every page, each with its sizes drawn from the seed
// and, one time in two, a few bytes of its written regions (the head, the
// tables at the end) overwritten. The giants are holes but for their
// tables, so a campaign costs a few MiB of disk. Pure in the seed: a finding
// names its seed and index, and giantShape(seed, i, dir) makes it again.
import { openSync, closeSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { sharedSegmentDelegates } from '../../fixtures/hostile.js';
import { writeSparseEnginePte, writeSparseProgram } from '../../fixtures/sparse-giants.js';
import { rngOf } from './fuzz.js';

const MiB = 1024 * 1024;
export const GIANT_KINDS = ['shared-segment', 'engine-tail-step', 'engine-every-page', 'program-every-page'] as const;
export type GiantKind = (typeof GIANT_KINDS)[number];

export interface GiantShape {
  index: number;
  kind: GiantKind;
  /** What was drawn, for the finding's line. */
  params: string;
  file: string;
}

/** Shape `index` of campaign `seed`, written under `dir`. */
export function giantShape(seed: number, index: number, dir: string): GiantShape {
  const rng = rngOf(seed * 7919 + index);
  const int = (lo: number, hi: number) => lo + Math.floor(rng() * (hi - lo + 1));
  const kind = GIANT_KINDS[index % GIANT_KINDS.length];
  const file = join(dir, `giant-${index}.pte`);
  let params: string;
  if (kind === 'shared-segment') {
    const delegates = int(2, 200);
    const metadataBytes = int(64, 4 * 1024) * 1024;
    params = `${delegates} delegates, ${metadataBytes} bytes of metadata`;
    writeFileSync(file, sharedSegmentDelegates({ delegates, metadataBytes }));
  } else if (kind === 'engine-tail-step') {
    const engineBytes = 2 ** 31 - 1 - int(0, 1024) * MiB;
    const delegates = int(1, 100);
    params = `engine ${engineBytes} bytes, ${delegates} delegates`;
    writeSparseEnginePte(file, { engineBytes, shape: 'tail-step', delegates });
  } else if (kind === 'engine-every-page') {
    const engineBytes = int(1, 128) * 2 * MiB;
    params = `engine ${engineBytes} bytes`;
    writeSparseEnginePte(file, { engineBytes, shape: 'every-page', delegates: int(1, 4) });
  } else {
    const programBytes = int(17, 256) * MiB;
    params = `program ${programBytes} bytes`;
    writeSparseProgram(file, programBytes);
  }
  if (rng() < 0.5) params += `; ${overwrite(file, rng)}`;
  return { index, kind, params, file };
}

/** A few bytes of the file's head or its last 4 KiB overwritten with random values. */
function overwrite(file: string, rng: () => number): string {
  const size = statSync(file).size;
  const fd = openSync(file, 'r+');
  const at: number[] = [];
  try {
    for (let k = 0; k < 1 + Math.floor(rng() * 4); k++) {
      const inHead = rng() < 0.5 || size < 8192;
      const offset = inHead ? Math.floor(rng() * Math.min(size, 64 * 1024)) : size - 1 - Math.floor(rng() * 4096);
      writeSync(fd, new Uint8Array([Math.floor(rng() * 256)]), 0, 1, offset);
      at.push(offset);
    }
  } finally {
    closeSync(fd);
  }
  return `bytes at ${at.join(', ')} overwritten`;
}
