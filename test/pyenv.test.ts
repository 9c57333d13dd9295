// trtx's managed Python environment: made from the lock on first use, reused
// after, made once by concurrent callers, remade when an earlier attempt was
// interrupted, and refused with a named cause when it cannot be made. The
// creation tests use a lock without pins (an empty environment, no network);
// the real one, from python-bridge/requirements.lock, is checked last.

import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseLock, readPythonLock, sameRelease, type PythonLock } from '../src/pyenv/lock-file.js';
import { ensureManagedEnv, managedEnvDir } from '../src/pyenv/managed.js';
import { ensurePythonEnv } from '../src/pyenv/index.js';
import { TrtxError } from '../src/util/errors.js';
import { cleanupNow, tracked } from '../src/util/cleanup.js';
import { tempDir } from './helpers/temp.js';
import { withoutNamedPython } from './helpers/bridge.js';

const root = tempDir('pyenv');

function emptyLock(name: string): PythonLock {
  const path = join(root, `${name}.lock`);
  writeFileSync(path, '# no pins: an empty environment\n');
  return { path, hash: name.padEnd(16, '0').slice(0, 16), pins: new Map() };
}

describe('the lock file', () => {
  it('reads exact pins with normalised names', () => {
    const pins = parseLock('# c\nJinja2==3.1.6\ntyping_extensions==4.16.0  # why\n\ntorch==2.13.0\n', 'x.lock');
    expect([...pins]).toEqual([
      ['jinja2', '3.1.6'],
      ['typing-extensions', '4.16.0'],
      ['torch', '2.13.0'],
    ]);
  });

  it('refuses a line that is not an exact pin, naming the line', () => {
    expect(() => parseLock('torch==2.13.0\nexecutorch>=1.5\n', 'x.lock')).toThrow(
      expect.objectContaining({ code: 'PYENV_LOCK_INVALID', location: 'x.lock:2' }),
    );
  });

  it('pins torch 2.13.0 and executorch 1.5.x, and only exact versions', async () => {
    const lock = await readPythonLock();
    expect(lock.pins.get('torch')).toBe('2.13.0');
    expect(lock.pins.get('executorch')).toMatch(/^1\.5\.\d+$/);
    expect(lock.hash).toMatch(/^[0-9a-f]{16}$/);
  });

  it('treats a local build label as the same release', () => {
    expect(sameRelease('2.13.0+cpu', '2.13.0')).toBe(true);
    expect(sameRelease('2.11.0', '2.13.0')).toBe(false);
  });
});

// Each case makes its own environment (its own lock and folder): they run at
// once, since nearly all their time is python -m venv and pip waiting on disk.
describe.concurrent('the managed environment', { timeout: 180_000 }, () => {
  it('is made on first use with progress, then reused without making it again', async () => {
    const lock = emptyLock('first');
    const phases: string[] = [];
    const first = await ensureManagedEnv({ cacheDir: root, lock, onProgress: (p) => phases.push(p.phase) });
    expect(first.created).toBe(true);
    expect(phases).toEqual(expect.arrayContaining(['create', 'ready']));
    expect(existsSync(first.python)).toBe(true);
    expect(first.dir).toBe(managedEnvDir(lock, root));
    const again: string[] = [];
    const second = await ensureManagedEnv({ cacheDir: root, lock, onProgress: (p) => again.push(p.phase) });
    expect(second.created).toBe(false);
    expect(again).toEqual(['cached']);
  });

  it('is made once when two callers start at the same time', async () => {
    const lock = emptyLock('twice');
    const [a, b] = await Promise.all([ensureManagedEnv({ cacheDir: root, lock }), ensureManagedEnv({ cacheDir: root, lock })]);
    expect([a.created, b.created].filter(Boolean)).toHaveLength(1);
    expect(a.python).toBe(b.python);
  });

  it('remakes a folder that an interrupted attempt left without its completion marker', async () => {
    const lock = emptyLock('interrupted');
    const dir = managedEnvDir(lock, root);
    mkdirSync(join(dir, 'bin'), { recursive: true });
    writeFileSync(join(dir, 'bin', 'python'), 'half-made');
    const env = await ensureManagedEnv({ cacheDir: root, lock });
    expect(env.created).toBe(true);
    expect(readFileSync(env.python).toString()).not.toBe('half-made');
  });

  it('names the missing interpreter it would be made from (exit 2), leaving nothing behind', async () => {
    const lock = emptyLock('nopython');
    const err = await ensureManagedEnv({ cacheDir: root, lock, bootstrapPython: join(root, 'no-such-python') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TrtxError);
    expect(err).toMatchObject({ code: 'PYENV_BOOTSTRAP_MISSING', kind: 'usage' });
    expect(existsSync(managedEnvDir(lock, root))).toBe(false);
  });

  it('reports pip failing to install the lock, and removes the half-made folder', async () => {
    const path = join(root, 'bad.lock');
    writeFileSync(path, 'trtx-no-such-package-anywhere==0.0.0\n');
    const lock: PythonLock = { path, hash: 'bad0000000000000', pins: new Map([['trtx-no-such-package-anywhere', '0.0.0']]) };
    const err = await ensureManagedEnv({ cacheDir: root, lock }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'PYENV_INSTALL_FAILED', kind: 'usage' });
    expect(existsSync(managedEnvDir(lock, root))).toBe(false);
  }, 120_000);
});

