// The wire layout of a FlatBuffers schema, read from the binary schema flatc
// writes (`flatc -b --schema X.fbs` -> X.bfbs, whose root is reflection.fbs's
// Schema), rendered as the TypeScript table src/pte/flatbuffer-verify.ts verifies
// against. gen-flatbuffers.mjs runs it for every schema trtx verifies, so the
// tables cannot drift from the schemas (`npm run gen:check`).
//
// The vtable offsets of reflection.fbs read here are those of flatc 2.0.8's
// own reader (Debian's /usr/include/flatbuffers/reflection_generated.h:
// Schema, Object, Field, Type, Enum, EnumVal), and BaseType its enum there.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import * as flatbuffers from 'flatbuffers';

const BASE = [
  'None',
  'UType',
  'Bool',
  'Byte',
  'UByte',
  'Short',
  'UShort',
  'Int',
  'UInt',
  'Long',
  'ULong',
  'Float',
  'Double',
  'String',
  'Vector',
  'Obj',
  'Union',
  'Array',
];
const SCALARS = {
  Bool: 'bool',
  Byte: 'i8',
  UByte: 'u8',
  Short: 'i16',
  UShort: 'u16',
  Int: 'i32',
  UInt: 'u32',
  Long: 'i64',
  ULong: 'u64',
  Float: 'f32',
  Double: 'f64',
};

// reflection.fbs vtable offsets (flatc 2.0.8).
const SCHEMA = { objects: 4, enums: 6, fileIdent: 8, rootTable: 12 };
const OBJECT = { name: 4, fields: 6, isStruct: 8 };
const FIELD = { name: 4, type: 6, id: 8, deprecated: 16 };
const TYPE = { baseType: 4, element: 6, index: 8 };
const ENUM = { name: 4, values: 6, isUnion: 8 };
const ENUM_VAL = { name: 4, value: 6, unionType: 10 };

/** A reader over one table of the binary schema. */
function reader(bb, pos) {
  const at = (vt) => bb.__offset(pos, vt);
  return {
    string: (vt) => (at(vt) ? bb.__string(pos + at(vt)) : null),
    u8: (vt, d = 0) => (at(vt) ? bb.readUint8(pos + at(vt)) : d),
    i8: (vt, d = 0) => (at(vt) ? bb.readInt8(pos + at(vt)) : d),
    u16: (vt, d = 0) => (at(vt) ? bb.readUint16(pos + at(vt)) : d),
    i32: (vt, d = 0) => (at(vt) ? bb.readInt32(pos + at(vt)) : d),
    i64: (vt, d = 0n) => (at(vt) ? bb.readInt64(pos + at(vt)) : d),
    bool: (vt) => (at(vt) ? bb.readUint8(pos + at(vt)) !== 0 : false),
    table: (vt) => (at(vt) ? reader(bb, bb.__indirect(pos + at(vt))) : null),
    tables: (vt) => {
      if (!at(vt)) return [];
      const start = bb.__vector(pos + at(vt));
      return Array.from({ length: bb.__vector_len(pos + at(vt)) }, (_, i) => reader(bb, bb.__indirect(start + 4 * i)));
    },
  };
}

