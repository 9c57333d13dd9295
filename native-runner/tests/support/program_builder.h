// ExecuTorch programs built in memory for the unit tests (program_builder.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace trtx::test {

// A program whose forward is out = x + w over float32[2], w the constant
// `key` with extra_tensor_info EXTERNAL (as ExecutorchBackendConfig(
// external_constants=True) emits it: no allocation_info, no data). With
// `named`, it also carries named data (key -> bytes, one segment each,
// appended after the flatbuffer; without an extended header segment offsets
// count from the file's start): the outer program's role.
// The named data starts at `base`. Past kInlineBaseLimit only the program
// part comes back, with ExecuTorch's extended header naming `base` as the
// segment base offset, and the caller writes each entry's bytes at base,
// then each next one at the previous end rounded up to 64 (a sparse file
// for offsets past 4 GiB). Empty when the flatbuffer outgrows `base`.
constexpr uint64_t kInlineBaseLimit = 1u << 20;
std::vector<uint8_t> add_constant_program(const std::string& key,
                                          const std::vector<std::pair<std::string, std::vector<uint8_t>>>& named = {},
                                          uint64_t base = 4096);

// A program whose method `method` (float32[2] x -> float32[2]) is one call
// of a TensorRTBackend delegate, `blob` inline (no compile specs): the shape
// trtx writes, built here for tests that run it through ExecuTorch.
std::vector<uint8_t> delegate_program(const std::string& method, const std::vector<uint8_t>& blob);

}  // namespace trtx::test
