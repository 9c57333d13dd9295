// Operator kernels the runner executes for KernelCall instructions, looked
// up by "namespace::name.overload" when a method loads. The set is what the
// TensorRT path needs (the device copies PropagateDevicePass inserts and the
// buffer write-back) plus float add/mul so the ExecuTorch corpus runs.
#pragma once

#include <string>
#include <vector>

#include "trtx/executor/evalue.h"
#include "trtx/runtime/device.h"
#include "trtx/runtime/result.h"

namespace trtx::executor {

struct KernelContext {
  const runtime::DeviceContext* device = nullptr;
  runtime::StreamRef stream;  // the caller stream, or null (synchronous copies)
  runtime::CopyCounters* counters = nullptr;
  std::string where;           // "forward.chains[0].instructions[3] (aten::add.out)"
};

using KernelFn = Status (*)(KernelContext& ctx, const std::vector<EValue*>& args);

/// The kernel registered for an operator, or nullptr.
KernelFn find_kernel(const std::string& op);

/// Every operator the runner has a kernel for.
std::vector<std::string> kernel_names();

}  // namespace trtx::executor
