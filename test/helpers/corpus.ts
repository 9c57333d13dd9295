// The real ExecuTorch programs used as the conformance suite. They are read
// from TRTX_PTE_CORPUS (default ../shared/pte-corpus beside the checkout) and
// never copied into the project. A missing corpus fails loudly: CI must not
// pass by skipping conformance.
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const CORPUS_DIR = resolve(process.env.TRTX_PTE_CORPUS ?? join(repo, '..', 'shared', 'pte-corpus'));

export function corpusPrograms(): string[] {
  if (!existsSync(CORPUS_DIR)) {
    throw new Error(`ExecuTorch corpus not found at ${CORPUS_DIR}; set TRTX_PTE_CORPUS`);
  }
  const names = readdirSync(CORPUS_DIR)
    .filter((f) => f.endsWith('.pte'))
    .map((f) => f.slice(0, -4))
    .sort();
  if (names.length === 0) throw new Error(`no .pte files in ${CORPUS_DIR}`);
  return names;
}

export const corpusPath = (name: string, ext = '.pte') => join(CORPUS_DIR, name + ext);
