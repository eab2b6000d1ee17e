"""The threat model of docs/verification.md, one test per attack class: no hostile candidate gets
`correct`, and nothing it does leaves a trace outside its sandbox (no file, process, connection,
read of a secret or of the database) or reaches a later candidate.

Every candidate here runs for real: in a spare of the candidate sandbox (bubblewrap + seccomp,
uid 65534), judged by an in-process Evaluator. Kernels: hostile_kernels.py.
"""
import os
import socket
import sqlite3
import threading
import time

import pytest

import hostile_kernels as h
import judge_kernels as k
from judge import evaluate as judge
from judge import structure
from judge.candidate_pool import CandidatePool


def run(code, **kwargs):
    return judge.evaluate("8p", code, **kwargs)


def _parent(pid):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def _descends_from_this_test(pid):
    # Other test workers and other users of this host run sandboxes too: count only ours.
    while pid > 1:
        if pid == os.getpid():
            return True
        pid = _parent(pid)
    return False


def sandbox_processes():
    """pids of this test process's descendants running as the sandbox uid."""
    pids = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if (os.stat(f"/proc/{name}").st_uid == 65534
                        and _descends_from_this_test(int(name))):
                    pids.append(int(name))
            except (OSError, ValueError, IndexError):
                pass  # it ended while we looked
    return sorted(pids)


def assert_killed_by_the_sandbox(result):
    assert (result["verdict"], result["stage"]) == ("crash", "import"), result
    assert "SIGSYS" in result["error"], result["error"]


def test_a_forged_result_frame_is_not_a_verdict():
    result = run(h.FORGED_RESULT)
    assert result["verdict"] in ("runtime_error", "crash"), result
    assert result["kernel_ms"] is None and result["timing_kind"] is None


def test_patching_the_judge_changes_nothing_and_nothing_persists():
    result = run(h.PATCHES_THE_JUDGE)
    assert result["verdict"] == "numerics_mismatch", result
    # The next candidate, honest but wrong, is judged by an untouched judge in a fresh process.
    after = run(k.NUMERICS_MISMATCH)
    assert after["verdict"] == "numerics_mismatch", after
    assert after["max_abs_err"] > 0.01


def test_the_references_are_not_in_the_candidate_process():
    result = run(h.STEALS_THE_REFERENCE)
    assert "stolen 0" in result["stdout"], result["stdout"]
    assert result["verdict"] == "numerics_mismatch", result


def test_the_judge_times_the_artifact_not_the_candidate_clock():
    result = run(h.PATCHES_THE_CLOCK)
    assert result["verdict"] == "correct", result["error"]
    # A 1000x slower clock in the candidate would have made it look 1000x faster.
    assert result["kernel_ms"] > 0.05 * result["baseline_ms"], result


def test_a_cpu_branch_the_candidate_built_is_never_timed(monkeypatch):
    # The same honest kernel twice, once with its CPU branch swapped for XLA's GEMM by patching
    # JAX's HLO interpreter in the candidate's process. Timing that branch made such a kernel
    # 6-8x "faster"; the judge times its own interpretation of the Mosaic body, which the
    # patch cannot reach, so both score alike (within a shared host's noise: the users' full
    # sitting, not the suite's one pair).
    monkeypatch.setattr(judge.shared_evaluator(), "timing_runs", judge.CPU_TIMING_RUNS)
    honest = run(h.HONEST_GEMM_IN_LARGE_BLOCKS)
    patched = run(h.FAST_CPU_BRANCH_BESIDE_AN_HONEST_KERNEL)
    for result in (honest, patched):
        assert result["verdict"] == "correct", result["error"]
        assert result["timing"]["program"] == "judge-interpretation", result["timing"]
        assert result["timing_kind"] == "cpu-wall" and result["kernel_ms"] > 0, result["timing"]
    speedup = [r["baseline_ms"] / r["kernel_ms"] for r in (honest, patched)]
    assert speedup[1] < 2.5 * speedup[0], (speedup, honest["timing"], patched["timing"])


def test_fork_exec_without_an_audit_event_kills_the_candidate(tmp_path):
    marker = tmp_path / "escaped"
    result = run(h.fork_exec(str(marker)))
    assert_killed_by_the_sandbox(result)
    time.sleep(0.5)
    assert not marker.exists()


def test_with_the_audit_hook_off_fork_still_fails_and_no_process_survives():
    before = sandbox_processes()
    result = run(h.FORK_WITHOUT_THE_HOOK)
    assert_killed_by_the_sandbox(result)
    assert len(sandbox_processes()) <= len(before) + 1  # at most the next warm spare


