// The `vectors` array of a shared test-vector file (test/vectors/*.json, the
// files the TypeScript, C++ and Python readers all judge alike; see
// test/vectors/README.md), for the C++ ctests that read one.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "support/check.h"
#include "trtx/runtime/json.h"

namespace trtx::test {

// Parses `path` into `doc` and returns its `vectors` array, or nullptr after
// recording why (unreadable, not JSON, no array, fewer than `at_least`).
inline const json::Value* shared_vectors(const char* path, json::Value& doc, size_t at_least) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  auto parsed = json::parse(ss.str());
  CHECK_OK(parsed);
  if (!parsed.ok()) return nullptr;
  doc = std::move(*parsed);
  const json::Value* vectors = doc.find("vectors");
  CHECK(vectors != nullptr && vectors->array.size() > at_least);
  return vectors != nullptr && vectors->array.size() > at_least ? vectors : nullptr;
}

}  // namespace trtx::test
