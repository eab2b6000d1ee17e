"""Structural honesty: how much of a program's work runs outside its Pallas kernels, counted on
what the judge's own interpretation of the program executes, plus the integrity rules read from
a jax.export artifact (StableHLO) without running any of the candidate's Python.

    measure(mlir_text) -> Measurement           (static: integrity, kernels, fallback counts)
    Executed()                                  (filled by tpu_program.run as it runs)
    check(candidate, require_pallas, reduced, executed) -> None | (verdict, kind, message)

Work is counted the same way in the XLA glue and in the kernels' Mosaic bodies:
  * dot_general / dot / convolution (tpu.matmul / vector.contract): 2 x multiply-adds;
  * reduce / reduce_window (vector reductions): the elements reduced;
  * elementwise arithmetic and transcendental ops on floating-point values: their elements.

The rule (MAX_OUTSIDE_FRACTION), on the candidate's own program, never on the baseline's: the
XLA glue's work over all the program's work (glue + kernels), counted as the judge's
interpretation of the TPU program executes it (tpu_program.run with an Executed): every glue
op as often as it ran (real trip counts of any while loop: counted, counting down, bound by
data), every live Mosaic op of every kernel as often as it ran (kernel_work.instrument: a
matmul whose result reaches no output is not work). Above 90%, in all the work or in the
matmul FLOPs alone, the heavy work runs in XLA beside the kernels: `no_pallas`, kind
"outside_pallas". Glue doing no more than one op per output element is never heavy (an honest
copy kernel's workload: a gather, a cache update). An exact rewrite that does less work than
the baseline (sum(x @ W.T, axis=1) as x @ sum(W, axis=0), a matmul the workload never uses
dropped) is judged on the work it does: whether it is right is the numerics' question, at full
shapes and on fresh inputs. Measured on honest kernels (docs/verification.md 1b): 3p's upstream
flash attention inside MLA leaves the projections to XLA, 69% of its work; a token kernel beside
XLA measures 100%.
When the judge cannot interpret the program (a TPU agent's op the interpreter does not model),
the static count of `measure` stands in, labelled "static": a loop whose trip count is not a
constant counts once, so XLA work in it is under-counted (docs/verification.md residual risks).

A candidate with no tpu_custom_call on its TPU path is `no_pallas`, kind "no_kernel".

One program, one semantics: only a Pallas kernel's own platform dispatch (a `stablehlo.case` on
the platform with the Mosaic `tpu_custom_call` alone in one branch and its CPU stand-in, the
HLO interpreter, in the others) may branch on the platform. Its CPU branch never runs on a TPU
and is counted apart (`cpu_branch`). Any other case on the platform whose branches are not the
same program (JAX lowers dot_general and convolutions per platform, into identical branches)
is refused (`platform_dependent`): the CPU would check other code than the TPU runs. A case on
data is not a platform split: the interpretation runs the branch the data picks.

The kernels' CPU branches (docs/verification.md 1b): in the reduced artifact, a kernel's CPU
branch (what the judge runs on a CPU host) doing more than CPU_BRANCH_TOLERANCE (1.5x) its
Mosaic body's matmul FLOPs or work is `runtime_error`, kind "cpu_branch_not_the_kernel": the
candidate's process rewrote the lowering so that the CPU checks other code than the TPU runs.

Custom calls are an allowlist: the judge compiles and runs these artifacts, and a custom call
names C++ code in the judge's own process (a host callback descriptor is a raw pointer). Anything
but `tpu_custom_call` and sharding annotations makes the artifact unacceptable.
"""
import dataclasses
import re

from jax._src.interpreters import mlir as jax_mlir
from jax._src.lib.mlir import ir

from judge.tpu_model import kernel_work, mlir_values

MAX_OUTSIDE_FRACTION = 0.9
# A kernel's CPU branch may do at most this factor of its Mosaic body's work, in matmul FLOPs
# and in all work, beyond an absolute slack (docs/verification.md 1b).
CPU_BRANCH_TOLERANCE = 1.5
CPU_BRANCH_SLACK = 4096.0
ALLOWED_CUSTOM_CALLS = frozenset({"tpu_custom_call", "Sharding", "SPMDFullToShardShape",
                                  "SPMDShardToFullShape"})
