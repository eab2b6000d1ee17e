"""The synthetic model's kernel families get the verdicts their code deserves.

llm/synthetic/ holds the templates and mistakes the offline `synthetic` model writes its answers
from (llm/synthetic_family.hpp). Nothing there says what verdict a variant gets; the expected
verdicts live only here. The variants come from the real C++ model
(`palladium synthetic variants WORKLOAD`): every template at its smallest first-attempt tiling
with each of its mistakes alone, and clean at its largest first-attempt tiling (at the smallest
too with PALLADIUM_SLOW_TESTS=1).

* Each single-mistake variant (by default once per template and mistake; every workload's copy
  with PALLADIUM_SLOW_TESTS=1) and one clean variant per template and workload is evaluated with the judge's
  in-process API at the workload's CPU shapes in Pallas TPU interpret mode, as a run would.
* Variants expected to hang run in niced child processes that are killed after HANG_TIMEOUT_S
  (the agent reports `timeout` for them), beside a control that must finish in the window.
* The clean variant at the largest tiling of every template (its largest VMEM working set)
  compiles for TPU v6e at the workload's full JAXBench shapes with libtpu's deviceless compiler,
  so no "correct" kernel the model writes would overflow VMEM on the real chip. That takes
  minutes of compiles, so it is opt-in: PALLADIUM_SLOW_TESTS=1 (run it after changing a
  template's tile values).
* No rendered answer or explanation uses a word that gives its verdict away.
"""
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("PALLADIUM_BIN", REPO / "build" / "palladium"))

