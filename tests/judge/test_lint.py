"""Static lint of candidate sources."""
from judge.lint import lint

import judge_kernels as k


def test_clean_kernel_passes():
    assert lint(k.CORRECT) == []


def test_forbidden_imports_and_calls():
    for code in ("import os", "import subprocess as sp", "from ctypes import CDLL",
                 "import multiprocessing.pool", "import sys", "exec('1')", "__import__('os')"):
        assert lint(code), code


def test_jax_config_changes():
    assert lint("import jax\njax.config.update('jax_enable_x64', True)")
    assert lint("from jax import config\n")


def test_removed_pallas_names_name_the_replacement():
    problems = lint("from jax.experimental.pallas import tpu as tpu2\n"
                    "p = tpu2.TPUMemorySpace.VMEM\nq = tpu2.repeat\nr = tpu2.ANY\n")
    text = "\n".join(problems)
    assert "pltpu.MemorySpace" in text and "repeat" in text and "pl.ANY" in text


def test_the_lowering_registry_is_off_limits():
    for code in ("from jax.interpreters import mlir\nmlir.register_lowering(p, f)\n",
                 "from jax._src.interpreters.mlir import lower_per_platform\n",
                 "import jax\njax._src.pallas.pallas_call._pallas_call_lowering = None\n"):
        problems = lint(code)
        assert problems and "may not change how JAX lowers primitives" in problems[0], code


def test_legal_names_are_not_flagged():
    assert lint("import jax.numpy as jnp\nfrom jax.experimental import pallas as pl\n"
                "a = jnp.repeat\nb = pl.ANY\nc = jax.numpy.repeat\n") == []


def test_unparsable_code_is_left_to_the_import_stage():
    assert lint("def f(:\n") == []