TPU_KERNEL = "tpu_custom_call"

_MXU = {"stablehlo.dot_general", "stablehlo.dot", "stablehlo.convolution"}
_REDUCE = {"stablehlo.reduce", "stablehlo.reduce_window"}
_ELEMENTWISE = {f"stablehlo.{name}" for name in (
    "add", "subtract", "multiply", "divide", "remainder", "power", "maximum", "minimum",
    "atan2", "exponential", "exponential_minus_one", "log", "log_plus_one", "logistic", "tanh",
    "sqrt", "rsqrt", "cbrt", "sine", "cosine", "tan", "negate", "abs", "sign", "floor", "ceil",
    "round_nearest_even", "round_nearest_afz", "clamp", "select", "compare")} | {
    "chlo.erf", "chlo.erf_inv", "chlo.lgamma", "chlo.digamma", "chlo.sinh", "chlo.cosh",
    "chlo.asin", "chlo.acos", "chlo.atan", "chlo.asinh", "chlo.acosh", "chlo.atanh",
    "chlo.erfc"}

_CONTRACTING = re.compile(r"lhs_contracting_dimensions = \[([\d, ]*)\]")
_CONV_RHS = re.compile(r"\]x\[([^\]]*)\]->")
_WINDOW = re.compile(r"window_dimensions = array<i64: ([\d, ]*)>")


@dataclasses.dataclass
class Work:
    mxu_flops: float = 0.0
    reduce_elems: float = 0.0
    elementwise_elems: float = 0.0
    # The work inside the Pallas kernels met under this count (their Mosaic bodies,
    # kernel_work.py); not part of total(), which is the XLA work.
    inside: "Work | None" = None

    def total(self):
        return self.mxu_flops + self.reduce_elems + self.elementwise_elems

    def kernels(self):
        if self.inside is None:
            self.inside = Work()
        return self.inside

    def add(self, other, times=1.0):
        self.mxu_flops += other.mxu_flops * times
        self.reduce_elems += other.reduce_elems * times
        self.elementwise_elems += other.elementwise_elems * times
        if other.inside is not None:
            self.kernels().add(other.inside, times)

    def as_dict(self):
        return {"mxu_flops": float(self.mxu_flops), "reduce_elems": float(self.reduce_elems),
                "elementwise_elems": float(self.elementwise_elems),
                "total": float(self.total())}


@dataclasses.dataclass
class Dispatch:
    """One kernel's platform case: its Mosaic body's work (the larger of its count over the
    grid and its count as the HLO interpreter expands it: heaviest branches, loops without
    constant bounds once) and its CPU branch's."""
    kernel: Work
    cpu: Work


@dataclasses.dataclass
class Measurement:
    kernels: int = 0                       # tpu_custom_calls on the TPU path
    outside: Work = dataclasses.field(default_factory=Work)
    cpu_branch: Work = dataclasses.field(default_factory=Work)
    custom_calls: list = dataclasses.field(default_factory=list)   # every target seen
    forbidden_calls: list = dataclasses.field(default_factory=list)
    unbounded_loops: int = 0
    # Kernels under a platform branch that is not their own dispatch (_Walker.platform_case).
    platform_branches: list = dataclasses.field(default_factory=list)
    dispatches: list = dataclasses.field(default_factory=list)   # [Dispatch]
    kernel_errors: list = dataclasses.field(default_factory=list)  # bodies that do not parse
    dead_mxu_flops: float = 0.0            # matmuls in kernels whose results reach no output
    output_elems: int = 0                  # elements of the entry point's results

    @property
    def inside(self):
        """Work inside the Pallas kernels on the TPU path (their Mosaic bodies)."""
        return self.outside.kernels()


