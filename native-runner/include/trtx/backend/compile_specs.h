// The compile specs the toolchain owns (docs/file-format.md), read as
// their upstream readers read them (docs/upstream-compatibility.md): a value
// that does not parse is an invalid program, never a silent default; a
// repeated budget is refused, as Torch-TensorRT refuses it; any other
// repeated key keeps its first value, as ExecuTorch does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trtx/runtime/result.h"

namespace trtx::backend {

struct CompileSpecView {
  std::string key;
  std::string_view value;  // raw bytes
};

/// Parses a byte budget as Torch-TensorRT does, by the digit rules of
/// trtx/runtime/byte_count.h: refused as CompileSpecInvalid at `where`, in
/// messages about the budget. Shared by the `weight_streaming_budget` spec,
/// the backend option and the runner's --budget option.
Result<uint64_t> parse_budget_bytes(std::string_view text, const std::string& where);

struct TrtCompileSpecs {
  std::optional<int> target_device;                      // N of a cuda target (unset for cpu)
  std::optional<uint64_t> budget;                        // weight_streaming_budget
  std::optional<std::vector<std::string>> zero_copy_kv;  // elided output names
};

/// Reads the three keys from a delegate's specs; other keys are ignored.
Result<TrtCompileSpecs> parse_trt_compile_specs(const std::vector<CompileSpecView>& specs, const std::string& where);

}  // namespace trtx::backend
