"""The judge's request loop: `ready` once, then one `result` per `eval` and one `retimed` per
`retime` (judge/retiming.py), until `shutdown`/EOF.

Before `ready` the candidate sandbox is started and its warm-spare parent must answer
(candidate_pool.py); a host where it cannot start gets no `ready`: the judge logs why and exits
with status 3, so the agent never evaluates a candidate without its sandbox.

Messages that are not maps, carry another protocol version or an unknown type, and an `eval`
whose settings are not the schema's, are logged to stderr (the agent's log file) and dropped;
they never end the process. Every `eval` gets exactly
one `result` carrying its job_id, whatever the candidate does short of killing the process.

RLIMIT_CPU (set by the agent) counts the whole life of this persistent process. So that the limit
never lands on an innocent candidate, the loop exits cleanly between jobs once it has used
RECYCLE_FRACTION of the soft limit; the agent sees EOF while idle and starts a fresh judge.
"""
import json
import os
import resource
import sys
import time

import jax

from judge.compile import compile_tier
from judge.candidate_pool import SandboxUnavailable
from judge.cpu_budget import cpu_seconds_used, should_recycle
from judge import settings as judge_settings
from judge.evaluate import DEFAULT_TIMEOUT_S, Evaluator
from judge.protocol import VERSION, Channel
from judge.retiming import handle_retime
from protocol import judge_pipe

EXIT_NO_SANDBOX = 3
EXIT_BAD_SETTING = 2
# The candidate sandbox failed under a job even after the pool's retry: exit without a result,
# so that the agent retries the job on a fresh judge instead of charging the candidate.
EXIT_INFRASTRUCTURE = 75
# The evaluator's fields that go back to the agent: protocol/judge_pipe.json's result (the
# evaluator's internal ones stay here).
RESULT_FIELDS = tuple(field["key"] for field in judge_pipe.fields("result")
                      if field["key"] != "job_id")

def log(text):
    try:
        print(f"[judge {os.getpid()}] {text}", file=sys.stderr, flush=True)
    except OSError:
        pass  # a full disk or RLIMIT_FSIZE on the log must not take the judge down


def ready_message(evaluator):
    """`stages`: the taxonomy stages this judge runs (the agent forwards them in its HELLO);
    "compile" only when its compile tier can run. The settings: `compile_tier` and
    `full_shapes` are "on" where each request decides, "off: why" where none can have it (the
    backend, no libtpu, a host override), and `overrides` lists the host's overrides."""
    settings = evaluator.ready_settings()
    record = json.loads(settings.record())
    return judge_pipe.message(
        "ready", pid=os.getpid(), jax_version=jax.__version__, backend=evaluator.backend,
        device_kind=jax.devices()[0].device_kind, libtpu_version=compile_tier.libtpu_version(),
        stages=evaluator.stages(), compile_tier=record["compile_tier"],
        full_shapes=record["full_shapes"], overrides=settings.overrides)


def _number(value, default):
    return float(value) if isinstance(value, (int, float)) and value > 0 else default


def handle_eval(evaluator, message):
    """`seeds` are replayed exactly when `replay_seeds` is true; otherwise the judge draws
    len(seeds) (default 2) fresh ones and reports them. The request's settings decide how it
    is judged (judge/settings.py; a bad one is a ValueError)."""
    settings = judge_settings.requested(message)
    seeds = [int(s) for s in message.get("seeds") or [] if isinstance(s, int)]
    replay = message.get("replay_seeds") is True and bool(seeds)
    require_pallas = message.get("require_pallas", True)
    result = evaluator.evaluate(str(message.get("workload_id", "")), message.get("code") or "",
                                seeds=seeds if replay else None, seed_count=len(seeds) or 2,
                                require_pallas=require_pallas is not False,
                                timeout_s=_number(message.get("timeout_s"), DEFAULT_TIMEOUT_S),
                                screen=message.get("check_level") == "cpu_check",
                                settings=settings)
    return judge_pipe.message("result", job_id=message["job_id"],
                              **{key: result[key] for key in RESULT_FIELDS if key in result})


def serve(backend, channel=None):
    channel = channel or Channel()
    try:
        evaluator = Evaluator(backend=backend)
    except ValueError as exc:  # a bad setting ($PALLADIUM_COMPILE_TIER, $PALLADIUM_FULL_SHAPES)
        log(f"refusing to start: {exc}")
        return EXIT_BAD_SETTING
    try:
        evaluator.pool.start()
        evaluator.pool.prepare()
    except SandboxUnavailable as exc:
        log(f"refusing to start: the candidate sandbox is unavailable: {exc}")
        return EXIT_NO_SANDBOX
    ready = ready_message(evaluator)
    channel.write(ready)
    log(f"ready: backend={backend} jax={jax.__version__} cwd={os.getcwd()} compile tier "
        f"{ready['compile_tier']}, full-shape numerics {ready['full_shapes']} (each request "
        f"decides where on); host overrides: {', '.join(ready['overrides']) or 'none'}")
    while True:
        message = channel.read()
        if message is None:
            log("EOF on requests; exiting")
            evaluator.close()
            return 0
        if not isinstance(message, dict) or message.get("version") != VERSION:
            log(f"dropped malformed or wrong-version message: {str(message)[:200]}")
            continue
        kind = message.get("type")
        if kind == "shutdown":
            log("shutdown")
            evaluator.close()
            return 0
        if kind == "retime" and isinstance(message.get("job_id"), int):
            start = time.perf_counter()
            reply = handle_retime(evaluator, message)
            channel.write(reply)
            log(f"retime {reply['job_id']} {message.get('workload_id')}: "
                f"{reply['error'] or reply['kernel_ms']} in "
                f"{(time.perf_counter() - start) * 1e3:.0f} ms")
            continue
        if kind != "eval" or not isinstance(message.get("job_id"), int):
            log(f"dropped message of type {kind!r} (job_id {message.get('job_id')!r})")
            continue
        try:
            judge_settings.requested(message)
        except ValueError as exc:  # a setting the schema does not allow
            log(f"dropped eval {message['job_id']}: {exc}")
            continue
        start = time.perf_counter()
        reply = handle_eval(evaluator, message)
        if reply["verdict"] is None:
            log(f"job {reply['job_id']}: infrastructure fault, no verdict: "
                f"{reply['infrastructure']}; exiting so that the agent retries it")
            evaluator.close()
            return EXIT_INFRASTRUCTURE
        channel.write(reply)
        log(f"job {reply['job_id']} {message.get('workload_id')}: {reply['verdict']} at "
            f"{reply['stage']} in {(time.perf_counter() - start) * 1e3:.0f} ms")
        if should_recycle():
            log(f"used {cpu_seconds_used():.0f} CPU s of RLIMIT_CPU "
                f"{resource.getrlimit(resource.RLIMIT_CPU)[0]} s; exiting to be restarted")
            evaluator.close()
            return 0
