"""The deviceless compile tier: the real TPU v6e compile (Mosaic + XLA:TPU) on a CPU-only host.

libtpu (pinned by jax[tpu]==0.10.2 to 0.0.42.1) builds compile-only v6e devices from a topology
description. Compiling a candidate for one of them at the workload's full CONFIG shapes runs
every Mosaic pass and the XLA TPU compiler with its VMEM and HBM allocation, so it raises the
errors a TPU raises at compile time and the Python lowering cannot see: VMEM overflow (physical,
and E1001 against the 32 MiB default scoped limit), the HBM total, unsupported shape casts,
i8 vector ops, and E2003 (unprovable lane alignment of a dynamic slice). It gives no timing and
finds no runtime bug (docs/verification.md, "The compile tier").

Two entry points, both returning a `CompileOutcome`:
  compile_function(fn, specs, static_argnums)   trace + lower + compile a function; runs `fn`'s
                                                Python, so only call it where candidate code may
                                                run (the candidate process, or the in-process
                                                judge);
  compile_exported(blob, module)                compile a serialized jax.export artifact made by
                                                export_for_tpu(), checked against the workload;
                                                runs no candidate Python;
  compile_artifact(blob)                        the same without the workload check (the judge
                                                checked the avals): the compile process's call.
`export_for_tpu(fn, module)` is the candidate-process half of the second path.

Threading: the topology and devices are built once per process (the first call costs ~0.1-0.7 s
and loads libtpu, ~0.4 GB RSS) and reused; JAX compilation itself is thread-safe, but callers
should compile one candidate at a time per process, as the judge does. Nothing here touches
the network: TPU_SKIP_MDS_QUERY=1 is set before libtpu loads on a host without TPU chips.

Callers must not be inside a Pallas interpret-mode context (pltpu.force_tpu_interpret_mode or
the judge's interpret.mode("hlo")), which would compile an interpreter, not the kernel.
"""
import dataclasses
import functools
import importlib.metadata
import os
import threading
import time

from judge import verdicts
from workloads import registry

TOPOLOGY_NAME = "v6e:1x1"
V6E_DEVICE_KIND = "TPU v6 lite"
MAX_ERROR_CHARS = verdicts.MAX_ERROR_CHARS

_lock = threading.Lock()


@dataclasses.dataclass
class CompileOutcome:
    """What the tier found. `verdict` is None when the kernel compiled.

    stage: "trace" or "lower" (tracing or the Python Mosaic lowering at the full shapes rejected
    it) or "compile" (libtpu rejected it, or the exported artifact is not the workload's
    program: kind "artifact"). lower_ms covers trace and lowering.
    kind: the error-signature kind, e.g. "mosaic", "resource_exhausted:vmem",
    "resource_exhausted:hbm", "artifact", or the exception type name.
    error: the compiler's own text (library frames pruned, at most MAX_ERROR_CHARS).
    """
    verdict: object = None
    stage: str = "compile"
    kind: str = ""
    error: str = ""
    error_signature: str = ""
    lower_ms: float = 0.0
    compile_ms: float = 0.0
    libtpu_version: str = ""

    @property
    def ok(self):
        return self.verdict is None

    def as_dict(self):
        return dataclasses.asdict(self)


def libtpu_version():
    """The installed libtpu wheel's version ("0.0.42.1"), or "" when libtpu is not installed.

    Cheap (package metadata only; libtpu is not loaded), so it can go in every HELLO and every
    stored evaluation.
    """
    try:
        return importlib.metadata.version("libtpu")
    except importlib.metadata.PackageNotFoundError:
        return ""


def libtpu_build():
    """libtpu's own build line ("TFRT TPU v6 lite / Built on ... cl/933746096"); loads libtpu."""
    return " / ".join(line.strip() for line in
                      str(v6e_device().client.platform_version).splitlines() if line.strip())


def _has_tpu_chips():
    try:
        from jax._src import hardware_utils
        return hardware_utils.num_available_tpu_chips_and_device_id()[0] > 0
    except Exception:  # an unreadable /sys is no TPU for this purpose
        return False


def prepare_environment():
    """Environment for loading libtpu on a host without TPU chips; a no-op on a TPU host.

    Runs at import. Call it (or import this module) before anything initialises JAX's
    backends: with jax[tpu] installed, the first jax.devices() loads libtpu too.
    """
    # On a CPU host libtpu would otherwise ask the GCE metadata server who it is, and print
    # warnings about the missing TPU VM variables. On a real TPU host those variables belong
    # to the TPU runtime and are left alone.
    if _has_tpu_chips():
        return
    # libtpu takes /tmp/libtpu_lockfile so that two processes never drive one chip; with no
    # chip there is nothing to protect, and every judge on the host compiles at once
    # (without this, the second process fails with "Internal error when accessing libtpu
    # multi-process lockfile").
    os.environ.setdefault("ALLOW_MULTIPLE_LIBTPU_LOAD", "1")
    os.environ.setdefault("TPU_SKIP_MDS_QUERY", "1")
    os.environ.setdefault("TPU_ACCELERATOR_TYPE", "v6e-1")
    os.environ.setdefault("TPU_WORKER_HOSTNAMES", "localhost")
    os.environ.setdefault("TPU_WORKER_ID", "0")


