#include "trtx/backend/tensorrt_blob.h"

#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "trtx/backend/tensorrt_blob_upstream.h"
#include "trtx/runtime/json.h"

namespace trtx::backend {

namespace {

uint32_t u32(const uint8_t* p) {
  return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
}

std::string printable(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\0') {
      out += "\\0";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += '?';
    } else {
      out += c;
    }
  }
  return out;
}

Failure json_error(const std::string& where, const std::string& msg) {
  return fail(Error::TRT_BLOB_METADATA_JSON, where + ".metadata", msg);
}

}  // namespace

long TrtBlob::aliased_input_of(size_t output_binding) const {
  if (output_binding < alias_input_by_binding.size()) return alias_input_by_binding[output_binding];
  for (const auto& a : aliased_io) {
    if (a.output_binding == output_binding) return static_cast<long>(a.input_binding);
  }
  return -1;
}

Result<TrtBlobHeader> parse_trt_blob_header(const uint8_t* data, size_t header_bytes, uint64_t size,
                                            const std::string& where) {
  if (size < kTrtBlobHeaderSize || header_bytes < kTrtBlobHeaderSize) {
    return fail(
        Error::TRT_BLOB_TRUNCATED, where + ".header",
        "blob is " + std::to_string(size) + " bytes; its header alone is " + std::to_string(kTrtBlobHeaderSize));
  }
  TrtBlobHeader h;
  if (std::memcmp(data, "TR02", 4) == 0) {
    h.aliased_magic = true;
  } else if (std::memcmp(data, "TR01", 4) != 0) {
    return fail(Error::TRT_BLOB_MAGIC, where + ".header.magic",
                "magic is '" + printable(std::string_view(reinterpret_cast<const char*>(data), 4)) +
                    "', expected 'TR01' or 'TR02'");
  }
  h.metadata_offset = u32(data + 4);
  h.metadata_size = u32(data + 8);
  h.engine_offset = u32(data + 12);
  h.engine_size = uint64_t(u32(data + 16)) | (uint64_t(u32(data + 20)) << 32);

  // Every extent is checked by subtracting the offset from the bound: the
  // 64-bit engine size comes straight from the file and the sum could wrap.
  if (h.metadata_offset < kTrtBlobHeaderSize) {
    return fail(Error::TRT_BLOB_METADATA_IN_HEADER, where + ".header.metadata_offset",
                "metadata offset " + std::to_string(h.metadata_offset) + " lies inside the " +
                    std::to_string(kTrtBlobHeaderSize) + "-byte header");
  }
  if (h.engine_offset % kTrtEngineAlignment != 0) {
    return fail(Error::TRT_BLOB_ENGINE_ALIGN, where + ".header.engine_offset",
                "engine offset " + std::to_string(h.engine_offset) + " is not " + std::to_string(kTrtEngineAlignment) +
                    "-byte aligned");
  }
  if (h.metadata_offset > size || h.metadata_size > size - h.metadata_offset) {
    return fail(Error::TRT_BLOB_METADATA_EXTENT, where + ".header.metadata_size",
                "metadata [offset " + std::to_string(h.metadata_offset) + ", size " + std::to_string(h.metadata_size) +
                    "] runs past the blob (" + std::to_string(size) + " bytes)");
  }
  if (h.engine_offset > size || h.engine_size > size - h.engine_offset) {
    return fail(Error::TRT_BLOB_ENGINE_EXTENT, where + ".header.engine_size",
                "engine [offset " + std::to_string(h.engine_offset) + ", size " + std::to_string(h.engine_size) +
                    "] runs past the blob (" + std::to_string(size) + " bytes)");
  }
  // The metadata must end at or before the engine (the upstream rule: it
  // precedes the engine, so it can never share bytes with it).
  if (h.metadata_offset > h.engine_offset || h.metadata_size > h.engine_offset - h.metadata_offset) {
    return fail(Error::TRT_BLOB_OVERLAP, where + ".header.engine_offset",
                "metadata [offset " + std::to_string(h.metadata_offset) + ", size " + std::to_string(h.metadata_size) +
                    "] does not end before the engine at offset " + std::to_string(h.engine_offset));
  }
  return h;
}

