// The FlatBuffers verifier of every buffer trtx reads from a file: the ET12
// program and the reference engines its fixtures carry (src/tensorrt/
// reference-engine.ts), each driven by its layout generated from its schema
// (layout.ts). It runs before any generated accessor touches the bytes and
// proves what those accessors assume: every offset, vtable, string and vector lies inside the
// buffer, scalars are aligned, union tags are known. It applies the limits of
// the C++ Verifier that ExecuTorch's Program::load runs
// (runtime/executor/program.cpp constructs flatbuffers::Verifier with its
// default Options: max_depth 64, max_tables 1,000,000, buffers under
// FLATBUFFERS_MAX_BUFFER_SIZE; flatbuffers include/flatbuffers/verifier.h),
// including its refusal of an offset of 0 ("may not point to itself").
//
// One limit is trtx's own, stricter than the runtime: the decode budget.
// The format lets many offsets name one table or string, and a decoder that
// materialises each reference pays once per reference, so an 800 KB file can
// stand for gigabytes. Every table, vector and string reached is charged its
// size in the buffer, once per time it is reached; an encoder that does not
// share data (ExecuTorch's flatc-based serializer, trtx's encoder) is charged
// at most the buffer's size, so a program charged more than
// DECODE_BUDGET_FACTOR times its size is refused as PTE_DECODE_BUDGET (an
// engine as REF_ENGINE_MALFORMED). Every later stage (decode, checks, --json)
// is bounded by what was charged here.

import type { Code } from '../codes/index.js';
import { TrtxError } from '../util/errors.js';
import { PROGRAM_LAYOUT, SCALAR_SIZE, type FieldKind, type FieldLayout, type Scalar, type SchemaLayout } from './layout.js';
import type { ProgramSource } from './program-source.js';
import { bytesSource } from './program-source.js';
import { present } from '../util/present.js';

const MAX_DEPTH = 64;
const MAX_TABLES = 1_000_000;
/** flatbuffers base.h FLATBUFFERS_MAX_BUFFER_SIZE: 2^31 - 1 (offsets are signed 32-bit). */
export const FLATBUFFERS_MAX_BUFFER_SIZE = 2 ** 31 - 1;
/** Bytes decoded per program byte before a program is refused (see above). */
export const DECODE_BUDGET_FACTOR = 2;

export function decodeBudget(programSize: number): number {
  return DECODE_BUDGET_FACTOR * programSize;
}

/** What is verified, and how its refusals read. */
export interface BufferFormat {
  layout: SchemaLayout;
  /** What the buffer is called in messages, and the first step of every location: program, engine. */
  noun: string;
  /** The code of a buffer that fails verification, and of one past the decode budget. */
  malformed: Code;
  overBudget: Code;
  /** The hint of every refusal but the budget's; none when undefined. */
  hint?: string;
  budgetHint: string;
  /** The location of a path inside the buffer; the path itself when undefined. */
  locate?: (path: string) => string;
}

export const PROGRAM_FORMAT: BufferFormat = {
  layout: PROGRAM_LAYOUT,
  noun: 'program',
  malformed: 'PTE_FLATBUFFER',
  overBudget: 'PTE_DECODE_BUDGET',
  budgetHint:
    'trtx refuses programs whose offsets share data (stricter than the ExecuTorch verifier, which counts tables only); re-serialize the program with an encoder that writes each table once',
};

export interface FlatBufferVerification {
  /** Bytes charged against the decode budget. */
  charged: number;
  /** One past the last byte any verified table, vector or string touches. */
  extent: number;
}

/**
 * One step of the location a refusal names: text as it is (the noun, a union
 * member), a field (".name") or a vector index ("[i]"). Kept unformatted: the
 * verifier visits every table and field of a program, and only a refusal
 * needs the text. With a string per step (and a closure per table), verifying
 * a 9.6 MB program of 150,000 planned tensors took 688 ms; now 237 ms
 * (medians of 7, through tsx, 2 cores).
 */
type PathStep = string | number | FieldLayout;
const stepText = (s: PathStep): string => (typeof s === 'string' ? s : typeof s === 'number' ? `[${s}]` : `.${s.name}`);

