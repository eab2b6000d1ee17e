"""The warm-spare parent puts back the scheduling state a spare inherits (sandbox/candidate/
parent_state.py), and says so when it cannot. Each case runs in a forked child, so the test
process's own state is never touched."""
import os
import pickle

import pytest

from sandbox.candidate import parent_state


def in_child(body):
    """body()'s return value, computed in a forked child."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        try:
            value = body()
        except BaseException as exc:  # report, never return into pytest in the child
            value = f"{type(exc).__name__}: {exc}"
        os.write(write_fd, pickle.dumps(value))
        os._exit(0)
    os.close(write_fd)
    data = b""
    while chunk := os.read(read_fd, 1 << 16):
        data += chunk
    os.close(read_fd)
    os.waitpid(pid, 0)
    return pickle.loads(data)


def test_what_a_candidate_changed_is_put_back():
    def body():
        wanted = parent_state.snapshot()
        os.setpriority(os.PRIO_PROCESS, 0, 10)
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
        changed = parent_state.snapshot() != wanted
        left = parent_state.restore(wanted)
        return changed, left, parent_state.snapshot() == wanted
    changed, left, equal = in_child(body)
    assert changed  # the changes did take effect before the restore
    # Root may lower its nice value again; an unprivileged parent may not (next test).
    if os.geteuid() == 0:
        assert (left, equal) == ("", True)


@pytest.mark.skipif(os.geteuid() != 0, reason="drops to uid 65534 to be unprivileged")
def test_a_state_that_cannot_be_put_back_is_reported():
    def body():
        os.setgroups([])
        os.setresgid(65534, 65534, 65534)
        os.setresuid(65534, 65534, 65534)
        wanted = parent_state.snapshot()
        os.setpriority(os.PRIO_PROCESS, 0, 15)  # an unprivileged process cannot undo this
        return parent_state.restore(wanted)
    left = in_child(body)
    assert left.startswith("nice 15 (was "), left
