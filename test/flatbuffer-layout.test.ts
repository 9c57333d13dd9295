// The verifier's layouts (src/generated/layout/) are what the schemas say:
// regenerating them from schemas/*.fbs gives the committed files, and every
// field's vtable slot and width agrees with the builders flatc generated
// from the same schemas (src/generated/<namespace>/), an independent output
// of the compiler. The verifier itself walks them: test/pte-hostile.test.ts
// and test/standin-engine.test.ts.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: the generator is plain JavaScript without declarations.
import { layoutOf, renderLayout } from '../scripts/flatbuffer-layout.mjs';
import { PROGRAM_LAYOUT } from '../src/generated/layout/program.js';
import { REFERENCE_ENGINE_LAYOUT } from '../src/generated/layout/reference-engine.js';
import type { FieldKind, SchemaLayout } from '../src/pte/layout.js';
import { FILE_IDENTIFIER } from '../src/pte/header.js';
import { REFERENCE_ENGINE_IDENTIFIER } from '../src/tensorrt/standin-engine.js';
import { REPO } from './helpers/bridge.js';
import { tempDir } from './helpers/temp.js';

const CASES: [string, string, string, SchemaLayout, string][] = [
  ['program.fbs', 'program.ts', 'PROGRAM_LAYOUT', PROGRAM_LAYOUT, 'executorch-flatbuffer'],
  ['reference_engine.fbs', 'reference-engine.ts', 'REFERENCE_ENGINE_LAYOUT', REFERENCE_ENGINE_LAYOUT, 'trtx-ref'],
];

/** Each generated class's source, by class name. */
function generatedClasses(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of readdirSync(dir)) {
    const text = readFileSync(join(dir, f), 'utf8');
    const m = /^export class (\w+) \{/m.exec(text);
    if (m) out.set(m[1], text);
  }
  return out;
}

const pascal = (snake: string) => snake.replace(/(^|_)([a-z0-9])/g, (_, __, c: string) => c.toUpperCase());

/** The Builder method flatc's TypeScript builder uses to add a field of this kind. */
function adder(kind: FieldKind): string {
  if (kind.k !== 'scalar') return 'addFieldOffset';
  return {
    bool: 'addFieldInt8',
    i8: 'addFieldInt8',
    u8: 'addFieldInt8',
    i16: 'addFieldInt16',
    u16: 'addFieldInt16',
    i32: 'addFieldInt32',
    u32: 'addFieldInt32',
    i64: 'addFieldInt64',
    u64: 'addFieldInt64',
    f32: 'addFieldFloat32',
    f64: 'addFieldFloat64',
  }[kind.t];
}

describe.each(CASES)('the layout of schemas/%s', (schema, file, name, layout, namespace) => {
  it('is what the generator makes from the schema now (npm run gen)', () => {
    const fresh = renderLayout(layoutOf(join(REPO, 'schemas', schema), tempDir('layout')), name, schema) as string;
    expect(readFileSync(join(REPO, 'src', 'generated', 'layout', file), 'utf8')).toBe(fresh);
  });

  it("puts every field in the slot, and at the width, of flatc's generated builder", () => {
    const classes = generatedClasses(join(REPO, 'src', 'generated', namespace));
    const tables = [...classes].filter(([, text]) => /builder\.startObject\(/.test(text)).map(([c]) => c);
    expect(Object.keys(layout.tables).sort()).toEqual(tables.sort());
    let fields = 0;
    for (const [table, layoutFields] of Object.entries(layout.tables)) {
      const text = classes.get(table)!;
      const slots = Number(/builder\.startObject\((\d+)\)/.exec(text)![1]);
      const used: number[] = [];
      for (const f of layoutFields) {
        const add = (method: string) =>
          new RegExp(`static ${method}\\(builder:flatbuffers\\.Builder, [^)]*\\) \\{\\n\\s*builder\\.(\\w+)\\((\\d+),`).exec(text);
        const value = add(`add${pascal(f.name)}`);
        expect(value, `${table}.${f.name}`).not.toBeNull();
        expect([value![1], Number(value![2])], `${table}.${f.name}`).toEqual([adder(f.kind), f.slot]);
        used.push(f.slot);
        if (f.kind.k === 'union') {
          const tag = add(`add${pascal(f.name)}Type`);
          expect([tag![1], Number(tag![2])], `${table}.${f.name}_type`).toEqual(['addFieldInt8', f.kind.tagSlot]);
          used.push(f.kind.tagSlot);
        }
        fields++;
      }
      // No slot of the table is left out of the layout.
      expect(
        used.sort((a, b) => a - b),
        table,
      ).toEqual(Array.from({ length: slots }, (_, i) => i));
    }
    expect(fields).toBeGreaterThan(10);
  });

  it('has the identifier the reader checks', () => {
    expect(layout.identifier).toBe(schema === 'program.fbs' ? FILE_IDENTIFIER : REFERENCE_ENGINE_IDENTIFIER);
  });
});
