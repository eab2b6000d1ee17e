"""Every workload module keeps the contract of docs/architecture.md ("Workload modules").

The checks are generic so that adding a workload is adding one module: each registered module is
compared with the study's facts in workloads/jaxbench_workloads.json, and its reference runs at
the reduced CPU shapes.
"""
import json
import pathlib
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from workloads import reduced_shapes, registry

# The study's facts (configs, shapes, published FLOPs and timings), kept in the repo.
JSON_PATH = pathlib.Path(__file__).resolve().parents[2] / "workloads" / "jaxbench_workloads.json"
PUBLISHED = {w["id"]: w for w in json.loads(JSON_PATH.read_text())["workloads"]}
IDS = registry.ids()


def float_inputs(inputs):
    return [(i, x) for i, x in enumerate(inputs)
            if hasattr(x, "dtype") and jnp.issubdtype(x.dtype, jnp.floating)]


static_argnums = registry.static_argnums


def test_registry_has_exactly_the_50_published_workloads():
    assert len(PUBLISHED) == 50
    assert set(IDS) == set(PUBLISHED)
    with pytest.raises(KeyError):
        registry.get("99z")


@pytest.mark.parametrize("workload_id", IDS)
def test_reference_runs_at_cpu_config(workload_id):
    module = registry.get(workload_id)
    inputs = module.create_inputs(module.CPU_CONFIG, seed=0)
    # Float inputs are BF16 as the JAXBench runner makes them, except those JAXBench keeps in
    # float32 on purpose (16p's A_log), listed in the module's FLOAT32_INPUTS.
    for i, x in float_inputs(inputs):
        want = jnp.float32 if i in getattr(module, "FLOAT32_INPUTS", ()) else jnp.bfloat16
        assert x.dtype == want, i
    out = jax.jit(module.workload, static_argnums=static_argnums(module))(*inputs)
    for leaf in jax.tree_util.tree_leaves(out):
        values = np.asarray(leaf, np.float32)
        assert np.isfinite(values).all()
        assert values.size == 0 or np.abs(values).max() > 0


@pytest.mark.parametrize("workload_id", IDS)
def test_inputs_deterministic_per_seed_and_weights_nonzero(workload_id):
    module = registry.get(workload_id)
    first = module.create_inputs(module.CPU_CONFIG, seed=3)
    again = module.create_inputs(module.CPU_CONFIG, seed=3)
    other = module.create_inputs(module.CPU_CONFIG, seed=4)
    differs = False
    for (i, a), (_, b), (_, c) in zip(float_inputs(first), float_inputs(again), float_inputs(other)):
        assert np.array_equal(np.asarray(a, np.float32), np.asarray(b, np.float32)), i
        differs |= not np.array_equal(np.asarray(a, np.float32), np.asarray(c, np.float32))
        values = np.asarray(a, np.float32)
        # Zero weights let a no-op kernel pass (the JAXBench bug fixed in accelerator-agents).
        # Constant inits JAXBench uses on purpose (GroupNorm gamma = ones) are still nonzero.
        assert np.count_nonzero(values) > 0.9 * values.size, (workload_id, i)
    assert differs, "another seed gives other inputs"


@pytest.mark.parametrize("workload_id", IDS)
def test_metadata_matches_published(workload_id):
    module, entry = registry.get(workload_id), PUBLISHED[workload_id]
    assert module.ID == workload_id
    assert module.CONFIG == entry["config"]
    assert module.NAME == entry["name"]
    assert module.ATOL == entry["maxkernel_task"]["atol"]
    assert module.RTOL == entry["maxkernel_task"]["rtol"]
    assert module.BASELINE_MS_V6E == entry["baseline_ms_v6e"]
    assert set(module.CPU_CONFIG) == set(module.CONFIG), "CPU_CONFIG reduces values only"


