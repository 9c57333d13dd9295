"""TEST DOUBLE of executorch.exir.passes.insert_write_back_for_buffers_pass. See ../../../README.md.

``_inplace_lineage`` is the predicate the bridge asks; the double's rule is the
placeholder case only (a value that IS its buffer), which is all a zero-copy
rewiring produces. TRTX_DOUBLE_FEATURES=no_lineage removes the name, as an
ExecuTorch that renamed its private helper would.
"""

from _trtx_double import feature_off, record


def _lineage_rule(output_arg, gs, kind):
    if kind.name not in ("BUFFER_MUTATION", "USER_INPUT_MUTATION"):
        return False
    if getattr(output_arg, "op", None) != "placeholder":
        return False
    if kind.name == "BUFFER_MUTATION":
        return output_arg.target in gs.inputs_to_buffers
    return output_arg.target in gs.user_inputs


if not feature_off("no_lineage"):

    def _inplace_lineage(output_arg, gs, kind):
        result = _lineage_rule(output_arg, gs, kind)
        record("executorch.exir.passes.insert_write_back_for_buffers_pass._inplace_lineage", value=output_arg.name, result=result)
        return result