/** The layout of one schema: tables by name (fields in vtable-slot order), unions by name (member tables by tag). */
export function readLayout(bfbs, schemaName) {
  const bb = new flatbuffers.ByteBuffer(new Uint8Array(bfbs));
  if (!bb.__has_identifier('BFBS')) throw new Error(`${schemaName}: not a binary schema`);
  const schema = reader(bb, bb.readInt32(bb.position()) + bb.position());
  const short = (name) => name.slice(name.lastIndexOf('.') + 1);
  const objects = schema
    .tables(SCHEMA.objects)
    .map((o) => ({ name: o.string(OBJECT.name), isStruct: o.bool(OBJECT.isStruct), fields: o.tables(OBJECT.fields) }));
  const enums = schema
    .tables(SCHEMA.enums)
    .map((e) => ({ name: e.string(ENUM.name), isUnion: e.bool(ENUM.isUnion), values: e.tables(ENUM.values) }));
  const fail = (what) => {
    throw new Error(`${schemaName}: ${what} (the verifier layout does not cover it)`);
  };

  const unions = {};
  for (const e of enums.filter((x) => x.isUnion)) {
    const members = e.values.map((v, i) => {
      if (v.i64(ENUM_VAL.value) !== BigInt(i))
        fail(`union ${e.name} member ${v.string(ENUM_VAL.name)} has value ${v.i64(ENUM_VAL.value)}, not ${i}`);
      if (i === 0) return 'NONE';
      const t = v.table(ENUM_VAL.unionType);
      const index = t ? t.i32(TYPE.index, -1) : -1;
      if (index < 0 || objects[index].isStruct) fail(`union ${e.name} member ${v.string(ENUM_VAL.name)} is not a table`);
      return short(objects[index].name);
    });
    unions[short(e.name)] = members;
  }

  const kindOf = (type, where) => {
    const base = BASE[type.u8(TYPE.baseType)];
    const index = type.i32(TYPE.index, -1);
    // A scalar's index names its enum, an Obj's or a vector of tables' its object.
    const enumName = SCALARS[base] && index >= 0 ? short(enums[index].name) : null;
    if (SCALARS[base]) return enumName ? { k: 'scalar', t: SCALARS[base], enum: enumName } : { k: 'scalar', t: SCALARS[base] };
    if (base === 'String') return { k: 'string' };
    if (base === 'Obj') {
      if (objects[index].isStruct) fail(`${where} is a struct`);
      return { k: 'table', table: short(objects[index].name) };
    }
    if (base === 'Vector') {
      const element = BASE[type.u8(TYPE.element)];
      if (SCALARS[element]) return { k: 'vector', of: SCALARS[element] };
      if (element === 'String') return { k: 'vectorOfStrings' };
      if (element === 'Obj' && !objects[index].isStruct) return { k: 'vectorOfTables', table: short(objects[index].name) };
      fail(`${where} is a vector of ${element}${element === 'Obj' ? ' structs' : ''}`);
    }
    return fail(`${where} has type ${base}`);
  };

  const tables = {};
  for (const o of objects) {
    if (o.isStruct) fail(`struct ${o.name}`);
    const fields = o.fields
      .map((f) => ({ name: f.string(FIELD.name), id: f.u16(FIELD.id), deprecated: f.bool(FIELD.deprecated), type: f.table(FIELD.type) }))
      .filter((f) => !f.deprecated)
      .sort((a, b) => a.id - b.id);
    const ids = new Map(fields.map((f) => [f.name, f.id]));
    const layout = [];
    for (const f of fields) {
      const base = BASE[f.type.u8(TYPE.baseType)];
      if (base === 'UType') continue; // the tag of the union field named without `_type`
      if (base === 'Union') {
        const tagSlot = ids.get(`${f.name}_type`);
        if (tagSlot === undefined) fail(`union field ${o.name}.${f.name} has no ${f.name}_type`);
        layout.push({ name: f.name, slot: f.id, kind: { k: 'union', union: short(enums[f.type.i32(TYPE.index, -1)].name), tagSlot } });
      } else {
        layout.push({ name: f.name, slot: f.id, kind: kindOf(f.type, `${o.name}.${f.name}`) });
      }
    }
    tables[short(o.name)] = layout;
  }
  const root = schema.table(SCHEMA.rootTable);
  return {
    identifier: schema.string(SCHEMA.fileIdent) ?? '',
    root: root ? short(root.string(OBJECT.name)) : fail('no root_type'),
    tables,
    unions,
  };
}

const q = (s) => `'${s}'`;

function renderKind(kind) {
  return `{ ${Object.entries(kind)
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? q(v) : v}`)
    .join(', ')} }`;
}

/** The TypeScript module holding `layout` as `exportName`. */
export function renderLayout(layout, exportName, schemaFile) {
  const out = [
    `// Generated by scripts/gen-flatbuffers.mjs from schemas/${schemaFile} (its binary`,
    '// schema, flatc -b --schema): the wire layout src/pte/flatbuffer-verify.ts checks a buffer',
    '// against before any generated accessor reads it (typed as SchemaLayout in',
    '// src/pte/layout.ts). Do not edit; run `npm run gen`.',
    '',
    `export const ${exportName} = {`,
    `  identifier: ${q(layout.identifier)},`,
    `  root: ${q(layout.root)},`,
    '  tables: {',
  ];
  for (const [name, fields] of Object.entries(layout.tables)) {
    if (fields.length === 0) {
      out.push(`    ${name}: [],`);
      continue;
    }
    out.push(`    ${name}: [`);
    for (const f of fields) out.push(`      { name: ${q(f.name)}, slot: ${f.slot}, kind: ${renderKind(f.kind)} },`);
    out.push('    ],');
  }
  out.push('  },', '  unions: {');
  for (const [name, members] of Object.entries(layout.unions)) out.push(`    ${name}: [${members.map(q).join(', ')}],`);
  out.push('  },', '} as const;', '');
  return out.join('\n');
}

/** Writes the binary schema of `schemaPath` into `tmp` with flatc and returns its layout. */
export function layoutOf(schemaPath, tmp) {
  execFileSync('flatc', ['-b', '--schema', '-o', tmp, schemaPath], { stdio: 'inherit' });
  return readLayout(readFileSync(join(tmp, basename(schemaPath).replace(/\.fbs$/, '.bfbs'))), basename(schemaPath));
}
