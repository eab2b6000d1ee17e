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
# first, left the one-test quick start (over two minutes on CI) for last, with one worker running
# it alone while the other had finished. Longest first leaves the short files to even out the
# end. From CI's and a local --durations; a file missing here only runs later.
LONGEST_FILES_FIRST = [
    "tests/integration/test_quickstart_run.py",
]


def pytest_collection_modifyitems(session, config, items):
    rank = {path: i for i, path in enumerate(LONGEST_FILES_FIRST)}
    # A stable sort: every other file, and the tests inside each file, keep their order.
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))
