"""judge/stages/outputs.py: exact shapes and dtypes first, then compare.py's rules."""
import numpy as np
import pytest

from judge import compare
from judge.stages.context import Failure, empty_result
from judge.stages.outputs import check_outputs, mismatch_kind
from stage_fakes import rows_module

MODULE = rows_module()


def _reference():
    inputs = MODULE.create_inputs(MODULE.CPU_CONFIG, 0)
    return compare.make_reference(MODULE, inputs, MODULE.workload(*inputs))


def test_the_exact_answer_passes_and_zeros_do_not():
    reference, result = _reference(), empty_result()
    inputs = MODULE.create_inputs(MODULE.CPU_CONFIG, 0)
    check_outputs(MODULE, [np.asarray(MODULE.workload(*inputs))], reference, "seed 0", result)
    assert result["max_abs_err"] is not None and result["max_abs_err"] < 0.05
    zeros = np.zeros_like(np.asarray(MODULE.workload(*inputs)))
    with pytest.raises(Failure) as raised:
        check_outputs(MODULE, [zeros], reference, "seed 0", result)
    assert raised.value.verdict == "numerics_mismatch" and str(raised.value).startswith("seed 0")


def test_a_wrong_dtype_and_a_wrong_shape_are_told_apart():
    assert mismatch_kind([((2,), "f4")], [((2,), "bf16")]) == "dtype"
    assert mismatch_kind([((3,), "f4")], [((2,), "f4")]) == "shape"
