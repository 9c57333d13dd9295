import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { openPte } from '../src/pte/open.js';
import { programToFlatcJson } from '../src/pte/flatc-json.js';
import { corpusPath, corpusPrograms } from './helpers/corpus.js';

describe.each(corpusPrograms())('corpus %s', (name) => {
  const expected = JSON.parse(readFileSync(corpusPath(name, '.expected.json'), 'utf8'));

  it('reads the header fields the reference reads', async () => {
    const pte = await openPte(corpusPath(name));
    try {
      expect(pte.fileSize).toBe(expected.file_size);
      expect(pte.header.rootOffset).toBe(expected.header.root_offset);
      expect(pte.header.identifier).toBe(expected.header.file_identifier);
      const eh = expected.header.extended_header;
      if (eh) {
        expect(pte.header.extended).toEqual({
          magic: eh.magic,
          length: eh.length,
          programSize: eh.program_size,
          segmentBaseOffset: eh.segment_base_offset,
          segmentDataSize: eh.segment_data_size ?? null,
        });
      } else {
        expect(pte.header.extended).toBeNull();
      }
    } finally {
      await pte.close();
    }
  });

  it('decodes to the program flatc decodes, field by field', async () => {
    const pte = await openPte(corpusPath(name));
    await pte.close();
    expect(programToFlatcJson(pte.program)).toEqual(expected.program);
  });
});
