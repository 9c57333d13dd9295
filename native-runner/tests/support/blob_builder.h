// Builds TensorRT blobs and reference engines in memory for the unit tests
// (the generated flatbuffers builder encodes the engine).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trtx::test {

/// A TensorRT blob: header, metadata JSON, engine at a 16-aligned offset.
std::vector<uint8_t> make_trt_blob(const std::string& magic, const std::string& metadata,
                                   const std::vector<uint8_t>& engine);

struct StandinStepSpec {
  enum class Kind { Affine, KvWrite, Attend, RingShift } kind = Kind::Affine;
  uint32_t a = 0, b = 0, c = 0;
  std::vector<uint32_t> caches;
  uint32_t seq_dim = 0;
  float scale = 1.0f, bias = 0.0f, salt = 0.5f;
};

struct StandinEngineSpec {
  uint32_t version = 1;
  std::vector<StandinStepSpec> steps;
  uint64_t scratch_base = 0, scratch_per_unit = 0;
  uint32_t scratch_unit_binding = 0, scratch_unit_dim = 0;
  uint64_t streamable = 0;
  bool streaming = false;
  std::vector<uint8_t> program;  // version 2: a whole .pte (absent when empty)
};

std::vector<uint8_t> build_standin_engine(const StandinEngineSpec& spec);

}  // namespace trtx::test
