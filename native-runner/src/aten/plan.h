// The execution plan of a partition's program as ATen values (internal to
// src/aten/): what ExecuTorch's Method builds from the same flatbuffer
// (runtime/executor/method.cpp, parse_values / init), with at::Tensor in
// place of ExecuTorch's tensors. Includes ATen; never ExecuTorch.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trtx/aten/aten_program.h"

namespace trtx::aten_kernels {

/// A list value: its items are value indices, read when the list is used
/// (an IntList's items may be symbolic ints an earlier instruction set).
struct ListValue {
  enum class Kind { None, Int, Tensor, OptionalTensor } kind = Kind::None;
  std::vector<int32_t> items;
};

/// How an operator is run.
enum class OpKind {
  Dispatcher,  // ATen's own operator, through c10::Dispatcher
  View,        // executorch_prim::et_view: the output aliases the input
  CopyInto,    // dim_order_ops::_to_dim_order_copy / _clone_dim_order: out.copy_(self)
  EmptyInto,   // dim_order_ops::_empty_dim_order: the planned out as it is
  SymSize,     // aten::sym_size.int
  SymNumel,    // aten::sym_numel
  PrimScalar,  // executorch_prim::<op>.Scalar: int/double arithmetic
};

struct Op {
  std::string name;  // "aten::addmm.out"
  OpKind kind = OpKind::Dispatcher;
  std::optional<c10::OperatorHandle> handle;
  size_t num_arguments = 0;             // the schema's (Dispatcher)
  std::vector<bool> float_arguments;    // schema argument i is a float (an int value is widened)
  std::vector<bool> written_arguments;  // schema argument i is written (Tensor(a!): an out= argument)
  std::string prim;                     // PrimScalar: "add", "floordiv", ...
  bool index_put_out = false;           // aten::index_put.out: in place when out is self
};

struct Instruction {
  enum class Kind { Kernel, Move, JumpFalse, Free } kind = Kind::Kernel;
  int32_t op = 0;
  std::vector<int32_t> args;  // Kernel
  int32_t a = 0, b = 0;       // Move: from, to; JumpFalse: condition, destination
};

struct PlannedTensor {
  size_t value = 0;
  uint32_t arena = 0;  // memory_id (1-based, as ExecuTorch's)
  uint64_t offset = 0;
};

struct Plan {
  std::vector<c10::IValue> values;
  std::vector<ListValue> lists;  // per value; Kind::None for a non-list
  std::vector<Op> ops;
  std::vector<Instruction> instructions;
  std::vector<int32_t> inputs, outputs;
  std::vector<uint64_t> arena_bytes;  // index 0 unused (ExecuTorch reserves it)
  std::vector<PlannedTensor> planned;
  std::vector<ConstantRef> constants;
  // Per value: its dtype, sizes and strides from the plan (every tensor value).
  std::vector<at::ScalarType> dtype;
  std::vector<std::vector<int64_t>> sizes, strides;
  std::vector<bool> is_tensor;
};

/// Reads `method`'s plan. Tensors are left undefined: planned ones are made
/// over the arenas, constants by the weights, inputs per run.
Result<Plan> read_plan(const uint8_t* pte, size_t size, const std::string& method, const std::string& at);

/// Resolves every operator (Dispatcher or one this interpreter implements).
Status resolve_ops(Plan& plan, const std::string& at);

/// The IValue that goes on the stack for value `v`.
c10::IValue argument(const Plan& plan, const std::vector<c10::IValue>& values, int32_t v);

/// Runs one kernel instruction over `values`.
Status call(const Plan& plan, std::vector<c10::IValue>& values, const Instruction& ins, size_t pc,
            const std::string& at);

/// The values instruction `ins` writes: its out= arguments and what it returns.
std::vector<int32_t> written(const Plan& plan, const Instruction& ins);

/// at::Tensor over `data` with value `v`'s dtype, sizes and strides.
at::Tensor tensor_over(const Plan& plan, size_t v, void* data, const at::Device& device);

}  // namespace trtx::aten_kernels
