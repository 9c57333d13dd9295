// The --json documents' JSON Schemas (schemas/NAME.schema.json), each
// generated from the zod schema beside the code that builds the document.
// A file is its root schema plus the parts it keeps under $defs; a part
// another file keeps is referred to at its address there
// (https://trtx.dev/schemas/FILE#/$defs/NAME) instead of being copied, so
// every part has one statement.
import { z } from 'zod';
import { EnvReport } from '../src/cli/env-json.js';
import { RewriteOutput, RewriteReport } from '../src/cli/rewrite-json.js';
import * as passes from '../src/passes/details-json.js';
import { FixturesOutput, FixturesReport } from '../src/cli/fixtures-json.js';
import * as protocol from '../src/bridge/protocol.js';
import * as check from '../src/checks/report-json.js';
import { DemoOutput, DemoResultJson } from '../src/demo/result-json.js';
import * as diff from '../src/diff/report-json.js';
import * as inspect from '../src/inspect/report-json.js';
import { ExportOutput, ExportSummary } from '../src/export/summary-json.js';
import * as runner from '../src/runner/report.js';
import * as memory from '../src/runner/report-memory.js';
import * as verify from '../src/verify/result-json.js';
import { DecimalBudget, DecimalU64 } from '../src/util/decimal-json.js';
import { ErrorDetail, ErrorDocument } from '../src/util/error-document.js';
import { FindingJson } from '../src/util/finding-schema.js';

const DRAFT = 'https://json-schema.org/draft/2020-12/schema';
export const SCHEMA_BASE = 'https://trtx.dev/schemas/';

export interface SchemaFile {
  /** The file name under schemas/. */
  file: string;
  /** Absent for a file rendered elsewhere whose parts are referred to. */
  root?: z.ZodType;
  /** The parts kept under $defs, by name. */
  defs?: Record<string, z.ZodType>;
}

export const SCHEMA_FILES: readonly SchemaFile[] = [
  { file: 'error.schema.json', root: ErrorDocument, defs: { detail: ErrorDetail } },
  { file: 'env.schema.json', root: EnvReport },
  { file: 'fixtures.schema.json', root: FixturesOutput, defs: { result: FixturesReport } },
  {
    file: 'runner-report.schema.json',
    root: runner.RunnerReport,
    defs: {
      budget_bytes: DecimalBudget,
      u64_bytes: DecimalU64,
      elision: runner.Elision,
      method: runner.MethodReport,
      delegate: runner.DelegateReport,
      weight_placement: runner.WeightPlacement,
      budget: runner.BudgetResolution,
      options: runner.RunnerOptions,
      device: runner.RunnerDevice,
      backend: runner.RunnerBackend,
      step: runner.StepReport,
      output: runner.OutputDigest,
      buffer: runner.BufferDigest,
      delegate_step: runner.DelegateStep,
      stand_in_bytes: runner.StandInBytes,
      memory: memory.MemoryReport,
      pool: memory.PoolReport,
      pool_device: memory.PoolDevice,
      scratch: memory.ScratchReport,
      scratch_device: memory.ScratchDevice,
      capacity_event: memory.CapacityEvent,
      device_arenas: memory.DeviceArenas,
      error: runner.RunnerError,
    },
  },
  {
    file: 'verify.schema.json',
    root: verify.VerifyOutput,
    defs: {
      result: verify.VerifyResultJson,
      run: verify.VerifyRunJson,
      budget: verify.VerifyBudgetJson,
      memory: verify.VerifyMemoryJson,
      reference: verify.VerifyReferenceJson,
      comparison: verify.RunComparisonJson,
      assertion: verify.AssertionJson,
    },
  },
  {
    file: 'diff.schema.json',
    root: diff.DiffOutput,
    defs: {
      report: diff.DiffReport,
      fieldChange: diff.FieldChange,
      method: diff.MethodDiff,
      instruction: diff.InstructionChange,
      delegate: diff.DelegateDiff,
      specValue: diff.SpecValue,
      arena: diff.ArenaState,
      tensor: diff.TensorChange,
      place: diff.TensorPlace,
      staging: diff.StagingCounts,
    },
  },
  {
    file: 'rewrite.schema.json',
    root: RewriteOutput,
    defs: {
      report: RewriteReport,
      pass: passes.PassJson,
      budgetPass: passes.BudgetPassJson,
      budgetEdit: passes.BudgetEditJson,
      budgetState: passes.BudgetStateJson,
      zeroCopyPass: passes.ZeroCopyPassJson,
      zeroCopyDelegate: passes.ZeroCopyDelegateJson,
      staging: passes.StagingJson,
      zeroCopyMethod: passes.ZeroCopyMethodJson,
    },
  },
  {
    file: 'inspect.schema.json',
    root: inspect.InspectOutput,
    defs: {
      report: inspect.InspectReport,
      header: inspect.InspectHeader,
      program: inspect.InspectProgram,
      tensor: inspect.TensorSummary,
      counts: inspect.Counts,
      method: inspect.MethodSummary,
      failure: inspect.Failure,
      delegate: inspect.DelegateSummary,
      compileSpec: inspect.SpecSummary,
      streaming: inspect.EngineStreamingJson,
    },
  },
  { file: 'demo.schema.json', root: DemoOutput, defs: { result: DemoResultJson } },
  { file: 'export.schema.json', root: ExportOutput, defs: { summary: ExportSummary } },
  {
    file: 'check.schema.json',
    root: check.CheckOutput,
    defs: {
      report: check.CheckReport,
      files: check.CheckFilesReport,
      refusal: check.CheckRefusal,
      engines: check.EngineCensusJson,
      summary: check.CheckSummary,
      runtime: check.RuntimeRulesJson,
      diagnostic: FindingJson,
    },
  },
];

// Parts of the bridge protocol (rendered by gen-schemas.ts) that a --json
// document repeats: what the bridge reported.
const BRIDGE_PARTS: SchemaFile = {
  file: 'bridge-protocol.schema.json',
  defs: { decimalBytes: protocol.DecimalBytes, versions: protocol.Versions, method: protocol.ExportedMethod },
};

type Json = Record<string, unknown>;

/** Renders one of `files` with the parts of the others as references. */
export function renderSchemaFile(target: SchemaFile, files: readonly SchemaFile[] = [...SCHEMA_FILES, BRIDGE_PARTS]): string {
  const registry = z.registry<{ id: string }>();
  for (const f of files) {
    if (f.root) registry.add(f.root, { id: f.file });
    for (const [name, schema] of Object.entries(f.defs ?? {})) registry.add(schema, { id: `${f.file}#/$defs/${name}` });
  }
  const own = `${target.file}#`;
  const uri = (id: string) => (id.startsWith(own) ? id.slice(target.file.length) : `${SCHEMA_BASE}${id}`);
  const { schemas } = z.toJSONSchema(registry, { target: 'draft-2020-12', uri });
  const strip = (s: unknown): Json => {
    const { $schema: _draft, $id: _id, ...rest } = s as Json;
    return rest;
  };
  const { title, description, ...root } = strip(schemas[target.file]);
  const defs = Object.fromEntries(Object.keys(target.defs ?? {}).map((name) => [name, strip(schemas[`${own}/$defs/${name}`])]));
  const doc: Json = { $schema: DRAFT, $id: `${SCHEMA_BASE}${target.file}`, title, description, ...root };
  if (Object.keys(defs).length > 0) doc.$defs = defs;
  return `${JSON.stringify(doc, null, 2)}\n`;
}