def test_the_run_database_is_out_of_sight(tmp_path):
    db_path = tmp_path / "run.db"
    db = sqlite3.connect(db_path)
    db.execute("CREATE TABLE evaluations (verdict TEXT)")
    db.execute("INSERT INTO evaluations VALUES ('numerics_mismatch')")
    db.commit()
    result = run(h.rewrites_the_database(str(db_path)))
    assert result["verdict"] != "correct"
    assert "databases found: []" in result["stdout"], result["stdout"]
    assert "rewrote" not in result["stdout"]
    assert db.execute("SELECT verdict FROM evaluations").fetchall() == [("numerics_mismatch",)]


def test_no_connection_reaches_the_host():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.2)
    accepted, done = [], threading.Event()

    def accept():
        while not done.is_set() and not accepted:
            try:
                accepted.append(server.accept())
            except socket.timeout:
                pass
    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    result = run(h.connects(server.getsockname()[1]))
    done.set()
    thread.join(5)
    server.close()
    assert_killed_by_the_sandbox(result)
    assert accepted == []


def test_no_secret_of_the_judge_or_the_agent_is_readable(monkeypatch):
    secret = "sk-palladium-test-0123456789abcdef"
    monkeypatch.setenv("PALLADIUM_TEST_API_KEY", secret)
    monkeypatch.setenv("INNOCENT_LOOKING", secret)  # no name rule helps: the env is an allowlist
    evaluator = judge.Evaluator(pool=CandidatePool())  # its sandbox starts with the secret set
    try:
        result = evaluator.evaluate("8p", h.READS_SECRETS)
    finally:
        evaluator.close()
    out = result["stdout"]
    assert "ENV" in out and "PROC" in out, result
    assert secret not in out
    # Only the sandbox's own processes are visible, and nothing of the judge's command line.
    assert "pytest" not in out and "judge" not in out
    assert result["verdict"] != "correct"


def test_nothing_the_candidate_started_outlives_its_evaluation():
    before = sandbox_processes()
    result = run(h.OUTLIVES_ITS_EVALUATION)
    assert result["verdict"] == "correct", result["error"]  # the kernel itself is right
    time.sleep(0.5)
    after = sandbox_processes()
    assert len(after) <= len(before) + 1, (before, after)  # only the next warm spare is new


def test_no_file_is_written_outside(tmp_path):
    target = tmp_path / "escaped.npy"
    result = run(h.writes_outside(str(target)))
    assert result["verdict"] != "correct"
    assert not target.exists()


def test_a_module_planted_in_the_sandbox_does_not_reach_the_next_candidate():
    planter = run(h.PLANTS_A_MODULE)
    assert planter["verdict"] == "numerics_mismatch", planter
    assert "/tmp/palladium_planted.py" in planter["stdout"], planter["stdout"]  # /tmp is writable
    after = run(h.IMPORTS_THE_PLANT)  # the same sandbox: its /tmp still holds the plant
    assert "PLANT RAN" not in after["stdout"] and "no plant:" in after["stdout"], after["stdout"]
    assert after["verdict"] == "correct", after["error"]


def test_the_project_modules_cannot_be_imported():
    linted = run(h.IMPORTS_THE_WORKLOAD)
    assert linted["verdict"] == "lint_rejected", linted
    assert "Palladium's own modules" in linted["error"]
    bypass = run(h.IMPORTS_THE_WORKLOAD_PAST_LINT)
    assert (bypass["verdict"], bypass["stage"]) == ("import_error", "import"), bypass
    assert "may not import Palladium's own modules" in bypass["error"]
    schema = run(h.IMPORTS_THE_PIPE_SCHEMA_PAST_LINT)
    assert (schema["verdict"], schema["stage"]) == ("import_error", "import"), schema
    assert "No module named 'palladium_pipe_schema': a kernel module may not import Palladium's" \
        in schema["error"], schema["error"]


@pytest.mark.parametrize("name,kind", [("XLA_BESIDE_A_COPY_KERNEL", "outside_pallas"),
                                       ("UNUSED_KERNEL", "no_kernel"),
                                       ("KERNEL_TIMES_ZERO", "outside_pallas")])
def test_pallas_for_show_is_no_pallas(name, kind):
    result = run(getattr(h, name))
    assert (result["verdict"], result["stage"]) == ("no_pallas", "structure"), result
    assert result["error_signature"].startswith(f"structure:{kind}:")
    assert result["structure_ok"] is False and result["timing_kind"] is None
    if kind == "outside_pallas":
        assert result["outside_pallas_fraction"] > 0.9


@pytest.mark.parametrize("name,verdict,kind", [
    ("PLATFORM_BRANCH_AROUND_A_KERNEL", "runtime_error", "platform_dependent"),
    ("HEAVY_ONLY_ON_CPU", "runtime_error", "platform_dependent"),
    ("KERNEL_IN_A_BRANCH_NEVER_TAKEN", "no_pallas", "no_kernel")])
