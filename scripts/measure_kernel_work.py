"""The calibration behind structure.py's kernel rules (docs/verification.md 1b): for each kernel
that must pass, the work its Mosaic bodies do against the XLA baseline's, and each kernel's CPU
branch (the HLO interpreter) against its Mosaic body.

    .venv/bin/python scripts/measure_kernel_work.py [--synthetic] [--only 8p/02.md ...]
    .venv/bin/python scripts/measure_kernel_work.py --interpret [--all-variants] [--only ...]
    .venv/bin/python scripts/measure_kernel_work.py --cost

Candidates: the correct responses of the replay corpus, the per-workload kernels of the judge
tests, the hand-tuned references, and with --synthetic the clean variants of the synthetic
model (build/palladium synthetic variants, or $PALLADIUM_BIN). They are our own code, so this
script exports them in its own process exactly as the candidate process does
(sandbox/candidate/stages.py: the full shapes for TPU, the reduced shapes for TPU + CPU); the
judge never does this.

--interpret is the sweep behind the judge's Mosaic interpreter (tpu_program.py, docs/
verification.md 1b): every kernel that must pass, plus the eval kernels of the integration
tests and the compile tier's kernels (right on any CPU check), and the kernels that must fail
their numerics (the replay corpus's and the synthetic model's numerics_mismatch mistakes). Each
reduced-shape artifact's TPU program is interpreted on seed 1's inputs and compared with the
exact reference; the table says interpreted (pass / mismatch), or the op it does not support.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import time
import types

os.environ.setdefault("PALLADIUM_COMPILE_TIER", "off")
REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests" / "llm"),
                str(REPO / "tests" / "judge"), str(REPO / "tests")]

import jax  # noqa: E402
from jax import export  # noqa: E402

from sandbox.candidate import interpret  # noqa: E402
from judge import evaluate as judge  # noqa: E402
from judge import structure  # noqa: E402
from workloads import hand_tuned, registry  # noqa: E402

CORPUS = ["8p/02.md", "8p/06.md", "12p/01.md", "12p/03.md", "12p/04.md", "9p/03.md", "9p/05.md",
          "9p/06.md",
          "41k/02.md", "41k/07.md", "1p/03.md", "1p/05.md"]


def candidates(synthetic):
    from corpus_util import CORPUS_DIR, extract_code, read_response
    import judge_kernels
    for name in CORPUS:
        yield f"corpus {name}", name.split("/")[0], extract_code(read_response(CORPUS_DIR / name))
    for wid, code in judge_kernels.WORKLOAD_KERNELS.items():
        yield f"skeleton {wid}", wid, code
    for wid in hand_tuned.ids():
        if wid != "7p":  # cannot run in either interpret mode (tests/workloads/test_hand_tuned.py)
            yield f"hand-tuned {wid}", wid, hand_tuned.source(wid)
    if synthetic:
        binary = os.environ.get("PALLADIUM_BIN", REPO / "build" / "palladium")
        for wid in ("8p", "12p", "9p", "41k", "1p", "2p", "30k", "36k"):
            out = subprocess.run([str(binary), "synthetic", "variants", wid], check=True,
                                 capture_output=True, text=True).stdout
            seen = set()
            for line in out.splitlines():
                v = json.loads(line)
                if not v["mistakes"] and v["template"] not in seen:
                    seen.add(v["template"])
                    yield f"synthetic {wid}/{v['template']}", wid, v["code"]


def interpret_candidates(all_variants):
    """(label, workload, code, expected verdict) for the interpreter's sweep."""
    from corpus_util import CORPUS_DIR, extract_code, read_response
    import compile_tier_kernels
    import test_replay_corpus
    import test_synthetic_families
    for name, verdict in sorted(test_replay_corpus.EXPECTED.items()):
        if verdict in ("correct", "numerics_mismatch"):
            yield (f"corpus {name}", name.split("/")[0],
                   extract_code(read_response(CORPUS_DIR / name)), verdict)
    for label, wid, code in candidates(False):
        if not label.startswith("corpus"):
            yield label, wid, code, "correct"
    for path in sorted((REPO / "tests" / "integration" / "eval_kernels").glob("*.py")):
        wid = path.stem.rsplit("_", 1)[-1]
        if path.stem in ("gemm_leaky_relu_20k", "rmsnorm_rows_12p", "sigmoid_rowsum_36k"):
            yield f"eval_kernels {path.stem}", wid, path.read_text(), "correct"
        elif path.stem == "gemm_relu_missing_41k":
            yield f"eval_kernels {path.stem}", wid, path.read_text(), "numerics_mismatch"
    for name, (wid, code) in compile_tier_kernels.ALL.items():
        yield f"compile tier {name}", wid, code, "correct"
    binary = os.environ.get("PALLADIUM_BIN", REPO / "build" / "palladium")
    expected = test_synthetic_families.EXPECTED
    for wid in test_synthetic_families.WORKLOADS:
        out = subprocess.run([str(binary), "synthetic", "variants", wid], check=True,
                             capture_output=True, text=True).stdout
        seen = set()
        for line in out.splitlines():
            v = json.loads(line)
            mistake = v["mistakes"][0] if len(v["mistakes"]) == 1 else None
            want = "correct" if not v["mistakes"] else \
                expected.get((wid, v["template"], mistake))
            key = (v["template"], mistake)
            if want not in ("correct", "numerics_mismatch") or \
                    (key in seen and not (all_variants and want == "correct")):
                continue
            seen.add(key)
            params = ",".join(f"{k}={p}" for k, p in sorted(v["params"].items()))
            yield (f"synthetic {wid}/{v['template']}" + (f"/{mistake}" if mistake else "") +
                   (f" {params}" if all_variants else ""), wid, v["code"], want)


