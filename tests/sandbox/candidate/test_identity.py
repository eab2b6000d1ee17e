"""The warm-spare parent and its spares run as different uids (sandbox/candidate/identity.py,
sandbox/sandbox_userns.hpp): run for real in palladium-sandbox, with a probe that plays the
parent and forks one spare the way zygote.py does, but loads no candidate seccomp stage, so
every refusal it sees is the kernel's uid check, not a filter's."""
import json
import os
import pathlib
import shutil
import subprocess
import tempfile

import pytest

from judge.candidate_pool import RUNNER_DIR, RUNNER_PACKAGE, launcher_path
from sandbox.candidate import identity

PROBE = r'''
import errno, json, os, resource, signal, sys, time
from palladium_candidate import identity, scratch

spare = identity.spare_id()
report = {"ids": identity.describe(), "spare_id": spare,
          "parent": [os.getresuid(), os.getresgid()], "parent_caps": identity.capabilities()}
with open("/tmp/parent-file", "w") as handle:
    handle.write("the parent's")
os.mkdir("/tmp/parent-dir", 0o755)
workdir = scratch.spare_directory(1, spare)
report["workdir_owner"] = os.stat(workdir).st_uid
parent_uid = os.getuid()
read, write = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(read)
    out = {}
    try:
        if spare is not None:
            identity.become_spare(spare)
        out["ids"] = [os.getresuid(), os.getresgid(), os.getgroups()]
        out["caps"] = identity.capabilities()
        parent = os.getppid()
        def attempt(name, call):
            try:
                call()
                out[name] = "allowed"
            except OSError as exc:
                out[name] = errno.errorcode[exc.errno]
        attempt("kill", lambda: os.kill(parent, 0))
        attempt("setpriority", lambda: os.setpriority(os.PRIO_PROCESS, parent, 19))
        attempt("prlimit", lambda: resource.prlimit(parent, resource.RLIMIT_NOFILE))
        attempt("environ", lambda: open(f"/proc/{parent}/environ", "rb").read())
        attempt("append", lambda: open("/tmp/parent-file", "a").write("x"))
        attempt("unlink", lambda: os.unlink("/tmp/parent-file"))
        attempt("rename", lambda: os.rename("/tmp/parent-file", "/tmp/mine"))
        attempt("create", lambda: open("/tmp/parent-dir/planted", "w").close())
        attempt("chmod", lambda: os.chmod("/tmp", 0o777))
        attempt("setuid", lambda: os.setresuid(parent_uid, parent_uid, parent_uid))
        # Its own work, locked the way a hostile candidate would, for the parent's wipe.
        os.makedirs(workdir + "/deep/er")
        open(workdir + "/deep/er/f", "w").close()
        os.chmod(workdir + "/deep/er", 0)
        os.chmod(workdir + "/deep", 0)
        open("/tmp/stray", "w").close()
        out["worked"] = True
    except BaseException as exc:
        out["error"] = repr(exc)
    os.write(write, json.dumps(out).encode())
    os._exit(0)
os.close(write)
chunks = []
while chunk := os.read(read, 65536):
    chunks.append(chunk)
report["spare"] = json.loads(b"".join(chunks))
os.waitpid(pid, 0)
# The parent can still end a spare of the other uid.
pid = os.fork()
if pid == 0:
    if spare is not None:
        identity.become_spare(spare)
    time.sleep(60)
    os._exit(0)
time.sleep(0.2)
identity.kill_spare(pid, signal.SIGKILL, spare)
report["killed"] = os.WIFSIGNALED(os.waitpid(pid, 0)[1])
report["left"] = scratch.wipe_as(spare)
report["tmp"] = sorted(os.listdir("/tmp"))
print(json.dumps(report))
'''