# (workload, template, mistake) -> verdict. Clean variants are all "correct".
EXPECTED = {
    ("12p", "rms_rows", "shape_dtype_list"): "api_misuse",
    ("12p", "rms_rows", "index_map_two_args"): "api_misuse",
    ("12p", "rms_rows", "one_row_per_step"): "lowering_error",
    ("12p", "rms_rows", "mean_over_tile_rows"): "numerics_mismatch",
    ("12p", "rms_rows", "scale_dropped"): "numerics_mismatch",
    ("12p", "rms_chunked", "shape_dtype_list"): "api_misuse",
    ("12p", "rms_chunked", "semantics_on_pallas_call"): "api_misuse",
    ("12p", "rms_chunked", "one_token_per_step"): "lowering_error",
    ("12p", "rms_chunked", "chunk_counter_kept"): "timeout",
    ("12p", "rms_chunked", "mean_over_chunk"): "numerics_mismatch",
    ("1p", "flash_grid", "index_map_three_values"): "api_misuse",
    ("1p", "flash_grid", "semantics_on_pallas_call"): "api_misuse",
    ("1p", "flash_grid", "one_query_per_step"): "lowering_error",
    ("1p", "flash_grid", "strict_causal_mask"): "numerics_mismatch",
    ("1p", "flash_grid", "scale_missing"): "numerics_mismatch",
    ("1p", "flash_resident", "index_map_three_values"): "api_misuse",
    ("1p", "flash_resident", "shape_dtype_list"): "api_misuse",
    ("1p", "flash_resident", "one_query_per_step"): "lowering_error",
    ("1p", "flash_resident", "chunk_counter_kept"): "timeout",
    ("1p", "flash_resident", "strict_causal_mask"): "numerics_mismatch",
    ("2p", "flash_grid", "index_map_three_values"): "api_misuse",
    ("2p", "flash_grid", "semantics_on_pallas_call"): "api_misuse",
    ("2p", "flash_grid", "one_query_per_step"): "lowering_error",
    ("2p", "flash_grid", "strict_causal_mask"): "numerics_mismatch",
    ("2p", "flash_grid", "scale_missing"): "numerics_mismatch",
    ("2p", "flash_grid", "kv_head_by_modulo"): "numerics_mismatch",
    ("2p", "flash_resident", "index_map_three_values"): "api_misuse",
    ("2p", "flash_resident", "shape_dtype_list"): "api_misuse",
    ("2p", "flash_resident", "one_query_per_step"): "lowering_error",
    ("2p", "flash_resident", "chunk_counter_kept"): "timeout",
    ("2p", "flash_resident", "strict_causal_mask"): "numerics_mismatch",
    ("2p", "flash_resident", "kv_head_by_modulo"): "numerics_mismatch",
    ("30k", "gemm_ktiled", "index_map_two_args"): "api_misuse",
    ("30k", "gemm_ktiled", "blockspec_map_first"): "api_misuse",
    ("30k", "gemm_ktiled", "semantics_on_pallas_call"): "api_misuse",
    ("30k", "gemm_ktiled", "old_compiler_params"): "lint_rejected",
    ("30k", "gemm_ktiled", "narrow_k_tiles"): "lowering_error",
    ("30k", "gemm_ktiled", "reset_on_n_axis"): "numerics_mismatch",
    ("30k", "gemm_ktiled", "accumulator_never_zeroed"): "numerics_mismatch",
    ("30k", "gemm_ktiled", "residual_dropped"): "numerics_mismatch",
    ("30k", "gemm_strips", "index_map_one_arg"): "api_misuse",
    ("30k", "gemm_strips", "shape_dtype_list"): "api_misuse",
    ("30k", "gemm_strips", "narrow_n_tiles"): "lowering_error",
    ("30k", "gemm_strips", "loop_counter_kept"): "timeout",
    ("30k", "gemm_strips", "first_chunk_skipped"): "numerics_mismatch",
    ("30k", "gemm_strips", "residual_dropped"): "numerics_mismatch",
    ("30k", "gemm_xla_epilogue", "index_map_two_args"): "api_misuse",
    ("30k", "gemm_xla_epilogue", "narrow_k_tiles"): "lowering_error",
    ("30k", "gemm_xla_epilogue", "output_never_zeroed"): "numerics_mismatch",
    ("36k", "rowsum_ktiled", "index_map_two_args"): "api_misuse",
    ("36k", "rowsum_ktiled", "semantics_on_pallas_call"): "api_misuse",
    ("36k", "rowsum_ktiled", "bias_lanes_narrow"): "lowering_error",
    ("36k", "rowsum_ktiled", "sum_reset_per_tile"): "numerics_mismatch",
    ("36k", "rowsum_ktiled", "swish_for_sigmoid"): "numerics_mismatch",
    ("36k", "rowsum_strips", "shape_dtype_list"): "api_misuse",
    ("36k", "rowsum_strips", "index_map_one_arg"): "api_misuse",
    ("36k", "rowsum_strips", "bias_lanes_narrow"): "lowering_error",
    ("36k", "rowsum_strips", "loop_counter_kept"): "timeout",
    ("36k", "rowsum_strips", "row_mean_not_sum"): "numerics_mismatch",
    ("41k", "gemm_ktiled", "index_map_two_args"): "api_misuse",
    ("41k", "gemm_ktiled", "blockspec_map_first"): "api_misuse",
    ("41k", "gemm_ktiled", "semantics_on_pallas_call"): "api_misuse",
    ("41k", "gemm_ktiled", "old_compiler_params"): "lint_rejected",
    ("41k", "gemm_ktiled", "narrow_k_tiles"): "lowering_error",
    ("41k", "gemm_ktiled", "reset_on_n_axis"): "numerics_mismatch",
    ("41k", "gemm_ktiled", "accumulator_never_zeroed"): "numerics_mismatch",
    ("41k", "gemm_ktiled", "bias_each_k_step"): "numerics_mismatch",
    ("41k", "gemm_strips", "index_map_one_arg"): "api_misuse",
    ("41k", "gemm_strips", "shape_dtype_list"): "api_misuse",
    ("41k", "gemm_strips", "narrow_n_tiles"): "lowering_error",
    ("41k", "gemm_strips", "loop_counter_kept"): "timeout",
    ("41k", "gemm_strips", "first_chunk_skipped"): "numerics_mismatch",
    ("41k", "gemm_xla_epilogue", "index_map_two_args"): "api_misuse",
    ("41k", "gemm_xla_epilogue", "narrow_k_tiles"): "lowering_error",
    ("41k", "gemm_xla_epilogue", "output_never_zeroed"): "numerics_mismatch",
    ("8p", "gemm_ktiled", "index_map_two_args"): "api_misuse",
    ("8p", "gemm_ktiled", "blockspec_map_first"): "api_misuse",
    ("8p", "gemm_ktiled", "semantics_on_pallas_call"): "api_misuse",
    ("8p", "gemm_ktiled", "old_compiler_params"): "lint_rejected",
    ("8p", "gemm_ktiled", "narrow_k_tiles"): "lowering_error",
    ("8p", "gemm_ktiled", "reset_on_n_axis"): "numerics_mismatch",
    ("8p", "gemm_ktiled", "accumulator_never_zeroed"): "numerics_mismatch",
    ("8p", "gemm_strips", "index_map_one_arg"): "api_misuse",
    ("8p", "gemm_strips", "shape_dtype_list"): "api_misuse",
    ("8p", "gemm_strips", "narrow_n_tiles"): "lowering_error",
    ("8p", "gemm_strips", "loop_counter_kept"): "timeout",
    ("8p", "gemm_strips", "first_chunk_skipped"): "numerics_mismatch",
    ("9p", "swiglu_fused", "blockspec_map_first"): "api_misuse",
    ("9p", "swiglu_fused", "semantics_on_pallas_call"): "api_misuse",
    ("9p", "swiglu_fused", "narrow_hidden_tiles"): "lowering_error",
    ("9p", "swiglu_fused", "accumulator_never_zeroed"): "numerics_mismatch",
    ("9p", "swiglu_fused", "silu_on_up"): "numerics_mismatch",
    ("9p", "swiglu_two_pass", "index_map_one_arg"): "api_misuse",
    ("9p", "swiglu_two_pass", "old_compiler_params"): "lint_rejected",
    ("9p", "swiglu_two_pass", "narrow_hidden_tiles"): "lowering_error",
    ("9p", "swiglu_two_pass", "chunk_counter_kept"): "timeout",
    ("9p", "swiglu_two_pass", "silu_on_up"): "numerics_mismatch",
    ("9p", "swiglu_xla_down", "blockspec_map_first"): "api_misuse",
    ("9p", "swiglu_xla_down", "narrow_hidden_tiles"): "lowering_error",
    ("9p", "swiglu_xla_down", "silu_on_up"): "numerics_mismatch",
}
WORKLOADS = sorted({w for w, _, _ in EXPECTED})
# The control (12p at 2048 x 1024 since the reduced shapes keep 12p's divisibility) takes about
# 9 s of numerics at load 8; the window leaves it room while the suite runs two test workers.
HANG_TIMEOUT_S = 45.0

