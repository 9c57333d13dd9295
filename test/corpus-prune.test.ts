// The corpus cache keeps one corpus per lock: a build removes the corpora of
// its own lock built from older sources, and leaves another lock's (another
// trtx checkout sharing the cache folder) and one being built.
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pruneOlder } from '../scripts/corpus/build.js';
import { tempDir } from './helpers/temp.js';

const parent = tempDir('corpus-prune');

describe('pruning the corpus cache', () => {
  it('removes older sources of this lock only', async () => {
    const names = ['corpus-aaaa-1111', 'corpus-aaaa-2222', 'corpus-aaaa-3333', 'corpus-aaaa-3333.lock', 'corpus-bbbb-1111', 'other'];
    for (const n of names) mkdirSync(join(parent, n));
    await pruneOlder(parent, 'aaaa', join(parent, 'corpus-aaaa-2222'));
    expect(readdirSync(parent).sort()).toEqual([
      'corpus-aaaa-2222',
      'corpus-aaaa-3333',
      'corpus-aaaa-3333.lock',
      'corpus-bbbb-1111',
      'other',
    ]);
  });
});