namespace {

// Type checks for every io_bindings entry first: a malformed document is one
// refusal, whatever its binding names say.
Status check_binding_types(const json::Value& io, const std::string& where) {
  for (size_t i = 0; i < io.array.size(); ++i) {
    const json::Value& b = io.array[i];
    std::string at = "io_bindings[" + std::to_string(i) + "]";
    if (!b.is(json::Type::Object)) return json_error(where, at + " is not an object");
    const json::Value* name = b.find("name");
    if (name == nullptr || !name->is(json::Type::String))
      return json_error(where, at + ".name is missing or not a string");
    const json::Value* is_input = b.find("is_input");
    if (is_input == nullptr || !is_input->is(json::Type::Bool)) {
      return json_error(where, at + ".is_input is missing or not a boolean");
    }
    const json::Value* dtype = b.find("dtype");
    if (dtype != nullptr && !dtype->is(json::Type::String)) return json_error(where, at + ".dtype is not a string");
    const json::Value* shape = b.find("shape");
    if (shape != nullptr) {
      if (!shape->is(json::Type::Array)) return json_error(where, at + ".shape is not an array");
      for (const auto& d : shape->array) {
        if (!d.is(json::Type::Number) || !d.is_integer || !d.int_ok) {
          return json_error(where, at + ".shape holds something other than an integer");
        }
      }
    }
  }
  return ok_status();
}

Status check_alias_types(const json::Value* aliased, const std::string& where) {
  if (aliased == nullptr) return ok_status();
  if (!aliased->is(json::Type::Array)) return json_error(where, "aliased_io is not an array");
  for (size_t i = 0; i < aliased->array.size(); ++i) {
    const json::Value& a = aliased->array[i];
    std::string at = "aliased_io[" + std::to_string(i) + "]";
    if (!a.is(json::Type::Object)) return json_error(where, at + " is not an object");
    for (const char* key : {"output", "input", "kind"}) {
      const json::Value* v = a.find(key);
      if (v != nullptr && !v->is(json::Type::String)) return json_error(where, at + "." + key + " is not a string");
    }
  }
  return ok_status();
}

// The document's scalar fields: hardware_compatible and device_id are kept,
// the two strings only type-checked.
Status read_scalar_fields(const json::Value& root, TrtBlob& blob, const std::string& where) {
  if (const json::Value* hw = root.find("hardware_compatible")) {
    if (!hw->is(json::Type::Bool)) return json_error(where, "hardware_compatible is not a boolean");
    blob.hardware_compatible = hw->boolean;
  }
  if (const json::Value* dev = root.find("device_id")) {
    if (!dev->is(json::Type::Number) || !dev->is_integer || !dev->int_ok || dev->integer < INT32_MIN ||
        dev->integer > INT32_MAX) {
      return json_error(where, "device_id is not an integer in int32 range");
    }
    blob.device_id = dev->integer;
  }
  for (const char* key : {"serialized_metadata", "target_platform"}) {
    const json::Value* v = root.find(key);
    if (v != nullptr && !v->is(json::Type::String)) return json_error(where, std::string(key) + " is not a string");
  }
  return ok_status();
}

using BindingIndex = std::unordered_map<std::string, size_t>;

// Bindings: inputs and outputs share one name space, as in a TensorRT engine.
Status read_bindings(const json::Value& io, TrtBlob& blob, BindingIndex& by_name, const std::string& where) {
  for (size_t i = 0; i < io.array.size(); ++i) {
    const json::Value& b = io.array[i];
    std::string at = where + ".metadata.io_bindings[" + std::to_string(i) + "].name";
    TrtBinding binding;
    binding.name = b.find("name")->string;
    if (binding.name.empty()) return fail(Error::TRT_BINDING_NAME_EMPTY, at, "binding name is empty");
    if (binding.name.find('\0') != std::string::npos) {
      return fail(Error::TRT_BINDING_NAME_NUL, at,
                  "binding name '" + printable(binding.name) + "' contains a NUL byte (TensorRT would see '" +
                      printable(binding.name.c_str()) + "')");
    }
    if (by_name.count(binding.name) != 0) {
      return fail(
          Error::TRT_BINDING_DUPLICATE, at,
          "binding name '" + binding.name + "' repeats io_bindings[" + std::to_string(by_name[binding.name]) + "]");
    }
    by_name.emplace(binding.name, i);
    binding.is_input = b.find("is_input")->boolean;
    if (const json::Value* dtype = b.find("dtype"); dtype != nullptr && !dtype->string.empty()) {
      binding.has_dtype = true;
      binding.dtype = dtype->string;
    }
    // The real export records names only (dtype "", shape []), so an empty
    // shape means "not recorded", as an empty dtype does, never "rank 0".
    if (const json::Value* shape = b.find("shape"); shape != nullptr && !shape->array.empty()) {
      binding.has_shape = true;
      for (const auto& d : shape->array) binding.shape.push_back(d.integer);
    }
    (binding.is_input ? blob.inputs : blob.outputs).push_back(i);
    blob.bindings.push_back(std::move(binding));
  }
  return ok_status();
}

// One aliased_io entry: both sides name bindings of the right direction, its
// kind is known. `at` locates the entry.
Result<TrtAlias> read_alias(const json::Value& a, const TrtBlob& blob, const BindingIndex& by_name,
                            const std::string& at) {
  const json::Value* out = a.find("output");
  const json::Value* in = a.find("input");
  const json::Value* kind = a.find("kind");
  TrtAlias alias;
  alias.output = out == nullptr ? std::string() : out->string;
  alias.input = in == nullptr ? std::string() : in->string;
  if (alias.output.empty() || alias.input.empty()) {
    return fail(Error::TRT_ALIAS_MISSING_SIDE, at,
                std::string("alias entry has no ") + (alias.output.empty() ? "output" : "input") + " binding name");
  }
  // Writers always emit the kind; upstream reads an absent or empty one as
  // the TensorRT-enforced kv_cache_update, and so does this parser.
  alias.kind = kind == nullptr || kind->string.empty() ? std::string("kv_cache_update") : kind->string;
  if (alias.kind != "kv_cache_update" && alias.kind != "user") {
    return fail(Error::TRT_ALIAS_KIND, at + ".kind",
                "unknown alias kind '" + printable(alias.kind) + "' (expected kv_cache_update or user)");
  }
  auto o = by_name.find(alias.output);
  if (o == by_name.end()) {
    return fail(Error::TRT_ALIAS_UNKNOWN_BINDING, at + ".output",
                "'" + printable(alias.output) + "' is not a binding in io_bindings");
  }
  auto n = by_name.find(alias.input);
  if (n == by_name.end()) {
    return fail(Error::TRT_ALIAS_UNKNOWN_BINDING, at + ".input",
                "'" + printable(alias.input) + "' is not a binding in io_bindings");
  }
  if (blob.bindings[o->second].is_input) {
    return fail(Error::TRT_ALIAS_DIRECTION, at + ".output",
                "output side '" + alias.output + "' names an input binding");
  }
  if (!blob.bindings[n->second].is_input) {
    return fail(Error::TRT_ALIAS_DIRECTION, at + ".input", "input side '" + alias.input + "' names an output binding");
  }
  alias.output_binding = o->second;
  alias.input_binding = n->second;
  return alias;
}

// The aliases, each side claimed at most once; a TR01 blob may carry none.
Status read_aliases(const json::Value* aliased, TrtBlob& blob, const BindingIndex& by_name, const std::string& where) {
  if (!blob.header.aliased_magic && aliased != nullptr && !aliased->array.empty()) {
    return fail(Error::TRT_ALIAS_IN_TR01, where + ".header.magic",
                "blob says TR01 (no aliasing) but its metadata carries " + std::to_string(aliased->array.size()) +
                    " aliased_io entries");
  }
  if (aliased == nullptr) return ok_status();
  std::unordered_set<std::string> outputs_claimed;
  std::unordered_set<std::string> inputs_claimed;
  for (size_t i = 0; i < aliased->array.size(); ++i) {
    std::string at = where + ".metadata.aliased_io[" + std::to_string(i) + "]";
    TRTX_ASSIGN_OR_RETURN(TrtAlias alias, read_alias(aliased->array[i], blob, by_name, at));
    if (!outputs_claimed.insert(alias.output).second) {
      return fail(Error::TRT_ALIAS_DUPLICATE_OUTPUT, at + ".output",
                  "output '" + alias.output + "' is already aliased by an earlier entry");
    }
    if (!inputs_claimed.insert(alias.input).second) {
      return fail(Error::TRT_ALIAS_DUPLICATE_INPUT, at + ".input",
                  "input '" + alias.input + "' is already aliased by an earlier entry");
    }
    blob.aliased_io.push_back(std::move(alias));
  }
  return ok_status();
}

}  // namespace

