// `trtx export` names the kind of model file it was given from the file's
// bytes, before any Python starts: each kind export does not take gets its
// own code and what to do instead. The files are what torch.save,
// torch.jit.save and a state dict save write (test/doubles/models/saved/make.py).
import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from './helpers/cli.js';
import { DOUBLE_PYTHON, REPO } from './helpers/bridge.js';
import { tempDir } from './helpers/temp.js';
import { pickleKind } from '../src/export/model-kind.js';

const SAVED = join(REPO, 'test', 'doubles', 'models', 'saved');
const dir = tempDir('export-model-kind');

/** trtx export FILE with the recording double as its Python: what it printed, and whether any Python ran. */
async function exportFile(name: string, extra: string[] = []) {
  const calls = join(dir, `${name}.calls.jsonl`);
  const out = join(dir, `${name}.pte`);
  const r = await runCli(['export', join(SAVED, name), '-o', out, '--python', DOUBLE_PYTHON, ...extra], {
    env: { TRTX_DOUBLE_CALLS: calls },
  });
  return { ...r, pythonRan: existsSync(calls), wrote: existsSync(out) };
}

describe('trtx export identifies the model file before Python starts', () => {
  it.each(['state_dict.pt', 'state_dict_legacy.pt', 'checkpoint.pt'])(
    '%s: a state dict, weights only, with the factory way out (exit 1)',
    async (name) => {
      const r = await exportFile(name);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^error: EXPORT_MODEL_STATE_DICT: .*a state dict \(torch\.save\(model\.state_dict\(\)\)\): weights only/m);
      expect(r.stderr).toMatch(/^hint: .*load_state_dict.*`trtx export model\.py:make_model`/m);
      expect(r.pythonRan).toBe(false);
      expect(r.wrote).toBe(false);
    },
  );

  it('the issue\u2019s command line: `trtx export state_dict.pt` with no other flag names the state dict', async () => {
    const r = await runCli(['export', join(SAVED, 'state_dict.pt'), '-o', join(dir, 'plain.pte')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: EXPORT_MODEL_STATE_DICT: /);
  });

  it('a TorchScript archive is named as one (exit 1)', async () => {
    const r = await exportFile('torchscript.pt');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: EXPORT_MODEL_TORCHSCRIPT: .*TorchScript archive/m);
    expect(r.stderr).toMatch(/^hint: .*torch\.export\.save/m);
    expect(r.pythonRan).toBe(false);
  });

  it('a pickled module is refused without --allow-pickle, naming its class, and goes to the bridge with it', async () => {
    const r = await exportFile('module.pt');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: EXPORT_MODEL_PICKLE: .*a pickled module \(torch\.save\(model\), naming __main__\.Net/m);
    expect(r.stderr).toMatch(/^hint: .*--allow-pickle/m);
    expect(r.pythonRan).toBe(false);
    const allowed = await exportFile('module.pt', ['--allow-pickle']);
    expect(allowed.stderr).not.toMatch(/EXPORT_MODEL_PICKLE/);
    expect(allowed.pythonRan).toBe(true);
  });

  it('reads a pickle by the globals it names, not by running it', () => {
    const g = (m: string, n: string) => `c${m}\n${n}\n`;
    const bytes = (s: string) => Buffer.from(`\x80\x02${s}.`, 'latin1');
    expect(pickleKind(bytes(g('collections', 'OrderedDict') + g('torch._utils', '_rebuild_tensor_v2'))).kind).toBe('state_dict');
    expect(pickleKind(bytes(g('collections', 'OrderedDict') + g('mymodel', 'Net')))).toEqual({ kind: 'module', classes: ['mymodel.Net'] });
    expect(pickleKind(bytes(g('collections', 'OrderedDict'))).kind).toBe('pickle');
    // Protocol 4: STACK_GLOBAL over two short strings, each memoized.
    const s4 = '\x8c\x0btorch._utils\x94\x8c\x12_rebuild_tensor_v2\x94\x93';
    expect(pickleKind(Buffer.from(`\x80\x04${s4}.`, 'latin1')).kind).toBe('state_dict');
  });
});
