// Result<T>: a value or a Failure, never both. Modelled on ExecuTorch's
// runtime Result (ok(), error(), get()), carrying a location and message.
#pragma once

#include <cassert>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

#include "trtx/runtime/error.h"

namespace trtx {

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT
  Result(Failure f) : v_(std::in_place_index<1>, std::move(f)) {}    // NOLINT

  bool ok() const { return v_.index() == 0; }
  Error error() const { return ok() ? Error::Ok : std::get<1>(v_).code; }
  const Failure& failure() const {
    assert(!ok());
    return std::get<1>(v_);
  }
  Failure take_failure() {
    assert(!ok());
    return std::move(std::get<1>(v_));
  }

  T& get() {
    assert(ok());
    return std::get<0>(v_);
  }
  const T& get() const {
    assert(ok());
    return std::get<0>(v_);
  }
  T& operator*() { return get(); }
  const T& operator*() const { return get(); }
  T* operator->() { return &get(); }
  const T* operator->() const { return &get(); }

 private:
  std::variant<T, Failure> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Failure f) : f_(std::move(f)) {}  // NOLINT

  bool ok() const { return !f_.has_value(); }
  Error error() const { return ok() ? Error::Ok : f_->code; }
  const Failure& failure() const {
    assert(!ok());
    return *f_;
  }
  Failure take_failure() {
    assert(!ok());
    return std::move(*f_);
  }

 private:
  std::optional<Failure> f_;
};

using Status = Result<void>;

inline Status ok_status() { return Status(); }

}  // namespace trtx

// Propagates a failure from an expression yielding Result<...>.
#define TRTX_CHECK_OK(expr)               \
  do {                                    \
    auto trtx_status_ = (expr);           \
    if (!trtx_status_.ok()) {             \
      return trtx_status_.take_failure(); \
    }                                     \
  } while (0)

#define TRTX_CONCAT_INNER_(a, b) a##b
#define TRTX_CONCAT_(a, b) TRTX_CONCAT_INNER_(a, b)

// `TRTX_ASSIGN_OR_RETURN(auto x, f())` binds the value or returns the failure.
#define TRTX_ASSIGN_OR_RETURN(lhs, expr) TRTX_ASSIGN_OR_RETURN_IMPL_(TRTX_CONCAT_(trtx_result_, __LINE__), lhs, expr)
#define TRTX_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) {                                  \
    return tmp.take_failure();                      \
  }                                                 \
  lhs = std::move(tmp.get())
