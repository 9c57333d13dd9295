// Every relative link of the user docs leads somewhere: each `[text](path)`
// and `![alt](path)` in README.md, docs/**/*.md and the READMEs of fixtures/,
// python-bridge/, native-runner/ and bench/ (outside code) names a
// file or folder of this repository, and a `#fragment` names a heading of
// the Markdown file it points into, by GitHub's anchor rule (lower case,
// punctuation dropped, spaces to hyphens, -1, -2 for repeats).
import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { REPO } from './helpers/bridge.js';

function markdownUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? markdownUnder(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
  );
}

/** The text outside fenced blocks and inline code, line by line (1-based numbers kept). */
function prose(markdown: string): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  let fenced = false;
  markdown.split('\n').forEach((text, i) => {
    if (/^\s*```/.test(text)) fenced = !fenced;
    else if (!fenced) out.push({ line: i + 1, text: text.replace(/`[^`]*`/g, '') });
  });
  return out;
}

/** GitHub's anchors for the headings of a Markdown file. */
export function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  let fenced = false;
  for (const text of markdown.split('\n')) {
    if (/^\s*```/.test(text)) fenced = !fenced;
    const m = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!m) continue;
    const slug = m[1]
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

const files = [
  join(REPO, 'README.md'),
  ...markdownUnder(join(REPO, 'docs')),
  ...['fixtures', 'python-bridge', 'native-runner', 'bench', 'schemas'].map((d) => join(REPO, d, 'README.md')).filter((f) => existsSync(f)),
];

describe('links in README.md, docs/**/*.md and the folder READMEs', () => {
  it("the anchor rule is GitHub's", () => {
    expect([...anchorsOf("# trtx check\n## Which runtime's rules: `--runtime`\n## A\n## A\n```\n# not a heading\n```\n")]).toEqual([
      'trtx-check',
      'which-runtimes-rules---runtime',
      'a',
      'a-1',
    ]);
  });

  it.each(files.map((f) => relative(REPO, f)))('%s: every relative link names a file, and a heading there', (file) => {
    const path = join(REPO, file);
    const broken: string[] = [];
    for (const { line, text } of prose(readFileSync(path, 'utf8'))) {
      for (const m of text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const target = m[1];
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
        const [file, fragment] = target.split('#', 2);
        const to = file === '' ? path : resolve(dirname(path), decodeURIComponent(file));
        if (!existsSync(to)) {
          broken.push(`${line}: ${target} (no such file)`);
          continue;
        }
        if (fragment !== undefined && to.endsWith('.md') && statSync(to).isFile() && !anchorsOf(readFileSync(to, 'utf8')).has(fragment))
          broken.push(`${line}: ${target} (no heading #${fragment} in ${relative(REPO, to)})`);
      }
    }
    expect(broken).toEqual([]);
  });
});
