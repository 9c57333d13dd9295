// The code lists in src/codes/ are complete and current: every code the
// TypeScript, the Python bridge and the native runner can report is listed,
// every listed code is one of them, every code the docs mention exists, and
// docs/codes.md is the table generated from the lists.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BRIDGE_ERROR_TYPES, BRIDGE_WARNING_CODES, CODES, FAMILIES, RUNNER_REPORT_CODES, isCode } from '../src/codes/index.js';
import { CODES_DOC, renderCodesDoc } from '../scripts/gen-codes.js';
import { ERROR_CODES_HEADER, ET_ERROR_HEADER, renderErrorCodes, renderEtErrorFor } from '../scripts/gen-runner-errors.js';
import { REPO } from './helpers/bridge.js';

function filesUnder(dir: string, keep: (path: string) => boolean, skip: (path: string) => boolean = () => false): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (skip(p)) return [];
    if (statSync(p).isDirectory()) return filesUnder(p, keep, skip);
    return keep(p) ? [p] : [];
  });
}

const read = (p: string) => readFileSync(p, 'utf8');
const rel = (p: string) => relative(REPO, p);

/** The TypeScript the product runs: src/ (less the generated readers and the lists themselves), fixtures/ (`trtx fixtures`, the demo), bin/. */
const TS_SOURCES = [
  ...filesUnder(
    join(REPO, 'src'),
    (p) => p.endsWith('.ts'),
    (p) => /src\/(generated|codes)$/.test(p),
  ),
  ...filesUnder(join(REPO, 'fixtures'), (p) => p.endsWith('.ts')),
  // The corpus builder (`npm run corpus`, the tests' real programs) raises trtx's codes too.
  ...filesUnder(join(REPO, 'scripts', 'corpus'), (p) => p.endsWith('.ts')),
  join(REPO, 'bin', 'trtx'),
];

// Quoted UPPER_SNAKE literals that are not codes, each for its reason.
const NOT_CODES: Record<string, string> = {
  KV_CACHE_UPDATE: 'fixtures/blob-vectors.ts: an alias kind in the wrong case, the input of a TRT_ALIAS_KIND vector',
};
const isEnvName = (s: string) => s.startsWith('TRTX_');

