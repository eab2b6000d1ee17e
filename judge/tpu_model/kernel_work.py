"""The work a Pallas TPU kernel does, read from its Mosaic body: the MLIR module that a
`tpu_custom_call`'s backend_config carries (jax/_src/tpu_custom_call.py: base64 of the
mosaic-serde bytecode), which is what libtpu compiles and a TPU runs.

    measure(backend_config, outputs) -> KernelWork      (raises ValueError on a bad body)

The body is data: it is parsed with jaxlib's MLIR bindings (the TPU dialect registered), never
run, like the StableHLO around it (structure.py). Work is counted the way structure.py counts
XLA, so that the two can be compared:
  * tpu.matmul / vector.contract: 2 x multiply-adds (MXU FLOPs);
  * vector.multi_reduction / vector.reduction: the elements reduced;
  * floating-point arith / math ops: their elements.
Loads, stores, DMAs, broadcasts and casts are not work (structure.py does not count their
StableHLO counterparts either).

Per grid step, then over the grid (the kernel function's `iteration_bounds`):
  * an scf.for with constant bounds counts its body trip-count times; any other loop once
    (`unbounded_loops`);
  * an scf.if whose condition is a function of the grid indices and constants only
    (`pl.when(pl.program_id(2) == 0)`) is evaluated at every grid point (integer arithmetic
    on numpy arrays of program ids), so a branch counts on exactly the steps that take it: a
    `pl.when` that no step takes does no work. A condition on data counts its heaviest branch.
  * only live ops count: an op whose result reaches no store into an output (directly, or
    through scratch memory a live op reads, a DMA, a loop-carried value) is dead: Mosaic's own
    canonicalisation drops it, and a matmul kept only to look busy is not work.
"""
import base64
import dataclasses
import json

import numpy as np
from jax._src.interpreters import mlir as jax_mlir
from jax._src.lib import tpu
from jax._src.lib.mlir import ir
from jaxlib.mlir.passmanager import PassManager

from judge.tpu_model import mlir_values

# A body is at most this many bytes and ops: the judge parses it, and a candidate could send a
# huge one to stall the judge (the compile process would reject it anyway).
MAX_BODY_BYTES = 64 << 20
MAX_OPS = 200_000
# Grid points evaluated one by one for conditions; a larger grid counts heaviest branches.
MAX_GRID_POINTS = 1 << 20

_MXU = {"tpu.matmul", "vector.contract"}
_REDUCE = {"vector.multi_reduction", "vector.reduction", "tpu.all_reduce"}
_FLOAT_OPS = {f"arith.{n}" for n in (
    "addf", "subf", "mulf", "divf", "remf", "negf", "maximumf", "minimumf", "maxnumf",
    "minnumf", "cmpf", "select")} | {f"math.{n}" for n in (
        "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "tanh", "sqrt", "rsqrt",
        "cbrt", "sin", "cos", "tan", "atan", "atan2", "erf", "powf", "absf", "floor", "ceil",
        "round", "roundeven", "fma", "sinh", "cosh", "asin", "acos", "asinh", "acosh",
        "atanh", "erfc", "fpowi", "ipowi")}
_STORES = {"tpu.vector_store", "vector.store", "memref.store", "vector.transfer_write",
           "tpu.strided_store", "vector.maskedstore", "tpu.store"}
# Integer ops evaluated on the grid indices (numpy, elementwise over the grid points).
_CMPI = [np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
         np.less, np.less_equal, np.greater, np.greater_equal]
