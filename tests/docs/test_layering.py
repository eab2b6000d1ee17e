"""The C++ folders include only the floors below them (docs/architecture.md, "Directory map").

A lower floor that includes a higher one makes its library need the higher one's, and the arrow is
how a new dependency sneaks in unseen (issue 25: llm/ included search/ for a hash and an RNG). Each
folder lists the folders it must never include; an offending include is reported with its file and
line.
"""
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/', re.M)

# Floors from the bottom: common (hash, generator), workloads (the catalog), protocol, then
# search and llm side by side, analysis over search, store, report over store and analysis,
# config (pure: the YAML parsing and checks, over search and llm), actors, agent, coordinator
# (the coordinator process's machinery, over actors and config), bench, and cli on top.
TOP = {"coordinator", "bench", "cli"}
ABOVE_PROTOCOL = {"search", "analysis", "llm", "store", "report", "config", "actors", "agent"} | TOP
NEVER = {
    "common": {"workloads", "protocol"} | ABOVE_PROTOCOL,
    "workloads": {"protocol"} | ABOVE_PROTOCOL,
    "protocol": ABOVE_PROTOCOL,
    "search": {"analysis", "llm", "store", "report", "config", "actors", "agent"} | TOP,
    "analysis": {"llm", "store", "report", "config", "actors", "agent"} | TOP,
    "llm": {"search", "analysis", "store", "report", "config", "actors", "agent"} | TOP,
    "store": {"search", "analysis", "llm", "report", "config", "actors", "agent"} | TOP,
    "report": {"llm", "actors", "agent"} | TOP,
    "config": {"store", "report", "actors", "agent"} | TOP,
    "actors": {"config", "agent"} | TOP,
    "agent": {"config", "actors"} | TOP,
    "coordinator": {"bench", "cli"},
    "bench": {"cli"},
}


def offending_includes(folder, root=ROOT):
    found = []
    for path in sorted((root / folder).rglob("*")):
        if path.suffix not in (".cpp", ".hpp", ".in"):
            continue
        text = path.read_text(encoding="utf-8")
        for match in INCLUDE.finditer(text):
            if match.group(1) in NEVER[folder]:
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{path.relative_to(root)}:{line} includes {match.group(1)}/")
    return found


@pytest.mark.parametrize("folder", sorted(NEVER))
def test_no_folder_includes_a_floor_above_it(folder):
    assert not offending_includes(folder)


def test_the_check_sees_an_include(tmp_path):
    (tmp_path / "llm").mkdir()
    (tmp_path / "llm" / "x.cpp").write_text('#include "llm/y.hpp"\n#include "search/rng.hpp"\n')
    assert offending_includes("llm", tmp_path) == ["llm/x.cpp:2 includes search/"]
