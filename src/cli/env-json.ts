// `trtx env --json` (schemas/env.schema.json, generated from this by
// scripts/gen-schemas.ts); env.ts builds it and imports its type alone.
import { z } from 'zod';

const nonEmpty = z.string().regex(/./);

export const EnvReport = z
  .strictObject({
    schema: z.literal('trtx.env/1'),
    python: nonEmpty.describe("The interpreter's path (or command name when named so)."),
    source: z
      .enum(['managed', '--python', 'TRTX_PYTHON'])
      .describe("managed: trtx's own environment; --python or TRTX_PYTHON: the user's."),
    dir: z.string().nullable().describe("The managed environment's folder; null for a named interpreter."),
    lock_hash: z
      .string()
      .regex(/^[0-9a-f]{16}$/)
      .describe('First 16 hex digits of the sha256 of python-bridge/requirements.lock.'),
    created: z.boolean().describe('True when this run made the managed environment.'),
    versions: z.strictObject({
      python: z.string().regex(/^[0-9]+\.[0-9]+\.[0-9]+$/),
      torch: z.string().nullable(),
      executorch: z.string().nullable(),
      torch_tensorrt: z.string().nullable(),
    }),
    executorch_sdk: nonEmpty.describe(
      'The SDK folder the native runner is built against, holding include/, lib/ and share/cmake: pass it as CMAKE_PREFIX_PATH.',
    ),
    sdk: z
      .strictObject({
        version: nonEmpty,
        wheel: z
          .string()
          .regex(/\.whl$/)
          .describe("The wheel's file name."),
        sha256: z.string().regex(/^[0-9a-f]{64}$/),
        created: z.boolean().describe('True when this run downloaded and unpacked it.'),
      })
      .describe('Where the SDK comes from: the pinned executorch wheel.'),
    mismatches: z.array(z.string()).describe('Locked packages whose installed version differs (named interpreters only).'),
  })
  .meta({
    title: 'trtx env --json, version 1',
    description:
      'The ExecuTorch C++ SDK the native runner is built against (the pinned executorch wheel of python-bridge/executorch-sdk.json, unpacked into the cache) and the Python environment trtx exports with (the managed one made from python-bridge/requirements.lock, or the interpreter named by --python / TRTX_PYTHON). Written by src/cli/commands/env.ts from src/cli/env-json.ts.',
  });
export type EnvReport = z.infer<typeof EnvReport>;
