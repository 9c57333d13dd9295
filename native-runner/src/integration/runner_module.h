// ExecuTorch's Module, with the runner's one extra: Module keeps its loaded
// methods to itself, and the runner reads their outputs and buffers, so it
// reaches them the way a subclass may (methods_ is protected in
// extension/module/module.h).
#pragma once

#include <executorch/extension/module/module.h>

#include <string>

namespace trtx::integration {

class RunnerModule final : public executorch::extension::Module {
 public:
  using Module::Module;

  /// The method loaded under `name`, or null when it is not loaded.
  executorch::runtime::Method* loaded(const std::string& name) {
    auto it = methods_.find(name);
    return it == methods_.end() ? nullptr : it->second.method.get();
  }
};

}  // namespace trtx::integration
