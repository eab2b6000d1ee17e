"""The program a TPU would run, computed by the judge: the TPU platform's path through a
jax.export artifact's StableHLO, with each Pallas kernel (`tpu_custom_call`) run by
mosaic_interpreter.py and the XLA glue around the kernels (reshapes, converts, slices, small
elementwise epilogues) evaluated in numpy, and any other pure glue op (a scatter, a sort) run
alone by XLA on the CPU (xla_glue.py).

    outputs = run(mlir_text, platforms, arrays)       (raises mosaic_interpreter.Unsupported)

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
from judge.tpu_model.mosaic_interpreter import Unsupported, _up
from judge.tpu_model.xla_glue import XlaGlue

_ALIAS = "output_operand_aliases"
_w = mi.widened


_ELEMENTWISE = {
    "stablehlo.add": _w(np.add), "stablehlo.subtract": _w(np.subtract),
    "stablehlo.multiply": _w(np.multiply), "stablehlo.maximum": _w(np.maximum),
    "stablehlo.minimum": _w(np.minimum), "stablehlo.power": _w(np.power),
    "stablehlo.atan2": _w(np.arctan2), "stablehlo.negate": _w(np.negative),
    "stablehlo.abs": _w(np.abs), "stablehlo.exponential": _w(np.exp),
    "stablehlo.exponential_minus_one": _w(np.expm1), "stablehlo.log": _w(np.log),
    "stablehlo.log_plus_one": _w(np.log1p), "stablehlo.sqrt": _w(np.sqrt),
    "stablehlo.rsqrt": _w(lambda x: 1.0 / np.sqrt(x)), "stablehlo.tanh": _w(np.tanh),
    "stablehlo.logistic": _w(lambda x: 1.0 / (1.0 + np.exp(-x))),
    "stablehlo.sine": _w(np.sin), "stablehlo.cosine": _w(np.cos),
    "stablehlo.floor": _w(np.floor), "stablehlo.ceil": _w(np.ceil),
    "stablehlo.sign": _w(np.sign), "stablehlo.round_nearest_even": _w(np.rint),
    "stablehlo.and": np.bitwise_and, "stablehlo.or": np.bitwise_or,
    "stablehlo.xor": np.bitwise_xor, "stablehlo.not": np.invert,
    "stablehlo.select": lambda c, a, b: np.where(c, a, b),
    "stablehlo.clamp": lambda lo, x, hi: np.minimum(np.maximum(_up(x), _up(lo)), _up(hi)),
    "stablehlo.convert": lambda x: x,
    "stablehlo.optimization_barrier": lambda *xs: xs,
}


def _divide(a, b):
    if np.asarray(a).dtype.kind in "iu":
        q = np.abs(a) // np.abs(np.where(b == 0, 1, b))
        return np.where((a < 0) != (b < 0), -q, q)
    return _up(a) / _up(b)


def _remainder(a, b):
    if np.asarray(a).dtype.kind in "iu":
        return a - _divide(a, b) * b
    return np.fmod(_up(a), _up(b))


_ELEMENTWISE.update({"stablehlo.divide": _divide, "stablehlo.remainder": _remainder})

_COMPARE = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
            "GT": np.greater, "GE": np.greater_equal}
_REDUCERS = {"stablehlo.add": np.add, "stablehlo.multiply": np.multiply,
             "stablehlo.maximum": np.maximum, "stablehlo.minimum": np.minimum,
             "stablehlo.and": np.logical_and, "stablehlo.or": np.logical_or}


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


def _dot_general(op, lhs, rhs):
    lb, rb, lc, rc = _dot_dims(op)
    a, b = np.asarray(lhs, np.float32), np.asarray(rhs, np.float32)
    lf = [d for d in range(a.ndim) if d not in lb + lc]
    rf = [d for d in range(b.ndim) if d not in rb + rc]
    a = np.transpose(a, lb + lf + lc)
    b = np.transpose(b, rb + rc + rf)
    batch = a.shape[:len(lb)]
    m = a.shape[len(lb):len(lb) + len(lf)]
    n = b.shape[len(rb) + len(rc):]
    k = int(np.prod(a.shape[len(lb) + len(lf):]))
    out = a.reshape(batch + (int(np.prod(m)), k)) @ b.reshape(batch + (k, int(np.prod(n))))
    return out.reshape(batch + m + n)


class _Program:
    def __init__(self, module, platforms, budget):
        self.budget = budget
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
        for result, value, (shape, dtype) in zip(op.results, outs, types):
            env[result] = mi._cast(value, shape, dtype)

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
        if name in _ELEMENTWISE:
            out = _ELEMENTWISE[name](*ins)
            return list(out) if name == "stablehlo.optimization_barrier" else [out]
        if name == "stablehlo.constant":
            return [mi.dense_value(op.attributes["value"], shape, types[0][1])]
        if name == "stablehlo.compare":
            direction = _text(op, "comparison_direction").rstrip(">").split()[-1]
            if direction not in _COMPARE:
                raise Unsupported(f"stablehlo.compare {direction}")
            return [_COMPARE[direction](_up(ins[0]), _up(ins[1]))]
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
        if name == "stablehlo.pad":
            low, high = _dense_i64(op, "edge_padding_low"), _dense_i64(op, "edge_padding_high")
            if any(_dense_i64(op, "interior_padding")) or any(v < 0 for v in low + high):
                raise Unsupported("stablehlo.pad with interior or negative padding")
            return [np.pad(ins[0], list(zip(low, high)), constant_values=ins[1])]
        if name == "stablehlo.concatenate":
            return [np.concatenate(ins, axis=int(ir.IntegerAttr(op.attributes["dimension"])
                                                 .value))]
        if name == "stablehlo.iota":
            axis = int(ir.IntegerAttr(op.attributes["iota_dimension"]).value)
            return [np.indices(shape)[axis]]
        if name == "stablehlo.dot_general":
            return [_dot_general(op, *ins)]
        if name == "stablehlo.bitcast_convert":
            x = np.ascontiguousarray(ins[0])
            if x.dtype.itemsize != types[0][1].itemsize:
                raise Unsupported("stablehlo.bitcast_convert between widths")
            return [x.view(types[0][1])]
        if name == "stablehlo.reduce" and _reducer(op, ins):
            return self.reduce(op, ins, types)
        if name == "stablehlo.reduce_window" and _reducer(op, ins):
            return self.reduce_window(op, ins, env)
        if name == "stablehlo.gather" and _is_row_take(op, *ins):
            return [_take_rows(*ins)]
        return self.glue.run(op, env)

    def reduce(self, op, ins, types):
        fn = _reducer(op, ins)
        dims = tuple(_dense_i64(op, "dimensions"))
        x, init = np.asarray(ins[0]), ins[1]
        wide = _up(x)
        return [fn(fn.reduce(wide, axis=dims), _up(init))]

    def reduce_window(self, op, ins, env):
        """The form jnp.cumsum / cummax and pooling take: one operand, one reducer, padding
        and strides, no dilation (any other goes to XLA)."""
        fn = _reducer(op, ins)
        x, init = np.asarray(ins[0]), _up(ins[1])
        window = _dense_i64(op, "window_dimensions")
        strides = _dense_i64(op, "window_strides") or [1] * x.ndim
        pads = ([int(v) for v in ir.DenseIntElementsAttr(op.attributes["padding"])]
                if "padding" in op.attributes else [0] * (2 * x.ndim))
        if any(v != 1 for v in _dense_i64(op, "base_dilations") +
               _dense_i64(op, "window_dilations")) or any(v < 0 for v in pads):
            return self.glue.run(op, env)
        wide = _up(x)
        scanned = [d for d in range(x.ndim) if window[d] != 1]
        if len(scanned) == 1 and all(s == 1 for s in strides):
            d = scanned[0]
            if (window[d], pads[2 * d], pads[2 * d + 1]) == (x.shape[d], x.shape[d] - 1, 0) \
                    and not any(pads[:2 * d] + pads[2 * d + 2:]) and fn(init, init) == init:
                # A running reduction (cumsum): linear, not a window per element. The padding
                # is init, which folds into one init when init (+) init == init.
                return [fn(fn.accumulate(wide, axis=d), init)]
        padded = np.pad(wide, list(zip(pads[0::2], pads[1::2])),
                        constant_values=np.asarray(init, wide.dtype))
        windows = np.lib.stride_tricks.sliding_window_view(padded, window)
        windows = windows[tuple(slice(None, None, s) for s in strides)]
        axes = tuple(range(x.ndim, 2 * x.ndim))
        self.budget.charge(0, windows.size)
        return [fn(fn.reduce(windows, axis=axes), init)]


def _reducer(op, ins):
    """The numpy ufunc of a reduce's body when it is one add/max/min/mul/and/or of a single
    operand (XLA does the others: an argmax's pair of operands, a custom body)."""
    body = [o.operation for o in op.regions[0].blocks[0].operations]
    if len(ins) != 2 or len(body) != 2 or body[0].name not in _REDUCERS:
        return None
    return _REDUCERS[body[0].name]


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


def run(mlir_text, platforms, arrays, budget=None, kept=None):
    """The outputs of the artifact's public entry point, on the TPU path, for `arrays` (the
    artifact's array inputs, in order). kept: the indices of the inputs the exported module
    still takes (jax.export's `module_kept_var_idx`: an input the program never uses is not
    an argument of its main function); None means all. Raises Unsupported (or ValueError for
    a body that does not parse) when it cannot."""
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
        program = _Program(module, list(platforms), budget)
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
        return [np.asarray(o) for o in outs]