prepare_environment()


@functools.lru_cache(maxsize=1)
def _topology():
    prepare_environment()
    from jax.experimental import topologies
    return topologies.get_topology_desc(topology_name=TOPOLOGY_NAME, platform="tpu",
                                        chip_config_name="default",
                                        chips_per_host_bounds=(1, 1, 1), num_slices=1)


def v6e_device():
    """The compile-only v6e device (device_kind "TPU v6 lite"), built once per process."""
    with _lock:
        return _topology().devices[0]


def _mesh():
    import jax
    import numpy as np
    return jax.sharding.Mesh(np.array([v6e_device()]), ("x",))


def _is_static(module, index):
    return index in registry.static_argnums(module)


def input_specs(module, config=None, sharded=True):
    """The workload's inputs at `config` (default: the full CONFIG) as abstract values.

    Arrays become jax.ShapeDtypeStructs (with a SingleDeviceSharding on the v6e device when
    `sharded`, which is what makes jit compile for the TPU instead of the CPU); STATIC_ARGNUMS
    positions hold the module's static Python values. Nothing is allocated.
    """
    import jax
    config = module.CONFIG if config is None else config
    abstract = jax.eval_shape(lambda: module.create_inputs(config, 0))
    statics = iter(module.static_args(config)) if registry.static_argnums(module) else None
    sharding = jax.sharding.SingleDeviceSharding(v6e_device()) if sharded else None
    specs = []
    for i, leaf in enumerate(abstract):
        if _is_static(module, i):
            specs.append(next(statics))
        else:
            specs.append(jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, sharding=sharding))
    return specs


def _failure(stage, exc, elapsed):
    verdict, kind = verdicts.classify_compiler_error(stage, exc)
    # A trace or lowering failure points into the candidate's source; a libtpu failure is the
    # compiler's text alone (its traceback is all JAX internals).
    error = (verdicts.format_error(exc) if stage in ("trace", "lower") else
             verdicts.truncate(f"{type(exc).__name__}: {exc}", MAX_ERROR_CHARS))
    return CompileOutcome(verdict=verdict, stage=stage, kind=kind, error=error,
                          error_signature=verdicts.error_signature(stage, kind, str(exc)),
                          lower_ms=elapsed if stage != "compile" else 0.0,
                          libtpu_version=libtpu_version())


def _ms_since(start):
    return round((time.perf_counter() - start) * 1e3, 3)


def _trace_lower_compile(trace):
    """trace() -> a jax Traced; lowered and compiled for the v6e device under its mesh."""
    import jax
    with jax.sharding.use_abstract_mesh(_mesh().abstract_mesh):
        start = time.perf_counter()
        stage = "trace"
        try:
            traced = trace()
            stage = "lower"
            lowered = traced.lower()
        except Exception as exc:  # the candidate's trace or Mosaic lowering at full shapes
            return _failure(stage, exc, _ms_since(start))
        lower_ms = _ms_since(start)
        start = time.perf_counter()
        try:
            lowered.compile()
        except Exception as exc:  # libtpu: Mosaic passes, VMEM/HBM allocation
            outcome = _failure("compile", exc, 0.0)
            outcome.lower_ms, outcome.compile_ms = lower_ms, _ms_since(start)
            return outcome
    return CompileOutcome(lower_ms=lower_ms, compile_ms=_ms_since(start),
                          libtpu_version=libtpu_version())


def compile_function(fn, specs, static_argnums=()):
    """Lower and compile `fn(*specs)` for TPU v6e. Runs fn's Python (tracing).

    `specs` come from input_specs(module) (sharded). Returns a CompileOutcome; never raises for
    a failure of the candidate's program (KeyboardInterrupt and MemoryError of the host aside).
    """
    import jax
    v6e_device()
    return _trace_lower_compile(
        lambda: jax.jit(fn, static_argnums=tuple(static_argnums)).trace(*specs))


def compile_for_workload(fn, module):
    """compile_function at the workload's full CONFIG shapes."""
    return compile_function(fn, input_specs(module), registry.static_argnums(module))


