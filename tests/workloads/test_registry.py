"""workloads/registry.py: the one lookup of workload modules and their hand-tuned references."""
import types

import pytest

from workloads import hand_tuned, registry


def test_workloads_and_references_are_discovered_in_jaxbench_order():
    assert registry.ids()[:3] == ["1p", "2p", "3p"]
    assert registry.ids().index("9p") < registry.ids().index("10p")
    assert registry.hand_tuned_ids() == ["1p", "2p", "3p", "4p", "6p", "7p", "8p", "11p"]
    assert set(registry.hand_tuned_ids()) <= set(registry.ids())


def test_the_hand_tuned_package_is_the_registry_not_a_second_one():
    assert hand_tuned.ids is registry.hand_tuned_ids
    assert hand_tuned.get is registry.hand_tuned
    assert hand_tuned.source is registry.hand_tuned_source


def test_unknown_ids_name_what_exists():
    with pytest.raises(KeyError, match="known: 1p, 2p"):
        registry.get("99z")
    with pytest.raises(KeyError, match="no hand-tuned reference for '12p'; have: 1p"):
        registry.hand_tuned_source("12p")


def test_static_argnums_reads_the_module_and_refuses_what_is_not_indices():
    assert registry.static_argnums(registry.get("11p")) == (3,)
    assert registry.static_argnums(registry.get("8p")) == ()
    assert registry.static_argnums(types.SimpleNamespace(STATIC_ARGNUMS=None)) == ()
    bad = types.ModuleType("wl_bad")
    bad.STATIC_ARGNUMS = ("three",)
    with pytest.raises(ValueError, match=r"wl_bad.STATIC_ARGNUMS = \('three',\): expected"):
        registry.static_argnums(bad)
