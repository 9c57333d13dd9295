// The 400-line rule of docs/architecture.md (scripts/line-limit.mjs, run by
// `npm run lines:check` in .ci/run): which files it holds, how it counts, and
// that it names an offender and fails, so a file that grows past the limit
// cannot land unnoticed.
import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
// @ts-expect-error the script is plain JavaScript without declarations
import { countLines, isHandWrittenSource, longCppFunctions, MAX_LINES, oversizedSources } from '../scripts/line-limit.mjs';
// @ts-expect-error the script is plain JavaScript without declarations
import { cppFunctions } from '../scripts/cpp-function-length.mjs';
import { tempDir } from './helpers/temp.js';

const script = fileURLToPath(new URL('../scripts/line-limit.mjs', import.meta.url));
const lines = (n: number) => 'x\n'.repeat(n);

/** A git work tree holding `files` (tracked and untracked alike count). */
function repo(files: Record<string, string>): string {
  const root = tempDir('lines');
  execFileSync('git', ['init', '-q', root]);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('the 400-line rule', () => {
  it('counts lines as an editor shows them', () => {
    expect(countLines('')).toBe(0);
    expect(countLines('a')).toBe(1);
    expect(countLines('a\n')).toBe(1);
    expect(countLines('a\nb')).toBe(2);
  });

  it('holds hand-written sources of every language and scripts without an extension, not generated code or data', () => {
    expect(isHandWrittenSource('src/passes/zero-copy.ts', '')).toBe(true);
    expect(isHandWrittenSource('native-runner/src/cli/main.cpp', '')).toBe(true);
    expect(isHandWrittenSource('python-bridge/trtx_bridge/export.py', '')).toBe(true);
    expect(isHandWrittenSource('bin/trtx', '#!/usr/bin/env node\n')).toBe(true);
    expect(isHandWrittenSource('src/generated/program/program.ts', '')).toBe(false);
    expect(isHandWrittenSource('native-runner/generated/program_generated.h', '')).toBe(false);
    expect(isHandWrittenSource('python-bridge/requirements.lock', '')).toBe(false);
    expect(isHandWrittenSource('LICENSE', 'text')).toBe(false);
  });

  it(`names a file past ${MAX_LINES} lines and exits 1; at the limit it passes`, () => {
    const root = repo({ 'src/ok.ts': lines(MAX_LINES), 'src/long.ts': lines(MAX_LINES + 1), 'docs/long.md': lines(900) });
    expect(oversizedSources(root)).toEqual([{ path: 'src/long.ts', lines: MAX_LINES + 1 }]);
    // The script checks the repository it lives in: run a copy inside the temp one.
    mkdirSync(join(root, 'scripts'));
    for (const name of ['line-limit.mjs', 'cpp-function-length.mjs']) {
      writeFileSync(join(root, 'scripts', name), readFileSync(join(script, '..', name)));
    }
    const there = spawnSync(process.execPath, [join(root, 'scripts/line-limit.mjs')], { cwd: root, encoding: 'utf8' });
    expect(there.status).toBe(1);
    expect(there.stderr).toContain(`src/long.ts: ${MAX_LINES + 1} lines (the limit is ${MAX_LINES}`);
  });

  it('holds this repository: no hand-written source file over the limit', () => {
    const root = fileURLToPath(new URL('..', import.meta.url));
    expect(oversizedSources(root)).toEqual([]);
  });
});

/** A clang-formatted C++ function whose body (its `{` line to its `}` line) holds `n` code lines, with blanks and comments between. */
function cppFunction(name: string, n: number): string {
  const body = Array.from(
    { length: n - 2 },
    (_, i) => `  int v${i} = ${i};  // a trailing comment counts as code\n\n  // a comment line does not\n`,
  );
  return `std::string ${name}(const char* text,\n    int n) {\n${body.join('')}  /* nor a block\n     comment */\n}\n`;
}

describe('the 80-line rule for the runner C++ functions', () => {
  it('counts a body from its `{` line to its matching `}`, past blank and comment lines, braces in literals and scopes', () => {
    const text = [
      '#include <string>',
      'namespace trtx {',
      'struct Point {',
      '  int x{0};',
      '  int y() const {',
      '    return x;',
      '  }',
      '};',
      cppFunction('Reader::read', 5),
      `int braces() { return '{' + "}}"[0]; }`,
      'Foo::Foo(int a) : a_{a}, b_(a) {',
      '  run();',
      '}',
      '}  // namespace trtx',
    ].join('\n');
    expect(cppFunctions(text)).toEqual([
      { name: 'y', line: 5, lines: 3 },
      { name: 'Reader::read', line: 10, lines: 5 },
      { name: 'braces', line: 24, lines: 1 },
      { name: 'Foo::Foo', line: 25, lines: 3 },
    ]);
  });

  it('measures a member defined in its class body, with its lambdas and blocks, past access labels and nested classes', () => {
    const indent = (text: string) => text.replace(/^(?=.)/gm, '  ');
    const text = [
      'namespace trtx {',
      'class Executor final : public Base {',
      ' public:',
      indent(cppFunction('enqueue', 90)).replace(
        '  int v0 = 0;',
        '  auto f = [&](int i) {\n    if (i) {\n      return i;\n    }\n    return 0;\n  };',
      ),
      ' private:',
      '  struct Slot {',
      indent(indent(cppFunction('size', 3))),
      '  };',
      '};',
      '}  // namespace trtx',
    ].join('\n');
    expect(cppFunctions(text)).toEqual([
      { name: 'enqueue', line: 5, lines: 95 },
      { name: 'size', line: 282, lines: 3 },
    ]);
  });

  it('names a 90-line function with its length and exits 1; an 80-line one passes', () => {
    const root = repo({
      'native-runner/src/cli/ok.cpp': cppFunction('fits', 80),
      'native-runner/src/cli/long.cpp': cppFunction('too_long', 90),
      'python-bridge/long.cpp': cppFunction('not_runner', 90),
    });
    expect(longCppFunctions(root)).toEqual([{ path: 'native-runner/src/cli/long.cpp', name: 'too_long', line: 2, lines: 90 }]);
    mkdirSync(join(root, 'scripts'));
    for (const name of ['line-limit.mjs', 'cpp-function-length.mjs']) {
      writeFileSync(join(root, 'scripts', name), readFileSync(join(script, '..', name)));
    }
    const there = spawnSync(process.execPath, [join(root, 'scripts/line-limit.mjs')], { cwd: root, encoding: 'utf8' });
    expect(there.status).toBe(1);
    expect(there.stderr).toContain('native-runner/src/cli/long.cpp:2: function too_long is 90 lines (the limit is 80');
    expect(there.stderr).not.toContain('fits');
  });

  it('holds this repository: no runner C++ function over 80 lines', () => {
    const root = fileURLToPath(new URL('..', import.meta.url));
    expect(longCppFunctions(root)).toEqual([]);
  });
});
