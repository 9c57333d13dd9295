// What `trtx export` looks at before it starts Python: the model names a
// file that exists, can be read, and has the bytes of a file the bridge
// accepts, so a typo in the path reads as a typo, not as "install torch".
// What kind of model the file holds is read from its bytes (model-kind.ts),
// and each kind export does not take is refused here with its own code and
// what to do instead: a state dict, a TorchScript archive, a pickled module
// without --allow-pickle, an ExecuTorch program, an AOTInductor package
// (exit 1: the model is refused), or no model file at all (exit 2). The
// bridge's sniffer (python-bridge/trtx_bridge/sniff.py) reads the same
// layouts again. It also gives the default output path: the model's name
// with `.pte`, beside it.

import { realpathSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { basename, dirname, extname, join, normalize } from 'node:path';
import { shortName } from '../util/display.js';
import { TrtxError } from '../util/errors.js';
import type { Code } from '../codes/index.js';
import { modelKind } from './model-kind.js';

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

const FORMAT_HINT = 'give a torch.export.save archive (.pt2, .pt, .ep) or a factory as file.py:function';

function formatError(model: string, message: string, hint = FORMAT_HINT, code: Code = 'EXPORT_MODEL_FORMAT'): TrtxError {
  return new TrtxError(code, model, message, { hint });
}

/**
 * Refuses a model reference whose file is missing or unreadable (exit 2), or
 * holds a kind of model export does not take (its own code; docs/exit-codes.md).
 * Does not start Python.
 */
/** What the model file says before Python starts: an exported program archive's tensor bytes (null: not known from the file). */
export interface ModelFileFacts {
  weightBytes: number | null;
}

export async function checkModelFile(model: string, opts: { allowPickle?: boolean } = {}): Promise<ModelFileFacts> {
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
  if (factory !== null) {
    // A factory's file is Python source; the bridge imports it.
    await readable(path, unreadable);
    return { weightBytes: null };
  }
  if (path.endsWith('.py'))
    throw formatError(
      model,
      'a Python file, but no factory is named',
      `name the function that returns the model: ${model}:make_model`,
      'EXPORT_MODEL_NO_FACTORY',
    );
  if (size === 0) throw formatError(model, 'the file is empty');
  let found: Awaited<ReturnType<typeof modelKind>>;
  try {
    found = await modelKind(path, size);
  } catch (e) {
    throw unreadable(`cannot read (${(e as NodeJS.ErrnoException).code})`);
  }
  switch (found.kind) {
    case 'exported_program':
    case 'pickle':
      return { weightBytes: found.weightBytes };
    case 'module':
      if (opts.allowPickle) return { weightBytes: null };
      throw formatError(
        model,
        `a pickled module (torch.save(model), naming ${found.classes.slice(0, 3).map(shortName).join(', ')}): loading it runs its code`,
        `save it with torch.export.save(torch.export.export(model, example_inputs), "model.pt2") and export that, or pass --allow-pickle if you trust the file`,
        'EXPORT_MODEL_PICKLE',
      );
    case 'state_dict':
      throw formatError(
        model,
        'a state dict (torch.save(model.state_dict())): weights only, with no model to export',
        `write a factory that builds the model, loads these weights and returns it with example inputs, e.g. in model.py: def make_model(): m = Net(); m.load_state_dict(torch.load("${basename(path)}")); return m, (torch.randn(1, 16),) -- then \`trtx export model.py:make_model\``,
        'EXPORT_MODEL_STATE_DICT',
      );
    case 'torchscript':
      throw formatError(
        model,
        'a TorchScript archive (torch.jit.save), which cannot be exported to ExecuTorch',
        'export the eager nn.Module instead: torch.export.save(torch.export.export(model, example_inputs), "model.pt2"), or a factory file.py:function',
        'EXPORT_MODEL_TORCHSCRIPT',
      );
    case 'program':
      throw formatError(
        model,
        'this is already an ExecuTorch program (.pte)',
        `check it with \`trtx check ${model}\`, change it with \`trtx rewrite\``,
        'EXPORT_MODEL_PROGRAM',
      );
    case 'aoti_package':
      throw formatError(
        model,
        'an AOTInductor package (a PT2 archive without an ExportedProgram)',
        'save the ExportedProgram itself with torch.export.save and export that',
        'EXPORT_MODEL_AOTI',
      );
    default:
      throw formatError(model, 'not a model file export reads (neither a torch.export or torch.save zip archive nor a pickle)');
  }
}

async function readable(path: string, unreadable: (why: string) => TrtxError): Promise<void> {
  try {
    const fh = await open(path, 'r');
    await fh.close();
  } catch (e) {
    throw unreadable(`cannot read (${(e as NodeJS.ErrnoException).code})`);
  }
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

/** Whether two absolute paths name the same file (links followed where the file exists). */
export function samePath(a: string, b: string): boolean {
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      // Normalised (`..`, `//`); the path is absolute already.
      return normalize(p);
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