# Words that would give a verdict away in an answer (the same list as the replay corpus's test).
_TELLTALE = re.compile(
    r"\b(bugs?|buggy|wrong|incorrect|hangs?|hung|deadlock\w*|infinite|misuse|off-by-one|"
    r"intentional\w*|deliberate\w*|verdict|no_code|api_misuse|lowering_error|"
    r"numerics_mismatch|timeout|mistakes?|slips?)\b", re.IGNORECASE)


def _variants(workload, all_tilings=False):
    if not BIN.exists():
        pytest.fail(f"{BIN} not built: run scripts/build.sh (scripts/test.sh does it)")
    args = [str(BIN), "synthetic", "variants", workload] + (["--all-tilings"] if all_tilings
                                                             else [])
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def _catalog():
    """{(workload, template, mistake or None): code}: the smallest first-attempt tiling."""
    catalog = {}
    for w in WORKLOADS:
        seen_clean = set()
        for v in _variants(w):
            if v["mistakes"]:
                catalog[(w, v["template"], v["mistakes"][0])] = v["code"]
            elif v["template"] not in seen_clean:
                seen_clean.add(v["template"])
                catalog[(w, v["template"], None)] = v["code"]
    return catalog


def _largest_clean(variants):
    """{template: its clean variant with the largest blocks (the most VMEM, the fewest grid
    steps)} among `variants`."""
    by_template = {}
    for v in variants:
        if not v["mistakes"]:
            by_template.setdefault(v["template"], []).append(v)
    return {template: max(vs, key=lambda v: sum(v["params"].values()))
            for template, vs in by_template.items()}


def _largest_first_attempts():
    """{(workload, template, None): code}: each template clean at its largest first-attempt
    tiling."""
    return {(w, template, None): v["code"] for w in WORKLOADS
            for template, v in _largest_clean(_variants(w)).items()}


CATALOG = _catalog() if BIN.exists() else {}
CLEAN = sorted(k for k in CATALOG if k[2] is None)
SLOW = os.environ.get("PALLADIUM_SLOW_TESTS") == "1"
# The clean variants are the file's costliest evaluations (two seeds and a timing sitting each,
# every grid step interpreted twice) and their smallest tilings the slowest: 8p's gemm_ktiled
# at 128^3 blocks is 1024 grid steps, at 256^3 128. By default each is evaluated at its largest
# first-attempt tiling: the same template code with larger constants, correct or not for the
# same reasons. The smallest (where the mistakes are written) with PALLADIUM_SLOW_TESTS=1:
# test_clean_variant_at_its_smallest_tiling.
LARGEST_CLEAN = _largest_first_attempts() if BIN.exists() else {}


