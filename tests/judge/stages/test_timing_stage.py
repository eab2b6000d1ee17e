"""judge/stages/timing.py on the interpret backend: the wall time of the judge's own numerics
runs, never the first (it compiles); the TPU side is tests/judge/test_tpu_wiring.py."""
import jax.numpy as jnp

from judge.stages.timing import TimingStage
from stage_fakes import context, rows_module


def _ctx(kernel_ms, baseline_ms):
    ctx = context()
    ctx.module = rows_module()
    inputs = ctx.module.create_inputs(ctx.module.CPU_CONFIG, 0)
    ctx.runs = {"kernel_ms": list(kernel_ms), "baseline_ms": list(baseline_ms),
                "call": lambda x, y: jnp.add(x, y), "inputs": inputs, "arrays": list(inputs)}
    return ctx


def test_the_later_runs_median_is_the_time_and_it_is_cpu_wall():
    ctx = _ctx([900.0, 4.0, 6.0, 5.0], [800.0, 2.0, 3.0, 1.0])
    assert TimingStage().run(ctx) is None
    result = ctx.result
    assert (result["kernel_ms"], result["baseline_ms"], result["timing_kind"]) == \
        (5.0, 2.0, "cpu-wall")
    assert ctx.stage == "timing"


def test_one_numerics_run_gets_one_extra_run_of_each_so_compiling_is_not_timed():
    ctx = _ctx([900.0], [800.0])
    TimingStage().run(ctx)
    assert len(ctx.runs["kernel_ms"]) == len(ctx.runs["baseline_ms"]) == 2
    assert ctx.result["kernel_ms"] == round(ctx.runs["kernel_ms"][1], 3) < 900.0
