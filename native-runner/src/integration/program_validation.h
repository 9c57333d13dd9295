// The runner's own validation of a program, before ExecuTorch reads a byte
// of it (internal). ExecuTorch trusts the program for much of what it
// follows: under Verification::Minimal (Module's default) it runs no
// FlatBuffers verifier at all, so every accessor follows offsets and vector
// lengths straight from the file (runtime/executor/program.cpp); under
// InternalConsistency it verifies the buffer and runs validate_program
// (runtime/executor/program_validation.cpp: tensor sizes and TensorList
// items), but Method::init still keeps a refused operator in a
// `delayed_error` that the next sound KernelCall overwrites with Ok, so a
// KernelCall whose op_index is out of range (or whose operator name is too
// long to resolve) loads without a kernel and execute calls a null function
// (runtime/executor/method.cpp). The runner refuses all of these itself, the
// same way in every verification mode:
//   - the FlatBuffers verifier with ExecuTorch's own limits (depth 64,
//     1,000,000 tables, file identifier ET12);
//   - what the runtime dereferences without a null check (a method's name,
//     values, inputs and outputs; a delegate's id and processed data; an
//     operator's name);
//   - every index into the values (method and chain inputs and outputs,
//     instruction arguments, list items), and the kind of a tensor list's
//     items (TensorList: Tensors, OptionalTensorList: Tensors or None), as
//     validate_program does under InternalConsistency only;
//   - op_index within the operators and every operator name shorter than
//     the runtime's 100-byte buffer; delegate_index within the delegates and
//     each delegate's data within backend_delegate_data or segments;
//   - tensor sizes as validate_program checks them (no negative size, no
//     overflow of numel or nbytes, a scalar type the runtime knows);
//   - aten::copy_ between planned ranges that partly overlap (the portable
//     kernel's memcpy over them is undefined behaviour);
//   - no negative arena size, and the chosen methods' host arenas within
//     the run's cap (load_limits.h: PlannedMemoryLimit).
// Each refusal is InvalidProgram (exit 1) with its location and the trtx
// check code that refuses the same file, or PlannedMemoryLimit (exit 3).
#pragma once

#include <cstddef>

#include "load_limits.h"
#include "trtx/runtime/result.h"

namespace trtx::integration {

/// Validates the program part (the FlatBuffer at the start of the file) as
/// above; `data` must be aligned as ExecuTorch loads it (16 bytes).
Status validate_program(const void* data, size_t size, const PlannedCap& cap);

}  // namespace trtx::integration
