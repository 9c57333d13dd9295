#include "trtx/program/program.h"

#include <cstring>

#include "flatbuffers/flatbuffers.h"

namespace trtx::program {

namespace {

constexpr size_t kHeadBytes = 64;
constexpr size_t kExtendedHeaderOffset = 8;
constexpr uint32_t kExtendedHeaderMinLength = 24;       // magic, length, program size, segment base
constexpr uint32_t kExtendedHeaderWithDataSize = 32;    // + segment data size

uint32_t read_u32(const uint8_t* p) {
  return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
}
uint64_t read_u64(const uint8_t* p) { return uint64_t(read_u32(p)) | (uint64_t(read_u32(p + 4)) << 32); }

std::string seg(size_t i) { return "program.segments[" + std::to_string(i) + "]"; }

// flatbuffers 2.0.8's Verifier checks a vector's length prefix for 4-byte
// alignment but not its 8-byte elements; reading a misaligned one is
// undefined behaviour, so every 8-byte vector the runner reads is checked.
template <typename T>
Status aligned(const flatbuffers::Vector<T>* v, const std::string& where) {
  if (v == nullptr || v->size() == 0) return ok_status();
  if (reinterpret_cast<uintptr_t>(v->Data()) % alignof(T) != 0) {
    return fail(Error::ProgramVerification, where,
                "vector of " + std::to_string(sizeof(T)) + "-byte elements is not " + std::to_string(alignof(T)) +
                    "-byte aligned");
  }
  return ok_status();
}

}  // namespace

Result<FileHeader> parse_file_header(const uint8_t* head, size_t head_size, uint64_t file_size) {
  if (file_size < 8 || head_size < 8) {
    return fail(Error::ProgramTruncated, "header",
                "file is " + std::to_string(file_size) + " bytes; a program needs at least 8 (root offset and identifier)");
  }
  if (std::memcmp(head + 4, "ET12", 4) != 0) {
    std::string got;
    for (int i = 4; i < 8; ++i) {
      char c = static_cast<char>(head[i]);
      got += (c >= 0x20 && c < 0x7f) ? std::string(1, c) : "?";
    }
    return fail(Error::ProgramIdentifier, "header", "file identifier at byte 4 is '" + got + "', expected 'ET12'");
  }
  FileHeader h;
  if (head_size >= 12 && std::memcmp(head + kExtendedHeaderOffset, "eh00", 4) == 0) {
    if (head_size < kExtendedHeaderOffset + kExtendedHeaderMinLength) {
      return fail(Error::ProgramTruncated, "extended_header", "extended header 'eh00' is cut off by the end of the file");
    }
    const uint8_t* eh = head + kExtendedHeaderOffset;
    h.has_extended_header = true;
    h.extended_header_length = read_u32(eh + 4);
    if (h.extended_header_length < kExtendedHeaderMinLength) {
      return fail(Error::ProgramExtendedHeader, "extended_header",
                  "length field is " + std::to_string(h.extended_header_length) + ", less than the " +
                      std::to_string(kExtendedHeaderMinLength) + " bytes its fields take");
    }
    h.program_size = read_u64(eh + 8);
    h.segment_base_offset = read_u64(eh + 16);
    if (h.extended_header_length >= kExtendedHeaderWithDataSize) {
      if (head_size < kExtendedHeaderOffset + kExtendedHeaderWithDataSize) {
        return fail(Error::ProgramTruncated, "extended_header", "segment_data_size field is cut off by the end of the file");
      }
      h.segment_data_size = read_u64(eh + 24);
    }
    if (h.program_size < kExtendedHeaderOffset + kExtendedHeaderMinLength || h.program_size > file_size) {
      return fail(Error::ProgramTruncated, "extended_header.program_size",
                  "program_size " + std::to_string(h.program_size) + " does not fit the file (" +
                      std::to_string(file_size) + " bytes)");
    }
    if (h.segment_base_offset == 0) {
      if (h.segment_data_size != 0) {
        return fail(Error::ProgramExtendedHeader, "extended_header.segment_data_size",
                    "segment_data_size is " + std::to_string(h.segment_data_size) + " but segment_base_offset is 0");
      }
    } else {
      if (h.segment_base_offset < h.program_size || h.segment_base_offset > file_size) {
        return fail(Error::ProgramExtendedHeader, "extended_header.segment_base_offset",
                    "segment_base_offset " + std::to_string(h.segment_base_offset) +
                        " must lie after the program (" + std::to_string(h.program_size) + " bytes) and within the file (" +
                        std::to_string(file_size) + " bytes)");
      }
      if (h.segment_data_size > file_size - h.segment_base_offset) {
        return fail(Error::ProgramTruncated, "extended_header.segment_data_size",
                    "segments claim " + std::to_string(h.segment_data_size) + " bytes from offset " +
                        std::to_string(h.segment_base_offset) + " but the file has " + std::to_string(file_size) + " bytes");
      }
    }
  } else {
    h.program_size = file_size;
  }
  return h;
}

BlobSource BlobSource::inline_bytes(const uint8_t* data, size_t size) {
  BlobSource b;
  b.inline_ = data;
  b.size_ = size;
  return b;
}

BlobSource BlobSource::segment(const DataLoader* loader, uint64_t offset, uint64_t size) {
  BlobSource b;
  b.loader_ = loader;
  b.base_ = offset;
  b.size_ = size;
  return b;
}

Status BlobSource::read(uint64_t offset, size_t n, void* dst) const {
  if (offset > size_ || n > size_ - offset) {
    return fail(Error::ExtentOutOfRange, "blob",
                "read of " + std::to_string(n) + " bytes at " + std::to_string(offset) + " runs past the blob (" +
                    std::to_string(size_) + " bytes)");
  }
  if (n == 0) return ok_status();
  if (inline_ != nullptr) {
    std::memcpy(dst, inline_ + offset, n);
    return ok_status();
  }
  if (loader_ == nullptr) return fail(Error::InvalidState, "blob", "empty blob source");
  return loader_->read(base_ + offset, n, dst);
}

Result<std::unique_ptr<Program>> Program::load(const std::string& path) {
  TRTX_ASSIGN_OR_RETURN(auto loader, FileDataLoader::open(path));
  return load(std::unique_ptr<DataLoader>(std::move(loader)));
}

Result<std::unique_ptr<Program>> Program::load(std::unique_ptr<DataLoader> loader) {
  std::unique_ptr<Program> p(new Program());
  uint64_t file_size = loader->size();
  uint8_t head[kHeadBytes] = {0};
  size_t head_size = file_size < kHeadBytes ? static_cast<size_t>(file_size) : kHeadBytes;
  TRTX_CHECK_OK(loader->read(0, head_size, head));
  TRTX_ASSIGN_OR_RETURN(p->header_, parse_file_header(head, head_size, file_size));
  if (p->header_.program_size > FLATBUFFERS_MAX_BUFFER_SIZE) {
    return fail(Error::ProgramVerification, "program",
                "flatbuffer of " + std::to_string(p->header_.program_size) + " bytes exceeds the flatbuffers limit");
  }
  TRTX_ASSIGN_OR_RETURN(p->program_bytes_, loader->load(0, static_cast<size_t>(p->header_.program_size)));
  p->loader_ = std::move(loader);

  flatbuffers::Verifier::Options opts;
  opts.max_depth = 64;
  opts.max_tables = 50'000'000;
  flatbuffers::Verifier verifier(p->program_bytes_.data(), p->program_bytes_.size(), opts);
  if (!fb::VerifyProgramBuffer(verifier)) {
    return fail(Error::ProgramVerification, "program",
                "the program flatbuffer (" + std::to_string(p->program_bytes_.size()) +
                    " bytes) fails verification against the ET12 schema: truncated or corrupt");
  }
  p->program_ = fb::GetProgram(p->program_bytes_.data());
  TRTX_CHECK_OK(p->validate());
  return p;
}

Status Program::validate() {
  const auto* plans = program_->execution_plan();
  if (plans == nullptr || plans->size() == 0) {
    return fail(Error::InvalidProgram, "program.execution_plan", "the program has no execution plan");
  }
  for (flatbuffers::uoffset_t i = 0; i < plans->size(); ++i) {
    const fb::ExecutionPlan* plan = plans->Get(i);
    std::string where = "program.execution_plan[" + std::to_string(i) + "]";
    if (plan->name() == nullptr) return fail(Error::InvalidProgram, where, "execution plan has no name");
    TRTX_CHECK_OK(aligned(plan->non_const_buffer_sizes(), where + ".non_const_buffer_sizes"));
    if (plan->values() != nullptr) {
      for (flatbuffers::uoffset_t k = 0; k < plan->values()->size(); ++k) {
        const fb::EValue* v = plan->values()->Get(k);
        std::string at = where + ".values[" + std::to_string(k) + "]";
        if (v->val_type() == fb::KernelTypes::IntList) TRTX_CHECK_OK(aligned(v->val_as_IntList()->items(), at));
        if (v->val_type() == fb::KernelTypes::DoubleList) TRTX_CHECK_OK(aligned(v->val_as_DoubleList()->items(), at));
      }
    }
  }
  if (const auto* cs = program_->constant_segment()) {
    TRTX_CHECK_OK(aligned(cs->offsets(), "program.constant_segment.offsets"));
  }
  if (const auto* mds = program_->mutable_data_segments()) {
    for (flatbuffers::uoffset_t i = 0; i < mds->size(); ++i) {
      TRTX_CHECK_OK(aligned(mds->Get(i)->offsets(), "program.mutable_data_segments[" + std::to_string(i) + "].offsets"));
    }
  }
  // Segments must lie inside the file region after the segment base.
  const auto* segments = program_->segments();
  uint64_t region = header_.segment_base_offset == 0 ? 0 : file_size() - header_.segment_base_offset;
  if (segments != nullptr) {
    for (flatbuffers::uoffset_t i = 0; i < segments->size(); ++i) {
      const auto* s = segments->Get(i);
      if (s->size() == 0) continue;
      if (header_.segment_base_offset == 0) {
        return fail(Error::ExtentOutOfRange, seg(i),
                    "segment of " + std::to_string(s->size()) + " bytes but the file has no segment base (no extended header)");
      }
      if (s->offset() > region || s->size() > region - s->offset()) {
        return fail(Error::ExtentOutOfRange, seg(i),
                    "segment [offset " + std::to_string(s->offset()) + ", size " + std::to_string(s->size()) +
                        "] runs past the end of the file (" + std::to_string(region) + " bytes of segment data)");
      }
    }
  }
  auto segment_count = segments == nullptr ? 0u : segments->size();

  const auto* cs = program_->constant_segment();
  if (cs != nullptr && cs->offsets() != nullptr && cs->offsets()->size() > 1) {
    const auto* cb = program_->constant_buffer();
    if (cb != nullptr && cb->size() > 0) {
      return fail(Error::InvalidProgram, "program.constant_segment",
                  "constants are in both constant_segment and constant_buffer; only one may be used");
    }
    if (cs->segment_index() >= segment_count) {
      return fail(Error::IndexOutOfRange, "program.constant_segment.segment_index",
                  "segment index " + std::to_string(cs->segment_index()) + " but the program has " +
                      std::to_string(segment_count) + " segments");
    }
    const auto* s = segments->Get(cs->segment_index());
    for (flatbuffers::uoffset_t i = 0; i < cs->offsets()->size(); ++i) {
      if (cs->offsets()->Get(i) > s->size()) {
        return fail(Error::ExtentOutOfRange, "program.constant_segment.offsets[" + std::to_string(i) + "]",
                    "offset " + std::to_string(cs->offsets()->Get(i)) + " lies past the constant segment (" +
                        std::to_string(s->size()) + " bytes)");
      }
    }
    if (s->size() > SIZE_MAX) return fail(Error::ExtentOutOfRange, "program.constant_segment", "constant segment too large");
    TRTX_ASSIGN_OR_RETURN(constant_segment_,
                          loader_->load(header_.segment_base_offset + s->offset(), static_cast<size_t>(s->size())));
    has_constant_segment_ = true;
  }

  const auto* mds = program_->mutable_data_segments();
  if (mds != nullptr) {
    for (flatbuffers::uoffset_t i = 0; i < mds->size(); ++i) {
      std::string where = "program.mutable_data_segments[" + std::to_string(i) + "]";
      const auto* m = mds->Get(i);
      if (m->segment_index() >= segment_count) {
        return fail(Error::IndexOutOfRange, where + ".segment_index",
                    "segment index " + std::to_string(m->segment_index()) + " but the program has " +
                        std::to_string(segment_count) + " segments");
      }
      const auto* s = segments->Get(m->segment_index());
      if (m->offsets() != nullptr) {
        for (flatbuffers::uoffset_t k = 0; k < m->offsets()->size(); ++k) {
          if (m->offsets()->Get(k) > s->size()) {
            return fail(Error::ExtentOutOfRange, where + ".offsets[" + std::to_string(k) + "]",
                        "offset " + std::to_string(m->offsets()->Get(k)) + " lies past its segment (" +
                            std::to_string(s->size()) + " bytes)");
          }
        }
      }
    }
  }
  return ok_status();
}

size_t Program::num_methods() const { return program_->execution_plan()->size(); }

std::vector<std::string> Program::method_names() const {
  std::vector<std::string> names;
  for (const auto* p : *program_->execution_plan()) names.emplace_back(p->name()->str());
  return names;
}

Result<const fb::ExecutionPlan*> Program::plan(const std::string& name) const {
  std::string known;
  for (const auto* p : *program_->execution_plan()) {
    if (p->name()->str() == name) return p;
    known += (known.empty() ? "" : ", ") + p->name()->str();
  }
  return fail(Error::NotFound, "method " + name, "no method named '" + name + "' (the program has: " + known + ")");
}

Result<const uint8_t*> Program::constant_data(uint32_t buffer_index, uint64_t nbytes, const std::string& where) const {
  if (has_constant_segment_) {
    const auto* offsets = program_->constant_segment()->offsets();
    if (buffer_index >= offsets->size()) {
      return fail(Error::IndexOutOfRange, where + ".data_buffer_idx",
                  "constant index " + std::to_string(buffer_index) + " but constant_segment has " +
                      std::to_string(offsets->size()) + " offsets");
    }
    uint64_t off = offsets->Get(buffer_index);
    uint64_t size = constant_segment_.size();
    if (off > size || nbytes > size - off) {
      return fail(Error::ExtentOutOfRange, where,
                  "constant of " + std::to_string(nbytes) + " bytes at offset " + std::to_string(off) +
                      " runs past the constant segment (" + std::to_string(size) + " bytes)");
    }
    return constant_segment_.data() + off;
  }
  const auto* cb = program_->constant_buffer();
  size_t n = cb == nullptr ? 0 : cb->size();
  if (buffer_index >= n) {
    return fail(Error::IndexOutOfRange, where + ".data_buffer_idx",
                "constant index " + std::to_string(buffer_index) + " but the program has " + std::to_string(n) +
                    " constant buffers");
  }
  const auto* storage = cb->Get(buffer_index)->storage();
  uint64_t size = storage == nullptr ? 0 : storage->size();
  if (nbytes > size) {
    return fail(Error::ExtentOutOfRange, where,
                "constant needs " + std::to_string(nbytes) + " bytes but constant_buffer[" + std::to_string(buffer_index) +
                    "] holds " + std::to_string(size));
  }
  static const uint8_t kEmpty[1] = {0};
  return storage == nullptr ? kEmpty : storage->data();
}

Status Program::load_mutable_data(uint32_t buffer_index, uint64_t nbytes, void* dst, const std::string& where) const {
  const auto* mds = program_->mutable_data_segments();
  if (mds == nullptr || mds->size() == 0) {
    return fail(Error::IndexOutOfRange, where + ".data_buffer_idx",
                "tensor has initial state (data_buffer_idx " + std::to_string(buffer_index) +
                    ") but the program has no mutable_data_segments");
  }
  const auto* m = mds->Get(0);
  size_t n = m->offsets() == nullptr ? 0 : m->offsets()->size();
  if (buffer_index >= n) {
    return fail(Error::IndexOutOfRange, where + ".data_buffer_idx",
                "initial-state index " + std::to_string(buffer_index) + " but mutable_data_segments[0] has " +
                    std::to_string(n) + " offsets");
  }
  const auto* s = program_->segments()->Get(m->segment_index());
  uint64_t off = m->offsets()->Get(buffer_index);
  if (off > s->size() || nbytes > s->size() - off) {
    return fail(Error::ExtentOutOfRange, where,
                "initial state of " + std::to_string(nbytes) + " bytes at offset " + std::to_string(off) +
                    " runs past its segment (" + std::to_string(s->size()) + " bytes)");
  }
  if (nbytes > SIZE_MAX) return fail(Error::ExtentOutOfRange, where, "initial state too large");
  return loader_->read(header_.segment_base_offset + s->offset() + off, static_cast<size_t>(nbytes), dst);
}

Result<BlobSource> Program::delegate_data(const fb::BackendDelegateDataReference* ref, const std::string& where) const {
  if (ref == nullptr) return fail(Error::InvalidProgram, where + ".processed", "delegate has no processed data reference");
  if (ref->location() == fb::DataLocation::INLINE) {
    const auto* inl = program_->backend_delegate_data();
    size_t n = inl == nullptr ? 0 : inl->size();
    if (ref->index() >= n) {
      return fail(Error::IndexOutOfRange, where + ".processed.index",
                  "inline data index " + std::to_string(ref->index()) + " but the program has " + std::to_string(n) +
                      " inline blobs");
    }
    const auto* data = inl->Get(ref->index())->data();
    if (data == nullptr) return BlobSource::inline_bytes(nullptr, 0);
    return BlobSource::inline_bytes(data->data(), data->size());
  }
  if (ref->location() == fb::DataLocation::SEGMENT) {
    const auto* segments = program_->segments();
    size_t n = segments == nullptr ? 0 : segments->size();
    if (ref->index() >= n) {
      return fail(Error::IndexOutOfRange, where + ".processed.index",
                  "segment index " + std::to_string(ref->index()) + " but the program has " + std::to_string(n) + " segments");
    }
    const auto* s = segments->Get(ref->index());
    // Extents were checked against the file at load.
    return BlobSource::segment(loader_.get(), header_.segment_base_offset + s->offset(), s->size());
  }
  return fail(Error::InvalidProgram, where + ".processed.location",
              "unknown data location " + std::to_string(static_cast<int>(ref->location())));
}

}  // namespace trtx::program
