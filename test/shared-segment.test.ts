// Many TensorRT delegates naming one segment (issue 43 item 3). A 63 MB file
// whose 129 delegates share one segment of 60 MiB metadata took inspect and
// check to 2 GB at 33 delegates and crashed V8 at 129: the metadata was parsed
// and kept once per delegate. Each blob is now parsed once per file and its
// parsed form shared (tensorrt/blob-once.ts), its metadata charged once, with a
// per-file ceiling (TRT_METADATA_FILE_LIMIT), and many names for one blob are
// a finding (TRT_SHARED_SEGMENT), not a crash. Sized for CI: 4 MiB x 129.
import { beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sharedSegmentDelegates } from '../fixtures/hostile.js';
import { runChecks } from '../src/checks/run.js';
import { SHARED_BLOB_WARN_OVER } from '../src/checks/shared-blobs.js';
import { MAX_FILE_METADATA_BYTES } from '../src/tensorrt/blob-once.js';
import { readDelegateBlobs } from '../src/tensorrt/delegate-view.js';
import { ReportBudget } from '../src/util/report-budget.js';
import { runChild } from './helpers/child-cli.js';
import { pteFromBytes } from './helpers/memory-pte.js';
import { tempDir } from './helpers/temp.js';

const MiB = 1024 * 1024;
const DELEGATES = 129;
let file: string;
let bytes: Uint8Array;

beforeAll(() => {
  bytes = sharedSegmentDelegates({ delegates: DELEGATES, metadataBytes: 4 * MiB });
  file = join(tempDir('shared-segment'), 'shared.pte');
  writeFileSync(file, bytes);
});

describe('many delegates on one segment', () => {
  it('parses the shared blob once: every delegate gets the one parsed form', async () => {
    const pte = pteFromBytes(bytes);
    const { entries } = await readDelegateBlobs(pte);
    expect(entries).toHaveLength(DELEGATES);
    const parsed = new Set(entries.map((e) => ('blob' in e.read ? e.read.blob : e.read.error)));
    expect(parsed.size).toBe(1);
    expect('blob' in entries[0].read).toBe(true);
  });

  it('charges the metadata to the report budget once per segment, not per delegate', async () => {
    // The budget allows 16 report bytes per byte read; 129 charges of the 4 MiB metadata would pass it.
    const pte = { ...pteFromBytes(bytes), reportBudget: ReportBudget.forCommand() };
    pte.reportBudget.allowFor(pte.programBytes.length);
    const { diagnostics } = await runChecks(pte);
    expect(diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  });

  it('is a TRT_SHARED_SEGMENT warning past the threshold, none at it', async () => {
    const { diagnostics } = await runChecks(pteFromBytes(bytes));
    const shared = diagnostics.filter((d) => d.code === 'TRT_SHARED_SEGMENT');
    expect(shared).toHaveLength(1);
    expect(shared[0]).toMatchObject({ severity: 'warning', location: 'segment 1', method: 'forward', delegate: 0 });
    expect(shared[0].message).toContain(`${DELEGATES} TensorRT delegates`);
    const few = pteFromBytes(sharedSegmentDelegates({ delegates: SHARED_BLOB_WARN_OVER, metadataBytes: 1024 }));
    expect((await runChecks(few)).diagnostics.filter((d) => d.code === 'TRT_SHARED_SEGMENT')).toEqual([]);
  });

  it(
    'refuses the blob that brings a file past its metadata ceiling (TRT_METADATA_FILE_LIMIT), each blob counted once',
    { timeout: 60_000 },
    async () => {
      const half = Math.floor(MAX_FILE_METADATA_BYTES / 2) + MiB;
      const pte = pteFromBytes(sharedSegmentDelegates({ delegates: 4, metadataBytes: half, blobs: 2 }));
      const { entries } = await readDelegateBlobs(pte);
      const codes = entries.map((e) => ('blob' in e.read ? 'ok' : e.read.error.code));
      // Delegates 0 and 2 name the first segment, 1 and 3 the second: the second blob passes the ceiling.
      expect(codes).toEqual(['ok', 'TRT_METADATA_FILE_LIMIT', 'ok', 'TRT_METADATA_FILE_LIMIT']);
      const refused = entries[1].read;
      expect('error' in refused && refused.error.location).toBe('forward > delegate 1 (TensorRTBackend) > header.metadata_size');
    },
  );

  it('trtx check and inspect --json finish under a 160 MiB heap with a coded answer', { timeout: 120_000 }, async () => {
    // Before: each delegate held its own 4 MiB parse; 129 of them ran V8 out of this heap (exit 134).
    for (const args of [
      ['check', '--json', file],
      ['inspect', '--json', file],
    ]) {
      const r = await runChild(args, { heapMiB: 160, timeoutMs: 110_000 });
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
      expect(r.maxRssMiB).toBeLessThan(300);
      if (args[0] === 'check') expect(r.stdout).toContain('"TRT_SHARED_SEGMENT"');
    }
  });
});