def sweep_interpreter(evaluator, opts):
    """The interpreter's coverage table; returns the number of false rejects."""
    import numpy as np
    from judge import compare
    from judge.tpu_model import mosaic_interpreter, tpu_program
    counts, false_rejects = {}, 0
    print(f"{'candidate':58} {'expected':17} {'interpreted':28} {'ms':>7} {'ops':>8} "
          f"{'elements':>9}")
    for (label, _, _, want), module, _, reduced in exported(
            evaluator, interpret_candidates(opts.all_variants), opts.only, 58, 60):
        inputs, reference, _ = evaluator.reference(module, module.CPU_CONFIG, 1)
        static = judge.static_argnums(module)
        arrays = [np.asarray(x) for i, x in enumerate(inputs) if i not in static]
        start = time.perf_counter()
        budget = mosaic_interpreter.Budget()
        try:
            got = tpu_program.run(reduced.mlir_module(), reduced.platforms, arrays, budget)
            outcome = compare.compare(reference.tree(got), reference, module.ATOL, module.RTOL)
            found = "pass" if outcome.ok else f"mismatch ({outcome.kind})"
        except mosaic_interpreter.Unsupported as exc:
            found = f"unsupported: {exc}"
        except Exception as exc:
            found = f"interpreter error: {type(exc).__name__}: {exc}"
        ms = (time.perf_counter() - start) * 1e3
        if want == "correct" and found.startswith("mismatch"):
            false_rejects += 1
        bucket = (want, found.split(":")[0].split(" (")[0])
        counts[bucket] = counts.get(bucket, 0) + 1
        ops = mosaic_interpreter.MAX_OP_EXECUTIONS - budget.ops
        elements = mosaic_interpreter.MAX_ELEMENTS - budget.elements
        print(f"{label:58} {want:17} {found[:60]:28} {ms:7.0f} {ops:8} {elements:9.3g}",
              flush=True)
    print("\nexpected           interpreted    kernels")
    for (want, found), n in sorted(counts.items()):
        print(f"{want:18} {found:14} {n:7}")
    print(f"false rejects (a correct kernel whose interpretation mismatches): {false_rejects}")
    return false_rejects


def interpreter_cost():
    """The interpreter's share of the judge's time per candidate: a few correct kernels
    evaluated end to end (the sandboxed candidate process, the default compile tier) twice,
    the second run reported."""
    import judge_kernels
    kernels = [("8p", "skeleton 8p", judge_kernels.CORRECT),
               ("12p", "skeleton 12p", judge_kernels.RMSNORM),
               ("1p", "skeleton 1p", judge_kernels.WORKLOAD_KERNELS["1p"]),
               ("6p", "hand-tuned 6p", hand_tuned.source("6p"))]
    evaluator = judge.Evaluator()
    evaluator.pool.start()
    evaluator.pool.prepare()
    print(f"{'candidate':16} {'verdict':10} {'judge ms':>9} {'numerics ms':>12} "
          f"{'interpreter ms':>15} {'share':>6}")
    try:
        for wid, label, code in kernels:
            for _ in range(2):
                start = time.perf_counter()
                result = evaluator.evaluate(wid, code, seeds=(0, 1))
                total = (time.perf_counter() - start) * 1e3
            ms = (result["mosaic_interpreter"] or {}).get("ms") or 0.0
            print(f"{label:16} {result['verdict']:10} {total:9.0f} "
                  f"{result['stage_ms'].get('numerics', 0):12.0f} {ms:15.0f} "
                  f"{ms / total:6.1%}", flush=True)
    finally:
        evaluator.close()


