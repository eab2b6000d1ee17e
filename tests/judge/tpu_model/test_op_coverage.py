"""The interpreter covers what Pallas emits (issue 26): every Mosaic op in the lowering of every
kernel the project ships (the 50 solutions, the hand-tuned references, the prompt's context
examples) is one mosaic_interpreter models, so none of them is refused on a CPU host for an
op the judge does not know.

The op lists come from shipped_mosaic_ops.json (shipped_kernels.py writes it; lowering all
takes minutes); a test fails when a source changed since, and PALLADIUM_SLOW_TESTS=1 lowers
them all again and compares.
"""
import os

import pytest

import shipped_kernels
from judge.tpu_model import mosaic_interpreter as mi

SLOW = os.environ.get("PALLADIUM_SLOW_TESTS") == "1"


def test_every_op_the_shipped_kernels_emit_is_modelled():
    cache = shipped_kernels.load_cache()
    unknown = {}
    for name, entry in cache.items():
        for op in set(entry.get("ops", [])) - mi.MODELLED_OPS:
            unknown.setdefault(op, []).append(name)
    assert not unknown, f"ops the interpreter does not model: {unknown}"


def test_the_cached_op_lists_match_the_sources():
    cache = shipped_kernels.load_cache()
    sources = shipped_kernels.sources()
    assert sorted(cache) == sorted(sources), \
        "shipped_mosaic_ops.json lists other kernels than ship; regenerate it (see its module)"
    stale = [n for n, p in sources.items() if cache[n]["sha256_16"] != shipped_kernels.digest(p)]
    assert not stale, f"changed since shipped_mosaic_ops.json was written: {stale}; run " \
                      ".venv/bin/python tests/judge/tpu_model/shipped_kernels.py " + " ".join(stale)
    # Only a kernel the candidate process cannot export either may lack its op list.
    unexportable = sorted(n for n, e in cache.items() if "ops" not in e)
    assert unexportable == ["hand_tuned/ref_7p.py"], unexportable


@pytest.mark.skipif(not SLOW, reason="lowers every shipped kernel (~5 min); "
                                     "PALLADIUM_SLOW_TESTS=1")
@pytest.mark.parametrize("name", sorted(shipped_kernels.sources()))
def test_a_fresh_lowering_emits_the_cached_ops(name):
    entry = shipped_kernels.load_cache()[name]
    if "ops" not in entry:
        with pytest.raises(Exception):
            shipped_kernels.lowered_ops(name, shipped_kernels.sources()[name])
        return
    assert shipped_kernels.lowered_ops(name, shipped_kernels.sources()[name]) == entry["ops"]
