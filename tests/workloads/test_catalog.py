"""workloads/catalog.json is what the modules say (python -m workloads.catalog rewrites it)."""
import copy
import json

import pytest

from workloads import catalog, registry


@pytest.fixture(scope="module")
def built():
    return catalog.build()


def test_the_written_catalog_is_fresh(built):
    stale = catalog.stale_entries(catalog.PATH.read_text(encoding="utf-8"), built)
    assert not stale, f"workloads/catalog.json is stale ({stale}): run python -m workloads.catalog"


def test_it_holds_every_workload_with_its_module_facts(built):
    by_id = {w["id"]: w for w in built["workloads"]}
    assert list(by_id) == registry.ids()
    assert by_id["11p"] == {"id": "11p", "name": "Megablox_GMM", "module": "workloads/wl_11p.py",
                            "hand_tuned": "workloads/hand_tuned/ref_11p.py", "static_argnums": [3]}
    assert by_id["12p"]["hand_tuned"] is None
    assert [w["id"] for w in built["workloads"] if w["hand_tuned"]] == registry.hand_tuned_ids()


def test_a_stale_file_is_named_entry_by_entry(built):
    edited = copy.deepcopy(built)
    edited["workloads"][0]["name"] = "Renamed"
    dropped = edited["workloads"].pop()
    edited["workloads"].append({"id": "99z"})
    stale = catalog.stale_entries(catalog.render(edited), built)
    assert "99z: only in the file" in stale
    assert f"{dropped['id']}: missing from the file" in stale
    assert any(line.startswith("1p: file has") and "Renamed" in line for line in stale)
    assert catalog.stale_entries("{", built)[0].startswith("not JSON")
    reordered = dict(reversed(list(built.items())))
    assert catalog.stale_entries(json.dumps(reordered), built) == [
        "same entries, different text (order or formatting)"]


def test_check_exits_1_on_a_stale_file_and_writing_makes_it_fresh(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(catalog, "PATH", tmp_path / "catalog.json")
    assert catalog.main(["--check"]) == 1
    assert "catalog.json: does not exist" in capsys.readouterr().err
    assert catalog.main([]) == 0
    catalog.PATH.write_text(catalog.PATH.read_text().replace('"Megablox_GMM"', '"GMM"'))
    assert catalog.main(["--check"]) == 1
    assert "11p: file has" in capsys.readouterr().err
    assert catalog.main([]) == 0
    assert catalog.main(["--check"]) == 0