@dataclasses.dataclass
class Executed:
    """What the judge's interpretation of a TPU program executed (tpu_program.run fills it):
    XLA glue ops and live Mosaic ops, each as often as it ran."""
    outside: Work = dataclasses.field(default_factory=Work)   # the XLA glue on the TPU path
    inside: Work = dataclasses.field(default_factory=Work)    # the kernels' live Mosaic ops
    kernel_runs: int = 0                   # tpu_custom_calls executed
    dead_mxu_flops: float = 0.0            # matmuls executed whose results reach no output
    output_elems: int = 0                  # elements of the program's results

    def as_dict(self):
        return {"outside": self.outside.as_dict(), "inside": self.inside.as_dict(),
                "kernel_runs": self.kernel_runs, "dead_mxu_flops": self.dead_mxu_flops}


def _attr(op, name):
    try:
        return str(op.attributes[name])
    except (KeyError, ValueError):
        return ""


def op_work(op):
    """The Work of one StableHLO op, per execution (the module docstring's counts)."""
    work = Work()
    name = op.name
    if name in _MXU and op.results:
        out = mlir_values.elements(op.results[0])
        lhs = mlir_values.shape(op.operands[0])
        if name == "stablehlo.dot_general":
            match = _CONTRACTING.search(_attr(op, "dot_dimension_numbers"))
            dims = [int(d) for d in match.group(1).split(",") if d.strip()] if match else []
            k = 1
            for d in dims:
                k *= int(lhs[d]) if d < len(lhs) else 1
        elif name == "stablehlo.dot":
            k = int(lhs[-1]) if lhs else 1
        else:
            rhs = mlir_values.shape(op.operands[1])
            spec = _CONV_RHS.search(_attr(op, "dimension_numbers") or str(op))
            labels = [s.strip() for s in spec.group(1).split(",")] if spec else []
            total = 1
            for d in rhs:
                total *= int(d)
            out_features = int(rhs[labels.index("o")]) if "o" in labels and rhs else 1
            k = total // max(out_features, 1)
        work.mxu_flops = 2.0 * out * k
    elif name == "stablehlo.reduce" and op.operands:
        work.reduce_elems = float(mlir_values.elements(op.operands[0]))
    elif name == "stablehlo.reduce_window" and op.results:
        match = _WINDOW.search(str(op.attributes["window_dimensions"])) if \
            "window_dimensions" in op.attributes else None
        window = 1
        if match:
            for d in match.group(1).split(","):
                window *= int(d)
        work.reduce_elems = float(mlir_values.elements(op.results[0]) * window)
    elif name in _ELEMENTWISE and op.results:
        probe = op.operands[0] if name in ("stablehlo.compare", "stablehlo.select") and \
            op.operands else op.results[0]
        if name == "stablehlo.select" and len(op.operands) > 1:
            probe = op.operands[1]
        if mlir_values.is_float(probe):
            work.elementwise_elems = float(mlir_values.elements(op.results[0]))
    return work


def _contains_kernel(op, functions, depth=0):
    if op.name == "stablehlo.custom_call" and _target(op) == TPU_KERNEL:
        return True
    if op.name == "func.call" and depth < 32:
        callee = functions.get(_callee(op))
        return callee is not None and _contains_kernel(callee, functions, depth + 1)
    return any(_contains_kernel(inner.operation, functions, depth) for region in op.regions
               for block in region.blocks for inner in block.operations)


def _callee(op):
    return _attr(op, "callee").lstrip("@")


def _all_ops(op):
    stack = [op]
    while stack:
        current = stack.pop()
        yield current
        for region in current.regions:
            for block in region.blocks:
                stack.extend(o.operation for o in block.operations)


def _attr_text(op, name):
    try:
        return ir.StringAttr(op.attributes[name]).value
    except (KeyError, ValueError):
        return ""


def _target(op):
    return _attr_text(op, "call_target_name")


def _defining_op(value):
    owner = getattr(value, "owner", None)
    op = getattr(owner, "operation", owner)
    return op if hasattr(op, "name") and hasattr(op, "operands") else None


