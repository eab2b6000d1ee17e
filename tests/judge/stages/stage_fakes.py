"""What the stage tests share: a judge stand-in with the attributes stages read, a Context over
it, and a small real workload whose shapes keep every call cheap."""
import types

from judge.references import References
from judge.stages.context import Context


class FakeJudge(References):
    """The judge side a stage reaches through ctx.judge, without a sandbox or compile process."""

    def __init__(self, backend="interpret", pool=None, compiler=None, compile_tier=False,
                 full_shapes=False):
        super().__init__(backend)
        self.pool, self.compiler = pool, compiler
        self.compile_tier, self.full_shapes = compile_tier, full_shapes
        self.check_seed_count = 1
        self._baseline_cache = None


def context(judge=None, workload_id="8p", code="", seeds=(0,), screen=False):
    return Context(judge or FakeJudge(), workload_id, code, seeds, 1, True, 60.0, screen, True)


def candidate_run(**fields):
    """A CandidatePool.run outcome (candidate_pool.CandidateRun's fields the stage reads)."""
    run = dict(result=None, failure="", timed_out=False, infrastructure="", stage="import",
               stage_started=0.0, attempts=1, spare_warm_ms=1.0, spare_cpu_ms=1.0)
    run.update(fields)
    return types.SimpleNamespace(**run)


class FakePool:
    def __init__(self, run):
        self.outcome, self.jobs = run, []

    def run(self, job, deadline):
        self.jobs.append(job)
        return self.outcome


def rows_module(workload=lambda x, y: 2 * x + y):
    """x, y [rows, cols] bf16 -> workload(x, y); 64x256 reduced, 512x1024 full."""
    import jax
    import jax.numpy as jnp
    module = types.ModuleType("wl_rows_stage_test")
    module.ID = module.NAME = "rows_stage_test"
    module.CPU_CONFIG = {"rows": 64, "cols": 256}
    module.CONFIG = {"rows": 512, "cols": 1024}
    module.ATOL, module.RTOL = 0.01, 0.01

    def create_inputs(config=module.CPU_CONFIG, seed=0, dtype=jnp.bfloat16):
        kx, ky = jax.random.split(jax.random.key(seed))
        shape = (config["rows"], config["cols"])
        return jax.random.normal(kx, shape, dtype), jax.random.normal(ky, shape, dtype)

    module.create_inputs = create_inputs
    module.workload = workload
    return module


def exported(fn, config, platforms, dtype="bfloat16"):
    """The serialized jax.export artifact of `fn` over two [rows, cols] `dtype` inputs."""
    import jax
    from jax import export
    shape = jax.ShapeDtypeStruct((config["rows"], config["cols"]), dtype)
    return bytes(export.export(jax.jit(fn), platforms=list(platforms))(shape, shape).serialize())
