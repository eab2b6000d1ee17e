"""`palladium eval`: hand-written kernels (none from the replay corpus) through the real path of
a run: dispatcher, a local agent process, its judge."""
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = pytest.mark.integration
KERNELS = Path(__file__).parent / "eval_kernels"


def palladium_eval(palladium_bin, workload, path, *extra):
    return subprocess.run([str(palladium_bin), "eval", "--workload", workload, str(path), *extra],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)


@pytest.mark.parametrize("workload,kernel,verdict", [
    ("12p", "rmsnorm_rows_12p.py", "correct"),
    ("41k", "plain_jax_41k.py", "no_pallas"),
    ("41k", "gemm_relu_missing_41k.py", "numerics_mismatch"),
    ("9p", "syntax_error_9p.py", "syntax_error"),
    # Workloads the replay corpus does not cover at all.
    ("20k", "gemm_leaky_relu_20k.py", "correct"),
    ("36k", "sigmoid_rowsum_36k.py", "correct"),
])
def test_json_verdict(palladium_bin, workload, kernel, verdict):
    out = palladium_eval(palladium_bin, workload, KERNELS / kernel, "--json")
    assert out.returncode == 0, out.stderr  # 0 whatever the verdict
    result = json.loads(out.stdout)
    assert result["verdict"] == verdict, result["error"][-2000:]
    assert result["workload"] == workload
    if verdict == "correct":
        assert result["timing_kind"] == "cpu-wall"
        assert result["kernel_ms"] > 0 and result["baseline_ms"] > 0
    else:
        assert result["speedup"] is None


def test_wrong_constant_in_an_uncovered_workload_is_caught(palladium_bin, tmp_path):
    source = (KERNELS / "gemm_leaky_relu_20k.py").read_text()
    wrong = tmp_path / "slope.py"
    wrong.write_text(source.replace("NEGATIVE_SLOPE = 0.1", "NEGATIVE_SLOPE = 0.01"))
    out = palladium_eval(palladium_bin, "20k", wrong, "--json")
    assert json.loads(out.stdout)["verdict"] == "numerics_mismatch"


def test_allow_jax_relaxes_no_pallas(palladium_bin):
    out = palladium_eval(palladium_bin, "41k", KERNELS / "plain_jax_41k.py", "--json", "--allow-jax")
    assert json.loads(out.stdout)["verdict"] == "correct"


def test_computed_import_cannot_escape(palladium_bin):
    marker = Path("/tmp/palladium-eval-escaped")
    marker.unlink(missing_ok=True)
    out = palladium_eval(palladium_bin, "8p", KERNELS / "sneaky_import_8p.py", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["verdict"] != "correct"
    assert not marker.exists()


def test_text_output_names_cpu_timing(palladium_bin, monkeypatch):
    # Three timed pairs (the suite's default is one, tests/conftest.py), so that there is a band.
    monkeypatch.setenv("PALLADIUM_TIMING_RUNS", "3")
    out = palladium_eval(palladium_bin, "12p", KERNELS / "rmsnorm_rows_12p.py")
    assert out.returncode == 0
    assert "verdict    correct" in out.stdout
    assert "NOT a TPU time" in out.stdout
    # The speedup comes with its band: the baseline over the kernel's interquartile band.
    line = next(l for l in out.stdout.splitlines() if l.startswith("speedup"))
    m = re.match(r"speedup +([0-9.e+-]+)x \[([0-9.e+-]+), ([0-9.e+-]+)\] over (\d+) timed runs", line)
    assert m, line
    ratio, low, high, runs = float(m[1]), float(m[2]), float(m[3]), int(m[4])
    assert low <= ratio <= high and runs == 3, line


def test_bad_input_exits_2(palladium_bin, tmp_path):
    assert palladium_eval(palladium_bin, "99z", KERNELS / "plain_jax_41k.py").returncode == 2
    assert palladium_eval(palladium_bin, "8p", tmp_path / "missing.py").returncode == 2


def test_tpu_backend_without_a_tpu_cannot_run(palladium_bin):
    out = palladium_eval(palladium_bin, "12p", KERNELS / "rmsnorm_rows_12p.py", "--backend", "tpu")
    assert out.returncode == 1
    assert "could not run" in out.stderr
