// The project's JSON Schemas (schemas/*.schema.json, draft 2020-12) checked
// with Ajv, the field's standard validator, in strict mode: an unknown
// keyword or a malformed schema throws instead of validating less than the
// schema says. `validate` returns one line per violation, empty when the
// value is valid. Every file under schemas/ is known to the validator at its
// own $id, so a schema's reference into another file (demo's to verify's, a
// command's to the error document) resolves as it would for any reader.
import { readdirSync, readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

type Schema = Record<string, unknown>;

const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
const SCHEMAS = new URL('../../schemas/', import.meta.url);
for (const name of readdirSync(SCHEMAS).filter((n) => n.endsWith('.schema.json'))) {
  ajv.addSchema(JSON.parse(readFileSync(new URL(name, SCHEMAS), 'utf8')) as Schema);
}
const compiled = new WeakMap<Schema, Map<string, ValidateFunction>>();
let anonymous = 0;

function validatorFor(root: Schema, ref: string): ValidateFunction {
  let byRef = compiled.get(root);
  if (!byRef) {
    byRef = new Map();
    compiled.set(root, byRef);
  }
  let fn = byRef.get(ref);
  if (!fn) {
    // Each root gets its own id (a copy, so the caller's object is left as
    // it is), so two versions of one schema (a test damaging a copy) never
    // collide in Ajv's registry.
    const id = `https://trtx.test/schema-${++anonymous}.json`;
    ajv.addSchema({ ...root, $id: id });
    fn = ajv.getSchema(`${id}${ref}`);
    if (!fn) throw new Error(`no schema at ${ref}`);
    byRef.set(ref, fn);
  }
  return fn;
}

/**
 * Validates `value` against `root`, or against the part of it `at` names
 * (`{ $ref: '#/$defs/request' }`). Lines read `/path: message`.
 */
export function validate(root: Schema, value: unknown, at?: { $ref: string }): string[] {
  const fn = validatorFor(root, at?.$ref ?? '');
  if (fn(value)) return [];
  return (fn.errors ?? []).map((e) => `${e.instancePath || '/'}: ${e.message ?? e.keyword}`);
}
