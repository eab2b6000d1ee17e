"""The warm-spare parent's scheduling state, and putting it back before each fork.

Every spare inherits its parent's nice value, scheduling policy, CPU affinity, I/O priority and
rlimits. A candidate that changed them on its parent (measured on the old sandbox: renice 19,
SCHED_IDLE, one CPU) made every later honest candidate of that sandbox slow or `timeout`. The
candidate seccomp stage now refuses those calls on any pid but the caller's own (sandbox/
seccomp_policy.cpp); this is the second wall: the parent records its state once, when it is
ready, and before each fork restores it and checks it. A state it cannot restore (an
unprivileged process may raise its nice value but never lower it again, nor raise a hard rlimit)
is reported, and the judge replaces the whole sandbox rather than fork from a tainted parent.
"""
import ctypes
import os
import resource

# x86_64 syscall numbers and linux/ioprio.h (Python has no binding for ioprio).
_SYS_IOPRIO_SET = 251
_SYS_IOPRIO_GET = 252
_IOPRIO_WHO_PROCESS = 1

_RLIMITS = tuple(getattr(resource, name) for name in (
    "RLIMIT_AS", "RLIMIT_CORE", "RLIMIT_CPU", "RLIMIT_DATA", "RLIMIT_FSIZE", "RLIMIT_MEMLOCK",
    "RLIMIT_NOFILE", "RLIMIT_NPROC", "RLIMIT_RSS", "RLIMIT_STACK", "RLIMIT_NICE",
    "RLIMIT_RTPRIO", "RLIMIT_SIGPENDING", "RLIMIT_MSGQUEUE") if hasattr(resource, name))

_libc = None


def _syscall(*args):
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.syscall.restype = ctypes.c_long
    rc = _libc.syscall(*(ctypes.c_long(a) for a in args))
    if rc < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))
    return rc


def snapshot():
    """This process's state as a dict (comparable with ==)."""
    return {
        "nice": os.getpriority(os.PRIO_PROCESS, 0),
        "policy": os.sched_getscheduler(0),
        "priority": os.sched_getparam(0).sched_priority,
        "affinity": sorted(os.sched_getaffinity(0)),
        "ioprio": _syscall(_SYS_IOPRIO_GET, _IOPRIO_WHO_PROCESS, 0),
        "rlimits": {str(r): resource.getrlimit(r) for r in _RLIMITS},
    }


def restore(wanted):
    """Puts back what differs from `wanted` (a snapshot()); returns "" when the state equals it
    afterwards, else what is still different (the judge then replaces the sandbox)."""
    now = snapshot()
    for key, fix in (
            ("nice", lambda: os.setpriority(os.PRIO_PROCESS, 0, wanted["nice"])),
            ("policy", lambda: os.sched_setscheduler(0, wanted["policy"],
                                                     os.sched_param(wanted["priority"]))),
            ("priority", lambda: os.sched_setparam(0, os.sched_param(wanted["priority"]))),
            ("affinity", lambda: os.sched_setaffinity(0, wanted["affinity"])),
            ("ioprio", lambda: _syscall(_SYS_IOPRIO_SET, _IOPRIO_WHO_PROCESS, 0,
                                        wanted["ioprio"]))):
        if now[key] != wanted[key]:
            try:
                fix()
            except OSError:
                pass  # reported below
    for r in _RLIMITS:
        if resource.getrlimit(r) != wanted["rlimits"][str(r)]:
            try:
                resource.setrlimit(r, wanted["rlimits"][str(r)])
            except (OSError, ValueError):
                pass
    after = snapshot()
    changed = [f"{key} {after[key]!r} (was {wanted[key]!r})" for key in wanted
               if key != "rlimits" and after[key] != wanted[key]]
    changed += [f"rlimit {r} {after['rlimits'][r]} (was {wanted['rlimits'][r]})"
                for r in wanted["rlimits"] if after["rlimits"][r] != wanted["rlimits"][r]]
    return "; ".join(changed)
