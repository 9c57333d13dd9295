// A minimal test harness (no framework dependency): TEST(name) registers a
// case, CHECK* record failures and continue, and trtx_test_main() runs every
// case and returns non-zero if any check failed.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace trtx::test {

struct Case {
  const char* name;
  std::function<void()> fn;
};

inline std::vector<Case>& cases() {
  static std::vector<Case> c;
  return c;
}

inline int& failures() {
  static int f = 0;
  return f;
}

struct Registrar {
  Registrar(const char* name, std::function<void()> fn) { cases().push_back(Case{name, std::move(fn)}); }
};

inline void report_failure(const char* file, int line, const std::string& what) {
  ++failures();
  std::fprintf(stderr, "%s:%d: FAILED: %s\n", file, line, what.c_str());
}

inline int run_all(const char* filter = nullptr) {
  int ran = 0;
  for (const auto& c : cases()) {
    if (filter != nullptr && std::string(c.name).find(filter) == std::string::npos) continue;
    int before = failures();
    c.fn();
    ++ran;
    std::fprintf(stderr, "[%s] %s\n", failures() == before ? " ok " : "FAIL", c.name);
  }
  std::fprintf(stderr, "%d cases, %d failed checks\n", ran, failures());
  return failures() == 0 && ran > 0 ? 0 : 1;
}

}  // namespace trtx::test

#define TRTX_TEST_CAT2(a, b) a##b
#define TRTX_TEST_CAT(a, b) TRTX_TEST_CAT2(a, b)
#define TEST(name)                                                             \
  static void name();                                                          \
  static ::trtx::test::Registrar TRTX_TEST_CAT(registrar_, name)(#name, name); \
  static void name()

#define CHECK(cond)                                                                    \
  do {                                                                                 \
    if (!(cond)) ::trtx::test::report_failure(__FILE__, __LINE__, "CHECK(" #cond ")"); \
  } while (0)

#define CHECK_EQ(a, b)                                                              \
  do {                                                                              \
    auto trtx_a_ = (a);                                                             \
    auto trtx_b_ = (b);                                                             \
    if (!(trtx_a_ == trtx_b_)) {                                                    \
      ::trtx::test::report_failure(__FILE__, __LINE__, "CHECK_EQ(" #a ", " #b ")"); \
    }                                                                               \
  } while (0)

// Checks a Result/Status is ok, printing its failure otherwise.
#define CHECK_OK(expr)                                                                                                 \
  do {                                                                                                                 \
    const auto& trtx_r_ = (expr);                                                                                      \
    if (!trtx_r_.ok()) {                                                                                               \
      ::trtx::test::report_failure(__FILE__, __LINE__,                                                                 \
                                   std::string("CHECK_OK(" #expr "): ") + ::trtx::error_name(trtx_r_.error()) + ": " + \
                                       trtx_r_.failure().location + ": " + trtx_r_.failure().message);                 \
    }                                                                                                                  \
  } while (0)

// Checks a Result/Status failed with `code`.
#define CHECK_ERR(expr, code)                                                                                        \
  do {                                                                                                               \
    const auto& trtx_r_ = (expr);                                                                                    \
    if (trtx_r_.ok()) {                                                                                              \
      ::trtx::test::report_failure(__FILE__, __LINE__, "CHECK_ERR(" #expr "): succeeded, expected " #code);          \
    } else if (trtx_r_.error() != (code)) {                                                                          \
      ::trtx::test::report_failure(__FILE__, __LINE__,                                                               \
                                   std::string("CHECK_ERR(" #expr "): got ") + ::trtx::error_name(trtx_r_.error()) + \
                                       " (" + trtx_r_.failure().message + "), expected " #code);                     \
    }                                                                                                                \
  } while (0)
