#include "trtx/backend/tensorrt_blob_upstream.h"

#include <cstdint>

namespace trtx::backend {

namespace {

constexpr size_t kNpos = std::string_view::npos;

// The walk of TensorRTBlobHeader.cpp, over the same bytes, written from its
// documented behaviour (see the header): strings keep the character after a
// backslash, keys are found by searching their quoted text, aliased_io and the
// scalars are searched for only after the io_bindings array.
class Walk {
 public:
  explicit Walk(std::string_view s) : s_(s) {}

  size_t skip_ws(size_t pos) const {
    while (pos < s_.size() && (s_[pos] == ' ' || s_[pos] == '\t' || s_[pos] == '\n' || s_[pos] == '\r')) ++pos;
    return pos;
  }

  size_t parse_string(size_t pos, std::string& out, bool& lossy) const {
    out.clear();
    if (pos >= s_.size() || s_[pos] != '"') return kNpos;
    ++pos;
    while (pos < s_.size() && s_[pos] != '"') {
      if (s_[pos] == '\\' && pos + 1 < s_.size()) {
        ++pos;
        if (s_[pos] != '"' && s_[pos] != '\\' && s_[pos] != '/') lossy = true;
      }
      out += s_[pos++];
    }
    return pos >= s_.size() ? kNpos : pos + 1;
  }

  size_t skip_value(size_t pos) const {
    pos = skip_ws(pos);
    if (pos >= s_.size()) return kNpos;
    std::string unused;
    bool lossy = false;
    if (s_[pos] == '"') return parse_string(pos, unused, lossy);
    if (s_[pos] == '{' || s_[pos] == '[') {
      // Only the opening bracket's own kind is counted, as upstream does.
      const char open = s_[pos];
      const char close = open == '{' ? '}' : ']';
      int depth = 1;
      ++pos;
      while (pos < s_.size() && depth > 0) {
        if (s_[pos] == '"') {
          pos = parse_string(pos, unused, lossy);
          if (pos == kNpos) return kNpos;
          continue;
        }
        if (s_[pos] == open) {
          ++depth;
        } else if (s_[pos] == close) {
          --depth;
        }
        ++pos;
      }
      return pos;
    }
    while (pos < s_.size() && s_[pos] != ',' && s_[pos] != '}' && s_[pos] != ']' && s_[pos] != ' ' && s_[pos] != '\t' &&
           s_[pos] != '\n' && s_[pos] != '\r') {
      ++pos;
    }
    return pos;
  }

  size_t find(std::string_view needle, size_t from) const { return s_.find(needle, from); }
  bool at(size_t pos, std::string_view word) const {
    return s_.substr(pos < s_.size() ? pos : s_.size(), word.size()) == word;
  }
  char operator[](size_t pos) const { return s_[pos]; }
  size_t size() const { return s_.size(); }

