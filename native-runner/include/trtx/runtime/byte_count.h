// Decimal byte counts, read as Torch-TensorRT reads weight_streaming_budget
// (cpp/src/torch_tensorrt/executorch/WeightStreamingBudget.cpp: std::from_chars
// into int64 over the whole value, not negative): ASCII digits below 2^63,
// no '+', space, unit or NUL, and a '-' only on zero ("-0" is 0). The
// compile spec and the runner's byte options share these digit rules; each
// names itself in its messages.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "trtx/runtime/result.h"

namespace trtx {

/// Why a text is not a byte count.
enum class ByteCountProblem { None, Empty, NoDigits, NotDigits, TooLarge, Negative };

/// Reads `text` into `value`; ByteCountProblem::None when it is a byte count.
ByteCountProblem read_byte_count(std::string_view text, uint64_t& value);

/// The refusal in words, naming what was read: "budget '12G' is not decimal
/// bytes (digits only: ...)".
std::string byte_count_message(ByteCountProblem problem, std::string_view what, std::string_view text);

/// A command-line option's byte count (`--max-planned-bytes`): refused as
/// InvalidArgument at the option, in messages that name it.
Result<uint64_t> parse_byte_count_option(std::string_view text, const std::string& option);

/// A value as a message quotes it: its first 40 bytes, printable ASCII as is,
/// any other byte as \xNN, "..." when cut.
std::string shown_value(std::string_view v);

}  // namespace trtx
