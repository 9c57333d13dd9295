#include "blob_vectors.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "json_writer.h"
#include "trtx/backend/tensorrt_blob.h"
#include "trtx/runtime/json.h"

namespace trtx::cli {

// The ExecuTorch integration (src/integration/).
using integration::JsonWriter;

namespace {
bool decode_hex(const std::string& hex, std::vector<uint8_t>& out) {
  if (hex.size() % 2 != 0) return false;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return 10 + c - 'a';
    if (c >= 'A' && c <= 'F') return 10 + c - 'A';
    return -1;
  };
  out.clear();
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = nibble(hex[i]);
    int lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out.push_back(static_cast<uint8_t>(hi * 16 + lo));
  }
  return true;
}

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "trtx-runner parse-blob-vectors: %s\n", msg.c_str());
  return 2;
}
}  // namespace

int parse_blob_vectors_command(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return usage_error("cannot read " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  auto doc = json::parse(ss.str());
  if (!doc.ok())
    return usage_error(path + ": not JSON (" + doc.failure().location + ": " + doc.failure().message + ")");
  const json::Value* version = doc->find("version");
  const json::Value* vectors = doc->find("vectors");
  if (version == nullptr || !version->is_integer || version->integer != 1) {
    return usage_error(path + ": expected \"version\": 1");
  }
  if (vectors == nullptr || !vectors->is(json::Type::Array))
    return usage_error(path + ": expected a \"vectors\" array");

  JsonWriter w;
  w.begin_object();
  w.field("file", path);
  w.key("vectors");
  w.begin_array();
  uint64_t passed = 0, failed = 0;
  for (size_t i = 0; i < vectors->array.size(); ++i) {
    const json::Value& v = vectors->array[i];
    const json::Value* name = v.find("name");
    const json::Value* hex = v.find("hex");
    const json::Value* expect = v.find("expect");
    if (name == nullptr || !name->is(json::Type::String) || hex == nullptr || !hex->is(json::Type::String) ||
        expect == nullptr || !expect->is(json::Type::String)) {
      return usage_error(path + ": vectors[" + std::to_string(i) + "] needs string name, hex and expect");
    }
    if (expect->string != "ok" && error_from_name(expect->string) == Error::Ok) {
      return usage_error(path + ": vectors[" + std::to_string(i) + "] expects unknown code '" + expect->string + "'");
    }
    std::vector<uint8_t> bytes;
    if (!decode_hex(hex->string, bytes)) {
      return usage_error(path + ": vectors[" + std::to_string(i) + "] has malformed hex");
    }
    auto parsed = backend::parse_trt_blob(bytes.data(), bytes.size(), "blob");
    std::string actual = parsed.ok() ? "ok" : error_name(parsed.error());
    bool pass = actual == expect->string;
    (pass ? passed : failed)++;
    w.begin_object();
    w.field("name", name->string);
    w.field("expect", expect->string);
    w.field("actual", actual);
    w.field("pass", pass);
    if (!parsed.ok()) {
      w.field("location", parsed.failure().location);
      w.field("message", parsed.failure().message);
    }
    w.end_object();
  }
  w.end_array();
  w.field("passed", passed);
  w.field("failed", failed);
  w.end_object();
  std::fwrite(w.str().data(), 1, w.str().size(), stdout);
  return failed == 0 ? 0 : 1;
}

}  // namespace trtx::cli
