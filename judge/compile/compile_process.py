"""The compile tier's own disposable process: libtpu compiles a candidate's artifact there, never
in the judge.

Why a process of its own: compiling an artifact whose blocks are whole full-size arrays (an
ungridded pallas_call, a common LLM answer) makes Mosaic unroll a huge vector program, and
libtpu's LLVM runs out of memory and aborts the process (`LLVM ERROR: out of memory`, SIGABRT);
such a compile can also run for minutes. In the judge that would end the judge and charge the
candidate a `crash`. Here it ends only the compile process, and the candidate gets the verdict
the TPU would give it: `resource_exhausted`.

    proc = CompileProcess()          # spawns the worker at once; it loads libtpu meanwhile
    outcome = proc.compile(blob, deadline)   # a CompileOutcome.as_dict()
    proc.close()

A worker that dies under an artifact is replaced and the artifact compiled once more in the
fresh one, so a fault from outside (a kill, the CPU limit) is not the candidate's: only a second
death under the same artifact is its verdict. A death that the compiler itself explains as out
of memory (its last words on stderr) is the verdict at once: retrying a minute-long
deterministic failure would only double it. A compile that outlives `deadline` kills the
worker; the verdict is `timeout` at stage `compile`. The judge is single-threaded per job; the
class is not thread-safe.

The compile pipe (judge <-> worker: two pipes, whose fds the worker gets as `--fds R,W`;
MessagePack maps with "type" and "version", framed by sandbox/candidate/protocol.Stream),
version COMPILE_PROTOCOL_VERSION:
    worker -> judge  {"type":"ready", "pid":int, "libtpu_version":str, "load_ms":float}
    judge -> worker  {"type":"compile", "artifact":bytes}   (a TPU artifact whose avals the
                                                             judge has checked)
    worker -> judge  {"type":"compiled", "outcome":{CompileOutcome fields}, "recycle":bool}
"recycle" says the worker exits after this reply (it used half its CPU limit). EOF ends it.
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

from sandbox.candidate.protocol import ProtocolError, Stream
from judge import verdicts

COMPILE_PROTOCOL_VERSION = 1
WORKER_MODULE = "judge.compile.compile_worker"
READY_TIMEOUT_S = 180.0
# The worker's address space. A normal candidate's compile peaks at 2.3-2.5 GiB virtual with
# libtpu loaded (0.4 GiB resident); the ungridded 8p GEMM exhausts 4 GiB in 30 s and 8 GiB in
# 64 s, so a tighter bound is a faster verdict for the kernels that would never compile.
MEMORY_ENV = "PALLADIUM_COMPILE_MEMORY_MB"
DEFAULT_ADDRESS_SPACE_MB = 4096
# A worker gets this many fresh starts per artifact; the last death is the candidate's verdict.
ATTEMPTS = 2
STDERR_TAIL_CHARS = 2000
# What the worker's stderr says when the compiler ran out of host memory (LLVM, the allocator).
_HOST_MEMORY_MARKERS = ("out of memory", "Out of memory", "std::bad_alloc", "Cannot allocate")
_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def default_address_space_mb():
    """The worker's RLIMIT_AS: $PALLADIUM_COMPILE_MEMORY_MB, else DEFAULT_ADDRESS_SPACE_MB."""
    value = os.environ.get(MEMORY_ENV, "").strip()
    if not value:
        return DEFAULT_ADDRESS_SPACE_MB
    if not value.isdigit() or int(value) < 1024:
        raise ValueError(f"{MEMORY_ENV}={value!r}: expected a whole number of MiB, at least 1024")
    return int(value)


def compile_message(kind, **fields):
    return {"type": kind, "version": COMPILE_PROTOCOL_VERSION, **fields}


def check_compile_message(msg, kind):
    if not isinstance(msg, dict) or msg.get("version") != COMPILE_PROTOCOL_VERSION:
        raise ProtocolError(f"not a version-{COMPILE_PROTOCOL_VERSION} compile message: "
                            f"{str(msg)[:200]}")
    if msg.get("type") != kind:
        raise ProtocolError(f"expected {kind}, got {str(msg.get('type'))[:40]!r}")
    return msg


def _signal_name(status):
    if status is None or status >= 0:
        return f"exit status {status}"
    try:
        return f"signal {-status} ({signal.Signals(-status).name})"
    except ValueError:
        return f"signal {-status}"


