// The runner's one test harness (no framework dependency): TEST(name)
// registers a case; CHECK* record a failure with file:line (CHECK_EQ with
// both values, CHECK_OK / CHECK_ERR with the Failure's code and message) and
// go on with the case; run_all() runs every case, or those whose name
// contains `filter`, and returns non-zero if a check failed or none ran
// (ctest reads the exit status).
#pragma once

#include <cstdio>
#include <functional>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "trtx/runtime/error.h"

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

template <typename T, typename = void>
struct Printable : std::false_type {};
template <typename T>
struct Printable<T, std::void_t<decltype(std::declval<std::ostream&>() << std::declval<const T&>())>> : std::true_type {
};

/// A value as a check's failure shows it; "?" for a type with no operator<<.
template <typename T>
std::string show(const T& value) {
  if constexpr (std::is_enum_v<T>) {
    return std::to_string(static_cast<long long>(value));
  } else if constexpr (Printable<T>::value) {
    std::ostringstream out;
    out << value;
    return out.str();
  } else {
    return "?";
  }
}

template <typename A, typename B>
std::string describe_not_equal(const char* a, const char* b, const A& va, const B& vb) {
  return std::string("CHECK_EQ(") + a + ", " + b + "): " + show(va) + " != " + show(vb);
}

inline int run_all(const char* filter = nullptr) {
  int ran = 0;
  int failed_cases = 0;
  for (const auto& c : cases()) {
    if (filter != nullptr && std::string(c.name).find(filter) == std::string::npos) continue;
    int before = failures();
    c.fn();
    ++ran;
    if (failures() != before) ++failed_cases;
    std::fprintf(stderr, "[%s] %s\n", failures() == before ? " ok " : "FAIL", c.name);
  }
  std::fprintf(stderr, "%d cases, %d failed (%d failed checks)\n", ran, failed_cases, failures());
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

#define CHECK_EQ(a, b)                                                                                              \
  do {                                                                                                              \
    /* copies: a reference into a temporary (fake.calls()[i].bytes) would dangle past the full-expression */        \
    const auto trtx_a_ = (a);                                                                                       \
    const auto trtx_b_ = (b);                                                                                       \
    if (!(trtx_a_ == trtx_b_)) {                                                                                    \
      ::trtx::test::report_failure(__FILE__, __LINE__, ::trtx::test::describe_not_equal(#a, #b, trtx_a_, trtx_b_)); \
    }                                                                                                               \
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
