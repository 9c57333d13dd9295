// A tiny test harness: TEST registers a function, CHECK* fail the current test
// and return from it, main prints "N passed, N failed" and exits non-zero on
// any failure (ctest reads the exit status).
#pragma once

#include <cstdio>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace trtx_test {

struct Case {
  const char* name;
  void (*run)();
};

inline std::vector<Case>& registry() {
  static std::vector<Case> cases;
  return cases;
}

inline bool& currentFailed() {
  static bool failed = false;
  return failed;
}

struct Registrar {
  Registrar(const char* name, void (*run)()) { registry().push_back(Case{name, run}); }
};

inline void fail(const char* file, int line, const std::string& what) {
  currentFailed() = true;
  std::printf("    %s:%d: %s\n", file, line, what.c_str());
}

template <typename A, typename B>
std::string describeNotEqual(const char* a, const char* b, const A& va, const B& vb) {
  std::ostringstream out;
  out << a << " == " << b << " but " << va << " != " << vb;
  return out.str();
}

inline int runAll() {
  int passed = 0;
  int failed = 0;
  for (const Case& c : registry()) {
    currentFailed() = false;
    c.run();
    if (currentFailed()) {
      ++failed;
      std::printf("FAIL %s\n", c.name);
    } else {
      ++passed;
      std::printf("ok   %s\n", c.name);
    }
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

}  // namespace trtx_test

#define TEST(name)                                              \
  static void name();                                           \
  static ::trtx_test::Registrar name##_registrar(#name, &name); \
  static void name()

#define CHECK(cond)                                              \
  do {                                                           \
    if (!(cond)) {                                               \
      ::trtx_test::fail(__FILE__, __LINE__, "CHECK(" #cond ")"); \
      return;                                                    \
    }                                                            \
  } while (0)

#define CHECK_EQ(a, b)                                                                                \
  do {                                                                                                \
    const auto trtx_va = (a);                                                                         \
    const auto trtx_vb = (b);                                                                         \
    if (!(trtx_va == trtx_vb)) {                                                                      \
      ::trtx_test::fail(__FILE__, __LINE__, ::trtx_test::describeNotEqual(#a, #b, trtx_va, trtx_vb)); \
      return;                                                                                         \
    }                                                                                                 \
  } while (0)

#define TEST_MAIN() \
  int main() { return ::trtx_test::runAll(); }
