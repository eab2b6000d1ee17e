"""One pure StableHLO op of a TPU program's glue, run by XLA on the judge's CPU backend: every
glue op that computes (tpu_program.py evaluates only bit moves in numpy).

XLA:CPU is XLA:TPU where numpy is not (tests/judge/test_xla_glue.py): a float-to-int
conversion saturates (NaN is 0), an integer division by zero is -1 (its remainder the
dividend), and arithmetic flushes subnormal inputs and results to zero, as a TPU does (the CPU
client runs every computation with denormals flushed).

    outputs = XlaGlue().run(op, env)      (raises mosaic_interpreter.Unsupported)

The op is copied alone into a module of its own, compiled for the CPU and run on its
operands' values from `env`. XLA wants each region closed; a constant a region uses from
outside (a sort's comparator reads the NaN and zero defined before it) is copied into it.
A glue op computes the same on any backend, so this is what the TPU's XLA computes; the judge
already compiles and runs the candidate's StableHLO on this backend (the CPU branch), so no
new kind of input reaches XLA.
What must not run here is refused before XLA sees it: an op that talks to the outside world
or to other devices (infeed, send, collectives...), and an op whose regions call anything (a
Pallas kernel, a function): those stay tpu_program.py's to evaluate, or Unsupported.
"""
import numpy as np
import jax
from jax._src import compiler, xla_bridge
from jax._src.lib import xla_client as xc
from jax._src.lib.mlir import ir
from jax._src.lib.mlir.dialects import func as func_dialect

from judge.tpu_model.mosaic_interpreter import Unsupported

# Ops with effects beyond their results, or that need other devices or a host: never compiled
# for the judge, whatever their operands.
_REFUSED = frozenset({
    "stablehlo.infeed", "stablehlo.outfeed", "stablehlo.send", "stablehlo.recv",
    "stablehlo.after_all", "stablehlo.create_token", "stablehlo.custom_call",
    "stablehlo.all_gather", "stablehlo.all_reduce", "stablehlo.all_to_all",
    "stablehlo.collective_permute", "stablehlo.collective_broadcast",
    "stablehlo.reduce_scatter", "stablehlo.partition_id", "stablehlo.replica_id",
    "stablehlo.rng", "stablehlo.rng_bit_generator", "stablehlo.composite",
    "func.call", "func.func", "stablehlo.case", "stablehlo.if", "stablehlo.while",
})


def _nested(op):
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                inner = inner.operation
                yield inner
                yield from _nested(inner)


def _close_regions(op):
    """Copies into each of op's regions the constants it uses from outside op; any other
    outside value is Unsupported."""
    for region in op.regions:
        for block in region.blocks:
            nested = list(_nested_in_block(block))
            copies = {}
            for value in _captured(op):
                owner = getattr(value.owner, "operation", value.owner)
                if not isinstance(owner, ir.Operation) or owner.name != "stablehlo.constant":
                    raise Unsupported(f"a {op.name} whose region uses a computed outside value")
                with ir.InsertionPoint.at_block_begin(block):
                    copies[value] = owner.clone().results[0]
            for inner in nested:
                for i, value in enumerate(inner.operands):
                    if value in copies:
                        inner.operands[i] = copies[value]


def _nested_in_block(block):
    for inner in block.operations:
        inner = inner.operation
        yield inner
        yield from _nested(inner)


def _captured(op):
    """The values op's regions use that are defined outside op, in order of first use."""
    inside = set()
    for region in op.regions:
        for block in region.blocks:
            inside.update(block.arguments)
    nested = list(_nested(op))
    for inner in nested:
        inside.update(inner.results)
        for region in inner.regions:
            for block in region.blocks:
                inside.update(block.arguments)
    captured = []
    for inner in nested:
        for value in inner.operands:
            if value not in inside and value not in captured:
                captured.append(value)
    return captured


# Compiled single-op programs, shared by every evaluation in the judge process: the same glue
# (a convert, a bias add, a reduction) recurs across a workload's candidates, and each compile
# costs milliseconds. Keyed by the op's full text (operand and result types included).
MAX_CACHED = 2048
_CACHE = {}


class XlaGlue:
    """Runs single glue ops on XLA's CPU backend, each compiled once per judge process."""

    def __init__(self):
        self._by_op = {}      # this program's ops -> (executable, device)
        self._backend = None

    def run(self, op, env):
        name = op.name
        refused = [o.name for o in _nested(op) if o.name in _REFUSED or
                   not o.name.startswith(("stablehlo.", "chlo."))]
        if name in _REFUSED or not name.startswith(("stablehlo.", "chlo.")):
            refused.insert(0, name)
        if refused:
            raise Unsupported(f"the StableHLO op {refused[0]}" +
                              (f" inside {name}" if refused[0] != name else ""))
        if op not in self._by_op:
            # A region's outside constants are part of the computation (_close_regions copies
            # them in), so their text is part of the key.
            key = "\n".join([op.get_asm(enable_debug_info=False)] + [
                getattr(v.owner, "operation", v.owner).get_asm(enable_debug_info=False)
                for v in _captured(op) if hasattr(getattr(v.owner, "operation", v.owner),
                                                  "get_asm")])
            if key not in _CACHE:
                if len(_CACHE) >= MAX_CACHED:
                    _CACHE.pop(next(iter(_CACHE)))
                _CACHE[key] = self._compile(op)
            self._by_op[op] = _CACHE[key]
        executable, device = self._by_op[op]
        try:
            buffers = [jax.device_put(np.asarray(env[v]), device) for v in op.operands]
            return [np.asarray(out) for out in executable.execute(buffers)]
        except Exception as exc:  # XLA's runtime refusal of the op's operands
            raise Unsupported(f"{name} on XLA's CPU backend: {type(exc).__name__}: "
                              f"{str(exc)[:200]}") from None

    def _compile(self, op):
        if self._backend is None:
            self._backend = xla_bridge.get_backend("cpu")
        device = self._backend.local_devices()[0]
        try:
            module = ir.Module.create()
            with ir.InsertionPoint(module.body):
                signature = ir.FunctionType.get([v.type for v in op.operands],
                                                [r.type for r in op.results])
                function = func_dialect.FuncOp("main", signature)
                function.attributes["sym_visibility"] = ir.StringAttr.get("public")
                block = function.add_entry_block()
                with ir.InsertionPoint(block):
                    copy = op.clone()
                    for i, argument in enumerate(block.arguments):
                        copy.operands[i] = argument
                    func_dialect.ReturnOp(list(copy.results))
                _close_regions(copy)
            if not module.operation.verify():
                raise ValueError("the op alone does not verify")
            options = compiler.get_compile_options(1, 1, backend=self._backend)
            executable = self._backend.compile_and_load(
                module, executable_devices=xc.DeviceList((device,)), compile_options=options)
        except Exception as exc:  # an op XLA's CPU backend does not take
            raise Unsupported(f"{op.name} on XLA's CPU backend: {type(exc).__name__}: "
                              f"{str(exc)[:200]}") from None
        return executable, device
