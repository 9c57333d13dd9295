#include "guarded_loader.h"

#include <executorch/extension/data_loader/file_data_loader.h>
#include <executorch/extension/data_loader/mmap_data_loader.h>

#include "et_error_cause.h"
#include "load_limits.h"
#include "program_validation.h"
#include "trtx/et/device_allocator.h"
#include "trtx/et/recorded_failure.h"

namespace trtx::integration {

namespace {
// schema/extended_header.h ExtendedHeader::kNumHeadBytes: what Program::load
// reads first to find the program's size.
constexpr size_t kHeadProbeBytes = 64;
}  // namespace

Result<std::unique_ptr<executorch::runtime::DataLoader>> open_program_file(const std::string& path, bool mapped) {
  using executorch::extension::FileDataLoader;
  using executorch::extension::MmapDataLoader;
  std::unique_ptr<executorch::runtime::DataLoader> loader;
  executorch::runtime::Error e = executorch::runtime::Error::Ok;
  if (mapped) {
    auto m = MmapDataLoader::from(path.c_str(), MmapDataLoader::MlockConfig::NoMlock);
    if (m.ok()) loader = std::make_unique<MmapDataLoader>(std::move(m.get()));
    e = m.error();
  } else {
    auto f = FileDataLoader::from(path.c_str());
    if (f.ok()) loader = std::make_unique<FileDataLoader>(std::move(f.get()));
    e = f.error();
  }
  if (!loader) return failure_of(e, path, "opening the program");
  return loader;
}

executorch::runtime::Result<executorch::runtime::FreeableBuffer> GuardedLoader::load(size_t offset, size_t size,
                                                                                     const SegmentInfo& info) const {
  if (info.segment_type == SegmentInfo::Type::Program && size > kMaxProgramBytes) {
    return trtx::et::record_failure(
        fail(trtx::Error::InvalidProgram, "header.program_size",
             "the extended header names a program of " + std::to_string(size) + " bytes; a FlatBuffer holds at most " +
                 std::to_string(kMaxProgramBytes) +
                 " (flatbuffers/base.h FLATBUFFERS_MAX_BUFFER_SIZE), so nothing was read (trtx check: "
                 "PTE_PROGRAM_SIZE)"),
        executorch::runtime::Error::InvalidProgram);
  }
  auto loaded = inner_->load(offset, size, info);
  if (!loaded.ok() || info.segment_type != SegmentInfo::Type::Program) return loaded;
  if (!probed_ && offset == 0 && size == kHeadProbeBytes) {
    probed_ = true;
    return loaded;
  }
  Status valid = validate_program(loaded->data(), loaded->size(), cap_);
  if (!valid.ok()) {
    loaded->Free();
    return trtx::et::record_failure(valid.take_failure(), executorch::runtime::Error::InvalidProgram);
  }
  return loaded;
}

executorch::runtime::Error GuardedLoader::load_into(size_t offset, size_t size, const SegmentInfo& info,
                                                    void* buffer) const {
  if (trtx::et::device_allocator().owns(buffer, size)) {
    const bool mutable_state = info.segment_type == SegmentInfo::Type::Mutable;
    return trtx::et::record_failure(
        fail(trtx::Error::DeviceInitialState,
             mutable_state ? "mutable_data_segments[0] (segment " + std::to_string(info.segment_index) + ")"
                           : "segment " + std::to_string(info.segment_index),
             "ExecuTorch loads a mutable buffer's initial state (" + std::to_string(size) +
                 " bytes) straight into its planned address, and this buffer is planned in a CUDA arena: the host "
                 "cannot write device memory, so the method does not load (runtime/executor/"
                 "tensor_parser_exec_aten.cpp). Drop the initial state and initialise the buffer in the application, "
                 "or keep the buffer in a host arena (staged)"),
        executorch::runtime::Error::AccessFailed);
  }
  return inner_->load_into(offset, size, info, buffer);
}

}  // namespace trtx::integration
