"""The deviceless libtpu compile tier (judge/compile/compile_tier.py).

These run the real libtpu 0.0.42.1 compile for a compile-only TPU v6e device; nothing is faked.
The kernels in compile_tier_kernels.py are right in every check a CPU can run (trace, the
Python Mosaic lowering at full shapes, Pallas TPU interpret numerics at reduced shapes) and
only the tier rejects them, with the compiler's own message.
"""
import pathlib
import re
import types

import jax
import jax.numpy as jnp
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

import compile_tier_kernels as kernels
import judge_kernels
from sandbox.candidate import interpret
from judge.compile import compile_tier
from judge import evaluate as evaluate_module
from judge.evaluate import Evaluator
from workloads import registry

# The candidate process's pallas_call override (a kernel's own interpret=True is dropped), which
# the old in-process judge installed in every process that imported it.
interpret.install()

REPO = pathlib.Path(__file__).resolve().parents[2]

# (kernel, workload, verdict, kind, text the compiler's message must contain)
REJECTED = [
    ("VMEM_OVERFLOW_8P", "resource_exhausted", "resource_exhausted:vmem",
     "E1001: CompileTimeScopedVmemOom"),
    ("RESHAPE_49K", "compile_error", "mosaic", "infer-vector-layout: unsupported shape cast"),
    ("UNALIGNED_LANE_SLICE_49K", "compile_error", "mosaic",
     "E2003: CompileTimeMosaicUnprovenMemoryAccessAlignment"),
]


def _load(name, code):
    module = types.ModuleType(f"tier_{name}")
    exec(compile(code, f"<{name}>", "exec"), module.__dict__)
    return module.workload


@pytest.fixture(scope="module")
def evaluator():
    assert evaluate_module.compile_tier_setting("interpret", "on") == (True, "")  # libtpu here
    judge = Evaluator(compile_tier=True)
    yield judge
    judge.close()


@pytest.mark.parametrize("name", [r[0] for r in REJECTED])
def test_kernel_passes_every_cpu_check(name, evaluator):
    workload_id, code = kernels.ALL[name]
    module = registry.get(workload_id)
    evaluator.compile_tier = False  # the judge without its compile tier: every CPU check
    try:
        result = evaluator.evaluate(workload_id, code, seeds=(0, 1))
    finally:
        evaluator.compile_tier = True
    assert result["verdict"] == "correct", result["error"][-2000:]
    # The Python Mosaic lowering alone, at the full CONFIG shapes, without libtpu.
    specs = compile_tier.input_specs(module, sharded=False)
    with interpret.mode("tpu"), interpret.tpu_abstract_mesh():
        jax.jit(_load(name, code)).trace(*specs).lower(lowering_platforms=("tpu",))


@pytest.mark.parametrize("name,verdict,kind,text", REJECTED)
def test_the_judge_rejects_it_in_its_compile_stage(name, verdict, kind, text, evaluator):
    # The judge compiles the candidate process's full-shape artifact itself, after lowering and
    # after the cheaper structure check (issue 26), before it judges numerics: those are not
    # looked at (the candidate process's interpret run has happened, in the same job, but its
    # outputs are never compared). libtpu's message is also the compile_finding fact.
    workload_id, code = kernels.ALL[name]
    result = evaluator.evaluate(workload_id, code, seeds=(0,))
    assert (result["verdict"], result["stage"]) == (verdict, "compile"), result["error"][-2000:]
    assert result["error_signature"].startswith(f"compile:{kind}: ")
    assert text in result["error"]
    assert result["structure_ok"] is True and result["structure"] is not None
    assert result["compile_finding"].startswith(f"{verdict}: ") and text in \
        result["compile_finding"]
    assert result["numerics_ok"] is None
    assert result["max_abs_err"] is None and result["kernel_ms"] is None
    assert result["timing_kind"] is None  # a failure is untimed
    assert result["compile_tier"]["libtpu_version"] == compile_tier.libtpu_version()
    assert result["stage_ms"]["compile"] >= result["compile_tier"]["compile_ms"] > 0


def test_the_judge_compiles_a_correct_kernel_and_claims_the_stage(evaluator):
    result = evaluator.evaluate("8p", judge_kernels.CORRECT, seeds=(0,))
    assert result["verdict"] == "correct", result["error"]
    assert result["compile_tier"]["compile_ms"] > 0
    assert evaluator.stages().index("compile") == evaluator.stages().index("lower") + 1


