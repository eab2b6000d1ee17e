"""The Python view of protocol/taxonomy.json agrees with what the C++ side is generated from."""
import json
import pathlib

from protocol import taxonomy


def test_lists_keep_the_file_order():
    data = json.loads(pathlib.Path(taxonomy.__file__).with_name("taxonomy.json").read_text())
    assert taxonomy.VERDICTS == tuple(v for v, _ in data["verdicts"])
    assert taxonomy.VERDICTS[-1] == "correct"
    assert taxonomy.STAGES[0] == "extract" and taxonomy.STAGES[-1] == "done"
    assert taxonomy.TIMING_KINDS == ("cpu-wall", "tpu-profiler", "tpu-wall-fallback")
    assert "repair" in taxonomy.SAMPLE_ROLES and "optimise" in taxonomy.PHASES


def test_spellings_are_unique_and_identifier_safe():
    for names in (taxonomy.VERDICTS, taxonomy.STAGES, taxonomy.SAMPLE_ROLES, taxonomy.PHASES,
                  taxonomy.TIMING_KINDS):
        assert len(set(names)) == len(names)
        # C++ enumerators are the spellings with '-' as '_': they must not collide.
        assert len({n.replace("-", "_") for n in names}) == len(names)
        assert all(n.replace("-", "_").isidentifier() for n in names)
