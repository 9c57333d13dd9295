// Helpers shared by the device-memory benchmarks (CUDA programs, one result
// set per run). Each program prints a markdown table and appends JSON lines to
// the file named by its first argument.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#define BENCH_CUDA(call)                                                                                    \
  do {                                                                                                      \
    cudaError_t bench_err_ = (call);                                                                        \
    if (bench_err_ != cudaSuccess) {                                                                        \
      std::fprintf(stderr, "%s:%d: %s -> %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(bench_err_)); \
      std::exit(2);                                                                                         \
    }                                                                                                       \
  } while (0)

#define BENCH_LAUNCHED() BENCH_CUDA(cudaGetLastError())

#define BENCH_EXPECT(cond, ...)                \
  do {                                         \
    if (!(cond)) {                             \
      std::printf("CHECK FAILED %s: ", #cond); \
      std::printf(__VA_ARGS__);                \
      std::printf("\n");                       \
      ::bench::failures()++;                   \
    }                                          \
  } while (0)

namespace bench {

constexpr std::uint64_t kMaxThreshold = std::numeric_limits<std::uint64_t>::max();
constexpr std::size_t kMiB = std::size_t(1) << 20;

inline int& failures() {
  static int count = 0;
  return count;
}

inline double nowUs() {
  using namespace std::chrono;
  return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

inline double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0.0 : s / v.size();
}

inline double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  std::size_t i = static_cast<std::size_t>(p * (v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

inline cudaMemPool_t defaultPool(int device = 0) {
  cudaMemPool_t pool = nullptr;
  BENCH_CUDA(cudaDeviceGetDefaultMemPool(&pool, device));
  return pool;
}

inline std::uint64_t poolAttr(cudaMemPoolAttr attr, int device = 0) {
  std::uint64_t value = 0;
  BENCH_CUDA(cudaMemPoolGetAttribute(defaultPool(device), attr, &value));
  return value;
}

inline void setThreshold(std::uint64_t value, int device = 0) {
  BENCH_CUDA(cudaMemPoolSetAttribute(defaultPool(device), cudaMemPoolAttrReleaseThreshold, &value));
}

// Empties the pool and resets its high-water marks to what is in use now.
inline void coldStart(int device = 0) {
  BENCH_CUDA(cudaDeviceSynchronize());
  BENCH_CUDA(cudaMemPoolTrimTo(defaultPool(device), 0));
  std::uint64_t zero = 0;
  BENCH_CUDA(cudaMemPoolSetAttribute(defaultPool(device), cudaMemPoolAttrUsedMemHigh, &zero));
  BENCH_CUDA(cudaMemPoolSetAttribute(defaultPool(device), cudaMemPoolAttrReservedMemHigh, &zero));
}

inline std::size_t deviceUsedBytes() {
  std::size_t freeBytes = 0, total = 0;
  BENCH_CUDA(cudaMemGetInfo(&freeBytes, &total));
  return total - freeBytes;
}

class JsonLines {
 public:
  explicit JsonLines(const char* path) : file_(path ? std::fopen(path, "a") : nullptr) {}
  ~JsonLines() {
    if (file_) std::fclose(file_);
  }
  void line(const char* format, ...) {
    if (!file_) return;
    va_list args;
    va_start(args, format);
    std::vfprintf(file_, format, args);
    va_end(args);
    std::fputc('\n', file_);
    std::fflush(file_);
  }

 private:
  std::FILE* file_;
};

inline int finish(const char* name) {
  std::printf("%s: %d check(s) failed\n", name, failures());
  return failures() == 0 ? 0 : 1;
}

}  // namespace bench