def test_compile_tier_setting(monkeypatch):
    setting = evaluate_module.compile_tier_setting
    monkeypatch.delenv("PALLADIUM_COMPILE_TIER", raising=False)
    assert setting("interpret") == (True, "")  # the default, where libtpu is installed
    assert setting("interpret", "off") == (False, "PALLADIUM_COMPILE_TIER=off")
    assert setting("interpret", "on") == (True, "")
    # On a TPU the judge's native run compiles the artifact with the chip's own libtpu.
    assert setting("tpu", "on")[0] is False
    with pytest.raises(ValueError, match="PALLADIUM_COMPILE_TIER='auto'"):
        setting("interpret", "auto")
    monkeypatch.setenv("PALLADIUM_COMPILE_TIER", "on")
    assert setting("interpret") == (True, "")
    # A host without libtpu skips it and says why; it never claims the compile stage.
    monkeypatch.setattr(compile_tier, "libtpu_version", lambda: "")
    assert setting("interpret") == (False, "libtpu is not installed")
    judge = Evaluator(pool=object())
    assert not judge.compile_tier and "compile" not in judge.stages()


@pytest.mark.parametrize("name,verdict,kind,text", REJECTED)
def test_tier_rejects_with_the_compilers_message(name, verdict, kind, text):
    workload_id, code = kernels.ALL[name]
    outcome = compile_tier.compile_for_workload(_load(name, code), registry.get(workload_id))
    assert (outcome.verdict, outcome.stage, outcome.kind) == (verdict, "compile", kind)
    assert text in outcome.error
    assert outcome.error_signature.startswith(f"compile:{kind}: ")
    assert outcome.lower_ms > 0 and outcome.compile_ms > 0
    assert outcome.libtpu_version == compile_tier.libtpu_version()


def test_scoped_vmem_message_names_the_requirement_and_the_limit():
    workload_id, code = kernels.ALL["VMEM_OVERFLOW_8P"]
    outcome = compile_tier.compile_for_workload(_load("vmem", code), registry.get(workload_id))
    # 2 x (1024x8192 + 8192x1024) bf16 windows = 64 MiB, plus the double-buffered output.
    assert re.search(r"Scoped allocation with size 6\d\.\d\dM and limit 32\.00M", outcome.error)


