"""A `palladium run` whose agents run the fake judge (tests/agent/fake_judge.py) on a replay
corpus of candidates that each take a fixed time.

The fault tests are about the coordinator, the agents and the store: who holds which job, what
is requeued, what is paid for. With real judges each of them spent most of its minute or more
starting JAX and interpreting kernels (and 30-60 s on the corpus's hanging kernel), on a machine
where that time is not even steady. The fake judge answers every candidate after SLEEP_MS, so a
fault lands while jobs are in flight and the run's length is known. What the real judges send
back (versions, input seeds, the numerics path, the report over real verdicts) is checked on the
full quick start with real judges, in test_quickstart_run.py.

The seam is the agent's own: PALLADIUM_PYTHON names the Python that runs `-m judge`; here it is
a script that runs the fake judge instead (and refuses anything else).
"""
import os
import sys

from conftest import ROOT

FAKE_JUDGE_DIR = ROOT / "tests" / "agent"


# The stages a real interpret judge runs: the dispatcher gives a job only to an agent whose judge
# runs every stage the job needs (actors/capabilities.cpp), and the fake judge's own ready frame
# names just three.
JUDGE_STAGES = ["lint", "import", "trace", "lower", "structure", "numerics", "timing"]


def fake_judge_env(tmp_path, base=None):
    """The environment for `palladium run` / `palladium agent` whose judges are fake ones."""
    python = tmp_path / "fake-judge-python"
    python.write_text(
        f"#!{sys.executable}\n"
        "# Stands in for the judge's Python: the agent runs `<python> -m judge --backend B`.\n"
        "import sys\n"
        "if sys.argv[1:3] != ['-m', 'judge']:\n"
        "    sys.exit(f'fake-judge-python: expected -m judge, got {sys.argv[1:]}')\n"
        "del sys.argv[1:3]\n"
        f"sys.path.insert(0, {str(FAKE_JUDGE_DIR)!r})\n"
        "import fake_judge\n"
        "write = fake_judge._write\n"
        "def _write(out, obj):\n"
        "    if obj.get('type') == 'ready':\n"
        f"        obj = dict(obj, stages={JUDGE_STAGES!r})\n"
        "    write(out, obj)\n"
        "fake_judge._write = _write\n"
        "fake_judge.main()\n")
    python.chmod(0o755)
    return {**(os.environ if base is None else base), "PALLADIUM_PYTHON": str(python)}


def sleep_corpus(tmp_path, workloads, per_workload, sleep_ms):
    """A replay corpus: `per_workload` distinct responses per workload (distinct, so that no
    candidate is a cached copy of another), each a kernel the fake judge answers `correct`
    after `sleep_ms`."""
    corpus = tmp_path / "corpus"
    for workload in workloads:
        (corpus / workload).mkdir(parents=True)
        for i in range(per_workload):
            (corpus / workload / f"{i:02d}.md").write_text(
                f"Response {i} for {workload}.\n\n```python\n"
                f"# SLEEP_MS={sleep_ms} (the fake judge answers after this long)\n"
                f"def workload(x):\n    return x + {i}\n```\n")
    return corpus
