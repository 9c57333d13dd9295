// A loaded `.pte`: header and extended header parsed, the flatbuffer
// verified, every program-level index and extent checked against the file,
// and the constant segment read. Per-method checks happen when a Method is
// loaded (see executor/method.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "program_generated.h"
#include "trtx/program/data_loader.h"
#include "trtx/runtime/result.h"

namespace trtx::program {

namespace fb = executorch_flatbuffer;

struct FileHeader {
  bool has_extended_header = false;
  uint32_t extended_header_length = 0;
  uint64_t program_size = 0;
  uint64_t segment_base_offset = 0;
  uint64_t segment_data_size = 0;
};

/// Parses the first bytes of a program file (root offset, `ET12`, optional
/// `eh00` extended header) and checks the sizes against `file_size`.
Result<FileHeader> parse_file_header(const uint8_t* head, size_t head_size, uint64_t file_size);

/// A delegate's processed bytes: inline in the flatbuffer or a file segment,
/// read on demand.
class BlobSource {
 public:
  BlobSource() = default;
  static BlobSource inline_bytes(const uint8_t* data, size_t size);
  static BlobSource segment(const DataLoader* loader, uint64_t offset, uint64_t size);

  uint64_t size() const { return size_; }
  /// Reads [offset, offset + n), bounds-checked against size().
  Status read(uint64_t offset, size_t n, void* dst) const;

 private:
  const uint8_t* inline_ = nullptr;
  const DataLoader* loader_ = nullptr;
  uint64_t base_ = 0;
  uint64_t size_ = 0;
};

class Program {
 public:
  static Result<std::unique_ptr<Program>> load(const std::string& path);
  static Result<std::unique_ptr<Program>> load(std::unique_ptr<DataLoader> loader);

  const fb::Program* flatbuffer() const { return program_; }
  const FileHeader& header() const { return header_; }
  uint64_t file_size() const { return loader_->size(); }

  size_t num_methods() const;
  std::vector<std::string> method_names() const;
  /// The execution plan named `name`, or NotFound naming the ones there are.
  Result<const fb::ExecutionPlan*> plan(const std::string& name) const;

  /// Constant bytes for `buffer_index` (constant_segment or the legacy
  /// constant_buffer), checked to hold `nbytes`.
  Result<const uint8_t*> constant_data(uint32_t buffer_index, uint64_t nbytes, const std::string& where) const;

  /// Reads a tensor's initial state from mutable_data_segments[0] (the index
  /// ExecuTorch's runtime reads) into `dst`.
  Status load_mutable_data(uint32_t buffer_index, uint64_t nbytes, void* dst, const std::string& where) const;

  /// The processed bytes of a delegate.
  Result<BlobSource> delegate_data(const fb::BackendDelegateDataReference* ref, const std::string& where) const;

 private:
  Program() = default;
  Status validate();
  std::unique_ptr<DataLoader> loader_;
  AlignedBuffer program_bytes_;
  AlignedBuffer constant_segment_;
  bool has_constant_segment_ = false;
  FileHeader header_;
  const fb::Program* program_ = nullptr;
};

}  // namespace trtx::program
