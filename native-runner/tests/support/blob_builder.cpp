#include "blob_builder.h"

#include <cstring>

#include "reference_engine_generated.h"

namespace trtx::test {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

std::vector<uint8_t> make_trt_blob(const std::string& magic, const std::string& metadata,
                                   const std::vector<uint8_t>& engine) {
  const uint32_t md_off = 32;
  const auto md_size = static_cast<uint32_t>(metadata.size());
  uint32_t engine_off = (md_off + md_size + 15) / 16 * 16;
  std::vector<uint8_t> blob(engine_off + engine.size(), 0);
  std::memcpy(blob.data(), magic.data(), 4);
  auto put32 = [&](size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) blob[at + i] = static_cast<uint8_t>(v >> (8 * i));
  };
  put32(4, md_off);
  put32(8, md_size);
  put32(12, engine_off);
  uint64_t es = engine.size();
  for (int i = 0; i < 8; ++i) blob[16 + i] = static_cast<uint8_t>(es >> (8 * i));
  blob[24] = 1;
  std::memcpy(blob.data() + md_off, metadata.data(), metadata.size());
  if (!engine.empty()) std::memcpy(blob.data() + engine_off, engine.data(), engine.size());
  return blob;
}

std::vector<uint8_t> build_standin_engine(const StandinEngineSpec& spec) {
  FlatBufferBuilder b;
  std::vector<Offset<trtx_ref::Step>> steps;
  for (const auto& s : spec.steps) {
    switch (s.kind) {
      case StandinStepSpec::Kind::Affine:
        steps.push_back(trtx_ref::CreateStep(b, trtx_ref::Op::Affine,
                                             trtx_ref::CreateAffine(b, s.a, s.b, s.scale, s.bias).Union()));
        break;
      case StandinStepSpec::Kind::KvWrite:
        steps.push_back(trtx_ref::CreateStep(b, trtx_ref::Op::KvWrite,
                                             trtx_ref::CreateKvWrite(b, s.a, s.b, s.c, s.seq_dim, s.salt).Union()));
        break;
      case StandinStepSpec::Kind::Attend:
        steps.push_back(trtx_ref::CreateStep(b, trtx_ref::Op::Attend,
                                             trtx_ref::CreateAttendDirect(b, &s.caches, s.a, s.b).Union()));
        break;
      case StandinStepSpec::Kind::RingShift:
        steps.push_back(
            trtx_ref::CreateStep(b, trtx_ref::Op::RingShift, trtx_ref::CreateRingShift(b, s.a, s.b, s.c).Union()));
        break;
    }
  }
  auto scratch = trtx_ref::CreateScratchNeed(b, spec.scratch_base, spec.scratch_per_unit, spec.scratch_unit_binding,
                                             spec.scratch_unit_dim);
  auto engine = trtx_ref::CreateEngineDirect(b, spec.version, &steps, scratch, spec.streamable, spec.streaming,
                                             spec.program.empty() ? nullptr : &spec.program);
  trtx_ref::FinishEngineBuffer(b, engine);
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

}  // namespace trtx::test
