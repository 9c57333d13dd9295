// The generated error codes (native-runner/generated/trtx/runtime/, from
// src/codes/runner-report.ts): every code has its own name, reads back from
// it, ends a run with 1 or 3, and answers ExecuTorch with an error, never Ok
// (a delegate that failed must not look as if it succeeded).
#include <executorch/runtime/core/error.h>

#include <cstddef>
#include <set>
#include <string>

#include "support/check.h"
#include "trtx/runtime/error.h"
#include "trtx/runtime/et_error_for.h"

namespace et = executorch::runtime;
using trtx::Error;

TEST(every_code_has_a_unique_name_that_reads_back) {
  std::set<std::string> seen;
  CHECK(trtx::kErrorCount > 40);
  for (std::size_t i = 0; i < trtx::kErrorCount; ++i) {
    const auto e = static_cast<Error>(i);
    const std::string name = trtx::error_name(e);
    CHECK(!name.empty());
    CHECK(seen.insert(name).second);
    CHECK(trtx::error_from_name(name) == e);
  }
  CHECK_EQ(std::string(trtx::error_name(Error::Ok)), std::string("Ok"));
  CHECK(trtx::error_from_name("NoSuchCode") == Error::Ok);
}

TEST(every_code_but_ok_maps_to_an_executorch_error_and_a_failed_exit) {
  CHECK(trtx::et_error_for(Error::Ok) == et::Error::Ok);
  CHECK_EQ(trtx::error_exit_code(Error::Ok), 0);
  for (std::size_t i = 1; i < trtx::kErrorCount; ++i) {
    const auto e = static_cast<Error>(i);
    if (trtx::et_error_for(e) == et::Error::Ok) {
      trtx::test::report_failure(__FILE__, __LINE__, std::string(trtx::error_name(e)) + " answers ExecuTorch with Ok");
    }
    const int status = trtx::error_exit_code(e);
    CHECK(status == 1 || status == 3);
  }
}

// The mapping the backend has always made, now from one list: the last blob
// code (the one an ordering trick missed first when a code was added) too.
TEST(refusals_of_the_program_are_invalid_programs_and_missing_parts_not_supported) {
  CHECK(trtx::et_error_for(Error::TRT_BLOB_MAGIC) == et::Error::InvalidProgram);
  CHECK(trtx::et_error_for(Error::TRT_BLOB_UPSTREAM_MISREAD) == et::Error::InvalidProgram);
  CHECK(trtx::et_error_for(Error::CompileSpecInvalid) == et::Error::InvalidProgram);
  CHECK(trtx::et_error_for(Error::EngineNotExecutable) == et::Error::NotSupported);
  CHECK(trtx::et_error_for(Error::MemoryAllocationFailed) == et::Error::DelegateMemoryAllocationFailed);
  CHECK(trtx::et_error_for(Error::OperatorMissing) == et::Error::OperatorMissing);
  CHECK_EQ(trtx::error_exit_code(Error::BackendMissing), 3);
  CHECK_EQ(trtx::error_exit_code(Error::TRT_BLOB_MAGIC), 1);
}

int main() { return trtx::test::run_all(); }
