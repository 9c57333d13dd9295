// Codes of what trtx runs besides itself: the Python bridge, its managed
// Python environment and the native runner. BRIDGE_ERROR_TYPES names codes
// written outside TypeScript (python-bridge: the `type` of an error event,
// reported as BRIDGE_<TYPE>), and test/codes.test.ts reads those sources. The
// runner's report codes are runner-report.ts's, which its C++ is generated from.

/** The bridge as trtx drives it (src/bridge/): starting, talking to and stopping the subprocess. */
export const BRIDGE_CODES = {
  BRIDGE_PYTHON_NOT_FOUND: 'the Python interpreter to run the bridge does not exist',
  BRIDGE_PYTHON_INVALID: '--python names no interpreter (an empty path)',
  BRIDGE_SPAWN: 'starting the Python interpreter failed',
  BRIDGE_REQUEST: 'the request trtx would send the bridge is invalid',
  BRIDGE_PROTOCOL: 'the bridge wrote something that is not an event of its protocol, or the wrong result',
  BRIDGE_DIED: 'the bridge exited without a result or an error',
  BRIDGE_TIMEOUT: 'the bridge did not finish within --timeout and was stopped',
  BRIDGE_CANCELLED: 'the run was cancelled (Ctrl-C); the bridge and its children were stopped',
} as const;

/** The `type` of a bridge error event (python-bridge/trtx_bridge/errors.py BridgeError), reported as BRIDGE_<TYPE>. */
export const BRIDGE_ERROR_TYPES = {
  REQUEST: 'the bridge refused the request',
  PROTOCOL_VERSION: 'trtx and its python-bridge speak different protocol versions',
  PYTHON_VERSION: 'the Python is too old for the bridge',
  IMPORT_MISSING: 'the Python lacks a package the export needs (torch, executorch, torch_tensorrt)',
  IMPORT_FAILED: 'the packages are installed but importing them failed (mismatched versions)',
  TORCH_TENSORRT_TOO_OLD: 'the installed Torch-TensorRT has no ExecuTorch export',
  MODEL_NOT_FOUND: 'the model file does not exist',
  MODEL_FORMAT: 'the model file is not a kind the bridge loads',
  MODEL_LOAD: 'loading the model failed (an archive saved by a newer torch, say)',
  MODEL_NO_INPUTS: 'the model carries no example inputs to export with',
  PICKLE_REFUSED: 'the model is a pickle, which runs code when loaded, and --allow-pickle was not given',
  TORCHSCRIPT: 'the model is a TorchScript archive, which cannot be exported to ExecuTorch',
  FACTORY: 'the factory file:function is missing, fails, or returns something other than a model and its inputs',
  METHOD: 'the methods asked for do not match the model',
  TRACE: 'torch.export.export failed on a method',
  COMPILE: 'Torch-TensorRT could not compile a method',
  LOWER: 'lowering to ExecuTorch failed',
  ORDER_MUTATIONS: 'the mutations of a method cannot be ordered (its graph and signature disagree)',
  FINALIZE: 'ExecuTorch\u2019s to_executorch failed',
  ZERO_COPY_CHECK: 'the finalized program fails Torch-TensorRT\u2019s zero-copy check',
  WRITE: 'writing the program failed',
  INTERNAL: 'a bug in the bridge or an unexpected library failure',
} as const;

export type BridgeErrorType = keyof typeof BRIDGE_ERROR_TYPES;

/** Every BRIDGE_<TYPE> code, with the meaning of its type. */
export const BRIDGE_TYPE_CODES = Object.fromEntries(Object.entries(BRIDGE_ERROR_TYPES).map(([t, m]) => [`BRIDGE_${t}`, m])) as {
  readonly [T in BridgeErrorType as `BRIDGE_${T}`]: string;
};

