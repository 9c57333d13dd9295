// ExecuTorch programs built in memory for the unit tests, with the runner's
// generated schema (generated/program_generated.h). A separate unit: the
// schema's flatbuffers headers (2.0.8) and ExecuTorch's program.h, which
// forward-declares a later flatbuffers::Vector, do not mix in one file.
#include "support/program_builder.h"

#include <cstring>

#include "flatbuffers/flatbuffers.h"
#include "program_generated.h"

namespace trtx::test {

namespace {

void put_u32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
void put_u64(uint8_t* p, uint64_t v) { std::memcpy(p, &v, 8); }

// ExecuTorch's extended header (schema/extended_header.h, written by
// exir/_serialize/_program.py _insert_flatbuffer_header): 32 bytes after the
// file identifier, "eh00", its length, the program's size, the segment base
// offset and the segments' size. Flatbuffer offsets are relative, so only
// the root offset moves.
std::vector<uint8_t> with_extended_header(std::vector<uint8_t> fb, uint64_t segment_base, uint64_t segment_size) {
  constexpr size_t kHeader = 32;
  std::vector<uint8_t> out(fb.size() + kHeader, 0);
  std::memcpy(out.data(), fb.data(), 8);
  std::memcpy(out.data() + 8 + kHeader, fb.data() + 8, fb.size() - 8);
  uint32_t root = 0;
  std::memcpy(&root, fb.data(), 4);
  put_u32(out.data(), root + kHeader);
  std::memcpy(out.data() + 8, "eh00", 4);
  put_u32(out.data() + 12, kHeader);
  put_u64(out.data() + 16, out.size());
  put_u64(out.data() + 24, segment_base);
  put_u64(out.data() + 32, segment_size);
  return out;
}

}  // namespace

std::vector<uint8_t> add_constant_program(const std::string& key,
                                          const std::vector<std::pair<std::string, std::vector<uint8_t>>>& named,
                                          uint64_t base) {
  namespace fb = trtx_pte;
  flatbuffers::FlatBufferBuilder b;
  auto planned = [&](uint32_t offset) {
    auto alloc = fb::CreateAllocationDetails(b, 1, offset, 0);
    auto t = fb::CreateTensor(b, fb::ScalarType::FLOAT, 0, b.CreateVector(std::vector<int32_t>{2}),
                              b.CreateVector(std::vector<uint8_t>{0}), false, 0, alloc);
    return fb::CreateEValue(b, fb::KernelTypes::Tensor, t.Union());
  };
  auto extra = fb::CreateExtraTensorInfo(b, 0, b.CreateString(key), fb::TensorDataLocation::EXTERNAL);
  auto w =
      fb::CreateTensor(b, fb::ScalarType::FLOAT, 0, b.CreateVector(std::vector<int32_t>{2}),
                       b.CreateVector(std::vector<uint8_t>{0}), false, 0, 0, 0, fb::TensorShapeDynamism::STATIC, extra);
  std::vector<flatbuffers::Offset<fb::EValue>> values = {
      planned(0), fb::CreateEValue(b, fb::KernelTypes::Tensor, w.Union()),
      fb::CreateEValue(b, fb::KernelTypes::Int, fb::CreateInt(b, 1).Union()), planned(16)};
  std::vector<int32_t> args = {0, 1, 2, 3, 3}, in = {0}, out = {3};
  std::vector<flatbuffers::Offset<fb::Instruction>> instructions = {
      fb::CreateInstruction(b, fb::InstructionArguments::KernelCall, fb::CreateKernelCallDirect(b, 0, &args).Union())};
  auto chain = fb::CreateChainDirect(b, &in, &out, &instructions);
  auto plan = fb::CreateExecutionPlan(
      b, b.CreateString("forward"), 0, b.CreateVector(values), b.CreateVector(in), b.CreateVector(out),
      b.CreateVector(std::vector<flatbuffers::Offset<fb::Chain>>{chain}),
      b.CreateVector(std::vector<flatbuffers::Offset<fb::Operator>>{fb::CreateOperatorDirect(b, "aten::add", "out")}),
      b.CreateVector(std::vector<flatbuffers::Offset<fb::BackendDelegate>>{}),
      b.CreateVector(std::vector<int64_t>{0, 32}));
  // The flatbuffer's size is known only once finished; a fixed base past it
  // (a few hundred bytes) keeps the segment offsets simple.
  const uint64_t kBase = base;
  const bool placed_by_caller = kBase > kInlineBaseLimit;
  std::vector<flatbuffers::Offset<fb::DataSegment>> segments;
  std::vector<flatbuffers::Offset<fb::NamedData>> named_data;
  uint64_t offset = placed_by_caller ? 0 : kBase;
  for (const auto& [k, bytes] : named) {
    named_data.push_back(fb::CreateNamedDataDirect(b, k.c_str(), static_cast<uint32_t>(segments.size())));
    segments.push_back(fb::CreateDataSegment(b, offset, bytes.size()));
    offset += (bytes.size() + 63) / 64 * 64;
  }
  std::vector<uint64_t> no_constants = {0};
  auto program = fb::CreateProgram(b, 0, b.CreateVector(std::vector<flatbuffers::Offset<fb::ExecutionPlan>>{plan}), 0,
                                   0, named.empty() ? 0 : b.CreateVector(segments),
                                   fb::CreateSubsegmentOffsetsDirect(b, 0, &no_constants), 0,
                                   named.empty() ? 0 : b.CreateVector(named_data));
  fb::FinishProgramBuffer(b, program);
  std::vector<uint8_t> file(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  if (named.empty()) return file;
  if (placed_by_caller) return with_extended_header(std::move(file), kBase, offset);
  if (file.size() > kBase) return {};
  file.resize(offset, 0);
  uint64_t at = kBase;
  for (const auto& [k, bytes] : named) {
    std::memcpy(file.data() + at, bytes.data(), bytes.size());
    at += (bytes.size() + 63) / 64 * 64;
  }
  return file;
}

std::vector<uint8_t> delegate_program(const std::string& method, const std::vector<uint8_t>& blob) {
  namespace fb = trtx_pte;
  flatbuffers::FlatBufferBuilder b;
  auto planned = [&](uint32_t offset) {
    auto alloc = fb::CreateAllocationDetails(b, 1, offset, 0);
    auto t = fb::CreateTensor(b, fb::ScalarType::FLOAT, 0, b.CreateVector(std::vector<int32_t>{2}),
                              b.CreateVector(std::vector<uint8_t>{0}), false, 0, alloc);
    return fb::CreateEValue(b, fb::KernelTypes::Tensor, t.Union());
  };
  std::vector<flatbuffers::Offset<fb::EValue>> values = {planned(0), planned(16)};
  std::vector<int32_t> args = {0, 1}, in = {0}, out = {1};
  std::vector<flatbuffers::Offset<fb::Instruction>> instructions = {fb::CreateInstruction(
      b, fb::InstructionArguments::DelegateCall, fb::CreateDelegateCallDirect(b, 0, &args).Union())};
  auto chain = fb::CreateChainDirect(b, &in, &out, &instructions);
  auto delegate = fb::CreateBackendDelegate(b, b.CreateString("TensorRTBackend"),
                                            fb::CreateBackendDelegateDataReference(b, fb::DataLocation::INLINE, 0),
                                            b.CreateVector(std::vector<flatbuffers::Offset<fb::CompileSpec>>{}));
  auto plan =
      fb::CreateExecutionPlan(b, b.CreateString(method), 0, b.CreateVector(values), b.CreateVector(in),
                              b.CreateVector(out), b.CreateVector(std::vector<flatbuffers::Offset<fb::Chain>>{chain}),
                              b.CreateVector(std::vector<flatbuffers::Offset<fb::Operator>>{}),
                              b.CreateVector(std::vector<flatbuffers::Offset<fb::BackendDelegate>>{delegate}),
                              b.CreateVector(std::vector<int64_t>{0, 32}));
  // The schema's force_align: 16 for inline delegate data.
  b.ForceVectorAlignment(blob.size(), sizeof(uint8_t), 16);
  auto data = fb::CreateBackendDelegateInlineData(b, b.CreateVector(blob));
  std::vector<uint64_t> no_constants = {0};
  auto program =
      fb::CreateProgram(b, 0, b.CreateVector(std::vector<flatbuffers::Offset<fb::ExecutionPlan>>{plan}), 0,
                        b.CreateVector(std::vector<flatbuffers::Offset<fb::BackendDelegateInlineData>>{data}), 0,
                        fb::CreateSubsegmentOffsetsDirect(b, 0, &no_constants));
  fb::FinishProgramBuffer(b, program);
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

}  // namespace trtx::test
