"""judge/stages/numerics.py's checks of what the candidate process reported, and its refusal of
a program the interpreter cannot run (whole candidates: tests/judge/test_evaluate.py)."""
import numpy as np
import pytest

from judge.stages import numerics
from judge.stages.context import Failure
from judge.tpu_model import mosaic_interpreter
from stage_fakes import context, rows_module


def _ctx(candidate, check_seeds=(7,)):
    ctx = context()
    ctx.module = rows_module()
    ctx.candidate, ctx.check_seeds = candidate, list(check_seeds)
    return ctx


def test_a_sandbox_violation_in_the_interpret_check_is_a_runtime_error():
    ctx = _ctx({"check": {"violations": ["opened /proc/1/mem"]}})
    failure = numerics.NumericsStage().run(ctx)
    assert (failure.verdict, failure.kind) == ("runtime_error", "SandboxViolation")
    assert ctx.result["numerics_ok"] is None  # says nothing of the numbers


def test_fewer_check_outputs_than_check_seeds_is_a_protocol_error():
    ctx = _ctx({"check": {"outputs": []}})
    failure = numerics.NumericsStage().run(ctx)
    assert "returned 0 check outputs for 1 check inputs" in str(failure)


def test_wrong_check_outputs_are_a_numerics_mismatch():
    from sandbox.candidate.protocol import encode_array
    zeros = [[encode_array(np.zeros((64, 256), "float32"))]]
    ctx = _ctx({"check": {"outputs": zeros}})
    failure = numerics.NumericsStage().run(ctx)
    # float32 where the workload returns bf16: caught before any value is compared
    assert (failure.verdict, failure.kind) == ("shape_mismatch", "dtype")
    assert ctx.result["numerics_ok"] is False
    # When the dtype objection was already deferred, the values are compared all the same.
    ctx = _ctx({"check": {"outputs": zeros}})
    ctx.result["dtype_exact"] = False
    failure = numerics.NumericsStage().run(ctx)
    assert (failure.verdict, failure.kind) == ("numerics_mismatch", "tolerance")
    assert ctx.result["numerics_ok"] is False


def test_a_kernel_the_cpu_interpreter_cannot_run_is_left_to_a_tpu(monkeypatch):
    ctx = _ctx({"cpu_branch_error": {"exc_type": "NotImplementedError", "message": "no rule"}},
               check_seeds=())
    ctx.candidate["check"] = {"outputs": []}
    failure = numerics.NumericsStage().run(ctx)
    assert (failure.verdict, failure.kind) == ("runtime_error", "cpu_interpreter")
    assert "only be checked on a TPU" in str(failure)


@pytest.mark.parametrize("defect, on_a_tpu", [
    (mosaic_interpreter.Deadlock("a wait on semaphore 0 that no signal can satisfy"), "hang"),
    (mosaic_interpreter.OutOfBounds("a load at row 40 of 32"), "outside the buffer"),
    (mosaic_interpreter.Nondeterministic("outputs differ between fills"), "memory held")])
def test_a_kernel_defect_blames_the_kernel_not_the_host(monkeypatch, defect, on_a_tpu):
    def wrong(*args, **kwargs):
        raise defect
    monkeypatch.setattr(numerics.tpu_program, "run", wrong)
    exp = type("Exp", (), {"mlir_module": lambda self: "", "platforms": ("tpu",),
                           "module_kept_var_idx": (0,)})()
    info = {}
    with pytest.raises(Failure) as failure:
        numerics.tpu_program_outputs(exp, [], None, info, "the CPU branch passed, but")
    assert failure.value.verdict == "runtime_error"
    assert failure.value.kind == "mosaic_interpreter"
    assert "the kernel itself is wrong" in str(failure.value) and on_a_tpu in str(failure.value)
    assert "only a TPU agent" not in str(failure.value)
    assert info["defect"] == type(defect).__name__
    # A cascade's screen still leaves it to the TPU agent, which sees the defect itself.
    assert numerics.tpu_program_outputs(exp, [], None, {}, None) is None


def test_an_uninterpretable_program_is_refused_unless_screening(monkeypatch):
    def cannot(*args, **kwargs):
        raise mosaic_interpreter.Unsupported("the op tpu.sort")
    monkeypatch.setattr(numerics.tpu_program, "run", cannot)
    exp = type("Exp", (), {"mlir_module": lambda self: "", "platforms": ("tpu",),
                           "module_kept_var_idx": (0, 1)})()
    info = {}
    assert numerics.tpu_program_outputs(exp, [], None, info, None) is None
    assert info["unsupported"] == "the op tpu.sort" and info["ms"] >= 0
    with pytest.raises(Failure, match="only a TPU agent can judge it"):
        numerics.tpu_program_outputs(exp, [], None, {}, "the CPU branch passed, but")
