"""judge/stages/artifact.py's checks of the artifacts the candidate process sent: their avals
against the workload's; a dtype that differs is deferred, anything else stops the pipeline."""
import jax.numpy as jnp
import pytest

from judge.stages.artifact import ArtifactStage
from judge.stages.context import Failure
from stage_fakes import context, exported, rows_module

MODULE = rows_module()


def _ctx(full, reduced=None, candidate=None):
    ctx = context()
    ctx.module, ctx.start = MODULE, 0.0
    ctx.candidate = candidate or {}
    ctx.artifacts = {k: v for k, v in (("full", full), ("reduced", reduced)) if v is not None}
    return ctx


def _full(fn=MODULE.workload, dtype="bfloat16"):
    return exported(fn, MODULE.CONFIG, ("tpu",), dtype)


def _reduced(fn=MODULE.workload):
    return exported(fn, MODULE.CPU_CONFIG, ("tpu", "cpu"))


@pytest.mark.parametrize("blob,why", [
    (None, "sent no artifact"),
    (b"not an artifact", "does not deserialize"),
])
def test_a_missing_or_broken_artifact_is_a_runtime_error(blob, why):
    with pytest.raises(Failure) as raised:
        ArtifactStage._check_artifacts(_ctx(blob))
    assert raised.value.verdict == "runtime_error" and why in str(raised.value)


def test_an_artifact_for_the_wrong_platforms_is_refused():
    ctx = _ctx(exported(MODULE.workload, MODULE.CONFIG, ("cpu",)))
    with pytest.raises(Failure, match="for platforms"):
        ArtifactStage._check_artifacts(ctx)


def test_a_float32_output_is_a_deferred_dtype_mismatch_and_the_artifacts_are_kept():
    wide = lambda x, y: (2 * x + y).astype(jnp.float32)  # noqa: E731
    ctx = _ctx(_full(wide), _reduced(wide))
    ArtifactStage._check_artifacts(ctx)
    assert ctx.result["dtype_exact"] is False
    (stage, failure), = ctx.deferred
    assert (failure.verdict, failure.kind) == ("shape_mismatch", "dtype")
    assert ctx.full_exp is not None and ctx.reduced_exp is not None


def test_a_wrong_shape_stops_at_once():
    ctx = _ctx(_full(lambda x, y: (2 * x + y)[:8]))
    with pytest.raises(Failure) as raised:
        ArtifactStage._check_artifacts(ctx)
    assert (raised.value.verdict, raised.value.kind) == ("shape_mismatch", "shape")


def test_good_artifacts_have_exact_dtypes():
    ctx = _ctx(_full(), _reduced())
    ArtifactStage._check_artifacts(ctx)
    assert ctx.result["dtype_exact"] is True and not ctx.deferred
    assert ctx.full_exp.platforms == ("tpu",) and ctx.reduced_exp is not None


def test_without_a_reduced_artifact_the_cpu_branchs_error_goes_on_to_numerics():
    ctx = _ctx(_full(), candidate={"cpu_branch_error": {"message": "no CPU lowering"}})
    ArtifactStage._check_artifacts(ctx)
    assert ctx.reduced_exp is None
