"""Loading the sandbox's later seccomp stages (sandbox/seccomp_policy.hpp builds them).

bubblewrap loads the base program before it starts the runner; the runner loads
  "zygote"     in the warm-spare parent, before JAX is imported (no execve), and
  "candidate"  in each forked spare, first thing, while it has one thread (no new processes,
               no sockets, no signals to others).
The programs are classic BPF, as libseccomp exported them, read from kSeccompDir. Loading sets
no_new_privs and uses SECCOMP_FILTER_FLAG_TSYNC, so every thread of the process is covered. A
filter cannot be removed once loaded; a failure to load raises, and the runner then exits
without running anything.
"""
import ctypes
import os
import struct

SECCOMP_DIR = "/palladium/seccomp"
# sandbox/seccomp_policy.hpp kSelfPidPlaceholder: "the caller's pid" in the candidate program.
SELF_PID_PLACEHOLDER = 0x3EC05EC0

_PR_SET_NO_NEW_PRIVS = 38
_SYS_SECCOMP = 317  # x86_64; the filters' architecture check refuses any other ABI anyway
_SECCOMP_SET_MODE_FILTER = 1
_SECCOMP_FILTER_FLAG_TSYNC = 1


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def with_own_pid(program, pid):
    """`program` with every instruction constant equal to SELF_PID_PLACEHOLDER set to `pid`
    (struct sock_filter: u16 code, u8 jt, u8 jf, u32 k); returns (program, count)."""
    out = bytearray(program)
    count = 0
    for offset in range(0, len(out), 8):
        if struct.unpack_from("<I", out, offset + 4)[0] == SELF_PID_PLACEHOLDER:
            struct.pack_into("<I", out, offset + 4, pid)
            count += 1
    return bytes(out), count


def load(stage, directory=SECCOMP_DIR, own_pid=None):
    with open(os.path.join(directory, f"{stage}.bpf"), "rb") as handle:
        program = handle.read()
    if not program or len(program) % 8:
        raise RuntimeError(f"seccomp program {stage!r} has {len(program)} bytes, not 8 per "
                           "instruction")
    if own_pid is not None:
        program, count = with_own_pid(program, own_pid)
        if count == 0:
            raise RuntimeError(f"seccomp program {stage!r} has no own-pid placeholder")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    libc.syscall.restype = ctypes.c_long
    if libc.syscall(ctypes.c_long(_SYS_SECCOMP), ctypes.c_long(_SECCOMP_SET_MODE_FILTER),
                    ctypes.c_long(_SECCOMP_FILTER_FLAG_TSYNC), ctypes.byref(fprog)) != 0:
        raise OSError(ctypes.get_errno(), f"seccomp(SET_MODE_FILTER, {stage})")


def filters_loaded():
    """How many seccomp filters this process runs under (the kernel's count)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("Seccomp_filters:"):
                return int(line.split()[1])
    return 0
