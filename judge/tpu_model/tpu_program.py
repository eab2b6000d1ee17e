"""The program a TPU would run, computed by the judge: the TPU platform's path through a
jax.export artifact's StableHLO, with each Pallas kernel (`tpu_custom_call`) run by
mosaic_interpreter.py and the XLA glue around the kernels run by XLA on the judge's CPU, op
by op (xla_glue.py), whose semantics are XLA:TPU's where numpy's are not (float-to-int
saturation, integer division by zero, subnormal flushing); only ops that move bits without
computing (reshapes, slices, broadcasts, selects) are evaluated in numpy.

    outputs = run(mlir_text, platforms, arrays, budget, executed)
                                                      (raises mosaic_interpreter.Unsupported)

With `executed` (structure.Executed) the run also counts the work it executes, in the glue and
in each kernel's live Mosaic ops, for structure.py's rule: real trip counts, real branches.

Only what the TPU runs is evaluated: a `stablehlo.case` picks its branch by its index, and the
platform index (the `_platform_index` argument a multi-platform export adds) is the TPU's, so
the CPU branch of each kernel's platform dispatch is never evaluated. An op neither can run
(a collective, an effect, a call inside a glue op's region) is Unsupported, naming it, and
the judge then refuses `correct` on a CPU host. Nothing here runs candidate code: the artifact
is data, read with the MLIR bindings like structure.py reads it.
"""
import numpy as np
from jax._src.interpreters import mlir as jax_mlir
from jax._src.lib.mlir import ir

from judge.tpu_model import mosaic_interpreter as mi
from judge import structure
from judge.tpu_model import kernel_work
from judge.tpu_model.mosaic_interpreter import Unsupported
from judge.tpu_model.xla_glue import XlaGlue

_ALIAS = "output_operand_aliases"
# Ops that only move or select bits, whose result is the same on any backend: evaluated in
# numpy. Every op that computes (arithmetic, conversions, comparisons, reductions, matmuls)
# runs on XLA's CPU backend (xla_glue.py), whose float-to-int conversion (saturating, NaN to 0),
# integer division by zero (x / 0 = -1, x % 0 = x) and subnormal flushing (inputs and results
# of arithmetic, as on a TPU) are XLA:TPU's (tests/judge/test_xla_glue.py); numpy's differ in
# all three.
_BITWISE = {"stablehlo.and": np.bitwise_and, "stablehlo.or": np.bitwise_or,
            "stablehlo.xor": np.bitwise_xor, "stablehlo.not": np.invert}


def _dense_i64(op, name):
    if name not in op.attributes:
        return []
    return [int(v) for v in ir.DenseI64ArrayAttr(op.attributes[name])]


def _text(op, name):
    return str(op.attributes[name]) if name in op.attributes else ""


def _dot_dims(op):
    text = _text(op, "dot_dimension_numbers")

    def dims(key):
        start = text.find(key + " = [")
        if start < 0:
            return []
        inside = text[start + len(key) + 4:].split("]", 1)[0]
        return [int(v) for v in inside.split(",") if v.strip()]
    return (dims("lhs_batching_dimensions"), dims("rhs_batching_dimensions"),
            dims("lhs_contracting_dimensions"), dims("rhs_contracting_dimensions"))


