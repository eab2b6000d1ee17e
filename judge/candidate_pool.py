"""The judge's side of the candidate sandbox: one sandbox, its warm-spare parent and its spares.

    pool = CandidatePool(); pool.start()          # raises SandboxUnavailable with the reason
    run = pool.run(job, deadline)                 # one candidate in a fresh spare
    run.result / run.failure / run.timed_out ...  # what happened (CandidateRun)
    pool.close()

The sandbox is `palladium-sandbox` (sandbox/palladium_sandbox_main.cpp: bubblewrap + the
seccomp stages, as an unprivileged uid) running `python -m palladium_candidate` (the warm-spare
parent, sandbox/candidate/zygote.py), which sees read-only only the Python installation, the
venv, the candidate runner and the candidate pipe's definition (protocol/candidate_pipe.json and
protocol/pipe_schema.py), and nothing else of the repository, the agent or the run database.
Every candidate runs in its own spare, forked from that parent and never reused; one spare is
kept warm (forked and past its backend warm-up) while the previous candidate is judged.

Faults are sorted, because an infrastructure fault must never be charged to the candidate:
  * the sandbox or a spare failing before the job is handed over, or the sandbox dying with the
    spare (killed from outside): `infrastructure`, and run() retries once in a fresh sandbox;
  * a spare SIGKILLed by someone else mid-job (an outside kill, or the kernel's OOM killer):
    retried once in a fresh spare; the second time it is the candidate's `crash`;
  * any other death mid-job (a signal, an exit without a result) is the candidate's `crash`;
  * no result before the deadline: the whole sandbox namespace is killed (nothing the candidate
    did can survive it) and the run is `timed_out`; the next run starts a fresh sandbox;
  * a thread the candidate could not start (EAGAIN: "can't start new thread", pthread_create)
    while its own sandbox's pids cgroup never reached its limit: the limit that refused it was
    not this candidate's (RLIMIT_NPROC of a shared uid, the host's), so it is retried once in a
    fresh sandbox and then left as infrastructure;
  * a timeout that began within ANOMALY_WINDOW_S after another sandbox of this host recorded an
    anomaly (a pids or memory limit hit, a thread it could not start, a tainted parent; the
    host-wide log anomaly_log_path()): infrastructure, so the agent retries the job, instead of
    the candidate's `timeout`;
  * a warm-spare parent that reports itself tainted (its scheduling state changed, or /tmp not
    emptied after a spare, sandbox/candidate/zygote.py): the sandbox is replaced, and a run that
    met it is an infrastructure fault.
The sandbox's stdout and stderr (the launcher's, bwrap's, the parent's and every spare's fds 1
and 2 outside the candidate's captured stages) are one pipe the pool drains into the judge's log,
each line marked as the sandbox's, never the judge's log file itself: a candidate holding that
file could truncate it and forge judge lines, which the agent quotes into stored results.
Thread safety: none; one judge thread owns a pool.
"""
import dataclasses
import collections
import os
import pathlib
import re
import resource
import signal
import socket
import subprocess
import sys
import threading
import time

from sandbox.candidate.protocol import (CONTROL, JOB, ProtocolError, Stream, receive_control,
                                          send_control)

REPO = pathlib.Path(__file__).resolve().parents[1]
RUNNER_DIR = REPO / "sandbox" / "candidate"
RUNNER_PACKAGE = "palladium_candidate"
# The candidate pipe's definition and the module that reads it (sandbox/candidate/protocol.py
# imports it under this name inside the sandbox): two files of protocol/, nothing else of it.
PIPE_SCHEMA_MODULE = REPO / "protocol" / "pipe_schema.py"
PIPE_SCHEMA_JSON = REPO / "protocol" / "candidate_pipe.json"
SANDBOX_LIB = "/palladium/lib"
START_TIMEOUT_S = 180.0
SPARE_READY_TIMEOUT_S = 120.0


class SandboxUnavailable(Exception):
    """The candidate sandbox cannot be started here; the message says why and what to do."""


class SandboxTainted(ConnectionError):
    """The warm-spare parent refused to fork: what an earlier candidate changed is still there."""


# A timeout this soon after another sandbox's anomaly is not charged (see the module docstring).
ANOMALY_WINDOW_S = 30.0
# What a thread that could not be started looks like, from Python, glibc and XLA.
THREAD_FAILURE = re.compile(r"can't start new thread|pthread_create|Resource temporarily "
                            r"unavailable|EAGAIN")


