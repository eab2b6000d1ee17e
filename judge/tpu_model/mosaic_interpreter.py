"""The judge's own run of a Pallas TPU kernel: its Mosaic body (the MLIR module a
`tpu_custom_call`'s backend_config carries, what libtpu compiles and a TPU runs) interpreted in
numpy on arrays the judge made, without running any of the candidate's code.

    kernel = Kernel(backend_config)            (raises Unsupported / ValueError)
    outputs = kernel.run(operands, out_avals, aliases, budget)

Why: on a CPU host the judge otherwise runs only the artifact's CPU branch, which the
candidate's process builds and can forge (docs/verification.md 0, row 20). The Mosaic body is
what a TPU would run; computing it here catches a kernel that computes something else than its
CPU branch.

Semantics (Pallas TPU's, as the HLO interpreter models them):
  * the grid (`iteration_bounds`) runs in row-major order;
  * each window param's `transform_indices` function maps the grid indices (and the scalar
    prefetch operands) to block indices; before each step the input and output blocks are
    copied out of the arrays into fresh buffers (a block past an array's edge reads the
    uninitialised value there: NaN, or the integer minimum), the body runs, and the output
    blocks are copied back (the part inside the array);
  * outputs start uninitialised (NaN) unless aliased to an input;
  * scratch operands persist across steps; a window without `transform_indices` (memory space
    ANY) is the whole array, read and written in place;
  * a DMA is a copy that lands when its semaphore is waited on (or at the end of the step),
    other semaphore ops are no-ops.
Anything else is `Unsupported`, naming the op or the attribute: the judge then falls back to
the CPU branch alone and says so. The body is data, interpreted op by op; `Budget` bounds the
op executions, the elements they produce and the bytes allocated, so that a hostile body cannot
stall the judge (over it: `OverBudget`, a kind of Unsupported).
"""
import contextlib
import ctypes
import dataclasses
import glob
import math
import os

import ml_dtypes
import numpy as np
from jax._src.interpreters import mlir as jax_mlir
from jax._src.lib import tpu
from jax._src.lib.mlir import ir
from jaxlib.mlir.passmanager import PassManager

from judge.tpu_model import kernel_work

# Bounds on one candidate's interpretation (all kernels and the glue around them; each kernel
# runs twice, see Kernel.run). The most the project's correct kernels need at the reduced
# shapes, both runs: 1.7M op executions (hand-tuned 6p, paged attention), 9.2e9 elements
# (hand-tuned 2p), 8.6e10 multiply-adds (solution 17p); docs/verification.md 1b. Matmul
# multiply-adds have their own bound: BLAS does one in about 1/30 of the time numpy takes to
# produce an element, so one bound for both either refused honest GEMMs or let elementwise work
# run 30x longer than intended.
MAX_OP_EXECUTIONS = 4_000_000
MAX_ELEMENTS = 4e10          # elements produced
MAX_MACS = 2e11              # multiply-adds of matmuls (~10-20 s of single-threaded BLAS)
MAX_BYTES = 1 << 30          # allocated arrays (outputs, scratch, blocks) live at once, roughly


class Unsupported(Exception):
    """The interpreter cannot run this program; the message names the op or the reason."""


class OverBudget(Unsupported):
    """The program needs more work than Budget allows."""


class KernelDefect(Unsupported):
    """Not a gap of the interpreter: the kernel itself is wrong on any TPU. `on_a_tpu` says
    what a chip would do instead of computing the workload."""
    on_a_tpu = ""


class OutOfBounds(KernelDefect):
    """A load, store, slice, DMA or block outside its buffer: on a TPU it reads or writes
    whatever lies there (or faults), so no result of it can be judged."""
    on_a_tpu = "read or write whatever lies outside the buffer, or fault"


class Deadlock(KernelDefect):
    """A semaphore or DMA wait that nothing in the kernel can ever satisfy: a TPU hangs."""
    on_a_tpu = "hang"


class Nondeterministic(KernelDefect):
    """Outputs that change with what uninitialised memory holds or with the order of the
    grid's "parallel" dimensions: a TPU may return either."""
    on_a_tpu = "return whatever its memory held or its cores' order made"


@dataclasses.dataclass
class Budget:
    ops: int = MAX_OP_EXECUTIONS
    elements: float = MAX_ELEMENTS
    bytes: int = MAX_BYTES
    macs: float = None      # None: MAX_MACS scaled as `elements` is to MAX_ELEMENTS

    def __post_init__(self):
        if self.macs is None:
            self.macs = MAX_MACS * self.elements / MAX_ELEMENTS
        # What is left counts down from these; messages name them.
        self.max_ops, self.max_elements, self.max_bytes = self.ops, self.elements, self.bytes
        self.max_macs = self.macs

    def charge(self, ops, elements, macs=0):
        self.ops -= ops
        self.elements -= elements
        self.macs -= macs
        if self.ops < 0:
            raise OverBudget(f"more than {self.max_ops} op executions")
        if self.elements < 0:
            raise OverBudget(f"more than {self.max_elements:.3g} elements computed")
        if self.macs < 0:
            raise OverBudget(f"more than {self.max_macs:.3g} matmul multiply-adds")

    def allocate(self, nbytes, persistent=True):
        """Outputs, scratch and allocas count against the bytes left; a block buffer, freed
        after its step, only against the bound."""
        if nbytes > self.bytes:
            raise OverBudget(f"allocations beyond {self.max_bytes} bytes")
        if persistent:
            self.bytes -= nbytes


@contextlib.contextmanager
def single_threaded_blas():
    """numpy's OpenBLAS on one thread while the judge interprets: its kernels' matmuls are
    small, and on a loaded 2-core host OpenBLAS's threads spin against each other (measured:
    a 128x256x128 matmul 0.1-0.3 ms on one thread, up to 25 ms on two)."""
    setter = _blas_threads()
    if setter is None:
        yield
        return
    get, set_ = setter
    before = get()
    set_(1)
    try:
        yield
    finally:
        set_(before)


_BLAS = []

# x86-64 MXCSR bits: flush subnormal results to zero (FTZ) and read subnormal inputs as zero
# (DAZ). glibc's fenv_t keeps MXCSR at byte 28.
_MXCSR_FTZ_DAZ = 0x8040
_MXCSR_OFFSET = 28


@contextlib.contextmanager
def flush_subnormals():
    """Subnormal floats read and computed as zero while the judge interprets, as on a TPU and
    in XLA (TPU interpret mode computes 1e-40 + 0 == 0 and 1e-40 == 0 true; numpy by default
    keeps them, and a kernel can branch on the difference). The flags are the calling
    thread's, which is where numpy and single-threaded BLAS run. A host where they cannot be
    set cannot interpret as a TPU computes, so it refuses."""
    libm = _libm()
    if libm is None:
        raise Unsupported("this host cannot flush subnormals to zero as a TPU does "
                          "(no x86-64 glibc fenv)")
    before = ctypes.create_string_buffer(64)
    if libm.fegetenv(before) != 0:
        raise Unsupported("fegetenv failed: cannot flush subnormals to zero as a TPU does")
    env = bytearray(before.raw)
    mxcsr = int.from_bytes(env[_MXCSR_OFFSET:_MXCSR_OFFSET + 4], "little")
    env[_MXCSR_OFFSET:_MXCSR_OFFSET + 4] = (mxcsr | _MXCSR_FTZ_DAZ).to_bytes(4, "little")
    libm.fesetenv(ctypes.create_string_buffer(bytes(env), 64))
    try:
        yield
    finally:
        libm.fesetenv(before)


_LIBM = []


def _libm():
    if not _LIBM:
        found = None
        if os.uname().machine == "x86_64":
            try:
                found = ctypes.CDLL("libm.so.6")
                found.fegetenv, found.fesetenv  # noqa: B018  (both must exist)
            except (OSError, AttributeError):
                found = None
        _LIBM.append(found)
    return _LIBM[0]


