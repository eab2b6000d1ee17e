"""One hand-written candidate per verdict the judge can produce (the candidate itself runs in a
sandboxed candidate process; tests/judge/test_hostile.py has the attacks)."""
import json
import math

import pytest

import fake_workloads
import judge_kernels as k
from judge.tpu_model import mosaic_interpreter, tpu_program
from judge import evaluate as judge_evaluate
from judge.evaluate import (Evaluator, evaluate, full_shapes_setting,
                                        shared_evaluator)
from judge.verdicts import VERDICTS

RESULT_FIELDS = {"verdict", "stage", "error", "error_signature", "stdout", "stderr", "stage_ms",
                 "max_abs_err", "max_rel_err", "kernel_ms", "baseline_ms", "timing_kind",
                 "seeds", "check_seeds", "attempts", "outside_pallas_fraction", "structure",
                 "spare_ms", "candidate_stage_ms", "infrastructure", "compile_tier",
                 "numerics_path", "mosaic_interpreter", "timing_runs", "kernel_ms_low",
                 "kernel_ms_high", "baseline_ms_low", "baseline_ms_high", "timing", "numerics_ok",
                 "structure_ok", "dtype_exact", "compile_finding", "judge_settings"}


def run(code, seeds=(0,)):
    result = evaluate("8p", code, seeds)
    assert set(result) == RESULT_FIELDS
    assert result["verdict"] in VERDICTS
    return result


def test_correct_kernel_passes_every_stage_and_is_timed():
    # The defaults for users (tests/conftest.py lowers both for the rest of the suite).
    judge = Evaluator(compile_tier=True, timing_runs=judge_evaluate.CPU_TIMING_RUNS)
    try:
        result = judge.evaluate("8p", k.CORRECT, seeds=(0, 1))
    finally:
        judge.close()
    assert result["verdict"] == "correct", result["error"]
    assert result["stage"] == "done"
    assert set(result["stage_ms"]) == {"extract", "lint", "import", "trace", "lower", "compile",
                                       "structure", "numerics", "timing"}
    assert result["max_abs_err"] <= 0.01 + 0.01 * 2 and not math.isnan(result["max_abs_err"])
    assert result["kernel_ms"] > 0 and result["baseline_ms"] > 0
    assert result["timing_kind"] == "cpu-wall"
    # Timed by interpreting the TPU programs, interleaved, each side a median with its band.
    assert result["timing"]["program"] == "judge-interpretation", result["timing"]
    runs = result["timing_runs"]
    assert judge_evaluate.CPU_TIMING_MIN_RUNS <= runs <= judge_evaluate.CPU_TIMING_RUNS
    assert len(result["timing"]["kernel_samples_ms"]) == runs
    for side in ("kernel_ms", "baseline_ms"):
        assert result[side + "_low"] <= result[side] <= result[side + "_high"], result
    assert result["error"] == "" and result["error_signature"] == ""
    assert result["seeds"] == [0, 1] and len(result["check_seeds"]) == 1
    assert result["attempts"] == 1
    assert result["outside_pallas_fraction"] == 0.0  # the GEMM runs inside the kernel
    assert result["structure"]["kernels"] == 1
    # The compile tier is on by default: the full-shape artifact compiled for a v6e.
    assert result["compile_tier"]["compile_ms"] > 0 and result["compile_tier"]["workers"] == 1
    assert result["compile_tier"]["libtpu_version"]
    # The judge computed the kernel a TPU would run from its Mosaic body too, and it agreed.
    assert result["numerics_path"] == "mosaic_interpreter"
    assert result["mosaic_interpreter"]["unsupported"] == ""
    assert 0 < result["mosaic_interpreter"]["ms"] < result["stage_ms"]["numerics"]


def test_failed_candidates_carry_no_timing_kind():
    # A failure is untimed: stamping it "cpu-wall" made one failure turn a TPU run's report
    # into "NOT TPU speedups".
    for code in (k.SYNTAX_ERROR, k.NUMERICS_MISMATCH):
        result = run(code)
        assert result["verdict"] != "correct"
        assert result["timing_kind"] is None and result["kernel_ms"] is None