@pytest.mark.parametrize("workload_id", IDS)
def test_shapes_full_and_reduced(workload_id):
    """Full shapes are JAXBench's; reduced ones keep the rank (divisibility: the test below)."""
    module, entry = registry.get(workload_id), PUBLISHED[workload_id]
    static = static_argnums(module)
    full = jax.eval_shape(lambda: module.create_inputs(module.CONFIG))
    cpu = module.create_inputs(module.CPU_CONFIG)
    full_arrays = [x for i, x in enumerate(full) if i not in static]
    cpu_arrays = [x for i, x in enumerate(cpu) if i not in static]
    assert [tuple(x.shape) for x in full_arrays] == [
        tuple(i["shape"]) for i in entry["inputs"] if "static" not in i["dtype"]]
    assert len(full_arrays) == len(cpu_arrays)
    for f, c in zip(full_arrays, cpu_arrays):
        assert len(f.shape) == len(c.shape), "rank kept"
    # results.csv's shape, unless the module documents why its baseline differs (4p keeps the
    # batch dimension that the older JAXBench baseline dropped).
    expected_out = entry.get("output_shape_results_csv")
    if getattr(module, "FULL_OUTPUT_SHAPE", None) is not None:
        assert module.OUTPUT_SHAPE_NOTE
        expected_out = module.FULL_OUTPUT_SHAPE
    if expected_out is not None:
        static_values = dict(zip(static, module.static_args(module.CONFIG))) if static else {}

        def call(*arrays):
            it = iter(arrays)
            return module.workload(*[static_values[i] if i in static else next(it)
                                     for i in range(len(full))])
        out = jax.eval_shape(call, *full_arrays)
        leaves = jax.tree_util.tree_leaves(out)
        assert tuple(leaves[0].shape) == tuple(expected_out)


@pytest.mark.parametrize("workload_id", IDS)
def test_flops_agree_with_published(workload_id):
    """Within 5% of the published figure, or a module-level FLOPS_NOTE says why not."""
    module, entry = registry.get(workload_id), PUBLISHED[workload_id]
    published = entry.get("flops")
    if not published:
        pytest.skip("no published FLOPs")
    off = abs(module.FLOPS - published) / published
    if getattr(module, "FLOPS_NOTE", None):
        assert module.FLOPS > 0
    else:
        assert off < 0.05, f"{module.FLOPS} vs published {published} ({off:.1%})"


def test_required_multiple():
    assert reduced_shapes.required_multiple(4096) == 1024
    assert reduced_shapes.required_multiple(28672) == 1024   # 2^12 * 7
    assert reduced_shapes.required_multiple(1536) == 512
    assert reduced_shapes.required_multiple(128256) == 256   # 2^8 * 501
    assert reduced_shapes.required_multiple(126) == 2
    assert reduced_shapes.required_multiple(65) == 1


@pytest.mark.parametrize("workload_id", IDS)
def test_reduced_shapes_keep_the_full_shapes_power_of_two_or_say_why(workload_id):
    """Issue 9: every input and output dimension keeps, at CPU_CONFIG, the largest power of two
    up to 1024 that divides it at CONFIG, so that a kernel right at the full shape tiles the
    reduced one exactly. A CONFIG key that cannot is named in CPU_SHAPE_EXCEPTIONS with its
    reason, and an exception no broken dimension needs is stale."""
    module = registry.get(workload_id)
    exceptions = getattr(module, "CPU_SHAPE_EXCEPTIONS", {})
    assert set(exceptions) <= set(module.CONFIG), "exceptions name CONFIG keys"
    for key, reason in exceptions.items():
        assert isinstance(reason, str) and len(reason.split()) >= 8, (key, "give the reason")
    found = reduced_shapes.violations(module)
    unexplained = [str(v) for v in found if not set(v.owners) & set(exceptions)]
    assert not unexplained, "\n".join(unexplained)
    owning = {key for v in found for key in v.owners}
    assert set(exceptions) <= owning, f"stale CPU_SHAPE_EXCEPTIONS: {set(exceptions) - owning}"


def _toy_module(cpu_rows):
    module = types.ModuleType("wl_toy")
    module.CONFIG = {"rows": 31752 * 64, "cols": 256}
    module.CPU_CONFIG = {"rows": cpu_rows, "cols": 256}
    module.create_inputs = lambda config, seed=0: (
        jnp.zeros((config["rows"], config["cols"]), jnp.bfloat16),)
    module.workload = lambda x: x.sum(axis=1)
    return module


def test_the_rule_finds_a_dimension_that_drops_its_power_of_two():
    # 18k's case: 128*126*126 rows at full size (a multiple of 512), 2*126*126 reduced (of 8).
    found = reduced_shapes.violations(_toy_module(31752))
    assert [(v.where, v.axis, v.full, v.reduced, v.required, v.owners) for v in found] == [
        ("input 0 (x)", 0, 31752 * 64, 31752, 512, ("rows",)),
        ("output 0", 0, 31752 * 64, 31752, 512, ("rows",))]
    assert "not a multiple of 512 (set by rows)" in str(found[0])
    assert reduced_shapes.violations(_toy_module(512 * 3)) == []
    larger = reduced_shapes.violations(_toy_module(31752 * 128))
    assert larger and "larger than the full" in str(larger[0])
