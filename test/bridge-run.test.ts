// runBridge against the real Python bridge with the test doubles standing in
// for torch, torch_tensorrt and executorch: the protocol, every failure mode
// of the child process, and the model-source refusals.

import { createHash } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION, type BridgeEvent } from '../src/bridge/protocol.js';
import { runBridge } from '../src/bridge/run.js';
import { alive, doubleEnv, eventually, exportRequest, failure, FIXTURE_PTE, PYTHON, readCalls, REPO, workspace } from './helpers/bridge.js';
import { validate } from './helpers/json-schema.js';

const schema = JSON.parse(readFileSync(join(REPO, 'schemas', 'bridge-protocol.schema.json'), 'utf8')) as Record<string, unknown>;

describe('runBridge: the protocol round trip', () => {
  it('sends the request, validates every event, and resolves with the result', async () => {
    const ws = workspace();
    const events: BridgeEvent[] = [];
    const result = await runBridge(exportRequest(ws, { budget_bytes: '8589934592', zero_copy_kv: true }), {
      python: PYTHON,
      env: doubleEnv(ws),
      onEvent: (e) => events.push(e),
    });
    expect(events[0]).toMatchObject({ event: 'hello', protocol: 2 });
    expect(events.at(-1)).toBe(result);
    const fractions = events.flatMap((e) => (e.event === 'progress' ? [e.fraction] : []));
    expect(fractions.length).toBeGreaterThan(5);
    expect(fractions).toEqual([...fractions].sort((a, b) => a - b));
    expect(fractions.at(-1)).toBe(1);
    const stages = new Set(events.flatMap((e) => (e.event === 'progress' ? [e.stage] : [])));
    for (const stage of ['check', 'load', 'compile', 'lower', 'order_mutations', 'finalize', 'write']) expect(stages).toContain(stage);
    for (const e of events) expect(validate(schema, e, { $ref: '#/$defs/event' })).toEqual([]);

    if (result.mode !== 'export') throw new Error('expected an export result');
    const written = readFileSync(ws.out);
    expect(written.equals(readFileSync(FIXTURE_PTE))).toBe(true);
    expect(result.program).toEqual({ path: ws.out, bytes: written.length, sha256: createHash('sha256').update(written).digest('hex') });
    expect(result.versions.torch).toBe('2.99.0+trtx.double');
    expect(result.methods.map((m) => m.name)).toEqual(['forward']);
  });

  it('keeps stray prints of the libraries out of the protocol', async () => {
    const ws = workspace();
    let log = '';
    const result = await runBridge(exportRequest(ws), {
      python: PYTHON,
      env: doubleEnv(ws, { TRTX_DOUBLE_FAULT: 'compile:print' }),
      onStderr: (t) => (log += t),
    });
    expect(result.mode).toBe('export');
    expect(log).toContain('double: stray print on stdout');
    expect(log).toContain('double: stray native write on fd 1');
  });

  it('refuses an invalid request before starting anything', async () => {
    const ws = workspace();
    const err = await failure(runBridge({ ...exportRequest(ws), budget_bytes: '12 GiB' }, { python: PYTHON, env: doubleEnv(ws) }));
    expect(err.code).toBe('BRIDGE_REQUEST');
    expect(readCalls(ws)).toEqual([]);
  });
});

describe('runBridge: bridge errors keep their type and hint', () => {
  it('maps an error event to BRIDGE_<TYPE> with the hint and the log tail', async () => {
    const ws = workspace();
    const err = await failure(runBridge(exportRequest(ws), { python: PYTHON, env: doubleEnv(ws, { TRTX_DOUBLE_FAULT: 'lower:raise' }) }));
    expect(err.code).toBe('BRIDGE_LOWER');
    expect(err.kind).toBe('check');
    expect(err.message).toBe('torch_tensorrt.executorch.export failed: RuntimeError: double: injected failure in lower');
    expect(err.hint).toMatch(/--zero-copy-kv/);
    expect(err.exitCode).toBe(1);
    expect(err.stderrTail).toContain('RuntimeError: double: injected failure in lower');
    expect(existsSync(ws.out)).toBe(false);
  });

  it('reports a compile failure as BRIDGE_COMPILE', async () => {
    const ws = workspace();
    const err = await failure(runBridge(exportRequest(ws), { python: PYTHON, env: doubleEnv(ws, { TRTX_DOUBLE_FAULT: 'compile:raise' }) }));
    expect(err.code).toBe('BRIDGE_COMPILE');
    expect(err.message).toMatch(/^Torch-TensorRT could not compile method forward: /);
    expect(err.hint).toMatch(/compile_options/);
  });

  it('removes a partly written program when writing fails', async () => {
    const ws = workspace();
    const err = await failure(runBridge(exportRequest(ws), { python: PYTHON, env: doubleEnv(ws, { TRTX_DOUBLE_FAULT: 'write:raise' }) }));
    expect(err.code).toBe('BRIDGE_WRITE');
    expect(existsSync(ws.out)).toBe(false);
  });
});