def exported(evaluator, items, only, width, why_width):
    """(item, module, full, reduced) for each (label, workload id, code, ...) item whose label
    matches --only; an export that fails is a row of the table, not the end of the sweep."""
    for item in items:
        label, wid, code = item[:3]
        if only and not any(o in label for o in only):
            continue
        module = registry.get(wid)
        try:
            full, reduced = export_both(evaluator, module, code)
        except Exception as exc:
            print(f"{label:{width}} export failed: {type(exc).__name__}: "
                  f"{str(exc)[:why_width]}")
            continue
        yield item, module, full, reduced


def export_both(evaluator, module, code):
    namespace = types.ModuleType("candidate")
    exec(compile(code, "candidate.py", "exec"), namespace.__dict__)
    jitted = jax.jit(namespace.workload, static_argnums=judge.static_argnums(module))

    def args(config):
        return [s["static"] if "static" in s else
                jax.ShapeDtypeStruct(tuple(s["shape"]), judge._np_dtype(s["dtype"]))
                for s in evaluator._argument_specs(module, config)]
    with interpret.mode("tpu"), interpret.tpu_abstract_mesh():
        full = export.export(jitted, platforms=["tpu"])(*args(module.CONFIG))
        reduced = export.export(jitted, platforms=["tpu", "cpu"])(*args(module.CPU_CONFIG))
    return full, reduced


def ratio(a, b):
    return float("inf") if b <= 0 < a else (1.0 if b <= 0 else a / b)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--synthetic", action="store_true")
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--interpret", action="store_true")
    parser.add_argument("--all-variants", action="store_true")
    parser.add_argument("--cost", action="store_true")
    opts = parser.parse_args()
    if opts.cost:
        os.environ["PALLADIUM_COMPILE_TIER"] = "on"
        interpreter_cost()
        return
    interpret.install()
    evaluator = judge.Evaluator(compile_tier=False)
    if opts.interpret:
        try:
            sys.exit(1 if sweep_interpreter(evaluator, opts) else 0)
        finally:
            evaluator.close()
    print(f"{'candidate':34} {'tpu/base':>9} {'mxu t/b':>8} {'cpu/kern mxu':>13} "
          f"{'cpu/kern all':>13} {'dead mxu':>9} verdict")
    try:
        for (label, _, _), module, full, reduced in exported(
                evaluator, candidates(opts.synthetic), opts.only, 34, 80):
            m = structure.measure(full.mlir_module())
            base = evaluator.baseline_structure(module)
            r = structure.measure(reduced.mlir_module())
            on_tpu = m.inside.total() + m.outside.total()
            mxu = m.inside.mxu_flops + m.outside.mxu_flops
            worst_mxu = max([ratio(d.cpu.mxu_flops, d.kernel.mxu_flops) for d in r.dispatches],
                            key=lambda x: abs(x - 1) if x != float("inf") else 1e9, default=1)
            worst_all = max([ratio(d.cpu.total(), d.kernel.total()) for d in r.dispatches],
                            key=lambda x: abs(x - 1) if x != float("inf") else 1e9, default=1)
            # The static count (the executed count needs the judge's run: evaluate.py).
            found = structure.check(m, True, r)
            print(f"{label:34} {ratio(on_tpu, base.outside.total()):9.3f} "
                  f"{ratio(mxu, base.outside.mxu_flops):8.3f} {worst_mxu:13.3f} "
                  f"{worst_all:13.3f} {m.dead_mxu_flops + r.dead_mxu_flops:9.3g} "
                  f"{found[1] if found else 'passes'}", flush=True)
    finally:
        evaluator.close()


if __name__ == "__main__":
    main()