@pytest.mark.parametrize("code", ["", "   \n\t\n", "```python\n```"])
def test_no_code(code):
    result = run(code)
    assert (result["verdict"], result["stage"]) == ("no_code", "extract")


def test_syntax_error_names_the_line():
    result = run(k.SYNTAX_ERROR)
    assert (result["verdict"], result["stage"]) == ("syntax_error", "import")
    assert "line 3" in result["error"]


@pytest.mark.parametrize("code", [k.IMPORT_ERROR, k.MISSING_WORKLOAD])
def test_import_error(code):
    result = run(code)
    assert (result["verdict"], result["stage"]) == ("import_error", "import")


def test_lint_names_the_replacement_for_removed_api():
    result = run(k.LINT_REMOVED_NAME)
    assert (result["verdict"], result["stage"]) == ("lint_rejected", "lint")
    assert "pltpu.CompilerParams" in result["error"]


def test_lint_rejects_os():
    result = run(k.LINT_OS)
    assert result["verdict"] == "lint_rejected"
    assert "'os'" in result["error"]


def test_api_misuse_at_trace():
    result = run(k.API_MISUSE)
    assert (result["verdict"], result["stage"]) == ("api_misuse", "trace"), result["error"]


def test_lowering_error_for_block_not_divisible_by_8_128():
    result = run(k.LOWERING_ERROR)
    assert (result["verdict"], result["stage"]) == ("lowering_error", "lower"), result["error"]
    assert "divisible by 8 and 128" in result["error"]
    # Library frames are pruned; the candidate's own frame stays.
    assert "site-packages" not in result["error"]
    assert "candidate.py" in result["error"]
    assert "divisible by N and N" in result["error_signature"]
    assert "/" not in result["error_signature"].split(":", 2)[2].split(" ")[0]


def test_shape_mismatch():
    # Caught from the artifact's output avals, before anything of it runs in the judge.
    result = run(k.SHAPE_MISMATCH)
    assert (result["verdict"], result["stage"]) == ("shape_mismatch", "compile"), result["error"]
    assert "[4096, 28672]" in result["error"] and "[8192, 28672]" in result["error"]  # full


def test_a_float32_output_where_the_baseline_returns_bfloat16_is_a_dtype_mismatch():
    result = run(k.FLOAT32_OUTPUT)
    assert (result["verdict"], result["stage"]) == ("shape_mismatch", "compile"), result["error"]
    assert result["error_signature"].startswith("compile:dtype:")
    assert "float32" in result["error"] and "bfloat16" in result["error"]


def test_every_result_records_the_facts_beside_the_verdict():
    # Issue 26: the study's definition of correct is the numerics alone; the strict verdict
    # also asks for the structure rule and the exact dtype. A dtype objection no longer hides
    # whether the numbers were right.
    right = run(k.CORRECT)
    assert (right["numerics_ok"], right["structure_ok"], right["dtype_exact"]) == \
        (True, True, True)
    wide = run(k.FLOAT32_OUTPUT)
    assert (wide["verdict"], wide["stage"]) == ("shape_mismatch", "compile")
    assert (wide["numerics_ok"], wide["structure_ok"], wide["dtype_exact"]) == \
        (True, True, False)
    assert wide["timing_kind"] is None and wide["max_abs_err"] is not None
    wrong = run(k.NUMERICS_MISMATCH)
    assert (wrong["numerics_ok"], wrong["structure_ok"], wrong["dtype_exact"]) == \
        (False, True, True)
    early = run(k.SYNTAX_ERROR)
    assert (early["numerics_ok"], early["structure_ok"], early["dtype_exact"],
            early["compile_finding"]) == (None, None, None, None)


def test_numerics_mismatch_reports_errors():
    result = run(k.NUMERICS_MISMATCH)
    assert (result["verdict"], result["stage"]) == ("numerics_mismatch", "numerics"), result["error"]
    assert result["max_abs_err"] > 0.01
    assert "atol=0.01" in result["error"]


