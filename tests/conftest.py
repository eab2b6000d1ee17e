"""Shared by every pytest file (and inherited by the processes the tests start).

jax[tpu] is installed, so any test process that initialises JAX's backends loads libtpu, and
libtpu's /tmp/libtpu_lockfile lets only one process per host do that unless
ALLOW_MULTIPLE_LIBTPU_LOAD is set: parallel test runs (and judges) would fail at random.
compile_tier sets that and the no-metadata-server variables at import, on hosts without TPU
chips only.
"""
import os

import judge.compile.compile_tier  # noqa: F401  (prepare_environment() at import)

# The compile tier is on by default for users. Every judge it runs in starts a compile process
# that loads libtpu, and the suite starts hundreds of judges: with the tier on everywhere the
# README's test command took about twice its 30-minute budget. So the suite runs the tier where
# it tests it: test_compile_tier.py, test_compile_process.py, test_protocol.py's judges and
# the quick-start runs (integration/quickstart_util.py), which switch it on; elsewhere it is off unless
# the caller sets PALLADIUM_COMPILE_TIER.
os.environ.setdefault("PALLADIUM_COMPILE_TIER", "off")

# On a CPU host the judge times each correct kernel by interpreting its TPU program and the
# baseline's, up to 5 pairs (judge/evaluate.py). The suite evaluates hundreds of correct
# kernels and checks the sitting itself where it tests it (test_evaluate.py, test_timing.py):
# elsewhere one pair is enough to keep the README's test command within its time.
os.environ.setdefault("PALLADIUM_TIMING_RUNS", "1")


# The files that take the longest, longest first. scripts/test.sh gives pytest-xdist whole files
# (--dist loadfile) in collection order (--no-loadscope-reorder): xdist's own order, most tests
# first, left the one-test quick start (over two minutes on CI) for last, run alone at the end
# while the other worker idled. Longest first leaves the short files to even out the end. From a
# whole-suite --durations (2026-12-04, every file over 40 s on a loaded host, about 10 s on CI);
# a file missing here only runs later. test_hostile.py before test_evaluate.py since the judge
# test kernels' larger blocks (tests/judge/judge_kernels.py): 548 s against 380 s in one
# process each, on the same loaded host (2026-12-04).
LONGEST_FILES_FIRST = [
    "tests/llm/test_synthetic_families.py",
    "tests/judge/test_hostile.py",
    "tests/judge/test_evaluate.py",
    "tests/workloads/test_workloads.py",
    "tests/llm/test_replay_corpus.py",
    "tests/workloads/test_hand_tuned.py",
    "tests/workloads/test_exact_references.py",
    "tests/integration/test_quickstart_run.py",
    "tests/integration/test_eval_command.py",
    "tests/judge/test_strict.py",
    "tests/judge/test_compile_tier.py",
    "tests/integration/test_llm_providers.py",
    "tests/integration/test_sweep.py",
    "tests/judge/test_protocol.py",
    "tests/workloads/context/test_context_blocks.py",
    "tests/workloads/test_kernelbench_18_34.py",
    "tests/workloads/test_kernelbench_35_50.py",
    "tests/judge/test_doctor.py",
    "tests/judge/test_hostile_sandbox.py",
    "tests/judge/test_sandbox.py",
    "tests/judge/test_compile_process.py",
    "tests/workloads/test_solutions.py",
    "tests/integration/test_cli_errors.py",
    "tests/dashboard/test_browser.py",
    "tests/workloads/test_input_sensitivity.py",
    "tests/judge/tpu_model/test_differential.py",
]


def pytest_collection_modifyitems(session, config, items):
    rank = {path: i for i, path in enumerate(LONGEST_FILES_FIRST)}
    # A stable sort: every other file, and the tests inside each file, keep their order.
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))
