// run --inputs / --outputs (step_values.h).
#include "step_values.h"

namespace trtx::cli {

Status StepValues::open(const std::string& inputs_path, const std::string& outputs_path) {
  if (!inputs_path.empty()) {
    TRTX_ASSIGN_OR_RETURN(std::vector<TensorRecord> records, read_tensor_file(inputs_path));
    recorded_.emplace(std::move(records));
  }
  if (!outputs_path.empty()) TRTX_CHECK_OK(outputs_.open(outputs_path));
  return ok_status();
}

Status StepValues::set_inputs(MethodInputs& inputs, executorch::runtime::Method& method, const std::string& name,
                              int step) {
  if (!recorded_.has_value()) return inputs.set(method, step);
  Status checked = inputs.check_recorded(*recorded_, name, step);
  if (!checked.ok()) {
    usage_ = checked.failure();
    usage_->location = name + "." + usage_->location;
    return checked;
  }
  return inputs.set_recorded(method, *recorded_, name, step);
}

Status StepValues::record_outputs(const executorch::runtime::Method& method, const std::string& name, int step) {
  if (!outputs_.is_open()) return ok_status();
  return write_output_records(method, name, step, outputs_);
}

Status StepValues::close() { return outputs_.close(); }

}  // namespace trtx::cli
