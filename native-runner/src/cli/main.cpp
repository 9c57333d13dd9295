// trtx-runner: runs an ExecuTorch program with TensorRT delegates on the
// ExecuTorch runtime, under the delegate runtime contract, and writes a JSON
// report. See README.md.
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "blob_vectors.h"
#include "run_command.h"
#include "trtx/backend/compile_specs.h"
#include "trtx/runtime/byte_count.h"
#include "version.h"

namespace {

const char kUsage[] =
    "usage:\n"
    "  trtx-runner run PROGRAM.pte [--method NAME ...] [--steps N] [--caller-stream on|off]\n"
    "                  [--budget BYTES] [--fresh-state] [--cold-pool] [--shared-scratch]\n"
    "                  [--device cpu|cuda] [--arena-fill poison|none] [--init-device-buffers]\n"
    "                  [--share-arenas] [--trt-runtime zero-copy|stock] [--max-planned-bytes BYTES]\n"
    "                  [--verification internal|minimal] [--report FILE]\n"
    "                  [--inputs FILE] [--outputs FILE] [--backend-lib PATH]\n"
    "  trtx-runner parse-blob-vectors FILE\n"
    "  trtx-runner --version\n"
    "  --inputs FILE: recorded step inputs (TRXT) instead of the pattern; --outputs FILE:\n"
    "  every output of every executed step (TRXT; docs/reference-lowering.md section 3)\n"
    "  --backend-lib PATH: a library that registers TensorRTBackend, used instead of the\n"
    "  runner's own (docs/backend-plugin.md)\n"
    "exit codes: 0 ok, 1 program invalid or execution failed, 2 usage (also a bad --inputs\n"
    "            file or a recorded input the method does not take, or a --backend-lib\n"
    "            that is missing, does not load, is built against another ExecuTorch or\n"
    "            registers no TensorRTBackend),\n"
    "            3 the program cannot run here (a TensorRT plan, a backend this runner lacks,\n"
    "              --device cuda without a GPU)\n";

int usage(const std::string& msg) {
  if (!msg.empty()) std::fprintf(stderr, "trtx-runner: %s\n", msg.c_str());
  std::fputs(kUsage, stderr);
  return 2;
}

int run_main(int argc, char** argv) {
  using trtx::cli::DeviceChoice;
  if (argc < 2) return usage("");
  std::string cmd = argv[1];
  if (cmd == "--version") {
    std::printf("trtx-runner %s (ExecuTorch %s)\n", trtx::cli::kRunnerVersion, trtx::cli::kExecutorchVersion);
    return 0;
  }
  if (cmd == "--help" || cmd == "-h") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (cmd == "parse-blob-vectors") {
    if (argc != 3) return usage("parse-blob-vectors takes one FILE");
    return trtx::cli::parse_blob_vectors_command(argv[2]);
  }
  if (cmd != "run") return usage("unknown command '" + cmd + "'");

  trtx::cli::RunOptions o;
  bool have_program = false;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&](const char* flag) -> const char* {
      if (i + 1 >= argc) return nullptr;
      (void)flag;
      return argv[++i];
    };
    if (a == "--method") {
      const char* v = next("--method");
      if (v == nullptr || *v == '\0') return usage("--method needs a NAME");
      for (const auto& m : o.methods) {
        if (m == v) return usage(std::string("--method ") + v + " given twice");
      }
      o.methods.emplace_back(v);
    } else if (a == "--steps") {
      const char* v = next("--steps");
      if (v == nullptr) return usage("--steps needs N");
      char* end = nullptr;
      long n = std::strtol(v, &end, 10);
      if (*v == '\0' || *end != '\0' || n < 1 || n > 1000000)
        return usage("--steps takes an integer from 1 to 1000000");
      o.steps = static_cast<int>(n);
    } else if (a == "--caller-stream") {
      const char* v = next("--caller-stream");
      if (v == nullptr || (std::strcmp(v, "on") != 0 && std::strcmp(v, "off") != 0)) {
        return usage("--caller-stream takes on or off");
      }
      o.caller_stream = std::strcmp(v, "on") == 0;
    } else if (a == "--budget") {
      const char* v = next("--budget");
      if (v == nullptr) return usage("--budget needs BYTES");
      auto b = trtx::backend::parse_budget_bytes(v, "--budget");
      if (!b.ok()) return usage("--budget: " + b.failure().message);
      o.budget = b.get();
    } else if (a == "--fresh-state") {
      o.fresh_state = true;
    } else if (a == "--cold-pool") {
      o.cold_pool = true;
    } else if (a == "--shared-scratch") {
      o.shared_scratch = true;
    } else if (a == "--device") {
      const char* v = next("--device");
      if (v != nullptr && std::strcmp(v, "cpu") == 0) {
        o.device = DeviceChoice::Cpu;
      } else if (v != nullptr && std::strcmp(v, "cuda") == 0) {
        o.device = DeviceChoice::Cuda;
      } else {
        return usage("--device takes cpu or cuda");
      }
    } else if (a == "--arena-fill") {
      const char* v = next("--arena-fill");
      if (v != nullptr && std::strcmp(v, "poison") == 0) {
        o.arena_fill = trtx::et::ArenaFill::Poison;
      } else if (v != nullptr && std::strcmp(v, "none") == 0) {
        o.arena_fill = trtx::et::ArenaFill::None;
      } else {
        return usage("--arena-fill takes poison or none");
      }
    } else if (a == "--init-device-buffers") {
      o.init_device_buffers = true;
    } else if (a == "--share-arenas") {
      o.share_arenas = true;
    } else if (a == "--trt-runtime") {
      const char* v = next("--trt-runtime");
      if (v != nullptr && std::strcmp(v, "zero-copy") == 0) {
        o.contract = trtx::backend::TrtContract::ZeroCopy;
      } else if (v != nullptr && std::strcmp(v, "stock") == 0) {
        o.contract = trtx::backend::TrtContract::Stock;
      } else {
        return usage("--trt-runtime takes zero-copy or stock");
      }
    } else if (a == "--verification") {
      const char* v = next("--verification");
      if (v != nullptr && std::strcmp(v, "internal") == 0) {
        o.minimal_verification = false;
      } else if (v != nullptr && std::strcmp(v, "minimal") == 0) {
        o.minimal_verification = true;
      } else {
        return usage("--verification takes internal or minimal");
      }
    } else if (a == "--max-planned-bytes") {
      const char* v = next("--max-planned-bytes");
      if (v == nullptr) return usage("--max-planned-bytes needs BYTES");
      auto b = trtx::parse_byte_count_option(v, "--max-planned-bytes");
      if (!b.ok()) return usage(b.failure().message);
      o.max_planned_bytes = b.get();
    } else if (a == "--report") {
      const char* v = next("--report");
      if (v == nullptr || *v == '\0') return usage("--report needs FILE");
      o.report_path = v;
    } else if (a == "--backend-lib") {
      const char* v = next("--backend-lib");
      if (v == nullptr || *v == '\0') return usage("--backend-lib needs PATH");
      o.backend_lib = v;
    } else if (a == "--inputs" || a == "--outputs") {
      const char* v = next(a.c_str());
      if (v == nullptr || *v == '\0') return usage(a + " needs FILE");
      (a == "--inputs" ? o.inputs_path : o.outputs_path) = v;
    } else if (!a.empty() && a[0] == '-') {
      return usage("unknown option '" + a + "'");
    } else if (!have_program) {
      o.program = a;
      have_program = true;
    } else {
      return usage("more than one PROGRAM given");
    }
  }
  if (!have_program) return usage("run needs PROGRAM.pte");
  return trtx::cli::run_command(o);
}

}  // namespace

int main(int argc, char** argv) {
  // Errors are values throughout; an allocation failure inside the standard
  // library is the one exception that can reach here.
  try {
    return run_main(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "MemoryAllocationFailed: trtx-runner: out of host memory\n");
    return 1;
  }
}