_INT_BINARY = {
    "arith.addi": np.add, "arith.subi": np.subtract, "arith.muli": np.multiply,
    "arith.andi": np.bitwise_and, "arith.ori": np.bitwise_or, "arith.xori": np.bitwise_xor,
    "arith.maxsi": np.maximum, "arith.minsi": np.minimum, "arith.maxui": np.maximum,
    "arith.minui": np.minimum,
    "arith.divsi": lambda a, b: np.trunc(np.divide(a, np.where(b == 0, 1, b))).astype(np.int64),
    "arith.divui": lambda a, b: np.floor_divide(a, np.where(b == 0, 1, b)),
    "arith.floordivsi": lambda a, b: np.floor_divide(a, np.where(b == 0, 1, b)),
    "arith.ceildivsi": lambda a, b: -np.floor_divide(-a, np.where(b == 0, 1, b)),
    "arith.remsi": lambda a, b: np.fmod(a, np.where(b == 0, 1, b)),
    "arith.remui": lambda a, b: np.remainder(a, np.where(b == 0, 1, b)),
}
_INT_UNARY = {"arith.extui", "arith.extsi", "arith.trunci", "arith.index_cast",
              "arith.index_castui"}


@dataclasses.dataclass
class KernelWork:
    mxu_flops: float = 0.0
    reduce_elems: float = 0.0
    elementwise_elems: float = 0.0
    grid: tuple = ()
    unbounded_loops: int = 0
    # Work of ops whose results reach no output (not in the counts above).
    dead_mxu_flops: float = 0.0
    dynamic_grid: bool = False
    # The same body counted as the HLO interpreter expands it (measure()).
    interpreted: "KernelWork | None" = None

    def total(self):
        return self.mxu_flops + self.reduce_elems + self.elementwise_elems

    def add(self, other, times=1.0):
        self.mxu_flops += other.mxu_flops * times
        self.reduce_elems += other.reduce_elems * times
        self.elementwise_elems += other.elementwise_elems * times
        self.dead_mxu_flops += other.dead_mxu_flops * times
        self.unbounded_loops += other.unbounded_loops


def _is_memref(value):
    return str(value.type).startswith("memref<") or "semaphore" in str(value.type)


def _ops(block):
    return [o.operation for o in block.operations]


def _lhs_contracting(op):
    text = str(op.attributes["dimension_numbers"]) if "dimension_numbers" in op.attributes \
        else ""
    if text.startswith("#tpu.dot_dimension_numbers<["):
        inside = text[len("#tpu.dot_dimension_numbers<["):].split("]", 1)[0]
        return [int(d) for d in inside.split(",") if d.strip()]
    lhs = mlir_values.shape(op.operands[0])
    transposed = "transpose_lhs" in op.attributes and "true" in str(
        op.attributes["transpose_lhs"])
    return [len(lhs) - 2] if transposed and len(lhs) >= 2 else [max(len(lhs) - 1, 0)]


def _op_work(op):
    """(mxu, reduce, elementwise) of one op, per execution."""
    name = op.name
    if name == "tpu.matmul" and op.results:
        lhs = mlir_values.shape(op.operands[0])
        k = 1
        for d in _lhs_contracting(op):
            k *= int(lhs[d]) if 0 <= d < len(lhs) else 1
        return 2.0 * mlir_values.elements(op.results[0]) * k, 0.0, 0.0
    if name == "vector.contract" and op.results:
        lhs, rhs, out = (mlir_values.elements(op.operands[0]), mlir_values.elements(op.operands[1]),
                         max(mlir_values.elements(op.results[0]), 1))
        # lhs [M,K] x rhs [K,N] -> [M,N]: K = sqrt(lhs * rhs / out) (batch dims count once).
        return 2.0 * out * float(np.sqrt(lhs * rhs / out)), 0.0, 0.0
    if name in _REDUCE and op.operands:
        return 0.0, float(mlir_values.elements(op.operands[0])), 0.0
    if name in _FLOAT_OPS and op.results:
        probe = op.operands[0] if name == "arith.cmpf" else op.results[0]
        if name == "arith.select" and len(op.operands) > 1:
            probe = op.operands[1]
        if mlir_values.is_float(probe):
            return 0.0, 0.0, float(max(mlir_values.elements(op.results[0]), 1))
    return 0.0, 0.0, 0.0


