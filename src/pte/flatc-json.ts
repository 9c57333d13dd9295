// The program as the reference `flatc --strict-json --defaults-json` prints
// it: schema field names and order, enum names, unions as `<field>_type` plus
// the member, every scalar (defaults included), absent strings, tables and
// vectors left out. The corpus's `.expected.json` files are in this form, so
// a decoder can be compared with the reference field by field.

import { TABLES, UNIONS, type FieldLayout } from './layout.js';
import { ScalarType, DeviceType, DataLocation, TensorShapeDynamism, TensorDataLocation } from './model.js';
import type * as M from './model.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const ENUMS: Record<string, Record<number, string>> = {
  ScalarType: ScalarType,
  DeviceType: DeviceType,
  DataLocation: DataLocation,
  TensorShapeDynamism: TensorShapeDynamism,
  TensorDataLocation: TensorDataLocation,
};

const camel = (snake: string) => snake.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** flatc prints doubles with 12 digits after the point, trailing zeros trimmed. */
function scalar(v: unknown, t?: string): Json {
  if (typeof v === 'bigint') return Number(v);
  if (t === 'f64' && typeof v === 'number' && Number.isFinite(v)) return Number(v.toFixed(12));
  return v as Json;
}

/** Union member object: EValue and Instruction keep member fields inline. */
function unionMember(obj: Record<string, unknown>): [string, Record<string, unknown> | null] {
  const type = obj.type as string;
  if (type === 'None') return ['NONE', null];
  if (type === 'Tensor') return [type, obj.tensor as Record<string, unknown>];
  return [type, obj];
}

function field(out: Record<string, Json>, obj: Record<string, unknown>, f: FieldLayout): void {
  const kind = f.kind;
  if (kind.k === 'union') {
    const [type, member] = unionMember(obj);
    if (!(UNIONS[kind.union] ?? []).includes(type)) throw new Error(`unknown ${kind.union} member ${type}`);
    out[`${f.name}_type`] = type;
    if (member) out[f.name] = table(type, member);
    return;
  }
  const v = obj[camel(f.name)];
  const absent = ((obj as M.Fidelity).$absent ?? []).includes(f.name);
  switch (kind.k) {
    case 'scalar':
      out[f.name] = kind.enum ? (ENUMS[kind.enum]?.[v as number] ?? (v as number)) : scalar(v, kind.t);
      return;
    case 'string':
      if (v !== null && v !== undefined) out[f.name] = v as string;
      return;
    case 'table':
      if (v !== null && v !== undefined) out[f.name] = table(kind.table, v as Record<string, unknown>);
      return;
    case 'vector':
    case 'vectorOfStrings':
    case 'vectorOfTables': {
      const items = Array.from(v as ArrayLike<unknown>);
      if (items.length === 0 && absent) return;
      out[f.name] =
        kind.k === 'vectorOfTables'
          ? items.map((i) => table(kind.table, i as Record<string, unknown>))
          : items.map((i) => scalar(i, kind.k === 'vector' ? kind.of : undefined));
      return;
    }
  }
}

function table(name: string, obj: Record<string, unknown>): Json {
  const out: Record<string, Json> = {};
  const layout = TABLES[name];
  if (!layout) throw new Error(`unknown table ${name}`);
  for (const f of layout) field(out, obj, f);
  return out;
}

export function programToFlatcJson(program: M.Program): Json {
  return table('Program', program as unknown as Record<string, unknown>);
}
