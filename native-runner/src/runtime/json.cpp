// The strict JSON reader of trtx/runtime/json.h (what strict means is written
// there); quoting for the writers is json_quote.cpp.
#include "trtx/runtime/json.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_set>

namespace trtx::json {

const Value* Value::find(std::string_view key) const {
  if (type != Type::Object) return nullptr;
  for (const auto& kv : object) {
    if (kv.first == key) return &kv.second;
  }
  return nullptr;
}

namespace {

class Parser {
 public:
  Parser(std::string_view text, const Limits& limits) : s_(text), limits_(limits) {}

  Result<Value> run() {
    if (s_.size() > limits_.max_bytes) {
      return error("document larger than " + std::to_string(limits_.max_bytes) + " bytes");
    }
    skip_ws();
    Value v;
    if (!parse_value(v, 0)) return take();
    skip_ws();
    if (pos_ != s_.size()) return error("unexpected text after the document");
    return v;
  }

 private:
  std::string_view s_;
  Limits limits_;
  size_t pos_ = 0;
  size_t values_ = 0;
  bool failed_ = false;
  Failure failure_;

  Failure error(const std::string& msg) {
    failed_ = true;
    failure_ = fail(Error::InvalidArgument, "byte " + std::to_string(pos_), msg);
    return failure_;
  }
  Failure take() { return failure_; }
  bool bad(const std::string& msg) {
    error(msg);
    return false;
  }

  void skip_ws() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else {
        break;
      }
    }
  }

  bool literal(const char* word) {
    size_t n = std::strlen(word);
    if (s_.size() - pos_ < n || s_.compare(pos_, n, word) != 0) return bad("invalid literal");
    pos_ += n;
    return true;
  }

  // `depth` is the value's own nesting level (the document's root is 0),
  // counted for every value as src/tensorrt/strict-json.ts counts it, so the
  // two readers refuse the same documents.
  bool parse_value(Value& out, size_t depth) {
    if (depth > limits_.max_depth) return bad("nesting deeper than " + std::to_string(limits_.max_depth));
    if (pos_ >= s_.size()) return bad("unexpected end of document");
    // Each value costs a Value (about 150 bytes) for a byte or two of text:
    // the count bounds what a document may cost in memory.
    if (++values_ > limits_.max_values) return bad("more than " + std::to_string(limits_.max_values) + " values");
    char c = s_[pos_];
    switch (c) {
      case '{':
        return parse_object(out, depth);
      case '[':
        return parse_array(out, depth);
      case '"':
        out.type = Type::String;
        return parse_string(out.string);
      case 't':
        out.type = Type::Bool;
        out.boolean = true;
        return literal("true");
      case 'f':
        out.type = Type::Bool;
        out.boolean = false;
        return literal("false");
      case 'n':
        out.type = Type::Null;
        return literal("null");
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return parse_number(out);
        return bad(std::string("unexpected character '") + printable(c) + "'");
    }
  }

