// Errors as values. Every failure the runner can report is one `Error` code
// with a stable name (the report's `code`), a location in the input it
// concerns and a one-line message. Nothing is thrown across a module
// boundary: functions return `Result<T>`, the ExecuTorch way.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

namespace trtx {

enum class Error : uint16_t {
  Ok = 0,
  // General runtime conditions (ExecuTorch's vocabulary).
  Internal,
  InvalidArgument,
  InvalidState,
  NotSupported,
  NotFound,
  MemoryAllocationFailed,
  AccessFailed,
  InvalidProgram,
  InvalidType,
  OperatorMissing,
  DelegateInvalidCompatibility,
  // Execution.
  DelegateArity,
  DelegateExecutionFailed,
  CompileSpecInvalid,
  EngineFormat,
  EngineNotExecutable,
  DeviceUnavailable,
  CudaError,
  // On the ExecuTorch runtime.
  DeviceInitialState,  // initial state of a buffer planned in device memory
  BackendMissing,      // a delegate's backend is not in this runner
  ExecuTorchAbort,     // the runtime stopped the process (ET_CHECK)
  DeviceMismatch,      // a delegate's devices disagree (target_device, device_id, argument memory)
  PlannedMemoryLimit,  // the planned arenas need more host memory than the run may use
  // The TensorRT delegate blob (docs/file-format.md). The names are shared
  // with the TypeScript codec and the test vectors: never rename one.
  TRT_BLOB_TRUNCATED,
  TRT_BLOB_MAGIC,
  TRT_BLOB_METADATA_IN_HEADER,
  TRT_BLOB_METADATA_EXTENT,
  TRT_BLOB_ENGINE_EXTENT,
  TRT_BLOB_OVERLAP,
  TRT_BLOB_ENGINE_ALIGN,
  TRT_BLOB_METADATA_JSON,
  TRT_BINDING_NAME_EMPTY,
  TRT_BINDING_NAME_NUL,
  TRT_BINDING_DUPLICATE,
  TRT_ALIAS_MISSING_SIDE,
  TRT_ALIAS_UNKNOWN_BINDING,
  TRT_ALIAS_DIRECTION,
  TRT_ALIAS_DUPLICATE_OUTPUT,
  TRT_ALIAS_DUPLICATE_INPUT,
  TRT_ALIAS_KIND,
  TRT_ALIAS_IN_TR01,
  // Metadata Torch-TensorRT's own parser would read differently from this one.
  TRT_NAME_ESCAPED,
  TRT_BLOB_KEY_ORDER,
  TRT_BLOB_UPSTREAM_MISREAD,
};

/// The stable name of a code, as written in reports ("TRT_BLOB_MAGIC").
const char* error_name(Error e);

/// Looks a name up; Error::Ok when unknown (Ok itself is never reported).
Error error_from_name(const std::string& name);

/// Process exit status for a run that stopped on this error:
/// 1 program invalid or execution failed, 3 the program cannot run here (a
/// TensorRT plan, a backend this runner lacks, no GPU for --device cuda).
/// Usage errors exit 2 before any run.
int error_exit_code(Error e);

struct Failure {
  Error code = Error::Internal;
  std::string location;
  std::string message;
};

inline Failure fail(Error code, std::string location, std::string message) {
  return Failure{code, std::move(location), std::move(message)};
}

}  // namespace trtx