class _Program:
    def __init__(self, module, platforms, budget, executed=None):
        self.budget = budget
        # What runs is counted when `executed` (a structure.Executed) is given: each glue op's
        # work every time it runs, each kernel's live Mosaic ops every time they run.
        self.executed = executed
        self.kernel_work = {}
        self._op_work = {}
        self.functions = {}
        for op in module.body.operations:
            op = op.operation
            if op.name == "func.func":
                self.functions[ir.StringAttr(op.attributes["sym_name"]).value] = op
        self.platforms = platforms
        self.kernels = {}
        self.glue = XlaGlue()
        self.depth = 0

    def call(self, func, args):
        self.depth += 1
        if self.depth > 64:
            raise Unsupported("calls nested more than 64 deep")
        block = func.regions[0].blocks[0]
        env = dict(zip(block.arguments, args))
        result = self.block(block, env)
        self.depth -= 1
        return result

    def block(self, block, env):
        for op in block.operations:
            op = op.operation
            if op.name in ("func.return", "stablehlo.return"):
                return [env[v] for v in op.operands]
            self.op(op, env)
        return []

    def op(self, op, env):
        name = op.name
        ins = [env[v] for v in op.operands]
        types = [mi.type_info(r.type) for r in op.results]
        mi.check_result_bytes(name, types, self.budget.max_bytes)
        self.budget.charge(1, sum(int(np.prod(s)) if s else 1 for s, _ in types))
        if name == "stablehlo.case":
            index = int(ins[0])
            regions = list(op.regions)
            if not 0 <= index < len(regions):
                index = len(regions) - 1    # stablehlo: an out-of-range index takes the last
            outs = self.block(regions[index].blocks[0], env)
        elif name == "stablehlo.while":
            outs = self.loop(op, ins, env)
        elif name == "func.call":
            callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
            if callee not in self.functions:
                raise Unsupported(f"a call to @{callee}")
            outs = self.call(self.functions[callee], ins)
        elif name == "stablehlo.custom_call":
            outs = self.custom_call(op, ins, types)
        else:
            outs = self.pure(op, ins, types, env)
            if self.executed is not None:
                self.executed.outside.add(self._work(op))
        for result, value, (shape, dtype) in zip(op.results, outs, types):
            env[result] = mi._cast(value, shape, dtype)

    def _work(self, op):
        """structure.py's work of one glue op (per execution), read once per op."""
        if op not in self._op_work:
            self._op_work[op] = structure.op_work(op)
        return self._op_work[op]

    def loop(self, op, ins, env):
        """A while loop on the TPU path (a fori_loop around a kernel): its body may call
        kernels, so it is interpreted here, each iteration charged to the budget."""
        cond, body = (region.blocks[0] for region in op.regions)
        values = list(ins)
        while True:
            self.budget.charge(1, 0)
            if not bool(np.asarray(self.block(cond, {**env, **dict(zip(cond.arguments,
                                                                         values))})[0])):
                return values
            values = self.block(body, {**env, **dict(zip(body.arguments, values))})

    def custom_call(self, op, ins, types):
        target = ir.StringAttr(op.attributes["call_target_name"]).value
        if target in ("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape"):
            return ins
        if target != "tpu_custom_call":
            raise Unsupported(f"the custom call {target}")
        config = ir.StringAttr(op.attributes["backend_config"]).value
        if config not in self.kernels:
            self.kernels[config] = mi.Kernel(config)
            if self.executed is not None:
                self.kernel_work[config] = kernel_work.KernelWork()
                kernel_work.instrument(self.kernels[config], len(op.results),
                                       self.kernel_work[config])
        if self.executed is not None:
            self.executed.kernel_runs += 1
        aliases = {}
        if _ALIAS in op.attributes:
            for alias in ir.ArrayAttr(op.attributes[_ALIAS]):
                text = str(alias)
                try:
                    out_index = _alias_field(text, "output_tuple_indices")
                    operand = int(text.split("operand_index = ")[1].split(",")[0].split(">")[0])
                except (IndexError, ValueError):
                    raise Unsupported(f"an output alias {text[:80]}") from None
                aliases[out_index[0] if out_index else 0] = operand
        return self.kernels[config].run(ins, types, aliases, self.budget)

    def pure(self, op, ins, types, env):
        name = op.name
        shape = types[0][0] if types else None
        if name in _BITWISE:
            return [_BITWISE[name](*ins)]
        if name == "stablehlo.select":
            return [np.where(ins[0], ins[1], ins[2])]
        if name == "stablehlo.optimization_barrier":
            return list(ins)
        if name == "stablehlo.constant":
            return [mi.dense_value(op.attributes["value"], shape, types[0][1])]
        if name == "stablehlo.reshape":
            return [np.reshape(ins[0], shape)]
        if name == "stablehlo.broadcast_in_dim":
            dims = _dense_i64(op, "broadcast_dimensions")
            x = np.asarray(ins[0])
            expanded = [1] * len(shape)
            for i, d in enumerate(dims):
                expanded[d] = x.shape[i]
            return [np.broadcast_to(x.reshape(expanded), shape)]
        if name == "stablehlo.transpose":
            return [np.transpose(ins[0], _dense_i64(op, "permutation"))]
        if name == "stablehlo.slice":
            start, limit = _dense_i64(op, "start_indices"), _dense_i64(op, "limit_indices")
            strides = _dense_i64(op, "strides") or [1] * len(start)
            return [np.asarray(ins[0])[tuple(slice(a, b, s) for a, b, s in
                                             zip(start, limit, strides))]]
        if name == "stablehlo.dynamic_slice":
            x = np.asarray(ins[0])
            sizes = _dense_i64(op, "slice_sizes")
            starts = [min(max(int(s), 0), d - n) for s, d, n in zip(ins[1:], x.shape, sizes)]
            return [x[tuple(slice(s, s + n) for s, n in zip(starts, sizes))]]
        if name == "stablehlo.dynamic_update_slice":
            x, update = np.array(ins[0]), np.asarray(ins[1])
            starts = [min(max(int(s), 0), d - n) for s, d, n in
                      zip(ins[2:], x.shape, update.shape)]
            x[tuple(slice(s, s + n) for s, n in zip(starts, update.shape))] = update
            return [x]
        if name == "stablehlo.pad" and not any(_dense_i64(op, "interior_padding")) and \
                not any(v < 0 for v in _dense_i64(op, "edge_padding_low") +
                        _dense_i64(op, "edge_padding_high")):
            low, high = _dense_i64(op, "edge_padding_low"), _dense_i64(op, "edge_padding_high")
            return [np.pad(ins[0], list(zip(low, high)), constant_values=ins[1])]
        if name == "stablehlo.concatenate":
            return [np.concatenate(ins, axis=int(ir.IntegerAttr(op.attributes["dimension"])
                                                 .value))]
        if name == "stablehlo.iota":
            axis = int(ir.IntegerAttr(op.attributes["iota_dimension"]).value)
            return [np.indices(shape)[axis]]
        if name == "stablehlo.bitcast_convert":
            x = np.ascontiguousarray(ins[0])
            if x.dtype.itemsize != types[0][1].itemsize:
                return self.glue.run(op, env)
            return [x.view(types[0][1])]
        if name == "stablehlo.gather" and _is_row_take(op, *ins):
            return [_take_rows(*ins)]
        # Anything that computes: XLA's CPU backend, XLA:TPU's semantics (see _BITWISE),
        # charged its work (a matmul's multiply-adds, as the interpreter charges a kernel's; a
        # window's elements), not only its result.
        work = self._work(op)
        self.budget.charge(0, work.mxu_flops / 2 + work.reduce_elems + work.elementwise_elems)
        return self.glue.run(op, env)


