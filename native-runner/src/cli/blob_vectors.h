// `trtx-runner parse-blob-vectors FILE`: runs the blob parser over shared
// test vectors ({"version":1,"vectors":[{"name","hex","expect"}]}) and says
// per vector whether the outcome code matches (internal).
#pragma once

#include <string>

namespace trtx::cli {

/// Exit code: 0 all match, 1 some differ, 2 the file is unreadable or malformed.
int parse_blob_vectors_command(const std::string& path);

}  // namespace trtx::cli
