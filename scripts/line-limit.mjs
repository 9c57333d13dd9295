// No hand-written source file over 400 lines (docs/architecture.md): lists
// the tracked sources (TypeScript, JavaScript, Python, C++, CUDA, shell) past
// the limit, and files without an extension that start with a `#!` line
// (bin/trtx). Generated code (src/generated/, native-runner/generated/) is
// exempt. test/line-limit.test.ts holds the tree to it; run directly, it
// prints the offenders and exits 1 when there is any. It also holds the
// runner's C++ to 80-line functions (scripts/cpp-function-length.mjs), as
// eslint holds the TypeScript.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { holdsFunctionRule, longFunctions, MAX_FUNCTION_LINES } from './cpp-function-length.mjs';

export const MAX_LINES = 400;
export const SOURCE_EXTENSIONS = ['ts', 'mts', 'cts', 'js', 'mjs', 'cjs', 'py', 'cpp', 'cc', 'h', 'hpp', 'cu', 'cuh', 'sh'];
export const GENERATED = ['src/generated/', 'native-runner/generated/'];

/** Whether the limit applies to this repository-relative path, given the file's text. */
export function isHandWrittenSource(path, text) {
  if (GENERATED.some((g) => path.startsWith(g))) return false;
  const name = path.slice(path.lastIndexOf('/') + 1);
  if (!name.includes('.')) return text.startsWith('#!');
  return SOURCE_EXTENSIONS.includes(name.slice(name.lastIndexOf('.') + 1));
}

/** Lines of a text: newline characters, plus one for a last line without one. */
export function countLines(text) {
  if (text.length === 0) return 0;
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return text.endsWith('\n') ? n : n + 1;
}

/** The files of the work tree (tracked and new, not ignored) with their text. */
function* workTreeFiles(root) {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: root, encoding: 'utf8' });
  for (const path of new Set(listed.split('\0').filter(Boolean))) {
    let text;
    try {
      text = readFileSync(join(root, path), 'utf8');
    } catch {
      continue; // listed by git, deleted in the work tree (or a folder: a submodule)
    }
    yield { path, text };
  }
}

/** The hand-written sources of the work tree over the limit, longest first. */
export function oversizedSources(root, max = MAX_LINES) {
  const out = [];
  for (const { path, text } of workTreeFiles(root)) {
    if (!isHandWrittenSource(path, text)) continue;
    const lines = countLines(text);
    if (lines > max) out.push({ path, lines });
  }
  return out.sort((a, b) => b.lines - a.lines);
}

/** The runner's C++ functions over the function limit, longest first: path, name, line of the body, lines. */
export function longCppFunctions(root, max = MAX_FUNCTION_LINES) {
  const out = [];
  for (const { path, text } of workTreeFiles(root)) {
    if (holdsFunctionRule(path)) for (const f of longFunctions(text, max)) out.push({ path, ...f });
  }
  return out.sort((a, b) => b.lines - a.lines);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const over = oversizedSources(root);
  for (const { path, lines } of over) console.error(`${path}: ${lines} lines (the limit is ${MAX_LINES}; split it by concern)`);
  const long = longCppFunctions(root);
  for (const { path, line, name, lines } of long) {
    console.error(`${path}:${line}: function ${name} is ${lines} lines (the limit is ${MAX_FUNCTION_LINES}; split it into named steps)`);
  }
  if (over.length > 0 || long.length > 0) process.exit(1);
  console.log(`no hand-written source file over ${MAX_LINES} lines, no runner C++ function over ${MAX_FUNCTION_LINES}`);
}
