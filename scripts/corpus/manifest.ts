// The real-program corpus's manifest (written by python-bridge/corpus/build.py):
// which programs exist, from which model, with which methods and inputs.

import { z } from 'zod';

const Input = z.strictObject({ dtype: z.string(), shape: z.array(z.number().int().min(0)) });

export const CorpusModel = z.strictObject({
  name: z.string().regex(/^[a-z][a-z0-9-]*$/),
  description: z.string(),
  methods: z.record(z.string(), z.strictObject({ inputs: z.array(Input) })),
  files: z.strictObject({ reference: z.string(), portable: z.string(), unnamed: z.string().optional() }),
  torch_executed_ops: z.array(z.string()),
  initialized_buffers: z.array(z.string()),
  share_mutable_buffers: z.boolean(),
});
export type CorpusModel = z.infer<typeof CorpusModel>;

export const CorpusManifest = z.strictObject({
  schema: z.literal('trtx.corpus/1'),
  models: z.array(CorpusModel).min(1),
  mixed: z.strictObject({ file: z.string(), cpu_methods: z.array(z.string()), tensorrt_methods: z.array(z.string()) }),
  archive: z.strictObject({ file: z.string(), model: z.string(), method: z.string() }),
  versions: z.strictObject({ python: z.string(), torch: z.string(), executorch: z.string() }),
  seconds: z.number(),
});
export type CorpusManifest = z.infer<typeof CorpusManifest>;