def anomaly_log_path():
    """The host-wide file where every judge's sandboxes record their anomalies: beside the
    judge's cache, which all judges of a host share."""
    from judge.audit import cache_dir
    return os.path.join(cache_dir(), "sandbox-anomalies.log")


def record_anomaly(path, kind, detail):
    """Appends one line (one write, O_APPEND, so concurrent judges do not interleave)."""
    line = f"{time.time():.3f} {os.getpid()} {kind} {detail[:200]}".replace("\n", " ") + "\n"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)
    except OSError:
        pass  # the log is advisory; a judge that cannot write it still judges


def others_anomalies(path, since):
    """Anomalies another judge's sandbox recorded at or after `since` (time.time())."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - (64 << 10)))
            lines = handle.read().decode("utf-8", errors="replace").splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        parts = line.split(" ", 3)
        try:
            when, pid = float(parts[0]), int(parts[1])
        except (ValueError, IndexError):
            continue
        if when >= since and pid != os.getpid():
            found.append(line)
    return found


def _counter(path, key):
    """The integer after `key` in a cgroup events file, 0 when unreadable."""
    try:
        with open(path) as handle:
            for line in handle:
                name, _, value = line.partition(" ")
                if name == key:
                    return int(value)
    except (OSError, ValueError):
        pass
    return 0


# Bounds on what a sandbox may put in the judge's log: a line's length, and all its lines.
OUTPUT_LINE_CHARS = 500
OUTPUT_BUDGET_BYTES = 1 << 20
OUTPUT_PREFIX = "sandbox| "


def quote_output_line(raw):
    """One line of sandbox output as it may appear in the judge's log: decoded, control
    characters escaped (no carriage return or escape sequence can rewrite what a reader sees),
    cut to OUTPUT_LINE_CHARS, and prefixed, so that it can never pass for a judge line."""
    text = raw.decode("utf-8", errors="replace")
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    if len(text) > OUTPUT_LINE_CHARS:
        text = text[:OUTPUT_LINE_CHARS] + f"... [{len(text) - OUTPUT_LINE_CHARS} more chars]"
    return OUTPUT_PREFIX + text


class _OutputDrain:
    """Reads the sandbox's stdout+stderr pipe on a daemon thread and logs each line quoted."""

    def __init__(self, pipe, log):
        self._pipe, self._log = pipe, log
        self.recent = collections.deque(maxlen=200)  # (time.monotonic(), quoted line)
        self._thread = threading.Thread(target=self._run, name="sandbox-output", daemon=True)
        self._thread.start()

    def _run(self):
        used, dropped = 0, 0
        try:
            for raw in iter(lambda: self._pipe.readline(OUTPUT_LINE_CHARS * 4), b""):
                used += len(raw)
                if used > OUTPUT_BUDGET_BYTES:
                    dropped += 1
                    continue
                line = quote_output_line(raw.rstrip(b"\n"))
                self.recent.append((time.monotonic(), line))
                self._log(line)
        except (OSError, ValueError):
            pass  # the pipe was closed with the sandbox
        if dropped:
            self._log(f"{OUTPUT_PREFIX}[{dropped} more lines dropped: over "
                      f"{OUTPUT_BUDGET_BYTES} bytes]")

    def since(self, start):
        return [line for when, line in list(self.recent) if when >= start]

    def join(self, timeout=2.0):
        self._thread.join(timeout)


def launcher_path():
    """$PALLADIUM_SANDBOX, else palladium-sandbox beside $PALLADIUM_BIN, else build/."""
    explicit = os.environ.get("PALLADIUM_SANDBOX")
    if explicit:
        return explicit
    binary = os.environ.get("PALLADIUM_BIN")
    if binary:
        return str(pathlib.Path(binary).resolve().parent / "palladium-sandbox")
    return str(REPO / os.environ.get("PALLADIUM_BUILD_DIR", "build") / "palladium-sandbox")


def default_address_space_mb():
    """RLIMIT_AS of each candidate process: the judge's measured bound (docs/verification.md:
    peak 1.6 GiB virtual, XLA adds per CPU), and never more than the judge's own limit."""
    default = max(8192, 2048 + 128 * (os.cpu_count() or 1))
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return default if soft == resource.RLIM_INFINITY else min(default, soft >> 20)


