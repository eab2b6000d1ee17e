"""The stored audit table (workloads/input_sensitivity.json) that reports read."""
import json
import pathlib

import pytest

from judge.audit import audit_module
from workloads import registry

TABLE = json.loads((pathlib.Path(__file__).resolve().parents[2] / "workloads" /
                    "input_sensitivity.json").read_text())["workloads"]


def test_table_covers_every_workload():
    assert set(TABLE) == set(registry.ids())


def test_known_degenerate_cases_are_flagged():
    # The two the JAXBench study names, with the inputs that make them so.
    assert TABLE["25k"]["degenerate"] and "x" in TABLE["25k"]["insensitive_inputs"]
    assert TABLE["26k"]["degenerate"] and "x" in TABLE["26k"]["insensitive_inputs"]


@pytest.mark.parametrize("workload_id", ["8p", "12p", "25k", "26k", "31k", "43k", "6p"])
def test_stored_rows_match_a_fresh_audit(workload_id):
    fresh = audit_module(registry.get(workload_id))
    assert TABLE[workload_id] == {"degenerate": fresh["degenerate"],
                                  "insensitive_inputs": fresh["insensitive_inputs"]}
