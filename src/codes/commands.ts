// Codes of refusals by the commands and the rewrite passes, and of writing
// their outputs.

/** Any command. */
export const GENERAL_CODES = {
  USAGE: 'the command line is wrong: an unknown flag, a missing argument, flags that do not go together',
  INTERNAL: 'a bug in trtx, not in the input (set TRTX_DEBUG=1 for the stack)',
  INPUT_UNREADABLE: 'the input file does not exist or cannot be read',
  SIZE_INVALID: 'a size flag (--budget) is not a size trtx reads (8GiB, 512MiB, 8GB, 8589934592)',
  REPORT_BUDGET: 'a report would grow past its bound because the program\u2019s indices repeat the same data (stricter than ExecuTorch)',
  CACHE_DIR_UNNAMED: 'the run\u2019s environment names neither TRTX_CACHE_DIR nor HOME, so trtx has no cache folder',
} as const;

/** The rewrite passes and the commands that run them (src/passes/, `rewrite`, `export`, `demo`). */
export const REWRITE_CODES = {
  PASS_INPUT_UNSOUND: 'the input fails a structural check, so no pass runs on it',
  REWRITE_CHECK_FAILED: 'the rewritten program fails a check, so nothing was written',
  BUDGET_METHOD_UNKNOWN: '--method names no method of the program',
  BUDGET_DELEGATE_UNKNOWN: '--delegate names no delegate of the method',
  BUDGET_NO_TENSORRT_DELEGATE: 'the budget was asked of a program or selection with no TensorRT delegate',
  ZC_REWRITE_NO_ALIASED_CACHE: 'no engine declares an aliased KV cache, so there is nothing to un-stage',
  ZC_REWRITE_USER_ALIAS: 'an engine has a user alias beside its caches, which cannot be elided',
  ZC_REWRITE_NOT_STAGED_BUFFER: 'an aliased input is not a mutable buffer ExecuTorch stages into the engine',
  ZC_REWRITE_OUTPUT_READ: 'an aliased output is read by more than its write-back',
  ZC_REWRITE_WRITEBACK_MISMATCH: 'an aliased output is written back into another buffer than its aliased input',
  ZC_REWRITE_OTHER_READER: 'something other than the engine reads a cache that would move to the device',
  ZC_REWRITE_SHARED_DELEGATES: 'two engines update one cache, and --share-cache was not given',
  ZC_REWRITE_SHARED_METHODS: 'two methods share one cache, and --share-cache was not given',
  ZC_REWRITE_SHARED_ARENA_MIXED: 'a shared state arena holds something other than caches made zero-copy on one device',
  ZC_REWRITE_NO_OUTPUTS_LEFT: 'un-staging would leave a delegate with no output',
  ZC_REWRITE_DEVICE_CONFLICT: 'engines on different devices update one cache',
  ZC_REWRITE_INPUT_UNSOUND: 'the input program is not sound enough to rewrite',
  ZC_REWRITE_INTERNAL: 'the rewrite produced an inconsistent program (a bug in trtx)',
} as const;

/** Writing outputs: programs, reports, the writer lock (src/pte/write.ts, target.ts, src/util/). */
export const OUTPUT_CODES = {
  OUTPUT_IS_INPUT: 'the output is an input file itself, by any name (rewrite: use --in-place or --force)',
  OUTPUT_DIR: 'the output\u2019s folder does not exist or is not a folder',
  OUTPUT_NOT_REGULAR: 'the output exists and is not a regular file (a folder, a socket, a link)',
  OUTPUT_NAME_TOO_LONG: 'the output\u2019s name, or the temporary name beside it, is too long for the filesystem',
  WRITE_PERMISSION: 'writing is not permitted (permissions, a read-only filesystem)',
  WRITE_NO_SPACE: 'the device is full or the quota is spent',
  WRITE_FAILED: 'writing failed for another reason; the target was left untouched',
  WRITE_ABORTED: 'the write was interrupted; the target was left untouched',
  WRITE_ALIGNMENT: 'a segment alignment is not a power of two',
  WRITE_SEGMENTS: 'the program and the segment sources given to the writer disagree in number',
  WRITE_SOURCE_TRUNCATED: 'a segment\u2019s source ended before its size, or shrank while it was copied',
  WRITE_SOURCE_CHANGED:
    'a source file changed while it was copied (written to, or another file written over it): nothing was written; write it again once nothing else writes it',
  REWRITE_LOCKED: 'another writer holds the output\u2019s lock (with --no-wait)',
  REWRITE_HARD_LINKS:
    'an --in-place rewrite would replace the file by a new one, and the file has other hard links that would keep the old program (--break-hard-links allows it)',
  LOCK_UNAVAILABLE: 'flock(1) is not installed, so the writer lock cannot be taken',
  LOCK_FAILED: 'taking the writer lock failed',
} as const;

