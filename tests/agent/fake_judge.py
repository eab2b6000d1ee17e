"""A stand-in for judge that speaks the same fd 3/4 pipe protocol.

Run as `python -m fake_judge --backend B` with this directory on PYTHONPATH. What it does
with an eval is chosen by markers in the candidate code:

  SLEEP_FOREVER   start a grandchild (`sleep 1000`, pid logged), then never answer
  EXIT_ABRUPTLY   exit with status 3 without answering
  PRINT_NOISE     write junk to fds 1 and 2 (the log), then answer correct
  SLEEP_MS=<n>    sleep n ms, then answer correct
  ECHO_ENV        answer correct with stdout = "cwd=<cwd>" and one environment name a line
                  (with its value for PYTHON* and TPU_* names, which hold no secrets)
  ECHO_LIMITS     answer correct with stdout = the rlimits, network interfaces and open fds
  DIE_ONCE=<path> exit with status 3 if <path> does not exist (creating it), else answer correct
  ECHO_TEXT=<t>   answer numerics_mismatch with <t> as error, signature, stdout and stderr
  FACTS           answer from the real judge's result dict (judge/stages/context.py) with every
                  fact and the timing spread filled, as the stages fill them, and the
                  settings the request asked for, as the real judge records them
                  (judge/settings.py, no host override)
  NO_FACTS        answer from the real judge's result dict as an early failure leaves it:
                  every fact and the spread None
  KERNEL_MS=<x>   answer correct with kernel_ms x (band x +- 1%) against a baseline of 5 ms
  (otherwise)     answer correct

A `retime` (judge/retiming.py) is answered with one sitting: each code's RETIME_MS=<x> (else
its KERNEL_MS, else 2) as its median, band x +- 1%, against a baseline of 5 ms; a code with
RETIME_FAIL makes the sitting fail with an error naming it.

With --backend tpu it refuses to start, as the real judge does without a TPU. Every message it
reads and writes goes through protocol/judge_pipe.py, so a request the agent packs against the
schema's rules makes it exit with status 4 (the agent's tests then fail on the crash).
"""

import argparse
import os
import re
import subprocess
import sys
import time

import msgpack

# The repository root, for protocol/ (the agent puts only this directory on PYTHONPATH).
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from judge import settings as judge_settings  # noqa: E402
from judge.stages.context import empty_result  # noqa: E402
from protocol import judge_pipe  # noqa: E402


def _write(out, obj):
    judge_pipe.check(obj)
    data = msgpack.packb(obj, use_bin_type=True)
    while data:
        n = os.write(out, data)
        data = data[n:]


def _result(job_id, verdict="correct", stdout="", text=""):
    return judge_pipe.message(
        "result", job_id=job_id, verdict=verdict, stage="done", error=text,
        error_signature=text, stdout=stdout or text, stderr=text,
        stage_ms={"import": 1.5, "numerics": 2}, max_abs_err=0.0, kernel_ms=0.25,
        timing_kind="cpu-wall" if verdict == "correct" else None)


def _judge_result(msg, decided):
    """The result map the judge's server sends for the judge's own result dict."""
    job_id = msg["job_id"]
    result = empty_result()
    result["judge_settings"] = judge_settings.resolve(
        "interpret", True, *judge_settings.requested(msg)).record()
    if decided:
        result.update(verdict="correct", stage="done", kernel_ms=2.0, baseline_ms=5.0,
                      timing_kind="cpu-wall", timing_runs=7, kernel_ms_low=1.8,
                      kernel_ms_high=2.4, baseline_ms_low=4.5, baseline_ms_high=5.5,
                      numerics_ok=True, structure_ok=False, dtype_exact=True,
                      compile_finding="", numerics_path="mosaic_interpreter")
    else:
        result.update(verdict="lint_rejected", stage="lint", error="import os",
                      error_signature="lint:forbidden_import")
    keys = {field["key"] for field in judge_pipe.fields("result")}
    return judge_pipe.message("result", job_id=job_id,
                              **{k: v for k, v in result.items() if k in keys and k != "job_id"})


def _band(ms):
    return round(ms * 0.99, 6), round(ms * 1.01, 6)


def _timed_result(job_id, kernel_ms):
    low, high = _band(kernel_ms)
    return judge_pipe.message(
        "result", job_id=job_id, verdict="correct", stage="done", stage_ms={"numerics": 2},
        max_abs_err=0.0, kernel_ms=kernel_ms, baseline_ms=5.0, timing_kind="cpu-wall",
        timing_runs=5, kernel_ms_low=low, kernel_ms_high=high, baseline_ms_low=4.95,
        baseline_ms_high=5.05)


