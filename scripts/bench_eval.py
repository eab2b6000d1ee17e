"""Per-candidate evaluation overhead: Palladium's persistent sidecar vs a fresh process each.

    .venv/bin/python scripts/bench_eval.py [--limit N] [--seeds 0 1] [--json OUT]

Both sides evaluate the same candidates (the correct kernels of llm/replay_corpus/ for the five
skeleton workloads, code extracted as llm/code_extractor.cpp does) with the same pipeline,
tpu_agent.sidecar.evaluate.Evaluator, at CPU_CONFIG in TPU interpret mode:

  persistent  one `python -m tpu_agent.sidecar --backend interpret` started as the agent starts
              it (MessagePack on fds 3/4, private cwd). JAX is imported once; reference outputs
              are cached per workload. Start-up and each workload's first evaluation (JAX
              warm-up, reference computation) are paid once per sidecar and reported apart;
              then every candidate is timed as the round trip eval -> result on the pipes.
  fresh       how JAXBench, Autocomp and MaxKernel evaluate: per candidate a new interpreter
              (`python scripts/bench_eval.py --child WORKLOAD FILE`) that imports jax, builds
              the inputs, computes the reference and evaluates; timed from spawn to exit.

The two sides alternate candidate by candidate so background load hits both alike. Columns:
  total   wall time per candidate (the whole cost of one evaluation as the caller sees it)
  own     the candidate's own work inside the pipeline: stage_ms of trace + lower + numerics +
          timing (tracing, Mosaic lowering, interpret compile and runs of this kernel)
  ovh     total - own: harness overhead (interpreter, import jax, inputs, reference, pipes)
Ratios fresh/persistent are printed for both total and overhead, whatever they come out to.
"""
import argparse
import json
import os
import pathlib
import resource
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
PYTHON = sys.executable
sys.path.insert(0, str(REPO))

from tpu_agent.sidecar.pipe_client import PipeClient  # noqa: E402
OWN_STAGES = ("trace", "lower", "numerics", "timing")

# Correct responses of the replay corpus (tests/llm/test_replay_corpus.py EXPECTED), one per
# workload first. The persistent sidecar's warm-up for a workload is a correct response that is
# not timed when there is one (the second half with the default --limit 5).
CANDIDATES = ["8p/02.md", "12p/01.md", "9p/03.md", "41k/02.md", "1p/03.md",
              "8p/06.md", "12p/04.md", "9p/05.md", "41k/07.md", "1p/05.md"]


def _extract(name):
    sys.path.insert(0, str(REPO / "tests" / "llm"))
    from corpus_util import extract_code, read_response
    return extract_code(read_response(name))