def test_unwritten_output_is_nan_and_fails():
    result = run(k.UNWRITTEN_OUTPUT)
    assert result["verdict"] == "numerics_mismatch", result["error"]
    assert "NaN" in result["error"]
    # The error text feeds the next prompt: the fresh check seed is recorded, not quoted.
    assert "fresh check seed" in result["error"], result["error"]
    assert result["check_seeds"] and not any(str(s) in result["error"]
                                             for s in result["check_seeds"])


def test_no_pallas():
    result = run(k.NO_PALLAS)
    assert (result["verdict"], result["stage"]) == ("no_pallas", "trace")


def test_empty_grid_says_so():
    result = run(k.EMPTY_GRID)
    assert (result["verdict"], result["stage"]) == ("api_misuse", "trace"), result["error"]
    assert "has no iterations" in result["error"] and "never runs" in result["error"]
    assert result["error_signature"].startswith("trace:EmptyGrid:")


def test_a_bare_assertion_names_the_kernels_line():
    result = run(k.BARE_ASSERT)
    assert (result["verdict"], result["stage"]) == ("api_misuse", "trace"), result["error"]
    line = k.BARE_ASSERT.strip().splitlines().index("    assert M < 0") + 1  # as judged
    assert (f"AssertionError without a message at candidate.py line {line}: assert M < 0"
            in result["error"]), result["error"]
    assert result["error_signature"].startswith("trace:AssertionError: AssertionError without")


def test_the_failing_stage_time_is_recorded():
    result = run(k.RUNTIME_ERROR)
    assert result["stage"] == "numerics"
    assert result["stage_ms"]["numerics"] > 0  # the stage that failed, not only those before it


def test_runtime_error_out_of_bounds_block_in_tpu_interpret_mode():
    result = run(k.RUNTIME_ERROR)
    assert (result["verdict"], result["stage"]) == ("runtime_error", "numerics"), result["error"]
    assert "out-of-bounds" in result["error"].lower()


def test_candidate_output_is_captured():
    result = run(k.PRINTING)
    assert result["verdict"] == "correct", result["error"]
    assert "hello from the candidate" in result["stdout"]
    assert "tracing workload" in result["stdout"]


def test_exceptions_never_escape():
    code = "def workload(A, B):\n    raise SystemExit(3)\n"
    result = run(code)
    assert result["verdict"] in ("api_misuse", "runtime_error")
    assert "SystemExit" in result["error_signature"]


@pytest.mark.parametrize("workload_id", sorted(k.WORKLOAD_KERNELS))
def test_a_correct_kernel_for_every_workload(workload_id):
    result = evaluate(workload_id, k.WORKLOAD_KERNELS[workload_id], (0,))
    assert result["verdict"] == "correct", result["error"]
    assert result["numerics_path"] == "mosaic_interpreter", result["mosaic_interpreter"]


@pytest.mark.parametrize("failure,why", [
    (mosaic_interpreter.Unsupported("the op tpu.sort"), "the op tpu.sort"),
    (mosaic_interpreter.OverBudget("more than 2000000 op executions"), "op executions"),
    (IndexError("an access outside a buffer"), "interpreter error IndexError")])
def test_a_kernel_the_interpreter_cannot_run_is_left_to_a_tpu_and_says_why(
        failure, why, monkeypatch):
    # An op it does not know, its work bound or its own failure leaves only the candidate's
    # own CPU branch, which proves nothing about the kernel: not `correct` on this host, with
    # the reason named. The CPU tier of a cascade passes it on to a TPU agent instead.
    def cannot(*args, **kwargs):
        raise failure
    monkeypatch.setattr(tpu_program, "run", cannot)
    result = run(k.CORRECT)
    assert (result["verdict"], result["stage"]) == ("runtime_error", "numerics"), result
    assert result["error_signature"].startswith("numerics:mosaic_interpreter:")
    assert why in result["mosaic_interpreter"]["unsupported"]
    assert why in result["error"]
    screened = evaluate("8p", k.CORRECT, (0,), screen=True)
    assert screened["verdict"] == "correct", screened["error"]
    assert screened["numerics_path"] == "cpu_branch_only"
    assert why in screened["mosaic_interpreter"]["unsupported"]