def test_code_that_differs_where_the_cpu_checks_it_fails(name, verdict, kind):
    # Each computes the GEMM in XLA on the path the CPU judge runs and not in its kernel; the
    # first two branch on the platform (one program only: refused), the third on data (the
    # judge's run of the TPU program never reaches the kernel).
    result = run(getattr(h, name))
    assert (result["verdict"], result["stage"]) == (verdict, "structure"), result
    assert result["error_signature"].startswith(f"structure:{kind}:")


@pytest.mark.parametrize("name,verdict,stage,kind", [
    ("FORGED_CPU_LOWERING", "runtime_error", "structure", "cpu_branch_not_the_kernel"),
    ("FORGED_HLO_INTERPRETER", "runtime_error", "structure", "cpu_branch_not_the_kernel"),
    ("GEMM_IN_A_BRANCH_NO_STEP_TAKES", "numerics_mismatch", "numerics", "mosaic_kernel_differs"),
    ("DEAD_GEMM_IN_SCRATCH", "runtime_error", "structure", "cpu_branch_not_the_kernel"),
    ("TOKEN_KERNEL_WITH_HIDDEN_CPU_WORK", "numerics_mismatch", "numerics",
     "mosaic_kernel_differs")])
def test_a_cpu_branch_forged_inside_the_candidate_process_is_refused(name, verdict, stage, kind):
    # Each rewrites JAX's lowering machinery in its own process so that the CPU branch the judge
    # runs computes the GEMM in XLA while the Mosaic kernel a TPU would run does not. A kernel
    # that does too little is a Pallas kernel computing the wrong numbers: the judge's own run
    # of its Mosaic body shows it (issue 26: numerics_mismatch, whatever its amount of work).
    result = run(getattr(h, name))
    assert (result["verdict"], result["stage"]) == (verdict, stage), result
    assert result["error_signature"].startswith(f"{stage}:{kind}:"), result["error_signature"]


@pytest.mark.parametrize("name", ["FORGED_CPU_LOWERING", "TOKEN_KERNEL_WITH_HIDDEN_CPU_WORK"])
def test_without_the_kernel_rules_a_forged_cpu_branch_would_be_correct(name, monkeypatch):
    # The attacks are real: with the rules that read the Mosaic body switched off (the work
    # counts and the judge's interpretation of the kernel), the judge's own run of the forged
    # CPU branch on fresh seeds says `correct`.
    monkeypatch.setattr(structure, "CPU_BRANCH_TOLERANCE", float("inf"))
    monkeypatch.setattr(judge, "INTERPRET_THE_KERNELS", False)
    result = run(getattr(h, name))
    assert result["verdict"] == "correct", result
    assert result["numerics_path"] == "cpu_branch_only"


@pytest.mark.parametrize("name", ["WRONG_GEMM_BESIDE_A_FORGED_CPU_BRANCH",
                                  "GEMM_THEN_A_BLOCK_OVERWRITTEN",
                                  "ZERO_TIMES_THE_GEMM_PLUS_A_COPY"])
def test_a_forged_cpu_branch_that_matches_its_kernels_work(name):
    # A kernel that does the GEMM's work and computes something else, beside a CPU branch forged
    # to compute the GEMM: the work counts pass, the forged CPU branch passes, and the judge's
    # own interpretation of the Mosaic body shows what a TPU would compute.
    result = run(getattr(h, name))
    assert (result["verdict"], result["stage"]) == ("numerics_mismatch", "numerics"), result
    assert result["error_signature"].startswith("numerics:mosaic_kernel_differs:"), result
    assert "Mosaic kernel a TPU would run computes something else" in result["error"]
    assert result["numerics_path"] == "mosaic_interpreter"


def test_a_gemm_read_before_its_dma_lands_beside_a_forged_cpu_branch_is_refused():
    # The GEMM reads a DMA's destination before the wait: scratch nothing wrote yet (random
    # bits, different in the judge's two runs of the kernel), then the last step's block.
    result = run(h.READ_BEFORE_THE_DMA_LANDS)
    assert (result["verdict"], result["stage"]) == ("runtime_error", "numerics"), result
    assert result["error_signature"].startswith("numerics:mosaic_interpreter:"), result
    assert "never wrote" in result["mosaic_interpreter"]["unsupported"]
    # The kernel's own defect, not a gap of this host: its author is told what to fix.
    assert "the kernel itself is wrong" in result["error"], result["error"]
    assert result["mosaic_interpreter"]["defect"] == "Nondeterministic"


@pytest.mark.parametrize("name", ["FORGED_CPU_BRANCH_BESIDE_A_SORT",
                                  "FORGED_CPU_BRANCH_BESIDE_A_WHILE_LOOP"])
