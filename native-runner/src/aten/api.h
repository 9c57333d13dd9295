// The table libtrtx_aten.so hands the runner (internal to native-runner):
// ATen's kernels live in a library of their own, linked against libtorch and
// loaded the first time an engine asks for them (src/engine/aten_loader.cpp),
// so a run without a reference engine's program never loads libtorch (0.3 s
// and 100 MB at every runner start otherwise). Same compiler, same headers on
// both sides: the table carries C++ function pointers.
#pragma once

#include "trtx/aten/aten_program.h"

namespace trtx::aten_kernels {

/// Bumped when the table or the types it passes change.
constexpr int kApiVersion = 1;

struct Api {
  int version = kApiVersion;
  Result<std::unique_ptr<Program>> (*load)(const uint8_t* pte, size_t size, const std::string& method,
                                           const runtime::DeviceContext& device, const ConstantResolver& constants,
                                           bool internal_weights_stream, const std::string& at) = nullptr;
};

}  // namespace trtx::aten_kernels

/// The library's one export.
extern "C" const trtx::aten_kernels::Api* trtx_aten_api();
