"""The judge's side of the candidate sandbox: one sandbox, its warm-spare parent and its spares.

    pool = CandidatePool(); pool.start()          # raises SandboxUnavailable with the reason
    run = pool.run(job, deadline)                 # one candidate in a fresh spare
    run.result / run.failure / run.timed_out ...  # what happened (CandidateRun)
    pool.close()

The sandbox is `palladium-sandbox` (sandbox/palladium_sandbox_main.cpp: bubblewrap + the
seccomp stages, as an unprivileged uid) running `python -m palladium_candidate` (the warm-spare
parent, sandbox/candidate/zygote.py), which sees read-only only the Python installation, the
venv and the candidate runner, and nothing of the repository, the agent or the run database.
Every candidate runs in its own spare, forked from that parent and never reused; one spare is
kept warm (forked and past its backend warm-up) while the previous candidate is judged.

Faults are sorted, because an infrastructure fault must never be charged to the candidate:
  * the sandbox or a spare failing before the job is handed over, or the sandbox dying with the
    spare (killed from outside): `infrastructure`, and run() retries once in a fresh sandbox;
  * a spare SIGKILLed by someone else mid-job (an outside kill, or the kernel's OOM killer):
    retried once in a fresh spare; the second time it is the candidate's `crash`;
  * any other death mid-job (a signal, an exit without a result) is the candidate's `crash`;
  * no result before the deadline: the whole sandbox namespace is killed (nothing the candidate
    did can survive it) and the run is `timed_out`; the next run starts a fresh sandbox.
Thread safety: none; one judge thread owns a pool.
"""
import dataclasses
import os
import pathlib
import resource
import signal
import socket
import subprocess
import sys
import time

from sandbox.candidate.protocol import (ProtocolError, Stream, check, message,
                                          receive_control, send_control)

REPO = pathlib.Path(__file__).resolve().parents[1]
RUNNER_DIR = REPO / "sandbox" / "candidate"
RUNNER_PACKAGE = "palladium_candidate"
SANDBOX_LIB = "/palladium/lib"
START_TIMEOUT_S = 180.0
SPARE_READY_TIMEOUT_S = 120.0


class SandboxUnavailable(Exception):
    """The candidate sandbox cannot be started here; the message says why and what to do."""


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
    """Directories the interpreter needs, none of them inside the repository."""
    prefix = os.path.realpath(sys.prefix)
    paths = {prefix, os.path.realpath(sys.base_prefix)}
    for entry in sys.path:
        real = os.path.realpath(entry) if entry else ""
        if real and os.path.isdir(real) and not real.startswith(str(REPO) + os.sep) \
                and real != str(REPO):
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
                 log=None):
        self.launcher = launcher or launcher_path()
        self.address_space_mb = address_space_mb or default_address_space_mb()
        self.cpu_seconds = cpu_seconds
        self.tmpfs_mb = tmpfs_mb
        self._log = log or (lambda text: print(f"[judge {os.getpid()}] {text}", file=sys.stderr,
                                               flush=True))
        self._proc = None
        self._control = None
        self._spare = None
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
        cmd += ["--ro-at", str(RUNNER_DIR), f"{SANDBOX_LIB}/{RUNNER_PACKAGE}"]
        # An allowlist: the sandbox gets exactly these, nothing of the judge's environment.
        for entry in (f"PYTHONPATH={SANDBOX_LIB}", "HOME=/tmp", "TMPDIR=/tmp", "LANG=C.UTF-8",
                      "PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1", "JAX_PLATFORMS=cpu",
                      "JAX_PALLAS_VERBOSE_ERRORS=1", "TPU_SKIP_MDS_QUERY=1",
                      "TF_CPP_MIN_LOG_LEVEL=2", f"PALLADIUM_CONTROL_FD={control_fd}"):
            cmd += ["--env", entry]
        cmd += ["--as-mb", str(self.address_space_mb), "--cpu-s", str(self.cpu_seconds),
                "--tmpfs-mb", str(self.tmpfs_mb), "--nofile", "256", "--fsize-mb", "64",
                "--keep-fd", str(control_fd), "--", _python_executable(),
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
                                          pass_fds=(fd,), close_fds=True,
                                          start_new_session=True, env={})
        except OSError as exc:
            raise SandboxUnavailable(f"cannot run {self.launcher}: {exc}") from None
        finally:
            sandbox_end.close()
        self._control = judge_end
        self._control.settimeout(START_TIMEOUT_S)
        try:
            ready, _ = receive_control(self._control)
            check(ready, "ready")
        except (OSError, ProtocolError) as exc:
            status = self._proc.poll()
            self._kill_sandbox()
            raise SandboxUnavailable(
                f"the candidate sandbox did not start ({type(exc).__name__}: {exc}; launcher "
                f"status {status}); see the judge's log for palladium-sandbox/bwrap's message. "
                "It needs bubblewrap (scripts/setup.sh) and user namespaces") from None
        self._control.settimeout(None)
        self.zygote_pid = ready.get("pid")
        self.sandboxes_started += 1
        self._log(f"candidate sandbox up (launcher pid {self._proc.pid}, jax "
                  f"{ready.get('jax_version')}, imports {ready.get('import_ms', 0):.0f} ms)")

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
            self._proc = None
        if self._control is not None:
            self._control.close()
            self._control = None
        self._unanswered_reaps = 0

    def close(self):
        if self._control is not None and self._proc is not None and self._proc.poll() is None:
            try:
                send_control(self._control, message("shutdown"))
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
                check(earlier, "reaped")
                self._unanswered_reaps -= 1
            answer, _ = receive_control(self._control)
        finally:
            if self._control is not None:
                self._control.settimeout(None)
        if answer is None:
            raise ConnectionError("the warm-spare parent closed its control socket")
        return check(answer, reply)

    def _fork_spare(self):
        request_r, request_w = os.pipe()
        response_r, response_w = os.pipe()
        try:
            self._serial += 1
            answer = self._control_request(message("spawn", spare=self._serial),
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
        spare.ready = check(ready, "ready")
        return spare

    def _retire(self, spare):
        """Has the parent kill and reap a spare whose result is in, without waiting for it: its
        exit (tearing down a JAX-sized address space) is then off the judge's path. The answer
        is read before the next control request's."""
        spare.stream.close()
        try:
            send_control(self._control, message("reap", pid=spare.pid))
            self._unanswered_reaps += 1
        except OSError as exc:  # the sandbox is gone; the next start() replaces it
            self._log(f"could not retire spare {spare.pid}: {exc}")

    def reap(self, spare):
        """Kills `spare` if it still runs and returns how it ended (e.g. "signal 11 (SIGSEGV)")."""
        spare.stream.close()
        try:
            answer = self._control_request(message("reap", pid=spare.pid), reply="reaped")
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
                outcome.result = check(msg, "result")
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
