// The globals `trtx export` reads off a pickle before Python starts
// (src/export/pickle-globals.ts): a linear scan that finds what the two
// regular expressions it replaced found (issue 43: they backtracked, 100 KB
// of `c` took 9.7 s), shown equal on every short input of the bytes that
// matter, and correct on megabyte inputs made to backtrack. Its speed is
// measured, not tested here: `npx tsx bench/pickle-scan.ts`.
import { describe, expect, it } from 'vitest';
import { ESLint } from 'eslint';
import { pickleGlobals } from '../src/export/pickle-globals.js';
import { pickleKind } from '../src/export/model-kind.js';
import { REPO } from './helpers/bridge.js';
import { regexGlobals } from '../fixtures/pickle-regex-oracle.js';
import { rngOf } from './helpers/fuzz.js';

const latin1 = (s: string) => Buffer.from(s, 'latin1');

describe('pickleGlobals finds what the regular expressions found', () => {
  // Every byte class the expressions tell apart: `c`, other name starts,
  // digits and `.`, newline, the STACK_GLOBAL opcodes, and one other byte.
  const ALPHABET = ['c', 'a', '_', '1', '.', '\n', '\x8c', '\x94', '\x93', '\x00'];

  /** The inputs on which the scan and the expressions disagree (none). */
  const disagreeing = (inputs: Iterable<string>) => {
    const out: string[] = [];
    for (const s of inputs) if (JSON.stringify(pickleGlobals(latin1(s))) !== JSON.stringify(regexGlobals(latin1(s)))) out.push(s);
    return out;
  };

  /** Every input of up to `longest` bytes of `alphabet`. */
  const exhaustively = (alphabet: readonly string[], longest: number) => {
    let inputs = [''];
    for (let n = 1; n <= longest; n++) {
      inputs = inputs.flatMap((s) => alphabet.map((b) => s + b));
      expect(disagreeing(inputs)).toEqual([]);
    }
  };

  it('on every input of up to 5 of these bytes', () => exhaustively(ALPHABET, 5));

  it("on every input of up to 8 bytes of GLOBAL's and 9 of STACK_GLOBAL's (a memoized match is 9)", { timeout: 60_000 }, () => {
    exhaustively(['c', 'a', '1', '\n', '\x00'], 8);
    exhaustively(['a', '\x8c', '\x94', '\x93'], 9);
  });

  it('on 20,000 seeded inputs of up to 60 bytes, built of globals, their pieces and noise', () => {
    const next = rngOf(43);
    const pieces = [
      ...ALPHABET,
      'ctorch._utils\n',
      '_rebuild_tensor_v2\n',
      'cmymodel\nNet\n',
      '\x8c\x05torch\x94',
      '\x8c\x03Net',
      'q\x05',
      'cc',
    ];
    const inputs: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      let s = '';
      while (s.length < 60 && next() < 0.93) s += pieces[Math.floor(next() * pieces.length)];
      inputs.push(s);
    }
    expect(disagreeing(inputs)).toEqual([]);
    // The generator reaches both opcodes' matches, not only inputs where both find nothing.
    expect(inputs.filter((s) => regexGlobals(latin1(s)).length > 1).length).toBeGreaterThan(1000);
  });

  it('on what torch.save writes: protocol 2 GLOBALs and protocol 4 memoized STACK_GLOBALs, in order', () => {
    const p2 = latin1('\x80\x02ccollections\nOrderedDict\nq\x00)Rq\x01ctorch._utils\n_rebuild_tensor_v2\nq\x02.');
    expect(pickleGlobals(p2)).toEqual(['collections.OrderedDict', 'torch._utils._rebuild_tensor_v2']);
    const p4 = latin1('\x80\x04\x95\x10\x00\x8c\x0bcollections\x94\x8c\x0bOrderedDict\x94\x93\x94)R\x8c\x07mymodel\x8c\x03Net\x93.');
    expect(pickleGlobals(p4)).toEqual(['collections.OrderedDict', 'mymodel.Net']);
    expect(pickleGlobals(Buffer.concat([p2, p4]))).toEqual(regexGlobals(Buffer.concat([p2, p4])));
  });
});

describe('pickleGlobals on a megabyte made to backtrack', () => {
  const MB = 1 << 20;

  it('a run of `c` with no newline, or ending in one newline: nothing', () => {
    expect(pickleGlobals(latin1('c'.repeat(MB)))).toEqual([]);
    expect(pickleGlobals(latin1('c'.repeat(MB) + '\n'))).toEqual([]);
    expect(pickleGlobals(latin1('c' + 'a'.repeat(MB) + '\n' + 'b'.repeat(MB)))).toEqual([]);
  });

  it('`c` and newlines repeated: every global once', () => {
    expect(pickleGlobals(latin1('c\n'.repeat(MB / 2)))).toEqual([]);
    expect(pickleGlobals(latin1('cc\n'.repeat(MB / 3)))).toEqual(['c.cc']);
    expect(pickleGlobals(latin1('ca\nb\n'.repeat(MB / 5)))).toEqual(['a.b']);
  });

  it('a megabyte module name: the global, whole, and it makes the pickle a module', () => {
    const long = 'm'.repeat(MB);
    const bytes = latin1(`\x80\x02c${long}\nNet\n.`);
    expect(pickleGlobals(bytes)).toEqual([`${long}.Net`]);
    expect(pickleKind(bytes)).toEqual({ kind: 'module', classes: [`${long}.Net`] });
  });

  it('SHORT_BINUNICODE opcodes over long names that never reach STACK_GLOBAL: nothing', () => {
    expect(pickleGlobals(latin1('\x8c\x01' + 'a'.repeat(MB)))).toEqual([]);
    expect(pickleGlobals(latin1('\x8c'.repeat(MB)))).toEqual([]);
    expect(pickleGlobals(latin1(('\x8c\x8c' + 'a'.repeat(1000) + '\x94').repeat(MB / 1003)))).toEqual([]);
    expect(pickleGlobals(latin1('\x8c\x01a\x94\x8c\x01b\x94\x93'.repeat(MB / 11)))).toEqual(['a.b']);
  });
});

describe('no regular expression scans a pickle', () => {
  it('eslint refuses one in src/export/pickle-globals.ts, and the file has none', { timeout: 120_000 }, async () => {
    const eslint = new ESLint({ cwd: REPO });
    const rules = async (text: string) =>
      (await eslint.lintText(text, { filePath: 'src/export/pickle-globals.ts' }))[0].messages.map((m) => m.ruleId);
    expect(await rules("export const f = (s: string) => /c(\\w*)\\n/.test(s) || new RegExp('x').test(s);\n")).toEqual([
      'no-restricted-syntax',
      'no-restricted-syntax',
    ]);
    const [own] = await eslint.lintFiles(['src/export/pickle-globals.ts']);
    expect(own.messages).toEqual([]);
  });
});