def run_probe(directory, prefix=()):
    """Runs PROBE in palladium-sandbox, launched through `prefix` (e.g. setpriv to drop root)."""
    launcher = launcher_path()
    if not os.access(launcher, os.X_OK):
        pytest.skip(f"{launcher} is not built")
    (directory / "probe.py").write_text(PROBE)
    os.chmod(directory, 0o755)
    os.chmod(directory / "probe.py", 0o644)
    done = subprocess.run(
        [*prefix, launcher, "--ro-at", str(directory), "/probe",
         "--ro-at", str(RUNNER_DIR), f"/palladium/lib/{RUNNER_PACKAGE}",
         "--env", "PYTHONPATH=/palladium/lib", "--env", "PYTHONDONTWRITEBYTECODE=1",
         "--", "/usr/bin/python3", "/probe/probe.py"],
        capture_output=True, text=True, timeout=60, env={})
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    return run_probe(tmp_path_factory.mktemp("identity"))


@pytest.fixture(scope="module")
def probe_without_root():
    """The launcher as an agent that is not root runs it. On a root host, setpriv drops to
    65534 first (in a directory that uid can reach: pytest's own tmp is root's alone)."""
    if os.geteuid() != 0:
        with tempfile.TemporaryDirectory() as directory:
            yield run_probe(pathlib.Path(directory))
        return
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed")
    with tempfile.TemporaryDirectory(dir="/tmp") as directory:
        yield run_probe(pathlib.Path(directory),
                        ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"))


def test_without_root_there_is_one_uid_and_the_launcher_says_why(probe_without_root):
    report, stderr = probe_without_root
    assert report["spare_id"] is None
    assert report["ids"].startswith("one uid 65534: the launcher is not root"), report["ids"]
    assert "WARNING: the warm-spare parent and its spares share one uid" in stderr
    # One uid, no capability at all, and /tmp still emptied after the spare.
    assert report["parent"] == [[65534] * 3, [65534] * 3]
    assert report["spare"]["ids"] == [[65534] * 3, [65534] * 3, []]
    assert report["parent_caps"]["CapEff"] == 0 and report["spare"]["caps"]["CapEff"] == 0
    assert report["killed"] and report["left"] == "" and report["tmp"] == [], report


@pytest.fixture()
def split(probe):
    report, _ = probe
    if os.geteuid() != 0:
        pytest.skip("only a root launcher can map a second uid")
    assert report["ids"] == "split: parent 65534, spares 65533 (uid and gid)"
    assert "error" not in report["spare"], report["spare"]
    return report


def test_the_spare_is_another_uid_without_any_capability(split):
    assert split["parent"] == [[65534] * 3, [65534] * 3]
    # The parent holds exactly CAP_SETUID and CAP_SETGID (bits 7 and 6), in its namespace.
    assert split["parent_caps"]["CapEff"] == (1 << 7) | (1 << 6)
    assert split["spare"]["ids"] == [[65533] * 3, [65533] * 3, []]
    caps = split["spare"]["caps"]
    assert (caps["CapEff"], caps["CapPrm"], caps["CapInh"], caps["CapAmb"]) == (0, 0, 0, 0), caps
    assert caps["NoNewPrivs"] == 1
    assert split["workdir_owner"] == 65533


def test_the_kernel_refuses_the_spare_what_it_would_do_to_its_parent(split):
    spare = split["spare"]
    for name in ("kill", "setpriority", "prlimit", "setuid"):
        assert spare[name] == "EPERM", (name, spare)
    assert spare["environ"] == "EACCES", spare


def test_the_spare_cannot_write_what_the_parent_owns(split):
    spare = split["spare"]
    assert spare["append"] == "EACCES" and spare["create"] == "EACCES", spare
    # /tmp is sticky: the spare's files may go there, the parent's stay the parent's.
    assert spare["unlink"] == "EPERM" and spare["rename"] == "EPERM", spare
    assert spare["chmod"] == "EPERM", spare
    assert spare["worked"] is True


def test_the_parent_ends_a_spare_and_empties_tmp_without_further_capabilities(split):
    assert split["killed"] is True
    assert split["left"] == ""
    assert split["tmp"] == [], split["tmp"]


def test_a_spare_id_that_is_not_a_nonzero_uid_is_refused():
    assert identity.spare_id({}) is None
    assert identity.spare_id({identity.SPARE_ENV: "65533"}) == 65533
    for bad in ("0", "-1", "nobody"):
        with pytest.raises(RuntimeError, match=identity.SPARE_ENV):
            identity.spare_id({identity.SPARE_ENV: bad})