describe('runBridge: model sources', () => {
  it('refuses a pickled module without allow_pickle, before any loader sees it', async () => {
    for (const name of ['pickled.pt', 'legacy.pt']) {
      const ws = workspace();
      const err = await failure(runBridge(exportRequest(ws, { model: ws.file(name) }), { python: PYTHON, env: doubleEnv(ws) }));
      expect(err.code).toBe('BRIDGE_PICKLE_REFUSED');
      // The model is refused as given (exit 1, src/codes/exit.ts).
      expect(err.kind).toBe('check');
      expect(err.hint).toMatch(/--allow-pickle/);
      expect(err.hint).toMatch(/torch\.export\.save/);
      expect(readCalls(ws).map((c) => c.call)).not.toContain('torch.load');
    }
  });

  it('loads a pickle with allow_pickle, as a full unpickle', async () => {
    const ws = workspace();
    const result = await runBridge(exportRequest(ws, { model: ws.file('pickled.pt'), allow_pickle: true }), {
      python: PYTHON,
      env: doubleEnv(ws),
    });
    expect(result.mode).toBe('export');
    const load = readCalls(ws).find((c) => c.call === 'torch.load');
    expect(load?.args).toEqual({ f: ws.file('pickled.pt'), weights_only: false });
  });

  it('asks for example inputs when a pickle holds a bare module', async () => {
    const ws = workspace();
    const err = await failure(
      runBridge(exportRequest(ws, { model: ws.file('pickled.pt'), allow_pickle: true }), {
        python: PYTHON,
        env: doubleEnv(ws, { TRTX_DOUBLE_PICKLE_VALUE: 'bare' }),
      }),
    );
    expect(err.code).toBe('BRIDGE_MODEL_NO_INPUTS');
    expect(err.hint).toMatch(/example_inputs/);
  });

  it('tells how to turn TorchScript into an ExportedProgram', async () => {
    const ws = workspace();
    const err = await failure(runBridge(exportRequest(ws, { model: ws.file('scripted.pt') }), { python: PYTHON, env: doubleEnv(ws) }));
    expect(err.code).toBe('BRIDGE_TORCHSCRIPT');
    expect(err.message).toMatch(/TorchScript archive/);
    expect(err.hint).toMatch(/torch\.export\.export\(model, example_inputs\)/);
    expect(err.hint).toMatch(/torch\.export\.save\(ep, 'model\.pt2'\)/);
  });

  it('reads an ExportedProgram archive whatever its extension', async () => {
    const ws = workspace();
    await runBridge(exportRequest(ws, { model: ws.file('model.ep') }), { python: PYTHON, env: doubleEnv(ws) });
    expect(readCalls(ws)[0]).toEqual({ call: 'torch.export.load', args: { f: 'model.ep' } });
  });

  it('refuses unknown files, AOTInductor packages and missing paths', async () => {
    const ws = workspace();
    const run = (model: string) => failure(runBridge(exportRequest(ws, { model }), { python: PYTHON, env: doubleEnv(ws) }));
    expect((await run(ws.file('notes.txt'))).code).toBe('BRIDGE_MODEL_FORMAT');
    expect((await run(ws.file('aoti.pt2'))).code).toBe('BRIDGE_MODEL_FORMAT');
    const missing = await run(ws.file('absent.pt2'));
    expect(missing.code).toBe('BRIDGE_MODEL_NOT_FOUND');
    expect(missing.location).toBe(ws.file('absent.pt2'));
  });
});

