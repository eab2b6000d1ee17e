"""Verdict classification and error signatures."""
import pytest

from judge.verdicts import (STUDY_CLASSES, VERDICTS, classify, classify_compiler_error,
                                      classify_compiler_message, describe, error_signature,
                                      study_class, truncate)


def test_taxonomy_is_the_architecture_list():
    assert VERDICTS == (
        "no_code", "syntax_error", "lint_rejected", "import_error", "api_misuse",
        "lowering_error", "compile_error", "runtime_error", "timeout", "crash",
        "resource_exhausted", "shape_mismatch", "numerics_mismatch", "no_pallas", "correct")


def test_every_verdict_has_one_of_the_studys_figure_4_classes():
    assert {study_class(v) for v in VERDICTS} == set(STUDY_CLASSES)
    assert study_class("numerics_mismatch") == study_class("shape_mismatch") == "numerics"
    assert study_class("resource_exhausted") == "lowering/compile"  # VMEM at compile time
    assert study_class("timeout") == study_class("runtime_error") == "runtime/timeout"
    with pytest.raises(ValueError, match="'pending' is not a verdict"):
        study_class("pending")


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


# Heads of messages libtpu 0.0.42.1 raised in the compile tier (test_compile_tier.py makes them
# for real; these copies keep the classifier's tests fast and independent of libtpu).
LIBTPU = {
    "scoped_vmem": (
        "JaxRuntimeError: RESOURCE_EXHAUSTED: E1001: CompileTimeScopedVmemOom:\nRan out of memory "
        "in memory space vmem while allocating on stack for %workload.1 = bf16[8192,28672]"
        "{1,0:T(8,128)(2,1)} custom-call(%A.1, %B.1). Scoped allocation with size 68.00M and "
        "limit 32.00M exceeded scoped vmem limit by 36.00M.\nSee "
        "https://openxla.org/xla/errors/error_1001 for more details."),
    "physical_vmem": (
        "JaxRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory "
        "in memory space vmem. Used 177.84M of 127.94M vmem. Exceeded vmem capacity by 49.91M."),
    "vmem_allocation": (
        "JaxRuntimeError: RESOURCE_EXHAUSTED: Allocation (size=167772160) would exceed memory "
        "(size=134217728) :: #allocation2 [shape = 'f32[40960,1024]{1,0:T(8,128)}', "
        "space=vmem, size = 0xa000000, scoped, tag = 'scratch operand']"),
    "hbm": (
        "JaxRuntimeError: RESOURCE_EXHAUSTED: Ran out of memory on HBM, the total memory "
        "required for HLO temporaries (48.00G) exceeds available HBM (31.25G)."),
    "hbm_runtime": (
        "XlaRuntimeError: RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to "
        "allocate 8.00G. That was not possible. There are 3.10G free."),
    "shape_cast": (
        "MosaicError: INTERNAL: Mosaic failed to compile TPU kernel: infer-vector-layout: "
        "unsupported shape cast\n\nThe MLIR operation involved:\n  %26 = \"tpu.reshape\"(%25) : "
        "(vector<256x512xf32>) -> vector<8192x16xf32>"),
    "e2003": (
        "MosaicError: INTERNAL: Mosaic failed to compile TPU kernel: E2003: "
        "CompileTimeMosaicUnprovenMemoryAccessAlignment: cannot statically prove that index in "
        "dimension 1 is a multiple of 128\nSee https://openxla.org/xla/errors/error_2003 for more "
        "details."),
    "i8": (
        "MosaicError: INTERNAL: Mosaic failed to compile TPU kernel: Not implemented: Only "
        "vector<i16> and vector<i32> are supported, but got 'i8'. Please cast your input."),
}


@pytest.mark.parametrize("name,verdict,kind", [
    ("scoped_vmem", "resource_exhausted", "resource_exhausted:vmem"),
    ("physical_vmem", "resource_exhausted", "resource_exhausted:vmem"),
    ("vmem_allocation", "resource_exhausted", "resource_exhausted:vmem"),
    ("hbm", "resource_exhausted", "resource_exhausted:hbm"),
    ("hbm_runtime", "resource_exhausted", "resource_exhausted:hbm"),
    ("shape_cast", "compile_error", "mosaic"),
    ("e2003", "compile_error", "mosaic"),
    ("i8", "compile_error", "mosaic"),
])
def test_libtpu_messages_are_classified_with_the_memory_space(name, verdict, kind):
    assert classify_compiler_message(LIBTPU[name]) == (verdict, kind)
    exc = RuntimeError(LIBTPU[name].split(": ", 1)[1])
    for stage in ("compile", "numerics", "timing"):  # the tier, and a TPU's first call
        assert describe(stage, exc) == (verdict, kind)
        assert classify(stage, exc) == verdict
    assert classify_compiler_error("compile", exc) == (verdict, kind)


def test_unknown_compiler_failure_is_still_a_compile_error():
    exc = RuntimeError("INTERNAL: something libtpu has never said before")
    assert classify_compiler_message(str(exc)) is None
    assert classify_compiler_error("compile", exc) == ("compile_error", "RuntimeError")
    assert describe("numerics", exc) == ("runtime_error", "RuntimeError")


def test_compiler_words_do_not_reclassify_candidate_python():
    # The lowering and trace stages run the candidate's Python, never libtpu.
    assert classify("lower", ValueError("Block shape must be divisible by 8 and 128")) == \
        "lowering_error"
    assert describe("trace", ValueError("vmem limit 3")) == ("api_misuse", "ValueError")
    assert classify("numerics", MemoryError()) == "resource_exhausted"
    assert classify("numerics", RuntimeError("RESOURCE_EXHAUSTED: alloc")) == "resource_exhausted"


def test_signatures_keep_the_memory_space_and_group_sizes():
    a = error_signature("compile", "resource_exhausted:vmem", LIBTPU["physical_vmem"])
    b = error_signature("compile", "resource_exhausted:vmem",
                        LIBTPU["physical_vmem"].replace("177.84M", "140.00M"))
    assert a == b
    assert a.startswith("compile:resource_exhausted:vmem: JaxRuntimeError: RESOURCE_EXHAUSTED: "
                        "XLA:TPU compile permanent error. Ran out of memory in memory space vmem.")


def test_signature_keeps_digits_inside_identifiers_and_urls():
    sig = error_signature("numerics", "TypeError",
                          "dtype bfloat16 is not float32 (f32, i8, E2003, conv3d, x128) at "
                          "https://github.com/jax-ml/jax/issues/21370#c4 line 12, size 4096")
    assert sig == ("numerics:TypeError: dtype bfloat16 is not float32 (f32, i8, E2003, conv3d, "
                   "x128) at https://github.com/jax-ml/jax/issues/21370#c4 line N, size N")


def test_signature_normalises_shape_extents_but_not_element_types():
    a = error_signature("compile", "mosaic", '%26 = "tpu.reshape"(%25) : (vector<256x512xf32>) '
                                             "-> vector<8192x16xbf16> and 3x3")
    assert a == ('compile:mosaic: %N = "tpu.reshape"(%N) : (vector<NxNxf32>) -> '
                 "vector<NxNxbf16> and NxN")


def test_sandbox_violation_is_a_runtime_error_at_any_stage():
    from sandbox.candidate.guard import SandboxViolation
    for stage in ("import", "trace", "numerics"):
        assert classify(stage, SandboxViolation("sandbox: os.fork")) == "runtime_error"
