// A FlatBuffers verifier for the ET12 program, driven by layout.ts. It runs
// before any generated accessor touches the bytes and proves what those
// accessors assume: every offset, vtable, string and vector lies inside the
// buffer, scalars are aligned, union tags are known. Limits on depth and on
// the number of tables stop a file whose offsets share subtrees from making
// verification exponential (the same limits the C++ Verifier applies).

import { TrtxError } from '../util/errors.js';
import { SCALAR_SIZE, TABLES, UNIONS, type FieldKind, type Scalar } from './layout.js';

const MAX_DEPTH = 64;
const MAX_TABLES = 1_000_000;

class Verifier {
  private tables = 0;
  private readonly path: string[] = ['program'];
  private readonly view: DataView;

  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  fail(message: string): never {
    throw new TrtxError('PTE_FLATBUFFER', this.path.join(''), message);
  }

  private inBounds(at: number, size: number): void {
    if (at < 0 || size < 0 || at > this.bytes.length || size > this.bytes.length - at) {
      this.fail(`${size} bytes at offset ${at} run past the end of the program (${this.bytes.length} bytes)`);
    }
  }

  private aligned(at: number, align: number): void {
    if (at % align !== 0) this.fail(`offset ${at} is not ${align}-byte aligned`);
  }

  private u32(at: number): number {
    this.inBounds(at, 4);
    this.aligned(at, 4);
    return this.view.getUint32(at, true);
  }

  /** Follows a uoffset stored at `at`; returns the absolute target. */
  private deref(at: number): number {
    const target = at + this.u32(at);
    this.inBounds(target, 0);
    return target;
  }

  table(pos: number, name: string, depth: number): void {
    if (depth > MAX_DEPTH) this.fail(`tables nest deeper than ${MAX_DEPTH}`);
    if (++this.tables > MAX_TABLES) this.fail(`more than ${MAX_TABLES} tables`);
    this.inBounds(pos, 4);
    this.aligned(pos, 4);
    const vtable = pos - this.view.getInt32(pos, true);
    this.inBounds(vtable, 4);
    this.aligned(vtable, 2);
    const vsize = this.view.getUint16(vtable, true);
    const tsize = this.view.getUint16(vtable + 2, true);
    if (vsize < 4 || vsize % 2 !== 0) this.fail(`vtable size ${vsize} is invalid`);
    this.inBounds(vtable, vsize);
    this.inBounds(pos, tsize);
    const slots = (vsize - 4) / 2;
    const fieldOffset = (slot: number) => (slot < slots ? this.view.getUint16(vtable + 4 + 2 * slot, true) : 0);

    let slot = 0;
    for (const field of TABLES[name]) {
      const mark = this.path.length;
      this.path.push(`.${field.name}`);
      if (field.kind.k === 'union') {
        const tagAt = fieldOffset(slot);
        const valAt = fieldOffset(slot + 1);
        const tag = tagAt ? this.fieldScalar(pos, tagAt, tsize, 'u8') : 0;
        const members = UNIONS[field.kind.union];
        if (tag >= members.length) this.fail(`unknown ${field.kind.union} member ${tag}`);
        if (tag !== 0 && valAt) {
          this.inField(valAt, 4, tsize);
          this.path.push(`(${members[tag]})`);
          this.table(this.deref(pos + valAt), members[tag], depth + 1);
        } else if (tag !== 0) {
          this.fail(`${field.kind.union} says ${members[tag]} but has no value`);
        }
        slot += 2;
      } else {
        const at = fieldOffset(slot);
        if (at) this.field(pos, at, tsize, field.kind, depth);
        slot += 1;
      }
      this.path.length = mark;
    }
  }

  // Real writers record a table size that can stop short of an 8-byte field
  // (seen in the corpus), and the runtime's C++ Verifier only bounds fields
  // by the buffer; so do we, but a field must still start inside the table.
  private inField(at: number, _size: number, tsize: number): void {
    if (at >= tsize) this.fail(`field at ${at} lies outside its table (${tsize} bytes)`);
  }

  private fieldScalar(pos: number, at: number, tsize: number, t: Scalar): number {
    const size = SCALAR_SIZE[t];
    this.inField(at, size, tsize);
    this.inBounds(pos + at, size);
    this.aligned(pos + at, size);
    return t === 'u8' ? this.bytes[pos + at] : 0;
  }

  private field(pos: number, at: number, tsize: number, kind: FieldKind, depth: number): void {
    switch (kind.k) {
      case 'scalar':
        this.fieldScalar(pos, at, tsize, kind.t);
        return;
      case 'string':
        this.inField(at, 4, tsize);
        this.string(this.deref(pos + at));
        return;
      case 'table':
        this.inField(at, 4, tsize);
        this.table(this.deref(pos + at), kind.table, depth + 1);
        return;
      case 'vector':
        this.inField(at, 4, tsize);
        this.vector(this.deref(pos + at), SCALAR_SIZE[kind.of]);
        return;
      case 'vectorOfStrings': {
        this.inField(at, 4, tsize);
        const start = this.deref(pos + at);
        const n = this.vector(start, 4);
        for (let i = 0; i < n; i++) this.string(this.deref(start + 4 + 4 * i));
        return;
      }
      case 'vectorOfTables': {
        this.inField(at, 4, tsize);
        const start = this.deref(pos + at);
        const n = this.vector(start, 4);
        const mark = this.path.length;
        for (let i = 0; i < n; i++) {
          this.path[mark] = `[${i}]`;
          this.path.length = mark + 1;
          this.table(this.deref(start + 4 + 4 * i), kind.table, depth + 1);
        }
        this.path.length = mark;
        return;
      }
      case 'union':
        return; // handled by table()
    }
  }

  /** Checks a vector's length prefix and body; returns its length. */
  private vector(start: number, elemSize: number): number {
    const n = this.u32(start);
    if (n > Math.floor((this.bytes.length - start - 4) / elemSize)) this.fail(`vector of ${n} elements runs past the end of the program`);
    if (elemSize > 4) this.aligned(start + 4, elemSize);
    return n;
  }

  private string(start: number): void {
    const n = this.vector(start, 1);
    this.inBounds(start + 4 + n, 1);
    if (this.bytes[start + 4 + n] !== 0) this.fail('string is not NUL-terminated');
  }
}

/** Verifies a whole program buffer (root offset at byte 0, table Program). */
export function verifyProgram(bytes: Uint8Array, rootOffset: number): void {
  const v = new Verifier(bytes);
  if (rootOffset < 8 || rootOffset + 4 > bytes.length) v.fail(`root offset ${rootOffset} is outside the program`);
  v.table(rootOffset, 'Program', 0);
}
