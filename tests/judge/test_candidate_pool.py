"""CandidatePool's control-socket bookkeeping, against a stand-in for the warm-spare parent (no
sandbox): a spare retired after its result is reaped without the judge waiting, and the parent's
"reaped" answer is read before the answer to the judge's next request."""
import os
import socket
import threading

from sandbox.candidate.protocol import CONTROL, Stream, receive_control, send_control
from judge.candidate_pool import CandidatePool, _Spare


def _pool_with_parent():
    judge, parent = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pool = CandidatePool(launcher="/nonexistent", log=lambda text: None)
    pool._control = judge
    return pool, parent


def _spare(pid):
    read_fd, write_fd = os.pipe()
    return _Spare(pid, Stream(read_fd, write_fd))


def test_retiring_a_spare_sends_its_reap_without_waiting():
    pool, parent = _pool_with_parent()
    pool._retire(_spare(1234))  # returns although nobody answers
    msg, _ = receive_control(parent)
    assert (msg["type"], msg["pid"]) == ("reap", 1234)
    assert pool._unanswered_reaps == 1


def test_the_next_request_reads_the_earlier_reap_answers_first():
    pool, parent = _pool_with_parent()
    pool._retire(_spare(1234))
    pool._retire(_spare(1235))

    def parent_side():
        for pid in (1234, 1235):
            msg, _ = receive_control(parent)
            assert msg["type"] == "reap"
            send_control(parent, CONTROL.message("reaped", pid=pid, status="signal 9 (SIGKILL)"))
        msg, fds = receive_control(parent, maxfds=2)
        for fd in fds:
            os.close(fd)
        send_control(parent, CONTROL.message("spawned", spare=msg["spare"], pid=99))

    thread = threading.Thread(target=parent_side)
    thread.start()
    new = pool._fork_spare()
    thread.join()
    assert new.pid == 99
    assert pool._unanswered_reaps == 0
    assert new.fork_cpu_ms == 0.0  # an answer without it (an older parent)
    new.stream.close()


def test_a_synchronous_reap_gets_its_own_answer_not_an_earlier_one():
    pool, parent = _pool_with_parent()
    pool._retire(_spare(1234))

    def parent_side():
        for _ in range(2):
            msg, _ = receive_control(parent)
            status = "exit 0" if msg["pid"] == 1234 else "signal 11 (SIGSEGV)"
            send_control(parent, CONTROL.message("reaped", pid=msg["pid"], status=status))

    thread = threading.Thread(target=parent_side)
    thread.start()
    status = pool.reap(_spare(1300))
    thread.join()
    assert status == "signal 11 (SIGSEGV)"
    assert pool._unanswered_reaps == 0


def test_a_new_sandbox_owes_no_answers():
    pool, parent = _pool_with_parent()
    pool._retire(_spare(1234))
    pool._kill_sandbox()
    assert pool._unanswered_reaps == 0
    parent.close()