Result<TrtBlob> parse_trt_metadata(const TrtBlobHeader& header, std::string_view text, const std::string& where) {
  json::Limits limits;
  limits.max_depth = 64;
  auto parsed = json::parse(text, limits);
  if (!parsed.ok()) {
    return json_error(
        where, "metadata is not valid JSON (" + parsed.failure().location + ": " + parsed.failure().message + ")");
  }
  const json::Value& root = parsed.get();
  if (!root.is(json::Type::Object)) return json_error(where, "metadata is not a JSON object");

  TrtBlob blob;
  blob.header = header;

  const json::Value* io = root.find("io_bindings");
  if (io == nullptr || !io->is(json::Type::Array)) return json_error(where, "io_bindings is missing or not an array");
  const json::Value* aliased = root.find("aliased_io");
  TRTX_CHECK_OK(check_binding_types(*io, where));
  TRTX_CHECK_OK(check_alias_types(aliased, where));
  TRTX_CHECK_OK(read_scalar_fields(root, blob, where));

  BindingIndex by_name;
  TRTX_CHECK_OK(read_bindings(*io, blob, by_name, where));
  TRTX_CHECK_OK(read_aliases(aliased, blob, by_name, where));
  blob.alias_input_by_binding.assign(blob.bindings.size(), -1);
  for (const auto& a : blob.aliased_io)
    blob.alias_input_by_binding[a.output_binding] = static_cast<long>(a.input_binding);
  // Last: what Torch-TensorRT's own parser would read from the same bytes.
  TRTX_CHECK_OK(check_upstream_agreement(blob, text, where));
  return blob;
}

Result<TrtBlob> parse_trt_blob(const uint8_t* data, size_t size, const std::string& where) {
  TRTX_ASSIGN_OR_RETURN(TrtBlobHeader h, parse_trt_blob_header(data, size, size, where));
  std::string_view json(reinterpret_cast<const char*>(data) + h.metadata_offset, h.metadata_size);
  return parse_trt_metadata(h, json, where);
}

}  // namespace trtx::backend
