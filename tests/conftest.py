"""Shared by every pytest file (and inherited by the processes the tests start).

jax[tpu] is installed, so any test process that initialises JAX's backends loads libtpu, and
libtpu's /tmp/libtpu_lockfile lets only one process per host do that unless
ALLOW_MULTIPLE_LIBTPU_LOAD is set: parallel test runs (and sidecars) would fail at random.
compile_tier sets that and the no-metadata-server variables at import, on hosts without TPU
chips only.
"""
import tpu_agent.sidecar.compile_tier  # noqa: F401  (prepare_environment() at import)