 private:
  std::string_view s_;
};

// One object of io_bindings or aliased_io: calls `field(key, value_pos)` for
// each key, which returns the position after the value (kNpos to fail).
template <typename Field>
size_t walk_object(const Walk& w, size_t pos, bool& lossy, Field field) {
  for (;;) {
    pos = w.skip_ws(pos);
    if (pos >= w.size()) return kNpos;
    if (w[pos] == '}') return pos + 1;
    if (w[pos] == ',') {
      ++pos;
      continue;
    }
    std::string key;
    pos = w.parse_string(pos, key, lossy);
    if (pos == kNpos) return kNpos;
    pos = w.skip_ws(pos);
    if (pos >= w.size() || w[pos] != ':') return kNpos;
    pos = field(key, w.skip_ws(pos + 1));
    if (pos == kNpos) return kNpos;
  }
}

UpstreamReading refuse(const std::string& why) {
  UpstreamReading r;
  r.reason = why;
  return r;
}

// The steps below read from `pos` and leave it after what they read; each
// returns why upstream would refuse the text, or null.

// One io_bindings object (pos is after its '{'): name and is_input.
size_t read_binding_entry(const Walk& w, size_t pos, UpstreamEntry& e) {
  bool saw_name = false;
  pos = walk_object(w, pos, e.lossy_escape, [&](const std::string& key, size_t v) -> size_t {
    if (key == "name") {
      saw_name = true;
      return w.parse_string(v, e.name, e.lossy_escape);
    }
    if (key == "is_input") {
      if (w.at(v, "true")) {
        e.is_input = true;
        return v + 4;
      }
      if (w.at(v, "false")) {
        e.is_input = false;
        return v + 5;
      }
      return kNpos;
    }
    return w.skip_value(v);
  });
  e.kept = saw_name && !e.name.empty();
  return pos;
}

const char* read_bindings(const Walk& w, size_t& pos, UpstreamReading& r) {
  const size_t bindings_at = w.find("\"io_bindings\"", 0);
  if (bindings_at == kNpos) return "no \"io_bindings\" key";
  pos = w.find("[", bindings_at);
  if (pos == kNpos) return "no '[' after \"io_bindings\"";
  ++pos;
  for (;;) {
    pos = w.skip_ws(pos);
    if (pos >= w.size()) return "io_bindings does not end";
    if (w[pos] == ']') {
      ++pos;
      return nullptr;
    }
    if (w[pos] == ',') {
      ++pos;
      continue;
    }
    if (w[pos] != '{') return "io_bindings holds something other than an object";
    UpstreamEntry e;
    pos = read_binding_entry(w, pos + 1, e);
    if (pos == kNpos) return "an io_bindings entry cannot be read";
    r.entries.push_back(std::move(e));
  }
}

// aliased_io, searched for after io_bindings; `pos` stays where it was.
const char* read_aliases(const Walk& w, size_t pos, UpstreamReading& r) {
  const size_t alias_key = w.find("\"aliased_io\"", pos);
  if (alias_key == kNpos) return nullptr;
  r.aliases_found = true;
  size_t apos = w.find("[", alias_key);
  if (apos == kNpos) return "no '[' after \"aliased_io\"";
  ++apos;
  for (;;) {
    apos = w.skip_ws(apos);
    if (apos >= w.size()) return "aliased_io does not end";
    if (w[apos] == ']') return nullptr;
    if (w[apos] == ',') {
      ++apos;
      continue;
    }
    if (w[apos] != '{') return "aliased_io holds something other than an object";
    UpstreamAlias a;
    apos = walk_object(w, apos + 1, a.lossy_escape, [&](const std::string& key, size_t v) -> size_t {
      if (key == "output") return w.parse_string(v, a.output, a.lossy_escape);
      if (key == "input") return w.parse_string(v, a.input, a.lossy_escape);
      if (key == "kind") return w.parse_string(v, a.kind, a.lossy_escape);
      return w.skip_value(v);
    });
    if (apos == kNpos) return "an aliased_io entry cannot be read";
    r.alias_entries.push_back(std::move(a));
  }
}

// The scalars: from the end of io_bindings, the value after the first colon
// that follows the key's quoted text.
const char* read_hardware_compatible(const Walk& w, size_t pos, UpstreamReading& r) {
  const size_t hw = w.find("\"hardware_compatible\"", pos);
  if (hw == kNpos) return nullptr;
  const size_t colon = w.find(":", hw);
  if (colon == kNpos) return "no ':' after \"hardware_compatible\"";
  const size_t v = w.skip_ws(colon + 1);
  if (w.at(v, "true")) {
    r.hardware_compatible = true;
  } else if (!w.at(v, "false")) {
    return "hardware_compatible is not true or false where upstream looks";
  }
  return nullptr;
}

const char* read_device_id(const Walk& w, size_t pos, UpstreamReading& r) {
  const size_t dev = w.find("\"device_id\"", pos);
  if (dev == kNpos) return nullptr;
  r.device_id_found = true;
  const size_t colon = w.find(":", dev);
  if (colon == kNpos) return "no ':' after \"device_id\"";
  size_t v = w.skip_ws(colon + 1);
  bool neg = false;
  if (v < w.size() && w[v] == '-') {
    neg = true;
    ++v;
  }
  // Upstream accumulates in an int; unsigned arithmetic wraps the same way
  // without undefined behaviour.
  uint32_t parsed = 0;
  size_t digits = 0;
  for (; v < w.size() && w[v] >= '0' && w[v] <= '9'; ++v, ++digits) parsed = parsed * 10u + uint32_t(w[v] - '0');
  if (digits == 0) return "device_id is not a number where upstream looks";
  r.device_id = static_cast<int32_t>(neg ? 0u - parsed : parsed);
  return nullptr;
}

}  // namespace

UpstreamReading read_like_upstream(std::string_view json) {
  const Walk w(json);
  UpstreamReading r;
  size_t pos = 0;
  const char* why = read_bindings(w, pos, r);
  if (why == nullptr) why = read_aliases(w, pos, r);
  if (why == nullptr) why = read_hardware_compatible(w, pos, r);
  if (why == nullptr) why = read_device_id(w, pos, r);
  if (why != nullptr) return refuse(why);
  r.ok = true;
  return r;
}

namespace {

std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += (static_cast<unsigned char>(c) < 0x20 ? '?' : c);
  return out + "'";
}

const char* kParser = "Torch-TensorRT's blob parser (TensorRTBlobHeader.cpp)";

}  // namespace

