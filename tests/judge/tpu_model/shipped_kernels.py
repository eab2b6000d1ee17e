"""The Mosaic ops every kernel the project ships emits when lowered: the 50 honest solutions
(workloads/solutions/), the hand-tuned references (workloads/hand_tuned/) and the prompt's
context examples (workloads/context/examples/). The interpreter must know each of them
(test_op_coverage.py), or an honest kernel written like them is refused on a CPU host.

Lowering all of them takes minutes, so the op lists are cached in shipped_mosaic_ops.json with
each source's hash; regenerate it after changing a kernel with
    .venv/bin/python tests/judge/tpu_model/shipped_kernels.py
"""
import hashlib
import importlib.util
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[3]
CACHE = pathlib.Path(__file__).resolve().with_name("shipped_mosaic_ops.json")


def sources():
    """{name: path} of every shipped kernel source, sorted."""
    found = {}
    for path in sorted((ROOT / "workloads" / "solutions").glob("sol_*.py")):
        found[f"solutions/{path.name}"] = path
    for path in sorted((ROOT / "workloads" / "hand_tuned").glob("ref_*.py")):
        found[f"hand_tuned/{path.name}"] = path
    for path in sorted((ROOT / "workloads" / "context" / "examples").glob("*.py")):
        found[f"context/examples/{path.name}"] = path
    return found


def digest(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()[:16]


def _exported(name, path):
    import jax
    from jax import export

    from judge import evaluate
    from sandbox.candidate import interpret
    from workloads import registry

    interpret.install()
    if name.startswith("context/"):
        spec = importlib.util.spec_from_file_location(f"example_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        fn = jax.jit(module.run)
        args = [jax.ShapeDtypeStruct(x.shape, x.dtype) for x in module.example_inputs()]
    else:
        workload_id = path.stem.split("_", 1)[1]
        module = registry.get(workload_id)
        namespace = {}
        exec(compile(path.read_text(), str(path), "exec"), namespace)
        fn = jax.jit(namespace["workload"], static_argnums=evaluate.static_argnums(module))
        config = module.CPU_CONFIG
        abstract = jax.eval_shape(lambda: module.create_inputs(config, 0))
        statics = iter(module.static_args(config)) if evaluate.static_argnums(module) else None
        args = [next(statics) if i in evaluate.static_argnums(module) else
                jax.ShapeDtypeStruct(leaf.shape, leaf.dtype) for i, leaf in enumerate(abstract)]
    with interpret.mode("tpu"), interpret.tpu_abstract_mesh():
        return export.export(fn, platforms=["tpu", "cpu"])(*args)


def lowered_ops(name, path):
    """The sorted op names of every Mosaic body in the kernel's reduced-shape artifact."""
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib.mlir import ir

    from judge.tpu_model import mosaic_interpreter as mi

    text = _exported(name, path).mlir_module()
    configs = []
    with jax_mlir.make_ir_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        stack = [module.operation]
        while stack:
            op = stack.pop()
            if op.name == "stablehlo.custom_call" and \
                    ir.StringAttr(op.attributes["call_target_name"]).value == "tpu_custom_call":
                configs.append(ir.StringAttr(op.attributes["backend_config"]).value)
            for region in op.regions:
                for block in region.blocks:
                    stack.extend(o.operation for o in block.operations)
    if not configs:
        raise ValueError(f"{name} lowers to no tpu_custom_call")
    names = set()
    for config in configs:
        names |= mi.op_names(config)
    return sorted(names)


def load_cache():
    return json.loads(CACHE.read_text())


def write_cache(only=None):
    cache = load_cache() if CACHE.exists() else {}
    for name, path in sources().items():
        if only and name not in only:
            continue
        print(name, file=sys.stderr, flush=True)
        try:
            cache[name] = {"sha256_16": digest(path), "ops": lowered_ops(name, path)}
        except Exception as exc:  # a kernel the candidate process cannot export either
            cache[name] = {"sha256_16": digest(path),
                           "unexportable": f"{type(exc).__name__}: {str(exc)[:200]}"}
    cache = {k: cache[k] for k in sorted(cache) if k in sources()}
    CACHE.write_text(json.dumps(cache, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    write_cache(set(sys.argv[1:]) or None)
