// The SARIF 2.1.0 JSON schema for the tests, and a validator for it.
//
// The schema text is not in this repository. npm has no package shipping
// OASIS's `sarif-schema-2.1.0.json` itself; @microsoft/jest-sarif (from
// microsoft/sarif-js-sdk) ships `sarif-2.1.0-rtm.5.json`, the schema of the
// final 2.1.0 release candidate. Compared key by key with the OASIS file
// (oasis-tcs/sarif-spec, sarif-2.1/schema/sarif-schema-2.1.0.json, errata 01)
// it differs only in the places `ERRATA` below restores: a region must give
// startLine, charOffset or byteOffset; enum properties also declare
// `type: string`; `runs` may be null; the language-tag pattern is fixed.
// Each patch first checks the rtm.5 text is as expected, so a changed
// package fails here instead of silently validating against something else.
// Both files are JSON Schema draft-04; Ajv validates draft-04 through
// ajv-draft-04, formats (uri, uri-reference, date-time) through ajv-formats.
import { createRequire } from 'node:module';
import Ajv04 from 'ajv-draft-04';
import addFormats from 'ajv-formats';

const require = createRequire(import.meta.url);

type Json = Record<string, any>;

const STRING_ENUMS = [
  'definitions.artifact.properties.roles.items',
  'definitions.externalProperties.properties.version',
  'definitions.notification.properties.level',
  'definitions.reportingConfiguration.properties.level',
  'definitions.result.properties.baselineState',
  'definitions.result.properties.kind',
  'definitions.result.properties.level',
  'definitions.run.properties.columnKind',
  'definitions.suppression.properties.kind',
  'definitions.suppression.properties.status',
  'definitions.threadFlowLocation.properties.importance',
  'definitions.toolComponent.properties.contents.items',
  'properties.version',
];

const at = (doc: Json, path: string): Json => path.split('.').reduce((o, k) => o[k], doc);

function expectRtm5(cond: boolean, what: string): void {
  if (!cond) throw new Error(`@microsoft/jest-sarif's sarif-2.1.0-rtm.5.json is not what test/helpers/sarif-schema.ts expects: ${what}`);
}

const ERRATA: ((s: Json) => void)[] = [
  (s) => {
    const region = at(s, 'definitions.region');
    expectRtm5(region.anyOf === undefined, 'region already has anyOf');
    region.anyOf = [{ required: ['startLine'] }, { required: ['charOffset'] }, { required: ['byteOffset'] }];
  },
  (s) => {
    for (const p of STRING_ENUMS) {
      const node = at(s, p);
      expectRtm5(Array.isArray(node.enum) && node.type === undefined, `${p} is not an untyped enum`);
      node.type = 'string';
    }
  },
  (s) => {
    expectRtm5(s.properties.runs.type === 'array', 'runs is not an array type');
    s.properties.runs.type = ['array', 'null'];
  },
  (s) => {
    for (const p of ['definitions.run.properties.language', 'definitions.toolComponent.properties.language']) {
      expectRtm5(at(s, p).pattern === '^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$', `${p} pattern changed`);
      at(s, p).pattern = '^[a-zA-Z]{2}(-[a-zA-Z]{2})?$';
    }
  },
];

export const SARIF_2_1_0_ID = 'https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json';

export function sarifSchema(): Json {
  const rtm5 = structuredClone(require('@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json')) as Json;
  expectRtm5(rtm5.$schema === 'http://json-schema.org/draft-04/schema#', 'not draft-04');
  for (const patch of ERRATA) patch(rtm5);
  rtm5.id = SARIF_2_1_0_ID;
  rtm5.title = 'Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema';
  return rtm5;
}

export function sarifValidator() {
  const ajv = new Ajv04({ allErrors: true, strict: false });
  addFormats(ajv);
  return ajv.compile(sarifSchema());
}
