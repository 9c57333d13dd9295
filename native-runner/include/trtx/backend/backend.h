// The delegate backend interface, ExecuTorch-shaped: a backend is registered
// under its id, init() turns a delegate's processed bytes and compile specs
// into a handle when the method loads, execute() runs it for one
// DelegateCall, destroy() releases it. drain() is the teardown step the
// caller-stream contract needs (wait for an enqueue whose sync was skipped).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trtx/backend/compile_specs.h"
#include "trtx/executor/evalue.h"
#include "trtx/program/program.h"
#include "trtx/runtime/device.h"
#include "trtx/runtime/result.h"
#include "trtx/runtime/scratch_provider.h"

namespace trtx::backend {

class DelegateHandle {
 public:
  virtual ~DelegateHandle() = default;
};

struct BackendInitContext {
  const runtime::DeviceContext* device = nullptr;  // the runner's target and device
  runtime::StreamRef load_stream;                  // caller stream, or null
  std::optional<uint64_t> budget_option;           // load-time weight_streaming_budget
  runtime::ScratchProviderFactory scratch_factory;
  std::string where;                               // "forward.delegates[0]"
};

struct BackendExecutionContext {
  const runtime::DeviceContext* device = nullptr;
  bool has_caller_stream = false;
  runtime::StreamRef caller_stream;
  runtime::CopyCounters* counters = nullptr;  // the method's traffic
  std::string where;                          // "forward.chains[0].instructions[3]"
};

/// How a budget was resolved for one engine (domain brief section 4).
struct BudgetResolution {
  std::string source = "automatic";  // option | spec | automatic
  std::optional<uint64_t> requested;
  std::optional<uint64_t> effective;
  bool clamped = false;
  std::string ignored;  // why a requested budget does not apply; empty if it does
  bool streaming = false;
  uint64_t streamable_bytes = 0;
};

BudgetResolution resolve_budget(std::optional<uint64_t> option, std::optional<uint64_t> spec, bool engine_streams,
                                uint64_t streamable_bytes);

/// Everything a report says about one delegate handle; counters are totals
/// since init.
struct DelegateInfo {
  std::string backend_id;
  std::string engine;        // reference-cpu | reference-cuda
  int target_device = 0;
  std::string elision;       // staged | zero-copy | none; empty before the first execute
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<std::string> aliased_outputs;
  std::optional<std::vector<std::string>> zero_copy_kv;
  BudgetResolution budget;
  uint64_t scratch_bytes = 0;     // last enqueue's need
  uint64_t scratch_capacity = 0;  // what its provider holds
  uint64_t executes = 0;
  uint64_t syncs_performed = 0;
  uint64_t syncs_skipped = 0;
  uint64_t waits = 0;   // executes that waited on the previous enqueue's event
  uint64_t drains = 0;  // teardowns that waited on an enqueue still in flight
  runtime::CopyCounters copies;  // staging and reflect traffic of this delegate
};

class BackendInterface {
 public:
  virtual ~BackendInterface() = default;
  virtual bool is_available() const = 0;
  virtual Result<std::unique_ptr<DelegateHandle>> init(BackendInitContext& ctx, const program::BlobSource& processed,
                                                       const std::vector<CompileSpecView>& specs) const = 0;
  virtual Status execute(BackendExecutionContext& ctx, DelegateHandle* handle,
                         const std::vector<executor::EValue*>& args) const = 0;
  /// Faults an earlier execute left on the device; valid once the stream it
  /// used is known complete (the caller synchronized it).
  virtual Status check_deferred(DelegateHandle* handle) const = 0;
  /// Teardown: waits for an enqueue still in flight, then check_deferred().
  virtual Status drain(DelegateHandle* handle) const = 0;
  virtual void destroy(std::unique_ptr<DelegateHandle> handle) const = 0;
  virtual DelegateInfo describe(const DelegateHandle* handle) const = 0;
};

/// Registers `backend` under `id`; false if the id is taken.
bool register_backend(const std::string& id, const BackendInterface* backend);
const BackendInterface* get_backend_class(std::string_view id);
std::vector<std::string> registered_backends();

/// Registers the backends this runner ships (TensorRTBackend). Idempotent.
void register_builtin_backends();

}  // namespace trtx::backend