def test_a_forged_cpu_branch_hidden_behind_xla_glue_is_refused(name):
    # The judge computes the glue too (a sort by XLA on its own, a loop op by op), so the wrong
    # kernel behind it is seen.
    result = run(getattr(h, name))
    assert (result["verdict"], result["stage"]) == ("numerics_mismatch", "numerics"), result
    assert result["error_signature"].startswith("numerics:mosaic_kernel_differs:"), result
    assert result["numerics_path"] == "mosaic_interpreter"


def test_a_forged_cpu_branch_beside_a_program_the_judge_cannot_compute_is_refused():
    # Random bits are the backend's own algorithm: nothing off a TPU computes what the TPU
    # program does, so the forged CPU branch is all that is left to check, and a gap in the
    # interpreter is refused, never `correct`.
    result = run(h.FORGED_CPU_BRANCH_BESIDE_RANDOM_BITS)
    assert (result["verdict"], result["stage"]) == ("runtime_error", "numerics"), result
    assert result["error_signature"].startswith("numerics:mosaic_interpreter:"), result
    assert result["mosaic_interpreter"]["unsupported"], result["mosaic_interpreter"]
    assert "only a TPU agent can judge it" in result["error"]
    # The CPU tier of a cascade passes it on to a TPU agent, whose verdict is the one stored,
    # and says that nothing on this host checked the kernel: the forgery is real.
    screened = run(h.FORGED_CPU_BRANCH_BESIDE_RANDOM_BITS, screen=True)
    assert screened["verdict"] == "correct", screened
    assert screened["numerics_path"] == "cpu_branch_only"


def test_without_the_interpreter_a_forged_cpu_branch_matching_its_kernel_is_correct(
        monkeypatch):
    # What the interpretation adds: the work counts alone pass this forgery.
    monkeypatch.setattr(judge, "INTERPRET_THE_KERNELS", False)
    result = run(h.ZERO_TIMES_THE_GEMM_PLUS_A_COPY)
    assert result["verdict"] == "correct", result


def test_outputs_precomputed_for_public_seeds_fail_on_fresh_ones():
    # The prompt shows create_inputs with seed 0; the judge draws its own seeds, and even a
    # replay of seed 0 checks the candidate's interpret run on a fresh check seed.
    for seeds in (None, (0,)):
        result = run(k.MEMORISED_SEED_0, seeds=seeds)
        assert result["verdict"] == "numerics_mismatch", result
        assert 0 not in result["check_seeds"]


def test_the_parent_is_unreadable_and_unsignalable():
    read = run(h.READS_ITS_PARENT)
    for what in ("mem", "environ", "fd"):
        assert f"parent {what} unreadable" in read["stdout"], read["stdout"]
    result = run(h.SIGNALS_ITS_PARENT)
    assert_killed_by_the_sandbox(result)
    assert run(k.CORRECT)["verdict"] == "correct"  # the same sandbox serves the next one


def test_a_sandbox_killed_from_outside_is_retried_not_charged(tmp_path):
    pool = CandidatePool()
    evaluator = judge.Evaluator(pool=pool)
    slow_correct = k.CORRECT + "\nimport time as _t\n_t.sleep(4)\n"
    try:
        pool.start()
        launcher = pool._proc.pid
        killer = threading.Timer(2.0, lambda: os.killpg(launcher, 9))
        killer.start()
        result = evaluator.evaluate("8p", slow_correct)
        killer.join()
    finally:
        evaluator.close()
    assert result["verdict"] == "correct", result
    assert result["attempts"] == 2
    assert pool.sandboxes_started == 2


def test_a_candidate_that_never_finishes_times_out_and_its_sandbox_dies():
    pool = CandidatePool()
    evaluator = judge.Evaluator(pool=pool)
    try:
        result = evaluator.evaluate("8p", k.SPINS_FOREVER, timeout_s=15)
        assert result["verdict"] == "timeout", result
        assert result["stage"] == "import" and result["stage_ms"]["import"] > 3000
        assert not pool.alive()
        assert evaluator.evaluate("8p", k.CORRECT)["verdict"] == "correct"
    finally:
        evaluator.close()


def test_a_segfault_is_the_candidates_crash():
    # faulthandler raises SIGSEGV at itself: a signal to itself is allowed, so this is the
    # candidate's own crash, told apart from a forbidden system call.
    result = run(k.SEGFAULTS)
    assert (result["verdict"], result["stage"]) == ("crash", "import"), result
    assert "SIGSEGV" in result["error"]
    assert result["attempts"] == 1


def test_an_artifact_with_a_foreign_custom_call_is_refused():
    text = '''
    module @jit_workload {
      func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
        %0 = stablehlo.custom_call @xla_python_cpu_callback(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
        return %0 : tensor<4xf32>
      }
    }'''
    measured = structure.measure(text)
    assert measured.forbidden_calls == ["xla_python_cpu_callback"]
    verdict, kind, message = structure.check(measured)
    assert (verdict, kind) == ("runtime_error", "artifact")
    assert "xla_python_cpu_callback" in message