describe('runBridge: the child process', () => {
  it('cancellation kills the whole process tree', async () => {
    const ws = workspace();
    const pidfile = ws.file('grandchild.pid');
    const controller = new AbortController();
    let bridgePid = 0;
    const run = runBridge(exportRequest(ws), {
      python: PYTHON,
      env: doubleEnv(ws, { TRTX_DOUBLE_FAULT: 'compile:hang', TRTX_DOUBLE_PIDFILE: pidfile }),
      signal: controller.signal,
      onEvent: (e) => {
        if (e.event === 'hello') bridgePid = e.pid;
      },
    });
    expect(await eventually(() => existsSync(pidfile))).toBe(true);
    const grandchild = Number(readFileSync(pidfile, 'utf8'));
    expect(alive(grandchild)).toBe(true);
    controller.abort();
    const err = await failure(run);
    expect(err.code).toBe('BRIDGE_CANCELLED');
    expect(await eventually(() => !alive(grandchild))).toBe(true);
    expect(await eventually(() => !alive(bridgePid))).toBe(true);
  });

  it('an already-aborted signal starts nothing', async () => {
    const ws = workspace();
    const controller = new AbortController();
    controller.abort();
    const err = await failure(runBridge(exportRequest(ws), { python: PYTHON, env: doubleEnv(ws), signal: controller.signal }));
    expect(err.code).toBe('BRIDGE_CANCELLED');
    expect(existsSync(ws.calls)).toBe(false);
  });

  it('the timeout stops a hung bridge and its children', async () => {
    const ws = workspace();
    const pidfile = ws.file('grandchild.pid');
    const err = await failure(
      runBridge(exportRequest(ws), {
        python: PYTHON,
        env: doubleEnv(ws, { TRTX_DOUBLE_FAULT: 'compile:hang', TRTX_DOUBLE_PIDFILE: pidfile }),
        timeoutMs: 1500,
      }),
    );
    expect(err.code).toBe('BRIDGE_TIMEOUT');
    expect(err.message).toMatch(/within 1500 ms/);
    expect(err.hint).toMatch(/--timeout/);
    expect(existsSync(pidfile)).toBe(true);
    const grandchild = Number(readFileSync(pidfile, 'utf8'));
    expect(await eventually(() => !alive(grandchild))).toBe(true);
  });

  it('quotes, cut, the line that is not an event', async () => {
    const ws = workspace();
    const err = await failure(
      runBridge(exportRequest(ws), { python: PYTHON, env: doubleEnv(ws, { TRTX_DOUBLE_FAULT: 'compile:garbage' }) }),
    );
    expect(err.code).toBe('BRIDGE_PROTOCOL');
    expect(err.message).toMatch(/^the Python bridge wrote a line that is not JSON: "Torch-TensorRT says hi Torch-TensorRT says hi /);
    expect(err.message).toMatch(/\u2026" \(11500 bytes\)$/);
    expect(err.message.length).toBeLessThan(300);
    expect(existsSync(ws.out)).toBe(false);
  });

  it('refuses a first line that is not hello, and a line past the length limit', async () => {
    const ws = workspace();
    const script = ws.file('fake-python');
    writeFileSync(script, '#!/bin/sh\ncat >/dev/null\necho \'{"event":"progress","stage":"load","fraction":0}\'\n');
    chmodSync(script, 0o755);
    const early = await failure(runBridge(exportRequest(ws), { python: script }));
    expect(early.code).toBe('BRIDGE_PROTOCOL');
    expect(early.message).toMatch(/an event before hello: "\{\\"event\\":\\"progress\\"/);

    writeFileSync(script, '#!/bin/sh\ncat >/dev/null\nhead -c 100000 /dev/zero | tr "\\0" "y"\nsleep 30\n');
    const long = await failure(runBridge(exportRequest(ws), { python: script, maxLineBytes: 4096 }));
    expect(long.code).toBe('BRIDGE_PROTOCOL');
    expect(long.message).toMatch(/longer than 4096 bytes: "yyyy/);
  });

  it('a failed run leaves nothing at the paths the request named, also when the bridge wrote them before it failed', async () => {
    const ws = workspace();
    const script = ws.file('fake-python');
    const reference = ws.file('out.pte.reference.json');
    const hello = JSON.stringify({ event: 'hello', protocol: PROTOCOL_VERSION, bridge_version: '9.9.9', pid: 1 });
    // Writes both files, then a line that is not an event, then exits 0: done before any signal could reach it.
    writeFileSync(
      script,
      `#!/bin/sh\ncat >/dev/null\necho '${hello}'\necho p > '${ws.out}'\necho r > '${reference}'\necho 'not an event'\nexit 0\n`,
    );
    chmodSync(script, 0o755);
    const request = exportRequest(ws, { reference: { path: reference, steps: 2, program: 'out.pte' } });
    const err = await failure(runBridge(request, { python: script }));
    expect(err.code).toBe('BRIDGE_PROTOCOL');
    expect(existsSync(ws.out), 'the output the request named').toBe(false);
    expect(existsSync(reference), 'the reference file the request named').toBe(false);
  });

  it('refuses an error event of a type this trtx does not list (a python-bridge from another trtx)', async () => {
    const ws = workspace();
    const script = ws.file('fake-python');
    const hello = JSON.stringify({ event: 'hello', protocol: PROTOCOL_VERSION, bridge_version: '9.9.9', pid: 1 });
    const error = JSON.stringify({ event: 'error', type: 'FROM_THE_FUTURE', message: 'something new went wrong', hint: 'h' });
    writeFileSync(script, `#!/bin/sh\ncat >/dev/null\necho '${hello}'\necho '${error}'\nexit 1\n`);
    chmodSync(script, 0o755);
    const err = await failure(runBridge(exportRequest(ws), { python: script }));
    expect(err.code).toBe('BRIDGE_PROTOCOL');
    expect(err.message).toBe(
      'the Python bridge reported an error of a type this trtx does not know (FROM_THE_FUTURE): something new went wrong',
    );
    expect(err.kind).toBe('usage');
  });

  it('reports a bridge killed mid-stream with its signal and log tail', async () => {
    const ws = workspace();
    const err = await failure(runBridge(exportRequest(ws), { python: PYTHON, env: doubleEnv(ws, { TRTX_DOUBLE_FAULT: 'compile:kill' }) }));
    expect(err.code).toBe('BRIDGE_DIED');
    expect(err.signal).toBe('SIGKILL');
    expect(err.message).toMatch(/was killed by SIGKILL before reporting a result; its log ends: "double: killing itself during compile"/);
    expect(err.hint).toMatch(/OOM/);
    expect(err.stderrTail).toContain('double: killing itself during compile');
  });

  it('reports a bridge that exits mid-stream with its exit code', async () => {
    const ws = workspace();
    const err = await failure(
      runBridge(exportRequest(ws), {
        python: PYTHON,
        env: doubleEnv(ws, { TRTX_DOUBLE_FAULT: 'compile:exit', TRTX_DOUBLE_EXIT_CODE: '7' }),
      }),
    );
    expect(err.code).toBe('BRIDGE_DIED');
    expect(err.exitCode).toBe(7);
    expect(err.message).toMatch(/exited with code 7 before reporting a result/);
  });

  it('holds only the tail of a 50 MB stderr', async () => {
    const ws = workspace();
    const err = await failure(
      runBridge(exportRequest(ws), {
        python: PYTHON,
        env: doubleEnv(ws, { TRTX_DOUBLE_FAULT: 'compile:stderr,exit' }),
        stderrTailBytes: 32 * 1024,
      }),
    );
    expect(err.code).toBe('BRIDGE_DIED');
    expect(err.stderrBytes).toBeGreaterThan(50 * 1024 * 1024);
    expect(Buffer.byteLength(err.stderrTail)).toBeLessThanOrEqual(32 * 1024);
    expect(err.stderrTail).toMatch(/double: end of stderr flood\ndouble: exiting during compile\n$/);
  });

  it('a throwing onEvent ends the run with that error and stops the bridge', async () => {
    const ws = workspace();
    const boom = new Error('consumer failed');
    await expect(
      runBridge(exportRequest(ws), {
        python: PYTHON,
        env: doubleEnv(ws),
        onEvent: (e) => {
          if (e.event === 'progress' && e.stage === 'load') throw boom;
        },
      }),
    ).rejects.toBe(boom);
    expect(existsSync(ws.out)).toBe(false);
  });
});
