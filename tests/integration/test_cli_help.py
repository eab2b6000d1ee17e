"""Issue 24's terminal items that a user meets first: every `--help` answers with exit 0,
`--version` exists, and no start prints CAF's `logger.console.verbosity: invalid name`."""
import re
import subprocess

import pytest

from conftest import ROOT

pytestmark = pytest.mark.integration


def palladium(palladium_bin, *args, timeout=60):
    return subprocess.run([str(palladium_bin), *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout)


def commands(palladium_bin):
    """The commands the usage text lists, with their sub-commands where they have them."""
    usage = palladium(palladium_bin, "--help").stdout
    names = sorted(set(re.findall(r"^  ([a-z][a-z-]*) ", usage, flags=re.M)))
    assert {"run", "sweep", "report", "status", "serve", "bench", "keys"} <= set(names), usage
    return names


def test_every_help_exits_0_and_prints_to_stdout(palladium_bin):
    asked = [[c, "--help"] for c in commands(palladium_bin)]
    asked += [["bench", "dispatch", "--help"], ["bench", "store", "--help"],
              ["bench", "llm", "--help"], ["keys", "new", "--help"], ["keys", "public", "--help"], ["--help"], ["-h"]]
    for args in asked:
        out = palladium(palladium_bin, *args)
        assert out.returncode == 0, (args, out.returncode, out.stderr)
        assert out.stdout.strip(), (args, "the help goes to stdout")


def test_the_tpu_launcher_help_exits_0():
    out = subprocess.run(["bash", str(ROOT / "scripts" / "launch_tpu_agents.sh"), "--help"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and "start" in out.stdout, out.stderr
    assert subprocess.run(["bash", str(ROOT / "scripts" / "launch_tpu_agents.sh")],
                          capture_output=True, timeout=30).returncode == 2


def test_version(palladium_bin):
    out = palladium(palladium_bin, "--version")
    assert out.returncode == 0 and re.fullmatch(r"palladium \d+\.\d+\.\d+\n", out.stdout), out


def test_a_start_prints_no_caf_warning(palladium_bin, tmp_path):
    # `bench store` starts an actor system the way run and sweep do, in seconds.
    out = palladium(palladium_bin, "bench", "store", "--help")
    assert "invalid name" not in out.stderr
    config = tmp_path / "c.yaml"
    config.write_text("name: caf\nworkloads: [12p]\nbudget_per_workload: 1\n"
                      "llm: {provider: synthetic}\nagents: {local: 0}\n")
    # No agents and nobody to connect: the coordinator starts, then is told to stop.
    proc = subprocess.Popen([str(palladium_bin), "run", str(config), "--db", str(tmp_path / "c.db"),
                             "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.terminate()
    _, err = proc.communicate(timeout=60)
    assert "[palladium] run 1" in err, err
    assert "invalid name" not in err and "verbosity" not in err, err