def _process_cpu_ms(pid):
    """utime + stime of a live process (all its threads), from /proc/<pid>/stat."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1e3 / os.sysconf("SC_CLK_TCK")


def _children_cpu_ms():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1e3


def _own_ms(result):
    return sum(result.get("stage_ms", {}).get(stage, 0.0) for stage in OWN_STAGES)


# -- fresh process per candidate ------------------------------------------------------------------

def child_main(workload_id, code_path, seeds):
    """Runs in the fresh interpreter: everything a one-shot harness does, then one JSON line."""
    t0 = time.perf_counter()
    import jax  # noqa: F401
    from tpu_agent.sidecar.evaluate import Evaluator
    t_import = time.perf_counter()
    code = pathlib.Path(code_path).read_text(encoding="utf-8")
    result = Evaluator().evaluate(workload_id, code, seeds)  # builds inputs + reference first
    t_done = time.perf_counter()
    print(json.dumps({"import_ms": (t_import - t0) * 1e3, "eval_ms": (t_done - t_import) * 1e3,
                      "verdict": result["verdict"], "stage_ms": result["stage_ms"],
                      "kernel_ms": result["kernel_ms"]}), flush=True)


def run_fresh(workload_id, code, seeds, workdir):
    code_path = pathlib.Path(workdir) / f"cand_{workload_id}_{time.monotonic_ns()}.py"
    code_path.write_text(code, encoding="utf-8")
    cmd = [PYTHON, str(REPO / "scripts" / "bench_eval.py"), "--child", workload_id,
           str(code_path), "--seeds", *map(str, seeds)]
    start, cpu_start = time.perf_counter(), _children_cpu_ms()
    proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    total_ms = (time.perf_counter() - start) * 1e3
    cpu_ms = _children_cpu_ms() - cpu_start
    code_path.unlink(missing_ok=True)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"fresh child failed ({proc.returncode}): {proc.stderr[-2000:]}")
    info = json.loads(lines[-1])
    info["total_ms"], info["cpu_ms"] = total_ms, cpu_ms
    return info


# -- persistent sidecar ---------------------------------------------------------------------------

class Sidecar:
    """`python -m tpu_agent.sidecar --backend interpret` with fds 3/4, as the agent spawns it."""

    def __init__(self, workdir, log_path):
        start = time.perf_counter()
        self._client = PipeClient(workdir, log_path, python=PYTHON)
        self._job = 0
        ready = self._client.receive(timeout=120)
        assert ready is not None and ready.get("type") == "ready", ready
        self.startup_ms = (time.perf_counter() - start) * 1e3

    def evaluate(self, workload_id, code, seeds, timeout_s=300):
        self._job += 1
        message = {"type": "eval", "version": 1, "job_id": self._job, "workload_id": workload_id,
                   "code": code, "check_level": "full", "seeds": list(seeds)}
        start, cpu_start = time.perf_counter(), _process_cpu_ms(self._client.proc.pid)
        self._client.send(message)
        result = self._client.receive(timeout_s)
        if result is None:
            raise RuntimeError("sidecar exited")
        result["total_ms"] = (time.perf_counter() - start) * 1e3
        result["cpu_ms"] = _process_cpu_ms(self._client.proc.pid) - cpu_start
        assert result.get("job_id") == self._job, result
        return result

    def close(self):
        try:
            self._client.send({"type": "shutdown", "version": 1})
            self._client.close_requests()
            self._client.wait(timeout=30)
        finally:
            self._client.cleanup()


# -- driver ---------------------------------------------------------------------------------------

def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--child", nargs=2, metavar=("WORKLOAD", "FILE"), help=argparse.SUPPRESS)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    parser.add_argument("--limit", type=int, default=5,
                        help="time the first N of the %d correct candidates (default %%(default)s)"
                        % len(CANDIDATES))
    parser.add_argument("--json", help="also write the raw figures here")
    args = parser.parse_args(argv)
    if args.child:
        return child_main(args.child[0], args.child[1], args.seeds)

    names = CANDIDATES[:args.limit]
    codes = {name: _extract(name) for name in names}
    workloads = []
    for name in names:
        if name.split("/")[0] not in workloads:
            workloads.append(name.split("/")[0])
    print(f"bench_eval: {len(names)} candidates ({', '.join(names)}), seeds {args.seeds}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}", flush=True)

    rows, first_contact = [], {}
    with tempfile.TemporaryDirectory(prefix="bench_eval_") as workdir:
        sidecar = Sidecar(workdir, pathlib.Path(workdir) / "sidecar.log")
        try:
            print(f"persistent sidecar start-up (once per slot): {sidecar.startup_ms:.0f} ms",
                  flush=True)
            for wid in workloads:  # first evaluation per workload: JAX warm-up + reference
                same = [n for n in CANDIDATES if n.startswith(wid + "/")]
                first = next((n for n in same if n not in names), same[0])
                code = codes.get(first) or _extract(first)
                result = sidecar.evaluate(wid, code, args.seeds)
                first_contact[wid] = result["total_ms"]
                print(f"  first contact {wid:>3} ({first}): {result['total_ms']:.0f} ms "
                      f"[{result['verdict']}]", flush=True)
            print(f"\n{'candidate':<10} | {'persistent total / own / ovh ms':>32} | "
                  f"{'fresh total / own / ovh ms':>28} | {'import':>6} | ratio tot / ovh",
                  flush=True)
            for name in names:
                wid = name.split("/")[0]
                persistent = sidecar.evaluate(wid, codes[name], args.seeds)
                fresh = run_fresh(wid, codes[name], args.seeds, workdir)
                p_own, f_own = _own_ms(persistent), _own_ms(fresh)
                row = {"candidate": name,
                       "persistent": {"total_ms": persistent["total_ms"], "own_ms": p_own,
                                      "cpu_ms": persistent["cpu_ms"],
                                      "overhead_ms": persistent["total_ms"] - p_own,
                                      "verdict": persistent["verdict"],
                                      "stage_ms": persistent["stage_ms"]},
                       "fresh": {"total_ms": fresh["total_ms"], "own_ms": f_own,
                                 "cpu_ms": fresh["cpu_ms"],
                                 "overhead_ms": fresh["total_ms"] - f_own,
                                 "import_ms": fresh["import_ms"], "verdict": fresh["verdict"],
                                 "stage_ms": fresh["stage_ms"]}}
                rows.append(row)
                p, f = row["persistent"], row["fresh"]
                flag = "" if p["verdict"] == f["verdict"] == "correct" else \
                    f"  !! verdicts {p['verdict']}/{f['verdict']}"
                print(f"{name:<10} | {p['total_ms']:>10.0f} {p['own_ms']:>10.0f} "
                      f"{p['overhead_ms']:>10.0f} | {f['total_ms']:>9.0f} {f['own_ms']:>8.0f} "
                      f"{f['overhead_ms']:>9.0f} | {f['import_ms']:>6.0f} | "
                      f"{f['total_ms'] / p['total_ms']:>5.1f}x / "
                      f"{f['overhead_ms'] / max(p['overhead_ms'], 1e-3):>5.0f}x{flag}", flush=True)
        finally:
            sidecar.close()

    def total(side, key):
        return sum(r[side][key] for r in rows)

    def med(side, key):
        return statistics.median(r[side][key] for r in rows)

    p_tot, f_tot = total("persistent", "total_ms"), total("fresh", "total_ms")
    p_ovh, f_ovh = total("persistent", "overhead_ms"), total("fresh", "overhead_ms")
    fixed = sidecar.startup_ms + sum(first_contact.values())
    print(f"\nsum over {len(rows)} candidates: persistent {p_tot / 1e3:.1f} s, fresh "
          f"{f_tot / 1e3:.1f} s")
    print(f"median per candidate, total wall: persistent {med('persistent', 'total_ms'):.0f} ms, "
          f"fresh {med('fresh', 'total_ms'):.0f} ms; ratio of sums {f_tot / p_tot:.1f}x less wall "
          f"time per candidate")
    print(f"median per candidate, overhead (total - own work): persistent "
          f"{med('persistent', 'overhead_ms'):.0f} ms, fresh {med('fresh', 'overhead_ms'):.0f} ms "
          f"; ratio of sums {f_ovh / max(p_ovh, 1e-3):.0f}x less overhead per candidate")
    print(f"median per candidate, CPU time (all processes of the side): persistent "
          f"{med('persistent', 'cpu_ms'):.0f} ms, fresh {med('fresh', 'cpu_ms'):.0f} ms")
    print(f"candidate's own work (trace+lower+numerics+timing), median: persistent "
          f"{med('persistent', 'own_ms'):.0f} ms, fresh {med('fresh', 'own_ms'):.0f} ms "
          f"(the fresh process also pays JAX's first-compile warm-up here)")
    amortised = (fixed + p_tot) / len(rows)
    print(f"persistent one-time cost per sidecar (start-up + one warm-up evaluation per "
          f"workload): {fixed / 1e3:.1f} s; charged to only these {len(rows)} candidates: "
          f"{amortised:.0f} ms per candidate -> {f_tot / len(rows) / amortised:.1f}x (a search "
          f"run evaluates hundreds per sidecar)")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(
            {"rows": rows, "startup_ms": sidecar.startup_ms, "first_contact_ms": first_contact},
            indent=1))
    bad = [r["candidate"] for r in rows
           if r["persistent"]["verdict"] != "correct" or r["fresh"]["verdict"] != "correct"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