def _python_paths():
    """Directories the interpreter needs, none of them inside the repository. Only the
    installation's own (under sys.prefix or sys.base_prefix, or a site-packages): `python -m
    judge` puts the judge's working directory on sys.path, and that private directory (under
    /tmp) bound into the sandbox was both a view into the judge's files and a mount point in
    the sandbox's /tmp."""
    prefix = os.path.realpath(sys.prefix)
    base = os.path.realpath(sys.base_prefix)
    paths = {prefix, base}
    for entry in sys.path:
        real = os.path.realpath(entry) if entry else ""
        installed = any(real == p or real.startswith(p + os.sep) for p in (prefix, base)) \
            or os.path.basename(real) in ("site-packages", "dist-packages")
        if real and installed and os.path.isdir(real) \
                and not real.startswith(str(REPO) + os.sep) and real != str(REPO):
            paths.add(real)
    # Keep only the outermost of nested directories.
    return sorted(p for p in paths if not any(p != q and p.startswith(q + os.sep) for q in paths))


def _python_executable():
    venv_python = os.path.join(os.path.realpath(sys.prefix), "bin", "python")
    return venv_python if os.path.exists(venv_python) else os.path.realpath(sys.executable)


@dataclasses.dataclass
class CandidateRun:
    """How one candidate's run in a spare ended. Exactly one of result / failure / timed_out /
    infrastructure describes it."""
    result: dict = None          # the spare's result map (validated envelope only)
    failure: str = ""            # the candidate's crash: how the spare ended without a result
    timed_out: bool = False
    infrastructure: str = ""     # not the candidate's fault, even after the retry
    stage: str = "import"        # the last stage the spare announced
    stage_started: float = 0.0   # time.monotonic() when it started
    started: float = 0.0
    spare_warm_ms: float = 0.0   # the spare's preparation, wall and CPU (the CPU counts the
    spare_cpu_ms: float = 0.0    # parent's fork too)
    attempts: int = 0


class _Spare:
    def __init__(self, pid, stream, fork_cpu_ms=0.0):
        self.pid, self.stream = pid, stream
        self.fork_cpu_ms = fork_cpu_ms  # the parent's CPU for the fork
        self.ready = None


