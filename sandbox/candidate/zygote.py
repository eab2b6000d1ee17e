"""The warm-spare parent: the first process inside a candidate sandbox (`python -m
palladium_candidate`, started by palladium-sandbox), trusted code in an untrusted place.

It loads the "zygote" seccomp stage (no execve from here on), imports JAX, Pallas, the Mosaic
lowering and jax.export once, and then forks one spare (spare.py) per `spawn` request of the
judge on the control socket (fd 3), handing it the two pipe ends that came with the request. It
never starts the XLA backend itself (its thread pools would not survive the fork, and a child
would hang), never reads a candidate and never runs one: candidates run only in spares. It reaps
spares when the judge asks (`reap`: SIGKILL if alive, then wait, and report how it ended).

Before each fork it puts back the scheduling state it started with and checks it
(parent_state.py); after each reap it empties /tmp but the live spares' directories
(scratch.py). When the launcher was root, its spares run as another uid than its own
(identity.py): it makes their directories and empties /tmp with its filesystem uid set to
theirs. When the state or /tmp cannot be put back, its `spawned` answer carries `tainted`
(what is wrong) and no spare: the judge replaces the sandbox rather than fork a candidate from
what an earlier one left.

It exits on `shutdown` or EOF of the control socket, killing its spares first; bwrap's
--die-with-parent and the pid namespace kill everything left if the judge dies.
"""
import ctypes
import os
import resource
import signal
import socket
import sys
import time

from . import identity, parent_state, scratch, seccomp



def describe_status(status):
    if os.WIFEXITED(status):
        return f"exit {os.WEXITSTATUS(status)}"
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = "?"
        return f"signal {sig} ({name})"
    return f"status {status}"


def _cpu_ms():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return (usage.ru_utime + usage.ru_stime) * 1e3


def _prewarm():
    """Imports only: nothing that starts a thread pool or a backend."""
    import jax  # noqa: F401
    import jax.numpy  # noqa: F401
    import ml_dtypes  # noqa: F401
    import numpy  # noqa: F401
    from jax import export  # noqa: F401
    from jax._src.pallas.mosaic import lowering  # noqa: F401
    from jax._src.pallas.mosaic import pallas_call_registration  # noqa: F401
    from jax._src.pallas.mosaic.interpret import interpret_pallas_call  # noqa: F401
    from jax.experimental import pallas  # noqa: F401
    from jax.experimental.pallas import tpu  # noqa: F401

    from . import interpret, stages  # noqa: F401
    interpret.install()
    _prewarm_lazy()


def _prewarm_lazy():
    """What JAX otherwise does lazily in every spare, once here: pure Python and module imports,
    no backend, no thread. Measured per spare before (CPU, docs/verification.md "bench_eval"):
      * the mhlo dialect's Python bindings, imported by the first lowering (the spare's warm-up
        compile): about 20 ms;
      * pallas_call's lowering tries the Mosaic GPU interpreter's module on every call and
        ignores an ImportError; the first attempt executes some forty modules before it fails
        (absl is not installed): about 270 ms, in the candidate's lower stage. The modules that
        did load stay imported, so later attempts cost a few ms (the same in every process);
      * the regexes that tell user frames from JAX's, compiled on the first trace;
      * a first jit trace (tracing needs no backend; lowering does, and stays in the spare).
    """
    import jax
    import numpy as np
    from jax._src import source_info_util
    from jaxlib.mlir.dialects import mhlo  # noqa: F401
    try:
        from jax._src.pallas.mosaic_gpu.interpret import interpret_pallas_call  # noqa: F401
    except ImportError:
        pass
    source_info_util.is_user_filename(__file__)
    jax.jit(lambda x: x * 2 + 1).trace(jax.ShapeDtypeStruct((8, 128), np.float32))
    from jax._src import xla_bridge
    if getattr(xla_bridge, "_backends", None):
        raise RuntimeError("the warm-spare parent started an XLA backend; its threads would not "
                           "survive a fork")


def main():
    seccomp.load("zygote")
    start = time.perf_counter()
    _prewarm()
    # Its /proc files become root-owned: a spare cannot read this process's memory or fds.
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
    from . import spare
    from .protocol import CONTROL, ProtocolError, receive_control, send_control

    import jax
    control = socket.socket(fileno=int(os.environ.get("PALLADIUM_CONTROL_FD", "3")))
    # The launcher's account of this sandbox's memory/pids cgroup (sandbox/sandbox_cgroup.hpp),
    # for the judge's log and its limit counters.
    send_control(control, CONTROL.message("ready", pid=os.getpid(), jax_version=jax.__version__,
                                  import_ms=round((time.perf_counter() - start) * 1e3, 3),
                                  cgroup=os.environ.get("PALLADIUM_SANDBOX_CGROUP_STATE", ""),
                                  ids=identity.describe()))
    spare_id = identity.spare_id()
    children = {}  # pid -> the spare's directory
    initial_state = parent_state.snapshot()
    tainted = ""
    try:
        while True:
            try:
                msg, fds = receive_control(control, maxfds=2)
            except ProtocolError as exc:
                print(f"zygote: dropped a control packet: {exc}", file=sys.stderr, flush=True)
                continue
            if msg is None:
                return 0
            kind = msg.get("type") if isinstance(msg, dict) else None
            if kind == "shutdown":
                return 0
            if kind == "spawn" and len(fds) == 2:
                CONTROL.check(msg, "spawn")
                before = _cpu_ms()
                state = parent_state.restore(initial_state)
                if state:
                    tainted = f"the parent's state was changed and cannot be restored: {state}"
                if tainted:
                    for fd in fds:
                        os.close(fd)
                    send_control(control, CONTROL.message("spawned", spare=msg.get("spare"), pid=0,
                                                  tainted=tainted))
                    continue
                try:
                    workdir = scratch.spare_directory(msg.get("spare"), spare_id)
                except OSError as exc:
                    tainted = f"no private directory for the spare: {exc}"
                    for fd in fds:
                        os.close(fd)
                    send_control(control, CONTROL.message("spawned", spare=msg.get("spare"), pid=0,
                                                  tainted=tainted))
                    continue
                pid = os.fork()
                if pid == 0:
                    control.close()
                    spare.main(fds[0], fds[1], workdir, spare_id)  # never returns
                fork_cpu_ms = _cpu_ms() - before  # copying the page tables of a JAX process
                for fd in fds:
                    os.close(fd)
                children[pid] = workdir
                send_control(control, CONTROL.message("spawned", spare=msg.get("spare"), pid=pid,
                                              fork_cpu_ms=round(fork_cpu_ms, 3)))
            elif kind == "reap":
                pid = msg.get("pid")
                status = "unknown pid"
                if pid in children:
                    try:
                        identity.kill_spare(pid, signal.SIGKILL, spare_id)
                    except ProcessLookupError:
                        pass
                    status = describe_status(os.waitpid(pid, 0)[1])
                    del children[pid]
                    left = scratch.wipe_as(spare_id, keep=children.values())
                    if left:
                        tainted = f"what a candidate wrote outlives it: {left}"
                send_control(control, CONTROL.message("reaped", pid=pid, status=status))
            else:
                for fd in fds:
                    os.close(fd)
                print(f"zygote: dropped {str(msg)[:200]}", file=sys.stderr, flush=True)
    finally:
        for pid in children:
            try:
                identity.kill_spare(pid, signal.SIGKILL, spare_id)
                os.waitpid(pid, 0)
            except OSError:
                pass