def _defining(value):
    owner = getattr(value, "owner", None)
    op = getattr(owner, "operation", owner)
    return op if hasattr(op, "name") and hasattr(op, "operands") else None


def _int_attr(op, name):
    try:
        return int(ir.IntegerAttr(op.attributes[name]).value)
    except (KeyError, ValueError, TypeError):
        return None


class _Liveness:
    """Which ops of the kernel function can affect an output (see the module docstring)."""

    def __init__(self, func, outputs):
        self.live_ops = set()
        self.live_values = set()
        self.base = {}          # memref value -> the function argument (or alloc) it views
        self.live_memory = set(outputs)
        self.ops = []
        self._collect(func.regions[0].blocks[0], None)
        self._solve()

    def _collect(self, block, parent):
        for op in _ops(block):
            self.ops.append((op, parent))
            for result in op.results:
                if _is_memref(result):
                    source = next((o for o in op.operands if _is_memref(o)), None)
                    self.base[result] = self.base.get(source, source) if source is not None \
                        else result
            for region in op.regions:
                for inner in region.blocks:
                    self._collect(inner, op)

    def _root(self, value):
        return self.base.get(value, value)

    def _mark(self, op):
        if op in self.live_ops:
            return False
        self.live_ops.add(op)
        operands = list(op.operands)
        if op.name == "scf.for":
            operands = operands[:3]          # loop-carried inits: only when their value is live
        elif op.name == "scf.if":
            operands = operands[:1]
        for value in operands:
            self.live_values.add(value)
            if _is_memref(value):
                self.live_memory.add(self._root(value))
        return True

    def _solve(self):
        changed = True
        while changed:
            changed = False
            # Uses follow definitions, so a backward pass settles most of it at once; more
            # passes only for loop-carried values and memory read before it is written.
            for op, parent in reversed(self.ops):
                if op not in self.live_ops and self._is_live(op):
                    changed |= self._mark(op)
                if op in self.live_ops and parent is not None and parent not in self.live_ops:
                    changed |= self._mark(parent)
                changed |= self._carry(op)

    def _is_live(self, op):
        if any(r in self.live_values for r in op.results):
            return True
        if op.name in _STORES:
            memrefs = [o for o in op.operands if _is_memref(o)]
            return bool(memrefs) and self._root(memrefs[0]) in self.live_memory
        if op.name in ("scf.yield", "func.return", "scf.condition"):
            return False
        if op.regions or op.results:
            return False
        # Another op with effects only (a DMA, a semaphore, a barrier): live when it touches
        # live memory, or when it touches none at all (conservatively).
        memrefs = [self._root(o) for o in op.operands if _is_memref(o)]
        return not memrefs or any(m in self.live_memory for m in memrefs)

    def _carry(self, op):
        """Live results of scf.for / scf.if make the yielded values (and inits) live."""
        if op.name not in ("scf.for", "scf.if", "scf.while"):
            return False
        changed = False
        yields = []
        for region in op.regions:
            for block in region.blocks:
                ops = _ops(block)
                if ops and ops[-1].name in ("scf.yield", "scf.condition"):
                    yields.append((block, ops[-1]))
        for i, result in enumerate(op.results):
            carried = result in self.live_values
            if op.name == "scf.for":
                block = op.regions[0].blocks[0]
                carried |= block.arguments[i + 1] in self.live_values
            if op.name == "scf.while" and op in self.live_ops:
                carried = True
            if not carried:
                continue
            values = [y.operands[i] for _, y in yields if i < len(y.operands)]
            if op.name == "scf.for" and 3 + i < len(op.operands):
                values.append(op.operands[3 + i])
            for value in values:
                if value not in self.live_values:
                    self.live_values.add(value)
                    changed = True
        if op.name == "scf.while" and op in self.live_ops:
            for value in op.operands:
                if value not in self.live_values:
                    self.live_values.add(value)
                    changed = True
        return changed


