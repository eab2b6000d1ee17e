"""Verdict classification and error signatures."""
from tpu_agent.sidecar.verdicts import VERDICTS, classify, error_signature, truncate


def test_taxonomy_is_the_architecture_list():
    assert VERDICTS == (
        "no_code", "syntax_error", "lint_rejected", "import_error", "api_misuse",
        "lowering_error", "compile_error", "runtime_error", "timeout", "crash",
        "resource_exhausted", "shape_mismatch", "numerics_mismatch", "no_pallas", "correct")


def test_classify_by_stage_and_type():
    assert classify("import", SyntaxError("x")) == "syntax_error"
    assert classify("import", NameError("x")) == "import_error"
    assert classify("trace", ValueError("bad block")) == "api_misuse"
    assert classify("trace", AttributeError(
        "module 'jax.experimental.pallas.tpu' has no attribute 'TPUCompilerParams'")) == "import_error"
    assert classify("lower", NotImplementedError("x")) == "lowering_error"
    assert classify("numerics", RuntimeError("x")) == "runtime_error"
    assert classify("numerics", MemoryError()) == "resource_exhausted"
    assert classify("numerics", RuntimeError("RESOURCE_EXHAUSTED: alloc")) == "resource_exhausted"


def test_signature_strips_paths_numbers_and_ids():
    a = error_signature("lower", "ValueError",
                        "Block (8, 100) at /tmp/x/candidate_12_3.py:7 line 42 id 0x7f3a\nmore")
    b = error_signature("lower", "ValueError",
                        "Block (16, 36) at /var/y/candidate_9_1.py:19 line 3 id 0xdeadbeef")
    assert a == b
    assert a == "lower:ValueError: Block (N, N) at candidate_N_N.py:N line N id <hex>"


def test_truncate_keeps_head_and_tail():
    text = "HEAD" + "x" * 10000 + "TAIL"
    short = truncate(text, 1000)
    assert len(short) <= 1000 and short.startswith("HEAD") and short.endswith("TAIL")


def test_compile_error_from_a_libtpu_style_message():
    # On CPU hosts nothing compiles Mosaic, so compile_error is tested on the messages libtpu
    # produces when the TPU backend compiles at the first call (the numerics stage).
    mosaic = RuntimeError("INTERNAL: Mosaic failed to compile TPU kernel: failed to legalize "
                          "operation 'tpu.matmul'\n\nat location: loc(\"/dot_general\")")
    assert classify("numerics", mosaic) == "compile_error"
    vmem = RuntimeError("RESOURCE_EXHAUSTED: Ran out of memory in memory space vmem. Used 40.2M "
                        "of 32.0M vmem. Exceeded vmem capacity by 8.2M.")
    assert classify("numerics", vmem) == "compile_error"  # the kernel's blocks, not the host
    assert classify("numerics", RuntimeError("RESOURCE_EXHAUSTED: Out of memory while trying to "
                                             "allocate 1.0G in HBM")) == "resource_exhausted"
    # The Python lowering on CPU never says this; a lowering failure stays lowering_error.
    assert classify("lower", ValueError("Block shape must be divisible by 8 and 128")) == \
        "lowering_error"


def test_sandbox_violation_is_a_runtime_error_at_any_stage():
    from tpu_agent.sidecar.sandbox import SandboxViolation
    for stage in ("import", "trace", "numerics"):
        assert classify(stage, SandboxViolation("sandbox: os.fork")) == "runtime_error"
