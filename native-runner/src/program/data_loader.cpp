#include "trtx/program/data_loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace trtx::program {

Result<AlignedBuffer> AlignedBuffer::allocate(size_t size) {
  AlignedBuffer b;
  size_t rounded = size == 0 ? kAlignment : size;
  void* p = ::operator new(rounded, std::align_val_t(kAlignment), std::nothrow);
  if (p == nullptr) {
    return fail(Error::MemoryAllocationFailed, "host", "cannot allocate " + std::to_string(size) + " bytes");
  }
  b.data_ = static_cast<uint8_t*>(p);
  b.size_ = size;
  return b;
}

AlignedBuffer::AlignedBuffer(AlignedBuffer&& o) noexcept : data_(o.data_), size_(o.size_) {
  o.data_ = nullptr;
  o.size_ = 0;
}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& o) noexcept {
  if (this != &o) {
    if (data_ != nullptr) ::operator delete(data_, std::align_val_t(kAlignment));
    data_ = o.data_;
    size_ = o.size_;
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

AlignedBuffer::~AlignedBuffer() {
  if (data_ != nullptr) ::operator delete(data_, std::align_val_t(kAlignment));
}

Result<AlignedBuffer> DataLoader::load(uint64_t offset, size_t n) const {
  TRTX_ASSIGN_OR_RETURN(AlignedBuffer b, AlignedBuffer::allocate(n));
  TRTX_CHECK_OK(read(offset, n, b.data()));
  return b;
}

Result<std::unique_ptr<FileDataLoader>> FileDataLoader::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return fail(Error::AccessFailed, path, std::string("cannot open: ") + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(Error::AccessFailed, path, "not a regular file");
  }
  return std::unique_ptr<FileDataLoader>(new FileDataLoader(fd, static_cast<uint64_t>(st.st_size), path));
}

FileDataLoader::~FileDataLoader() { ::close(fd_); }

Status FileDataLoader::read(uint64_t offset, size_t n, void* dst) const {
  if (offset > size_ || n > size_ - offset) {
    return fail(Error::ExtentOutOfRange, path_,
                "read of " + std::to_string(n) + " bytes at offset " + std::to_string(offset) + " runs past the file (" +
                    std::to_string(size_) + " bytes)");
  }
  auto* out = static_cast<uint8_t*>(dst);
  size_t done = 0;
  while (done < n) {
    ssize_t got = ::pread(fd_, out + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      return fail(Error::AccessFailed, path_, std::string("read failed: ") + (got < 0 ? std::strerror(errno) : "end of file"));
    }
    done += static_cast<size_t>(got);
  }
  return ok_status();
}

Status BufferDataLoader::read(uint64_t offset, size_t n, void* dst) const {
  if (offset > size_ || n > size_ - offset) {
    return fail(Error::ExtentOutOfRange, "buffer",
                "read of " + std::to_string(n) + " bytes at offset " + std::to_string(offset) + " runs past " +
                    std::to_string(size_) + " bytes");
  }
  if (n != 0) std::memcpy(dst, data_ + offset, n);
  return ok_status();
}

}  // namespace trtx::program