class _Counter:
    """Counts live work over the grid. `weight` is how often an op runs: None (once per grid
    step) or a float array over the grid points (the steps that take a branch, times the trips
    of the loops around it)."""

    def __init__(self, live, grid_values, points):
        self.live = live
        self.values = dict(grid_values)   # value -> int or numpy int array over grid points
        self.points = points

    def block(self, block, weight, work):
        for op in _ops(block):
            self.op(op, weight, work)

    def _total(self, weight):
        return float(self.points if weight is None else weight.sum())

    def _array(self, weight):
        return np.ones(self.points) if weight is None else weight

    def op(self, op, weight, work):
        name = op.name
        self._evaluate(op)
        if name == "scf.if":
            self._if(op, weight, work)
            return
        if name in ("scf.for", "scf.while"):
            trips = self._trips(op) if name == "scf.for" else self._while_trips(op)
            if trips is None:
                work.unbounded_loops += 1
            else:
                weight = self._array(weight) * trips
            for region in op.regions:
                for block in region.blocks:
                    self.block(block, weight, work)
            return
        if op.regions:
            for region in op.regions:
                for block in region.blocks:
                    self.block(block, weight, work)
            return
        mxu, reduce, elementwise = _op_work(op)
        times = self._total(weight)
        if op in self.live.live_ops:
            work.mxu_flops += mxu * times
            work.reduce_elems += reduce * times
            work.elementwise_elems += elementwise * times
        else:
            work.dead_mxu_flops += mxu * times

    def _if(self, op, weight, work):
        cond = self.values.get(op.operands[0])
        branches = [r.blocks[0] for r in op.regions if len(r.blocks)]
        if cond is not None:
            cond = np.broadcast_to(np.asarray(cond).astype(bool), (self.points,))
            base = self._array(weight)
            for block, taken in zip(branches, (cond, ~cond)):
                sub = np.where(taken, base, 0.0)
                if sub.any():
                    self.block(block, sub, work)
            return
        best = None
        for block in branches:
            branch = KernelWork()
            self.block(block, weight, branch)
            if best is None or branch.total() > best.total():
                best = branch
        if best is not None:
            work.add(best)

    def _known(self, value):
        known = self.values.get(value)
        return None if known is None else np.asarray(known, np.int64)

    def _trips(self, op):
        """Trip count (an int, or an array over the grid points), or None when unknown."""
        lower, upper, step = (self._known(v) for v in list(op.operands)[:3])
        if lower is None or upper is None or step is None or np.any(step <= 0):
            return None
        trips = np.maximum(0, -(-(upper - lower) // step))
        return trips if trips.ndim else int(trips)

    def _while_trips(self, op):
        """Trip count of a counted scf.while (a lax.while_loop over `i < n`, i from a known
        start, +1 (or a known step) per trip), else None."""
        try:
            before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
        except IndexError:
            return None
        for block in (before, after):
            for inner in _ops(block):
                if inner.name == "arith.constant":
                    self._evaluate(inner)
        ops = _ops(before)
        if not ops or ops[-1].name != "scf.condition":
            return None
        condition = ops[-1]
        compare = _defining(condition.operands[0])
        if compare is None or compare.name != "arith.cmpi":
            return None
        predicate = _int_attr(compare, "predicate")
        if predicate not in (2, 3, 6, 7):       # slt, sle, ult, ule
            return None
        counter, bound = compare.operands[0], compare.operands[1]
        before_args = list(before.arguments)
        if counter not in before_args:
            return None
        index = before_args.index(counter)
        forwarded = list(condition.operands)[1:]
        if counter not in forwarded:
            return None
        after_counter = after.arguments[forwarded.index(counter)]
        after_ops = _ops(after)
        if not after_ops or after_ops[-1].name != "scf.yield":
            return None
        step_op = _defining(after_ops[-1].operands[index])
        if step_op is None or step_op.name != "arith.addi" or \
                after_counter not in list(step_op.operands):
            return None
        step = self._known([v for v in step_op.operands if v != after_counter][0]
                           if step_op.operands[0] != step_op.operands[1] else None)
        start, limit = self._known(op.operands[index]), self._known(bound)
        if step is None or start is None or limit is None or np.any(step <= 0):
            return None
        if predicate in (3, 7):
            limit = limit + 1
        trips = np.maximum(0, -(-(limit - start) // step))
        return trips if trips.ndim else int(trips)

    def _evaluate(self, op):
        """Integer values computable from constants and the grid indices alone."""
        name = op.name
        if not op.results or len(op.results) != 1:
            return
        out = op.results[0]
        args = [self.values.get(v) for v in op.operands]
        if name == "arith.constant":
            value = _int_attr(op, "value")
            if value is None and str(op.attributes["value"]) in ("true", "false"):
                value = int(str(op.attributes["value"]) == "true")
            if value is not None:
                self.values[out] = value
            return
        if any(a is None for a in args):
            return
        with np.errstate(all="ignore"):
            if name in _INT_BINARY and len(args) == 2:
                self.values[out] = _INT_BINARY[name](np.asarray(args[0], np.int64),
                                                     np.asarray(args[1], np.int64))
            elif name in _INT_UNARY and len(args) == 1:
                self.values[out] = args[0]
            elif name == "arith.cmpi" and len(args) == 2:
                predicate = _int_attr(op, "predicate")
                if predicate is not None and 0 <= predicate < len(_CMPI):
                    self.values[out] = _CMPI[predicate](args[0], args[1]).astype(np.int64)
            elif name == "arith.select" and len(args) == 3:
                self.values[out] = np.where(np.asarray(args[0]).astype(bool), args[1], args[2])


def _kernel_function(module):
    funcs = [o.operation for o in module.body.operations
             if o.operation.name == "func.func" and "iteration_bounds" in o.operation.attributes]
    if len(funcs) != 1:
        raise ValueError(f"the Mosaic body has {len(funcs)} kernel functions "
                         "(func.func with iteration_bounds), not one")
    return funcs[0]


def _count_ops(op, limit):
    n = 0
    stack = [op]
    while stack:
        current = stack.pop()
        n += 1
        if n > limit:
            return n
        for region in current.regions:
            for block in region.blocks:
                stack.extend(o.operation for o in block.operations)
    return n


def body_bytes(backend_config):
    """The serialized Mosaic module inside a tpu_custom_call's backend_config."""
    try:
        config = json.loads(backend_config)
        body = config["custom_call_config"]["body"]
        if not isinstance(body, str) or len(body) > MAX_BODY_BYTES * 4 // 3 + 4:
            raise ValueError("missing or too large")
        return base64.b64decode(body, validate=True)
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"the kernel's backend_config carries no Mosaic body ({exc})") from None


def measure(backend_config, outputs):
    """KernelWork of the kernel in `backend_config` (a tpu_custom_call attribute's text), whose
    last `outputs` window operands are its outputs. Raises ValueError when the body is not a
    Mosaic kernel module the judge can read."""
    raw = body_bytes(backend_config)
    context = jax_mlir.make_ir_context()
    tpu.register_dialect(context)
    with context, ir.Location.unknown():
        context.allow_unregistered_dialects = True
        try:
            module = ir.Module.parse(raw)
            PassManager.parse("builtin.module(mosaic-serde{serialize=false})").run(
                module.operation)
        except Exception as exc:  # MLIR's own error types vary by version
            raise ValueError(f"the kernel's Mosaic body does not parse: {exc}") from None
        if _count_ops(module.operation, MAX_OPS) > MAX_OPS:
            raise ValueError(f"the kernel's Mosaic body has more than {MAX_OPS} ops")
        func = _kernel_function(module)
        grid = [int(d) for d in ir.DenseI64ArrayAttr(func.attributes["iteration_bounds"])]
        args = list(func.regions[0].blocks[0].arguments)
        windows = _window_count(func)
        prefetch = _int_attr(func, "scalar_prefetch") or 0
        first_window = len(grid) + prefetch
        outs = args[first_window + windows - outputs:first_window + windows] \
            if 0 < outputs <= windows else args[first_window:]
        live = _Liveness(func, outs)
        dynamic = any(d < 0 for d in grid)
        points = 1
        for d in grid:
            points *= max(d, 1)
        body = func.regions[0].blocks[0]
        # As the HLO interpreter expands it (the CPU branch's convention): every grid step
        # runs the heaviest branch of each condition, and loops without constant bounds once.
        interpreted = KernelWork(grid=tuple(grid))
        step = KernelWork()
        _Counter(live, {}, 1).block(body, None, step)
        interpreted.add(step, 1 if dynamic else points)
        interpreted.unbounded_loops += 1 if dynamic else 0
        if dynamic or points > MAX_GRID_POINTS:
            exact = dataclasses.replace(interpreted)
        else:
            # What the steps really do: conditions and loop bounds on the grid indices
            # evaluated at every grid point.
            exact = KernelWork(grid=tuple(grid))
            indices = np.indices([max(d, 1) for d in grid]).reshape(len(grid), -1)
            grid_values = {args[i]: indices[i].astype(np.int64) for i in range(len(grid))}
            _Counter(live, grid_values, points).block(body, None, exact)
        exact.dynamic_grid = dynamic
        exact.interpreted = interpreted
        return exact


def _window_count(func):
    try:
        return len(ir.ArrayAttr(func.attributes["window_params"]))
    except (KeyError, ValueError, TypeError):
        return 0


def instrument(kernel, outputs, work):
    """Makes every later run of `kernel` (a mosaic_interpreter.Kernel, compiled) add what it
    executes to `work` (a KernelWork): each live op's work (as _op_work counts it) every time
    the interpreter runs it, so that grid steps, branches and loops of any kind (bounds from
    data, counting down) count as often as they really ran; a dead op's matmul FLOPs go to
    dead_mxu_flops. `outputs`: the custom call's result count (its last window operands).

    Only ops with work are wrapped (they are all pure: the interpreter calls their `fn`); an
    op outside the kernel function (in a function it calls) is taken as live."""
    with kernel.context:
        func = _kernel_function(kernel.module)
        args = list(func.regions[0].blocks[0].arguments)
        grid = [int(d) for d in ir.DenseI64ArrayAttr(func.attributes["iteration_bounds"])]
        windows = _window_count(func)
        first_window = len(grid) + (_int_attr(func, "scalar_prefetch") or 0)
        outs = args[first_window + windows - outputs:first_window + windows] \
            if 0 < outputs <= windows else args[first_window:]
        live = _Liveness(func, outs)
        seen = {op for op, _ in live.ops}
        stack, visited = [kernel.body], set()
        while stack:
            block = stack.pop()
            if id(block) in visited:
                continue
            visited.add(id(block))
            for compiled in block.ops:
                stack.extend(compiled.blocks)
                if compiled.fn is None or compiled.op is None:
                    continue
                mxu, reduce, elementwise = _op_work(compiled.op)
                if not (mxu or reduce or elementwise):
                    continue
                is_live = compiled.op in live.live_ops or compiled.op not in seen
                compiled.fn = _counting(compiled.fn, work, is_live, mxu, reduce, elementwise)


def _counting(fn, work, is_live, mxu, reduce, elementwise):
    if is_live:
        def counted(*args):
            work.mxu_flops += mxu
            work.reduce_elems += reduce
            work.elementwise_elems += elementwise
            return fn(*args)
    else:
        def counted(*args):
            work.dead_mxu_flops += mxu
            return fn(*args)
    return counted