def _retimed(msg):
    for i, code in enumerate(msg["codes"]):
        if "RETIME_FAIL" in code:
            return judge_pipe.message("retimed", job_id=msg["job_id"],
                                      error=f"candidate {i}: RETIME_FAIL")
    medians = []
    for code in msg["codes"]:
        m = re.search(r"RETIME_MS=([0-9.]+)", code) or re.search(r"KERNEL_MS=([0-9.]+)", code)
        medians.append(float(m.group(1)) if m else 2.0)
    return judge_pipe.message(
        "retimed", job_id=msg["job_id"], kernel_ms=medians,
        kernel_ms_low=[_band(x)[0] for x in medians], kernel_ms_high=[_band(x)[1] for x in medians],
        baseline_ms=5.0, baseline_ms_low=4.95, baseline_ms_high=5.05, timing_runs=5,
        timing_kind="cpu-wall")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="interpret")
    args = parser.parse_args()
    if args.backend == "tpu":
        print("fake_judge: no TPU device found (jax.devices() has only cpu)", file=sys.stderr)
        sys.exit(2)
    out = 4
    _write(out, judge_pipe.message("ready", pid=os.getpid(), jax_version="0.0-fake",
                                   backend=args.backend, device_kind="cpu",
                                   libtpu_version="0.0.0-fake",
                                   stages=["lint", "import", "numerics"]))
    unpacker = msgpack.Unpacker(raw=False)
    while True:
        data = os.read(3, 65536)
        if not data:
            return
        unpacker.feed(data)
        for msg in unpacker:
            try:
                judge_pipe.check(msg)
            except judge_pipe.ProtocolError as exc:
                print(f"fake_judge: the agent broke protocol/judge_pipe.json: {exc}",
                      file=sys.stderr, flush=True)
                os._exit(4)
            if msg.get("type") == "shutdown":
                return
            if msg.get("type") == "retime":
                _write(out, _retimed(msg))
                continue
            if msg.get("type") != "eval":
                continue
            code = msg["code"]
            if "SLEEP_FOREVER" in code:
                child = subprocess.Popen(["sleep", "1000"])
                print(f"grandchild pid {child.pid}", file=sys.stderr, flush=True)
                while True:
                    time.sleep(1000)
            if "EXIT_ABRUPTLY" in code:
                print("fake_judge: dying abruptly", file=sys.stderr, flush=True)
                os._exit(3)
            stdout = ""
            if "PRINT_NOISE" in code:
                for _ in range(200):
                    print("noise \x93\xa4type on stdout", flush=True)
                    os.write(1, b"\x81\xa4type\xa6result raw bytes\n")
                    os.write(2, b"noise on stderr\n")
                stdout = "captured candidate output\n"
            if "ECHO_ENV" in code:
                stdout = "cwd=" + os.getcwd() + "\n" + "\n".join(
                    f"{k}={v}" if k.startswith(("PYTHON", "TPU_")) else k for k, v in sorted(os.environ.items()))
            if "ECHO_LIMITS" in code:
                import resource
                lines = [f"{name}={resource.getrlimit(getattr(resource, 'RLIMIT_' + name))[0]}"
                         f"/{resource.getrlimit(getattr(resource, 'RLIMIT_' + name))[1]}"
                         for name in ("AS", "CPU", "FSIZE", "NOFILE", "CORE")]
                with open("/proc/self/net/dev") as dev:  # per network namespace (sysfs is not)
                    names = [line.split(":")[0].strip() for line in dev.readlines()[2:]]
                lines.append("net=" + ",".join(sorted(names)))
                lines.append("fds=" + ",".join(sorted(os.listdir("/proc/self/fd"), key=int)))
                lines.append("TMPDIR=" + os.environ.get("TMPDIR", ""))
                stdout = "\n".join(lines) + "\n"
            m = re.search(r"DIE_ONCE=(\S+)", code)
            if m and not os.path.exists(m.group(1)):
                open(m.group(1), "w").close()
                print("fake_judge: dying once", file=sys.stderr, flush=True)
                os._exit(3)
            m = re.search(r"ECHO_TEXT=(.*)", code)
            if m:
                _write(out, _result(msg["job_id"], "numerics_mismatch", text=m.group(1)))
                continue
            if "NO_FACTS" in code or "FACTS" in code:
                _write(out, _judge_result(msg, "NO_FACTS" not in code))
                continue
            m = re.search(r"KERNEL_MS=([0-9.]+)", code)
            if m:
                _write(out, _timed_result(msg["job_id"], float(m.group(1))))
                continue
            m = re.search(r"SLEEP_MS=(\d+)", code)
            if m:
                time.sleep(int(m.group(1)) / 1000.0)
            _write(out, _result(msg["job_id"], stdout=stdout))


if __name__ == "__main__":
    main()