  static std::string printable(char c) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) return std::string(1, c);
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", u);
    return buf;
  }

  bool parse_object(Value& out, size_t depth) {
    out.type = Type::Object;
    ++pos_;  // {
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return true;
    }
    // Duplicate keys are found through a set: comparing each key with every
    // earlier one would make an object of n keys cost n^2 comparisons.
    std::unordered_set<std::string> keys;
    while (true) {
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != '"') return bad("expected a string key");
      size_t key_pos = pos_;
      std::string key;
      if (!parse_string(key)) return false;
      if (!keys.insert(key).second) {
        pos_ = key_pos;
        return bad("duplicate key \"" + key + "\"");
      }
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != ':') return bad("expected ':' after a key");
      ++pos_;
      skip_ws();
      Value v;
      if (!parse_value(v, depth + 1)) return false;
      out.object.emplace_back(std::move(key), std::move(v));
      skip_ws();
      if (pos_ >= s_.size()) return bad("unterminated object");
      if (s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (s_[pos_] == '}') {
        ++pos_;
        return true;
      }
      return bad("expected ',' or '}' in an object");
    }
  }

  bool parse_array(Value& out, size_t depth) {
    out.type = Type::Array;
    ++pos_;  // [
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return true;
    }
    while (true) {
      skip_ws();
      Value v;
      if (!parse_value(v, depth + 1)) return false;
      out.array.push_back(std::move(v));
      skip_ws();
      if (pos_ >= s_.size()) return bad("unterminated array");
      if (s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (s_[pos_] == ']') {
        ++pos_;
        return true;
      }
      return bad("expected ',' or ']' in an array");
    }
  }

  bool hex4(uint32_t& out) {
    if (s_.size() - pos_ < 4) return bad("truncated \\u escape");
    out = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s_[pos_ + i];
      uint32_t d;
      if (c >= '0' && c <= '9') {
        d = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        d = 10 + (c - 'a');
      } else if (c >= 'A' && c <= 'F') {
        d = 10 + (c - 'A');
      } else {
        return bad("invalid hex digit in \\u escape");
      }
      out = (out << 4) | d;
    }
    pos_ += 4;
    return true;
  }

  static void put_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  // Validates one UTF-8 sequence starting at pos_ and copies it.
  bool utf8_char(std::string& out) {
    auto b0 = static_cast<unsigned char>(s_[pos_]);
    size_t n;
    uint32_t cp;
    if (b0 < 0x80) {
      n = 1;
      cp = b0;
    } else if ((b0 & 0xE0) == 0xC0) {
      n = 2;
      cp = b0 & 0x1F;
    } else if ((b0 & 0xF0) == 0xE0) {
      n = 3;
      cp = b0 & 0x0F;
    } else if ((b0 & 0xF8) == 0xF0) {
      n = 4;
      cp = b0 & 0x07;
    } else {
      return bad("invalid UTF-8 lead byte");
    }
    if (s_.size() - pos_ < n) return bad("truncated UTF-8 sequence");
    for (size_t i = 1; i < n; ++i) {
      auto b = static_cast<unsigned char>(s_[pos_ + i]);
      if ((b & 0xC0) != 0x80) return bad("invalid UTF-8 continuation byte");
      cp = (cp << 6) | (b & 0x3F);
    }
    static const uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n]) return bad("overlong UTF-8 sequence");
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return bad("invalid UTF-8 code point");
    out.append(s_.data() + pos_, n);
    pos_ += n;
    return true;
  }

  bool parse_string(std::string& out) {
    ++pos_;  // opening quote
    out.clear();
    while (true) {
      if (pos_ >= s_.size()) return bad("unterminated string");
      auto c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20) return bad("unescaped control character in a string");
      if (c != '\\') {
        if (!utf8_char(out)) return false;
        continue;
      }
      ++pos_;
      if (pos_ >= s_.size()) return bad("unterminated escape");
      char e = s_[pos_++];
      switch (e) {
        case '"':
          out.push_back('"');
          break;
        case '\\':
          out.push_back('\\');
          break;
        case '/':
          out.push_back('/');
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'u': {
          uint32_t cp;
          if (!hex4(cp)) return false;
          if (cp >= 0xDC00 && cp <= 0xDFFF) return bad("unpaired low surrogate");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (s_.size() - pos_ < 2 || s_[pos_] != '\\' || s_[pos_ + 1] != 'u') {
              return bad("unpaired high surrogate");
            }
            pos_ += 2;
            uint32_t lo;
            if (!hex4(lo)) return false;
            if (lo < 0xDC00 || lo > 0xDFFF) return bad("unpaired high surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          put_utf8(out, cp);
          break;
        }
        default:
          --pos_;
          return bad("invalid escape");
      }
    }
  }

  bool parse_number(Value& out) {
    size_t start = pos_;
    out.type = Type::Number;
    if (s_[pos_] == '-') ++pos_;
    if (pos_ >= s_.size()) return bad("truncated number");
    if (s_[pos_] == '0') {
      ++pos_;
      if (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') return bad("leading zero in a number");
    } else if (s_[pos_] >= '1' && s_[pos_] <= '9') {
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
    } else {
      return bad("invalid number");
    }
    bool integer = true;
    if (pos_ < s_.size() && s_[pos_] == '.') {
      integer = false;
      ++pos_;
      if (pos_ >= s_.size() || s_[pos_] < '0' || s_[pos_] > '9') return bad("digit expected after '.'");
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      integer = false;
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (pos_ >= s_.size() || s_[pos_] < '0' || s_[pos_] > '9') return bad("digit expected in exponent");
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
    }
    out.text.assign(s_.data() + start, pos_ - start);
    out.is_integer = integer;
    out.number = std::strtod(out.text.c_str(), nullptr);
    if (integer) {
      // Exact int64 conversion, refusing overflow rather than saturating.
      bool neg = out.text[0] == '-';
      uint64_t acc = 0;
      bool fits = true;
      const uint64_t limit = neg ? (uint64_t(1) << 63) : (uint64_t(1) << 63) - 1;
      for (size_t i = neg ? 1 : 0; i < out.text.size(); ++i) {
        uint64_t d = static_cast<uint64_t>(out.text[i] - '0');
        if (acc > (limit - d) / 10) {
          fits = false;
          break;
        }
        acc = acc * 10 + d;
      }
      out.int_ok = fits;
      if (fits) {
        out.integer = neg ? static_cast<int64_t>(0 - acc) : static_cast<int64_t>(acc);
      }
    }
    return true;
  }
};

}  // namespace

Result<Value> parse(std::string_view text, const Limits& limits) {
  Parser p(text, limits);
  return p.run();
}

}  // namespace trtx::json
