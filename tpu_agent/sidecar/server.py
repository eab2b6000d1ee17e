"""The sidecar's request loop: `ready` once, then one `result` per `eval` and one `audit_result`
per `audit`, until `shutdown`/EOF.

Messages that are not maps, carry another protocol version or an unknown type are logged to
stderr (the agent's log file) and dropped; they never end the process. Every `eval` gets exactly
one `result` carrying its job_id, whatever the candidate does short of killing the process.

RLIMIT_CPU (set by the agent) counts the whole life of this persistent process. So that the limit
never lands on an innocent candidate, the loop exits cleanly between jobs once it has used
RECYCLE_FRACTION of the soft limit; the agent sees EOF while idle and starts a fresh sidecar.
"""
import os
import resource
import sys
import time

import jax

from tpu_agent.sidecar.audit import audit_workload
from tpu_agent.sidecar.evaluate import Evaluator
from tpu_agent.sidecar.protocol import VERSION, Channel

RECYCLE_FRACTION = 0.5


def log(text):
    try:
        print(f"[sidecar {os.getpid()}] {text}", file=sys.stderr, flush=True)
    except OSError:
        pass  # a full disk or RLIMIT_FSIZE on the log must not take the sidecar down


def cpu_seconds_used():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def should_recycle():
    soft, _ = resource.getrlimit(resource.RLIMIT_CPU)
    return soft != resource.RLIM_INFINITY and cpu_seconds_used() >= RECYCLE_FRACTION * soft


def handle_audit(message):
    workload_id = str(message.get("workload_id", ""))
    reply = {"type": "audit_result", "version": VERSION, "workload_id": workload_id,
             "degenerate": False, "insensitive_inputs": [], "error": ""}
    try:
        audit = audit_workload(workload_id)
        reply["degenerate"] = bool(audit["degenerate"])
        reply["insensitive_inputs"] = list(audit["insensitive_inputs"])
    except Exception as exc:  # an unknown workload or a broken reference: answer, do not die
        reply["error"] = f"{type(exc).__name__}: {exc}"
    return reply


def ready_message(backend):
    return {
        "type": "ready", "version": VERSION, "pid": os.getpid(), "jax_version": jax.__version__,
        "backend": backend, "device_kind": jax.devices()[0].device_kind,
    }


def handle_eval(evaluator, message):
    seeds = [int(s) for s in message.get("seeds") or [0, 1]]
    require_pallas = message.get("require_pallas", True)
    result = evaluator.evaluate(str(message.get("workload_id", "")), message.get("code") or "",
                                seeds, require_pallas=require_pallas is not False)
    return {"type": "result", "version": VERSION, "job_id": message["job_id"], **result}


def serve(backend, channel=None):
    channel = channel or Channel()
    evaluator = Evaluator(backend=backend)
    channel.write(ready_message(backend))
    log(f"ready: backend={backend} jax={jax.__version__} cwd={os.getcwd()}")
    while True:
        message = channel.read()
        if message is None:
            log("EOF on requests; exiting")
            return 0
        if not isinstance(message, dict) or message.get("version") != VERSION:
            log(f"dropped malformed or wrong-version message: {str(message)[:200]}")
            continue
        kind = message.get("type")
        if kind == "shutdown":
            log("shutdown")
            return 0
        if kind == "audit":
            reply = handle_audit(message)
            channel.write(reply)
            log(f"audit {reply['workload_id']}: degenerate={reply['degenerate']} "
                f"{reply['insensitive_inputs']} {reply['error']}")
            continue
        if kind != "eval" or not isinstance(message.get("job_id"), int):
            log(f"dropped message of type {kind!r} (job_id {message.get('job_id')!r})")
            continue
        start = time.perf_counter()
        reply = handle_eval(evaluator, message)
        channel.write(reply)
        log(f"job {reply['job_id']} {message.get('workload_id')}: {reply['verdict']} at "
            f"{reply['stage']} in {(time.perf_counter() - start) * 1e3:.0f} ms")
        if should_recycle():
            log(f"used {cpu_seconds_used():.0f} CPU s of RLIMIT_CPU "
                f"{resource.getrlimit(resource.RLIMIT_CPU)[0]} s; exiting to be restarted")
            return 0
