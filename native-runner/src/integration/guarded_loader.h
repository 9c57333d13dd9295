// The program's data loader: ExecuTorch's MmapDataLoader (default) or
// FileDataLoader (`--loader file`), with one guard.
// ExecuTorch loads a mutable buffer's initial state straight into its planned
// address (runtime/executor/tensor_parser_exec_aten.cpp, through
// Program::load_mutable_subsegment_into and DataLoader::load_into). For a
// buffer planned in a CUDA arena that address is device memory: on a GPU the
// host write fails (pread into device memory is EFAULT; a memcpy would fault),
// and the method does not load. The host stand-in would accept the write, so
// the guard refuses it on both targets, with a message that says why: never
// kinder than the real runtime. It also refuses a program part larger than a
// FlatBuffer can be before the loader reads it (load_limits.h), and hands
// ExecuTorch the program part only once the runner's own validation passed
// (program_validation.h): whatever the verification level ExecuTorch loads
// with, it never reads a program that validation refuses (internal).
//
// Why mmap by default: every segment ExecuTorch asks for (the delegate blobs,
// the constant segment, and a version-3 engine's weights, which the outer
// program's named data serves through PteDataMap::get_data, runtime/executor/
// pte_data_map.h) comes back as a FreeableBuffer. FileDataLoader mallocs one
// and preads the bytes into it (extension/data_loader/file_data_loader.h), a
// private copy of every weight beside the page cache's; MmapDataLoader maps
// the file (extension/data_loader/mmap_data_loader.h), so a weight is read
// from disk once, into the page cache, and costs no anonymous memory. The
// mapping is never mlock'ed (MlockConfig::NoMlock): a 5 GB program must not
// pin 5 GB.
#pragma once

#include <executorch/runtime/core/data_loader.h>

#include <memory>
#include <string>

#include "load_limits.h"

namespace trtx::integration {

/// The program's file: mapped (MmapDataLoader, NoMlock) when `mapped`, else
/// read (FileDataLoader). A file that cannot be opened is the failure
/// ExecuTorch gives, at `path`.
Result<std::unique_ptr<executorch::runtime::DataLoader>> open_program_file(const std::string& path, bool mapped);

class GuardedLoader final : public executorch::runtime::DataLoader {
 public:
  GuardedLoader(std::unique_ptr<executorch::runtime::DataLoader> inner, PlannedCap cap)
      : inner_(std::move(inner)), cap_(std::move(cap)) {}

  // The program part is refused past the largest FlatBuffer before anything
  // is read (load_limits.h): FileDataLoader would read all of it. Once read,
  // it is validated before ExecuTorch sees it.
  executorch::runtime::Result<executorch::runtime::FreeableBuffer> load(size_t offset, size_t size,
                                                                        const SegmentInfo& info) const override;
  executorch::runtime::Error load_into(size_t offset, size_t size, const SegmentInfo& info,
                                       void* buffer) const override;
  executorch::runtime::Result<size_t> size() const override { return inner_->size(); }

 private:
  std::unique_ptr<executorch::runtime::DataLoader> inner_;
  PlannedCap cap_;
  // Program::load reads the program segment twice: the first
  // ExtendedHeader::kNumHeadBytes to find its size, then all of it
  // (runtime/executor/program.cpp). The first read is the header probe.
  mutable bool probed_ = false;
};

}  // namespace trtx::integration