def _scratch_kernel(rows, limit):
    def kernel(x_ref, o_ref, scratch_ref):
        scratch_ref[pl.ds(0, 8), :] = x_ref[...]
        o_ref[...] = scratch_ref[pl.ds(0, 8), :] * 2

    def workload(x):
        return pl.pallas_call(
            kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(x.shape[0] // 8,),
            in_specs=[pl.BlockSpec((8, 1024), lambda i: (i, 0))],
            out_specs=pl.BlockSpec((8, 1024), lambda i: (i, 0)),
            scratch_shapes=[pltpu.VMEM((rows, 1024), jnp.float32)],
            compiler_params=pltpu.CompilerParams(vmem_limit_bytes=limit))(x)
    return workload


def test_physical_vmem_overflow_is_vmem_too():
    # A 160 MiB scratch with the scoped limit raised past the chip's 128 MiB of VMEM.
    sharding = jax.sharding.SingleDeviceSharding(compile_tier.v6e_device())
    spec = jax.ShapeDtypeStruct((64, 1024), jnp.float32, sharding=sharding)
    outcome = compile_tier.compile_function(_scratch_kernel(40960, 200 << 20), [spec])
    assert (outcome.verdict, outcome.kind) == ("resource_exhausted", "resource_exhausted:vmem")
    assert "would exceed memory" in outcome.error and "space=vmem" in outcome.error
    small = compile_tier.compile_function(_scratch_kernel(1024, None), [spec])
    assert small.ok, small.error


def test_hbm_total_is_resource_exhausted_hbm():
    sharding = jax.sharding.SingleDeviceSharding(compile_tier.v6e_device())
    big = jax.ShapeDtypeStruct((65536, 65536), jnp.float32, sharding=sharding)  # 16 GiB each
    outcome = compile_tier.compile_function(lambda a, b, c: a * b + c, [big, big, big])
    assert (outcome.verdict, outcome.kind) == ("resource_exhausted", "resource_exhausted:hbm")
    assert "HBM" in outcome.error


def test_correct_kernel_compiles_at_full_shapes():
    outcome = compile_tier.compile_for_workload(_load("ok", judge_kernels.CORRECT),
                                                registry.get("8p"))
    assert outcome.ok, outcome.error
    assert outcome.verdict is None and outcome.error == "" and outcome.compile_ms > 0


def test_block_rule_broken_only_at_full_shapes_is_a_lowering_error():
    # bn = min(N, 1000): the whole N (256) at the reduced shape, 1000 lanes at N = 28672.
    code = judge_kernels.gemm(blocks="(min(M, 256), min(N, 1000), min(K, 256))")
    # The judge's pipeline lowers at the full shapes too, so it catches this before numerics.
    judged = Evaluator().evaluate("8p", code, seeds=(0,))
    assert (judged["verdict"], judged["stage"]) == ("lowering_error", "lower"), judged["error"]
    outcome = compile_tier.compile_for_workload(_load("bn1000", code), registry.get("8p"))
    assert (outcome.verdict, outcome.stage) == ("lowering_error", "lower")
    assert "divisible by 8 and 128" in outcome.error


def test_trace_failure_at_full_shapes_is_api_misuse():
    outcome = compile_tier.compile_for_workload(_load("misuse", judge_kernels.API_MISUSE),
                                                registry.get("8p"))
    assert (outcome.verdict, outcome.stage) == ("api_misuse", "trace")


def test_exported_artifact_gets_the_same_verdict_without_candidate_code():
    module = registry.get("49k")
    blob = compile_tier.export_for_tpu(_load("reshape", kernels.RESHAPE_49K), module)
    assert isinstance(blob, bytes) and len(blob) > 100
    outcome = compile_tier.compile_exported(blob, module)
    assert (outcome.verdict, outcome.kind) == ("compile_error", "mosaic")
    assert "unsupported shape cast" in outcome.error
    good = compile_tier.export_for_tpu(_load("ok", judge_kernels.CORRECT), registry.get("8p"))
    assert compile_tier.compile_exported(good, registry.get("8p")).ok


def test_exported_artifact_with_static_arguments_compiles():
    from workloads import hand_tuned
    module = registry.get("11p")
    blob = compile_tier.export_for_tpu(_load("gmm", hand_tuned.source("11p")), module)
    outcome = compile_tier.compile_exported(blob, module)
    assert outcome.ok, outcome.error


def test_artifact_for_other_shapes_or_garbage_is_rejected_before_compiling():
    module = registry.get("8p")
    workload = _load("ok", judge_kernels.CORRECT)
    # The candidate process exports at the reduced shapes, where its kernel compiles cheaply.
    small = compile_tier.export_for_tpu(workload, module, config=module.CPU_CONFIG)
    outcome = compile_tier.compile_exported(small, module)
    assert (outcome.verdict, outcome.kind, outcome.compile_ms) == ("shape_mismatch", "artifact", 0)
    assert "inputs" in outcome.error
    garbage = compile_tier.compile_exported(b"not an artifact", module)
    assert (garbage.verdict, garbage.kind) == ("runtime_error", "artifact")


def test_topology_is_built_once_per_process():
    assert compile_tier.v6e_device() is compile_tier.v6e_device()
    assert compile_tier.v6e_device().device_kind == compile_tier.V6E_DEVICE_KIND


def test_libtpu_version_is_the_pinned_one():
    pins = (REPO / "scripts" / "requirements.txt").read_text()
    pinned = re.search(r"^libtpu==(\S+)$", pins, re.M).group(1)
    assert compile_tier.libtpu_version() == pinned
    build = compile_tier.libtpu_build()
    assert "TPU v6 lite" in build and re.search(r"cl/\d+", build)


def test_outcome_is_a_plain_dict_for_the_wire():
    outcome = compile_tier.compile_for_workload(_load("misuse", judge_kernels.API_MISUSE),
                                                registry.get("8p"))
    data = outcome.as_dict()
    assert set(data) == {"verdict", "stage", "kind", "error", "error_signature", "lower_ms",
                         "compile_ms", "libtpu_version"}
    assert all(isinstance(v, (str, float, int, type(None))) for v in data.values())