/** What a flag asks for that is likely not what was meant, said before the work starts (`export`, `rewrite`, `verify`): warnings, never refusals. */
export const FLAG_WARNING_CODES = {
  BUDGET_STREAMS_EVERYTHING:
    '--budget 0 keeps no weight on the device: every weight streams in at every execute (TensorRT\u2019s automatic budget is --clear-budget, or no --budget)',
  BUDGET_DECIMAL_UNIT:
    '--budget in a decimal unit (8GB is 8,000,000,000 bytes, 7.45 GiB), said with its binary equivalent before the work starts',
} as const;

/** One command each. */
export const COMMAND_CODES = {
  EXPORT_MODEL_FORMAT:
    'the model is no model file at all (neither a zip archive nor a pickle, or an empty file); checked before Python starts',
  EXPORT_MODEL_NO_FACTORY: 'the model is a Python file but names no factory (file.py:function)',
  EXPORT_MODEL_STATE_DICT:
    'the model file is a state dict (torch.save(model.state_dict())): weights only, no model to export; a factory file.py:function builds the model and loads them',
  EXPORT_MODEL_TORCHSCRIPT: 'the model file is a TorchScript archive (torch.jit.save), which cannot be exported to ExecuTorch',
  EXPORT_MODEL_PICKLE:
    'the model file is a pickled module (torch.save(model)), which runs code when loaded, and --allow-pickle was not given',
  EXPORT_MODEL_PROGRAM: 'the model file is already an ExecuTorch program (.pte)',
  EXPORT_MODEL_AOTI: 'the model file is an AOTInductor package (a PT2 archive without an ExportedProgram)',
  EXPORT_OUTPUT_EXISTS: 'the default output already exists (use --force or -o)',
  EXPORT_OUTPUT_IS_MODEL: 'the output would replace the model',
  EXPORT_CHECK_FAILED: 'the exported program fails a check, so nothing was written',
  EXPORT_MEMORY: 'the export would need more memory than this machine has available (2.5x the weights + 2 GiB)',
  DEMO_OUT: 'the demo folder cannot be used',
  DEMO_SCALE: '--scale does not go with the bundled PyTorch model',
  DEMO_CHECK_FAILED: 'the demo\u2019s rewritten program fails a check',
  DIFF_METHOD_UNKNOWN: '--method names a method in neither program',
  VERIFY_STEPS: '--steps is below 2, too few to see a cache persist',
  VERIFY_TENSORRT_PLAN: 'the program carries real TensorRT plans, which the bundled runner does not execute',
  VERIFY_BACKEND_MISSING: 'the program has a delegate of a backend the runner does not have',
  VERIFY_KERNEL_MISSING: 'the program calls an operator the runner has no kernel for (an environment result, like a missing backend)',
  VERIFY_NO_GPU: '--device cuda without a GPU or a CUDA build of the runner, or a program planned for a GPU the machine lacks',
  VERIFY_MEMORY_LIMIT: 'the program plans more host memory than this machine has',
  VERIFY_REFERENCE_STEPS: '--steps asks for more steps than the reference outputs file recorded',
  VERIFY_TOLERANCE: '--atol or --rtol is not a finite number of at least 0',
  VERIFY_CANNOT_RUN_HERE: 'the program cannot run on this machine for another reason the runner gave',
  FIXTURES_NONE: '`trtx fixtures --only` matches no catalogue file',
  FIXTURES_OUT: 'the fixtures folder cannot be used',
  CORPUS_BUILD_FAILED: 'ExecuTorch could not build the real-program corpus (`npm run corpus`)',
} as const;
