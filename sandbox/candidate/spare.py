"""One warm spare: a process forked from the warm-spare parent that evaluates exactly one
candidate and exits (it is never reused).

Its life, in order:
  1. close every fd but its two job pipes (the parent's control socket among them);
  2. when the sandbox maps two uids, take the spares' uid and drop every capability
     (identity.py), so the kernel's uid checks separate it from its parent;
  3. load the "candidate" seccomp stage while it has a single thread, so every thread JAX starts
     later runs under it: from here on no process, socket or signal to others is possible;
  4. start the CPU backend and compile one tiny program (what the parent could not do before
     forking: XLA's thread pools do not survive a fork), then say `ready`;
  5. read one `job`, run the stages (stages.py) in its private directory (made by the parent,
     which empties /tmp of everything else after each spare), write one `result`, and _exit.
A spare that fails before `ready` exits with status 70; the judge treats that as an
infrastructure fault, never as the candidate's.
"""
import os
import resource
import sys
import time

from . import identity, seccomp, stages
from .protocol import JOB, Stream


def _cpu_ms():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return (usage.ru_utime + usage.ru_stime) * 1e3


def _close_other_fds(keep):
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _warm():
    import jax
    import numpy as np
    jax.devices()
    jax.block_until_ready(jax.jit(lambda x: x * 2 + 1)(np.ones((8, 128), np.float32)))


def main(request_fd, response_fd, workdir, spare_id=None):
    """Runs in the forked child; never returns. `spare_id`: the uid and gid to take (None: the
    parent's, when the sandbox has one uid)."""
    status = 0
    try:
        start = time.perf_counter()
        _close_other_fds({request_fd, response_fd})
        if spare_id is not None:
            identity.become_spare(spare_id)
        seccomp.load("candidate", own_pid=os.getpid())
        stages.hide_project_modules()
        _warm()
        stream = Stream(request_fd, response_fd)
        stream.write(JOB.message("ready", pid=os.getpid(),
                             warm_ms=round((time.perf_counter() - start) * 1e3, 3),
                             cpu_ms=round(_cpu_ms(), 3)))
        job = stream.read()
        if job is None:
            os._exit(0)  # the judge no longer needs this spare
        JOB.check(job, "job")
        os.chdir(workdir)
        result = stages.run(job, lambda name: stream.write(JOB.message("stage", stage=name)),
                            workdir)
        stream.write(result)
    except BaseException as exc:  # before the job, nothing of a candidate ran: infrastructure
        try:
            print(f"spare {os.getpid()}: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        except Exception:
            pass
        status = 70
    os._exit(status)
