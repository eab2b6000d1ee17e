"""Workloads made by tests and put in the registry beside the real ones (install), such as a
two-input workload over rows (rows) whose shapes are small at CONFIG as well as CPU_CONFIG, so
that any check, the full-shape one included, costs about a second.

    module = fake_workloads.install(monkeypatch, fake_workloads.rows(
        "cancel_test", lambda x, y: (x + y) - y, y_scale=100))
    evaluate(module.ID, fake_workloads.ROWS_KERNEL.replace("BODY", "(x + y) - y"))
"""
import types

import jax
import jax.numpy as jnp

from workloads import registry


def rows(workload_id, workload, y_scale=1.0):
    """x, y [rows, cols] bf16 normal (y times y_scale) -> workload(x, y); 64x256 reduced,
    512x1024 full."""
    module = types.ModuleType(f"wl_{workload_id}")
    module.ID, module.NAME = workload_id, workload_id
    module.CPU_CONFIG = {"rows": 64, "cols": 256}
    module.CONFIG = {"rows": 512, "cols": 1024}
    module.ATOL, module.RTOL = 0.01, 0.01

    def create_inputs(config=module.CPU_CONFIG, seed=0, dtype=jnp.bfloat16):
        kx, ky = jax.random.split(jax.random.key(seed))
        shape = (config["rows"], config["cols"])
        return (jax.random.normal(kx, shape, dtype),
                (jax.random.normal(ky, shape, jnp.float32) * y_scale).astype(dtype))

    module.create_inputs = create_inputs
    module.workload = workload
    return module


def install(monkeypatch, module):
    """`module` is what registry.get(module.ID) returns for the rest of the test."""
    real_get = registry.get
    monkeypatch.setattr(registry, "get",
                        lambda wid: module if wid == module.ID else real_get(wid))
    return module


# A candidate for rows(): BODY is the answer from the float32 blocks x and y (32 rows each).
ROWS_KERNEL = '''
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

def _kernel(x_ref, y_ref, o_ref):
    x, y = x_ref[...].astype(jnp.float32), y_ref[...].astype(jnp.float32)
    o_ref[...] = (BODY).astype(o_ref.dtype)

def workload(x, y):
    R, C = x.shape
    spec = pl.BlockSpec((32, C), lambda i: (i, 0))
    return pl.pallas_call(
        _kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(R // 32,),
        in_specs=[spec, spec], out_specs=spec)(x, y)
'''
