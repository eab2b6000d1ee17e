"""workloads/workload_costs.json (scripts/workload_costs.py) agrees with the workload modules."""
import importlib.util
import json
import os

import pytest

from workloads import registry

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TABLE = json.load(open(os.path.join(ROOT, "workloads", "workload_costs.json")))["workloads"]


def _script():
    spec = importlib.util.spec_from_file_location(
        "workload_costs", os.path.join(ROOT, "scripts", "workload_costs.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_workload_has_its_modules_flops():
    assert sorted(TABLE) == sorted(registry.ids()), "rerun scripts/workload_costs.py"
    for wid in registry.ids():
        assert TABLE[wid]["flops"] == float(registry.get(wid).FLOPS), wid


@pytest.mark.parametrize("wid", ["8p", "12p"])
def test_bytes_are_inputs_plus_output_at_full_shapes(wid):
    # 8p: bf16 A [M,K], B [K,N] and C [M,N], by hand from the CONFIG.
    module = registry.get(wid)
    if wid == "8p":
        c = module.CONFIG
        assert TABLE[wid]["bytes"] == 2 * (c["M"] * c["K"] + c["K"] * c["N"] + c["M"] * c["N"])
    assert TABLE[wid]["bytes"] == _script().costs_of(module)["bytes"]