def _blas_threads():
    if not _BLAS:
        found = None
        for path in glob.glob(os.path.join(os.path.dirname(np.__file__), os.pardir,
                                           "numpy.libs", "libscipy_openblas*")):
            try:
                lib = ctypes.CDLL(path)
                found = (lib.scipy_openblas_get_num_threads64_,
                         lib.scipy_openblas_set_num_threads64_)
                break
            except (OSError, AttributeError):
                continue
        _BLAS.append(found)
    return _BLAS[0]


def check_result_bytes(name, types, limit=MAX_BYTES):
    """A single value larger than the whole byte budget is refused before it is computed."""
    for shape, dtype in types:
        if shape and dtype is not None and \
                int(np.prod(shape, dtype=np.float64)) * dtype.itemsize > limit:
            raise OverBudget(f"{name} makes a {list(shape)} {dtype} value")


# -- types --------------------------------------------------------------------------------------

_DTYPES = {"f32": np.float32, "bf16": ml_dtypes.bfloat16, "f16": np.float16, "f64": np.float64,
           "i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
           "ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32, "index": np.int64,
           "f8E4M3FN": ml_dtypes.float8_e4m3fn, "f8E5M2": ml_dtypes.float8_e5m2}
_UNSIGNED = {np.dtype(np.int8): np.uint8, np.dtype(np.int16): np.uint16,
             np.dtype(np.int32): np.uint32, np.dtype(np.int64): np.uint64,
             np.dtype(np.bool_): np.bool_}


def dtype_of(element_type):
    text = str(element_type)
    if text not in _DTYPES:
        raise Unsupported(f"element type {text}")
    return np.dtype(_DTYPES[text])


def type_info(mlir_type):
    """(shape or None for a scalar, numpy dtype or None for a semaphore)."""
    text = str(mlir_type)
    if "semaphore" in text:
        try:
            return tuple(ir.ShapedType(mlir_type).shape), None
        except (ValueError, TypeError):
            return (), None
    try:
        shaped = ir.ShapedType(mlir_type)
    except (ValueError, TypeError):
        return None, dtype_of(mlir_type)
    if not shaped.has_static_shape:
        raise Unsupported(f"a dynamic shape ({text})")
    return tuple(shaped.shape), dtype_of(shaped.element_type)


def uninitialized(shape, dtype, budget, rng, persistent=True):
    """Memory nothing wrote yet: random bits from `rng` (a fresh seed per run), so that a
    kernel cannot recognise it (a fixed NaN fill let a kernel test for it and skip its work
    where a TPU hands it stale data). Semaphores start at 0, as Mosaic allocates them."""
    if dtype is None:                                   # semaphores
        budget.allocate(int(np.prod(shape, dtype=np.float64)) * 4, persistent)
        return np.zeros(shape, np.int32)
    n = int(np.prod(shape, dtype=np.float64))
    budget.allocate(n * dtype.itemsize, persistent)
    bits = np.frombuffer(bytearray(rng.bytes(n * dtype.itemsize)), np.uint8)
    if dtype == np.bool_:
        return (bits & 1).astype(np.bool_).reshape(shape)
    return bits.view(dtype).reshape(shape)


def _is_float(dtype):
    return dtype.kind == "f" or dtype in (np.dtype(ml_dtypes.bfloat16),
                                          np.dtype(ml_dtypes.float8_e4m3fn),
                                          np.dtype(ml_dtypes.float8_e5m2))


def _up(x):
    """Low-precision floats computed in float32 (and rounded back by the caller), as numpy has
    no arithmetic of its own for them."""
    x = np.asarray(x)
    return x.astype(np.float32) if _is_float(x.dtype) and x.dtype.itemsize < 4 else x


def _unsigned(x):
    x = np.asarray(x)
    return x.view(_UNSIGNED[x.dtype]) if x.dtype in _UNSIGNED else x


def _cast(value, shape, dtype):
    value = np.asarray(value)
    if value.dtype != dtype:
        value = value.astype(dtype)
    if shape is not None and value.shape != shape:
        value = np.broadcast_to(value, shape)
    return value


def dense_value(attr, shape, dtype):
    """The numpy value of a constant attribute."""
    text = str(attr)
    if text in ("true", "false") and dtype == np.bool_:
        return np.asarray(text == "true")
    try:
        dense = ir.DenseElementsAttr(attr)
    except (ValueError, TypeError):
        dense = None
    if dense is None:
        try:
            value = ir.IntegerAttr(attr).value
        except (ValueError, TypeError):
            try:
                value = ir.FloatAttr(attr).value
            except (ValueError, TypeError):
                raise Unsupported(f"a constant {text[:80]}") from None
        return _cast(value, shape, dtype)
    if dense.is_splat:
        splat = dense.get_splat_value()
        try:
            value = ir.FloatAttr(splat).value
        except (ValueError, TypeError):
            value = 1 if str(splat) == "true" else 0 if str(splat) == "false" else \
                ir.IntegerAttr(splat).value
        return np.full(shape or (), value, dtype=np.float64 if _is_float(dtype) else None) \
            .astype(dtype)
    try:
        array = np.array(dense)
    except Exception:  # the bindings' buffer protocol does not cover every element type
        array = None
    if array is None or array.dtype == object or array.size != int(np.prod(shape or ())):
        raise Unsupported(f"a dense constant of {dtype} that numpy cannot read")
    if dtype == np.bool_:
        array = array.astype(np.bool_)
    return _cast(array.reshape(shape or ()), shape, dtype)


# -- attributes ---------------------------------------------------------------------------------

def _int(op, name, default=None):
    if name not in op.attributes:
        return default
    attr = op.attributes[name]
    try:
        return int(ir.IntegerAttr(attr).value)
    except (ValueError, TypeError):
        text = str(attr)
        if text in ("true", "false"):
            return int(text == "true")
        raise Unsupported(f"{op.name}'s attribute {name} = {text[:60]}") from None


def _ints(op, name):
    if name not in op.attributes:
        return None
    attr = op.attributes[name]
    for cls in (ir.DenseI64ArrayAttr, ir.DenseI32ArrayAttr, ir.DenseBoolArrayAttr):
        try:
            return [int(v) for v in cls(attr)]
        except (ValueError, TypeError):
            pass
    try:
        return [int(ir.IntegerAttr(a).value) for a in ir.ArrayAttr(attr)]
    except (ValueError, TypeError):
        raise Unsupported(f"{op.name}'s attribute {name} = {str(attr)[:60]}") from None


def _enum(op, name):
    """The keyword of an enum attribute (`#vector.kind<add>`, `#tpu.x<y>`, plain integers)."""
    if name not in op.attributes:
        return None
    text = str(op.attributes[name])
    if "<" in text:
        return text.split("<", 1)[1].rsplit(">", 1)[0].strip()
    return text.split(":")[0].strip()


def _bool(op, name):
    return name in op.attributes and str(op.attributes[name]).startswith("true")


# -- op semantics -------------------------------------------------------------------------------

def widened(fn):
    """fn on its operands widened to float32 (bf16 and narrower floats), as the ops compute."""
    return lambda *xs: fn(*[_up(x) for x in xs])


def _minimumf(a, b):
    """IEEE minimum: NaN propagates and -0 < +0 (numpy's minimum returns either zero). numpy
    picks an operand's bits, so `* 1` flushes a subnormal pick as XLA's minimum does."""
    out = np.minimum(a, b) * np.float32(1)
    zeros = (a == 0) & (b == 0)
    if zeros.any():
        out = np.where(zeros, np.where(np.signbit(a) | np.signbit(b), -0.0, 0.0), out)
    return out.astype(np.result_type(a, b))


def _maximumf(a, b):
    out = np.maximum(a, b) * np.float32(1)
    zeros = (a == 0) & (b == 0)
    if zeros.any():
        out = np.where(zeros, np.where(np.signbit(a) & np.signbit(b), -0.0, 0.0), out)
    return out.astype(np.result_type(a, b))