# -- the full shapes ($PALLADIUM_FULL_SHAPES) ---------------------------------------------------

# Right at every shape but the workload's own, where it halves the answer: its Python sees
# the shapes it is traced at, and a CPU host runs only the reduced ones unless told to.
_RIGHT_EXCEPT_AT_FULL_SHAPES = fake_workloads.ROWS_KERNEL.replace(
    "BODY", "(2 * x + y) * (0.5 if x.shape == (32, 1024) else 1.0)")
_RIGHT = fake_workloads.ROWS_KERNEL.replace("BODY", "2 * x + y")


@pytest.fixture
def full_shapes(monkeypatch):
    module = fake_workloads.install(monkeypatch, fake_workloads.rows(
        "scale_test", lambda x, y: 2 * x + y))
    judge = shared_evaluator()
    monkeypatch.setattr(judge, "full_shapes", True)
    monkeypatch.setattr(judge, "_full_reference", None)
    return module


def test_a_kernel_wrong_only_at_the_full_shapes_is_caught_when_they_are_run(full_shapes):
    # The premise: by default a CPU host checks the reduced shapes only, and passes it. Each
    # request's settings decide (issue 20: the run config's evaluation.full_shapes), whatever
    # the judge's own (the fixture set it on).
    judge = shared_evaluator()
    result = judge.evaluate(full_shapes.ID, _RIGHT_EXCEPT_AT_FULL_SHAPES, (0,),
                            settings=(False, False))
    assert result["verdict"] == "correct", result["error"]
    assert result["numerics_path"] == "mosaic_interpreter"
    assert json.loads(result["judge_settings"])["full_shapes"] == \
        "off: the request asked for the reduced shapes only"
    judge.full_shapes = False
    result = judge.evaluate(full_shapes.ID, _RIGHT_EXCEPT_AT_FULL_SHAPES, (0,),
                            settings=(False, True))
    assert json.loads(result["judge_settings"])["full_shapes"] == "on"
    assert (result["verdict"], result["stage"]) == ("numerics_mismatch", "numerics"), result
    assert result["error_signature"].startswith("numerics:full_shapes_differ:")
    # The secret seed is reused for the workload's later candidates: never in the message,
    # nor any figure of its inputs (compare.py's bands only).
    seed = shared_evaluator()._full_reference[1]
    assert "full shapes (on secret inputs)" in result["error"]
    assert str(seed) not in result["error"] and "seed" not in result["error"]
    assert "seed" not in result["mosaic_interpreter"]["full_shapes"]
    # The cascade's CPU tier leaves the full shapes to the TPU agent after it.
    screened = judge.evaluate(full_shapes.ID, _RIGHT_EXCEPT_AT_FULL_SHAPES, (0,), screen=True,
                              settings=(False, True))
    assert screened["verdict"] == "correct", screened["error"]
    assert "full_shapes" not in screened["mosaic_interpreter"]


def test_a_kernel_right_at_the_full_shapes_says_they_were_run(full_shapes):
    honest = _RIGHT
    first = evaluate(full_shapes.ID, honest, (0,))
    assert first["verdict"] == "correct", first["error"]
    assert first["numerics_path"] == "full_shapes"
    checked = first["mosaic_interpreter"]["full_shapes"]
    assert 0 <= checked["max_abs_err"] < 0.1 and checked["ms"] > 0  # bf16 rounding of 2x + y
    # One secret seed per workload and judge: its reference is computed once, not per candidate.
    seed = shared_evaluator()._full_reference[1]
    again = evaluate(full_shapes.ID, honest, (1,))
    assert again["verdict"] == "correct", again["error"]
    assert shared_evaluator()._full_reference[1] == seed


def test_a_full_shape_program_beyond_the_interpreter_is_refused(full_shapes, monkeypatch):
    real_run = tpu_program.run

    def only_reduced(mlir, platforms, arrays, budget=None, executed=None, kept=None):
        if arrays[0].shape == (512, 1024):
            raise mosaic_interpreter.OverBudget("more than 30000000000000 elements computed")
        return real_run(mlir, platforms, arrays, budget, executed, kept=kept)
    monkeypatch.setattr(tpu_program, "run", only_reduced)
    honest = _RIGHT
    result = evaluate(full_shapes.ID, honest, (0,))
    assert (result["verdict"], result["stage"]) == ("runtime_error", "numerics"), result
    assert result["error_signature"].startswith("numerics:mosaic_interpreter:")
    assert "at the workload's full shapes the judge cannot compute" in result["error"]


