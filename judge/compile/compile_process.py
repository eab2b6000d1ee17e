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

Memory: the worker has no address-space limit of its own and lifts the soft one it inherits to
the hard one, because a virtual-address cap breaks libtpu's allocator: XLA:TPU maps large
ranges it never touches, and under 4 GiB a 3-D convolution's honest compile failed its mmap
(errno 12) and died of SIGSEGV. What bounds it instead is a watchdog on its resident size
(VmRSS, sampled while the judge waits for the reply) against $PALLADIUM_COMPILE_MEMORY_MB,
far above what libtpu needs for the 50 honest solutions at the full shapes (docs/verification.md,
"The compile tier's memory"): a compile that passes it is the kernel's doing (blocks that are
whole large arrays unroll into a vector program libtpu cannot hold) and is `resource_exhausted`,
kind `resource_exhausted:compiler_memory`, at once, as when the compiler itself says it ran out.

A death is a verdict only when the compiler explains it: its last words on stderr say it ran
out of memory (`resource_exhausted`, at once: retrying a minute-long deterministic failure
would only double it) or are its own fatal message (an LLVM error, a failed check:
`compile_error`, kind `compiler_abort`, after a second death in a fresh worker). A death it does
not explain (a signal from outside, the host's OOM killer, a crash with no message, a reply that
is not the protocol) is retried in a fresh worker; when every attempt dies so, the outcome is
{"verdict": None, "infrastructure": why}, never the candidate's verdict. A compile that
outlives `deadline` kills the worker; the verdict is `timeout` at stage `compile`. The judge is
single-threaded per job; the class is not thread-safe.

The compile pipe (judge <-> worker: two pipes, whose fds the worker gets as `--fds R,W`;
MessagePack maps framed by sandbox/candidate/protocol.Stream) is defined once in
protocol/compile_pipe.json (its version, and the messages ready, compile and compiled); both
ends build and check their maps with PIPE.
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

from protocol import pipe_schema
from sandbox.candidate.protocol import ProtocolError, Stream
from judge import verdicts

PIPE = pipe_schema.load("compile_pipe").channel("worker")
WORKER_MODULE = "judge.compile.compile_worker"
READY_TIMEOUT_S = 180.0
# The worker's resident-size bound (the watchdog's). The 50 honest solutions' compiles at the
# full shapes peak at PEAK_HONEST_RSS_MB (scripts/measure_compile_memory.py); the bound leaves
# room for kernels bigger than ours, while the ungridded 8p GEMM passes it within a minute.
MEMORY_ENV = "PALLADIUM_COMPILE_MEMORY_MB"
PEAK_HONEST_RSS_MB = 640  # 10p's; the median is 420 (docs/verification.md, §1e)
DEFAULT_MEMORY_MB = 4096
WATCH_INTERVAL_S = 0.1
# A worker gets this many fresh starts per artifact; the last death is the candidate's verdict.
ATTEMPTS = 2
STDERR_TAIL_CHARS = 2000
# What the worker's stderr says when the compiler ran out of host memory (LLVM, the allocator).
_HOST_MEMORY_MARKERS = ("out of memory", "Out of memory", "std::bad_alloc", "Cannot allocate")
# The compiler's own fatal messages: LLVM's, a failed CHECK, absl/glog's fatal log line.
_COMPILER_FATAL = re.compile(r"LLVM ERROR|Check failed|^F\d{4} |terminate called", re.M)
_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def default_memory_mb():
    """The worker's resident-size bound: $PALLADIUM_COMPILE_MEMORY_MB, else DEFAULT_MEMORY_MB."""
    value = os.environ.get(MEMORY_ENV, "").strip()
    if not value:
        return DEFAULT_MEMORY_MB
    if not value.isdigit() or int(value) < 1024:
        raise ValueError(f"{MEMORY_ENV}={value!r}: expected a whole number of MiB, at least 1024")
    return int(value)


