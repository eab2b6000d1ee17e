"""The strategy menus under workloads/context/menus/ (read by the autocomp
method through load_menu): each is a YAML list of strings, and every API
name they teach exists in the installed JAX, so a menu can never steer a
model towards a removed API."""

import pathlib
import re

import jax
import jax.experimental.pallas as pl
import jax.experimental.pallas.tpu as pltpu
import jax.numpy as jnp
import pytest
import yaml

MENUS = pathlib.Path(__file__).resolve().parents[2] / "workloads" / "context" / "menus"
MODULES = {"pl": pl, "pltpu": pltpu, "jnp": jnp, "jax.lax": jax.lax}
NAME = re.compile(r"\b(pltpu|pl|jnp|jax\.lax)\.([A-Za-z_][A-Za-z0-9_]*)")


@pytest.mark.parametrize("name", ["translate.yaml", "optimise.yaml"])
def test_menu_is_a_list_of_distinct_strategies(name):
    text = (MENUS / name).read_text()
    strategies = yaml.safe_load(text)
    assert isinstance(strategies, list) and all(isinstance(s, str) and s.strip() for s in strategies)
    assert len(strategies) >= 7
    assert len(set(strategies)) == len(strategies), "a strategy is listed twice"
    body = [l for l in text.splitlines() if l.strip() and not l.strip().startswith("#")]
    assert len(body) == len(strategies), "one strategy per line"


@pytest.mark.parametrize("name", ["translate.yaml", "optimise.yaml"])
def test_every_api_name_exists_in_installed_jax(name):
    missing = []
    found = 0
    for module, attr in NAME.findall((MENUS / name).read_text()):
        found += 1
        if not hasattr(MODULES[module], attr):
            missing.append(f"{module}.{attr}")
    assert found > 0
    assert not missing, f"{name} names APIs JAX {jax.__version__} does not have: {missing}"


def test_dimension_semantics_and_buffering_spelled_as_the_api_takes_them():
    # The menus show these calls with keywords; check the keywords exist.
    import inspect

    assert "dimension_semantics" in inspect.signature(pltpu.CompilerParams).parameters
    assert "vmem_limit_bytes" in inspect.signature(pltpu.CompilerParams).parameters
    assert "pipeline_mode" in inspect.signature(pl.BlockSpec).parameters
    assert "num_scalar_prefetch" in inspect.signature(pltpu.PrefetchScalarGridSpec).parameters
