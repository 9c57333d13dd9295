// `trtx check --format sarif`: the diagnostics as a SARIF 2.1.0 log (OASIS
// SARIF v2.1.0 errata 01), the format code-scanning services ingest. One
// result per diagnostic; the rule id is the stable code; the rule's help is
// the hint and the document that explains the rule family; the location is
// the file plus the logical path (method > delegate > binding) as a chain of
// logical locations.
//
// Code scanning shows an alert only at a region with a start line
// (docs.github.com "SARIF support for code scanning"); a .pte has no lines,
// so each result points at line 1 of the file and its logical location
// carries the real place.

import { createHash } from 'node:crypto';
import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Diagnostic } from '../checks/diagnostic.js';
import { TRTX_VERSION } from '../util/version.js';

export const SARIF_SCHEMA_URI = 'https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json';

type Level = 'error' | 'warning' | 'note';
const LEVEL: Record<Diagnostic['severity'], Level> = { error: 'error', warning: 'warning', info: 'note' };

/** The document, inside the trtx package, that explains a code's rule family. */
export function docsFor(code: string): string {
  if (code.startsWith('ZC_')) return 'docs/zero-copy-kv.md';
  return 'docs/commands/check.md';
}

/** The file as a URI reference: a relative path stays relative (code scanning resolves it against the checkout), percent-encoded. */
export function artifactUri(file: string): string {
  if (isAbsolute(file)) return pathToFileURL(file).href;
  return file.split(/[\\/]/).map(encodeURIComponent).join('/');
}

export interface SarifInput {
  file: string;
  diagnostics: readonly Diagnostic[];
  /** The exit code `trtx check` returns for these diagnostics. */
  exitCode: number;
}

interface LogicalLocation {
  name: string;
  fullyQualifiedName: string;
  kind: string;
  parentIndex?: number;
}

/** SARIF's well-known logical location kinds for each step of a trtx location path. */
function kindOf(step: string, depth: number): string {
  if (depth === 0) return step === 'program' ? 'module' : 'function';
  if (step.startsWith('delegate ')) return 'module';
  if (step.startsWith('binding ')) return 'parameter';
  if (step.startsWith('chain ') || step.startsWith('instruction ')) return 'member';
  if (step.startsWith('compile_specs') || step.startsWith('header') || step.startsWith('aliased_io') || step === 'metadata')
    return 'property';
  return 'variable';
}

/** Splits `decode > delegate 0 (TensorRTBackend) > binding k` into its steps. */
export const locationSteps = (location: string) => location.split(' > ').filter((s) => s.length > 0);

export function toSarif(input: SarifInput): object {
  const rules: { id: string; hint: string }[] = [];
  const ruleIndex = new Map<string, number>();
  const logical: LogicalLocation[] = [];
  const logicalIndex = new Map<string, number>();

  const logicalFor = (location: string): number => {
    const steps = locationSteps(location);
    let parent: number | undefined;
    steps.forEach((step, depth) => {
      const fqn = steps.slice(0, depth + 1).join(' > ');
      let i = logicalIndex.get(fqn);
      if (i === undefined) {
        i = logical.length;
        logical.push({
          name: step,
          fullyQualifiedName: fqn,
          kind: kindOf(step, depth),
          ...(parent === undefined ? {} : { parentIndex: parent }),
        });
        logicalIndex.set(fqn, i);
      }
      parent = i;
    });
    return parent ?? -1;
  };

  const results = input.diagnostics.map((d) => {
    let r = ruleIndex.get(d.code);
    if (r === undefined) {
      r = rules.length;
      rules.push({ id: d.code, hint: d.hint });
      ruleIndex.set(d.code, r);
    }
    const li = logicalFor(d.location || 'program');
    const where = logical[li];
    if (!where) throw new Error(`no logical location ${li}`);
    return {
      ruleId: d.code,
      ruleIndex: r,
      level: LEVEL[d.severity],
      message: { text: `${d.message} (at ${d.location || 'program'}; hint: ${d.hint})` },
      locations: [
        {
          physicalLocation: { artifactLocation: { uri: artifactUri(input.file), index: 0 }, region: { startLine: 1 } },
          logicalLocations: [{ index: li, fullyQualifiedName: where.fullyQualifiedName, kind: where.kind }],
        },
      ],
      // Code scanning matches alerts across runs by these; a .pte has no
      // source lines to hash, so the code and the logical path identify it.
      partialFingerprints: { 'trtxDiagnostic/v1': createHash('sha256').update(`${d.code}\u0000${d.location}`).digest('hex').slice(0, 32) },
    };
  });

  return {
    $schema: SARIF_SCHEMA_URI,
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'trtx',
            version: TRTX_VERSION,
            semanticVersion: TRTX_VERSION,
            rules: rules.map(({ id, hint }) => {
              const doc = docsFor(id);
              return {
                id,
                name: id,
                shortDescription: { text: `trtx check ${id}` },
                help: { text: `${hint}\nSee ${doc} in trtx.`, markdown: `${hint}\n\nSee [${doc}](${doc}) in trtx.` },
                properties: { docs: doc },
              };
            }),
          },
        },
        artifacts: [{ location: { uri: artifactUri(input.file) }, roles: ['analysisTarget'] }],
        logicalLocations: logical,
        invocations: [{ executionSuccessful: true, exitCode: input.exitCode }],
        results,
      },
    ],
  };
}