def resident_mb(pid):
    """A process's resident size in MiB (VmRSS), or None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except (OSError, ValueError):
        return None
    return None


class _OverMemory(Exception):
    """The worker's resident size passed the bound."""


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

    def __init__(self, command=None, memory_mb=None):
        self._command = command or [sys.executable, "-m", WORKER_MODULE]
        self.memory_mb = default_memory_mb() if memory_mb is None else int(memory_mb)
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
            self._ready = PIPE.check(msg, "ready")
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
        """The worker's CompileOutcome dict for `blob`, or one this process makes: a worker
        that passed the memory bound or said it ran out of memory (`resource_exhausted`), one
        that died twice with the compiler's own fatal message (`compile_error`, kind
        `compiler_abort`) or overran `deadline` (`timeout`). The dict has "workers": how many
        fresh workers this artifact needed, and "peak_rss_mb": the worker's largest resident
        size seen under it. A worker that dies or stalls before it is ready, or dies under the
        artifact every time without the compiler saying why, gives
        {"verdict": None, "infrastructure": why}: the judge reports an infrastructure fault and
        the agent retries the job."""
        deaths = []
        peak = 0.0
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
            watch = {"peak": 0.0}
            try:
                self._stream.write(PIPE.message("compile", artifact=bytes(blob)))
                reply = self._read_watched(deadline, watch)
                if reply is None:
                    raise EOFError
                reply = PIPE.check(reply, "compiled")
            except TimeoutError:
                self.start()  # the overrunning worker dies; the next candidate gets a fresh one
                return _made_outcome(
                    "timeout", "timeout",
                    "the TPU compile did not finish before the job's deadline; it was killed "
                    "(Mosaic unrolls the vector code of a whole block, so very large blocks "
                    "compile for minutes)", deaths, max(peak, watch["peak"]))
            except _OverMemory:
                self.start()
                return _made_outcome(
                    "resource_exhausted", "resource_exhausted:compiler_memory",
                    f"libtpu's compiler used more than {self.memory_mb} MiB of host memory "
                    f"compiling this kernel and was stopped (the project's honest kernels "
                    f"peak at {PEAK_HONEST_RSS_MB} MiB at the full shapes); a kernel "
                    "whose blocks are whole large arrays unrolls into a vector program too big "
                    "to compile", deaths + [None], max(peak, watch["peak"]))
            except (EOFError, BrokenPipeError, ProtocolError) as exc:
                how = self._death(kill=isinstance(exc, ProtocolError))
                tail = self._stderr_tail()
                deaths.append((how, tail, str(exc) if isinstance(exc, ProtocolError) else ""))
                peak = max(peak, watch["peak"])
                self.start()
                if _ran_out_of_memory(tail):
                    break  # the compiler said so itself: no fault from outside, and no retry
                continue
            outcome = dict(reply.get("outcome") or {})
            outcome["workers"] = len(deaths) + 1
            outcome["peak_rss_mb"] = round(max(watch["peak"],
                                               outcome.get("peak_rss_mb") or 0.0), 1)
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
                f"unrolls into a vector program too big to compile{detail}", deaths, peak)
        if not protocol_error and all(_COMPILER_FATAL.search(t) for _, t, _ in deaths):
            return _made_outcome(
                "compile_error", "compiler_abort",
                f"libtpu's compiler stopped with its own fatal error compiling this kernel "
                f"({how}), {_in_processes(deaths)}{detail}", deaths, peak)
        what = f"sent what is not a compile result ({protocol_error})" if protocol_error \
            else f"died ({how}) without a message of its own"
        return {"verdict": None, "workers": len(deaths), "peak_rss_mb": round(peak, 1),
                "infrastructure": verdicts.truncate(
                    f"the compile process {what} under this artifact, "
                    f"{_in_processes(deaths)}; not the candidate's verdict{detail}", 2000)}

    def _read_watched(self, deadline, watch):
        """The worker's next message, sampling its resident size until it comes: _OverMemory
        past the bound, TimeoutError past `deadline`."""
        while True:
            try:
                return self._stream.read(min(deadline, time.monotonic() + WATCH_INTERVAL_S))
            except TimeoutError:
                if time.monotonic() >= deadline:
                    raise
            rss = resident_mb(self._proc.pid) if self._proc else None
            if rss is not None:
                watch["peak"] = max(watch["peak"], rss)
                if rss > self.memory_mb:
                    raise _OverMemory(rss)


def _in_processes(deaths):
    return "in one process" if len(deaths) == 1 else f"in {len(deaths)} fresh processes"


def _ran_out_of_memory(stderr_tail):
    return any(marker in stderr_tail for marker in _HOST_MEMORY_MARKERS)


def _made_outcome(verdict, kind, text, deaths, peak_rss_mb=0.0):
    from judge.compile.compile_tier import libtpu_version
    return {"verdict": verdict, "stage": "compile", "kind": kind,
            "error": verdicts.truncate(text, verdicts.MAX_ERROR_CHARS),
            "error_signature": verdicts.error_signature("compile", kind, text.splitlines()[0]),
            "lower_ms": 0.0, "compile_ms": 0.0, "libtpu_version": libtpu_version(),
            "workers": len(deaths) + (0 if verdict != "timeout" else 1),
            "peak_rss_mb": round(peak_rss_mb, 1)}
