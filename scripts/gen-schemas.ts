// Writes the JSON Schemas whose one source is a zod schema in src/, with
// zod's own z.toJSONSchema, so the language-neutral statement of a contract
// cannot drift from the code that enforces it:
//   schemas/reference-outputs.schema.json  <- src/reference/schema.ts (ReferenceFile)
//   schemas/bridge-protocol.schema.json    <- src/bridge/protocol.ts (BridgeRequest, BridgeEvent)
//   schemas/NAME.schema.json of the --json documents <- scripts/schema-files.ts
// `--check` writes nothing and fails when a committed file differs
// (`npm run gen:check`, run by .ci/run).
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';
import * as protocol from '../src/bridge/protocol.js';
import { ReferenceFile } from '../src/reference/schema.js';
import { writeOrCheck } from './gen-output.js';
import { renderSchemaFile, SCHEMA_FILES } from './schema-files.js';

const DRAFT = 'https://json-schema.org/draft/2020-12/schema';
const schemaFile = (name: string) => fileURLToPath(new URL(`../schemas/${name}`, import.meta.url));

export const REFERENCE_SCHEMA_FILE = schemaFile('reference-outputs.schema.json');
export const BRIDGE_SCHEMA_FILE = schemaFile('bridge-protocol.schema.json');

const text = (doc: unknown) => `${JSON.stringify(doc, null, 2)}\n`;

export function renderReferenceSchema(): string {
  const schema = z.toJSONSchema(ReferenceFile, { target: 'draft-2020-12' });
  return text({ ...schema, $id: 'https://trtx.dev/schemas/reference-outputs.schema.json' });
}

const BRIDGE_DESCRIPTION =
  'trtx starts `python -m trtx_bridge`, writes one `request` on its stdin, and reads newline-delimited JSON `event`s ' +
  'from its stdout: `hello` first, then any number of `progress` and `warning`, then exactly one `result` or `error`. ' +
  'Anything else on stdout is a protocol failure. The bridge logs to stderr. Generated from the zod schemas of ' +
  'src/bridge/protocol.ts by scripts/gen-schemas.ts (`npm run gen`); do not edit. test/vectors/bridge-request.json ' +
  'holds the requests every reader (zod, this schema, python-bridge/trtx_bridge/request.py) must judge alike.';

/** The protocol as one document: the shared parts under $defs, referenced where they recur. */
export function renderBridgeSchema(): string {
  const registry = z.registry<{ id: string }>();
  registry.add(protocol.BridgeRequest, { id: 'request' });
  registry.add(protocol.BridgeEvent, { id: 'event' });
  registry.add(protocol.DecimalBytes, { id: 'decimalBytes' });
  registry.add(protocol.Versions, { id: 'versions' });
  registry.add(protocol.Capabilities, { id: 'capabilities' });
  registry.add(protocol.ExportedMethod, { id: 'method' });
  const { schemas } = z.toJSONSchema(registry, { target: 'draft-2020-12', uri: (id) => `#/$defs/${id}` });
  const defs: Record<string, unknown> = {};
  for (const [id, schema] of Object.entries(schemas)) {
    const { $schema: _draft, $id: _id, ...rest } = schema as Record<string, unknown>;
    defs[id] = rest;
  }
  return text({
    $schema: DRAFT,
    $id: 'https://trtx.dev/schemas/bridge-protocol.schema.json',
    title: `trtx Python bridge protocol, version ${protocol.PROTOCOL_VERSION}`,
    description: BRIDGE_DESCRIPTION,
    $defs: defs,
    oneOf: [{ $ref: '#/$defs/request' }, { $ref: '#/$defs/event' }],
  });
}

export const OUTPUTS: ReadonlyArray<readonly [string, () => string]> = [
  [REFERENCE_SCHEMA_FILE, renderReferenceSchema],
  [BRIDGE_SCHEMA_FILE, renderBridgeSchema],
  ...SCHEMA_FILES.map((f) => [schemaFile(f.file), () => renderSchemaFile(f)] as const),
];

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  writeOrCheck(OUTPUTS.map(([file, render]) => [file, render()] as const));
}
