"""workloads/input_variants.py: the judge's inputs of other scales and means, each input inside
its domain, and a kernel right only on the workload's usual magnitudes failing on them."""
import os
import types

import jax.numpy as jnp
import numpy as np
import pytest

from workloads import input_variants, registry


def _module(domains=None):
    module = types.ModuleType("wl_variants_test")
    module.ID = "variants_test"

    def create_inputs(config=None, seed=0):
        rng = np.random.default_rng(seed)
        return (jnp.asarray(rng.standard_normal((64, 32)), jnp.float32),
                jnp.asarray(rng.uniform(0, 1, (64,)), jnp.float32),
                jnp.arange(8, dtype=jnp.int32))

    def workload(x, probs, index):
        return x

    module.create_inputs, module.workload = create_inputs, workload
    if domains is not None:
        module.INPUT_DOMAINS = domains
    return module


def test_variant_zero_is_the_workloads_own_draw_and_the_first_seed_always_sees_it():
    module = _module()
    same = input_variants.create_inputs(module, None, 3, 0)
    for a, b in zip(same, module.create_inputs(None, 3)):
        np.testing.assert_array_equal(a, b)
    assert [input_variants.variant_for(s, 0) for s in range(10)] == [0] * 10
    later = {input_variants.variant_for(s, 1) for s in range(10)}
    assert later == set(range(1, len(input_variants.VARIANTS)))   # every variant, by seed
    assert input_variants.variant_for(7, 1) == input_variants.variant_for(7, 1)   # replayable


def test_each_input_moves_inside_its_domain():
    module = _module()
    x, probs, index = module.create_inputs(None, 5)
    assert input_variants.input_domains(module, (x, probs, index)) == ["any", "positive", "fixed"]
    for variant, (scale, shift) in enumerate(input_variants.VARIANTS):
        vx, vp, vi = input_variants.create_inputs(module, None, 5, variant)
        want = np.asarray(x) * scale + shift * np.std(np.asarray(x, np.float64))
        np.testing.assert_allclose(vx, want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(vp, np.asarray(probs) * scale, rtol=1e-6)  # never shifted
        assert (np.asarray(vp) >= 0).all()
        np.testing.assert_array_equal(vi, index)                              # never moved


def test_a_workload_declares_what_must_not_move_and_a_bad_declaration_is_named():
    fixed = _module({"x": "fixed"})
    np.testing.assert_array_equal(input_variants.create_inputs(fixed, None, 1, 1)[0],
                                  fixed.create_inputs(None, 1)[0])
    with pytest.raises(ValueError, match=r"variants_test: INPUT_DOMAINS\['x'\] is 'constant'"):
        input_variants.create_inputs(_module({"x": "constant"}), None, 1, 1)


# Every workload's inputs five times over costs minutes on a loaded 2-core host: three
# representative ones (normal, uniform and integer inputs) by default, all 50 with
# PALLADIUM_SLOW_TESTS=1.
_SAMPLE = registry.ids() if os.environ.get("PALLADIUM_SLOW_TESTS") == "1" else \
    ["8p", "30k", "11p"]


@pytest.mark.parametrize("workload_id", _SAMPLE)
def test_a_workloads_variants_are_finite(workload_id):
    module = registry.get(workload_id)
    for variant in range(len(input_variants.VARIANTS)):
        for x in input_variants.create_inputs(module, module.CPU_CONFIG, 0, variant):
            if hasattr(x, "dtype") and jnp.issubdtype(x.dtype, jnp.floating):
                assert bool(jnp.isfinite(x).all()), (workload_id, variant)
