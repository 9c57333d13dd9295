// TRXT tensor files (tensor_file.h, docs/reference-lowering.md section 3).
#include "tensor_file.h"

#include <cerrno>
#include <cstring>

#include "trtx/runtime/scalar_type.h"

namespace trtx::cli {

namespace {

constexpr char kMagic[4] = {'T', 'R', 'X', 'T'};
constexpr size_t kHeaderBytes = 12;
// method_len, step, index, kind, dtype, ndim (u32/i32 each) and nbytes (u64):
// the least a record takes, which bounds the count a file can claim.
constexpr size_t kMinRecordBytes = 6 * 4 + 8;

// Reads little-endian fields, each checked against what is left.
class Cursor {
 public:
  Cursor(const uint8_t* data, size_t size, const std::string& name) : data_(data), size_(size), name_(name) {}

  size_t offset() const { return at_; }
  size_t left() const { return size_ - at_; }
  void set_record(size_t r, size_t start) {
    record_ = r;
    record_start_ = start;
    in_record_ = true;
  }

  Failure error(const std::string& msg) const {
    std::string where = name_;
    where += in_record_ ? ": record " + std::to_string(record_) + " at byte " + std::to_string(record_start_)
                        : " at byte " + std::to_string(at_);
    return fail(Error::InvalidArgument, where, msg);
  }

  Status need(size_t n, const char* what) const {
    if (n <= left()) return ok_status();
    return error(std::string("truncated: ") + what + " needs " + std::to_string(n) + " bytes at byte " +
                 std::to_string(at_) + ", " + std::to_string(left()) + " left");
  }

  Result<uint64_t> uint(size_t width, const char* what) {
    TRTX_CHECK_OK(need(width, what));
    uint64_t v = 0;
    for (size_t i = 0; i < width; ++i) v |= uint64_t(data_[at_ + i]) << (8 * i);
    at_ += width;
    return v;
  }

