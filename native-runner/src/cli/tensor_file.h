// The runner's tensor files (TRXT, docs/reference-lowering.md section 3):
// recorded inputs that `run --inputs FILE` feeds instead of the step
// pattern, and every output of every executed step that `run --outputs FILE`
// writes. Little-endian, no padding:
//
//   "TRXT"  u32 version (1)  u32 count
//   record: u32 method_len, method (UTF-8)
//           u32 step, u32 index
//           u32 kind     (0 tensor, 1 int, 2 double, 3 bool, 4 none)
//           i32 dtype    (ExecuTorch ScalarType code; -1 for non-tensors)
//           u32 ndim, i64 sizes[ndim]
//           u64 nbytes, bytes[nbytes]
//
// The reader takes files from elsewhere (trtx verify writes them from the
// reference file), so every count and size is checked against what is left
// and against the limits below before anything is allocated (internal).
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "trtx/runtime/result.h"

namespace trtx::cli {

enum class ValueKind : uint32_t { Tensor = 0, Int = 1, Double = 2, Bool = 3, None = 4 };

struct TensorRecord {
  std::string method;
  uint32_t step = 0;
  uint32_t index = 0;  // input or output index of the method
  ValueKind kind = ValueKind::Tensor;
  int32_t dtype = -1;  // ScalarType code; -1 for non-tensors
  std::vector<int64_t> sizes;
  std::vector<uint8_t> bytes;  // 8 for int (int64) and double, 1 for bool, 0 for none
};

constexpr uint32_t kTensorFileVersion = 1;
/// Longest method name a record may carry.
constexpr uint32_t kMaxMethodNameBytes = 4096;
/// Most dimensions a tensor record may have (ExecuTorch's
/// kTensorDimensionLimit, runtime/core/portable_type/tensor_impl.h, is 16).
constexpr uint32_t kMaxRecordDims = 16;
/// Largest file the reader loads (it is read whole).
constexpr uint64_t kMaxTensorFileBytes = uint64_t(1) << 36;

/// Parses a whole file's bytes. Failures are InvalidArgument at
/// "NAME: record R at byte O" (or "NAME at byte O" for the header): a
/// truncated file, a bad magic or version, an unknown kind or dtype, sizes
/// that disagree with nbytes, trailing bytes, a repeated (method, step, index).
Result<std::vector<TensorRecord>> parse_tensor_file(const uint8_t* data, size_t size, const std::string& name);

/// Reads and parses `path`.
Result<std::vector<TensorRecord>> read_tensor_file(const std::string& path);

/// The encoding of one record, appended to `out`.
void append_tensor_record(std::vector<uint8_t>& out, const TensorRecord& r);

/// A whole file: header and records.
std::vector<uint8_t> encode_tensor_file(const std::vector<TensorRecord>& records);

/// Writes records as they come (outputs of every step can be large): the
/// header first, each record appended, the count patched in by close().
class TensorFileWriter {
 public:
  TensorFileWriter() = default;
  ~TensorFileWriter();
  TensorFileWriter(const TensorFileWriter&) = delete;
  TensorFileWriter& operator=(const TensorFileWriter&) = delete;

  Status open(const std::string& path);
  bool is_open() const { return file_ != nullptr; }
  Status add(const TensorRecord& r);
  /// Patches the count and closes; reports any write that failed.
  Status close();

 private:
  Status write(const void* p, size_t n);
  std::FILE* file_ = nullptr;
  std::string path_;
  uint32_t count_ = 0;
  bool failed_ = false;
};

/// Recorded values by (method, step, index).
class RecordedValues {
 public:
  RecordedValues() = default;
  explicit RecordedValues(std::vector<TensorRecord> records);
  const TensorRecord* find(const std::string& method, uint32_t step, uint32_t index) const;
  size_t size() const { return records_.size(); }

 private:
  std::vector<TensorRecord> records_;
  std::map<std::tuple<std::string, uint32_t, uint32_t>, size_t> index_;
};

const char* value_kind_name(ValueKind k);

}  // namespace trtx::cli
