// What one program may cost the runner before ExecuTorch allocates it
// (internal). ExecuTorch itself bounds neither: Program::load reads the whole
// program part the header names into one buffer (runtime/executor/program.cpp,
// through FileDataLoader; MmapDataLoader maps it), and Module::load_method allocates every planned
// arena of a method as one zero-filled std::vector<uint8_t> per CPU arena
// (extension/module/module.cpp make_planned_memory_with_devices), so a
// program of a few kilobytes that names a 1 TiB arena makes the process touch
// memory until the kernel kills it (or, under AddressSanitizer, abort in
// operator new). The runner checks both before the runtime does the work:
//   - the program part: at most FLATBUFFERS_MAX_BUFFER_SIZE (2^31 - 1) bytes,
//     the largest a FlatBuffer can be (trtx check: PTE_PROGRAM_SIZE);
//     InvalidProgram, nothing read;
//   - the planned arenas of the chosen methods held in host memory (every
//     arena on the CPU stand-in, where device arenas are host memory too):
//     at most --max-planned-bytes, by default the machine's physical memory;
//     PlannedMemoryLimit (exit 3: the program cannot run here), nothing
//     allocated. Read from the program part the runner has verified itself
//     (program_validation.h), before ExecuTorch parses it: MethodMeta would
//     follow unverified offsets under Verification::Minimal.
// On a GPU a device arena larger than the device is the allocator's refusal
// (ExecuTorch then aborts at method load: ExecuTorchAbort, reported).
// Segments are not limited here: delegate blobs, the constant segment and
// named data (a version-3 engine's weights, entries of a gigabyte in a
// program of several) are as large as the file, u64 offsets and sizes
// checked against the file's size by the data loader
// (extension/data_loader/mmap_data_loader.h validate_input), mapped rather
// than read by default (guarded_loader.h); a version-3 engine refuses an
// entry that is not exactly its tensor's size (src/engine/external_weights.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trtx/runtime/device.h"
#include "trtx/runtime/result.h"

namespace trtx_pte {
struct Program;
}

namespace trtx::integration {

/// flatbuffers/base.h FLATBUFFERS_MAX_BUFFER_SIZE: offsets are 32-bit signed.
constexpr uint64_t kMaxProgramBytes = (uint64_t(1) << 31) - 1;

/// The machine's physical memory (sysconf), or UINT64_MAX when unknown.
uint64_t physical_memory_bytes();

/// What the run may plan: the chosen methods' host arenas (all methods when
/// `methods` is empty; a name the program lacks is the caller's to report)
/// at most `limit` bytes, where every arena is host memory on Target::Host.
struct PlannedCap {
  std::vector<std::string> methods;
  runtime::Target target = runtime::Target::Host;
  uint64_t limit = UINT64_MAX;
};

/// Sums the planned arenas of the chosen methods that live in host memory
/// and refuses the run when they pass the cap. `program` has been verified.
Status check_planned_memory(const trtx_pte::Program& program, const PlannedCap& cap);

}  // namespace trtx::integration
