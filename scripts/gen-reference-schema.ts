// Writes schemas/reference-outputs.schema.json, the language-neutral schema
// of the reference outputs file (docs/reference-lowering.md §2), from its zod
// schema (src/reference/schema.ts) with zod's own z.toJSONSchema. `--check`
// writes nothing and fails when the committed file differs (`npm run gen:check`).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';
import { ReferenceFile } from '../src/reference/schema.js';

export const REFERENCE_SCHEMA_FILE = fileURLToPath(new URL('../schemas/reference-outputs.schema.json', import.meta.url));

export function renderReferenceSchema(): string {
  const schema = z.toJSONSchema(ReferenceFile, { target: 'draft-2020-12' });
  return `${JSON.stringify({ ...schema, $id: 'https://trtx.dev/schemas/reference-outputs.schema.json' }, null, 2)}\n`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const text = renderReferenceSchema();
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(REFERENCE_SCHEMA_FILE, 'utf8');
    } catch {
      // missing: differs
    }
    if (current !== text) {
      console.error(`${REFERENCE_SCHEMA_FILE} is stale: run npm run gen`);
      process.exit(1);
    }
  } else writeFileSync(REFERENCE_SCHEMA_FILE, text);
}
