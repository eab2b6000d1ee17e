"""A partitioned agent that rejoins, in a network namespace (ip netns + veth).

The coordinator listens on the host end of a veth pair, over CURVE (not loopback, so the
authenticated link is what is tested). One agent runs on the host side, one inside the network
namespace. Mid-run the namespace's link goes down for longer than the liveness timeout: the
coordinator declares the inside agent dead and requeues its job to the other agent; the inside
agent notices the silence, and once the link is back it reconnects under a new routing id and
says hello again. Its late result (if it finished during the partition) is dropped by its lease.
The run must finish with exactly one evaluation per candidate and one LLM call per candidate.

The agents run the fake judge on candidates that take FAKE_EVAL_MS each (fake_judge_run.py):
what is tested is the link, the coordinator and the agents, and real judges made this a minute
and more of JAX start-up and interpretation (and the corpus's hanging kernel's 60 s timeout).

Needs root (ip netns); skipped otherwise.
"""
import os
import shutil
import subprocess
import time

import pytest

from conftest import (FAULT_RUN_CONFIG, ROOT, assert_each_candidate_evaluated_and_paid_once,
                      db_rows, wait_for_count)
from fake_judge_run import fake_judge_env, sleep_corpus

pytestmark = pytest.mark.integration

# Long enough that the inside agent holds a job when the link goes down and work is left when it
# comes back (the 8 candidates are two chains of 4: about 4 x FAKE_EVAL_MS on two agents).
FAKE_EVAL_MS = 3000


def sh(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True)


@pytest.fixture
def netns():
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("needs root and iproute2 for a network namespace")
    tag = f"pd{os.getpid() % 100000}"
    ns, host_if, ns_if = f"{tag}ns", f"{tag}h", f"{tag}n"
    octet = 10 + os.getpid() % 200
    host_ip, ns_ip = f"10.213.{octet}.1", f"10.213.{octet}.2"
    try:
        sh("ip", "netns", "add", ns)
    except subprocess.CalledProcessError as e:
        pytest.skip(f"cannot make a network namespace here: {e.stderr.strip()}")
    try:
        sh("ip", "link", "add", host_if, "type", "veth", "peer", "name", ns_if)
        sh("ip", "link", "set", ns_if, "netns", ns)
        sh("ip", "addr", "add", f"{host_ip}/24", "dev", host_if)
        sh("ip", "link", "set", host_if, "up")
        sh("ip", "netns", "exec", ns, "ip", "addr", "add", f"{ns_ip}/24", "dev", ns_if)
        sh("ip", "netns", "exec", ns, "ip", "link", "set", ns_if, "up")
        sh("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
        yield {"ns": ns, "ns_if": ns_if, "host_ip": host_ip}
    finally:
        subprocess.run(["ip", "link", "del", host_if], capture_output=True)
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_partitioned_agent_rejoins_and_nothing_is_evaluated_twice(palladium_bin, tmp_path, netns):
    keys = tmp_path / "keys"
    allow = keys / "agents"
    for name, where in (("coordinator", keys), ("inside", allow), ("outside", allow)):
        sh(str(palladium_bin), "keys", "new", name, "--dir", str(where))
    # The agents' secrets must not sit in the allowlist directory.
    secrets = tmp_path / "secrets"
    secrets.mkdir(mode=0o700)
    for name in ("inside", "outside"):
        (allow / f"{name}.key_secret").rename(secrets / f"{name}.key_secret")
    config = tmp_path / "partition.yaml"
    corpus = sleep_corpus(tmp_path, ["8p", "41k"], 4, FAKE_EVAL_MS)
    config.write_text(FAULT_RUN_CONFIG.format(name="partition", local=0, corpus=corpus,
                                              listen=f"tcp://{netns['host_ip']}:0"))
    env = fake_judge_env(tmp_path)
    db = tmp_path / "p.db"
    coord_log = open(tmp_path / "coordinator.log", "w")
    coordinator = subprocess.Popen(
        [str(palladium_bin), "run", str(config), "--db", str(db), "--no-progress", "--no-report",
         "--server-key", str(keys / "coordinator.key_secret"), "--allow", str(allow)],
        stdout=subprocess.DEVNULL, stderr=coord_log, cwd=ROOT)
    agents = []
    try:
        endpoint = None
        deadline = time.monotonic() + 60
        while endpoint is None and time.monotonic() < deadline:
            for line in (tmp_path / "coordinator.log").read_text().splitlines():
                if "agents connect to tcp://" in line:
                    endpoint = line.split("agents connect to ")[1].split()[0]
            time.sleep(0.2)
        assert endpoint and endpoint.startswith(f"tcp://{netns['host_ip']}:"), endpoint

        def agent(name, prefix):
            log = open(tmp_path / f"{name}.log", "w")
            cmd = prefix + [str(palladium_bin), "agent", "--connect", endpoint, "--server-key",
                            str(keys / "coordinator.key"), "--key",
                            str(secrets / f"{name}.key_secret"), "--agent-id", name,
                            "--heartbeat-ms", "200", "--liveness", "4",
                            "--log-dir", str(tmp_path / f"{name}-logs")]
            agents.append(subprocess.Popen(cmd, stdout=log, stderr=log, cwd=ROOT, env=env))

        agent("inside", ["ip", "netns", "exec", netns["ns"]])
        agent("outside", [])
        wait_for_count(db, "evaluations", 1, timeout=300, poll=0.3)
        # The cut must fall after the inside agent has joined: on a loaded machine its judges
        # can still be starting when the outside agent's first result is stored.
        deadline = time.monotonic() + 300
        while ("agent inside (" not in (tmp_path / "coordinator.log").read_text()
               and time.monotonic() < deadline):
            time.sleep(0.2)
        assert "agent inside (" in (tmp_path / "coordinator.log").read_text()
        # Cut the inside agent off for 5 s: far beyond liveness (4 x 200 ms) on both sides.
        sh("ip", "netns", "exec", netns["ns"], "ip", "link", "set", netns["ns_if"], "down")
        time.sleep(5)
        sh("ip", "netns", "exec", netns["ns"], "ip", "link", "set", netns["ns_if"], "up")
        assert coordinator.wait(timeout=600) == 0, (tmp_path / "coordinator.log").read_text()[-4000:]
    finally:
        for p in agents:
            p.terminate()
        for p in agents:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        if coordinator.poll() is None:
            coordinator.kill()
            coordinator.wait()
    coord = (tmp_path / "coordinator.log").read_text()
    inside = (tmp_path / "inside.log").read_text()
    assert "agent inside" in coord and "went silent" in coord, coord[-3000:]
    assert inside.count("connecting to") >= 2, "the inside agent reconnected:\n" + inside[-3000:]
    assert coord.count("agent inside (") >= 2, "and joined again:\n" + coord[-3000:]
    assert_each_candidate_evaluated_and_paid_once(db, candidates=8)
    attempts = [a for (a,) in db_rows(db, "SELECT attempts FROM evaluations")]
    if "job(s) requeued" in coord:
        # The inside agent held a lease when the link went down (the usual case).
        assert max(attempts) >= 2, f"the requeued job's dispatches are recorded: {attempts}"