def export_for_tpu(fn, module, config=None):
    """Serialize `fn` for the TPU at the workload's full shapes: the candidate-process half.

    Runs fn's Python (tracing and the Python Mosaic lowering, under a v6e abstract mesh so that
    pltpu.get_tpu_info() answers as on a v6e); does not load libtpu. Raises what tracing or
    lowering raises. The static arguments are baked into the artifact.
    """
    import jax
    from jax import export
    specs = input_specs(module, config, sharded=False)
    static = registry.static_argnums(module)
    mesh = jax.sharding.AbstractMesh(
        (), (), abstract_device=jax.sharding.AbstractDevice(V6E_DEVICE_KIND, 1, "tpu"))
    with jax.sharding.use_abstract_mesh(mesh):
        exported = export.export(jax.jit(fn, static_argnums=static), platforms=["tpu"])(*specs)
    return bytes(exported.serialize())


def _artifact_problem(exported, module, config):
    """Why a deserialized artifact is not a program over the workload's inputs, or None."""
    import jax
    if tuple(exported.platforms) != ("tpu",):
        return f"the artifact is for platforms {list(exported.platforms)}, not ['tpu']"
    if exported.nr_devices != 1:
        return f"the artifact needs {exported.nr_devices} devices, not 1"
    wanted = [(tuple(s.shape), str(s.dtype)) for i, s in
              enumerate(input_specs(module, config, sharded=False)) if not _is_static(module, i)]
    got = [(tuple(a.shape), str(a.dtype)) for a in exported.in_avals]
    if got != wanted:
        return f"the artifact's inputs {got} are not the workload's {wanted}"
    static = registry.static_argnums(module)
    if static:
        values = dict(zip(static, module.static_args(config)))

        def call(*arrays):
            it = iter(arrays)
            return module.workload(*[values[i] if i in values else next(it)
                                     for i in range(len(arrays) + len(values))])
    else:
        call = module.workload
    arrays = [s for i, s in enumerate(input_specs(module, config, sharded=False))
              if not _is_static(module, i)]
    want_out = [(tuple(x.shape), str(x.dtype)) for x in
                jax.tree.leaves(jax.eval_shape(call, *arrays))]
    got_out = [(tuple(a.shape), str(a.dtype)) for a in exported.out_avals]
    if got_out != want_out:
        return f"the artifact's outputs {got_out} are not the baseline's {want_out}"
    return None


def _artifact_rejection(problem, lower_ms=0.0):
    """The outcome for an artifact that is not the workload's TPU program."""
    return CompileOutcome(
        verdict="shape_mismatch", stage="compile", kind="artifact", error=problem,
        error_signature=verdicts.error_signature("compile", "artifact", problem),
        lower_ms=lower_ms, libtpu_version=libtpu_version())


def _deserialize(blob):
    """(Exported, None) or (None, the CompileOutcome of a blob that is not an artifact)."""
    from jax import export
    start = time.perf_counter()
    try:
        return export.deserialize(bytearray(blob)), None
    except Exception as exc:
        message = f"the compile artifact does not deserialize: {type(exc).__name__}: {exc}"
        return None, CompileOutcome(
            verdict="runtime_error", stage="compile", kind="artifact",
            error=verdicts.truncate(message, MAX_ERROR_CHARS),
            error_signature=verdicts.error_signature("compile", "artifact", message),
            lower_ms=_ms_since(start), libtpu_version=libtpu_version())


def _compile(exported):
    import jax
    sharding = jax.sharding.SingleDeviceSharding(v6e_device())
    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=sharding)
             for a in exported.in_avals]
    return _trace_lower_compile(lambda: jax.jit(exported.call).trace(*specs))


def compile_artifact(blob):
    """Deserialize a TPU artifact and compile it for v6e, trusting its avals: the judge has
    checked them against the workload already (the compile process's entry point). Runs no
    candidate Python."""
    exported, failure = _deserialize(blob)
    if failure:
        return failure
    if tuple(exported.platforms) != ("tpu",):
        return _artifact_rejection(
            f"the artifact is for platforms {list(exported.platforms)}, not ['tpu']")
    return _compile(exported)


def compile_exported(blob, module, config=None):
    """Deserialize an export_for_tpu() artifact and compile it for v6e. Runs no candidate Python.

    An artifact that does not deserialize, or whose platforms, device count, input or output
    avals differ from the workload's at `config` (default CONFIG), is rejected with kind
    "artifact" (verdict shape_mismatch, or runtime_error when it is not an artifact at all)
    before anything is compiled: the candidate process made it and may lie.
    """
    config = module.CONFIG if config is None else config
    start = time.perf_counter()
    exported, failure = _deserialize(blob)
    if failure:
        return failure
    problem = _artifact_problem(exported, module, config)
    if problem:
        return _artifact_rejection(problem, _ms_since(start))
    return _compile(exported)