class CompileProcess:
    """One worker at a time, started ahead of need. `command` replaces the worker's command line
    (tests: a worker that aborts, hangs or dies once); it must speak the compile pipe."""

    def __init__(self, command=None, address_space_mb=None):
        self._command = command or [sys.executable, "-m", WORKER_MODULE]
        if address_space_mb is None and command is None:
            address_space_mb = default_address_space_mb()
        if address_space_mb:
            self._command = self._command + ["--address-space-mb", str(int(address_space_mb))]
        self._proc = None
        self._stream = None
        self._stderr = None
        self._ready = None
        self.starts = 0       # workers started (tests and the result's "workers" count)
        self.start()

    @property
    def pid(self):
        return self._proc.pid if self._proc else None

    def start(self):
        """Spawn a worker (does not wait for it to load libtpu)."""
        self._stop()
        to_worker_r, to_worker_w = os.pipe()
        from_worker_r, from_worker_w = os.pipe()
        self._stderr = tempfile.TemporaryFile(prefix="palladium-compile-")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_REPO, env.get("PYTHONPATH")) if p)
        try:
            # Same process group as the judge: the agent's kill of the judge's group on a job
            # timeout takes the worker with it.
            self._proc = subprocess.Popen(
                self._command + ["--fds", f"{to_worker_r},{from_worker_w}"],
                stdin=subprocess.DEVNULL, stdout=self._stderr, stderr=self._stderr, env=env,
                close_fds=True, pass_fds=(to_worker_r, from_worker_w))
        finally:
            os.close(to_worker_r)
            os.close(from_worker_w)
        self._stream = Stream(from_worker_r, to_worker_w)
        self._ready = None
        self.starts += 1

    def _stop(self):
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.wait()
            self._proc = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def close(self):
        self._stop()

    def _stderr_tail(self):
        try:
            self._stderr.seek(0)
            text = self._stderr.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        return text[-STDERR_TAIL_CHARS:].strip()

    def _wait_ready(self, deadline):
        if self._ready is None:
            msg = self._stream.read(min(deadline, time.monotonic() + READY_TIMEOUT_S))
            if msg is None:
                raise EOFError
            self._ready = check_compile_message(msg, "ready")
        return self._ready

    def _death(self, kill):
        """How the worker ended (it is waited for; killed first when `kill`)."""
        if kill:
            self._proc.kill()
        try:
            status = self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            status = self._proc.wait()
        return _signal_name(status)

    def compile(self, blob, deadline):
        """The worker's CompileOutcome dict for `blob`, or one this process makes for a worker
        that died twice (`resource_exhausted` when its stderr says it ran out of memory,
        `compile_error` kind `compiler_crash` otherwise) or overran `deadline` (`timeout`).
        The dict has "workers": how many fresh workers this artifact needed. A worker that dies
        or stalls before it is ready gives {"verdict": None, "infrastructure": why}: the judge
        reports an infrastructure fault and the agent retries the job."""
        deaths = []
        for _ in range(ATTEMPTS):
            if self._proc is None or self._proc.poll() is not None:
                self.start()
            try:
                self._wait_ready(deadline)
            except (EOFError, ProtocolError, TimeoutError) as exc:
                # Before the artifact was sent: the host's fault (libtpu will not load), never
                # the candidate's.
                how = "too slow" if isinstance(exc, TimeoutError) else self._death(kill=True)
                tail = self._stderr_tail()
                self.start()
                return {"verdict": None, "workers": len(deaths) + 1,
                        "infrastructure": verdicts.truncate(
                            f"the compile process did not become ready ({how}): {tail}", 2000)}
            # The tail must be this artifact's alone.
            self._stderr.seek(0)
            self._stderr.truncate()
            try:
                self._stream.write(compile_message("compile", artifact=bytes(blob)))
                reply = self._stream.read(deadline)
                if reply is None:
                    raise EOFError
                reply = check_compile_message(reply, "compiled")
            except TimeoutError:
                self.start()  # the overrunning worker dies; the next candidate gets a fresh one
                return _made_outcome(
                    "timeout", "timeout",
                    "the TPU compile did not finish before the job's deadline; it was killed "
                    "(Mosaic unrolls the vector code of a whole block, so very large blocks "
                    "compile for minutes)", deaths)
            except (EOFError, BrokenPipeError, ProtocolError) as exc:
                how = self._death(kill=isinstance(exc, ProtocolError))
                tail = self._stderr_tail()
                deaths.append((how, tail, str(exc) if isinstance(exc, ProtocolError) else ""))
                self.start()
                if _ran_out_of_memory(tail):
                    break  # the compiler said so itself: no fault from outside, and no retry
                continue
            outcome = dict(reply.get("outcome") or {})
            outcome["workers"] = len(deaths) + 1
            if reply.get("recycle"):
                self.start()
            return outcome
        how, tail, protocol_error = deaths[-1]
        detail = f"\n{tail}" if tail else ""
        if _ran_out_of_memory(tail):
            return _made_outcome(
                "resource_exhausted", "resource_exhausted:compiler_memory",
                f"libtpu's compiler ran out of memory compiling this kernel and died ({how}), "
                f"{_in_processes(deaths)}; a kernel whose blocks are whole large arrays "
                f"unrolls into a vector program too big to compile{detail}", deaths)
        what = f"sent what is not a compile result ({protocol_error})" if protocol_error \
            else f"died ({how})"
        return _made_outcome(
            "compile_error", "compiler_crash",
            f"libtpu's compiler {what} compiling this kernel, {_in_processes(deaths)}{detail}",
            deaths)


def _in_processes(deaths):
    return "in one process" if len(deaths) == 1 else f"in {len(deaths)} fresh processes"


def _ran_out_of_memory(stderr_tail):
    return any(marker in stderr_tail for marker in _HOST_MEMORY_MARKERS)


def _made_outcome(verdict, kind, text, deaths):
    from judge.compile.compile_tier import libtpu_version
    return {"verdict": verdict, "stage": "compile", "kind": kind,
            "error": verdicts.truncate(text, verdicts.MAX_ERROR_CHARS),
            "error_signature": verdicts.error_signature("compile", kind, text.splitlines()[0]),
            "lower_ms": 0.0, "compile_ms": 0.0, "libtpu_version": libtpu_version(),
            "workers": len(deaths) + (0 if verdict != "timeout" else 1)}
