"""`palladium plan`: what it prints, that the binding limit follows the limits it is given, and
that a bad flag is named. Offline: plan calls no API and starts no agent (a dry run on the
synthetic model), so each invocation takes about a second."""
import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def binary():
    path = Path(os.environ.get("PALLADIUM_BIN", ROOT / "build" / "palladium"))
    if not path.exists():
        pytest.fail(f"{path} not built: run scripts/build.sh")
    return path


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    """The study's iterative_context config cut to two workloads and 8 candidates each."""
    path = tmp_path_factory.mktemp("plan") / "plan.yaml"
    path.write_text("""name: plan-test
method: iterative_context
workloads: [8p, 12p]
budget_per_workload: 8
seeds: [0]
context:
  blocks: [hardware, api, examples, rules]
llm:
  provider: gemini
  model: gemini-3-flash-preview
  api_key_env: GEMINI_API_KEY
  max_output_tokens: 16384
evaluation: {backend: tpu, timeout_s: 120, input_seeds: [0, 1]}
agents: {local: 0, listen: 'tcp://0.0.0.0:5555'}
""")
    return path


def plan(*args):
    # No key in the environment: plan must not need one.
    env = {k: v for k, v in os.environ.items() if k != "GEMINI_API_KEY"}
    return subprocess.run([str(binary()), "plan", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=60)


def binding(out):
    m = re.search(r"predicted wall time (.+?) \((.+?) s\), bound by (.+?); to relax it", out)
    assert m, out
    return m.group(3)


def test_the_study_config_prints_cost_wall_time_and_binding_limit():
    out = plan(ROOT / "configs/study/iterative_context.yaml", "--chips", 8,
               "--tier-limits", "gemini-tier1")
    assert out.returncode == 0, out.stderr
    assert "calls 3200  candidates 3200" in out.stdout, out.stdout
    dollars = re.search(r"dollars: online \$([\d.]+), batch \$([\d.]+)", out.stdout)
    assert dollars, out.stdout
    online, batch = map(float, dollars.groups())
    assert online > 0 and batch == pytest.approx(online / 2, rel=0.01)
    assert "8 chips" in out.stdout
    assert binding(out.stdout) in {"concurrency", "spend rate", "TPU chips", "sequential chain",
                                   "tokens/min", "requests/min"}
    assert re.search(r"<- binds", out.stdout), out.stdout


# 16 calls in chains of 8 (two workloads); 40 s a call.
@pytest.mark.parametrize("limits, chips, eval_s, expected", [
    ("concurrency=1", 1000, 10, "concurrency"),
    ("rpm=1,concurrency=100000", 1000, 10, "requests/min"),
    ("tpm=2000,concurrency=100000", 1000, 10, "tokens/min"),
    ("usd_per_window=0.1,window_s=600,concurrency=100000", 1000, 10, "spend rate"),
    ("concurrency=100000", 1, 60, "TPU chips"),
    ("concurrency=100000", 100000, 10, "sequential chain"),
])
def test_the_binding_limit_follows_the_limits(config, limits, chips, eval_s, expected):
    out = plan(config, "--chips", chips, "--tier-limits", limits, "--latency-s", 40,
               "--eval-s", eval_s)
    assert out.returncode == 0, out.stderr
    assert binding(out.stdout) == expected, out.stdout


def test_the_cached_share_is_estimated_unless_given(config):
    out = plan(config)
    m = re.search(r"cached share ([\d.]+)", out.stdout)
    assert m and float(m.group(1)) > 0.5, out.stdout  # the context blocks repeat in every prompt
    assert "estimated from the prompts' shared prefixes" in out.stdout
    given = plan(config, "--cached-share", 0)
    assert "cached share 0.00" in given.stdout, given.stdout
    cost = lambda o: float(re.search(r"online \$([\d.]+)", o).group(1))
    assert cost(given.stdout) > cost(out.stdout)


@pytest.mark.parametrize("args, named", [
    (["--latency-s", "x"], "--latency-s needs seconds >= 0, got 'x'"),
    (["--eval-s", "-1"], "--eval-s needs seconds >= 0, got '-1'"),
    (["--startup-s", "soon"], "--startup-s needs seconds >= 0, got 'soon'"),
    (["--chips", "0"], "--chips needs a whole number >= 1, got '0'"),
    (["--chips"], "--chips needs a whole number >= 1, got nothing"),
    (["--cached-share", "1.5"], "--cached-share needs a share in [0, 1], got '1.5'"),
    (["--output-tokens", "many"], "--output-tokens needs tokens >= 0, got 'many'"),
    (["--tier-limits"], "--tier-limits needs a list"),
    (["--tier-limits", "rps=3"], "--tier-limits: unknown limit 'rps'"),
    (["--tier-limits", "rpm"], "--tier-limits: 'rpm' is not key=number"),
    (["--frobnicate"], "unexpected argument '--frobnicate'"),
])
def test_a_bad_flag_is_named(config, args, named):
    out = plan(config, *args)
    assert out.returncode == 2, out.stdout
    assert named in out.stderr, out.stderr


def test_a_missing_config_is_named(tmp_path):
    out = plan(tmp_path / "nope.yaml")
    assert out.returncode != 0
    assert "nope.yaml" in out.stderr, out.stderr