class _Recorder:
    """A stage that only notes the settings the evaluation ran under."""

    def run(self, ctx):
        self.seen = (ctx.compile_tier, ctx.full_shapes)


def test_a_host_override_beats_the_request_and_the_result_says_so(monkeypatch):
    monkeypatch.setenv("PALLADIUM_FULL_SHAPES", "on")
    monkeypatch.delenv("PALLADIUM_COMPILE_TIER", raising=False)
    monkeypatch.setattr(judge_evaluate.compile_tier, "libtpu_version", lambda: "0.0.42.1")
    judge = Evaluator(pool=object(), compile_tier=False)  # its own compile tier forced off
    recorder = _Recorder()
    judge.pipeline = (recorder,)
    result = judge.evaluate("8p", "code", settings=(True, False))
    assert recorder.seen == (True, True), "the request's compile tier, the host's full shapes"
    assert json.loads(result["judge_settings"]) == {
        "compile_tier": "on", "full_shapes": "on", "overrides": ["PALLADIUM_FULL_SHAPES=on"]}
    judge.evaluate("8p", "code", settings=(False, False))
    assert recorder.seen == (False, True)
    # Without a request's settings (a direct call), the judge's own.
    own = judge.evaluate("8p", "code")
    assert recorder.seen == (False, True)
    assert json.loads(own["judge_settings"])["compile_tier"] == "off: disabled by the caller"


def test_full_shapes_setting(monkeypatch):
    monkeypatch.delenv("PALLADIUM_FULL_SHAPES", raising=False)
    assert full_shapes_setting("interpret") is False  # the default: a TPU runs the full shapes
    assert full_shapes_setting("interpret", "on") is True
    assert full_shapes_setting("interpret", " OFF ") is False
    assert full_shapes_setting("tpu", "on") is False  # a chip's numerics are at the full shapes
    with pytest.raises(ValueError, match="PALLADIUM_FULL_SHAPES='yes'"):
        full_shapes_setting("interpret", "yes")
    monkeypatch.setenv("PALLADIUM_FULL_SHAPES", "on")
    assert full_shapes_setting("interpret") is True


def test_a_full_shape_reference_beyond_the_hosts_memory_is_not_charged_to_the_kernel(
        full_shapes, monkeypatch):
    judge = shared_evaluator()

    def too_big(*args, **kwargs):
        raise MemoryError("Unable to allocate 2.00 GiB")
    monkeypatch.setattr(judge, "_full_shape_reference", too_big)
    result = evaluate(full_shapes.ID, _RIGHT_EXCEPT_AT_FULL_SHAPES, (0,))
    assert result["verdict"] == "correct", result["error"]
    assert result["numerics_path"] == "mosaic_interpreter"  # not "full_shapes": they did not run
    assert "MemoryError" in result["mosaic_interpreter"]["full_shapes"]["unsupported"]


@pytest.mark.parametrize("value, runs", [(None, 5), ("", 5), ("1", 1), (" 20 ", 20)])
def test_timing_runs_setting(monkeypatch, value, runs):
    if value is None:
        monkeypatch.delenv("PALLADIUM_TIMING_RUNS", raising=False)
    else:
        monkeypatch.setenv("PALLADIUM_TIMING_RUNS", value)
    assert judge_evaluate.timing_runs_setting() == runs


@pytest.mark.parametrize("value", ["0", "21", "-1", "five", "2.5"])
def test_a_bad_timing_runs_setting_names_the_variable(monkeypatch, value):
    monkeypatch.setenv("PALLADIUM_TIMING_RUNS", value)
    with pytest.raises(ValueError, match="PALLADIUM_TIMING_RUNS=.*integer from 1 to 20"):
        judge_evaluate.timing_runs_setting()