_FOLD = {"stablehlo.add": lambda a, b: a + b, "stablehlo.subtract": lambda a, b: a - b,
         "stablehlo.multiply": lambda a, b: a * b,
         "stablehlo.divide": lambda a, b: a // b if b else None}


def _constant_int(value, depth=0):
    """The integer a scalar constant expression defines (constants, + - * /, convert), or
    None."""
    op = _defining_op(value)
    if op is None or depth > 16:
        return None
    if op.name == "stablehlo.constant":
        match = re.search(r"dense<(-?\d+)>", _attr(op, "value"))
        return int(match.group(1)) if match else None
    if op.name == "stablehlo.convert" and len(op.operands) == 1:
        return _constant_int(op.operands[0], depth + 1)
    if op.name in _FOLD and len(op.operands) == 2:
        a, b = (_constant_int(v, depth + 1) for v in op.operands)
        return None if a is None or b is None else _FOLD[op.name](a, b)
    return None


def _loop_invariant_bound(op, cond, value):
    """A while's bound: a constant expression, or (the HLO interpreter's grid loop) a loop
    argument the body passes through unchanged whose initial value is one."""
    limit = _constant_int(value)
    if limit is not None:
        return limit
    source = _defining_op(value)
    if source is not None and source.name == "stablehlo.convert":
        value = source.operands[0]
    args = list(cond.arguments)
    if value not in args:
        return None
    index = args.index(value)
    body = op.regions[1].blocks[0]
    ret = list(body.operations)[-1]
    if index >= len(ret.operands) or ret.operands[index] != body.arguments[index]:
        return None
    return _constant_int(op.operands[index])


def _trip_count(op):
    """Constant trip count of a counted `while` (init c0; cond iter < c1), else None."""
    try:
        cond = op.regions[0].blocks[0]
        ops = list(cond.operations)
        ret = ops[-1]
        compare = ret.operands[0].owner
        compare = getattr(compare, "operation", compare)
        if compare.name != "stablehlo.compare" or "LT" not in _attr(compare, "comparison_direction"):
            return None
        counter, bound = compare.operands[0], compare.operands[1]
        limit = _loop_invariant_bound(op, cond, bound)
        index = list(cond.arguments).index(counter) if counter in list(cond.arguments) else None
        if limit is None or index is None:
            return None
        start = _constant_int(op.operands[index])
        if start is None:
            return None
        return max(limit - start, 0)
    except (IndexError, ValueError, AttributeError, TypeError):
        return None


def _only_constants(ops):
    return all(o.operation.name in ("stablehlo.constant", "stablehlo.return") for o in ops)


def _lone_kernel(ops):
    """True when a branch is one tpu_custom_call and its return, as interpret.install()'s
    per-platform lowering of a pallas_call makes it."""
    names = [o.operation.name for o in ops if o.operation.name != "stablehlo.return"]
    return names == ["stablehlo.custom_call"] and _target(ops[0].operation) == TPU_KERNEL


def _branch_signature(ops):
    """A branch's program, independent of SSA names: per op its name, attributes, result types
    and operands (a value defined in the branch by its position, one from outside by itself),
    nested regions included; two branches with equal signatures compute the same."""
    local, outside = {}, []

    def operand(value):
        if value in local:
            return local[value]
        for i, known in enumerate(outside):
            if known == value:
                return ("outside", i)
        outside.append(value)
        return ("outside", len(outside) - 1)

    def block(ops, depth):
        signature = []
        for position, op in enumerate(ops):
            op = getattr(op, "operation", op)
            attributes = tuple(sorted((str(n), str(op.attributes[n])) for n in op.attributes))
            regions = []
            for r, region in enumerate(op.regions):
                for b, inner in enumerate(region.blocks):
                    for a, argument in enumerate(inner.arguments):
                        local[argument] = ("argument", depth, position, r, b, a)
                    regions.append(block(list(inner.operations), depth + 1))
            signature.append((op.name, attributes, tuple(operand(v) for v in op.operands),
                              tuple(str(r.type) for r in op.results), tuple(regions)))
            for i, result in enumerate(op.results):
                local[result] = ("result", depth, position, i)
        return tuple(signature)

    return block(list(ops), 0)


class _Walker:
    def __init__(self, measurement, functions):
        self.m = measurement
        self.functions = functions   # symbol name -> func.func, for func.call
        self.calling = []
        self._bodies = {}
        self.dispatch = None   # the Dispatch whose kernel branch is being walked
        # The platform index (the argument a multi-platform export adds, marked
        # "_platform_index") and the branch indices computed from it.
        self.platform_values = []

    def _on_platform(self, value):
        return any(value == known for known in self.platform_values)

    def kernel(self, op):
        """(what the body does over its grid, the same counted as the HLO interpreter expands
        it) for one tpu_custom_call's Mosaic body (kernel_work.py), per call."""
        config = _attr_text(op, "backend_config")
        key = (config, len(op.results))
        if key not in self._bodies:
            try:
                body = kernel_work.measure(config, len(op.results))
                interpreted = body.interpreted
            except ValueError as exc:
                self.m.kernel_errors.append(str(exc))
                body = interpreted = kernel_work.KernelWork()
            self._bodies[key] = (
                Work(body.mxu_flops, body.reduce_elems, body.elementwise_elems),
                Work(interpreted.mxu_flops, interpreted.reduce_elems,
                     interpreted.elementwise_elems), body)
        exact, interpreted, body = self._bodies[key]
        self.m.dead_mxu_flops += body.dead_mxu_flops
        if self.dispatch is not None:
            # The most the kernel can be said to do, so that only a CPU branch doing more
            # than any count of its kernel is refused.
            self.dispatch.kernel.add(Work(*(max(getattr(exact, f), getattr(interpreted, f))
                                            for f in ("mxu_flops", "reduce_elems",
                                                      "elementwise_elems"))))
        return exact

    def walk_region_ops(self, ops, work, tpu_path):
        for op in ops:
            self.walk(op.operation, work, tpu_path)

    def walk(self, op, work, tpu_path):
        name = op.name
        if name == "stablehlo.custom_call":
            if _target(op) == TPU_KERNEL and tpu_path:
                self.m.kernels += 1
                work.kernels().add(self.kernel(op))
            return
        if name == "func.call":
            callee = self.functions.get(_callee(op))
            if callee is not None and callee not in self.calling:
                # A called function runs where it is called, as often as it is called.
                self.calling.append(callee)
                self.walk(callee, work, tpu_path)
                self.calling.pop()
            return
        if name == "func.func" and "_platform_index" in _attr(op, "arg_attrs"):
            self.platform_values.append(op.regions[0].blocks[0].arguments[0])
        if name == "stablehlo.case":
            branches = [list(region.blocks[0].operations) for region in op.regions]
            if op.operands and self._on_platform(op.operands[0]):
                if self.platform_case(op, branches, work, tpu_path):
                    return
            # A data-dependent conditional: one branch runs; count the heaviest. A kernel in
            # one branch does not make the others a CPU stand-in: only the platform decides
            # that, and lax.cond(never_true, kernel, xla) must count its XLA branch.
            # Kernels' work counts the lightest branch's: a kernel the data never reaches
            # is not work either.
            best, least = None, None
            for ops in branches:
                branch = Work()
                self.walk_region_ops(ops, branch, tpu_path)
                if best is None or branch.total() > best.total():
                    best = branch
                inside = branch.kernels()
                if least is None or inside.total() < least.total():
                    least = inside
            if best is not None:
                work.add(Work(best.mxu_flops, best.reduce_elems, best.elementwise_elems))
                work.kernels().add(least)
            return
        if name == "stablehlo.while":
            trips = _trip_count(op)
            if trips is None:
                self.m.unbounded_loops += 1 if tpu_path else 0
                trips = 1
            body = Work()
            for region in op.regions:
                for block in region.blocks:
                    self.walk_region_ops(block.operations, body, tpu_path)
            work.add(body, trips)
            return
        work.add(op_work(op))
        if any(self._on_platform(v) for v in op.operands):
            # A value computed from the platform index is the platform too (a convert of it,
            # arithmetic on it): a case on it is a platform split however it was made.
            self.platform_values.extend(op.results)
        for region in op.regions:
            for block in region.blocks:
                self.walk_region_ops(block.operations, work, tpu_path)

    def platform_case(self, op, branches, work, tpu_path):
        """A case on the platform. Pallas kernels lower to one (interpret.install()): a case
        that maps the platform index to a branch index (constants only) and a case on that
        index whose TPU branch is the lone tpu_custom_call, the others its CPU stand-in.
        A kernel anywhere else under a platform branch (lax.platform_dependent around it, a
        lowering patched per platform) would let a CPU check other code than a TPU runs:
        recorded in platform_branches. XLA alone may branch on the platform
        only into the same program in every branch (JAX lowers dot_general and convolutions
        per platform into identical branches); anything else is recorded in platform_branches.
        True when handled here."""
        if all(_only_constants(ops) for ops in branches):
            self.platform_values.extend(op.results)
            return True
        with_kernel = [any(_contains_kernel(o.operation, self.functions) for o in b)
                       for b in branches]
        lone = [_lone_kernel(ops) for ops in branches]
        if sum(with_kernel) == 1 and sum(lone) == 1 and with_kernel == lone:
            dispatch = Dispatch(Work(), Work())
            for ops, kernel in zip(branches, with_kernel):
                if kernel:
                    self.dispatch = dispatch
                    self.walk_region_ops(ops, work, tpu_path)
                    self.dispatch = None
                else:
                    self.walk_region_ops(ops, dispatch.cpu, False)
                    self.m.cpu_branch.add(dispatch.cpu)
            self.m.dispatches.append(dispatch)
            return True
        if any(with_kernel):
            self.m.platform_branches.append(
                "a Pallas kernel inside code that branches on the platform")
        elif len({_branch_signature(ops) for ops in branches}) > 1:
            self.m.platform_branches.append(
                "XLA code that computes differently per platform")
        return False


def measure(mlir_text):
    """The Measurement of a module's text (Exported.mlir_module()). Raises ValueError when the
    text does not parse."""
    measurement = Measurement()
    context = jax_mlir.make_ir_context()
    with context:
        try:
            module = ir.Module.parse(mlir_text)
        except Exception as exc:  # MLIR's own error type varies by version
            raise ValueError(f"the artifact's module does not parse: {exc}") from None
        functions = {}
        for op in _all_ops(module.operation):
            if op.name == "stablehlo.custom_call":
                measurement.custom_calls.append(_target(op))
                if _target(op) not in ALLOWED_CUSTOM_CALLS:
                    measurement.forbidden_calls.append(_target(op))
            elif op.name == "func.func":
                functions[_attr_text(op, "sym_name")] = op
        walker = _Walker(measurement, functions)
        # What runs is what the public entry points reach; a private function counts where
        # (and as often as) it is called.
        for op in module.body.operations:
            op = op.operation
            if op.name == "func.func" and _attr_text(op, "sym_visibility") != "private":
                walker.walk(op, measurement.outside, True)
                returns = list(op.regions[0].blocks[0].operations)[-1]
                measurement.output_elems += sum(mlir_values.elements(v) for v in returns.operands)
    return measurement


def outside_fraction(outside, inside):
    """The glue's share of the program's work (all of it), or None when it does none."""
    total = outside.total() + inside.total()
    return None if total <= 0 else outside.total() / total


def _integrity(candidate):
    if candidate.forbidden_calls:
        names = ", ".join(sorted(set(candidate.forbidden_calls)))
        return ("runtime_error", "artifact",
                f"the exported program calls custom call(s) {names}; only Pallas TPU kernels "
                "(tpu_custom_call) may be custom calls (host callbacks and foreign code cannot "
                "be judged)")
    if candidate.kernel_errors:
        return ("runtime_error", "artifact",
                f"a Pallas kernel in the exported program cannot be read: "
                f"{candidate.kernel_errors[0]}")
    if candidate.platform_branches:
        return ("runtime_error", "platform_dependent",
                f"the exported program branches on the platform outside a Pallas kernel's own "
                f"lowering ({candidate.platform_branches[0]}, as lax.platform_dependent or "
                "a lowering registered per platform makes): the CPU would check "
                "other code than the TPU runs, so it cannot be judged; write one program")
    return None


def _beyond(a, b, slack):
    """True when a exceeds CPU_BRANCH_TOLERANCE x b plus an absolute slack."""
    return a > CPU_BRANCH_TOLERANCE * b + slack


def cpu_branch_mismatch(reduced):
    """The first kernel dispatch of `reduced` (the TPU + CPU artifact) whose CPU branch is not
    its Mosaic body's interpretation by the amount of work, as (index, Dispatch), else None."""
    for index, d in enumerate(reduced.dispatches):
        k, c = d.kernel, d.cpu
        if (_beyond(c.mxu_flops, k.mxu_flops, CPU_BRANCH_SLACK) or
                _beyond(c.total(), k.total(), CPU_BRANCH_SLACK)):
            return index, d
    return None


def outside_rule(outside, inside, output_elems, how):
    """no_pallas (kind outside_pallas) when the XLA glue does more than MAX_OUTSIDE_FRACTION of
    the program's work, in all work or in matmul FLOPs, and more than one op per output
    element; else None. `how` says what was counted, for the message."""
    if outside.total() <= output_elems:
        return None
    shares = [("its work", outside_fraction(outside, inside))]
    if outside.mxu_flops > output_elems:
        shares.append(("its matmul FLOPs",
                       outside.mxu_flops / (outside.mxu_flops + inside.mxu_flops)))
    for what, share in shares:
        if share is not None and share > MAX_OUTSIDE_FRACTION:
            return ("no_pallas", "outside_pallas",
                    f"{share:.0%} of {what} runs in XLA outside the Pallas kernels ({how}: "
                    f"XLA {outside.mxu_flops:.3g} matmul FLOPs and "
                    f"{outside.reduce_elems + outside.elementwise_elems:.3g} other; the "
                    f"kernels {inside.mxu_flops:.3g} and "
                    f"{inside.reduce_elems + inside.elementwise_elems:.3g}); at most "
                    f"{MAX_OUTSIDE_FRACTION:.0%} may: move the heavy work into the kernel")
    return None


def check(candidate, require_pallas=True, reduced=None, executed=None):
    """None when the structure is acceptable, else (verdict, signature kind, message).

    candidate: the full-shape TPU artifact's Measurement; reduced (optional): the TPU + CPU
    artifact's, whose CPU branch the judge runs, held to the integrity rules and to the
    CPU-branch rule; executed (optional): what the judge's interpretation of the reduced
    artifact's TPU program executed (Executed). Without it, the full-shape artifact's static
    count stands in for the outside rule."""
    measured = [candidate] + ([reduced] if reduced is not None else [])
    for m in measured:
        found = _integrity(m)
        if found:
            return found
    if reduced is not None:
        mismatch = cpu_branch_mismatch(reduced)
        if mismatch:
            index, d = mismatch
            k, c = d.kernel, d.cpu
            return ("runtime_error", "cpu_branch_not_the_kernel",
                    f"the CPU program the judge would run for Pallas kernel #{index + 1} is not "
                    f"that kernel: its CPU branch does {c.mxu_flops:.3g} matmul FLOPs and "
                    f"{c.total():.3g} work in all, the kernel's Mosaic body "
                    f"{k.mxu_flops:.3g} and {k.total():.3g}, at the reduced shapes; it may do "
                    f"at most {CPU_BRANCH_TOLERANCE:g}x its kernel's work. The CPU branch is "
                    "the HLO interpreter's expansion of the kernel unless JAX's lowering "
                    "machinery was changed in the candidate's process")
    if not require_pallas:
        return None
    if candidate.kernels == 0 or (executed is not None and executed.kernel_runs == 0):
        return ("no_pallas", "no_kernel",
                "the exported TPU program " +
                ("contains no Pallas kernel (tpu_custom_call): a pallas_call whose result is "
                 "unused is removed, and the work runs in XLA" if candidate.kernels == 0 else
                 "never runs its Pallas kernel on the judge's inputs: the work runs in XLA"))
    if executed is not None:
        return outside_rule(executed.outside, executed.inside, executed.output_elems,
                            "executed at the reduced shapes")
    return outside_rule(candidate.outside, candidate.inside, candidate.output_elems,
                        "counted statically at the full shapes, loops without a constant trip "
                        "count once")