class Verifier {
  private tables = 0;
  charged = 0;
  extent = 0;
  private readonly path: PathStep[];
  private readonly length: number;

  constructor(
    private readonly src: ProgramSource,
    private readonly budget: number,
    private readonly format: BufferFormat,
  ) {
    this.length = src.length;
    this.path = [format.noun];
  }

  private location(): string {
    return this.path.map(stepText).join('');
  }

  fail(message: string): never {
    const path = this.location();
    throw new TrtxError(this.format.malformed, this.format.locate ? this.format.locate(path) : path, message, { hint: this.format.hint });
  }

  private charge(n: number): void {
    this.charged += n;
    if (this.charged > this.budget) {
      const path = this.location();
      throw new TrtxError(
        this.format.overBudget,
        this.format.locate ? this.format.locate(path) : path,
        `decoding would materialise more than ${this.budget} bytes, ${DECODE_BUDGET_FACTOR}x the ${this.length}-byte ${this.format.noun}: its offsets reach the same tables or strings again and again`,
        { hint: this.format.budgetHint },
      );
    }
  }

  private inBounds(at: number, size: number): void {
    if (at < 0 || size < 0 || at > this.length || size > this.length - at) {
      this.fail(`${size} bytes at offset ${at} run past the end of the ${this.format.noun} (${this.length} bytes)`);
    }
    if (at + size > this.extent) this.extent = at + size;
  }

  private aligned(at: number, align: number): void {
    if (at % align !== 0) this.fail(`offset ${at} is not ${align}-byte aligned`);
  }

  private u32(at: number): number {
    this.inBounds(at, 4);
    this.aligned(at, 4);
    return this.src.u32(at);
  }

  /** Follows a uoffset stored at `at`; returns the absolute target. */
  private deref(at: number): number {
    const o = this.u32(at);
    if (o === 0) this.fail(`offset at ${at} is 0 (an offset may not point to itself)`);
    if (o > FLATBUFFERS_MAX_BUFFER_SIZE) this.fail(`offset ${o} at ${at} is negative as a signed 32-bit offset`);
    const target = at + o;
    this.inBounds(target, 1);
    return target;
  }

  table(pos: number, name: string, depth: number): void {
    if (depth > MAX_DEPTH) this.fail(`tables nest deeper than ${MAX_DEPTH}`);
    if (++this.tables > MAX_TABLES) this.fail(`more than ${MAX_TABLES} tables`);
    this.inBounds(pos, 4);
    this.aligned(pos, 4);
    const vtable = pos - this.src.i32(pos);
    this.inBounds(vtable, 4);
    this.aligned(vtable, 2);
    const vsize = this.src.u16(vtable);
    const tsize = this.src.u16(vtable + 2);
    if (vsize < 4 || vsize % 2 !== 0) this.fail(`vtable size ${vsize} is invalid`);
    this.inBounds(vtable, vsize);
    this.inBounds(pos, tsize);
    this.charge(Math.max(tsize, 4));
    const slots = (vsize - 4) / 2;

    // The message is built only when the layout is missing (a trtx bug), not once per table.
    const fields = this.format.layout.tables[name] ?? present<readonly FieldLayout[]>(null, `the layout of table ${name}`);
    for (const field of fields) {
      const mark = this.path.length;
      this.path.push(field);
      if (field.kind.k === 'union') {
        const tagAt = this.fieldOffset(vtable, slots, field.kind.tagSlot);
        const valAt = this.fieldOffset(vtable, slots, field.slot);
        const tag = tagAt ? this.fieldScalar(pos, tagAt, tsize, 'u8') : 0;
        const members = present(this.format.layout.unions[field.kind.union], `the layout of union ${field.kind.union}`);
        const member = members[tag];
        if (member === undefined) this.fail(`unknown ${field.kind.union} member ${tag}`);
        if (tag !== 0 && valAt) {
          this.inField(valAt, tsize);
          this.path.push(`(${member})`);
          this.table(this.deref(pos + valAt), member, depth + 1);
        } else if (tag !== 0) {
          this.fail(`${field.kind.union} says ${member} but has no value`);
        }
      } else {
        const at = this.fieldOffset(vtable, slots, field.slot);
        if (at) this.field(pos, at, tsize, field.kind, depth);
      }
      this.path.length = mark;
    }
  }

