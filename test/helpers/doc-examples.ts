// The example blocks of the user docs (README.md and docs/commands/*.md), as
// test/readme-examples.test.ts runs them: a fenced block whose first line is
// `$ trtx ...` (or `$ npx trtx ...`) holds one or more commands, each
// followed by what it prints. A line that is only `...` stands for one or
// more lines left out. Other shell lines (mkdir, cd) belong in blocks
// without `$`; a block indented under a list item is not run either.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

export interface Example {
  /** 1-based line of the `$` line in its file. */
  line: number;
  command: string;
  args: string[];
  expected: string[];
}

export interface ExampleBlock {
  /** The file, relative to the repository root (`docs/commands/verify.md`). */
  file: string;
  /** 1-based line of the block's first `$` line. */
  line: number;
  examples: Example[];
}

export const ELISION = /^\s*\.\.\.\s*$/;

/** The files whose examples run: the README, then every command page. */
export function exampleFiles(repo: string): string[] {
  const pages = readdirSync(join(repo, 'docs', 'commands'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/commands/${f}`);
  return ['README.md', ...pages];
}

/** Splits a command line as a shell would for the simple words the docs use ('...' and "..." quoting). */
export function words(command: string): string[] {
  const out: string[] = [];
  for (const m of command.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) out.push(m[1] ?? m[2] ?? m[3]);
  return out;
}

export function blocksOf(file: string, markdown: string): ExampleBlock[] {
  const lines = markdown.split('\n');
  const blocks: ExampleBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].startsWith('```')) continue;
    const start = i + 1;
    let end = start;
    while (end < lines.length && !lines[end].startsWith('```')) end++;
    const body = lines.slice(start, end);
    i = end;
    if (!body[0]?.startsWith('$ ')) continue;
    const examples: Example[] = [];
    body.forEach((text, k) => {
      if (text.startsWith('$ ')) {
        const command = text.slice(2);
        const w = words(command);
        const args = w[0] === 'trtx' ? w.slice(1) : w[0] === 'npx' && w[1] === 'trtx' ? w.slice(2) : null;
        if (args === null)
          throw new Error(`${file}:${start + k + 1}: "$ ${command}" is not a trtx command; put other shell lines in a block without "$"`);
        examples.push({ line: start + k + 1, command, args, expected: [] });
      } else {
        examples.at(-1)!.expected.push(text);
      }
    });
    for (const e of examples) while (e.expected.length && e.expected.at(-1)!.trim() === '') e.expected.pop();
    blocks.push({ file, line: start + 1, examples });
  }
  return blocks;
}

/** Whether `actual` is `expected` line for line, each `...` line standing for one or more lines. */
export function matches(expected: string[], actual: string[]): boolean {
  const memo = new Map<string, boolean>();
  const go = (e: number, a: number): boolean => {
    const key = `${e},${a}`;
    if (memo.has(key)) return memo.get(key)!;
    let ok: boolean;
    if (e === expected.length) ok = a === actual.length;
    else if (ELISION.test(expected[e])) {
      ok = false;
      for (let n = a + 1; n <= actual.length && !ok; n++) ok = go(e + 1, n);
    } else ok = a < actual.length && expected[e] === actual[a] && go(e + 1, a + 1);
    memo.set(key, ok);
    return ok;
  };
  return go(0, 0);
}

/** Output as the docs show it: no log times, no trailing blanks. */
export function normalise(output: string): string[] {
  const lines = output.split('\n').map((l) => l.replace(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (?=trtx )/, '').replace(/\s+$/, ''));
  while (lines.length && lines.at(-1) === '') lines.pop();
  return lines;
}

/**
 * What a block should show for `actual`: all of it when it had no `...`;
 * else as many lines before its first elision and after its last as it had,
 * and each stretch between two elisions from its first line that still
 * appears (as many lines as it had from there), so a regenerated block keeps
 * its shape.
 */
export function updatedBlock(expected: string[], actual: string[]): string[] {
  const stretches: string[][] = [[]];
  const marks: string[] = [];
  for (const l of expected) {
    if (ELISION.test(l)) {
      marks.push(l);
      stretches.push([]);
    } else stretches.at(-1)!.push(l);
  }
  if (marks.length === 0) return actual;
  const head = stretches[0].length;
  const end = actual.length - stretches.at(-1)!.length;
  if (head >= end) return actual;
  const out = actual.slice(0, head);
  let at = head;
  for (let i = 1; i < stretches.length - 1; i++) {
    const s = stretches[i];
    // An elision stands for at least one line on each side of the stretch.
    // From its first line that still appears, as many lines as it had from there.
    let k = -1;
    let n = 0;
    for (let o = 0; o < s.length && k < 0; o++) {
      n = s.length - o;
      k = actual.findIndex((l, j) => j > at && j + n < end && l === s[o]);
    }
    if (k < 0) continue;
    out.push(marks[i - 1], ...actual.slice(k, k + n));
    at = k + n;
  }
  out.push(marks.at(-1)!, ...actual.slice(end));
  return out;
}

/** `markdown` with each example's output replaced by its update (bottom up, so earlier line numbers stay valid). */
export function applyUpdates(markdown: string, updates: Array<{ example: Example; lines: string[] }>): string {
  const lines = markdown.split('\n');
  for (const { example, lines: out } of [...updates].sort((a, b) => b.example.line - a.example.line)) {
    lines.splice(example.line, example.expected.length, ...out);
  }
  return lines.join('\n');
}
