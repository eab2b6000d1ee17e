"""Per-candidate evaluation overhead: Palladium's judge + warm spares vs a fresh process each.

    .venv/bin/python scripts/bench_eval.py [--limit N] [--seeds 0 1] [--json OUT]

Both sides evaluate the same candidates (the correct kernels of llm/replay_corpus/ for the five
skeleton workloads, code extracted as llm/code_extractor.cpp does) with the same pipeline and the
same seeds (replayed, so both sides do identical work):

  judge       one `python -m judge --backend interpret` started as the agent starts
              it (MessagePack on fds 3/4). It starts the candidate sandbox once; every candidate
              then runs in its own spare (forked from the pre-imported, sandboxed parent, never
              reused) and is judged from its exported artifacts. Start-up and each workload's
              first evaluation are paid once per judge and reported apart.
  fresh       how JAXBench, Autocomp and MaxKernel evaluate: per candidate a new interpreter
              (`python scripts/bench_eval.py --child WORKLOAD FILE`) that imports jax and runs the
              same stages and checks in-process (no sandbox, no second process); timed from
              spawn to exit.

The two sides alternate candidate by candidate so background load hits both alike. Columns:
  total   wall time per candidate (the whole cost of one evaluation as the caller sees it)
  own     the candidate's own work: stage_ms of import + trace + lower + compile + structure +
          numerics + timing (tracing, lowering, exports, interpret-mode check, artifact runs)
  ovh     total - own, plus on the judge side the CPU its spare spent getting ready (fork,
          seccomp, backend start), which overlaps the previous candidate and is not on the
          wall clock: the harness's cost per candidate
  cpu     CPU time of every process of the side (judge, sandbox parent, spares; the fresh
          interpreter and its children)
Ratios fresh/judge are printed for total and overhead, whatever they come out to.
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

# Both sides skip the deviceless libtpu compile unless the caller sets PALLADIUM_COMPILE_TIER:
# JAXBench-style fresh processes do not compile for a TPU, and the harness overhead compared
# here is the judge's, not libtpu's (the tier's own cost is measured on a quick-start run:
# docs/verification.md 1a).
os.environ.setdefault("PALLADIUM_COMPILE_TIER", "off")
REPO = pathlib.Path(__file__).resolve().parents[1]
PYTHON = sys.executable
sys.path.insert(0, str(REPO))

from tests.judge.pipe_client import PipeClient  # noqa: E402
from judge.protocol import VERSION  # noqa: E402
OWN_STAGES = ("import", "trace", "lower", "compile", "structure", "numerics", "timing")

# Correct responses of the replay corpus (tests/llm/test_replay_corpus.py EXPECTED), one per
# workload first. The persistent judge's warm-up for a workload is a correct response that is
# not timed when there is one (the second half with the default --limit 5).
CANDIDATES = ["8p/02.md", "12p/01.md", "9p/03.md", "41k/02.md", "1p/03.md",
              "8p/06.md", "12p/04.md", "9p/05.md", "41k/07.md", "1p/05.md"]


def _extract(name):
    sys.path.insert(0, str(REPO / "tests" / "llm"))
    from corpus_util import extract_code, read_response
    return extract_code(read_response(name))


def _process_cpu_ms(pid):
    """utime + stime + cutime + cstime of a live process (its threads and reaped children)."""
    try:
        fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(f) for f in fields[11:15]) * 1e3 / os.sysconf("SC_CLK_TCK")


def _children(pid):
    out = []
    for task in pathlib.Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return out


def _tree_cpu_ms(pid):
    """CPU of `pid` and every live descendant (reaped ones are in their parent's c-times)."""
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        total += _process_cpu_ms(current)
        todo += _children(current)
    return total


def _children_cpu_ms():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1e3


def _own_ms(result):
    return sum(result.get("stage_ms", {}).get(stage, 0.0) for stage in OWN_STAGES)


# -- fresh process per candidate ------------------------------------------------------------------

class InProcessPool:
    """The candidate's stages run in this very process: what a one-shot harness does."""

    def run(self, job, deadline):
        from sandbox.candidate import stages
        from judge.candidate_pool import CandidateRun
        run = CandidateRun(started=time.monotonic(), attempts=1)
        with tempfile.TemporaryDirectory() as workdir:
            run.result = stages.run(job, lambda name: None, workdir)
        return run

    def close(self):
        pass


def child_main(workload_id, code_path, seeds):
    """Runs in the fresh interpreter: everything a one-shot harness does, then one JSON line."""
    t0 = time.perf_counter()
    import jax  # noqa: F401
    from sandbox.candidate import interpret
    from judge.evaluate import Evaluator
    interpret.install()
    t_import = time.perf_counter()
    code = pathlib.Path(code_path).read_text(encoding="utf-8")
    result = Evaluator(pool=InProcessPool()).evaluate(workload_id, code, seeds)
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


# -- persistent judge ---------------------------------------------------------------------------

class Judge:
    """`python -m judge --backend interpret` with fds 3/4, as the agent spawns it;
    the CPU it reports is the judge's and its whole sandbox's (launcher, parent, spares)."""

    def __init__(self, workdir, log_path):
        start = time.perf_counter()
        self._client = PipeClient(workdir, log_path, python=PYTHON)
        self._job = 0
        ready = self._client.receive(timeout=120)
        assert ready is not None and ready.get("type") == "ready", ready
        self.startup_ms = (time.perf_counter() - start) * 1e3

    def evaluate(self, workload_id, code, seeds, timeout_s=300):
        self._job += 1
        message = {"type": "eval", "version": VERSION, "job_id": self._job,
                   "workload_id": workload_id, "code": code, "check_level": "full",
                   "seeds": list(seeds), "replay_seeds": True, "timeout_s": timeout_s}
        start, cpu_start = time.perf_counter(), _tree_cpu_ms(self._client.proc.pid)
        self._client.send(message)
        result = self._client.receive(timeout_s)
        if result is None:
            raise RuntimeError("judge exited")
        result["total_ms"] = (time.perf_counter() - start) * 1e3
        result["cpu_ms"] = _tree_cpu_ms(self._client.proc.pid) - cpu_start
        assert result.get("job_id") == self._job, result
        return result

    def close(self):
        try:
            self._client.send({"type": "shutdown", "version": VERSION})
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
        judge = Judge(workdir, pathlib.Path(workdir) / "judge.log")
        try:
            print(f"judge start-up with its candidate sandbox (once per slot): "
                  f"{judge.startup_ms:.0f} ms", flush=True)
            for wid in workloads:  # first evaluation per workload: JAX warm-up, baseline export
                same = [n for n in CANDIDATES if n.startswith(wid + "/")]
                first = next((n for n in same if n not in names), same[0])
                code = codes.get(first) or _extract(first)
                result = judge.evaluate(wid, code, args.seeds)
                first_contact[wid] = result["total_ms"]
                print(f"  first contact {wid:>3} ({first}): {result['total_ms']:.0f} ms "
                      f"[{result['verdict']}]", flush=True)
            print(f"\n{'candidate':<10} | {'judge total / own / ovh / cpu ms':>34} | "
                  f"{'fresh total / own / ovh / cpu ms':>34} | {'import':>6} | ratio tot / ovh",
                  flush=True)
            for name in names:
                wid = name.split("/")[0]
                judged = judge.evaluate(wid, codes[name], args.seeds)
                fresh = run_fresh(wid, codes[name], args.seeds, workdir)
                j_own, f_own = _own_ms(judged), _own_ms(fresh)
                spare_cpu = float((judged.get("spare_ms") or {}).get("cpu_ms") or 0.0)
                row = {"candidate": name,
                       "judge": {"total_ms": judged["total_ms"], "own_ms": j_own,
                                 "cpu_ms": judged["cpu_ms"], "spare_cpu_ms": spare_cpu,
                                 "overhead_ms": judged["total_ms"] - j_own + spare_cpu,
                                 "verdict": judged["verdict"],
                                 "stage_ms": judged["stage_ms"]},
                       "fresh": {"total_ms": fresh["total_ms"], "own_ms": f_own,
                                 "cpu_ms": fresh["cpu_ms"],
                                 "overhead_ms": fresh["total_ms"] - f_own,
                                 "import_ms": fresh["import_ms"], "verdict": fresh["verdict"],
                                 "stage_ms": fresh["stage_ms"]}}
                rows.append(row)
                j, f = row["judge"], row["fresh"]
                flag = "" if j["verdict"] == f["verdict"] == "correct" else \
                    f"  !! verdicts {j['verdict']}/{f['verdict']}"
                print(f"{name:<10} | {j['total_ms']:>7.0f} {j['own_ms']:>7.0f} "
                      f"{j['overhead_ms']:>7.0f} {j['cpu_ms']:>7.0f} | {f['total_ms']:>7.0f} "
                      f"{f['own_ms']:>7.0f} {f['overhead_ms']:>7.0f} {f['cpu_ms']:>7.0f} | "
                      f"{f['import_ms']:>6.0f} | {f['total_ms'] / j['total_ms']:>5.1f}x / "
                      f"{f['overhead_ms'] / max(j['overhead_ms'], 1e-3):>5.1f}x{flag}",
                      flush=True)
        finally:
            judge.close()

    def total(side, key):
        return sum(r[side][key] for r in rows)

    def med(side, key):
        return statistics.median(r[side][key] for r in rows)

    j_tot, f_tot = total("judge", "total_ms"), total("fresh", "total_ms")
    j_ovh, f_ovh = total("judge", "overhead_ms"), total("fresh", "overhead_ms")
    fixed = judge.startup_ms + sum(first_contact.values())
    ratio = f_ovh / max(j_ovh, 1e-3)
    print(f"\nsum over {len(rows)} candidates: judge {j_tot / 1e3:.1f} s, fresh "
          f"{f_tot / 1e3:.1f} s")
    print(f"median per candidate, total wall: judge {med('judge', 'total_ms'):.0f} ms, "
          f"fresh {med('fresh', 'total_ms'):.0f} ms; ratio of sums {f_tot / j_tot:.1f}x")
    print(f"median per candidate, CPU time (all processes of the side): judge "
          f"{med('judge', 'cpu_ms'):.0f} ms, fresh {med('fresh', 'cpu_ms'):.0f} ms; ratio of "
          f"sums {total('fresh', 'cpu_ms') / max(total('judge', 'cpu_ms'), 1e-3):.1f}x")
    print(f"median per candidate, overhead (total - own work, + the spare's preparation CPU "
          f"{med('judge', 'spare_cpu_ms'):.0f} ms on the judge side): judge "
          f"{med('judge', 'overhead_ms'):.0f} ms, fresh {med('fresh', 'overhead_ms'):.0f} ms; "
          f"ratio of sums {ratio:.1f}x less overhead per candidate "
          f"({'meets' if ratio >= 10 else 'MISSES'} the 10x target)")
    print(f"candidate's own work ({'+'.join(OWN_STAGES)}), median: judge "
          f"{med('judge', 'own_ms'):.0f} ms, fresh {med('fresh', 'own_ms'):.0f} ms "
          f"(the fresh process also pays JAX's first-compile warm-up here)")
    amortised = (fixed + j_tot) / len(rows)
    print(f"judge one-time cost (start-up + one warm-up evaluation per workload): "
          f"{fixed / 1e3:.1f} s; charged to only these {len(rows)} candidates: "
          f"{amortised:.0f} ms per candidate -> {f_tot / len(rows) / amortised:.1f}x (a search "
          f"run evaluates hundreds per judge)")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(
            {"rows": rows, "startup_ms": judge.startup_ms, "first_contact_ms": first_contact},
            indent=1))
    bad = [r["candidate"] for r in rows
           if r["judge"]["verdict"] != "correct" or r["fresh"]["verdict"] != "correct"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
