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
#include "trtx/aten/aten_program.h"
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
    "                  [--verification internal|minimal] [--loader mmap|file] [--report FILE]\n"
    "                  [--inputs FILE] [--outputs FILE] [--backend-lib PATH]\n"
    "                  [--engine-kernels aten|executorch] [--progress]\n"
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

using trtx::cli::DeviceChoice;
using trtx::cli::RunOptions;

// One word of two for a --flag a|b option: the value of the word given, or
// false when the value is neither (or missing: v is null at the end of argv).
template <typename T>
bool pick(const char* v, const char* a, T value_a, const char* b, T value_b, T& out) {
  if (v != nullptr && std::strcmp(v, a) == 0) {
    out = value_a;
  } else if (v != nullptr && std::strcmp(v, b) == 0) {
    out = value_b;
  } else {
    return false;
  }
  return true;
}

// The options of `run`. Each reads its value (null when argv ends before it)
// into the options and returns the usage message of a bad one, empty when good.
std::string read_method(RunOptions& o, const char* v) {
  if (v == nullptr || *v == '\0') return "--method needs a NAME";
  for (const auto& m : o.methods) {
    if (m == v) return std::string("--method ") + v + " given twice";
  }
  o.methods.emplace_back(v);
  return "";
}

std::string read_steps(RunOptions& o, const char* v) {
  if (v == nullptr) return "--steps needs N";
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  if (*v == '\0' || *end != '\0' || n < 1 || n > 1000000) return "--steps takes an integer from 1 to 1000000";
  o.steps = static_cast<int>(n);
  return "";
}

std::string read_caller_stream(RunOptions& o, const char* v) {
  return pick(v, "on", true, "off", false, o.caller_stream) ? "" : "--caller-stream takes on or off";
}

std::string read_budget(RunOptions& o, const char* v) {
  if (v == nullptr) return "--budget needs BYTES";
  auto b = trtx::backend::parse_budget_bytes(v, "--budget");
  if (!b.ok()) return "--budget: " + b.failure().message;
  o.budget = b.get();
  return "";
}

std::string read_device(RunOptions& o, const char* v) {
  return pick(v, "cpu", DeviceChoice::Cpu, "cuda", DeviceChoice::Cuda, o.device) ? "" : "--device takes cpu or cuda";
}

std::string read_arena_fill(RunOptions& o, const char* v) {
  using trtx::et::ArenaFill;
  return pick(v, "poison", ArenaFill::Poison, "none", ArenaFill::None, o.arena_fill)
             ? ""
             : "--arena-fill takes poison or none";
}

std::string read_trt_runtime(RunOptions& o, const char* v) {
  using trtx::backend::TrtContract;
  return pick(v, "zero-copy", TrtContract::ZeroCopy, "stock", TrtContract::Stock, o.contract)
             ? ""
             : "--trt-runtime takes zero-copy or stock";
}

std::string read_verification(RunOptions& o, const char* v) {
  return pick(v, "internal", false, "minimal", true, o.minimal_verification)
             ? ""
             : "--verification takes internal or minimal";
}

std::string read_engine_kernels(RunOptions& o, const char* v) {
  bool aten = false;
  if (!pick(v, "aten", true, "executorch", false, aten)) return "--engine-kernels takes aten or executorch";
  if (aten && !trtx::aten_kernels::built()) return "--engine-kernels aten: this trtx-runner was built without libtorch";
  o.aten_kernels = aten;
  return "";
}

std::string read_loader(RunOptions& o, const char* v) {
  return pick(v, "mmap", false, "file", true, o.file_loader) ? "" : "--loader takes mmap or file";
}

std::string read_max_planned_bytes(RunOptions& o, const char* v) {
  if (v == nullptr) return "--max-planned-bytes needs BYTES";
  auto b = trtx::parse_byte_count_option(v, "--max-planned-bytes");
  if (!b.ok()) return b.failure().message;
  o.max_planned_bytes = b.get();
  return "";
}

// A non-empty path; `usage` names the option and what it takes.
std::string read_path(std::string& out, const char* v, const char* usage) {
  if (v == nullptr || *v == '\0') return usage;
  out = v;
  return "";
}

struct Option {
  const char* name;
  bool takes_value;
  std::string (*read)(RunOptions& o, const char* v);
};

const Option kOptions[] = {
    {"--method", true, read_method},
    {"--steps", true, read_steps},
    {"--caller-stream", true, read_caller_stream},
    {"--budget", true, read_budget},
    {"--fresh-state", false,
     [](RunOptions& o, const char*) {
       o.fresh_state = true;
       return std::string();
     }},
    {"--cold-pool", false,
     [](RunOptions& o, const char*) {
       o.cold_pool = true;
       return std::string();
     }},
    {"--shared-scratch", false,
     [](RunOptions& o, const char*) {
       o.shared_scratch = true;
       return std::string();
     }},
    {"--device", true, read_device},
    {"--arena-fill", true, read_arena_fill},
    {"--init-device-buffers", false,
     [](RunOptions& o, const char*) {
       o.init_device_buffers = true;
       return std::string();
     }},
    {"--share-arenas", false,
     [](RunOptions& o, const char*) {
       o.share_arenas = true;
       return std::string();
     }},
    {"--trt-runtime", true, read_trt_runtime},
    {"--verification", true, read_verification},
    {"--max-planned-bytes", true, read_max_planned_bytes},
    {"--loader", true, read_loader},
    {"--engine-kernels", true, read_engine_kernels},
    {"--progress", false,
     [](RunOptions& o, const char*) {
       o.progress = true;
       return std::string();
     }},
    {"--report", true, [](RunOptions& o, const char* v) { return read_path(o.report_path, v, "--report needs FILE"); }},
    {"--backend-lib", true,
     [](RunOptions& o, const char* v) { return read_path(o.backend_lib, v, "--backend-lib needs PATH"); }},
    {"--inputs", true, [](RunOptions& o, const char* v) { return read_path(o.inputs_path, v, "--inputs needs FILE"); }},
    {"--outputs", true,
     [](RunOptions& o, const char* v) { return read_path(o.outputs_path, v, "--outputs needs FILE"); }},
};

// `run PROGRAM [options]`: the options from the table, one PROGRAM.
int run_subcommand(int argc, char** argv) {
  RunOptions o;
  bool have_program = false;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    const Option* option = nullptr;
    for (const Option& candidate : kOptions) {
      if (a == candidate.name) option = &candidate;
    }
    if (option != nullptr) {
      const char* v = option->takes_value && i + 1 < argc ? argv[++i] : nullptr;
      std::string bad = option->read(o, v);
      if (!bad.empty()) return usage(bad);
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

int run_main(int argc, char** argv) {
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
  return run_subcommand(argc, argv);
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
