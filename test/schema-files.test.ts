// The --json documents' JSON Schemas are generated from the zod schemas
// beside the code that builds each document (scripts/schema-files.ts): the
// committed files are what `npm run gen` writes, a part is stated once (a
// file refers to another's part instead of copying it), and no file is
// written by hand.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { OUTPUTS } from '../scripts/gen-schemas.js';
import { renderSchemaFile, SCHEMA_BASE, SCHEMA_FILES } from '../scripts/schema-files.js';
import { REPO } from './helpers/bridge.js';
import { validate } from './helpers/json-schema.js';

const DIR = join(REPO, 'schemas');
const read = (file: string) => readFileSync(join(DIR, file), 'utf8');

describe('schemas/*.schema.json', () => {
  it.each(SCHEMA_FILES.map((f) => [f.file, f] as const))('%s is what npm run gen writes from its zod schema', (file, f) => {
    expect(read(file)).toBe(renderSchemaFile(f));
  });

  it('every file is generated: none is written by hand', () => {
    const generated = OUTPUTS.map(([file]) => basename(file));
    const files = readdirSync(DIR).filter((n) => n.endsWith('.schema.json'));
    expect(files.filter((n) => !generated.includes(n))).toEqual([]);
  });

  it('a reference into another file names that file at its $id, and resolves', () => {
    const refs: string[] = [];
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) {
          if (k === '$ref' && typeof x === 'string' && !x.startsWith('#')) refs.push(x);
          else walk(x);
        }
      }
    };
    for (const f of SCHEMA_FILES) walk(JSON.parse(read(f.file)));
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of new Set(refs)) {
      expect(ref.startsWith(SCHEMA_BASE), ref).toBe(true);
      const [file = '', pointer = ''] = ref.slice(SCHEMA_BASE.length).split('#');
      const target = JSON.parse(read(file)) as Record<string, unknown>;
      expect(target.$id, ref).toBe(`${SCHEMA_BASE}${file}`);
      // Ajv resolves it (an unresolvable reference throws at compile).
      expect(() => validate({ $ref: ref }, {}), ref).not.toThrow();
      if (pointer) expect(pointer.startsWith('/$defs/') && (target.$defs as Record<string, unknown>)[pointer.slice(7)], ref).toBeTruthy();
    }
  });
});