  Result<const uint8_t*> bytes(size_t n, const char* what) {
    TRTX_CHECK_OK(need(n, what));
    const uint8_t* p = data_ + at_;
    at_ += n;
    return p;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  const std::string& name_;
  size_t at_ = 0;
  size_t record_ = 0;
  size_t record_start_ = 0;
  bool in_record_ = false;
};

Status check_shape(Cursor& c, const TensorRecord& r, uint64_t nbytes) {
  const auto kind = r.kind;
  if (kind != ValueKind::Tensor) {
    if (r.dtype != -1)
      return c.error("a " + std::string(value_kind_name(kind)) + " record has dtype " + std::to_string(r.dtype) +
                     "; non-tensors have -1");
    if (!r.sizes.empty()) return c.error("a " + std::string(value_kind_name(kind)) + " record has dimensions");
    const uint64_t want = kind == ValueKind::Bool ? 1 : kind == ValueKind::None ? 0 : 8;
    if (nbytes != want) {
      return c.error("a " + std::string(value_kind_name(kind)) + " record has " + std::to_string(nbytes) +
                     " bytes; it takes " + std::to_string(want));
    }
    return ok_status();
  }
  if (r.dtype < -128 || r.dtype > 127 || element_size(static_cast<int8_t>(r.dtype)) == 0) {
    return c.error("dtype " + std::to_string(r.dtype) + " is not an ExecuTorch ScalarType this runner knows");
  }
  const uint64_t width = element_size(static_cast<int8_t>(r.dtype));
  uint64_t total = width;
  for (size_t d = 0; d < r.sizes.size(); ++d) {
    const int64_t s = r.sizes[d];
    if (s < 0) return c.error("size " + std::to_string(d) + " is negative (" + std::to_string(s) + ")");
    if (s != 0 && total > UINT64_MAX / static_cast<uint64_t>(s)) return c.error("sizes overflow 64 bits");
    total *= static_cast<uint64_t>(s);
  }
  if (total != nbytes) {
    return c.error("nbytes is " + std::to_string(nbytes) + " but " +
                   scalar_type_name(static_cast<ScalarType>(r.dtype)) + " with these sizes takes " +
                   std::to_string(total));
  }
  return ok_status();
}

Result<TensorRecord> parse_record(Cursor& c) {
  TensorRecord r;
  TRTX_ASSIGN_OR_RETURN(uint64_t name_len, c.uint(4, "method_len"));
  if (name_len == 0 || name_len > kMaxMethodNameBytes) {
    return c.error("method_len " + std::to_string(name_len) + " is outside [1, " + std::to_string(kMaxMethodNameBytes) +
                   "]");
  }
  TRTX_ASSIGN_OR_RETURN(const uint8_t* name, c.bytes(name_len, "method"));
  r.method.assign(reinterpret_cast<const char*>(name), name_len);
  if (r.method.find('\0') != std::string::npos) return c.error("the method name contains a NUL byte");
  TRTX_ASSIGN_OR_RETURN(uint64_t step, c.uint(4, "step"));
  TRTX_ASSIGN_OR_RETURN(uint64_t index, c.uint(4, "index"));
  TRTX_ASSIGN_OR_RETURN(uint64_t kind, c.uint(4, "kind"));
  TRTX_ASSIGN_OR_RETURN(uint64_t dtype, c.uint(4, "dtype"));
  TRTX_ASSIGN_OR_RETURN(uint64_t ndim, c.uint(4, "ndim"));
  r.step = static_cast<uint32_t>(step);
  r.index = static_cast<uint32_t>(index);
  if (kind > static_cast<uint32_t>(ValueKind::None)) {
    return c.error("kind " + std::to_string(kind) + " is not 0 (tensor), 1 (int), 2 (double), 3 (bool) or 4 (none)");
  }
  r.kind = static_cast<ValueKind>(kind);
  r.dtype = static_cast<int32_t>(static_cast<uint32_t>(dtype));
  if (ndim > kMaxRecordDims) {
    return c.error("ndim " + std::to_string(ndim) + " is over " + std::to_string(kMaxRecordDims));
  }
  for (uint64_t d = 0; d < ndim; ++d) {
    TRTX_ASSIGN_OR_RETURN(uint64_t s, c.uint(8, "sizes"));
    r.sizes.push_back(static_cast<int64_t>(s));
  }
  TRTX_ASSIGN_OR_RETURN(uint64_t nbytes, c.uint(8, "nbytes"));
  TRTX_CHECK_OK(check_shape(c, r, nbytes));
  TRTX_CHECK_OK(c.need(nbytes, "the record's data"));
  TRTX_ASSIGN_OR_RETURN(const uint8_t* data, c.bytes(static_cast<size_t>(nbytes), "data"));
  r.bytes.assign(data, data + nbytes);
  if (r.kind == ValueKind::Bool && r.bytes[0] > 1) {
    return c.error("a bool record holds " + std::to_string(r.bytes[0]) + "; 0 or 1");
  }
  return r;
}

void put(std::vector<uint8_t>& out, uint64_t v, size_t width) {
  for (size_t i = 0; i < width; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

}  // namespace

const char* value_kind_name(ValueKind k) {
  switch (k) {
    case ValueKind::Tensor:
      return "tensor";
    case ValueKind::Int:
      return "int";
    case ValueKind::Double:
      return "double";
    case ValueKind::Bool:
      return "bool";
    case ValueKind::None:
      return "none";
  }
  return "?";
}

Result<std::vector<TensorRecord>> parse_tensor_file(const uint8_t* data, size_t size, const std::string& name) {
  Cursor c(data, size, name);
  TRTX_CHECK_OK(c.need(kHeaderBytes, "the header (\"TRXT\", version, count)"));
  TRTX_ASSIGN_OR_RETURN(const uint8_t* magic, c.bytes(4, "magic"));
  if (std::memcmp(magic, kMagic, 4) != 0) return c.error("not a trtx tensor file (magic \"TRXT\")");
  TRTX_ASSIGN_OR_RETURN(uint64_t version, c.uint(4, "version"));
  if (version != kTensorFileVersion) {
    return c.error("version " + std::to_string(version) + "; this runner reads version " +
                   std::to_string(kTensorFileVersion));
  }
  TRTX_ASSIGN_OR_RETURN(uint64_t count, c.uint(4, "count"));
  if (count > c.left() / kMinRecordBytes) {
    return c.error("truncated: " + std::to_string(count) + " records cannot fit in the " + std::to_string(c.left()) +
                   " bytes left");
  }
  std::vector<TensorRecord> out;
  std::map<std::tuple<std::string, uint32_t, uint32_t>, size_t> seen;
  for (uint64_t r = 0; r < count; ++r) {
    c.set_record(static_cast<size_t>(r), c.offset());
    TRTX_ASSIGN_OR_RETURN(TensorRecord rec, parse_record(c));
    auto key = std::make_tuple(rec.method, rec.step, rec.index);
    auto it = seen.find(key);
    if (it != seen.end()) {
      return c.error("repeats method '" + rec.method + "' step " + std::to_string(rec.step) + " index " +
                     std::to_string(rec.index) + " (record " + std::to_string(it->second) + ")");
    }
    seen.emplace(std::move(key), static_cast<size_t>(r));
    out.push_back(std::move(rec));
  }
  if (c.left() != 0) {
    return fail(Error::InvalidArgument, name + " at byte " + std::to_string(c.offset()),
                std::to_string(c.left()) + " bytes after the last of " + std::to_string(count) + " records");
  }
  return out;
}

Result<std::vector<TensorRecord>> read_tensor_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return fail(Error::InvalidArgument, path, std::string("cannot open: ") + std::strerror(errno));
  std::vector<uint8_t> bytes;
  uint8_t chunk[1 << 16];
  size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (bytes.size() + n > kMaxTensorFileBytes) {
      std::fclose(f);
      return fail(Error::InvalidArgument, path, "larger than " + std::to_string(kMaxTensorFileBytes) + " bytes");
    }
    bytes.insert(bytes.end(), chunk, chunk + n);
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return fail(Error::InvalidArgument, path, "read error");
  return parse_tensor_file(bytes.data(), bytes.size(), path);
}

void append_tensor_record(std::vector<uint8_t>& out, const TensorRecord& r) {
  put(out, r.method.size(), 4);
  out.insert(out.end(), r.method.begin(), r.method.end());
  put(out, r.step, 4);
  put(out, r.index, 4);
  put(out, static_cast<uint32_t>(r.kind), 4);
  put(out, static_cast<uint32_t>(r.dtype), 4);
  put(out, r.sizes.size(), 4);
  for (int64_t s : r.sizes) put(out, static_cast<uint64_t>(s), 8);
  put(out, r.bytes.size(), 8);
  out.insert(out.end(), r.bytes.begin(), r.bytes.end());
}

std::vector<uint8_t> encode_tensor_file(const std::vector<TensorRecord>& records) {
  std::vector<uint8_t> out(kMagic, kMagic + 4);
  put(out, kTensorFileVersion, 4);
  put(out, records.size(), 4);
  for (const auto& r : records) append_tensor_record(out, r);
  return out;
}

TensorFileWriter::~TensorFileWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

Status TensorFileWriter::write(const void* p, size_t n) {
  if (n != 0 && std::fwrite(p, 1, n, file_) != n) failed_ = true;
  if (failed_) return fail(Error::AccessFailed, path_, std::string("cannot write: ") + std::strerror(errno));
  return ok_status();
}

Status TensorFileWriter::open(const std::string& path) {
  path_ = path;
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) return fail(Error::AccessFailed, path, std::string("cannot create: ") + std::strerror(errno));
  const std::vector<uint8_t> header = encode_tensor_file({});
  return write(header.data(), header.size());
}

Status TensorFileWriter::add(const TensorRecord& r) {
  if (file_ == nullptr) return fail(Error::InvalidState, path_, "not open");
  if (count_ == UINT32_MAX) return fail(Error::InvalidArgument, path_, "more records than a u32 count holds");
  std::vector<uint8_t> bytes;
  append_tensor_record(bytes, r);
  TRTX_CHECK_OK(write(bytes.data(), bytes.size()));
  ++count_;
  return ok_status();
}

Status TensorFileWriter::close() {
  if (file_ == nullptr) return ok_status();
  std::vector<uint8_t> count;
  put(count, count_, 4);
  if (!failed_ && (std::fseek(file_, 8, SEEK_SET) != 0 || std::fwrite(count.data(), 1, 4, file_) != 4)) failed_ = true;
  if (std::fclose(file_) != 0) failed_ = true;
  file_ = nullptr;
  if (failed_) return fail(Error::AccessFailed, path_, "cannot write the tensor file");
  return ok_status();
}

RecordedValues::RecordedValues(std::vector<TensorRecord> records) : records_(std::move(records)) {
  for (size_t i = 0; i < records_.size(); ++i) {
    index_.emplace(std::make_tuple(records_[i].method, records_[i].step, records_[i].index), i);
  }
}

const TensorRecord* RecordedValues::find(const std::string& method, uint32_t step, uint32_t index) const {
  auto it = index_.find(std::make_tuple(method, step, index));
  return it == index_.end() ? nullptr : &records_[it->second];
}

}  // namespace trtx::cli