function literalsIn(text: string): string[] {
  const multi = [...text.matchAll(/(['"`])([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\1/g)].map((m) => m[2]);
  // One-word codes (USAGE, INTERNAL) where an error or an error document is made.
  const single = [...text.matchAll(/(?:TrtxError\(|BridgeFailure\(|\berror: \{ code: )\s*'([A-Z][A-Z0-9]*)'/g)].map((m) => m[1]);
  return [...multi, ...single];
}

const PY_SOURCES = filesUnder(
  join(REPO, 'python-bridge'),
  (p) => p.endsWith('.py'),
  (p) => /\/(tests|tests_real|__pycache__)$/.test(p),
);

/** Bridge error types: the first argument of BridgeError(...), the pipeline's _fail(...), channel.error(...). */
function pythonErrorTypes(text: string): string[] {
  return [...text.matchAll(/\b(?:BridgeError|_fail|\.error)\(\s*"([A-Z][A-Z0-9_]*)"/g)].map((m) => m[1]);
}

function pythonWarningCodes(text: string): string[] {
  return [...text.matchAll(/\bcode\s*=\s*"([A-Z][A-Z0-9_]*)"/g)].map((m) => m[1]);
}

/** The enumerators of `enum class Error` in the runner's generated header, comments removed, in order. */
function runnerErrorNames(header: string): string[] {
  const body = /enum class Error\b[^{]*\{([^}]*)\}/.exec(header)?.[1];
  if (body === undefined) throw new Error('enum class Error not found');
  return body
    .replace(/\/\/[^\n]*/g, '')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .split(',')
    .map((e) => e.replace(/=.*$/s, '').trim())
    .filter(Boolean);
}

describe('the code lists', () => {
  it('give every code one family and one line of meaning', () => {
    const seen = new Map<string, string>();
    for (const f of FAMILIES) {
      for (const [code, meaning] of Object.entries(f.codes)) {
        const key = `${f.space}:${code}`;
        expect(seen.get(key), `${code} is in ${seen.get(key)} and ${f.title}`).toBeUndefined();
        seen.set(key, f.title);
        expect(code).toMatch(f.space === 'runner report' ? /^[A-Za-z][A-Za-z0-9_]*$/ : /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/);
        expect(meaning.length, code).toBeGreaterThan(10);
        expect(meaning, code).not.toMatch(/\n/);
      }
    }
    expect(Object.keys(CODES).length).toBeGreaterThan(150);
    expect(isCode('PTE_TRUNCATED')).toBe(true);
    expect(isCode('PTE_TRUNCATE')).toBe(false);
  });

  it('hold every code the TypeScript names, and nothing it does not', () => {
    const named = new Map<string, string>();
    for (const f of TS_SOURCES) for (const l of literalsIn(read(f))) if (!named.has(l)) named.set(l, rel(f));
    expect(named.size).toBeGreaterThan(150);
    // trtx's own logged warnings (`trtx warn: CODE: ...`) are named in the TypeScript too.
    const warnings = new Set(FAMILIES.filter((f) => f.space === 'warning').flatMap((f) => Object.keys(f.codes)));
    const unlisted = [...named].filter(
      ([l]) => !isCode(l) && !warnings.has(l) && !Object.hasOwn(BRIDGE_ERROR_TYPES, l) && !Object.hasOwn(NOT_CODES, l) && !isEnvName(l),
    );
    expect(unlisted.map(([l, f]) => `${l} (${f})`)).toEqual([]);
    // BRIDGE_<TYPE> codes are made from the Python side's types (checked below).
    const bridgeTypeCodes = new Set(Object.keys(BRIDGE_ERROR_TYPES).map((t) => `BRIDGE_${t}`));
    const stale = [...Object.keys(CODES), ...warnings].filter((c) => !named.has(c) && !bridgeTypeCodes.has(c));
    expect(stale, 'listed codes no source names').toEqual([]);
  });

  it('hold every error type and warning code of the Python bridge, and nothing it does not', () => {
    const types = new Set<string>();
    const warnings = new Set<string>();
    let calls = 0;
    for (const f of PY_SOURCES) {
      const text = read(f);
      for (const t of pythonErrorTypes(text)) types.add(t);
      for (const c of pythonWarningCodes(text)) warnings.add(c);
      // Every raise of a BridgeError names its type as a literal, so the scan above sees them all.
      calls += [...text.matchAll(/\b(?:raise\s+BridgeError|raise\s+_fail)\(/g)].length;
    }
    const literalRaises = PY_SOURCES.flatMap((f) => [...read(f).matchAll(/\braise\s+(?:BridgeError|_fail)\(\s*"[A-Z][A-Z0-9_]*"/g)]).length;
    expect(literalRaises).toBe(calls);
    expect(calls).toBeGreaterThan(20);
    expect([...types].sort()).toEqual(Object.keys(BRIDGE_ERROR_TYPES).sort());
    expect([...warnings].sort()).toEqual(Object.keys(BRIDGE_WARNING_CODES).sort());
  });

  it("are the native runner's report codes: its generated Error enum, in order, less Ok (npm run gen)", () => {
    const header = read(ERROR_CODES_HEADER);
    expect(header, 'stale: run npm run gen').toBe(renderErrorCodes());
    expect(read(ET_ERROR_HEADER), 'stale: run npm run gen').toBe(renderEtErrorFor());
    const names = runnerErrorNames(header);
    expect(names[0]).toBe('Ok');
    expect(names.slice(1)).toEqual(Object.keys(RUNNER_REPORT_CODES));
    // The hand-written header includes the generated one instead of a list of its own.
    const handWritten = read(join(REPO, 'native-runner', 'include', 'trtx', 'runtime', 'error.h'));
    expect(handWritten).not.toMatch(/enum class Error\b/);
    expect(handWritten).toContain('#include "trtx/runtime/error_codes.h"');
  });

  it('are documented: docs/codes.md is the table generated from them (npm run gen)', () => {
    expect(read(CODES_DOC)).toBe(renderCodesDoc());
    for (const code of Object.keys(CODES)) expect(read(CODES_DOC)).toContain(`| \`${code}\` |`);
  });

  it('name every code the README and the docs mention', () => {
    // A token that starts like a code (PTE_, ZC_, WRITE_, ...) must be one.
    const prefixes = new Set(
      Object.keys(CODES)
        .filter((c) => c.includes('_'))
        .map((c) => c.slice(0, c.indexOf('_') + 1)),
    );
    const known = new Set(FAMILIES.flatMap((f) => Object.keys(f.codes)));
    const docs = [
      join(REPO, 'README.md'),
      join(REPO, 'python-bridge', 'README.md'),
      join(REPO, 'native-runner', 'README.md'),
      ...filesUnder(join(REPO, 'docs'), (p) => p.endsWith('.md')),
      ...filesUnder(join(REPO, 'schemas'), (p) => p.endsWith('.md') || p.endsWith('.json')),
    ];
    const unknown: string[] = [];
    for (const f of docs) {
      for (const m of read(f).matchAll(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g)) {
        const t = m[0];
        if ([...prefixes].some((p) => t.startsWith(p)) && !known.has(t)) unknown.push(`${t} (${rel(f)})`);
      }
    }
    expect(prefixes.size).toBeGreaterThan(15);
    expect(unknown).toEqual([]);
  });
});
