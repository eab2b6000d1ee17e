"""scripts/launch_tpu_agents.sh against a fake `gcloud` on PATH.

The fake plays `gcloud compute tpus tpu-vm ssh|scp` for VMs that are directories on this machine
(each VM's home is <tmp>/vms/<name>): ssh runs the command with that HOME, scp copies into it.
The agents it starts are real `palladium agent` processes (interpret backend), and they must
join a real coordinator (`palladium bench dispatch --external`) over CURVE with the keys the
script made, then leave on `stop`.
"""
import os
import re
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = pytest.mark.integration

SCRIPT = ROOT / "scripts" / "launch_tpu_agents.sh"

FAKE_GCLOUD = r'''#!/usr/bin/env python3
import os, shutil, subprocess, sys
args = sys.argv[1:]
with open(os.environ["FAKE_GCLOUD_LOG"], "a") as log:
    log.write(" ".join(args) + "\n")
assert args[:3] == ["compute", "tpus", "tpu-vm"], args
verb, rest = args[3], args[4:]
vms = os.environ["FAKE_VMS"]
def opt(name):
    for i, a in enumerate(rest):
        if a == name: return rest[i + 1]
        if a.startswith(name + "="): return a.split("=", 1)[1]
    return None
assert opt("--zone") == "test-zone-a", rest
if verb == "ssh":
    home = os.path.join(vms, rest[0])
    os.makedirs(home, exist_ok=True)
    env = dict(os.environ, HOME=home)
    sys.exit(subprocess.call(["bash", "-c", opt("--command")], env=env, cwd=home))
if verb == "scp":
    plain = [a for a in rest if not a.startswith("--") and a != opt("--zone")]
    *sources, dest = plain
    vm, path = dest.split(":", 1)
    target = os.path.join(vms, vm, path)
    for s in sources:
        shutil.copy(s, target)
    sys.exit(0)
sys.exit("fake gcloud: unsupported " + verb)
'''


def test_start_joins_the_coordinator_with_fresh_keys_and_stop_says_bye(palladium_bin, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "gcloud"
    fake.write_text(FAKE_GCLOUD)
    fake.chmod(0o755)
    keys = tmp_path / "keys"
    allow = keys / "agents"
    allow.mkdir(parents=True)
    subprocess.run([str(palladium_bin), "keys", "new", "coordinator", "--dir", str(keys)],
                   check=True, capture_output=True)
    log = tmp_path / "gcloud.log"
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", FAKE_GCLOUD_LOG=str(log),
               FAKE_VMS=str(tmp_path / "vms"), PALLADIUM_HOME=str(ROOT))
    coordinator = subprocess.Popen(
        [str(palladium_bin), "bench", "dispatch", "--external", "--agents", "2", "--eval-ms",
         "0", "--seconds", "2", "--warmup", "1", "--server-key",
         str(keys / "coordinator.key_secret"), "--allow", str(allow), "--listen",
         "tcp://127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        endpoint = None
        deadline = time.monotonic() + 60
        while endpoint is None and time.monotonic() < deadline:
            line = coordinator.stderr.readline()
            m = re.search(r"agents at (tcp://\S+)", line)
            if m:
                endpoint = m.group(1)
        assert endpoint, "the coordinator never said where it listens"
        start = subprocess.run(
            ["bash", str(SCRIPT), "start", "--coordinator", endpoint, "--server-key",
             str(keys / "coordinator.key"), "--allow", str(allow), "--zone", "test-zone-a",
             "--backend", "interpret", "--slots", "1", "--palladium", str(palladium_bin),
             "tpu-a", "tpu-b"],
            env=env, capture_output=True, text=True, timeout=120)
        assert start.returncode == 0, start.stderr
        for vm in ("tpu-a", "tpu-b"):
            home = tmp_path / "vms" / vm / ".palladium"
            secret = home / "agent.key_secret"
            assert stat.S_IMODE(secret.stat().st_mode) == 0o600
            assert stat.S_IMODE(home.stat().st_mode) == 0o700
            assert (allow / f"{vm}.key").exists(), "the public key joined the allowlist"
            assert "secret-key" not in (allow / f"{vm}.key").read_text()
            assert "secret-key" not in (home / "coordinator.key").read_text(), \
                "the coordinator's secret never leaves it"
        # No secret is left behind on the launching machine outside the VMs.
        assert not list(allow.glob("*.key_secret"))
        out, err = coordinator.communicate(timeout=300)
        assert coordinator.returncode == 0, err[-3000:]
        rows = [l for l in out.splitlines() if l.strip() and not l.lstrip().startswith("agents")]
        assert rows and rows[-1].split()[0] == "2", out
        calls = log.read_text()
        assert "compute tpus tpu-vm ssh tpu-a" in calls and "compute tpus tpu-vm scp" in calls
    finally:
        if coordinator.poll() is None:
            coordinator.kill()
            coordinator.wait()
        stop = subprocess.run(
            ["bash", str(SCRIPT), "stop", "--zone", "test-zone-a", "tpu-a", "tpu-b"],
            env=env, capture_output=True, text=True, timeout=120)
    assert stop.returncode == 0, stop.stderr
    for vm in ("tpu-a", "tpu-b"):
        assert not (tmp_path / "vms" / vm / ".palladium" / "agent.pid").exists()
        agent_log = (tmp_path / "vms" / vm / ".palladium" / "agent.log").read_text()
        assert "CURVE" in agent_log, agent_log[-2000:]
        assert "stopping (signal 15" in agent_log, agent_log[-2000:]


def test_bad_arguments_are_named(tmp_path):
    r = subprocess.run(["bash", str(SCRIPT), "start", "--zone", "z", "Bad_Name"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "not a TPU VM name" in r.stderr
    r = subprocess.run(["bash", str(SCRIPT), "start", "--zone", "z", "vm"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "--coordinator" in r.stderr
    secret = tmp_path / "c.key_secret"
    secret.write_text('curve\n    public-key = "x"\n    secret-key = "y"\n')
    r = subprocess.run(["bash", str(SCRIPT), "start", "--zone", "z", "--coordinator",
                        "tcp://h:1", "--server-key", str(secret), "--allow", str(tmp_path), "vm"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "holds a secret key" in r.stderr
