// A small indented JSON writer for the runner's report (internal).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trtx::integration {

class JsonWriter {
 public:
  void begin_object() { open('{'); }
  void end_object() { close('}'); }
  void begin_array() { open('['); }
  void end_array() { close(']'); }
  void key(std::string_view k);

  void value(std::string_view s);
  void value(const char* s) { value(std::string_view(s)); }
  void value(const std::string& s) { value(std::string_view(s)); }
  void value(bool b) { raw(b ? "true" : "false"); }
  void value(int v) { raw(std::to_string(v)); }
  void value(int64_t v) { raw(std::to_string(v)); }
  void value(uint64_t v) { raw(std::to_string(v)); }
  /// Finite values with three decimals (a time in microseconds).
  void value(double v);
  void null() { raw("null"); }

  template <typename T>
  void field(std::string_view k, const T& v) {
    key(k);
    value(v);
  }
  void field_null(std::string_view k) {
    key(k);
    null();
  }
  void field_strings(std::string_view k, const std::vector<std::string>& v);

  const std::string& str() const { return out_; }

 private:
  void open(char c);
  void close(char c);
  void raw(const std::string& text);
  void separate();
  std::string out_;
  std::vector<bool> has_items_;
  bool after_key_ = false;
};

}  // namespace trtx::integration