def _is_row_take(op, operand, indices):
    """The gather form the project's glue uses most, x[idx] along the first axis (jnp.take,
    a scalar-prefetch table indexed by the batch), done in numpy; XLA does any other."""
    text = _text(op, "dimension_numbers")
    x, idx = np.asarray(operand), np.asarray(indices)
    rank = x.ndim
    offsets = ", ".join(str(d) for d in range(idx.ndim - 1, idx.ndim + rank - 2))
    expected = (f"offset_dims = [{offsets}], "
                "collapsed_slice_dims = [0], start_index_map = [0], "
                f"index_vector_dim = {idx.ndim - 1}>")
    return (text.endswith(expected) and idx.shape[-1:] == (1,) and
            _dense_i64(op, "slice_sizes") == [1] + list(x.shape[1:]))


def _take_rows(operand, indices):
    x, idx = np.asarray(operand), np.asarray(indices)
    rows = np.clip(idx[..., 0].astype(np.int64), 0, x.shape[0] - 1)
    return x[rows]


def _alias_field(text, key):
    start = text.find(key + " = [")
    if start < 0:
        return []
    inside = text[start + len(key) + 4:].split("]", 1)[0]
    return [int(v) for v in inside.split(",") if v.strip()]


def run(mlir_text, platforms, arrays, budget=None, executed=None, kept=None):
    """The outputs of the artifact's public entry point, on the TPU path, for `arrays` (the
    artifact's array inputs, in order). kept: the indices of the inputs the exported module
    still takes (jax.export's `module_kept_var_idx`: an input the program never uses is not
    an argument of its main function); None means all. Raises Unsupported (or ValueError for
    a body that does not parse) when it cannot. `executed` (a structure.Executed), when given,
    receives the work the run executed, in the glue and in the kernels."""
    budget = budget or mi.Budget()
    if "tpu" not in platforms:
        raise Unsupported("the artifact has no TPU platform")
    if kept is not None:
        kept = sorted(int(i) for i in kept)
        if any(not 0 <= i < len(arrays) for i in kept):
            raise Unsupported(f"kept input indices {kept} for {len(arrays)} inputs")
        arrays = [arrays[i] for i in kept]
    context = jax_mlir.make_ir_context()
    with context, ir.Location.unknown():
        module = ir.Module.parse(mlir_text)
        program = _Program(module, list(platforms), budget, executed)
        mains = [op.operation for op in module.body.operations
                 if op.operation.name == "func.func" and
                 ir.StringAttr(op.operation.attributes["sym_name"]).value == "main"]
        if len(mains) != 1:
            raise Unsupported("the module has no main function")
        main = mains[0]
        block = main.regions[0].blocks[0]
        arg_attrs = list(ir.ArrayAttr(main.attributes["arg_attrs"])) \
            if "arg_attrs" in main.attributes else [None] * len(block.arguments)
        args, supplied = [], iter(arrays)
        constants = sum("jax.global_constant" in str(a) for a in arg_attrs if a is not None)
        if len(block.arguments) - constants != len(arrays):
            raise Unsupported(f"the main function takes {len(block.arguments) - constants} "
                              f"arrays, {len(arrays)} were given")
        for value, attrs in zip(block.arguments, arg_attrs):
            text = str(attrs) if attrs is not None else ""
            if "jax.global_constant" in text:
                if "_platform_index" not in text:
                    raise Unsupported(f"a global constant argument {text[:80]}")
                args.append(np.asarray(list(platforms).index("tpu"), np.int32))
            else:
                args.append(np.asarray(next(supplied)))
        with np.errstate(all="ignore"), mi.single_threaded_blas():
            outs = program.call(main, args)
        outs = [np.asarray(o) for o in outs]
        if executed is not None:
            # The interpreter runs each kernel call RUNS_PER_CALL times (random fills, permuted
            # parallel dimensions); a TPU runs it once.
            runs = mi.Kernel.RUNS_PER_CALL
            for work in program.kernel_work.values():
                executed.inside.add(structure.Work(work.mxu_flops / runs,
                                                   work.reduce_elems / runs,
                                                   work.elementwise_elems / runs))
                executed.dead_mxu_flops += work.dead_mxu_flops / runs
            executed.output_elems += sum(int(o.size) for o in outs)
        return outs