describe('a named interpreter', { timeout: 60_000 }, () => {
  it('is used as it is, and an interpreter that does not exist is a usage error', async () => {
    const err = await ensurePythonEnv({ python: join(root, 'nope'), env: withoutNamedPython() }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'PYENV_PYTHON_NOT_FOUND', kind: 'usage' });
  });

  it('reports what differs from the lock (torch of the test doubles is not 2.13.0)', async () => {
    const env = await ensurePythonEnv({ python: 'test/doubles/python-with-doubles', env: withoutNamedPython() });
    expect(env.source).toBe('--python');
    expect(env.dir).toBeNull();
    // The doubles carry no distribution metadata: nothing to compare, nothing invented.
    expect(env.mismatches).toEqual([]);
  });
});

describe('the real managed environment (python-bridge/requirements.lock)', () => {
  it('holds torch 2.13.0 and executorch 1.5', async () => {
    const env = await ensurePythonEnv({ env: withoutNamedPython() });
    expect(env.source).toBe('managed');
    expect(sameRelease(env.probe.packages.torch ?? '', '2.13.0')).toBe(true);
    expect(env.probe.packages.executorch).toMatch(/^1\.5\./);
  }, 600_000);

  // Every export imports executorch.exir, which parses the edge dialect's
  // edge.yaml with ruamel.yaml: in C with ruamel.yaml.clib, in Python
  // (seconds slower) without it. ExecuTorch does not ask for it; the lock does.
  it("parses ExecuTorch's edge.yaml with ruamel.yaml's C parser", async () => {
    const env = await ensurePythonEnv({ env: withoutNamedPython() });
    const code = 'import ruamel.yaml.main as m; print(m.CParser is not None)';
    expect(execFileSync(env.python, ['-c', code], { encoding: 'utf8' }).trim()).toBe('True');
  }, 600_000);
});

describe('an interrupt while the environment is made', { timeout: 120_000 }, () => {
  it('stops pip with its group and removes the half-made environment and pip’s temporary folders', async () => {
    // A bootstrap interpreter whose venv's pip (a stand-in for a long real
    // install) makes a pip-unpack folder in its $TMPDIR and hangs; everything
    // else is the real python3.
    const real = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
    const boot = join(root, 'boot-python');
    writeFileSync(
      boot,
      [
        '#!/bin/sh',
        'if [ "$1" = -m ] && [ "$2" = venv ]; then',
        `  "${real}" -m venv "$3" || exit 1`,
        '  rm "$3/bin/python"',
        `  printf '#!/bin/sh\\nif [ "$2" = pip ]; then mkdir -p "$TMPDIR/pip-unpack-test"; exec sleep 60; fi\\nexec "${real}" "$@"\\n' > "$3/bin/python"`,
        '  chmod +x "$3/bin/python"',
        '  exit 0',
        'fi',
        `exec "${real}" "$@"`,
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
    const lock = emptyLock('interrupt');
    const dir = managedEnvDir(lock, root);
    const making = ensureManagedEnv({ cacheDir: root, lock, bootstrapPython: boot }).catch((e: unknown) => e);
    const pipTemp = () => tracked().paths.find((p) => p !== dir && existsSync(join(p, 'pip-unpack-test')));
    for (let i = 0; i < 600 && !pipTemp(); i++) await new Promise((r) => setTimeout(r, 50));
    const temp = pipTemp();
    expect(temp, 'pip ran with a private, registered TMPDIR').toBeDefined();
    expect(tracked().paths).toContain(dir);
    cleanupNow(); // what SIGINT or SIGTERM does before the exit
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(temp!)).toBe(false);
    expect(await making).toMatchObject({ code: 'PYENV_INSTALL_FAILED' });
    expect(tracked()).toEqual({ paths: [], groups: [] });
    // The next command makes it at once.
    const again = await ensureManagedEnv({ cacheDir: root, lock });
    expect(again.created).toBe(true);
  });
});
