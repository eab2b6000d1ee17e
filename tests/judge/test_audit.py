"""The input-sensitivity audit flags references whose output ignores an input."""
import json
import types

import jax
import jax.numpy as jnp
import pytest

import fake_workloads
from judge import audit


def _module(workload_id, fn, static=()):
    module = types.ModuleType(f"wl_{workload_id}")
    module.ID, module.CPU_CONFIG = workload_id, {"n": 16}
    module.STATIC_ARGNUMS = static

    def create_inputs(config=module.CPU_CONFIG, seed=0, dtype=jnp.bfloat16):
        kx, kw = jax.random.split(jax.random.key(seed))
        return (jax.random.normal(kx, (16, 16), dtype), jax.random.normal(kw, (16, 16), dtype), 3)

    module.create_inputs, module.workload = create_inputs, fn
    return module


def dead_matmul(x, weight, n):  # 26k-style: the matmul result is discarded
    _ = x @ weight
    return jnp.tanh(x) * n


def constant(x, weight, n):  # 25k-style: the output does not depend on any input
    return jnp.zeros((16, 16), jnp.bfloat16) + 0.5


def healthy(x, weight, n):
    return (x @ weight) * n


@pytest.mark.parametrize("fn, insensitive, constant_output", [
    (dead_matmul, ["weight"], False), (constant, ["x", "weight"], True), (healthy, [], False)])
def test_audit_module(fn, insensitive, constant_output):
    result = audit.audit_module(_module("99z", fn, static=(2,)))
    assert result["insensitive_inputs"] == insensitive
    assert result["degenerate"] is bool(insensitive)
    assert result["constant_output"] is constant_output
    assert result["static_inputs"] == ["n"]  # static values are configuration, never perturbed


def test_audit_workload_caches_to_json(tmp_path, monkeypatch):
    monkeypatch.setenv("PALLADIUM_JUDGE_CACHE", str(tmp_path))
    module = _module("98z", dead_matmul, static=(2,))
    fake_workloads.install(monkeypatch, module)
    first = audit.audit_workload("98z")
    assert first["degenerate"] and first["insensitive_inputs"] == ["weight"]
    files = list(tmp_path.glob("audit-98z-*.json"))
    assert len(files) == 1 and json.loads(files[0].read_text())["insensitive_inputs"] == ["weight"]
    # A cache hit does not run the reference again.
    module.workload = None
    assert audit.audit_workload("98z") == first


def test_real_skeleton_workload_is_not_degenerate(tmp_path, monkeypatch):
    monkeypatch.setenv("PALLADIUM_JUDGE_CACHE", str(tmp_path))
    result = audit.audit_workload("41k")
    assert result["degenerate"] is False, result
    assert result["inputs"] == ["x", "weight", "bias"]
