// Reads byte ranges of a program file on demand, so a delegate blob is read
// only when a backend asks for it (a TensorRT plan may be gigabytes, and a
// plan this build cannot run is recognised from its first bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "trtx/runtime/result.h"

namespace trtx::program {

/// An owned buffer aligned for direct use as tensor or flatbuffer memory.
class AlignedBuffer {
 public:
  static constexpr size_t kAlignment = 64;
  AlignedBuffer() = default;
  static Result<AlignedBuffer> allocate(size_t size);
  AlignedBuffer(AlignedBuffer&& o) noexcept;
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer();

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

class DataLoader {
 public:
  virtual ~DataLoader() = default;
  virtual uint64_t size() const = 0;
  /// Reads [offset, offset + n) into `dst`; the range is checked against size().
  virtual Status read(uint64_t offset, size_t n, void* dst) const = 0;

  Result<AlignedBuffer> load(uint64_t offset, size_t n) const;
};

/// A file read with pread.
class FileDataLoader final : public DataLoader {
 public:
  static Result<std::unique_ptr<FileDataLoader>> open(const std::string& path);
  ~FileDataLoader() override;
  uint64_t size() const override { return size_; }
  Status read(uint64_t offset, size_t n, void* dst) const override;

 private:
  FileDataLoader(int fd, uint64_t size, std::string path) : fd_(fd), size_(size), path_(std::move(path)) {}
  int fd_;
  uint64_t size_;
  std::string path_;
};

/// Bytes already in memory (tests, inline data).
class BufferDataLoader final : public DataLoader {
 public:
  BufferDataLoader(const void* data, size_t size) : data_(static_cast<const uint8_t*>(data)), size_(size) {}
  uint64_t size() const override { return size_; }
  Status read(uint64_t offset, size_t n, void* dst) const override;

 private:
  const uint8_t* data_;
  size_t size_;
};

}  // namespace trtx::program
