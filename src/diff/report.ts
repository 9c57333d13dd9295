// What `trtx diff` reports, as data (schemas/diff.schema.json). Every list
// holds changes only: two programs that mean the same thing give empty lists
// and `equivalent: true`, whatever their bytes.

export type Scalar = string | number | boolean;

/** A header or program field whose value differs; null where one side has none. */
export interface FieldChange {
  field: string;
  before: Scalar | null;
  after: Scalar | null;
}

export interface InstructionChange {
  chain: number;
  change: 'added' | 'removed' | 'moved';
  /** Index in the chain of A (null for an addition). */
  before_index: number | null;
  /** Index in the chain of B (null for a removal). */
  after_index: number | null;
  /** `KernelCall`, `DelegateCall`, ... */
  kind: string;
  /** Operator name and overload of a kernel call (`et_copy::_h2d_copy.out`), else null. */
  op: string | null;
  text: string;
}

export interface DelegateArgChange {
  /** Which call of this delegate (0: its first DelegateCall). */
  call: number;
  change: 'added' | 'removed' | 'rebound';
  /** The binding name (TensorRT io_bindings), or `argN` where the binding is not known. */
  name: string;
  before: string | null;
  after: string | null;
}

export interface SpecValue {
  size: number;
  /** Printable form of the raw bytes. */
  raw: string;
  decoded: { target_device?: string; budget_bytes?: string; budget_iec?: string; zero_copy_kv?: string[] } | null;
  error: string | null;
}

export interface SpecChange {
  key: string | null;
  change: 'added' | 'removed' | 'changed';
  before: SpecValue | null;
  after: SpecValue | null;
}

export interface DelegateDiff {
  index: number;
  backend_id: string | null;
  change: 'added' | 'removed' | 'changed';
  /** How many DelegateCall instructions call it, when that differs. */
  calls: { before: number; after: number } | null;
  args: DelegateArgChange[];
  compile_specs: SpecChange[];
  blob: FieldChange[];
}

export interface ArenaState {
  size: number;
  device: string;
}

export interface ArenaChange {
  index: number;
  before: ArenaState | null;
  after: ArenaState | null;
}

export interface TensorPlace {
  dtype: string;
  shape: number[];
  /** Planned arena (memory_id) and offset; null when not memory-planned. */
  arena: number | null;
  offset: number | null;
  /** Device of the arena (cpu for an unplanned tensor). */
  device: string;
  /** Device the tensor's extra_tensor_info claims. */
  tagged_device: string;
}

export interface TensorChange {
  /** fully_qualified_name. */
  name: string;
  change: 'added' | 'removed' | 'changed';
  /** Arena, offset or device differ. */
  moved: boolean;
  /** Dtype or shape differ. */
  retyped: boolean;
  before: TensorPlace | null;
  after: TensorPlace | null;
}

export interface IoChange {
  role: 'input' | 'output';
  index: number;
  before: string | null;
  after: string | null;
}

export interface StagingCounts {
  host_to_device_bytes: number;
  device_to_host_bytes: number;
  copies: number;
}

export interface MethodDiff {
  name: string;
  change: 'added' | 'removed' | 'changed';
  io: IoChange[];
  instructions: InstructionChange[];
  delegates: DelegateDiff[];
  arenas: ArenaChange[];
  tensors: TensorChange[];
  /** Host<->device copy traffic per execution, when it differs. */
  staging: { before: StagingCounts; after: StagingCounts } | null;
}

export interface SegmentChange {
  index: number;
  before: number | null;
  after: number | null;
}

export interface DiffReport {
  schema: 'trtx.diff/1';
  a: string;
  b: string;
  /** The --method filter, or null for every method. */
  method: string | null;
  /** No difference of meaning. */
  equivalent: boolean;
  /** Number of change entries below (a removed method counts once). */
  changes: number;
  header: FieldChange[];
  program: FieldChange[];
  segments: { count: { before: number; after: number } | null; sizes: SegmentChange[] };
  methods: MethodDiff[];
}

export function methodChangeCount(m: MethodDiff): number {
  if (m.change !== 'changed') return 1;
  const delegates = m.delegates.reduce(
    (n, d) => n + (d.change !== 'changed' ? 1 : (d.calls ? 1 : 0) + d.args.length + d.compile_specs.length + d.blob.length),
    0,
  );
  return m.io.length + m.instructions.length + delegates + m.arenas.length + m.tensors.length + (m.staging ? 1 : 0);
}

export function changeCount(r: Pick<DiffReport, 'header' | 'program' | 'segments' | 'methods'>): number {
  return (
    r.header.length +
    r.program.length +
    (r.segments.count ? 1 : 0) +
    r.segments.sizes.length +
    r.methods.reduce((n, m) => n + methodChangeCount(m), 0)
  );
}
