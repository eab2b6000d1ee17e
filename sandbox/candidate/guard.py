"""Clear early error messages inside the candidate process: a `sys.addaudithook` guard active
only while candidate code runs (import, trace, lower, the interpret-mode check).

This is not the boundary. The candidate process runs under bubblewrap and seccomp
(docs/verification.md, "The candidate sandbox"), where fork, exec, sockets, signals to others and
writes outside its private tmpfs fail whatever Python does; the candidate controls its whole
process and may switch this hook off. What the hook adds is a message that names the rule
("sandbox: os.fork is not allowed in a kernel module") where the OS would only say EPERM, and a
record of refusals the candidate caught, so that it still fails:

  * process creation: os.fork/forkpty/system/exec*/spawn*/posix_spawn, subprocess.Popen, pty;
  * network: socket creation, connect, bind, name lookups;
  * ctypes (foreign calls can do anything): every `ctypes.*` event;
  * file opens for writing (or create/append/truncate), and remove/rename/mkdir/chmod/..., for
    paths outside the allowed directory (the candidate's private directory);
  * os.kill/killpg, os.chdir, os.putenv/unsetenv, sys.addaudithook.

`violations()`/`take_violations()` return the recorded refusals; the judge reports them as
`runtime_error` with signature kind `SandboxViolation`.
"""
import contextlib
import os
import threading

_PROCESS_EVENTS = frozenset({
    "os.fork", "os.forkpty", "os.system", "os.exec", "os.spawn", "os.posix_spawn",
    "subprocess.Popen", "pty.spawn", "os.kill", "os.killpg", "signal.pthread_kill",
    "os.chdir", "os.fchdir", "os.putenv", "os.unsetenv", "sys.addaudithook", "os.setuid",
    "os.startfile", "webbrowser.open",
})
_NETWORK_EVENTS = frozenset({
    "socket.__new__", "socket.connect", "socket.bind", "socket.getaddrinfo",
    "socket.gethostbyname", "socket.gethostbyaddr", "socket.sendto", "socket.sendmsg",
    "urllib.Request", "http.client.connect",
})
# Events whose first argument is a path that gets modified.
_PATH_EVENTS = {
    "os.remove": (0,), "os.rmdir": (0,), "os.mkdir": (0,), "os.rename": (0, 1),
    "os.chmod": (0,), "os.chown": (0,), "os.link": (0, 1), "os.symlink": (1,),
    "os.truncate": (0,), "os.utime": (0,), "shutil.rmtree": (0,), "shutil.move": (0, 1),
    "shutil.copyfile": (1,), "shutil.copytree": (1,), "os.mkfifo": (0,), "os.mknod": (0,),
}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


class SandboxViolation(RuntimeError):
    """A candidate tried something the judge does not allow while it runs."""


_state = {"installed": False, "active": 0, "allowed_dir": None, "violations": [],
          "thread": None}
_lock = threading.Lock()


def _inside(path, allowed):
    if isinstance(path, int):
        return False  # an inherited fd: stdout/stderr are captured, fds 3/4 are the protocol's
    try:
        real = os.path.realpath(os.fsdecode(path))
    except (TypeError, ValueError):
        return False
    return real == allowed or real.startswith(allowed + os.sep)


def _is_write(mode, flags):
    if isinstance(mode, str) and any(c in mode for c in "wax+"):
        return True
    return isinstance(flags, int) and bool(flags & _WRITE_FLAGS)


def _refuse(event, detail):
    text = f"sandbox: {event} is not allowed in a kernel module ({detail})"
    _state["violations"].append(text)
    raise SandboxViolation(text)


def _hook(event, args):
    if not _state["active"]:
        return
    if event == "open":
        path, mode, flags = (tuple(args) + (None, None, None))[:3]
        if _is_write(mode, flags) and not _inside(path, _state["allowed_dir"]):
            _refuse("opening a file for writing", f"{path!r} is outside {_state['allowed_dir']}")
        return
    if event in _PROCESS_EVENTS:
        _refuse(event, "no processes, signals, cwd or environment changes")
    if event in _NETWORK_EVENTS:
        _refuse(event, "no network")
    if event.startswith("ctypes."):
        _refuse(event, "no foreign calls")
    positions = _PATH_EVENTS.get(event)
    if positions:
        for i in positions:
            if i < len(args) and not _inside(args[i], _state["allowed_dir"]):
                _refuse(event, f"{args[i]!r} is outside {_state['allowed_dir']}")


def install():
    """Add the hook once per process (hooks cannot be removed); it stays inert until guard()."""
    import sys
    with _lock:
        if not _state["installed"]:
            sys.addaudithook(_hook)
            _state["installed"] = True


@contextlib.contextmanager
def guard(allowed_dir):
    """Refuse the events above while the block runs; file writes only under `allowed_dir`."""
    install()
    previous = _state["allowed_dir"]
    _state["allowed_dir"] = os.path.realpath(allowed_dir)
    _state["active"] += 1
    try:
        yield
    finally:
        _state["active"] -= 1
        _state["allowed_dir"] = previous


@contextlib.contextmanager
def suspended():
    """Let the judge itself act (write the candidate file, run the cached reference)."""
    saved = _state["active"]
    _state["active"] = 0
    try:
        yield
    finally:
        _state["active"] = saved


def take_violations():
    """Refusals recorded since the last call (a candidate may have swallowed the exception)."""
    found = list(_state["violations"])
    _state["violations"].clear()
    return found
