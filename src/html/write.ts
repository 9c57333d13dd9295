// Writing a report page: refused when the target is one of the programs it
// describes (a typo must not replace a .pte by its picture), then written
// atomically.
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { TrtxError } from '../util/errors.js';
import { writeFileAtomic } from '../util/atomic-write.js';

async function sameFile(a: string, b: string): Promise<boolean> {
  if (resolve(a) === resolve(b)) return true;
  try {
    const [x, y] = await Promise.all([stat(a), stat(b)]);
    return x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

export async function writeReport(target: string, html: string, inputs: string[]): Promise<number> {
  for (const input of inputs) {
    if (await sameFile(target, input)) {
      throw new TrtxError('HTML_TARGET_IS_INPUT', target, `--html would overwrite the program ${input}`, { kind: 'usage', hint: 'name a new file for the report, e.g. report.html' });
    }
  }
  return writeFileAtomic(target, html);
}
