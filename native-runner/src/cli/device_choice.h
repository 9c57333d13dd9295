// `run --device auto|cpu|cuda`: the device a run uses, and what the report
// says of it (internal).
#pragma once

#include "run_command.h"
#include "run_report.h"
#include "trtx/runtime/device.h"
#include "trtx/runtime/result.h"

namespace trtx::cli {

/// The device `choice` names, activated, recorded in `report`: auto is cuda:0
/// in a CUDA build that sees a GPU, else the CPU; cuda without one is
/// DeviceUnavailable.
Result<runtime::DeviceContext> choose_device(DeviceChoice choice, Report& report);

}  // namespace trtx::cli