Status check_upstream_agreement(const TrtBlob& blob, std::string_view json, const std::string& where) {
  const UpstreamReading u = read_like_upstream(json);
  const std::string at = where + ".metadata";
  if (!u.ok) {
    return fail(Error::TRT_BLOB_UPSTREAM_MISREAD, at,
                std::string(kParser) + " cannot read this metadata (" + u.reason + ")");
  }
  if (u.entries.size() != blob.bindings.size()) {
    return fail(Error::TRT_BLOB_UPSTREAM_MISREAD, at + ".io_bindings",
                std::string(kParser) + " walks " + std::to_string(u.entries.size()) + " io_bindings entries, not " +
                    std::to_string(blob.bindings.size()));
  }
  for (size_t i = 0; i < blob.bindings.size(); ++i) {
    const TrtBinding& b = blob.bindings[i];
    const UpstreamEntry& e = u.entries[i];
    if (e.kept && e.name == b.name && e.is_input == b.is_input) continue;
    const std::string loc = at + ".io_bindings[" + std::to_string(i) + "].name";
    const std::string seen = e.kept ? quoted(e.name) : std::string("an entry without a name");
    if (e.lossy_escape) {
      return fail(Error::TRT_NAME_ESCAPED, loc,
                  "binding " + quoted(b.name) + " is written with JSON escapes; " + kParser + " reads " + seen +
                      " and TensorRTBackend::init cannot find the engine's binding");
    }
    return fail(Error::TRT_BLOB_UPSTREAM_MISREAD, loc,
                std::string(kParser) + " reads binding " + quoted(b.name) + " as " + seen);
  }

  if (!u.aliases_found) {
    if (!blob.aliased_io.empty()) {
      return fail(Error::TRT_BLOB_KEY_ORDER, at + ".aliased_io",
                  "aliased_io is written before io_bindings; " + std::string(kParser) +
                      " looks for it only after io_bindings and would drop " + std::to_string(blob.aliased_io.size()) +
                      " alias(es)");
    }
  } else {
    if (u.alias_entries.size() != blob.aliased_io.size()) {
      return fail(Error::TRT_BLOB_UPSTREAM_MISREAD, at + ".aliased_io",
                  std::string(kParser) + " reads " + std::to_string(u.alias_entries.size()) +
                      " aliased_io entries, not " + std::to_string(blob.aliased_io.size()));
    }
    for (size_t j = 0; j < blob.aliased_io.size(); ++j) {
      const TrtAlias& a = blob.aliased_io[j];
      const UpstreamAlias& e = u.alias_entries[j];
      const std::string kind = e.kind.empty() ? std::string("kv_cache_update") : e.kind;
      if (e.output == a.output && e.input == a.input && kind == a.kind) continue;
      const std::string loc = at + ".aliased_io[" + std::to_string(j) + "]";
      const std::string seen = "output " + quoted(e.output) + ", input " + quoted(e.input);
      if (e.lossy_escape) {
        return fail(Error::TRT_NAME_ESCAPED, loc,
                    "the entry is written with JSON escapes; " + std::string(kParser) + " reads " + seen);
      }
      return fail(Error::TRT_BLOB_UPSTREAM_MISREAD, loc, std::string(kParser) + " reads the entry as " + seen);
    }
  }

  if (u.device_id != blob.device_id) {
    if (!u.device_id_found) {
      return fail(Error::TRT_BLOB_KEY_ORDER, at + ".device_id",
                  "device_id " + std::to_string(blob.device_id) + " is written before io_bindings; " + kParser +
                      " looks for it only after io_bindings and would use device 0");
    }
    return fail(Error::TRT_BLOB_UPSTREAM_MISREAD, at + ".device_id",
                std::string(kParser) + " reads device_id " + std::to_string(u.device_id) + ", not " +
                    std::to_string(blob.device_id));
  }
  return ok_status();
}

}  // namespace trtx::backend
