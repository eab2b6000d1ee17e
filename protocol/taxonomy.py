"""The verdict, stage, sample-role, phase and timing-kind spellings, read from protocol/taxonomy.json.

That JSON file is the one source: C++ gets the same enums from a header generated at configure
time (cmake/generate_taxonomy.cmake). Each tuple keeps the file's order.
"""
import json
import pathlib

_DATA = json.loads((pathlib.Path(__file__).with_name("taxonomy.json")).read_text())

VERDICTS = tuple(name for name, _ in _DATA["verdicts"])
STAGES = tuple(name for name, _ in _DATA["stages"])
SAMPLE_ROLES = tuple(name for name, _ in _DATA["sample_roles"])
PHASES = tuple(name for name, _ in _DATA["phases"])
TIMING_KINDS = tuple(name for name, _ in _DATA["timing_kinds"])
NUMERICS_PATHS = tuple(name for name, _ in _DATA["numerics_paths"])
DOCS = {key: {name: doc for name, doc in _DATA[key]}
        for key in ("verdicts", "stages", "sample_roles", "phases", "timing_kinds",
                    "numerics_paths")}

CPU_WALL, TPU_PROFILER, TPU_WALL_FALLBACK = TIMING_KINDS
(NUMERICS_TPU, NUMERICS_MOSAIC_INTERPRETER, NUMERICS_FULL_SHAPES,
 NUMERICS_CPU_BRANCH_ONLY) = NUMERICS_PATHS