/** The `code` of a bridge warning event: not a refusal, listed in `trtx export`'s warnings. */
export const BRIDGE_WARNING_CODES = {
  ZERO_COPY_STAGED: 'this Torch-TensorRT has no zero-copy KV export: the program is exported staged and trtx un-stages it',
  ZERO_COPY_UNCHECKED: 'this Torch-TensorRT has no zero-copy check; trtx check still verifies the written program',
  BUDGET_NOT_BAKED: 'this Torch-TensorRT cannot bake a weight-streaming budget at export; trtx sets it afterwards',
  LINEAGE_FALLBACK: 'ExecuTorch\u2019s in-place lineage is not importable; copy-back ordering used trtx\u2019s stand-in',
  MUTATION_ORDER: 'a mutation of a method could not be put in the order the write-back pass needs',
  MUTATION_MAP: 'the finalized mutation map is crossed',
  REFERENCE_OPTION_IGNORED: 'a compile option means nothing to the reference lowering and is ignored',
  REFERENCE_EAGER_FAILED:
    'the exported model does not run eagerly on the reference inputs: the program is written without OUT.reference.json',
} as const;

/** trtx's managed Python environment (src/pyenv/). */
export const PYENV_CODES = {
  PYENV_LOCK_MISSING: 'the Python lock file is not part of this installation',
  PYENV_LOCK_INVALID: 'a line of the lock file is not an exact pin',
  PYENV_BOOTSTRAP_MISSING: 'there is no Python to make the environment from',
  PYENV_BOOTSTRAP_VERSION: 'the Python to make the environment from is not one ExecuTorch publishes wheels for (3.10-3.14)',
  PYENV_CREATE_FAILED: 'python -m venv failed',
  PYENV_INSTALL_FAILED: 'pip could not install the locked packages',
  PYENV_PYTHON_NOT_FOUND: 'the named interpreter does not exist',
  PYENV_PYTHON_BROKEN: 'the interpreter did not answer the probe',
} as const;

/** The ExecuTorch C++ SDK the native runner is built against (src/sdk/): the pinned executorch wheel, unpacked. */
export const SDK_CODES = {
  SDK_PIN_INVALID: 'python-bridge/executorch-sdk.json is missing or does not pin a wheel per platform',
  SDK_PLATFORM_UNSUPPORTED: 'executorch publishes no C++ SDK for this operating system and processor',
  SDK_DOWNLOAD_FAILED: 'the pinned executorch wheel could not be downloaded (or TRTX_EXECUTORCH_WHEEL read)',
  SDK_HASH_MISMATCH: 'the downloaded (or named) wheel is not the pinned one: its sha256 differs',
  SDK_WHEEL_INVALID: 'the wheel is not a ZIP archive trtx reads, or holds no C++ SDK',
} as const;

/** Building and running the native runner (src/runner/). */
export const RUNNER_CODES = {
  RUNNER_SOURCES_MISSING: 'the native runner sources are not part of this installation',
  RUNNER_TOOLCHAIN: 'CMake or a C++ compiler is missing',
  RUNNER_BUILD_FAILED: 'configuring or compiling the native runner failed',
  RUNNER_MISSING: 'the prebuilt runner TRTX_RUNNER_BIN names does not exist',
  RUNNER_USAGE: 'the runner refused its command line, or TRTX_RUNNER_CUDA has an unknown value',
  RUNNER_CRASHED: 'the runner died on a signal',
  RUNNER_INTERRUPTED: 'the runner timed out or was cancelled',
  RUNNER_NO_REPORT: 'the runner exited without writing its report',
  RUNNER_REPORT_INVALID: 'the runner\u2019s report is not JSON of its schema, or disagrees with its exit status',
  RUNNER_BACKEND_LIB_MISSING: '--backend-lib (or TRTX_BACKEND_LIB) names no file',
  RUNNER_BACKEND_LIB_LOAD:
    'the backend library does not load (dlopen refused it: not a shared library, a missing dependency, an unresolved symbol)',
  RUNNER_BACKEND_LIB_ABI:
    'the backend library does not export trtx_backend_abi(), or was built against another ExecuTorch than the runner (trtx env prints the runner\u2019s)',
  RUNNER_BACKEND_LIB_EMPTY:
    'the backend library registered no TensorRTBackend with the runner\u2019s ExecuTorch (a static copy of the runtime registers into its own)',
} as const;
