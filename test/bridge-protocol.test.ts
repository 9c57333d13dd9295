import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BridgeEvent, BridgeRequest, parseEventLine } from '../src/bridge/protocol.js';
import { quoteLine } from '../src/bridge/run.js';
import { BRIDGE_SCHEMA_FILE, renderBridgeSchema } from '../scripts/gen-schemas.js';
import { REPO } from './helpers/bridge.js';
import { validate } from './helpers/json-schema.js';

const schema = JSON.parse(readFileSync(join(REPO, 'schemas', 'bridge-protocol.schema.json'), 'utf8')) as Record<string, unknown>;
const bySchema = (def: 'request' | 'event', value: unknown) => validate(schema, value, { $ref: `#/$defs/${def}` }).length === 0;

const request = {
  protocol: 2,
  model: '/m/model.pt2',
  output: '/tmp/x.pte',
  methods: null,
  budget_bytes: null,
  zero_copy_kv: false,
  allow_pickle: false,
  check_only: false,
  engine: 'tensorrt',
  reference: null,
};
const reference = { path: '/tmp/.x.pte.bridge-1.reference.json', steps: 5, program: 'x.pte' };
const versions = { python: '3.11.7', torch: '2.9.0', torch_tensorrt: '2.14.0', executorch: '1.5.0' };
const capabilities = { zero_copy_kv: true, check_zero_copy_kv: true, weight_streaming_budget: true, upstream_inplace_lineage: true };
const signature = {
  inputs: [
    { kind: 'BUFFER', name: 'b_k_cache', target: 'k_cache' },
    { kind: 'USER_INPUT', name: 'x', target: null },
  ],
  outputs: [
    { kind: 'BUFFER_MUTATION', name: 'b_k_cache', target: 'k_cache' },
    { kind: 'USER_OUTPUT', name: 'out', target: null },
  ],
  user_inputs: ['x'],
  user_outputs: ['out'],
  buffers_to_mutate: { b_k_cache: 'k_cache' },
  inputs_to_buffers: { b_k_cache: 'k_cache' },
};
const exportResult = {
  event: 'result',
  mode: 'export',
  protocol: 2,
  engine: 'tensorrt',
  program: { path: '/tmp/x.pte', bytes: 728, sha256: 'e'.repeat(64) },
  reference: null,
  methods: [{ name: 'forward', signature, mutations: { copy_back: [], in_place: ['k_cache'], reordered: 0 } }],
  zero_copy_kv: true,
  zero_copy_kv_path: 'torch_tensorrt' as const,
  weight_streaming: { budget_bytes: '8589934592', enabled_at_compile: true, budget_baked: true },
  versions,
  capabilities,
};
const checkResult = {
  event: 'result',
  mode: 'check',
  python: { executable: '/usr/bin/python3', version: '3.11.7' },
  versions,
  capabilities,
};

const validRequests: unknown[] = [
  request,
  { ...request, methods: ['prefill', 'decode'], budget_bytes: '0', zero_copy_kv: true, allow_pickle: true },
  { ...request, model: '', output: '', check_only: true },
  { ...request, budget_bytes: '9223372036854775807' },
  { ...request, engine: 'reference' },
  { ...request, reference },
  { ...request, reference: { ...reference, steps: 10_000 } },
];
const invalidRequests: unknown[] = [
  { ...request, protocol: 1 },
  { ...request, engine: 'trt' },
  (({ engine: _e, ...rest }) => rest)(request),
  { ...request, extra: true },
  { ...request, methods: [] },
  { ...request, methods: ['a', 'a'] },
  { ...request, methods: ['not-an-identifier'] },
  { ...request, budget_bytes: 8589934592 },
  { ...request, budget_bytes: '-1' },
  { ...request, budget_bytes: '08' },
  { ...request, budget_bytes: '1e9' },
  { ...request, zero_copy_kv: 'yes' },
  (({ check_only, ...rest }) => rest)(request),
  (({ reference: _r, ...rest }) => rest)(request),
  { ...request, reference: { ...reference, steps: 0 } },
  { ...request, reference: { ...reference, steps: 10_001 } },
  { ...request, reference: { ...reference, steps: 1.5 } },
  { ...request, reference: { ...reference, path: '' } },
  { ...request, reference: { path: '/r.json', steps: 5 } },
  { ...request, reference: { ...reference, extra: 1 } },
  { ...request, reference: '/r.json' },
];

