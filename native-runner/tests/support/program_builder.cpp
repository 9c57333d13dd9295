#include "program_builder.h"

#include <cstring>

#include "program_generated.h"
#include "reference_engine_generated.h"

namespace trtx::test {

namespace fb = executorch_flatbuffer;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

namespace {

Offset<fb::EValue> build_value(FlatBufferBuilder& b, const ValueSpec& v) {
  switch (v.kind) {
    case ValueSpec::Kind::Null:
      return fb::CreateEValue(b, fb::KernelTypes::Null, fb::CreateNull(b).Union());
    case ValueSpec::Kind::Int:
      return fb::CreateEValue(b, fb::KernelTypes::Int, fb::CreateInt(b, v.i).Union());
    case ValueSpec::Kind::Bool:
      return fb::CreateEValue(b, fb::KernelTypes::Bool, fb::CreateBool(b, v.b).Union());
    case ValueSpec::Kind::Double:
      return fb::CreateEValue(b, fb::KernelTypes::Double, fb::CreateDouble(b, v.d).Union());
    case ValueSpec::Kind::Tensor: {
      const TensorSpec& t = v.tensor;
      std::vector<uint8_t> dim_order;
      for (size_t i = 0; i < t.sizes.size(); ++i) dim_order.push_back(static_cast<uint8_t>(i));
      Offset<fb::AllocationDetails> alloc = 0;
      if (t.alloc.has_value()) {
        alloc = fb::CreateAllocationDetails(b, t.alloc->first, static_cast<uint32_t>(t.alloc->second),
                                            static_cast<uint32_t>(t.alloc->second >> 32));
      }
      Offset<fb::ExtraTensorInfo> extra = 0;
      if (t.cuda || !t.fqn.empty()) {
        extra = fb::CreateExtraTensorInfoDirect(b, 0, t.fqn.empty() ? nullptr : t.fqn.c_str(),
                                                fb::TensorDataLocation::SEGMENT,
                                                t.cuda ? fb::DeviceType::CUDA : fb::DeviceType::CPU,
                                                static_cast<int8_t>(t.device_index));
      }
      auto tensor = fb::CreateTensorDirect(b, static_cast<fb::ScalarType>(t.dtype), 0, &t.sizes, &dim_order, false,
                                           t.data_buffer_idx, alloc, 0, fb::TensorShapeDynamism::STATIC, extra);
      return fb::CreateEValue(b, fb::KernelTypes::Tensor, tensor.Union());
    }
  }
  return 0;
}

Offset<fb::Instruction> build_instruction(FlatBufferBuilder& b, const InstrSpec& s) {
  switch (s.kind) {
    case InstrSpec::Kind::Kernel:
      return fb::CreateInstruction(b, fb::InstructionArguments::KernelCall,
                                   fb::CreateKernelCallDirect(b, s.index, &s.args).Union());
    case InstrSpec::Kind::Delegate:
      return fb::CreateInstruction(b, fb::InstructionArguments::DelegateCall,
                                   fb::CreateDelegateCallDirect(b, s.index, &s.args).Union());
    case InstrSpec::Kind::Move:
      return fb::CreateInstruction(b, fb::InstructionArguments::MoveCall, fb::CreateMoveCall(b, s.a, s.b).Union());
    case InstrSpec::Kind::JumpFalse:
      return fb::CreateInstruction(b, fb::InstructionArguments::JumpFalseCall,
                                   fb::CreateJumpFalseCall(b, s.a, s.b).Union());
    case InstrSpec::Kind::Free:
      return fb::CreateInstruction(b, fb::InstructionArguments::FreeCall, fb::CreateFreeCall(b, s.a).Union());
  }
  return 0;
}

}  // namespace

std::vector<uint8_t> build_program(const ProgramSpec& spec) {
  FlatBufferBuilder b;
  std::vector<Offset<fb::ExecutionPlan>> plans;
  for (const PlanSpec& p : spec.plans) {
    std::vector<Offset<fb::EValue>> values;
    for (const auto& v : p.values) values.push_back(build_value(b, v));
    std::vector<Offset<fb::Instruction>> instrs;
    for (const auto& i : p.instructions) instrs.push_back(build_instruction(b, i));
    std::vector<Offset<fb::Chain>> chains{fb::CreateChainDirect(b, nullptr, nullptr, &instrs)};
    std::vector<Offset<fb::Operator>> ops;
    for (const auto& o : p.operators) ops.push_back(fb::CreateOperatorDirect(b, o.first.c_str(), o.second.c_str()));
    std::vector<Offset<fb::BackendDelegate>> delegates;
    for (const auto& d : p.delegates) {
      std::vector<Offset<fb::CompileSpec>> specs;
      for (const auto& cs : d.compile_specs) {
        std::vector<uint8_t> value(cs.second.begin(), cs.second.end());
        specs.push_back(fb::CreateCompileSpecDirect(b, cs.first.c_str(), &value));
      }
      auto ref = fb::CreateBackendDelegateDataReference(b, fb::DataLocation::INLINE, d.inline_index);
      delegates.push_back(fb::CreateBackendDelegateDirect(b, d.id.c_str(), ref, &specs));
    }
    std::vector<Offset<fb::NonConstBufferDevice>> devices;
    for (int32_t a : p.cuda_arenas) devices.push_back(fb::CreateNonConstBufferDevice(b, a, fb::DeviceType::CUDA, 0));
    plans.push_back(fb::CreateExecutionPlanDirect(b, p.name.c_str(), 0, &values, &p.inputs, &p.outputs, &chains, &ops,
                                                  &delegates, &p.arena_sizes, devices.empty() ? nullptr : &devices));
  }
  std::vector<Offset<fb::Buffer>> constants;
  for (const auto& c : spec.constant_buffers) constants.push_back(fb::CreateBufferDirect(b, &c));
  std::vector<Offset<fb::BackendDelegateInlineData>> blobs;
  for (const auto& blob : spec.inline_blobs) blobs.push_back(fb::CreateBackendDelegateInlineDataDirect(b, &blob));
  auto program = fb::CreateProgramDirect(b, 0, &plans, &constants, &blobs);
  fb::FinishProgramBuffer(b, program);
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

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

std::vector<uint8_t> build_reference_engine(const RefEngineSpec& spec) {
  FlatBufferBuilder b;
  std::vector<Offset<trtx_ref::Step>> steps;
  for (const auto& s : spec.steps) {
    switch (s.kind) {
      case RefStepSpec::Kind::Affine:
        steps.push_back(trtx_ref::CreateStep(b, trtx_ref::Op::Affine,
                                             trtx_ref::CreateAffine(b, s.a, s.b, s.scale, s.bias).Union()));
        break;
      case RefStepSpec::Kind::KvWrite:
        steps.push_back(trtx_ref::CreateStep(b, trtx_ref::Op::KvWrite,
                                             trtx_ref::CreateKvWrite(b, s.a, s.b, s.c, s.seq_dim, s.salt).Union()));
        break;
      case RefStepSpec::Kind::Attend:
        steps.push_back(trtx_ref::CreateStep(b, trtx_ref::Op::Attend,
                                             trtx_ref::CreateAttendDirect(b, &s.caches, s.a, s.b).Union()));
        break;
      case RefStepSpec::Kind::RingShift:
        steps.push_back(trtx_ref::CreateStep(b, trtx_ref::Op::RingShift,
                                             trtx_ref::CreateRingShift(b, s.a, s.b, s.c).Union()));
        break;
    }
  }
  auto scratch = trtx_ref::CreateScratchNeed(b, spec.scratch_base, spec.scratch_per_unit, spec.scratch_unit_binding,
                                             spec.scratch_unit_dim);
  auto engine = trtx_ref::CreateEngineDirect(b, spec.version, &steps, scratch, spec.streamable, spec.streaming);
  trtx_ref::FinishEngineBuffer(b, engine);
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

ProgramSpec make_kv_program(const KvOptions& o) {
  const bool zc = o.zero_copy;
  auto host = [](ScalarType t, std::vector<int32_t> sizes, uint64_t off, std::string fqn = "") {
    TensorSpec s;
    s.dtype = t;
    s.sizes = std::move(sizes);
    s.alloc = std::make_pair(1u, off);
    s.fqn = std::move(fqn);
    return ValueSpec::of(s);
  };
  auto dev = [](ScalarType t, std::vector<int32_t> sizes, uint64_t off, std::string fqn = "") {
    TensorSpec s;
    s.dtype = t;
    s.sizes = std::move(sizes);
    s.alloc = std::make_pair(2u, off);
    s.cuda = true;
    s.fqn = std::move(fqn);
    return ValueSpec::of(s);
  };
  const ScalarType F = ScalarType::Float;
  PlanSpec p;
  p.arena_sizes = {0, 512, 640};
  p.cuda_arenas = {2};
  p.values = {
      host(ScalarType::Long, {1}, 0),                                     // 0 input_pos
      host(F, {1, 8}, 16),                                                // 1 x
      zc ? dev(F, {1, 4, 8}, 448, "k_cache") : host(F, {1, 4, 8}, 64, "k_cache"),  // 2 k_cache
      host(F, {1, 4}, 192, "conv_state"),                                 // 3 conv_state
      dev(ScalarType::Long, {1}, 0),                                      // 4 pos_d
      dev(F, {1, 8}, 16),                                                 // 5 x_d
      dev(F, {1, 4, 8}, 64),                                              // 6 k_d (staging)
      dev(F, {1, 4}, 192),                                                // 7 conv_d
      host(F, {1, 8}, 208),                                               // 8 logits
      host(F, {1, 4, 8}, 256),                                            // 9 k_out_h
      host(F, {1, 4}, 384),                                               // 10 conv_out_h
      dev(F, {1, 8}, 208),                                                // 11 logits_d
      dev(F, {1, 4, 8}, 256),                                             // 12 k_out_d
      dev(F, {1, 4}, 384),                                                // 13 conv_out_d
      ValueSpec::boolean(false),                                          // 14 non_blocking
  };
  p.inputs = {0, 1};
  p.outputs = {8};
  p.operators = {{"et_copy::_h2d_copy", "out"}, {"et_copy::_d2h_copy", "out"}, {"aten::copy_", ""}};
  std::vector<int32_t> dargs = zc ? std::vector<int32_t>{4, 5, 2, 7, 11, 13} : std::vector<int32_t>{4, 5, 6, 7, 11, 12, 13};
  for (int i = 0; i < o.drop_delegate_args && !dargs.empty(); ++i) dargs.pop_back();
  p.instructions.push_back(InstrSpec::kernel(0, {0, 4, 4}));
  p.instructions.push_back(InstrSpec::kernel(0, {1, 5, 5}));
  if (!zc) p.instructions.push_back(InstrSpec::kernel(0, {2, 6, 6}));
  p.instructions.push_back(InstrSpec::kernel(0, {3, 7, 7}));
  p.instructions.push_back(InstrSpec::delegate(0, dargs));
  p.instructions.push_back(InstrSpec::kernel(1, {11, 8, 8}));
  if (!zc) p.instructions.push_back(InstrSpec::kernel(1, {12, 9, 9}));
  p.instructions.push_back(InstrSpec::kernel(1, {13, 10, 10}));
  if (!zc) p.instructions.push_back(InstrSpec::kernel(2, {2, 9, 14, 2}));
  p.instructions.push_back(InstrSpec::kernel(2, {3, 10, 14, 3}));

  DelegateSpec d;
  d.compile_specs.push_back({"target_device", "cuda:0"});
  if (!o.budget_spec.empty()) d.compile_specs.push_back({"weight_streaming_budget", o.budget_spec});
  if (zc && o.stamp_spec) d.compile_specs.push_back({"zero_copy_kv", "[\"k_cache_out\"]"});
  p.delegates.push_back(d);

  RefEngineSpec e;
  RefStepSpec kv;
  kv.kind = RefStepSpec::Kind::KvWrite;
  kv.a = 2;
  kv.b = 0;
  kv.c = 1;
  kv.seq_dim = 1;
  RefStepSpec ring;
  ring.kind = RefStepSpec::Kind::RingShift;
  ring.a = 3;
  ring.b = 1;
  ring.c = 6;
  RefStepSpec attend;
  attend.kind = RefStepSpec::Kind::Attend;
  attend.caches = {2, 3};
  attend.a = 1;
  attend.b = 4;
  e.steps = {kv, ring, attend};
  e.scratch_base = 64;
  e.scratch_per_unit = 16;
  e.scratch_unit_binding = 2;
  e.scratch_unit_dim = 1;
  e.streamable = o.streamable;
  e.streaming = o.streaming;
  const std::string metadata =
      "{\"io_bindings\":["
      "{\"name\":\"input_pos\",\"dtype\":\"int64\",\"shape\":[1],\"is_input\":true},"
      "{\"name\":\"x\",\"dtype\":\"float32\",\"shape\":[1,8],\"is_input\":true},"
      "{\"name\":\"k_cache\",\"dtype\":\"float32\",\"shape\":[1,4,8],\"is_input\":true},"
      "{\"name\":\"conv_state\",\"dtype\":\"float32\",\"shape\":[1,4],\"is_input\":true},"
      "{\"name\":\"logits\",\"dtype\":\"float32\",\"shape\":[1,8],\"is_input\":false},"
      "{\"name\":\"k_cache_out\",\"dtype\":\"float32\",\"shape\":[1,4,8],\"is_input\":false},"
      "{\"name\":\"conv_out\",\"dtype\":\"float32\",\"shape\":[1,4],\"is_input\":false}],"
      "\"aliased_io\":[{\"output\":\"k_cache_out\",\"input\":\"k_cache\",\"kind\":\"kv_cache_update\"}],"
      "\"hardware_compatible\":false,\"device_id\":0,\"serialized_metadata\":\"\",\"target_platform\":\"linux\"}";
  ProgramSpec spec;
  spec.plans.push_back(p);
  spec.inline_blobs.push_back(make_trt_blob("TR02", metadata, build_reference_engine(e)));
  return spec;
}

}  // namespace trtx::test
