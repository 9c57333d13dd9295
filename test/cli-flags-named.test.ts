// Every `--flag` in a string of the product's code or its Python bridge (the
// text of hints, messages, help) is a flag trtx has, or one of the listed
// flags of another program trtx runs or names. A hint that sends the user to
// a flag that does not exist fails here. Comments are not scanned.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { buildProgram } from '../src/cli/main.js';
import { REPO } from './helpers/bridge.js';

/** Flags of other programs, with the program they belong to. */
const OTHER_PROGRAMS: Record<string, string> = {
  '--build': 'cmake',
  '--reflink': 'cp (GNU coreutils: the kernel copy, src/util/kernel-copy.ts)',
  '--sparse': 'cp (GNU coreutils: the kernel copy, src/util/kernel-copy.ts)',
  '--target': 'cmake',
  '--parallel': 'cmake',
  '--upgrade': 'pip',
  '--disable-pip-version-check': 'pip',
  '--no-input': 'pip',
  '--progress-bar': 'pip',
  '--strict-json': 'flatc',
  '--defaults-json': 'flatc',
  '--report': 'the native runner (trtx-runner run)',
  '--fresh-state': 'the native runner (trtx-runner run)',
  '--arena-fill': 'the native runner (trtx-runner run)',
  '--share-arenas': 'the native runner (trtx-runner run)',
  '--trt-runtime': 'the native runner (trtx-runner run)',
  '--max-planned-bytes': 'the native runner (trtx-runner run)',
  '--inputs': 'the native runner (trtx-runner run)',
  '--outputs': 'the native runner (trtx-runner run)',
  '--engine-kernels': 'the native runner (trtx-runner run)',
  '--progress': 'the native runner (trtx-runner run)',
  '--loader': 'the native runner (trtx-runner run)',
};

/**
 * Flags a message names only when the command has them: export's hint for a
 * missing Torch-TensorRT names `--engine reference` only where `trtx export`
 * offers --engine (python-bridge/trtx_bridge/deps.py, src/export/export.ts).
 */
const NAMED_WHEN_PRESENT = new Set(['--engine']);

/** The contents of the string literals on each line ('...', "...", `...`), crudely: enough for messages. */
function stringsOf(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  text.split('\n').forEach((l, i) => {
    for (const m of l.matchAll(/(['"`])((?:\\.|(?!\1).)*)\1/g)) out.push({ line: i + 1, text: m[2] });
  });
  return out;
}

function files(dir: string, ext: RegExp): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === 'generated' || name === '__pycache__' ? [] : files(p, ext);
    return ext.test(name) ? [p] : [];
  });
}

function trtxFlags(): Set<string> {
  const flags = new Set(['--help', '--version']);
  const walk = (c: Command) => {
    for (const o of c.options) {
      if (o.long) flags.add(o.long);
      // commander lists `--no-color` as the long form of a negatable option.
      if (o.negate && o.long) flags.add(o.long);
    }
    c.commands.forEach(walk);
  };
  walk(buildProgram());
  return flags;
}

describe('flags named in messages and hints', () => {
  it('exist: on a trtx command, or on the other program they are listed for', () => {
    const known = trtxFlags();
    const sources = [...files(join(REPO, 'src'), /\.ts$/), ...files(join(REPO, 'python-bridge', 'trtx_bridge'), /\.py$/)];
    const unknown: string[] = [];
    let seen = 0;
    for (const file of sources) {
      for (const str of stringsOf(readFileSync(file, 'utf8'))) {
        for (const m of str.text.matchAll(/(?<![\w-])--[a-z][a-z0-9-]*/g)) {
          seen++;
          if (!known.has(m[0]) && !(m[0] in OTHER_PROGRAMS) && !NAMED_WHEN_PRESENT.has(m[0]))
            unknown.push(`${file.slice(REPO.length + 1)}:${str.line}: ${m[0]}`);
        }
      }
    }
    expect(seen).toBeGreaterThan(100);
    expect(unknown).toEqual([]);
  });

  it('the list of other programs flags holds no flag of trtx itself', () => {
    const known = trtxFlags();
    expect(Object.keys(OTHER_PROGRAMS).filter((f) => known.has(f))).toEqual([]);
  });
});
