"""Spares run as another uid than their warm-spare parent (issue 21 item 5).

When the launcher is root, the sandbox's user namespace maps two ids (sandbox/
sandbox_userns.hpp): the parent runs as 65534 with CAP_SETUID and CAP_SETGID, in that
namespace only, and PALLADIUM_SPARE_ID names the spares' id (65533, uid and gid). Each spare,
right after the fork and before anything of a candidate runs, takes that id and drops every
capability (become_spare). The kernel's uid checks then refuse a spare what it would do to its
parent (signals, /proc/<pid>/environ and other ptrace-guarded files, setpriority, prlimit),
whatever seccomp allows, and a spare cannot write what the parent owns.

The parent keeps both capabilities for three things: the fork's change of ids above; its
filesystem ids (files_as): it makes each spare's directory and empties /tmp after each spare
as the spares' uid, so it needs no CAP_CHOWN or CAP_DAC_OVERRIDE to remove what they wrote;
and its effective uid for one kill() (kill_spare), so it needs no CAP_KILL to end a spare.

Without root there is one uid (PALLADIUM_SPARE_ID is absent, PALLADIUM_SANDBOX_IDS says why)
and nothing here changes an id.
"""
import contextlib
import ctypes
import os

SPARE_ENV = "PALLADIUM_SPARE_ID"
IDS_ENV = "PALLADIUM_SANDBOX_IDS"

# linux/capability.h and linux/prctl.h
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


_libc = None


def _c():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def spare_id(environ=None):
    """The spares' uid and gid, or None when the parent and its spares share one uid."""
    value = (os.environ if environ is None else environ).get(SPARE_ENV, "")
    if not value:
        return None
    if not value.isdigit() or int(value) == 0:
        raise RuntimeError(f"{SPARE_ENV}={value!r} is not a nonzero uid")
    return int(value)


def describe(environ=None):
    """The launcher's account of the sandbox's ids, for the ready frame."""
    return (os.environ if environ is None else environ).get(IDS_ENV, "") or \
        "unknown: the launcher did not say"


def capabilities():
    """{"CapInh": int, "CapPrm": ..., "CapEff": ..., "CapBnd": ..., "CapAmb": ...} and
    "NoNewPrivs" of this process, from the kernel."""
    out = {}
    with open("/proc/self/status") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key.startswith("Cap"):
                out[key] = int(value.strip(), 16)
            elif key == "NoNewPrivs":
                out[key] = int(value.strip())
    return out


def become_spare(spare):
    """Takes uid and gid `spare` (real, effective, saved; no supplementary group) and drops
    every capability. A change between two nonzero uids keeps the capabilities, so they are
    cleared explicitly. Raises OSError or RuntimeError when the process is not exactly that
    afterwards (the spare then exits as an infrastructure fault)."""
    os.setgroups([])
    os.setresgid(spare, spare, spare)
    os.setresuid(spare, spare, spare)
    libc = _c()
    if libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_CAP_AMBIENT_CLEAR_ALL)")
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()  # all zero: no capability effective, permitted or inheritable
    if libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset")
    caps = capabilities()
    held = {k: v for k, v in caps.items() if k in ("CapInh", "CapPrm", "CapEff", "CapAmb") and v}
    if (os.getresuid() != (spare,) * 3 or os.getresgid() != (spare,) * 3 or os.getgroups()
            or held):
        raise RuntimeError(f"the spare is not uid/gid {spare} without capabilities: uids "
                           f"{os.getresuid()}, gids {os.getresgid()}, groups {os.getgroups()}, "
                           f"{held}")


def _set_fs_ids(uid, gid):
    libc = _c()
    libc.setfsgid(gid)
    libc.setfsuid(uid)
    # Both calls return the previous id whether or not they succeeded: ask again to know.
    if libc.setfsuid(uid) != uid or libc.setfsgid(gid) != gid:
        raise OSError(1, f"setfsuid/setfsgid({uid}/{gid}) was refused")


@contextlib.contextmanager
def files_as(spare):
    """Within the block, this thread's file accesses are checked as uid and gid `spare` (the
    filesystem ids; signals, ptrace and the rest still see this process's own ids). Nothing
    when `spare` is None."""
    if spare is None:
        yield
        return
    own_uid, own_gid = os.geteuid(), os.getegid()
    _set_fs_ids(spare, spare)
    try:
        yield
    finally:
        _set_fs_ids(own_uid, own_gid)


def kill_spare(pid, sig, spare):
    """Sends `sig` to spare `pid`. The kernel lets a process signal another only when its real
    or effective uid is the other's real or saved uid: the parent takes the spares' uid as its
    effective uid for this call alone. Its real and saved uids stay its own, and those are what
    a spare's signal would be checked against, so no spare can signal it meanwhile. A spare
    that has not taken its uid yet (just forked) is still the parent's and is signalled as
    that."""
    if spare is not None:
        own = os.geteuid()
        os.setresuid(-1, spare, -1)
        try:
            os.kill(pid, sig)
            return
        except PermissionError:
            pass
        finally:
            os.setresuid(-1, own, -1)
    os.kill(pid, sig)