class CandidatePool:
    def __init__(self, launcher=None, address_space_mb=None, cpu_seconds=3600, tmpfs_mb=512,
                 log=None, memory_mb=6144, pids=None, anomaly_log=None):
        self.launcher = launcher or launcher_path()
        self.address_space_mb = address_space_mb or default_address_space_mb()
        self.cpu_seconds = cpu_seconds
        self.tmpfs_mb = tmpfs_mb
        # XLA's CPU thread pools grow with the host's cores, in the parent and in each of the
        # two live spares: 1024 is a few dozen per process on this 2-core host, too few on a
        # TPU host with hundreds of cores.
        self.memory_mb, self.pids = memory_mb, pids or max(1024, 32 * (os.cpu_count() or 1))
        self.anomaly_log = anomaly_log or anomaly_log_path()
        self.cgroup = ""  # the launcher's account of the sandbox's cgroup ("v1 ...", "none: ...")
        self.ids = ""  # and of its uids ("split: parent 65534, spares 65533 ...", "one uid ...")
        self._log = log or (lambda text: print(f"[judge {os.getpid()}] {text}", file=sys.stderr,
                                               flush=True))
        self._proc = None
        self._control = None
        self._spare = None
        self._drain = None
        self._serial = 0
        self._unanswered_reaps = 0  # "reap" requests sent by _retire whose answer is unread
        self.zygote_pid = None
        self.sandboxes_started = 0

    # -- the sandbox ---------------------------------------------------------------------------

    def command(self, control_fd=3):
        """The palladium-sandbox command line (also what tests inspect)."""
        cmd = [self.launcher]
        for path in _python_paths():
            cmd += ["--ro", path]
        cmd += ["--ro-at", str(RUNNER_DIR), f"{SANDBOX_LIB}/{RUNNER_PACKAGE}",
                "--ro-at", str(PIPE_SCHEMA_MODULE), f"{SANDBOX_LIB}/palladium_pipe_schema.py",
                "--ro-at", str(PIPE_SCHEMA_JSON), f"{SANDBOX_LIB}/{PIPE_SCHEMA_JSON.name}"]
        # An allowlist: the sandbox gets exactly these, nothing of the judge's environment.
        for entry in (f"PYTHONPATH={SANDBOX_LIB}", "HOME=/tmp", "TMPDIR=/tmp", "LANG=C.UTF-8",
                      "PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1", "JAX_PLATFORMS=cpu",
                      "JAX_PALLAS_VERBOSE_ERRORS=1", "TPU_SKIP_MDS_QUERY=1",
                      "TF_CPP_MIN_LOG_LEVEL=2", f"PALLADIUM_CONTROL_FD={control_fd}"):
            cmd += ["--env", entry]
        cmd += ["--as-mb", str(self.address_space_mb), "--cpu-s", str(self.cpu_seconds),
                "--tmpfs-mb", str(self.tmpfs_mb), "--nofile", "256", "--fsize-mb", "64",
                "--memory-mb", str(self.memory_mb), "--pids", str(self.pids),
                "--keep-fd", str(control_fd)]
        if os.environ.get("PALLADIUM_SANDBOX_CGROUP"):
            cmd += ["--cgroup-parent", os.environ["PALLADIUM_SANDBOX_CGROUP"]]
        cmd += ["--", _python_executable(),
                # -P: no working directory on sys.path. The sandbox's /tmp outlives a spare (the
                # parent forks many), so a module one candidate writes there would otherwise be
                # imported by the next. -s: no user site under HOME=/tmp either.
                "-P", "-s", "-m", RUNNER_PACKAGE]
        return cmd

    def start(self):
        """Starts the sandbox and waits for its warm-spare parent. Raises SandboxUnavailable."""
        if self._proc is not None:
            return
        if not os.access(self.launcher, os.X_OK):
            raise SandboxUnavailable(
                f"the candidate sandbox launcher {self.launcher} is missing; build it with "
                "scripts/build.sh (or point PALLADIUM_SANDBOX at it)")
        judge_end, sandbox_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        fd = sandbox_end.fileno()
        try:
            self._proc = subprocess.Popen(self.command(fd), stdin=subprocess.DEVNULL,
                                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                          pass_fds=(fd,), close_fds=True,
                                          start_new_session=True, env={})
        except OSError as exc:
            raise SandboxUnavailable(f"cannot run {self.launcher}: {exc}") from None
        finally:
            sandbox_end.close()
        self._drain = _OutputDrain(self._proc.stdout, self._log)
        self._control = judge_end
        self._control.settimeout(START_TIMEOUT_S)
        try:
            ready, _ = receive_control(self._control)
            CONTROL.check(ready, "ready")
        except (OSError, ProtocolError) as exc:
            status = self._proc.poll()
            self._kill_sandbox()
            raise SandboxUnavailable(
                f"the candidate sandbox did not start ({type(exc).__name__}: {exc}; launcher "
                f"status {status}); see the judge's log for palladium-sandbox/bwrap's message. "
                "It needs bubblewrap (scripts/setup.sh) and user namespaces") from None
        self._control.settimeout(None)
        self.zygote_pid = ready.get("pid")
        self.cgroup = str(ready.get("cgroup") or "none: the runner did not say")
        self.ids = str(ready.get("ids") or "")
        self.sandboxes_started += 1
        self._log(f"candidate sandbox up (launcher pid {self._proc.pid}, jax "
                  f"{ready.get('jax_version')}, imports {ready.get('import_ms', 0):.0f} ms, "
                  f"cgroup {self.cgroup}, ids {self.ids})")
        if not self.cgroup.startswith(("v1 ", "v2 ")):
            self._log("WARNING: this candidate sandbox has no memory/pids cgroup; one candidate "
                      "can starve the others of threads (RLIMIT_NPROC is per host uid). See "
                      "docs/verification.md 5.2 for what the host must allow")

    def limit_events(self):
        """How often this sandbox hit its pids limit and the OOM killer ran in it (cgroup event
        counters; zeros without a cgroup)."""
        dirs = self.cgroup.split()[1:] if self.cgroup.startswith(("v1 ", "v2 ")) else []
        dirs = [d for d in dirs if d.startswith("/")]
        pids = sum(_counter(os.path.join(d, "pids.events"), "max") for d in dirs)
        oom = sum(_counter(os.path.join(d, "memory.events"), "oom_kill") for d in dirs)
        oom += sum(_counter(os.path.join(d, "memory.oom_control"), "oom_kill") for d in dirs)
        return {"pids_max": pids, "oom_kill": oom}

    def _kill_sandbox(self):
        if self._spare is not None:
            self._spare.stream.close()
            self._spare = None
        if self._proc is not None:
            try:
                os.killpg(self._proc.pid, signal.SIGKILL)
            except OSError:
                pass
            self._proc.kill()
            self._proc.wait()
            if self._drain is not None:
                self._drain.join()  # the launcher's last words (why it failed) reach the log
                self._drain = None
            self._proc.stdout.close()
            self._proc = None
        if self._control is not None:
            self._control.close()
            self._control = None
        self._unanswered_reaps = 0

    def close(self):
        if self._control is not None and self._proc is not None and self._proc.poll() is None:
            try:
                send_control(self._control, CONTROL.message("shutdown"))
                self._proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._kill_sandbox()

    def alive(self):
        return self._proc is not None and self._proc.poll() is None

    # -- spares --------------------------------------------------------------------------------

    def _control_request(self, msg, fds=(), reply="spawned", timeout=30.0):
        self._control.settimeout(timeout)
        try:
            send_control(self._control, msg, fds)
            # The parent answers in order: first the reaps _retire did not wait for.
            while self._unanswered_reaps:
                earlier, _ = receive_control(self._control)
                if earlier is None:
                    break
                CONTROL.check(earlier, "reaped")
                self._unanswered_reaps -= 1
            answer, _ = receive_control(self._control)
        finally:
            if self._control is not None:
                self._control.settimeout(None)
        if answer is None:
            raise ConnectionError("the warm-spare parent closed its control socket")
        answer = CONTROL.check(answer, reply)
        if answer.get("tainted"):
            raise SandboxTainted(f"the warm-spare parent is tainted: "
                                 f"{str(answer['tainted'])[:300]}")
        return answer

    def _fork_spare(self):
        request_r, request_w = os.pipe()
        response_r, response_w = os.pipe()
        try:
            self._serial += 1
            answer = self._control_request(CONTROL.message("spawn", spare=self._serial),
                                           fds=(request_r, response_w))
        finally:
            os.close(request_r)
            os.close(response_w)
        fork_cpu_ms = answer.get("fork_cpu_ms")
        return _Spare(int(answer["pid"]), Stream(response_r, request_w),
                      max(0.0, float(fork_cpu_ms)) if isinstance(fork_cpu_ms, (int, float))
                      else 0.0)

    def prepare(self):
        """Forks the next spare now, so that it warms up while the judge works."""
        if self._spare is None and self.alive():
            try:
                self._spare = self._fork_spare()
            except SandboxTainted as exc:
                self._log(f"{exc}; replacing the candidate sandbox")
                record_anomaly(self.anomaly_log, "tainted", str(exc))
                self._kill_sandbox()
            except (OSError, ProtocolError, ConnectionError) as exc:
                self._log(f"could not fork a spare: {exc}")

    def _take_spare(self, deadline):
        """A spare past its warm-up, or raises ConnectionError (infrastructure)."""
        self.start()
        spare, self._spare = self._spare, None
        if spare is None:
            spare = self._fork_spare()
        ready = spare.stream.read(deadline=min(deadline, time.monotonic() + SPARE_READY_TIMEOUT_S))
        if ready is None:
            status = self.reap(spare)
            raise ConnectionError(f"a spare exited before it was ready ({status})")
        spare.ready = JOB.check(ready, "ready")
        return spare

    def _retire(self, spare):
        """Has the parent kill and reap a spare whose result is in, without waiting for it: its
        exit (tearing down a JAX-sized address space) is then off the judge's path. The answer
        is read before the next control request's."""
        spare.stream.close()
        try:
            send_control(self._control, CONTROL.message("reap", pid=spare.pid))
            self._unanswered_reaps += 1
        except OSError as exc:  # the sandbox is gone; the next start() replaces it
            self._log(f"could not retire spare {spare.pid}: {exc}")

    def reap(self, spare):
        """Kills `spare` if it still runs and returns how it ended (e.g. "signal 11 (SIGSEGV)")."""
        spare.stream.close()
        try:
            answer = self._control_request(CONTROL.message("reap", pid=spare.pid), reply="reaped")
            return str(answer.get("status"))
        except (OSError, ProtocolError, ConnectionError) as exc:
            return f"unknown ({exc})"

    # -- one candidate -------------------------------------------------------------------------

    def run(self, job, deadline):
        """Runs `job` in a fresh spare until its result or `deadline` (time.monotonic())."""
        outcome = CandidateRun(started=time.monotonic())
        for attempt in (1, 2):
            outcome.attempts = attempt
            retry = self._run_once(job, deadline, outcome)
            if not retry:
                break
            self._log(f"retrying the candidate after an infrastructure fault: "
                      f"{outcome.infrastructure or outcome.failure}")
            if attempt == 1:
                outcome.infrastructure, outcome.failure = "", ""
        self.prepare()
        return outcome

    def _run_once(self, job, deadline, outcome):
        """Fills `outcome`; returns True when the fault was not the candidate's (retry)."""
        started, started_wall = time.monotonic(), time.time()
        events = self.limit_events() if self.alive() else None
        retry = self._run_in_spare(job, deadline, outcome)
        if retry:
            return True
        if events is not None and self.cgroup.startswith(("v1 ", "v2 ")):
            after = self.limit_events()
            hit = [k for k in after if after[k] > events.get(k, 0)]
            if hit:
                record_anomaly(self.anomaly_log, "limit", f"{'+'.join(hit)} in {self.cgroup}")
        else:
            hit = []
        if self._thread_failure(outcome, started) and "pids_max" not in hit:
            why = "a thread could not be started (EAGAIN) while this sandbox was under its limit"
            record_anomaly(self.anomaly_log, "thread", why)
            self._kill_sandbox()
            outcome.result, outcome.failure = None, ""
            outcome.infrastructure = why
            return outcome.attempts == 1
        if outcome.timed_out:
            others = others_anomalies(self.anomaly_log, started_wall - ANOMALY_WINDOW_S)
            if others:
                outcome.timed_out = False
                outcome.infrastructure = (f"timed out right after another sandbox's anomaly "
                                          f"({others[-1][:200]})")
        return False

    def _thread_failure(self, outcome, started):
        texts = [outcome.failure]
        if outcome.result is not None and not outcome.result.get("ok"):
            texts += [str(outcome.result.get(k) or "") for k in ("error", "stderr")]
        if outcome.failure and self._drain is not None:
            texts += self._drain.since(started)  # what a spare that died printed
        return any(THREAD_FAILURE.search(t) for t in texts)

    def _run_in_spare(self, job, deadline, outcome):
        try:
            spare = self._take_spare(deadline)
        except TimeoutError:
            outcome.infrastructure = "no spare became ready before the deadline"
            self._kill_sandbox()
            return False
        except (OSError, ProtocolError, ConnectionError, SandboxUnavailable) as exc:
            outcome.infrastructure = f"{type(exc).__name__}: {exc}"
            self._kill_sandbox()
            return True
        outcome.spare_warm_ms = float(spare.ready.get("warm_ms") or 0.0)
        outcome.spare_cpu_ms = float(spare.ready.get("cpu_ms") or 0.0) + spare.fork_cpu_ms
        outcome.stage, outcome.stage_started = "import", time.monotonic()
        try:
            spare.stream.write(job)
        except OSError as exc:
            outcome.infrastructure = f"the spare did not take the job: {exc}"
            self.reap(spare)
            return True
        while True:
            try:
                msg = spare.stream.read(deadline=deadline)
            except TimeoutError:
                outcome.timed_out = True
                self._kill_sandbox()  # the whole namespace: nothing the candidate did survives
                return False
            except ProtocolError as exc:
                outcome.failure = f"the candidate process broke the protocol: {exc}"
                self.reap(spare)
                return False
            if msg is None:
                return self._ended_without_result(spare, outcome)
            if isinstance(msg, dict) and msg.get("type") == "stage" \
                    and isinstance(msg.get("stage"), str):
                outcome.stage, outcome.stage_started = msg["stage"][:40], time.monotonic()
                continue
            try:
                outcome.result = JOB.check(msg, "result")
            except ProtocolError as exc:
                outcome.failure = f"the candidate process broke the protocol: {exc}"
                self.reap(spare)
                return False
            # The next spare is forked first, then this one retired: the parent answers the
            # fork at once and kills and reaps this one while the judge works on the result.
            self.prepare()
            self._retire(spare)
            return False

    def _ended_without_result(self, spare, outcome):
        status = self.reap(spare)
        sandbox_gone = not self.alive() or status.startswith("unknown")
        if sandbox_gone:
            outcome.infrastructure = (f"the candidate sandbox died during the {outcome.stage} "
                                      f"stage ({status})")
            self._kill_sandbox()
            return True
        outcome.failure = f"the candidate process ended without a result ({status})"
        # SIGKILL that the judge did not send: an outside kill or the OOM killer. Retry once.
        return status.startswith("signal 9") and outcome.attempts == 1