const validEvents: unknown[] = [
  { event: 'hello', protocol: 2, bridge_version: '0.1.0', pid: 42 },
  { event: 'progress', stage: 'compile', fraction: 0.15 },
  { event: 'progress', stage: 'order_mutations', fraction: 1, message: 'done' },
  { event: 'warning', message: 'careful' },
  { event: 'warning', message: 'careful', code: 'BUDGET_NOT_BAKED' },
  { event: 'error', type: 'IMPORT_MISSING', message: 'no torch', hint: 'pip install torch' },
  { event: 'error', type: 'COMPILE', message: 'x', hint: 'y', stage: 'compile' },
  checkResult,
  exportResult,
  { ...exportResult, weight_streaming: { budget_bytes: null, enabled_at_compile: false, budget_baked: false } },
  { ...exportResult, zero_copy_kv_path: 'trtx' as const },
  { ...exportResult, reference: '/tmp/.x.pte.bridge-1.reference.json' },
  { ...exportResult, zero_copy_kv: false, zero_copy_kv_path: null },
  { ...exportResult, engine: 'reference', zero_copy_kv: false, zero_copy_kv_path: null, versions: { ...versions, torch_tensorrt: null } },
];
const invalidEvents: unknown[] = [
  (({ reference: _r, ...rest }) => rest)(exportResult),
  { ...exportResult, reference: 5 },
  { event: 'hello', protocol: 1, bridge_version: '0.1.0', pid: 42 },
  { event: 'hello', protocol: 2, bridge_version: '0.1.0', pid: 0 },
  { event: 'progress', stage: 'compile', fraction: 1.5 },
  { event: 'progress', stage: 'compile', fraction: -0.1 },
  { event: 'progress', stage: 'Compile', fraction: 0.5 },
  { event: 'progress', stage: 'compile' },
  { event: 'progress', stage: 'compile', fraction: 0.5, extra: 1 },
  { event: 'warning' },
  { event: 'warning', message: 'x', code: 'lower' },
  { event: 'error', type: 'IMPORT_MISSING', message: 'no torch' },
  { event: 'error', type: 'import-missing', message: 'x', hint: 'y' },
  { event: 'result', mode: 'other', versions, capabilities },
  { ...checkResult, mode: 'export' },
  { ...exportResult, methods: [] },
  (({ engine: _e, ...rest }) => rest)(exportResult),
  { ...exportResult, engine: 'trt' },
  { ...exportResult, program: { path: '/x', bytes: 1, sha256: 'XYZ' } },
  { ...exportResult, methods: [{ name: 'forward', signature, mutations: { copy_back: [], in_place: [], reordered: -1 } }] },
  { ...exportResult, capabilities: { ...capabilities, zero_copy_kv: 'yes' } },
  { event: 'log', message: 'x' },
  'hello',
  null,
];

describe('bridge protocol: zod schemas agree with schemas/bridge-protocol.schema.json', () => {
  it.each(validRequests.map((r, i) => [i, r]))('request sample %i is valid in both', (_i, sample) => {
    expect(BridgeRequest.safeParse(sample).success).toBe(true);
    expect(validate(schema, sample, { $ref: '#/$defs/request' })).toEqual([]);
  });

  it.each(invalidRequests.map((r, i) => [i, r]))('request sample %i is invalid in both', (_i, sample) => {
    expect(BridgeRequest.safeParse(sample).success).toBe(false);
    expect(bySchema('request', sample)).toBe(false);
  });

  it.each(validEvents.map((e, i) => [i, e]))('event sample %i is valid in both', (_i, sample) => {
    expect(BridgeEvent.safeParse(sample).success).toBe(true);
    expect(validate(schema, sample, { $ref: '#/$defs/event' })).toEqual([]);
  });

  it.each(invalidEvents.map((e, i) => [i, e]))('event sample %i is invalid in both', (_i, sample) => {
    expect(BridgeEvent.safeParse(sample).success).toBe(false);
    expect(bySchema('event', sample)).toBe(false);
  });

  it('is what npm run gen writes from the zod schemas', () => {
    expect(readFileSync(BRIDGE_SCHEMA_FILE, 'utf8')).toBe(renderBridgeSchema());
  });

  it('judges every shared request vector as stated, in zod and in the schema (python-bridge reads the same file)', () => {
    const { vectors } = JSON.parse(readFileSync(join(REPO, 'test', 'vectors', 'bridge-request.json'), 'utf8')) as {
      vectors: { name: string; request: unknown; expect: 'ok' | 'refused' }[];
    };
    expect(vectors.length).toBeGreaterThan(20);
    for (const v of vectors) {
      expect(BridgeRequest.safeParse(v.request).success, `zod: ${v.name}`).toBe(v.expect === 'ok');
      expect(bySchema('request', v.request), `schema: ${v.name}`).toBe(v.expect === 'ok');
    }
  });

  it('a request is not an event and an event is not a request', () => {
    expect(bySchema('event', request)).toBe(false);
    expect(bySchema('request', validEvents[0])).toBe(false);
    expect(validate(schema, request)).toEqual([]);
    expect(validate(schema, exportResult)).toEqual([]);
  });
});

describe('parseEventLine', () => {
  it('parses an event and explains a refusal', () => {
    expect(parseEventLine('{"event":"warning","message":"m"}')).toEqual({ ok: true, event: { event: 'warning', message: 'm' } });
    expect(parseEventLine('Torch-TensorRT says hi')).toEqual({ ok: false, reason: 'not JSON' });
    const refused = parseEventLine('{"event":"progress","stage":"compile","fraction":3}');
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.reason).toMatch(/fraction/);
  });

  it('quotes a long line cut, escaped and sized', () => {
    const quoted = quoteLine('a"b\n' + 'x'.repeat(1000));
    expect(quoted.startsWith('"a\\"b\\nxxx')).toBe(true);
    expect(quoted).toMatch(/\u2026" \(1004 bytes\)$/);
    expect(quoted.length).toBeLessThan(200);
    expect(quoteLine('short')).toBe('"short"');
  });
});
