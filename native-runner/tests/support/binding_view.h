// An engine binding over caller memory, as the delegate binds one for an
// enqueue (tests of the reference engines, synthetic and program).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trtx/engine/engine_executor.h"

namespace trtx::test {

inline engine::BindingView binding_view(const std::string& name, bool in, void* data, ScalarType t,
                                        std::vector<int64_t> sizes) {
  engine::BindingView v;
  v.name = name;
  v.is_input = in;
  v.data = data;
  v.dtype = t;
  v.sizes = sizes;
  v.numel = 1;
  for (auto s : sizes) v.numel *= static_cast<uint64_t>(s);
  v.nbytes = v.numel * trtx::element_size(t);
  return v;
}

}  // namespace trtx::test
