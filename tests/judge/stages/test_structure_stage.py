"""judge/stages/structure.py: the measurements are recorded, and heavy work outside Pallas is
no_pallas, deferred so that the numerics are still established (structure.py's rules
themselves: tests/judge/test_kernel_work.py)."""
import jax.numpy as jnp
from jax import export

from judge.stages.structure import StructureStage
from stage_fakes import context, exported, rows_module

MODULE = rows_module(lambda x, y: jnp.dot(x, y.T))


def test_xla_alone_is_no_pallas_and_its_measurements_are_recorded():
    ctx = context()
    ctx.module = MODULE
    ctx.full_exp = export.deserialize(bytearray(
        exported(MODULE.workload, MODULE.CONFIG, ("tpu",))))
    assert StructureStage().run(ctx) is None
    (stage, failure), = ctx.deferred
    assert (stage, failure.verdict, failure.kind) == ("structure", "no_pallas", "no_kernel")
    assert ctx.result["structure_ok"] is False
    assert ctx.verdict_failure() == (stage, failure)  # it decides the verdict at the end
    structure = ctx.result["structure"]
    assert structure["kernels"] == 0 and structure["outside"]["mxu_flops"] > 0
    assert structure["counted"] == "static"  # no reduced artifact to interpret
    assert "dispatches" not in structure  # no reduced artifact was given