  /** The offset of a field in its table, from the vtable; 0 when absent. */
  private fieldOffset(vtable: number, slots: number, slot: number): number {
    return slot < slots ? this.src.u16(vtable + 4 + 2 * slot) : 0;
  }

  // Real writers record a table size that can stop short of an 8-byte field
  // (seen in the corpus), and the runtime's C++ Verifier only bounds fields
  // by the buffer; so do we, but a field must still start inside the table.
  private inField(at: number, tsize: number): void {
    if (at >= tsize) this.fail(`field at ${at} lies outside its table (${tsize} bytes)`);
  }

  private fieldScalar(pos: number, at: number, tsize: number, t: Scalar): number {
    const size = SCALAR_SIZE[t];
    this.inField(at, tsize);
    this.inBounds(pos + at, size);
    this.aligned(pos + at, size);
    return t === 'u8' ? this.src.u8(pos + at) : 0;
  }

  private field(pos: number, at: number, tsize: number, kind: FieldKind, depth: number): void {
    switch (kind.k) {
      case 'scalar':
        this.fieldScalar(pos, at, tsize, kind.t);
        return;
      case 'string':
        this.inField(at, tsize);
        this.string(this.deref(pos + at));
        return;
      case 'table':
        this.inField(at, tsize);
        this.table(this.deref(pos + at), kind.table, depth + 1);
        return;
      case 'vector':
        this.inField(at, tsize);
        this.vector(this.deref(pos + at), SCALAR_SIZE[kind.of]);
        return;
      case 'vectorOfStrings': {
        this.inField(at, tsize);
        const start = this.deref(pos + at);
        const n = this.vector(start, 4);
        for (let i = 0; i < n; i++) this.string(this.deref(start + 4 + 4 * i));
        return;
      }
      case 'vectorOfTables': {
        this.inField(at, tsize);
        const start = this.deref(pos + at);
        const n = this.vector(start, 4);
        const mark = this.path.length;
        for (let i = 0; i < n; i++) {
          this.path[mark] = i;
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
    if (n > Math.floor((this.length - start - 4) / elemSize))
      this.fail(`vector of ${n} elements runs past the end of the ${this.format.noun}`);
    if (elemSize > 4) this.aligned(start + 4, elemSize);
    this.inBounds(start + 4, n * elemSize);
    this.charge(4 + n * elemSize);
    return n;
  }

  private string(start: number): void {
    const n = this.vector(start, 1);
    this.inBounds(start + 4 + n, 1);
    this.charge(1);
    if (this.src.u8(start + 4 + n) !== 0) this.fail('string is not NUL-terminated');
  }
}

/**
 * Verifies a whole buffer of `format` (root table offset at byte 0) given as
 * bytes in memory or as a paged source (program-source.ts). `budget`
 * defaults to decodeBudget(length).
 */
export function verifyFlatBuffer(
  bytes: Uint8Array | ProgramSource,
  rootOffset: number,
  format: BufferFormat,
  budget?: number,
): FlatBufferVerification {
  const src = bytes instanceof Uint8Array ? bytesSource(bytes) : bytes;
  const v = new Verifier(src, budget ?? decodeBudget(src.length), format);
  if (src.length > FLATBUFFERS_MAX_BUFFER_SIZE)
    v.fail(`the ${format.noun} is ${src.length} bytes, larger than a FlatBuffer can be (${FLATBUFFERS_MAX_BUFFER_SIZE})`);
  if (rootOffset < 8 || rootOffset + 4 > src.length) v.fail(`root offset ${rootOffset} is outside the ${format.noun}`);
  v.table(rootOffset, format.layout.root, 0);
  return { charged: v.charged, extent: v.extent };
}

/** Verifies a whole ET12 program buffer (root table Program). */
export function verifyProgramFlatBuffer(bytes: Uint8Array | ProgramSource, rootOffset: number, budget?: number): FlatBufferVerification {
  return verifyFlatBuffer(bytes, rootOffset, PROGRAM_FORMAT, budget);
}
