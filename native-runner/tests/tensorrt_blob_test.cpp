// The TensorRT blob parser: one test per refusal, the u64 wrap, the check
// order, and that every accepted blob's fields are what the bytes say.
#include "trtx/backend/tensorrt_blob.h"

#include <cstring>
#include <string>
#include <vector>

#include "support/blob_builder.h"
#include "support/check.h"

using trtx::Error;
using trtx::backend::parse_trt_blob;
using trtx::test::make_trt_blob;

namespace {

const std::string kBindings = R"({"name":"x","dtype":"float32","shape":[1,4],"is_input":true},)"
                              R"({"name":"cache","dtype":"float32","shape":[2,4],"is_input":true},)"
                              R"({"name":"y","dtype":"float32","shape":[1,4],"is_input":false},)"
                              R"({"name":"cache_out","dtype":"float32","shape":[2,4],"is_input":false})";

std::string md(const std::string& bindings, const std::string& aliases) {
  std::string s = "{\"io_bindings\":[" + bindings + "]";
  if (!aliases.empty()) s += ",\"aliased_io\":[" + aliases + "]";
  return s + ",\"hardware_compatible\":false,\"device_id\":0}";
}

const std::vector<uint8_t> kEngine(48, 0xAB);

trtx::Error code_of(const std::vector<uint8_t>& blob) {
  auto r = parse_trt_blob(blob.data(), blob.size(), "blob");
  return r.ok() ? Error::Ok : r.error();
}

std::vector<uint8_t> good_tr02() {
  return make_trt_blob("TR02", md(kBindings, R"({"output":"cache_out","input":"cache","kind":"kv_cache_update"})"),
                       kEngine);
}

void put32(std::vector<uint8_t>& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}
void put64(std::vector<uint8_t>& b, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace

TEST(accepts_a_well_formed_tr02_blob) {
  auto blob = good_tr02();
  auto r = parse_trt_blob(blob.data(), blob.size(), "blob");
  CHECK_OK(r);
  if (!r.ok()) return;
  CHECK(r->header.aliased_magic);
  CHECK_EQ(r->bindings.size(), size_t(4));
  CHECK_EQ(r->inputs.size(), size_t(2));
  CHECK_EQ(r->outputs.size(), size_t(2));
  CHECK_EQ(r->aliased_io.size(), size_t(1));
  CHECK_EQ(r->aliased_io[0].output_binding, size_t(3));
  CHECK_EQ(r->aliased_io[0].input_binding, size_t(1));
  CHECK_EQ(r->aliased_input_of(3), 1L);
  CHECK_EQ(r->aliased_input_of(2), -1L);
  CHECK_EQ(r->header.engine_size, uint64_t(48));
  CHECK_EQ(r->header.engine_offset % 16, 0u);
  CHECK_EQ(r->bindings[0].shape.size(), size_t(2));
}

TEST(accepts_tr01_without_aliasing_and_with_an_empty_alias_list) {
  CHECK_EQ(code_of(make_trt_blob("TR01", md(kBindings, ""), kEngine)), Error::Ok);
  auto empty = make_trt_blob("TR01", "{\"io_bindings\":[" + kBindings + "],\"aliased_io\":[]}", kEngine);
  CHECK_EQ(code_of(empty), Error::Ok);
}

TEST(refuses_a_truncated_header) {
  auto blob = good_tr02();
  for (size_t n = 0; n < 32; ++n) {
    std::vector<uint8_t> cut(blob.begin(), blob.begin() + static_cast<long>(n));
    CHECK_EQ(code_of(cut), Error::TRT_BLOB_TRUNCATED);
  }
}

TEST(refuses_an_unknown_magic) {
  auto blob = good_tr02();
  std::memcpy(blob.data(), "TR03", 4);
  CHECK_EQ(code_of(blob), Error::TRT_BLOB_MAGIC);
  std::memcpy(blob.data(), "ftrt", 4);
  CHECK_EQ(code_of(blob), Error::TRT_BLOB_MAGIC);
}

TEST(refuses_metadata_inside_the_header) {
  auto blob = good_tr02();
  put32(blob, 4, 31);
  CHECK_EQ(code_of(blob), Error::TRT_BLOB_METADATA_IN_HEADER);
  put32(blob, 4, 0);
  CHECK_EQ(code_of(blob), Error::TRT_BLOB_METADATA_IN_HEADER);
}

TEST(refuses_metadata_past_the_blob) {
  auto blob = good_tr02();
  put32(blob, 8, static_cast<uint32_t>(blob.size()));
  CHECK_EQ(code_of(blob), Error::TRT_BLOB_METADATA_EXTENT);
  auto b2 = good_tr02();
  put32(b2, 4, static_cast<uint32_t>(b2.size() + 1));
  CHECK_EQ(code_of(b2), Error::TRT_BLOB_METADATA_EXTENT);
  auto b3 = good_tr02();
  put32(b3, 8, 0xFFFFFFFFu);
  CHECK_EQ(code_of(b3), Error::TRT_BLOB_METADATA_EXTENT);
}

TEST(refuses_an_engine_past_the_blob_and_never_wraps) {
  auto blob = good_tr02();
  put64(blob, 16, 49);
  CHECK_EQ(code_of(blob), Error::TRT_BLOB_ENGINE_EXTENT);
  // offset + size wraps to a small number in 64 bits; subtraction catches it.
  uint32_t off = 0;
  std::memcpy(&off, blob.data() + 12, 4);
  put64(blob, 16, ~uint64_t(0) - off + 1);
  CHECK_EQ(code_of(blob), Error::TRT_BLOB_ENGINE_EXTENT);
  put64(blob, 16, ~uint64_t(0));
  CHECK_EQ(code_of(blob), Error::TRT_BLOB_ENGINE_EXTENT);
  auto b2 = good_tr02();
  put32(b2, 12, 0xFFFFFFF0u);
  CHECK_EQ(code_of(b2), Error::TRT_BLOB_ENGINE_EXTENT);
}

TEST(refuses_metadata_that_does_not_end_before_the_engine) {
  auto blob = good_tr02();
  uint32_t off = 0;
  std::memcpy(&off, blob.data() + 12, 4);
  // Engine moved back into the metadata.
  put32(blob, 12, 32);
  put64(blob, 16, 16);
  CHECK_EQ(code_of(blob), Error::TRT_BLOB_OVERLAP);
  // Metadata placed after the engine.
  auto b2 = make_trt_blob("TR01", "{\"io_bindings\":[]}", std::vector<uint8_t>(64, 1));
  put32(b2, 12, 48);
  put64(b2, 16, 16);
  put32(b2, 4, 64);
  put32(b2, 8, 8);
  CHECK_EQ(code_of(b2), Error::TRT_BLOB_OVERLAP);
}

TEST(refuses_an_unaligned_engine) {
  std::string meta = md(kBindings, "");
  auto blob = make_trt_blob("TR01", meta, kEngine);
  uint32_t off = 0;
  std::memcpy(&off, blob.data() + 12, 4);
  put32(blob, 12, off + 1);
  put64(blob, 16, 16);
  CHECK_EQ(code_of(blob), Error::TRT_BLOB_ENGINE_ALIGN);
}

TEST(header_checks_run_in_the_documented_order) {
  // Metadata inside the header and an unaligned engine: the header refusal wins.
  auto blob = good_tr02();
  put32(blob, 4, 8);
  put32(blob, 12, 33);
  CHECK_EQ(code_of(blob), Error::TRT_BLOB_METADATA_IN_HEADER);
  // Misalignment is reported before any extent or overlap.
  auto b2 = good_tr02();
  put32(b2, 12, 33);
  put64(b2, 16, ~uint64_t(0));
  CHECK_EQ(code_of(b2), Error::TRT_BLOB_ENGINE_ALIGN);
  // An engine past the blob that also swallows the metadata: extent first.
  auto b3 = good_tr02();
  put32(b3, 12, 32);
  put64(b3, 16, b3.size());
  CHECK_EQ(code_of(b3), Error::TRT_BLOB_ENGINE_EXTENT);
}

TEST(refuses_metadata_that_is_not_the_expected_json) {
  const char* bad[] = {
      "",
      "[]",
      "{",
      "{\"io_bindings\":{}}",
      "{}",
      "{\"io_bindings\":[1]}",
      "{\"io_bindings\":[{\"name\":\"x\"}]}",                 // is_input missing
      "{\"io_bindings\":[{\"name\":1,\"is_input\":true}]}",   // name not a string
      "{\"io_bindings\":[{\"name\":\"x\",\"is_input\":1}]}",  // is_input not a bool
      "{\"io_bindings\":[{\"name\":\"x\",\"is_input\":true,\"shape\":[1.5]}]}",
      "{\"io_bindings\":[{\"name\":\"x\",\"is_input\":true,\"shape\":[\"1\"]}]}",
      "{\"io_bindings\":[{\"is_input\":true}]}",  // name missing
      "{\"io_bindings\":[],\"serialized_metadata\":null}",
      "{\"io_bindings\":[],\"target_platform\":[]}",
      "{\"io_bindings\":[],\"device_id\":2147483648}",
      "{\"io_bindings\":[],\"aliased_io\":{}}",
      "{\"io_bindings\":[],\"aliased_io\":[{\"output\":1,\"input\":\"x\"}]}",
      "{\"io_bindings\":[],\"device_id\":\"0\"}",
      "{\"io_bindings\":[],\"hardware_compatible\":1}",
      "{\"io_bindings\":[],\"io_bindings\":[]}",
  };
  for (const char* m : bad) {
    auto blob = make_trt_blob("TR01", m, kEngine);
    if (code_of(blob) != Error::TRT_BLOB_METADATA_JSON) {
      trtx::test::report_failure(__FILE__, __LINE__, std::string("not TRT_BLOB_METADATA_JSON: ") + m);
    }
  }
}

TEST(refuses_empty_nul_and_repeated_binding_names) {
  auto empty = make_trt_blob("TR01", R"({"io_bindings":[{"name":"","is_input":true}]})", kEngine);
  CHECK_EQ(code_of(empty), Error::TRT_BINDING_NAME_EMPTY);
  auto nul = make_trt_blob("TR01", R"({"io_bindings":[{"name":"x\u0000y","is_input":true}]})", kEngine);
  CHECK_EQ(code_of(nul), Error::TRT_BINDING_NAME_NUL);
  auto only_nul = make_trt_blob("TR01", R"({"io_bindings":[{"name":"\u0000","is_input":true}]})", kEngine);
  CHECK_EQ(code_of(only_nul), Error::TRT_BINDING_NAME_NUL);
  // Inputs and outputs share one name space.
  auto dup =
      make_trt_blob("TR01", R"({"io_bindings":[{"name":"x","is_input":true},{"name":"x","is_input":false}]})", kEngine);
  CHECK_EQ(code_of(dup), Error::TRT_BINDING_DUPLICATE);
}

TEST(refuses_each_malformed_alias) {
  auto with = [](const std::string& alias) { return code_of(make_trt_blob("TR02", md(kBindings, alias), kEngine)); };
  CHECK_EQ(with(R"({"input":"cache","kind":"kv_cache_update"})"), Error::TRT_ALIAS_MISSING_SIDE);
  CHECK_EQ(with(R"({"output":"cache_out","kind":"kv_cache_update"})"), Error::TRT_ALIAS_MISSING_SIDE);
  CHECK_EQ(with(R"({"output":"","input":"cache"})"), Error::TRT_ALIAS_MISSING_SIDE);
  CHECK_EQ(with(R"({"output":"nope","input":"cache"})"), Error::TRT_ALIAS_UNKNOWN_BINDING);
  CHECK_EQ(with(R"({"output":"cache_out","input":"nope"})"), Error::TRT_ALIAS_UNKNOWN_BINDING);
  CHECK_EQ(with(R"({"output":"cache_out","input":"cache\u0000"})"), Error::TRT_ALIAS_UNKNOWN_BINDING);
  CHECK_EQ(with(R"({"output":"cache","input":"x"})"), Error::TRT_ALIAS_DIRECTION);
  CHECK_EQ(with(R"({"output":"cache_out","input":"y"})"), Error::TRT_ALIAS_DIRECTION);
  CHECK_EQ(with(R"({"output":"cache_out","input":"cache"},{"output":"cache_out","input":"x"})"),
           Error::TRT_ALIAS_DUPLICATE_OUTPUT);
  // The exact repeat is a duplicate output too (the inflated-count bug).
  CHECK_EQ(with(R"({"output":"cache_out","input":"cache"},{"output":"cache_out","input":"cache"})"),
           Error::TRT_ALIAS_DUPLICATE_OUTPUT);
  CHECK_EQ(with(R"({"output":"cache_out","input":"cache"},{"output":"y","input":"cache"})"),
           Error::TRT_ALIAS_DUPLICATE_INPUT);
  CHECK_EQ(with(R"({"output":"cache_out","input":"cache","kind":"weights"})"), Error::TRT_ALIAS_KIND);
  CHECK_EQ(with(R"({"output":"cache_out","input":"cache","kind":"User"})"), Error::TRT_ALIAS_KIND);
  // The kind is checked before the names resolve.
  CHECK_EQ(with(R"({"output":"nope","input":"cache","kind":"weights"})"), Error::TRT_ALIAS_KIND);
  CHECK_EQ(with(R"({"output":"cache_out","input":"cache","kind":"user"})"), Error::Ok);
  // An absent or empty kind reads as kv_cache_update, as upstream reads it.
  CHECK_EQ(with(R"({"output":"cache_out","input":"cache"})"), Error::Ok);
  CHECK_EQ(with(R"({"output":"cache_out","input":"cache","kind":""})"), Error::Ok);
}

TEST(refuses_aliasing_in_a_tr01_blob) {
  auto blob = make_trt_blob("TR01", md(kBindings, R"({"output":"cache_out","input":"cache"})"), kEngine);
  CHECK_EQ(code_of(blob), Error::TRT_ALIAS_IN_TR01);
  // Before any alias entry is looked at.
  auto bad_entry = make_trt_blob("TR01", md(kBindings, R"({"output":"nope"})"), kEngine);
  CHECK_EQ(code_of(bad_entry), Error::TRT_ALIAS_IN_TR01);
}

TEST(accepts_negative_device_ids_and_shape_extents) {
  auto blob = make_trt_blob(
      "TR01", R"({"io_bindings":[{"name":"x","shape":[-1,8],"is_input":true}],"device_id":-1,"target_platform":"x"})",
      kEngine);
  CHECK_EQ(code_of(blob), Error::Ok);
}

TEST(locations_name_the_field) {
  auto blob =
      make_trt_blob("TR01", R"({"io_bindings":[{"name":"a","is_input":true},{"name":"","is_input":true}]})", kEngine);
  auto r = parse_trt_blob(blob.data(), blob.size(), "forward.delegates[0].blob");
  CHECK(!r.ok());
  if (!r.ok()) CHECK_EQ(r.failure().location, std::string("forward.delegates[0].blob.metadata.io_bindings[1].name"));
}

TEST(no_single_byte_change_crashes_the_parser) {
  auto blob = good_tr02();
  for (size_t i = 0; i < blob.size(); ++i) {
    for (uint8_t x : {uint8_t(0x01), uint8_t(0x80), uint8_t(0xFF)}) {
      auto m = blob;
      m[i] ^= x;
      (void)code_of(m);
    }
  }
  CHECK(true);
}

TEST(names_only_bindings_record_no_dtype_and_no_shape) {
  // The real export writes dtype "" and shape [] (backend.py preprocess):
  // neither is a recorded type, so nothing is compared against the tensors.
  const std::string names_only = R"({"name":"x","dtype":"","shape":[],"is_input":true},{"name":"y","is_input":false})";
  auto blob = make_trt_blob("TR01", md(names_only, ""), kEngine);
  auto r = parse_trt_blob(blob.data(), blob.size(), "blob");
  CHECK_OK(r);
  if (!r.ok()) return;
  for (const auto& b : r->bindings) CHECK(!b.has_dtype && !b.has_shape);
  auto typed =
      make_trt_blob("TR01", md(R"({"name":"x","dtype":"float32","shape":[1,4],"is_input":true})", ""), kEngine);
  auto t = parse_trt_blob(typed.data(), typed.size(), "blob");
  CHECK_OK(t);
  if (t.ok()) CHECK(t->bindings[0].has_dtype && t->bindings[0].has_shape);
}

TEST(refuses_what_torch_tensorrt_would_read_differently) {
  // Escapes upstream does not decode, keys before io_bindings, key text as a value.
  CHECK_EQ(code_of(make_trt_blob("TR01", md(R"({"name":"x\u00e9","is_input":true})", ""), kEngine)),
           Error::TRT_NAME_ESCAPED);
  CHECK_EQ(code_of(make_trt_blob("TR01", md(R"({"name":"a\nb","is_input":true})", ""), kEngine)),
           Error::TRT_NAME_ESCAPED);
  CHECK_EQ(code_of(make_trt_blob("TR01", md(R"({"name":"q\"\\\/","is_input":true})", ""), kEngine)), Error::Ok);
  CHECK_EQ(code_of(make_trt_blob("TR01", R"({"device_id":2,"io_bindings":[{"name":"x","is_input":true}]})", kEngine)),
           Error::TRT_BLOB_KEY_ORDER);
  CHECK_EQ(code_of(make_trt_blob("TR01", R"({"device_id":0,"io_bindings":[{"name":"x","is_input":true}]})", kEngine)),
           Error::Ok);
  CHECK_EQ(code_of(make_trt_blob(
               "TR02", R"({"aliased_io":[{"output":"cache_out","input":"cache"}],"io_bindings":[)" + kBindings + "]}",
               kEngine)),
           Error::TRT_BLOB_KEY_ORDER);
  CHECK_EQ(
      code_of(make_trt_blob(
          "TR01",
          R"({"note":"io_bindings","z":[{"name":"z","is_input":true}],"io_bindings":[{"name":"x","is_input":true}]})",
          kEngine)),
      Error::TRT_BLOB_UPSTREAM_MISREAD);
}

int main() { return trtx::test::run_all(); }
