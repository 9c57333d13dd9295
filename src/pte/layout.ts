// The wire layout of a FlatBuffers schema, table by table in vtable-slot
// order, for the verifier (verify.ts). The generated TypeScript readers trust
// their input (they read whatever an offset points at), so a buffer from a
// file is checked against its layout first. The layouts are generated from
// the schemas by `npm run gen` (scripts/flatbuffer-layout.mjs reads flatc's
// binary schema) into src/generated/layout/, and `npm run gen:check` fails
// when they are stale: the ET12 program's here, the reference engine's in
// src/tensorrt/standin-engine.ts.

import { PROGRAM_LAYOUT as PROGRAM } from '../generated/layout/program.js';

export type Scalar = 'bool' | 'i8' | 'u8' | 'i16' | 'u16' | 'i32' | 'u32' | 'i64' | 'u64' | 'f32' | 'f64';

export type FieldKind =
  | { k: 'scalar'; t: Scalar; enum?: string }
  | { k: 'string' }
  | { k: 'table'; table: string }
  | { k: 'vector'; of: Scalar }
  | { k: 'vectorOfStrings' }
  | { k: 'vectorOfTables'; table: string }
  /** A union's value; its type tag (u8) is the field `<name>_type` at `tagSlot`. */
  | { k: 'union'; union: string; tagSlot: number };

export interface FieldLayout {
  name: string;
  /** The field's vtable slot (its id in the schema). */
  slot: number;
  kind: FieldKind;
}

export interface SchemaLayout {
  /** file_identifier (bytes 4..7). */
  identifier: string;
  /** root_type. */
  root: string;
  tables: Readonly<Record<string, readonly FieldLayout[]>>;
  /** Member tables by type tag; tag 0 is NONE. */
  unions: Readonly<Record<string, readonly string[]>>;
}

export const SCALAR_SIZE: Record<Scalar, number> = {
  bool: 1,
  i8: 1,
  u8: 1,
  i16: 2,
  u16: 2,
  i32: 4,
  u32: 4,
  i64: 8,
  u64: 8,
  f32: 4,
  f64: 8,
};

/** schemas/program.fbs (with scalar_type.fbs). */
export const PROGRAM_LAYOUT: SchemaLayout = PROGRAM;
export const TABLES = PROGRAM_LAYOUT.tables;
export const UNIONS = PROGRAM_LAYOUT.unions;
