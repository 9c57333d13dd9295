// What the TensorRTBackend delegates of a program hold (engine-kind.ts's
// EngineCensus) as the --json documents state it (check, inspect, verify);
// the zod schema schemas/check.schema.json keeps under $defs/engines.
import { z } from 'zod';

const count = z.number().int().min(0);

export const EngineCensusJson = z.strictObject({
  tensorrt: count,
  reference: count,
  synthetic: count.describe(
    'Of the reference engines: version 1, synthetic (fixtures and benchmarks; they compute a made-up function, not the model).',
  ),
  programs: z
    .strictObject({ engines: count, instructions: count, operators: count, weight_bytes: count, program_bytes: count })
    .describe(
      'Of the reference engines: version 2, the partition as an ExecuTorch program (docs/reference-lowering.md), with totals over their programs.',
    ),
  unknown: count,
});