def _powf(x, y):
    """x ** y; a subnormal exponent is not 0 to XLA's pow (0 ** 1e-40 is 0, not 1) though
    subnormal arithmetic flushes, so it is replaced by the smallest normal of its sign, which
    gives the same result for every base."""
    y = np.asarray(y)
    if y.dtype == np.float32:   # read from the bits: arithmetic here already flushes them
        bits = y.view(np.uint32)
        subnormal = ((bits & 0x7F800000) == 0) & ((bits & 0x007FFFFF) != 0)
        if subnormal.any():
            tiny = np.where(bits >> 31, -np.finfo(np.float32).tiny, np.finfo(np.float32).tiny)
            y = np.where(subnormal, tiny.astype(np.float32), y)
    return np.power(x, y)


_BINARY = {
    "arith.addf": widened(np.add), "arith.subf": widened(np.subtract),
    "arith.mulf": widened(np.multiply), "arith.divf": widened(np.divide),
    "arith.remf": widened(np.fmod), "arith.maximumf": widened(_maximumf),
    "arith.minimumf": widened(_minimumf), "math.powf": widened(_powf),
    "math.atan2": widened(np.arctan2),
    "arith.addi": np.add, "arith.subi": np.subtract, "arith.muli": np.multiply,
    "arith.andi": np.bitwise_and, "arith.ori": np.bitwise_or, "arith.xori": np.bitwise_xor,
    "arith.maxsi": np.maximum, "arith.minsi": np.minimum,
    "arith.maxui": lambda a, b: np.maximum(_unsigned(a), _unsigned(b)),
    "arith.minui": lambda a, b: np.minimum(_unsigned(a), _unsigned(b)),
}


def _safe(b):
    return np.where(b == 0, 1, b)


def _divsi(a, b):
    """Division rounding toward zero, as XLA defines the cases C leaves undefined: x / 0 is -1
    and MIN / -1 is MIN (TPU interpret mode agrees; tests/judge/tpu_model/test_differential.py)."""
    a, b = np.asarray(a), np.asarray(b)
    q = np.abs(a.astype(np.int64)) // np.abs(_safe(b).astype(np.int64))
    q = np.where((a < 0) != (b < 0), -q, q)
    return np.where(b == 0, -1, q).astype(np.result_type(a, b))


def _remsi(a, b):
    """The remainder with the dividend's sign; x % 0 is x (XLA)."""
    a, b = np.asarray(a), np.asarray(b)
    r = np.abs(a.astype(np.int64)) % np.abs(_safe(b).astype(np.int64))
    r = np.where(a < 0, -r, r)
    return np.where(b == 0, a, r).astype(np.result_type(a, b))


