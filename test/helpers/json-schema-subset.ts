// A validator for the part of JSON Schema 2020-12 that
// schemas/bridge-protocol.schema.json uses, so the test can hold the schema
// file and the zod schemas to the same samples without a validator package.
// An unknown keyword throws: the subset must grow with the schema, never
// silently ignore a constraint.

type Schema = Record<string, unknown> | boolean;

const ANNOTATIONS = new Set(['$schema', '$id', 'title', 'description', '$defs']);
const KEYWORDS = new Set([
  '$ref',
  'type',
  'const',
  'pattern',
  'minimum',
  'maximum',
  'minItems',
  'uniqueItems',
  'items',
  'required',
  'properties',
  'additionalProperties',
  'oneOf',
]);

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function matchesType(v: unknown, t: string): boolean {
  const actual = typeOf(v);
  return actual === t || (t === 'number' && actual === 'integer');
}

export function validate(root: Record<string, unknown>, value: unknown, at: Schema = root, path = '$'): string[] {
  if (at === true) return [];
  if (at === false) return [`${path}: no value allowed`];
  const errors: string[] = [];
  for (const key of Object.keys(at)) {
    if (!KEYWORDS.has(key) && !ANNOTATIONS.has(key))
      throw new Error(`schema keyword ${key} at ${path} is not supported by the test validator`);
  }
  if (typeof at.$ref === 'string') {
    const ref = at.$ref;
    if (!ref.startsWith('#/$defs/')) throw new Error(`unsupported $ref ${ref}`);
    const defs = root.$defs as Record<string, Schema>;
    const target = defs[ref.slice('#/$defs/'.length)];
    if (target === undefined) throw new Error(`dangling $ref ${ref}`);
    errors.push(...validate(root, value, target, path));
  }
  if (at.type !== undefined) {
    const types = Array.isArray(at.type) ? (at.type as string[]) : [at.type as string];
    if (!types.some((t) => matchesType(value, t))) return [...errors, `${path}: expected ${types.join('|')}, got ${typeOf(value)}`];
  }
  if ('const' in at && JSON.stringify(value) !== JSON.stringify(at.const)) errors.push(`${path}: must be ${JSON.stringify(at.const)}`);
  if (typeof at.pattern === 'string' && typeof value === 'string' && !new RegExp(at.pattern, 'u').test(value)) {
    errors.push(`${path}: does not match ${at.pattern}`);
  }
  if (typeof value === 'number') {
    if (typeof at.minimum === 'number' && value < at.minimum) errors.push(`${path}: below ${at.minimum}`);
    if (typeof at.maximum === 'number' && value > at.maximum) errors.push(`${path}: above ${at.maximum}`);
  }
  if (Array.isArray(value)) {
    if (typeof at.minItems === 'number' && value.length < at.minItems) errors.push(`${path}: fewer than ${at.minItems} items`);
    if (at.uniqueItems === true && new Set(value.map((v) => JSON.stringify(v))).size !== value.length) errors.push(`${path}: items repeat`);
    if (at.items !== undefined) value.forEach((v, i) => errors.push(...validate(root, v, at.items as Schema, `${path}[${i}]`)));
  }
  if (typeOf(value) === 'object') {
    const obj = value as Record<string, unknown>;
    for (const key of (at.required as string[] | undefined) ?? []) if (!(key in obj)) errors.push(`${path}: lacks ${key}`);
    const props = (at.properties as Record<string, Schema> | undefined) ?? {};
    for (const [key, v] of Object.entries(obj)) {
      if (key in props) errors.push(...validate(root, v, props[key], `${path}.${key}`));
      else if (at.additionalProperties !== undefined)
        errors.push(...validate(root, v, at.additionalProperties as Schema, `${path}.${key}`));
    }
  }
  if (Array.isArray(at.oneOf)) {
    const passing = (at.oneOf as Schema[]).filter((s) => validate(root, value, s, path).length === 0).length;
    if (passing !== 1) errors.push(`${path}: matches ${passing} of oneOf, not exactly 1`);
  }
  return errors;
}
