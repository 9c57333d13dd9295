// What `trtx export` looks at before it starts Python: the model names a
// file that exists, can be read, and has the bytes of a file the bridge
// accepts, so a typo in the path reads as a typo, not as "install torch".
// Only the first bytes are read. The bridge's sniffer
// (python-bridge/trtx_bridge/sniff.py) still tells the kinds of zip archive
// apart (ExportedProgram, TorchScript, pickle, AOTInductor package); this is
// the coarse gate in front of it, with the same magic numbers. It also gives
// the default output path: the model's name with `.pte`, beside it.

import { realpathSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { TrtxError } from '../util/errors.js';

/** A `file.py:factory` reference, split as the bridge splits it (python-bridge/trtx_bridge/sniff.py, parse_model_ref). */
export function splitModelRef(model: string): { path: string; factory: string | null } {
  const at = model.lastIndexOf(':');
  if (at > 0) {
    const path = model.slice(0, at);
    const factory = model.slice(at + 1);
    if (path.endsWith('.py') && factory) return { path, factory };
  }
  return { path: model, factory: null };
}

const ZIP_MAGICS = ['504b0304', '504b0506'];
const FORMAT_HINT = 'give a torch.export.save archive (.pt2, .pt, .ep) or a factory as file.py:function';

function formatError(model: string, message: string, hint = FORMAT_HINT): TrtxError {
  return new TrtxError('EXPORT_MODEL_FORMAT', model, message, { hint });
}

/**
 * Refuses (exit 2) a model reference whose file is missing, unreadable or
 * not a kind of file export reads. Does not start Python.
 */
export async function checkModelFile(model: string): Promise<void> {
  const { path, factory } = splitModelRef(model);
  const unreadable = (why: string) => new TrtxError('INPUT_UNREADABLE', path, why, { hint: factory === null ? FORMAT_HINT : undefined });
  let size: number;
  try {
    const st = await stat(path);
    if (st.isDirectory()) throw unreadable('is a directory, expected a model file');
    if (!st.isFile()) throw unreadable('is not a regular file');
    size = st.size;
  } catch (e) {
    if (e instanceof TrtxError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw unreadable(code === 'ENOENT' ? 'no such file' : `cannot read (${code})`);
  }
  let head: Buffer;
  try {
    const fh = await open(path, 'r');
    try {
      head = Buffer.alloc(Math.min(8, size));
      await fh.read(head, 0, head.length, 0);
    } finally {
      await fh.close();
    }
  } catch (e) {
    throw unreadable(`cannot read (${(e as NodeJS.ErrnoException).code})`);
  }
  if (factory !== null) return;
  if (path.endsWith('.py'))
    throw formatError(model, 'a Python file, but no factory is named', `name the function that returns the model: ${model}:make_model`);
  if (size === 0) throw formatError(model, 'the file is empty');
  if (ZIP_MAGICS.includes(head.subarray(0, 4).toString('hex'))) return;
  // torch.save's legacy serializer: a raw pickle, PROTO opcode 0x80 and protocol 2..5.
  if (head[0] === 0x80 && head.length > 1 && head[1] >= 2 && head[1] <= 5) return;
  if (head.subarray(4, 8).toString('latin1') === 'ET12') {
    throw formatError(
      model,
      'this is already an ExecuTorch program (.pte)',
      `check it with \`trtx check ${model}\`, change it with \`trtx rewrite\``,
    );
  }
  throw formatError(model, 'not a model file export reads (neither a zip archive nor a pickle)');
}

/**
 * Where `trtx export MODEL` writes without -o: MODEL's name with `.pte`
 * instead of its extension, in MODEL's folder (`llm.py:make_decoder` ->
 * `llm.pte`).
 */
export function defaultOutput(model: string): string {
  const { path } = splitModelRef(model);
  const name = basename(path, extname(path));
  return join(dirname(path), `${name}.pte`);
}

/** Whether two paths name the same file (links followed where the file exists). */
export function samePath(a: string, b: string): boolean {
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return resolve(p);
    }
  };
  return real(a) === real(b);
}

// Eager steps per method in OUT.reference.json (docs/reference-lowering.md
// section 2): the default, and the most a request may ask for (the bridge's
// request.py MAX_REFERENCE_STEPS; src/bridge/protocol.ts checks it again).
// Here, not in export.ts, so the command line checks --reference-steps
// without loading the export.
export const DEFAULT_REFERENCE_STEPS = 5;
export const MAX_REFERENCE_STEPS = 10_000;
