#include "json_writer.h"

#include <cmath>
#include <cstdio>

#include "trtx/runtime/json.h"

namespace trtx::integration {

void JsonWriter::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!has_items_.empty()) {
    if (has_items_.back()) out_ += ',';
    has_items_.back() = true;
    out_ += '\n';
    out_.append(has_items_.size() * 2, ' ');
  }
}

void JsonWriter::open(char c) {
  separate();
  out_ += c;
  has_items_.push_back(false);
}

void JsonWriter::close(char c) {
  bool had = has_items_.back();
  has_items_.pop_back();
  if (had) {
    out_ += '\n';
    out_.append(has_items_.size() * 2, ' ');
  }
  out_ += c;
  if (has_items_.empty()) out_ += '\n';
}

void JsonWriter::key(std::string_view k) {
  separate();
  json::append_quoted(out_, k);
  out_ += ": ";
  after_key_ = true;
}

void JsonWriter::raw(const std::string& text) {
  separate();
  out_ += text;
}

void JsonWriter::value(double v) {
  // JSON has no NaN or infinity.
  if (!std::isfinite(v)) {
    raw("null");
    return;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  raw(buf);
}

void JsonWriter::value(std::string_view s) {
  separate();
  json::append_quoted(out_, s);
}

void JsonWriter::field_strings(std::string_view k, const std::vector<std::string>& v) {
  key(k);
  begin_array();
  for (const auto& s : v) value(s);
  end_array();
}

}  // namespace trtx::integration
