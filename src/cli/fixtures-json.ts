// `trtx fixtures --json` (schemas/fixtures.schema.json, generated from this
// by scripts/gen-schemas.ts); fixtures.ts builds it and imports its type alone.
import { z } from 'zod';
import { ErrorDocument } from '../util/error-document.js';

export const FixturesReport = z.strictObject({
  schema: z.literal('trtx.fixtures/1'),
  dir: z.string().describe('DIR as given on the command line.'),
  files: z
    .array(
      z.strictObject({
        file: z
          .string()
          .regex(/^[a-z0-9-]+\.pte$/)
          .describe('The file name inside DIR.'),
        bytes: z.number().int().min(1),
        sound: z.boolean().describe('False for a broken- program: one that every check must refuse, for the fault its name says.'),
        description: z.string().regex(/./),
      }),
    )
    .min(1)
    .describe('In catalogue order.'),
});
export type FixturesReport = z.infer<typeof FixturesReport>;

export const FixturesOutput = z.union([FixturesReport, ErrorDocument]).meta({
  title: 'trtx fixtures --json, version 1',
  description:
    'What `trtx fixtures DIR [--only TEXT] --json` prints on stdout: the programs it wrote (exit 0), or the error document of schemas/error.schema.json when it could not (exit 2: DIR cannot be made or is not a folder, --only matches nothing). Written by src/cli/commands/fixtures.ts (from src/examples/write-catalogue.ts) as src/cli/fixtures-json.ts says; test/cli-json-schemas.test.ts validates real outputs against this file.',
});