def _once_per_mistake(keys):
    """Several workloads share a template (gemm_ktiled serves 8p, 30k and 41k), and a mistake
    breaks the same code the same way in each of them, so by default one workload per
    (template, mistake) is evaluated; PALLADIUM_SLOW_TESTS=1 evaluates every workload's copy."""
    if SLOW:
        return sorted(keys)
    chosen = {}
    for key in sorted(keys):
        chosen.setdefault(key[1:], key)
    return sorted(chosen.values())


IN_PROCESS = _once_per_mistake(k for k, v in EXPECTED.items() if v != "timeout")
HANGING = _once_per_mistake(k for k, v in EXPECTED.items() if v == "timeout")


def _id(key):
    return "/".join(x or "clean" for x in key)


def test_catalog_matches_expected_table():
    assert BIN.exists(), f"{BIN} not built"
    assert sorted(k for k in CATALOG if k[2] is not None) == sorted(EXPECTED)
    assert {w for w, _, _ in CLEAN} == set(WORKLOADS)
    assert sorted(LARGEST_CLEAN) == CLEAN
    assert sorted(w for w in subprocess.run([str(BIN), "synthetic", "workloads"], check=True,
                                            capture_output=True, text=True).stdout.split()) \
        == WORKLOADS


@pytest.mark.parametrize("key", CLEAN + IN_PROCESS, ids=_id)
def test_verdict_in_process(key, tmp_path, monkeypatch):
    _check_verdict(key, LARGEST_CLEAN[key] if key[2] is None else CATALOG[key], tmp_path,
                   monkeypatch)


@pytest.mark.skipif(not SLOW, reason="the clean variants at their smallest tilings take minutes; "
                                     "test_verdict_in_process checks them at their largest; "
                                     "PALLADIUM_SLOW_TESTS=1")
@pytest.mark.parametrize("key", [k for k in CLEAN if CATALOG[k] != LARGEST_CLEAN[k]], ids=_id)
def test_clean_variant_at_its_smallest_tiling(key, tmp_path, monkeypatch):
    _check_verdict(key, CATALOG[key], tmp_path, monkeypatch)


def _check_verdict(key, code, tmp_path, monkeypatch):
    from judge.evaluate import evaluate
    monkeypatch.chdir(tmp_path)
    want = "correct" if key[2] is None else EXPECTED[key]
    # A correct kernel must hold on both seeds; a mistake shows on the first already.
    seeds = (0, 1) if want == "correct" or SLOW else (0,)
    result = evaluate(key[0], code, seeds=seeds)
    assert result["verdict"] == want, (result["stage"], result["error"][-2000:])
    if want == "correct":
        assert result["stage"] == "done"
        # Timed, or left untimed on this host with the reason (judge/evaluate.py: a sitting
        # that would not fit in its share of the timeout, e.g. 2p's slow interpretation).
        assert result["kernel_ms"] > 0 or result["timing"]["unpublished"], result["timing"]


_HANG_SCRIPT = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    from judge.evaluate import evaluate
    workload, path = sys.argv[2], sys.argv[3]
    code = open(path).read()
    print("START", flush=True)
    print("VERDICT", evaluate(workload, code, seeds=(0, 1))["verdict"], flush=True)
