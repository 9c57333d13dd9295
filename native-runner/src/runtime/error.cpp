#include "trtx/runtime/error.h"

#include <cstring>

namespace trtx {

namespace {
struct NameEntry {
  Error code;
  const char* name;
};

#define TRTX_NAME(x) \
  { Error::x, #x }
constexpr NameEntry kNames[] = {
    TRTX_NAME(Ok),
    TRTX_NAME(Internal),
    TRTX_NAME(InvalidArgument),
    TRTX_NAME(InvalidState),
    TRTX_NAME(NotSupported),
    TRTX_NAME(NotFound),
    TRTX_NAME(MemoryAllocationFailed),
    TRTX_NAME(AccessFailed),
    TRTX_NAME(InvalidProgram),
    TRTX_NAME(InvalidType),
    TRTX_NAME(OperatorMissing),
    TRTX_NAME(DelegateInvalidCompatibility),
    TRTX_NAME(DelegateArity),
    TRTX_NAME(DelegateExecutionFailed),
    TRTX_NAME(CompileSpecInvalid),
    TRTX_NAME(EngineFormat),
    TRTX_NAME(EngineNotExecutable),
    TRTX_NAME(DeviceUnavailable),
    TRTX_NAME(CudaError),
    TRTX_NAME(DeviceInitialState),
    TRTX_NAME(BackendMissing),
    TRTX_NAME(ExecuTorchAbort),
    TRTX_NAME(DeviceMismatch),
    TRTX_NAME(PlannedMemoryLimit),
    TRTX_NAME(TRT_BLOB_TRUNCATED),
    TRTX_NAME(TRT_BLOB_MAGIC),
    TRTX_NAME(TRT_BLOB_METADATA_IN_HEADER),
    TRTX_NAME(TRT_BLOB_METADATA_EXTENT),
    TRTX_NAME(TRT_BLOB_ENGINE_EXTENT),
    TRTX_NAME(TRT_BLOB_OVERLAP),
    TRTX_NAME(TRT_BLOB_ENGINE_ALIGN),
    TRTX_NAME(TRT_BLOB_METADATA_JSON),
    TRTX_NAME(TRT_BINDING_NAME_EMPTY),
    TRTX_NAME(TRT_BINDING_NAME_NUL),
    TRTX_NAME(TRT_BINDING_DUPLICATE),
    TRTX_NAME(TRT_ALIAS_MISSING_SIDE),
    TRTX_NAME(TRT_ALIAS_UNKNOWN_BINDING),
    TRTX_NAME(TRT_ALIAS_DIRECTION),
    TRTX_NAME(TRT_ALIAS_DUPLICATE_OUTPUT),
    TRTX_NAME(TRT_ALIAS_DUPLICATE_INPUT),
    TRTX_NAME(TRT_ALIAS_KIND),
    TRTX_NAME(TRT_ALIAS_IN_TR01),
    TRTX_NAME(TRT_NAME_ESCAPED),
    TRTX_NAME(TRT_BLOB_KEY_ORDER),
    TRTX_NAME(TRT_BLOB_UPSTREAM_MISREAD),
};
#undef TRTX_NAME
}  // namespace

const char* error_name(Error e) {
  for (const auto& n : kNames) {
    if (n.code == e) return n.name;
  }
  return "Internal";
}

Error error_from_name(const std::string& name) {
  for (const auto& n : kNames) {
    if (name == n.name) return n.code;
  }
  return Error::Ok;
}

int error_exit_code(Error e) {
  switch (e) {
    case Error::Ok:
      return 0;
    // The program cannot run here: not a failed program, an environment result.
    case Error::EngineNotExecutable:
    case Error::DeviceUnavailable:
    case Error::BackendMissing:
    case Error::PlannedMemoryLimit:
    // A kernel the application's kernel libraries do not register (the
    // corpus's cortex_m operators): like a missing backend, the runtime's
    // build decides, not the program.
    case Error::OperatorMissing:
      return 3;
    default:
      return 1;
  }
}

}  // namespace trtx