def _divui(a, b):
    a, b = _unsigned(a), _unsigned(b)
    return np.where(b == 0, np.iinfo(a.dtype).max if a.dtype != np.bool_ else True,
                    a // _safe(b)).astype(a.dtype)


def _remui(a, b):
    a, b = _unsigned(a), _unsigned(b)
    return np.where(b == 0, a, a % _safe(b)).astype(a.dtype)


def _shift(fn, fill):
    """A shift by at least the bit width (or a negative amount, read as unsigned) gives 0, or
    the sign for an arithmetic right shift (XLA), where numpy's C shift is undefined."""
    def shift(a, b):
        a, b = np.asarray(a), np.asarray(b)
        bits = a.dtype.itemsize * 8
        wide = _unsigned(b).astype(np.uint64)
        inside = wide < bits
        out = fn(a, np.where(inside, b, 0).astype(a.dtype))
        return np.where(inside, out, fill(a)).astype(out.dtype)
    return shift


_BINARY.update({
    "arith.divsi": _divsi, "arith.remsi": _remsi, "arith.divui": _divui, "arith.remui": _remui,
    "arith.shli": _shift(np.left_shift, lambda a: np.zeros_like(a)),
    "arith.shrsi": _shift(np.right_shift, lambda a: np.where(a < 0, -1, 0)),
    "arith.shrui": _shift(lambda a, b: np.right_shift(_unsigned(a), _unsigned(b)),
                          lambda a: np.zeros_like(_unsigned(a))),
})


def _subnormal(x):
    """Where x (float32) is subnormal, read from its bits (arithmetic here flushes them)."""
    x = np.asarray(x)
    if x.dtype != np.float32:
        return np.zeros(x.shape, bool)
    bits = x.view(np.uint32)
    return ((bits & 0x7F800000) == 0) & ((bits & 0x007FFFFF) != 0)


def _identity_near_zero(fn):
    """tanh, sin, tan of a subnormal x are x itself in XLA (and TPU interpret mode): their
    small-argument path returns the argument's bits rather than computing with it."""
    def run(x):
        out = fn(x)
        tiny = _subnormal(x)
        return np.where(tiny, x, out) if tiny.any() else out
    return run


def _negf(x):
    """A sign flip of the bits, as XLA's negate (numpy's would flush a subnormal)."""
    x = np.asarray(x)
    unsigned = np.dtype(f"u{x.dtype.itemsize}")
    sign = np.array(1 << (8 * x.dtype.itemsize - 1), unsigned)
    return (np.ascontiguousarray(x).view(unsigned) ^ sign).view(x.dtype)


def _round_half_away(x):
    """math.round: half away from zero, keeping the sign of zero (-0.4 -> -0.0)."""
    t = np.trunc(x)
    out = np.where(np.abs(x - t) >= 0.5, t + np.copysign(np.ones_like(x), x), t)
    return np.copysign(out, x)


def _erf(x):
    import scipy.special
    return scipy.special.erf(x)


_UNARY = {
    "math.exp": np.exp, "math.exp2": np.exp2, "math.log": np.log, "math.log1p": np.log1p,
    "math.tanh": _identity_near_zero(np.tanh), "math.sqrt": np.sqrt,
    "math.rsqrt": lambda x: 1.0 / np.sqrt(x), "math.sin": _identity_near_zero(np.sin),
    "math.cos": np.cos, "math.tan": _identity_near_zero(np.tan), "math.erf": _erf,
    "math.absf": np.abs, "math.floor": np.floor, "math.ceil": np.ceil,
    "math.roundeven": np.rint, "math.round": _round_half_away, "math.absi": np.abs,
}

_CMPF = {1: lambda a, b: a == b, 2: lambda a, b: a > b, 3: lambda a, b: a >= b,
         4: lambda a, b: a < b, 5: lambda a, b: a <= b}
_CMPI = {0: np.equal, 1: np.not_equal, 2: np.less, 3: np.less_equal, 4: np.greater,
         5: np.greater_equal}
_CMPI_UNSIGNED = {6: np.less, 7: np.less_equal, 8: np.greater, 9: np.greater_equal}

_CASTS = {"arith.truncf", "arith.extf", "arith.sitofp", "arith.trunci", "arith.index_cast",
          "tpu.assume_multiple"}

_REDUCE = {"add": np.sum, "maximumf": np.max, "minimumf": np.min, "maxsi": np.max,
           "minsi": np.min}
_COMBINE = {"add": np.add, "maximumf": np.maximum, "minimumf": np.minimum, "maxsi": np.maximum,
            "minsi": np.minimum}


def _ordered_not_equal(a, b):
    """arith.cmpf one. Pallas lowers every float `!=` (and jnp.isnan, x != x) to it. The op is
    false when either side is NaN; TPU interpret mode, evaluating lax.ne, says true. Which a
    TPU's compare gives is not known here, and a kernel can branch on it (a NaN test on memory
    it never wrote), so a NaN operand is refused rather than guessed."""
    a, b = _up(a), _up(b)
    if np.isnan(a).any() or np.isnan(b).any():
        raise Unsupported("arith.cmpf one (a float !=, or jnp.isnan) of a NaN: the Mosaic op "
                          "says false, Pallas TPU interpret mode true")
    return a != b


def _dot_numbers(op):
    """(lhs contracting, rhs contracting, lhs batch, rhs batch, output dim order) of a
    tpu.matmul, or None for its plain 2-D form."""
    if "dimension_numbers" not in op.attributes:
        return None
    text = str(op.attributes["dimension_numbers"])
    if not text.startswith("#tpu.dot_dimension_numbers<"):
        raise Unsupported(f"tpu.matmul dimension numbers {text[:80]}")
    body = text[len("#tpu.dot_dimension_numbers<"):].rsplit(">", 1)[0]
    groups, depth, current = [], 0, ""
    for ch in body:
        if ch == "[":
            depth += 1
            current = ""
        elif ch == "]":
            depth -= 1
            groups.append([int(v) for v in current.split(",") if v.strip()])
        elif depth:
            current += ch
    if len(groups) != 7:
        raise Unsupported(f"tpu.matmul dimension numbers {text[:80]}")
    lhs_c, rhs_c, lhs_nc, rhs_nc, order, lhs_b, rhs_b = groups
    return lhs_c, rhs_c, lhs_nc, rhs_nc, list(zip(order[::2], order[1::2])), lhs_b, rhs_b


def _matmul(op):
    numbers = _dot_numbers(op)
    transpose_lhs, transpose_rhs = _bool(op, "transpose_lhs"), _bool(op, "transpose_rhs")
    if "precision" in op.attributes and "fp32" not in str(op.attributes["precision"]) and \
            "bf16" not in str(op.attributes["precision"]):
        raise Unsupported(f"tpu.matmul precision {op.attributes['precision']}")

    def run(lhs, rhs, acc):
        a, b = np.asarray(lhs, np.float32), np.asarray(rhs, np.float32)
        if numbers is None:
            a = a.T if transpose_lhs else a
            b = b.T if transpose_rhs else b
            out = a @ b
        else:
            lhs_c, rhs_c, lhs_nc, rhs_nc, order, lhs_b, rhs_b = numbers
            if transpose_lhs or transpose_rhs:
                raise Unsupported("tpu.matmul with both dimension numbers and transposes")
            a = np.transpose(a, lhs_b + lhs_nc + lhs_c)
            b = np.transpose(b, rhs_b + rhs_c + rhs_nc)
            nb = len(lhs_b)
            batch = a.shape[:nb]
            a = a.reshape(batch + (int(np.prod(a.shape[nb:nb + len(lhs_nc)])), -1))
            m_shape = [np.asarray(lhs).shape[d] for d in lhs_nc]
            n_shape = [np.asarray(rhs).shape[d] for d in rhs_nc]
            b = b.reshape(batch + (a.shape[-1], -1))
            out = (a @ b).reshape(tuple(batch) + tuple(m_shape) + tuple(n_shape))
            # order lists (operand, dim) pairs of the result; batch dims lead.
            natural = [(0, d) for d in lhs_nc] + [(1, d) for d in rhs_nc]
            if order and order != natural:
                perm = list(range(nb)) + [nb + natural.index(p) for p in order]
                out = np.transpose(out, perm)
        return np.asarray(acc, np.float32) + out
    return run


def _pure(op):
    """A function of the operands' values for an op without effects or regions, else None."""
    name = op.name
    if name in _BINARY:
        return _BINARY[name]
    if name in _UNARY:
        fn = _UNARY[name]
        return lambda x: fn(_up(x))
    if name == "arith.negf":
        return _negf
    if name == "arith.cmpf":
        predicate = _int(op, "predicate")
        if predicate not in _CMPF_MODELLED:
            raise Unsupported(f"arith.cmpf predicate {predicate}")
        if predicate == 6:
            return _ordered_not_equal
        return lambda a, b: _CMPF[predicate](_up(a), _up(b))
    if name == "arith.cmpi":
        predicate = _int(op, "predicate")
        if predicate not in _CMPI_MODELLED:
            raise Unsupported(f"arith.cmpi predicate {predicate}")
        if predicate in _CMPI:
            return _CMPI[predicate]
        return lambda a, b: _CMPI_UNSIGNED[predicate](_unsigned(a), _unsigned(b))
    if name == "arith.select":
        return lambda c, a, b: np.where(c, a, b)
    if name in _CASTS:
        return lambda x: x   # _cast converts to the result's type
    if name == "arith.extsi":
        # A signed i1 is 0 or -1.
        return lambda x: -np.asarray(x, np.int64) if np.asarray(x).dtype == np.bool_ else x
    if name == "arith.extui":
        return lambda x: _unsigned(x)
    if name == "arith.uitofp":
        return lambda x: _unsigned(x).astype(np.float64)
    if name in ("arith.fptosi", "arith.fptoui"):
        # Saturating, NaN to 0 (XLA's convert); clipped in float64, where the int32 bounds are
        # exact (in float32 INT_MAX rounds up to 2^31 and wraps).
        out = type_info(op.results[0].type)[1]
        if name == "arith.fptoui":
            out = _UNSIGNED.get(out, out)
        info = np.iinfo(out)
        return lambda x: np.clip(np.trunc(np.nan_to_num(np.asarray(x, np.float64))),
                                 info.min, info.max).astype(out)
    if name == "arith.bitcast":
        out = type_info(op.results[0].type)[1]
        return lambda x: np.asarray(x).view(out)
    if name == "vector.broadcast":
        return lambda x: x   # _cast broadcasts to the result's shape
    if name == "vector.shape_cast":
        shape = type_info(op.results[0].type)[0]
        return lambda x: np.reshape(x, shape)
    if name == "tpu.transpose":
        perm = _ints(op, "permutation")
        return lambda x: np.transpose(x, perm)
    if name == "vector.extract_strided_slice":
        offsets, sizes = _ints(op, "offsets"), _ints(op, "sizes")
        strides = _ints(op, "strides") or [1] * len(offsets)
        index = tuple(slice(o, o + s * st, st) for o, s, st in zip(offsets, sizes, strides))
        return lambda x: np.asarray(x)[index]
    if name == "vector.extract":
        static = _ints(op, "static_position") or []
        if any(p < 0 for p in static):
            raise Unsupported("vector.extract at a dynamic position")
        return lambda x, *dynamic: np.asarray(x)[tuple(static)]
    if name == "vector.multi_reduction":
        kind, dims = _enum(op, "kind"), _ints(op, "reduction_dims")
        if kind not in _REDUCTIONS_MODELLED:
            raise Unsupported(f"vector.multi_reduction kind {kind}")
        return lambda x, acc: _COMBINE[kind](_up(acc), _REDUCE[kind](_up(x), axis=tuple(dims)))
    if name == "tpu.matmul":
        return _matmul(op)
    if name == "tpu.iota":
        shape, _ = type_info(op.results[0].type)
        dims = _ints(op, "dimensions")
        if dims is None:
            dims = [_int(op, "dimension")]
        if len(dims) != 1:
            raise Unsupported(f"tpu.iota over dimensions {dims}")
        return lambda: np.indices(shape)[dims[0]]
    if name == "tpu.concatenate":
        axis = _int(op, "dimension")
        return lambda *xs: np.concatenate(xs, axis=axis)
    if name == "tpu.dynamic_rotate":
        if _int(op, "stride") not in (None, 0) or "stride_dimension" in op.attributes:
            raise Unsupported(f"{name} with a stride")
        axis = _int(op, "dimension")
        return lambda x, amount: np.roll(x, int(amount), axis=axis)
    if name == "tpu.reduce_index":
        # jnp.argmax / argmin: the first index of the extreme, a NaN counting as the extreme
        # (numpy's and XLA's rule).
        kind, axis = _enum(op, "kind"), _int(op, "axis")
        shape = type_info(op.results[0].type)[0]
        pick = {"arg_max": np.argmax, "arg_min": np.argmin}.get(kind)
        if pick is None:
            raise Unsupported(f"tpu.reduce_index kind {kind}")
        return lambda x: pick(_up(x), axis=axis).reshape(shape)
    if name == "tpu.weird":
        return lambda x: ~np.isfinite(_up(x))     # NaN or +-inf (jnp.isfinite's negation)
    if name == "math.ctlz":
        return _count_leading_zeros
    if name == "math.ctpop":
        return lambda x: np.unpackbits(np.ascontiguousarray(x).view(np.uint8)).reshape(
            np.shape(x) + (-1,)).sum(-1, dtype=np.int64)
    if name == "tpu.bitcast":
        shape, out = type_info(op.results[0].type)
        return lambda x: _bitcast(x, shape, out)
    return None


def _count_leading_zeros(x):
    x = np.asarray(x)
    bits = 8 * x.dtype.itemsize
    v = _unsigned(x).astype(np.float64)         # exact below 2^53
    top = np.floor(np.log2(np.where(v == 0, 1, v)))
    return np.where(v == 0, bits, bits - 1 - top).astype(np.int64)


def _bitcast(x, shape, dtype):
    x = np.ascontiguousarray(x)
    if x.dtype.itemsize == dtype.itemsize:
        return x.view(dtype).reshape(shape)
    raise Unsupported(f"tpu.bitcast from {x.dtype} to {dtype} (packed layouts)")


_EFFECT_FREE_NOOPS = {"tpu.trace_start", "tpu.trace_stop"}
_SEMAPHORES = {"tpu.sem_signal", "tpu.sem_wait"}
_DMA_WAITS = {"tpu.wait_dma2"}


# Every op the interpreter runs, each checked against Pallas TPU interpret mode on edge values
# by tests/judge/tpu_model/test_differential.py (which fails when an op here is not covered).
# Any other op is Unsupported, even where a table below could compute it: an unchecked op is
# one a forger could aim at.
MODELLED_OPS = frozenset({
    "arith.addf", "arith.addi", "arith.andi", "arith.bitcast", "arith.cmpf", "arith.cmpi",
    "arith.constant", "arith.divf", "arith.divsi", "arith.divui", "arith.extf", "arith.extsi",
    "arith.extui", "arith.fptosi", "arith.fptoui", "arith.index_cast", "arith.maximumf",
    "arith.maxsi", "arith.maxui", "arith.minimumf", "arith.minsi", "arith.minui", "arith.mulf",
    "arith.muli", "arith.negf", "arith.ori", "arith.remf", "arith.remsi", "arith.remui",
    "arith.select", "arith.shli", "arith.shrsi", "arith.shrui", "arith.sitofp", "arith.subf",
    "arith.subi", "arith.truncf", "arith.trunci", "arith.uitofp", "arith.xori",
    "func.func", "func.return",
    "math.absf", "math.absi", "math.atan2", "math.ceil", "math.cos", "math.ctlz", "math.ctpop",
    "math.erf", "math.exp", "math.exp2", "math.floor", "math.log", "math.log1p", "math.powf",
    "math.round", "math.roundeven", "math.rsqrt", "math.sin", "math.sqrt", "math.tan",
    "math.tanh",
    "memref.alloca", "memref.load", "memref.store",
    "scf.condition", "scf.for", "scf.if", "scf.while", "scf.yield",
    "tpu.assume_multiple", "tpu.bitcast", "tpu.concatenate", "tpu.dynamic_rotate",
    "tpu.enqueue_dma", "tpu.iota", "tpu.matmul", "tpu.memref_slice", "tpu.memref_squeeze",
    "tpu.reduce_index", "tpu.region", "tpu.sem_alloc", "tpu.sem_signal", "tpu.sem_wait",
    "tpu.strided_load", "tpu.strided_store", "tpu.trace_start", "tpu.trace_stop",
    "tpu.transpose", "tpu.vector_store", "tpu.wait_dma2", "tpu.weird", "tpu.yield",
    "vector.broadcast", "vector.extract", "vector.extract_strided_slice", "vector.load",
    "vector.multi_reduction", "vector.shape_cast",
})
# Predicates and reduction kinds Pallas emits (and the differential test covers).
_CMPF_MODELLED = {1, 2, 3, 4, 5, 6}           # oeq ogt oge olt ole one
_CMPI_MODELLED = set(range(10))               # eq ne slt sle sgt sge ult ule ugt uge
_REDUCTIONS_MODELLED = {"add", "maximumf", "minimumf", "maxsi", "minsi"}


# -- compiled form --------------------------------------------------------------------------------

class _Op:
    __slots__ = ("name", "fn", "ins", "outs", "out_types", "blocks", "op", "size", "macs",
                 "static")

    def __init__(self, name):
        self.name = name
        self.fn = None
        self.ins = self.outs = self.out_types = ()
        self.blocks = []
        self.size = 0
        self.macs = 0
        self.static = None


class _Block:
    __slots__ = ("args", "ops", "terminator")


def _values(op, types):
    return [t for r, t in zip(op.results, types) if not str(r.type).startswith("memref<")
            and t[1] is not None]


class _Compiler:
    """Turns the module's functions into _Block/_Op trees once, so that each grid step runs
    Python closures rather than re-reading MLIR attributes."""

    def __init__(self, module):
        self.ids = {}
        self.functions = {}
        for op in module.body.operations:
            op = op.operation
            if op.name == "func.func":
                self.functions[ir.StringAttr(op.attributes["sym_name"]).value] = op
        self.compiled = {}

    def vid(self, value):
        key = value
        if key not in self.ids:
            self.ids[key] = len(self.ids)
        return self.ids[key]

    def function(self, name):
        if name not in self.compiled:
            if name not in self.functions:
                raise Unsupported(f"a call to @{name}, which the module does not define")
            self.compiled[name] = None   # recursion guard
            self.compiled[name] = self.block(self.functions[name].regions[0].blocks[0])
        if self.compiled[name] is None:
            raise Unsupported(f"a recursive call to @{name}")
        return self.compiled[name]

    def block(self, block):
        compiled = _Block()
        compiled.args = [self.vid(a) for a in block.arguments]
        ops = [o.operation for o in block.operations]
        compiled.ops = [self.op(o) for o in ops[:-1]] if ops else []
        last = ops[-1] if ops else None
        if last is not None and last.name in ("func.return", "scf.yield", "scf.condition",
                                              "tpu.yield"):
            compiled.terminator = [self.vid(v) for v in last.operands]
        else:
            if last is not None:
                compiled.ops.append(self.op(last))
            compiled.terminator = []
        return compiled

    def op(self, op):
        name = op.name
        if name not in MODELLED_OPS:
            raise Unsupported(f"the op {name}")
        c = _Op(name)
        c.op = op
        c.ins = [self.vid(v) for v in op.operands]
        c.outs = [self.vid(r) for r in op.results]
        c.out_types = [type_info(r.type) for r in op.results]
        # Views (memrefs, semaphores) cost nothing to make; values cost their elements.
        c.size = sum(int(np.prod(s)) if s else 1 for s, _ in _values(op, c.out_types))
        check_result_bytes(name, _values(op, c.out_types))
        if name == "arith.constant":
            shape, dtype = c.out_types[0]
            value = dense_value(op.attributes["value"], shape, dtype)
            c.fn = lambda: value
            c.size = 0
            return c
        fn = _pure(op)
        if fn is not None:
            if op.regions and any(len(r.blocks) for r in op.regions):
                raise Unsupported(f"{name} with a region")
            c.fn = fn
            if name == "tpu.matmul":
                # Multiply-adds: out x K, K = sqrt(lhs x rhs / out) (as kernel_work counts).
                lhs, rhs = (int(np.prod(type_info(v.type)[0] or ())) for v in op.operands[:2])
                out = max(int(np.prod(c.out_types[0][0] or ())), 1)
                c.macs = out * max(int(math.sqrt(lhs * rhs / out)), 1)
            return c
        if name in ("scf.for", "scf.if", "scf.while", "tpu.region"):
            c.blocks = [self.block(r.blocks[0]) for r in op.regions if len(r.blocks)]
            return c
        if name in _MEMORY or name in _EFFECT_FREE_NOOPS or name in _DMA_WAITS or \
                name in _SEMAPHORES:
            c.static = _memory_static(op)
            return c
        raise Unsupported(f"the op {name}")


# -- memory -------------------------------------------------------------------------------------

_MEMORY = {"vector.load", "tpu.vector_store", "memref.load", "memref.store", "tpu.memref_slice",
           "tpu.memref_squeeze", "tpu.enqueue_dma", "memref.alloca", "tpu.sem_alloc",
           "tpu.strided_load", "tpu.strided_store"}


def _memory_static(op):
    name = op.name
    if name in ("tpu.vector_store", "tpu.strided_load", "tpu.strided_store"):
        strides = _ints(op, "strides")
        if strides and any(s != 1 for s in strides) and name == "tpu.vector_store":
            raise Unsupported(f"{name} with strides {strides}")
        return {"strides": strides}
    if name in ("tpu.enqueue_dma", "tpu.wait_dma2", "tpu.sem_signal"):
        segments = _ints(op, "operandSegmentSizes")
        return {"segments": segments}
    return None


def _window(ref, indices, shape, name="a load or store"):
    """The part of `ref` a load or store of `shape` at `indices` covers (trailing dims); an
    index outside the buffer (a negative one included: numpy would wrap it) is OutOfBounds."""
    lead = len(ref.shape) - len(shape)
    index = [int(i) for i in indices]
    slices = tuple(index[:lead]) if lead >= 0 else None
    if slices is None or len(index) != len(ref.shape):
        raise Unsupported(f"{name} of a higher rank than its memref")
    region = tuple(slice(i, i + s) for i, s in zip(index[lead:], shape))
    for i, s, d in zip(index[lead:], shape, ref.shape[lead:]):
        if i < 0 or i + s > d:
            raise OutOfBounds(f"{name} at {index} of {list(shape)} outside a "
                              f"{list(ref.shape)} buffer")
    for i, d in zip(index[:lead], ref.shape[:lead]):
        if not 0 <= i < d:
            raise OutOfBounds(f"{name} at {index} outside a {list(ref.shape)} buffer")
    return slices + region


def _element(ref, indices, name):
    """The index of one element (a scalar memory load or store), bounds-checked."""
    index = tuple(int(i) for i in indices)
    if len(index) != ref.ndim or any(not 0 <= i < d for i, d in zip(index, ref.shape)):
        raise OutOfBounds(f"{name} at {list(index)} outside a {list(ref.shape)} buffer")
    return index


def _strided(ref, indices, shape, strides, name):
    """The strided region of a tpu.strided_load/store, bounds-checked."""
    index = [int(i) for i in indices]
    if len(index) != ref.ndim or len(shape) != ref.ndim:
        raise Unsupported(f"{name} of a different rank than its memref")
    for i, s, st, d in zip(index, shape, strides, ref.shape):
        if st <= 0 or i < 0 or (s and i + (s - 1) * st >= d):
            raise OutOfBounds(f"{name} at {index} of {list(shape)} by {list(strides)} "
                              f"outside a {list(ref.shape)} buffer")
    return tuple(slice(i, i + s * st, st) for i, s, st in zip(index, shape, strides))


# -- the machine ----------------------------------------------------------------------------------

class _Machine:
    def __init__(self, budget, rng):
        self.budget = budget
        self.rng = rng          # fills what nothing wrote yet (uninitialized())
        # DMAs started and not yet waited on, per semaphore, oldest first: a copy lands when
        # its semaphore is waited on (TPU interpret mode's "on_wait"), so that a kernel that
        # reads a DMA's destination before the wait reads what a TPU may still hold there.
        self.pending = {}

    def block(self, block, env, args):
        for vid, value in zip(block.args, args):
            env[vid] = value
        for op in block.ops:
            self.op(op, env)
        return [env[v] for v in block.terminator]

    def op(self, c, env):
        # The hot path (paged attention runs ~10^6 ops): the budget inline, no re-cast of a
        # value that already has its type.
        budget = self.budget
        budget.ops -= 1
        budget.elements -= c.size
        budget.macs -= c.macs
        if budget.ops < 0 or budget.elements < 0 or budget.macs < 0:
            budget.charge(0, 0)
        if c.fn is not None:
            value = c.fn(*[env[v] for v in c.ins])
            if len(c.outs) == 1:
                shape, dtype = c.out_types[0]
                if type(value) is not np.ndarray or value.dtype != dtype or \
                        (shape is not None and value.shape != shape):
                    value = _cast(value, shape, dtype)
                env[c.outs[0]] = value
            return
        name = c.name
        ins = [env[v] for v in c.ins]
        if name == "scf.for":
            lower, upper, step = (int(v) for v in ins[:3])
            if step <= 0:
                raise Unsupported("scf.for with a step that is not positive")
            carried = ins[3:]
            for i in range(lower, upper, step):
                self.budget.charge(1, 0)
                carried = self.block(c.blocks[0], env,
                                     [np.asarray(i, np.asarray(ins[0]).dtype)] + carried)
            self._set(c, env, carried)
        elif name == "scf.if":
            taken = c.blocks[0] if bool(ins[0]) else (c.blocks[1] if len(c.blocks) > 1 else None)
            self._set(c, env, self.block(taken, env, []) if taken is not None else [])
        elif name == "scf.while":
            values = ins
            while True:
                self.budget.charge(1, 0)
                out = self.block(c.blocks[0], env, values)
                if not bool(out[0]):
                    self._set(c, env, out[1:])
                    break
                values = self.block(c.blocks[1], env, out[1:])
        elif name == "tpu.region":
            self._set(c, env, self.block(c.blocks[0], env, []))
        elif name in _EFFECT_FREE_NOOPS:
            return
        elif name in _DMA_WAITS:
            self.wait_dma(c, ins)
        elif name in _SEMAPHORES:
            self.semaphore(c, ins)
        else:
            self.memory(c, env, ins)

    def wait_dma(self, c, ins):
        """The oldest DMA started on this semaphore lands. A wait with none in flight can never
        be satisfied (a TPU hangs); one whose size is not that DMA's would be satisfied at a
        time that depends on the hardware, so it is refused rather than guessed."""
        segments = c.static["segments"] if c.static else None
        if segments and len(segments) > 3 and any(segments[3:]):
            raise Unsupported(f"{c.name} for a DMA of another device or core")
        queue = self.pending.get(_address(ins[0])) if ins else None
        if not queue:
            raise Deadlock(f"{c.name} on a semaphore no DMA in flight will signal")
        source, target = queue.pop(0)
        if c.name == "tpu.wait_dma2" and len(ins) >= 3 and np.asarray(ins[2]).size != target.size:
            raise Unsupported(f"{c.name} for {np.asarray(ins[2]).size} elements on a semaphore "
                              f"whose oldest DMA copies {target.size}")
        _land(source, target)

    def semaphore(self, c, ins):
        """signal adds, wait subtracts. One core runs the whole grid in order, so a wait for
        more than the semaphore holds can never be satisfied: a TPU deadlocks there."""
        sem, amount = ins[0], int(np.asarray(ins[1]))
        if _address(sem) in self.pending and self.pending[_address(sem)]:
            raise Unsupported(f"{c.name} on a semaphore with DMAs in flight")
        if c.name == "tpu.sem_signal":
            segments = c.static["segments"] if c.static else None
            if len(ins) > 2 or (segments and any(segments[2:])):
                raise Unsupported("tpu.sem_signal to another device or core")
            sem[...] = np.asarray(sem) + np.int32(amount)
            return
        if amount < 0 or int(np.asarray(sem)) < amount:
            raise Deadlock(f"tpu.sem_wait for {amount} on a semaphore holding "
                           f"{int(np.asarray(sem))} that nothing else can signal")
        sem[...] = np.asarray(sem) - np.int32(amount)

    def finish_dmas(self):
        """A DMA never waited on by the end of the kernel races with whatever reads its target
        next (the pipeline's copy-out, the next call); when it lands on a TPU is not modelled,
        so such a kernel is refused."""
        if any(self.pending.values()):
            self.pending.clear()
            raise Unsupported("tpu.enqueue_dma never waited on by the end of the kernel (a "
                              "race on a TPU)")
        self.pending.clear()

    @staticmethod
    def _set(c, env, values):
        for vid, value, (shape, dtype) in zip(c.outs, values, c.out_types):
            same = dtype is None or isinstance(value, np.ndarray) and value.dtype == dtype
            env[vid] = value if same else _cast(value, shape, dtype)

    def memory(self, c, env, ins):
        name = c.name
        if name in ("vector.load", "tpu.strided_load"):
            ref, indices = ins[0], ins[1:]
            shape, dtype = c.out_types[0]
            if name == "tpu.strided_load":
                value = ref[_strided(ref, indices, shape, c.static["strides"], name)]
            else:
                value = ref[_window(ref, indices[:len(ref.shape)], _trailing(shape, ref), name)]
            env[c.outs[0]] = _cast(np.array(value).reshape(shape), shape, dtype)
        elif name in ("tpu.vector_store", "tpu.strided_store"):
            value, ref = ins[0], ins[1]
            rest = ins[2:]
            mask = None
            if name == "tpu.vector_store" and len(rest) > len(ref.shape):
                mask, rest = rest[-1], rest[:len(ref.shape)]
            indices = rest
            value = np.asarray(value)
            if name == "tpu.strided_store":
                ref[_strided(ref, indices, value.shape, c.static["strides"], name)] = value
                return
            shape = _trailing(value.shape, ref)
            region = _window(ref, indices, shape, name)
            value = value.reshape(shape).astype(ref.dtype)
            if mask is not None:
                ref[region] = np.where(np.asarray(mask).reshape(shape), value, ref[region])
            else:
                ref[region] = value
        elif name == "memref.load":
            env[c.outs[0]] = np.asarray(ins[0][_element(ins[0], ins[1:], name)])
        elif name == "memref.store":
            ins[1][_element(ins[1], ins[2:], name)] = ins[0]
        elif name == "tpu.memref_slice":
            ref = ins[0]
            shape, _ = c.out_types[0]
            offsets = [int(i) for i in ins[1:1 + len(ref.shape)]]
            if len(ins) != 1 + len(ref.shape):
                raise Unsupported("tpu.memref_slice with dynamic sizes")
            env[c.outs[0]] = ref[_window(ref, offsets, shape, name)]
        elif name == "tpu.memref_squeeze":
            shape, _ = c.out_types[0]
            view = ins[0].reshape(shape)
            if not np.shares_memory(view, ins[0]):
                raise Unsupported(f"{name} that is not a view")
            env[c.outs[0]] = view
        elif name in ("memref.alloca", "tpu.sem_alloc"):
            shape, dtype = c.out_types[0]
            env[c.outs[0]] = uninitialized(shape or (), dtype, self.budget, self.rng)
        elif name == "tpu.enqueue_dma":
            self.dma(c, ins)
        else:
            raise Unsupported(f"the op {name}")

    def dma(self, c, ins):
        """A copy source -> target, landing at its wait. Operands (operandSegmentSizes):
        source, source semaphore?, target, target semaphore, device id?, core id?."""
        segments = c.static["segments"] if c.static else None
        if not segments or len(segments) < 4:
            raise Unsupported("tpu.enqueue_dma without operand segments")
        groups, at = [], 0
        for n in segments:
            groups.append(ins[at:at + n])
            at += n
        if len(segments) > 4 and any(groups[4:]):
            raise Unsupported("a DMA to another device or core")
        source, target = groups[0][0], groups[2][0]
        self.budget.charge(0, target.size)
        if source.size != target.size:
            raise Unsupported(f"a DMA from {source.shape} to {target.shape}")
        if not groups[3]:
            raise Unsupported("a DMA without a target semaphore")
        self.pending.setdefault(_address(groups[3][0]), []).append((source, target))


def _address(semaphore):
    """A semaphore's identity: where its (view's) element lives."""
    return np.asarray(semaphore).__array_interface__["data"][0]


def _land(source, target):
    target[...] = np.asarray(source).reshape(target.shape)


def _trailing(shape, ref):
    """A vector of `shape` against a memref of higher rank reads its trailing dims (Mosaic
    allows leading dims of 1 to be dropped)."""
    shape = tuple(shape)
    if len(shape) > len(ref.shape):
        squeezed = tuple(d for i, d in enumerate(shape) if not (d == 1 and
                                                                 i < len(shape) - len(ref.shape)))
        if len(squeezed) != len(ref.shape):
            raise Unsupported(f"a {shape} access to a {ref.shape} memref")
        return squeezed
    return shape


# -- a kernel -----------------------------------------------------------------------------------

def parse_body(backend_config):
    """(MLIR context, module) of the Mosaic body in a tpu_custom_call's backend_config,
    deserialized to the current Mosaic dialect version. Raises ValueError when it does not
    parse, OverBudget when it is larger than kernel_work.MAX_OPS."""
    raw = kernel_work.body_bytes(backend_config)
    context = jax_mlir.make_ir_context()
    tpu.register_dialect(context)
    with context, ir.Location.unknown():
        context.allow_unregistered_dialects = True
        try:
            module = ir.Module.parse(raw)
            PassManager.parse("builtin.module(mosaic-serde{serialize=false})").run(
                module.operation)
        except Exception as exc:  # MLIR's error types vary by version
            raise ValueError(f"the kernel's Mosaic body does not parse: {exc}") from None
        if kernel_work._count_ops(module.operation, kernel_work.MAX_OPS) > kernel_work.MAX_OPS:
            raise OverBudget(f"the Mosaic body has more than {kernel_work.MAX_OPS} ops")
    return context, module


def op_names(backend_config):
    """The names of every op in a kernel's Mosaic body (what the interpreter has to know)."""
    context, module = parse_body(backend_config)
    names = set()
    with context:
        stack = [module.operation]
        while stack:
            current = stack.pop()
            names.add(current.name)
            for region in current.regions:
                for block in region.blocks:
                    stack.extend(o.operation for o in block.operations)
    return names - {"builtin.module"}



class Kernel:
    """One Mosaic body, parsed and compiled once; run() any number of times."""

    def __init__(self, backend_config):
        self.context, self.module = parse_body(backend_config)
        with self.context, ir.Location.unknown():
            func = _kernel_function(self.module)
            # A kernel without a grid has no iteration bounds and no window params: one step,
            # every operand whole.
            self.grid = tuple(int(d) for d in ir.DenseI64ArrayAttr(
                func.attributes["iteration_bounds"])) \
                if "iteration_bounds" in func.attributes else ()
            self.parallel = [i for i, kind in enumerate(_semantics(func))
                             if kind in ("parallel", "core_parallel", "subcore_parallel")]
            # A grid dimension whose size is data (Mosaic's dynamic size, negative here) takes
            # its size from the custom call's leading operands, one per such dimension in order
            # (pallas_call_registration.py puts them first).
            self.dynamic = [i for i, d in enumerate(self.grid) if d < 0]
            self.prefetch = _int(func, "scalar_prefetch", 0)
            self.scratch = _int(func, "scratch_operands", 0)
            compiler = _Compiler(self.module)
            name = ir.StringAttr(func.attributes["sym_name"]).value
            self.body = compiler.function(name)
            args = list(func.regions[0].blocks[0].arguments)
            self.arg_types = [type_info(a.type) for a in args]
            self.windows = []
            params = ir.ArrayAttr(func.attributes["window_params"]) \
                if "window_params" in func.attributes else []
            for param in params:
                param = ir.DictAttr(param)
                keys = {param[i].name for i in range(len(param))}
                unknown = keys - {"transform_indices", "window_bounds", "pipeline_mode"}
                if unknown:
                    raise Unsupported(f"window params {sorted(unknown)}")
                transform = ir.FlatSymbolRefAttr(param["transform_indices"]).value \
                    if "transform_indices" in keys else None
                bounds = [int(d) for d in ir.DenseI64ArrayAttr(param["window_bounds"])] \
                    if "window_bounds" in keys else None
                self.windows.append((compiler.function(transform) if transform else None,
                                     bounds))
            first = len(self.grid) + self.prefetch
            if "window_params" not in func.attributes:
                self.windows = [(None, None)] * max(len(args) - first - self.scratch, 0)
            if len(args) != first + len(self.windows) + self.scratch:
                raise Unsupported(f"a kernel function of {len(args)} arguments for "
                                  f"{len(self.grid)} grid dims, {self.prefetch} prefetch, "
                                  f"{len(self.windows)} windows, {self.scratch} scratch")
            for i, (transform, bounds) in enumerate(self.windows):
                if transform is not None and bounds is None:
                    raise Unsupported("a window with an index map and no bounds")

    # What run() executes per call: work counted by wrapping the body's ops (kernel_work.py)
    # divides by it, so that a kernel's work is what one TPU call does.
    RUNS_PER_CALL = 2

    def run(self, operands, out_avals, aliases, budget):
        """Outputs ([numpy arrays] of out_avals' (shape, dtype)) for `operands` (the sizes of
        the grid's dynamic dimensions first, then the scalar prefetch operands, then the
        inputs). aliases: {output index: operand index}.

        The kernel runs twice: with uninitialised memory (outputs, scratch, the padding of an
        edge block) filled from two fresh random seeds, the second time with each "parallel"
        grid dimension visited in a random order (a TPU may split or reorder them). Outputs
        that differ bit for bit are Nondeterministic: they depend on what a TPU happens to hold
        or on an order it does not promise, so no one result of them can be judged."""
        seeds = np.random.SeedSequence().spawn(self.RUNS_PER_CALL)
        with flush_subnormals():
            first = self._run(operands, out_avals, aliases, budget,
                              np.random.default_rng(seeds[0]), permute=False)
            bytes_left = budget.bytes
            second = self._run(operands, out_avals, aliases, budget,
                               np.random.default_rng(seeds[1]), permute=True)
        budget.bytes = bytes_left    # the first run's outputs are what is kept
        for i, (a, b) in enumerate(zip(first, second)):
            if not _same_bits(a, b):
                raise Nondeterministic(
                    f"output {i} of the kernel depends on memory it never wrote (outputs, "
                    "scratch, the padding of an edge block, all random here) or on the order "
                    "of its \"parallel\" grid dimensions: two runs differ "
                    f"({_first_difference(a, b)})")
        return first

    def _run(self, operands, out_avals, aliases, budget, rng, permute):
        machine = _Machine(budget, rng)
        grid = list(self.grid)
        for dim, size in zip(self.dynamic, operands[:len(self.dynamic)]):
            grid[dim] = max(int(np.asarray(size).reshape(-1)[0]), 0)
        rest = operands[len(self.dynamic):]
        prefetch = [np.array(x) for x in rest[:self.prefetch]]
        # Writable copies: a memory-space-ANY input is read and written in place, and the
        # judge's own arrays (read-only views of JAX arrays) must not change.
        inputs = [np.array(x) for x in rest[self.prefetch:]]
        outputs = []
        for i, (shape, dtype) in enumerate(out_avals):
            if i in aliases:
                outputs.append(np.array(operands[aliases[i]]))
            else:
                outputs.append(uninitialized(shape, np.dtype(dtype), budget, rng))
        arrays = inputs + outputs
        if len(arrays) != len(self.windows):
            raise Unsupported(f"{len(arrays)} operands and results for {len(self.windows)} "
                              "windows")
        first = len(self.grid) + self.prefetch + len(self.windows)
        scratch = [uninitialized(shape or (), dtype, budget, rng)
                   for shape, dtype in self.arg_types[first:]]
        n_in = len(inputs)
        orders = [rng.permutation(size) if permute and dim in self.parallel else None
                  for dim, size in enumerate(grid)]
        # Each window's block buffer stays resident while its block index does not change, as
        # a TPU's pipeline keeps it: an input block is fetched only when its index changes (a
        # kernel that writes into its input block sees its own writes on the next step), and
        # an output block is never fetched at all, starting uninitialised at each new index,
        # first visit or revisit (a kernel that reads back an output block it wrote before
        # moving on reads what a chip would not hold). TPU interpret mode does the same.
        resident = [None] * len(self.windows)
        with np.errstate(all="ignore"):
            for point in np.ndindex(*grid) if grid else [()]:
                budget.charge(1, 0)
                point = [p if order is None else order[p] for p, order in zip(point, orders)]
                ids = [np.asarray(i, np.int32) for i in point]
                refs, writes = [], []
                for w, ((transform, bounds), array) in enumerate(zip(self.windows, arrays)):
                    arg_shape = self.arg_types[len(self.grid) + self.prefetch + w][0]
                    if transform is None:
                        refs.append(array)
                        continue
                    blocks = [int(b) for b in machine.block(transform, {}, ids + prefetch)]
                    if resident[w] is not None and resident[w][0] == blocks:
                        block = resident[w][1]
                    elif w < n_in:
                        block = _read_block(array, blocks, bounds, budget, rng)
                    else:
                        _block_region(array, blocks, bounds)  # checks the index
                        block = uninitialized(tuple(bounds), array.dtype, budget, rng,
                                              persistent=False)
                    resident[w] = (blocks, block)
                    view = block.reshape(arg_shape)
                    refs.append(view)
                    if w >= n_in:
                        writes.append((array, blocks, bounds, block))
                machine.block(self.body, {}, ids + prefetch + refs + scratch)
                for array, blocks, bounds, block in writes:
                    _write_block(array, blocks, bounds, block)
        # A DMA may stay in flight across grid steps (a prefetch for the next step, waited on
        # there, as upstream kernels double-buffer); one never waited on by the kernel's end is
        # refused.
        machine.finish_dmas()
        return outputs


def _kernel_function(module):
    """The kernel's func.func: the one with iteration bounds, or a grid-less module's only
    function."""
    funcs = [o.operation for o in module.body.operations if o.operation.name == "func.func"]
    gridded = [f for f in funcs if "iteration_bounds" in f.attributes]
    if len(gridded) == 1:
        return gridded[0]
    if not gridded and len(funcs) == 1:
        return funcs[0]
    raise Unsupported(f"a Mosaic body with {len(funcs)} functions, {len(gridded)} of them "
                      "with a grid")


def _semantics(func):
    """The dimension semantics keywords (parallel, arbitrary, ...) of the kernel's grid."""
    if "dimension_semantics" not in func.attributes:
        return []
    return [str(a).split("<", 1)[-1].rstrip(">").strip()
            for a in ir.ArrayAttr(func.attributes["dimension_semantics"])]


def _same_bits(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and \
        np.array_equal(a.view(np.uint8), b.view(np.uint8))


def _first_difference(a, b):
    a, b = np.asarray(a), np.asarray(b)
    differ = np.argwhere(np.ascontiguousarray(a).view(np.uint8).reshape(a.shape + (-1,))
                         != np.ascontiguousarray(b).view(np.uint8).reshape(b.shape + (-1,)))
    where = tuple(int(v) for v in differ[0][:-1]) if len(differ) else ()
    return f"at {list(where)}: {a[where]!r} vs {b[where]!r}" if len(differ) else "shapes"


def _block_region(array, blocks, bounds):
    """(the part of `array` the block covers, where it sits in the block). A block that is
    wholly outside the array (a negative block index included) is OutOfBounds: on a TPU its
    copy reads or writes memory past the array. A partial edge block is legitimate."""
    if len(blocks) != len(bounds) or len(bounds) != array.ndim:
        raise Unsupported(f"a block index of rank {len(blocks)} for a {array.shape} array")
    starts = [b * s for b, s in zip(blocks, bounds)]
    if any(b < 0 or (st >= d and d > 0) for b, st, d in zip(blocks, starts, array.shape)):
        raise OutOfBounds(f"the block index {blocks} of a {bounds} window outside a "
                          f"{list(array.shape)} array")
    inside = tuple(slice(max(st, 0), min(st + s, d)) for st, s, d in
                   zip(starts, bounds, array.shape))
    local = tuple(slice(sl.start - st, sl.stop - st) for sl, st in zip(inside, starts))
    return inside, local


def _read_block(array, blocks, bounds, budget, rng):
    inside, local = _block_region(array, blocks, bounds)
    if all(sl.start == 0 and sl.stop == d for sl, d in zip(local, bounds)):
        return np.array(array[inside])
    block = uninitialized(tuple(bounds), array.dtype, budget, rng, persistent=False)
    if all(sl.stop > sl.start for sl in local):
        block[local] = array[inside]
    return block


def _write_block(array, blocks, bounds, block):
    inside, local = _block_region(array, blocks, bounds)
    if all(sl.stop > sl.start for sl in local):
        array[inside] = block[local]
