"""The sidecar's request loop: `ready` once, then one `result` per `eval`, until `shutdown`/EOF.

Messages that are not maps, carry another protocol version or an unknown type are logged to
stderr (the agent's log file) and dropped; they never end the process. Every `eval` gets exactly
one `result` carrying its job_id, whatever the candidate does short of killing the process.
"""
import os
import sys
import time

import jax

from tpu_agent.sidecar.evaluate import Evaluator
from tpu_agent.sidecar.protocol import VERSION, Channel


def log(text):
    print(f"[sidecar {os.getpid()}] {text}", file=sys.stderr, flush=True)


def ready_message(backend):
    return {
        "type": "ready", "version": VERSION, "pid": os.getpid(), "jax_version": jax.__version__,
        "backend": backend, "device_kind": jax.devices()[0].device_kind,
    }


def handle_eval(evaluator, message):
    seeds = [int(s) for s in message.get("seeds") or [0, 1]]
    result = evaluator.evaluate(str(message.get("workload_id", "")), message.get("code") or "",
                                seeds)
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
        if kind != "eval" or not isinstance(message.get("job_id"), int):
            log(f"dropped message of type {kind!r} (job_id {message.get('job_id')!r})")
            continue
        start = time.perf_counter()
        reply = handle_eval(evaluator, message)
        channel.write(reply)
        log(f"job {reply['job_id']} {message.get('workload_id')}: {reply['verdict']} at "
            f"{reply['stage']} in {(time.perf_counter() - start) * 1e3:.0f} ms")