""")


@pytest.fixture(scope="module")
def hang_runs(tmp_path_factory):
    """Runs every expected-hang variant and a control (a clean variant of a looping template) in
    niced children; {key: (finished, stdout)} after HANG_TIMEOUT_S."""
    import warnings
    control = ("12p", "rms_rows", None)
    children = {}
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="os.fork", category=RuntimeWarning)
        for key in HANGING + [control]:
            d = tmp_path_factory.mktemp(_id(key).replace("/", "_"))
            (d / "candidate.txt").write_text(CATALOG[key])
            nice = "0" if key == control else "19"
            children[key] = subprocess.Popen(
                ["nice", "-n", nice, sys.executable, "-c", _HANG_SCRIPT, str(REPO), key[0],
                 str(d / "candidate.txt")], cwd=d, env=env, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    # The window starts once every child is past its imports (JAX takes seconds to import on a
    # loaded machine): each prints START first.
    started = {key: proc.stdout.readline() for key, proc in children.items()}
    deadline = time.monotonic() + HANG_TIMEOUT_S
    while time.monotonic() < deadline and any(p.poll() is None for p in children.values()):
        time.sleep(0.25)
    runs = {}
    for key, proc in children.items():
        finished = proc.poll() is not None
        if not finished:
            os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate(timeout=30)
        runs[key] = (finished, started[key] + out)
    return runs, control


@pytest.mark.parametrize("key", HANGING, ids=_id)
def test_verdict_timeout(key, hang_runs):
    runs, _ = hang_runs
    finished, out = runs[key]
    assert "START" in out, out
    assert not finished and "VERDICT" not in out, out


def test_timeout_window_fits_a_finishing_kernel(hang_runs):
    runs, control = hang_runs
    _, out = runs[control]
    assert "VERDICT correct" in out, out


_COMPILE_SCRIPT = textwrap.dedent("""
    import importlib.util, json, os, sys
    for k, v in (("TPU_SKIP_MDS_QUERY", "1"), ("JAX_PLATFORMS", "cpu"),
                 ("TPU_ACCELERATOR_TYPE", "v6e-1"), ("TPU_WORKER_HOSTNAMES", "localhost"),
                 ("TPU_WORKER_ID", "0"), ("ALLOW_MULTIPLE_LIBTPU_LOAD", "1")):
        os.environ.setdefault(k, v)
    sys.path.insert(0, sys.argv[1])
    import jax, numpy as np
    from jax.experimental import topologies
    from workloads import registry
    from judge.audit import static_argnums
    topo = topologies.get_topology_desc(topology_name="v6e:1x1", platform="tpu",
                                        chip_config_name="default",
                                        chips_per_host_bounds=(1, 1, 1), num_slices=1)
    sharding = jax.sharding.SingleDeviceSharding(topo.devices[0])
    mesh = jax.sharding.Mesh(np.array(topo.devices), ("x",))
    results = {}
    for item in json.load(open(sys.argv[2])):
        module = registry.get(item["workload"])
        shapes = jax.eval_shape(lambda: module.create_inputs(module.CONFIG, 0))
        specs = [jax.ShapeDtypeStruct(s.shape, s.dtype, sharding=sharding) for s in shapes]
        namespace = {}
        try:
            exec(compile(item["code"], "candidate.py", "exec"), namespace)
            with jax.sharding.use_abstract_mesh(mesh.abstract_mesh):
                jax.jit(namespace["workload"]).lower(*specs).compile()
            results[item["key"]] = "ok"
        except Exception as exc:
            results[item["key"]] = f"{type(exc).__name__}: {exc}"[:1500]
    print("RESULTS " + json.dumps(results))
""")


def _largest_tilings():
    """Clean variants at the largest tiling of each template (the most VMEM)."""
    return [{"workload": w, "key": f"{w}/{template}/{v['params']}", "code": v["code"]}
            for w in WORKLOADS
            for template, v in _largest_clean(_variants(w, all_tilings=True)).items()]


@pytest.mark.skipif(not SLOW,
                    reason="about 3 minutes of libtpu compiles; opt in with PALLADIUM_SLOW_TESTS=1")
def test_clean_variants_compile_for_v6e_at_full_shapes(tmp_path):
    items = _largest_tilings()
    (tmp_path / "items.json").write_text(json.dumps(items))
    proc = subprocess.run([sys.executable, "-c", _COMPILE_SCRIPT, str(REPO),
                           str(tmp_path / "items.json")], capture_output=True, text=True,
                          timeout=1200)
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULTS ")]
    assert line, proc.stderr[-3000:]
    results = json.loads(line[0][len("RESULTS "):])
    failed = {k: v for k, v in results.items() if v != "ok"}
    assert not failed, failed
    assert len(results) == len(items)


def test_answers_do_not_give_their_verdict_away():
    texts = list(CATALOG.values())
    for path in sorted((REPO / "llm" / "synthetic").rglob("*.yaml")):
        import yaml
        data = yaml.safe_load(path.read_text())
        texts += data.get("prose", []) + data.get("questions", [])
    for text in texts:
        match = _TELLTALE.search(text)
        assert not match, (match.group(0), text[:300])
