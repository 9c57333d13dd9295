// The runner's own validation of a program before ExecuTorch reads it
// (src/integration/program_validation.h), each shape met by one change to a sound
// program: the shapes on which ExecuTorch crashed (an op_index of -1 behind
// a sound call, a value index past the values, a list whose length field
// claims more than the buffer, a delegate without processed data) and the
// planned-memory cap. A validation removed makes its case fail: the sound
// program passes and each changed one must be refused.
#include "program_validation.h"

#include <cstring>
#include <string>
#include <vector>

#include "load_limits.h"
#include "program_generated.h"
#include "support/check.h"

namespace fb = trtx_pte;
using trtx::Error;
using trtx::integration::PlannedCap;

namespace {

// A sound program of one method, `forward`: x (planned, arena 1) ->
// aten::add.out(x, x, alpha, out) -> y twice, then a delegate call over x
// and y.
struct Spec {
  int32_t op_index = 0;  // of the first call; a sound one follows (ExecuTorch's delayed_error)
  int32_t arg = 0;
  int32_t src = 0;
  std::vector<int64_t> int_list = {2};
  std::vector<int32_t> tensor_list = {0, 1};
  std::string op_name = "aten::add";
  std::string overload = "out";
  uint32_t y_offset = 16;
  int64_t arena = 64;
  int32_t size = 4;
  bool processed = true;
  uint32_t processed_index = 0;
  bool name = true;
};

std::vector<uint8_t> build(const Spec& s) {
  flatbuffers::FlatBufferBuilder b;
  auto tensor = [&](uint32_t offset) {
    auto sizes = b.CreateVector(std::vector<int32_t>{s.size});
    auto dim_order = b.CreateVector(std::vector<uint8_t>{0});
    auto alloc = fb::CreateAllocationDetails(b, 1, offset, 0);
    auto t = fb::CreateTensor(b, fb::ScalarType::FLOAT, 0, sizes, dim_order, false, 0, alloc);
    return fb::CreateEValue(b, fb::KernelTypes::Tensor, t.Union());
  };
  std::vector<flatbuffers::Offset<fb::EValue>> values = {
      tensor(0),
      tensor(s.y_offset),
      fb::CreateEValue(b, fb::KernelTypes::Int, fb::CreateInt(b, 1).Union()),
      fb::CreateEValue(b, fb::KernelTypes::IntList, fb::CreateIntListDirect(b, &s.int_list).Union()),
      fb::CreateEValue(b, fb::KernelTypes::TensorList, fb::CreateTensorListDirect(b, &s.tensor_list).Union()),
  };
  auto values_v = b.CreateVector(values);
  auto kernel = [&](int32_t op, std::vector<int32_t> args) {
    auto call = fb::CreateKernelCallDirect(b, op, &args);
    return fb::CreateInstruction(b, fb::InstructionArguments::KernelCall, call.Union());
  };
  std::vector<int32_t> delegate_args = {0, 1};
  std::vector<flatbuffers::Offset<fb::Instruction>> instructions = {
      kernel(s.op_index, {s.arg, s.src, 2, 1, 1}),
      kernel(0, {0, 0, 2, 1, 1}),
      fb::CreateInstruction(b, fb::InstructionArguments::DelegateCall,
                            fb::CreateDelegateCallDirect(b, 0, &delegate_args).Union()),
  };
  std::vector<int32_t> chain_io = {0};
  auto chain = fb::CreateChainDirect(b, &chain_io, &chain_io, &instructions);
  auto chains = b.CreateVector(std::vector<flatbuffers::Offset<fb::Chain>>{chain});
  auto ops = b.CreateVector(std::vector<flatbuffers::Offset<fb::Operator>>{
      fb::CreateOperatorDirect(b, s.op_name.c_str(), s.overload.c_str())});
  auto processed = fb::CreateBackendDelegateDataReference(b, fb::DataLocation::INLINE, s.processed_index);
  auto delegate = fb::CreateBackendDelegate(b, b.CreateString("TensorRTBackend"), s.processed ? processed : 0);
  auto delegates = b.CreateVector(std::vector<flatbuffers::Offset<fb::BackendDelegate>>{delegate});
  auto sizes = b.CreateVector(std::vector<int64_t>{0, s.arena});
  std::vector<int32_t> io_in = {0};
  std::vector<int32_t> io_out = {1};
  auto plan = fb::CreateExecutionPlan(b, s.name ? b.CreateString("forward") : 0, 0, values_v, b.CreateVector(io_in),
                                      b.CreateVector(io_out), chains, ops, delegates, sizes);
  std::vector<uint8_t> blob(16, 0xAB);
  auto inline_data = fb::CreateBackendDelegateInlineDataDirect(b, &blob);
  auto program =
      fb::CreateProgram(b, 0, b.CreateVector(std::vector<flatbuffers::Offset<fb::ExecutionPlan>>{plan}), 0,
                        b.CreateVector(std::vector<flatbuffers::Offset<fb::BackendDelegateInlineData>>{inline_data}));
  fb::FinishProgramBuffer(b, program);
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

// ExecuTorch loads the program part at a 16-byte aligned address; so do these.
struct Aligned {
  explicit Aligned(const std::vector<uint8_t>& bytes) : storage(bytes.size() + 16) {
    auto at = reinterpret_cast<uintptr_t>(storage.data());
    data = storage.data() + ((16 - at % 16) % 16);
    std::memcpy(data, bytes.data(), bytes.size());
    size = bytes.size();
  }
  std::vector<uint8_t> storage;
  uint8_t* data;
  size_t size;
};

trtx::Status validate(const std::vector<uint8_t>& bytes, const PlannedCap& cap = {}) {
  Aligned a(bytes);
  return trtx::integration::validate_program(a.data, a.size, cap);
}

trtx::Status validate(const Spec& s, const PlannedCap& cap = {}) { return validate(build(s), cap); }

// The refusal names where and which trtx check code refuses the same file.
void check_refused(const trtx::Status& r, Error code, const std::string& location, const std::string& check_code) {
  CHECK_ERR(r, code);
  if (r.ok()) return;
  CHECK_EQ(r.failure().location, location);
  if (!check_code.empty()) CHECK(r.failure().message.find("trtx check: " + check_code) != std::string::npos);
}

}  // namespace

TEST(a_sound_program_passes) { CHECK_OK(validate(Spec{})); }

TEST(op_index_minus_one_behind_a_sound_call_is_refused) {
  Spec s;
  s.op_index = -1;
  check_refused(validate(s), Error::InvalidProgram, "forward > chain 0 > instruction 0 > op_index", "STRUCT_OP_INDEX");
  s.op_index = 1;  // one past the single operator
  check_refused(validate(s), Error::InvalidProgram, "forward > chain 0 > instruction 0 > op_index", "STRUCT_OP_INDEX");
}

TEST(a_value_index_past_the_values_is_refused) {
  Spec s;
  s.arg = 5;  // five values
  check_refused(validate(s), Error::InvalidProgram, "forward > chain 0 > instruction 0 > args[0]",
                "STRUCT_VALUE_INDEX");
  s.arg = -1;
  check_refused(validate(s), Error::InvalidProgram, "forward > chain 0 > instruction 0 > args[0]",
                "STRUCT_VALUE_INDEX");
}

TEST(list_items_are_value_indices_of_their_kind) {
  Spec s;
  s.int_list = {7};
  check_refused(validate(s), Error::InvalidProgram, "forward > value 3 > items[0]", "STRUCT_VALUE_INDEX");
  s = Spec{};
  s.int_list = {0};  // a Tensor where an Int is read: ExecuTorch's reported abort, when a kernel reads it
  CHECK_OK(validate(s));
  s = Spec{};
  s.tensor_list = {0, 2};  // an Int in a TensorList
  check_refused(validate(s), Error::InvalidProgram, "forward > value 4 > items[1]", "STRUCT_LIST_ITEM_TYPE");
}

TEST(a_list_length_past_the_buffer_is_refused_by_the_verifier) {
  std::vector<uint8_t> bytes = build(Spec{});
  Aligned a(bytes);
  const fb::Program* p = fb::GetProgram(a.data);
  const auto* items = p->execution_plan()->Get(0)->values()->Get(3)->val_as_IntList()->items();
  // A flatbuffers::Vector's address is its 32-bit length prefix.
  const size_t at = reinterpret_cast<const uint8_t*>(items) - a.data;
  for (uint32_t huge : {0x7fffffffu, 0xffffffffu, static_cast<uint32_t>(bytes.size())}) {
    std::vector<uint8_t> changed = bytes;
    std::memcpy(changed.data() + at, &huge, sizeof huge);
    check_refused(validate(changed), Error::InvalidProgram, "program", "PTE_FLATBUFFER");
  }
}

TEST(an_operator_name_the_runtime_cannot_resolve_is_refused) {
  Spec s;
  s.op_name = std::string(95, 'a');  // 95 + ".out" = 99 bytes: fits
  CHECK_OK(validate(s));
  s.op_name = std::string(96, 'a');  // 100 bytes: does not
  check_refused(validate(s), Error::InvalidProgram, "forward > operators[0]", "STRUCT_OPERATOR_NAME");
}

TEST(copy_ranges_that_partly_overlap_are_refused) {
  Spec s;
  s.op_name = "aten::copy_";
  s.overload = "";
  s.src = 1;              // copy_(self x, src y)
  CHECK_OK(validate(s));  // x at 0..16, y at 16..32
  s.y_offset = 0;         // onto itself: the kernel lets it through
  CHECK_OK(validate(s));
  s.y_offset = 8;  // 0..16 and 8..24: memcpy over overlapping ranges
  check_refused(validate(s), Error::InvalidProgram, "forward > chain 0 > instruction 0", "STRUCT_COPY_OVERLAP");
}

TEST(a_delegate_without_its_data_is_refused) {
  Spec s;
  s.processed = false;
  check_refused(validate(s), Error::InvalidProgram, "forward > delegates[0]", "PTE_DELEGATE_DATA");
  s = Spec{};
  s.processed_index = 1;  // one inline blob
  check_refused(validate(s), Error::InvalidProgram, "forward > delegates[0] > processed", "PTE_DELEGATE_DATA");
}

TEST(a_method_without_a_name_is_refused) {
  Spec s;
  s.name = false;
  check_refused(validate(s), Error::InvalidProgram, "execution_plan[0]", "STRUCT_MEMBER_MISSING");
}

TEST(tensor_sizes_as_validate_program_checks_them_in_every_mode) {
  Spec s;
  s.size = -1;
  check_refused(validate(s), Error::InvalidProgram, "forward > value 0 > sizes[0]", "STRUCT_TENSOR_SIZE");
}

TEST(planned_sizes_against_the_cap) {
  Spec s;
  s.arena = -8;
  check_refused(validate(s), Error::InvalidProgram, "forward > non_const_buffer_sizes[1]", "STRUCT_ARENA_SIZE");
  s.arena = int64_t(1) << 40;
  PlannedCap cap;
  cap.limit = uint64_t(1) << 30;
  check_refused(validate(s, cap), Error::PlannedMemoryLimit, "forward arena 1", "");
  // At the cap it passes; a method not chosen is not counted.
  cap.limit = uint64_t(1) << 40;
  CHECK_OK(validate(s, cap));
  cap.limit = 0;
  cap.methods = {"other"};
  CHECK_OK(validate(s, cap));
}

TEST(a_buffer_that_is_not_a_program_is_refused) {
  std::vector<uint8_t> bytes = build(Spec{});
  bytes[4] = 'X';  // the file identifier ET12
  check_refused(validate(bytes), Error::InvalidProgram, "program", "PTE_IDENTIFIER");
  std::vector<uint8_t> zero = build(Spec{});
  std::memset(zero.data(), 0, 4);  // a root offset of 0
  check_refused(validate(zero), Error::InvalidProgram, "program", "PTE_FLATBUFFER");
}

int main(int argc, char** argv) { return trtx::test::run_all(argc > 1 ? argv[1] : nullptr); }
