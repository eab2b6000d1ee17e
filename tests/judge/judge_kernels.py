"""Hand-written candidate sources for the judge tests, one per verdict, all for workload 8p
(GEMM: A [1024,2048] @ B [2048,1024] at CPU_CONFIG). Each is a real module as an LLM would write it.
"""

_GEMM_TEMPLATE = '''
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

def _kernel(a_ref, b_ref, o_ref, acc_ref):
    @pl.when(pl.program_id(2) == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)
    acc_ref[...] += jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)
    @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
    def _():
        o_ref[...] = (acc_ref[...] * SCALE).astype(o_ref.dtype)

def workload(A, B):
    M, K = A.shape
    _, N = B.shape
    bm, bn, bk = BLOCKS
    return pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct((OUT_M, N), A.dtype),
        grid=(M // bm, N // bn, K // bk),
        in_specs=[pl.BlockSpec((bm, bk), lambda i, j, k: (i, k)),
                  pl.BlockSpec((bk, bn), B_INDEX_MAP)],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j, k: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel", "parallel", "arbitrary")),
        interpret=True,  # LLMs copy this from CPU examples; the judge must override it
    )(A, B)
'''


# A 4x4x4 grid at 8p's CPU shapes: several blocks on every axis (output blocks written and
# skipped, a K accumulation with its first and last step) and few steps. Each evaluation of a
# kernel built on these interprets every grid step twice (the candidate process's TPU interpret
# mode and the judge's Mosaic interpreter), and the suite evaluates them about a hundred times:
# (128, 128, 256), an 8x8x8 grid, made a correct one's evaluation take about twice as long.
GEMM_BLOCKS = (256, 256, 512)


def gemm(blocks=str(GEMM_BLOCKS), scale="1.0", out_m="M", b_index_map="lambda i, j, k: (k, j)"):
    return (_GEMM_TEMPLATE.replace("BLOCKS", blocks).replace("SCALE", scale)
            .replace("OUT_M", out_m).replace("B_INDEX_MAP", b_index_map))


CORRECT = gemm()
SYNTAX_ERROR = "import jax\n\ndef workload(A, B)\n    return A @ B\n"
IMPORT_ERROR = "import jax\nfrom jax.experimental.pallas import no_such_module\n"
MISSING_WORKLOAD = "import jax\n\ndef kernel(A, B):\n    return A @ B\n"
LINT_REMOVED_NAME = gemm().replace("pltpu.CompilerParams", "pltpu.TPUCompilerParams")
LINT_OS = "import os\n" + gemm()
# index_map takes 3 grid indices; giving it 2 is rejected while tracing.
API_MISUSE = gemm(b_index_map="lambda k, j: (k, j)")
# (256, 100) blocks break the TPU (8, 128) rule, which only the Mosaic lowering checks.
LOWERING_ERROR = gemm(blocks="(128, 100, 256)")
SHAPE_MISMATCH = gemm(out_m="M // 2")
NUMERICS_MISMATCH = gemm(scale="1.5")
# B's block index runs one past the end: traces and lowers fine, TPU interpret mode raises.
RUNTIME_ERROR = gemm(b_index_map="lambda i, j, k: (k + 1, j)")
NO_PALLAS = "import jax.numpy as jnp\n\ndef workload(A, B):\n    return jnp.matmul(A, B)\n"
# The baseline returns bfloat16; a float32 output is more accurate and still the wrong program.
FLOAT32_OUTPUT = CORRECT.replace("jax.ShapeDtypeStruct((M, N), A.dtype)",
                                 "jax.ShapeDtypeStruct((M, N), jnp.float32)")
# An assertion without a message in the candidate's own code.
BARE_ASSERT = CORRECT.replace("    M, K = A.shape", "    M, K = A.shape\n    assert M < 0")
# Blocks of 2048 rows over 1024 rows: M // bm == 0, so the grid has no iterations.
EMPTY_GRID = gemm(blocks="(2048, 128, 256)")

# Stores to o_ref on a K step that never comes (num_programs, not num_programs - 1); in TPU
# interpret mode the output buffer starts as NaN.
UNWRITTEN_OUTPUT = CORRECT.replace("pl.program_id(2) == pl.num_programs(2) - 1",
                                   "pl.program_id(2) == pl.num_programs(2)")

PRINTING = 'print("hello from the candidate")\n' + CORRECT.replace(
    "    M, K = A.shape", '    print("tracing workload", flush=True)\n    M, K = A.shape')


# One correct kernel per workload, at CPU_CONFIG shapes, for the per-workload test and the
# interpret-mode cost measurement (measure_modes.py).
RMSNORM = '''
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

EPS = 1e-5

def _kernel(x_ref, scale_ref, o_ref):
    x = x_ref[...].astype(jnp.float32)
    normed = x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + EPS)
    o_ref[...] = normed.astype(o_ref.dtype) * scale_ref[...]

def workload(x, scale):
    B, S, D = x.shape
    rows = x.reshape(B * S, D)
    bm = 64
    out = pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct(rows.shape, x.dtype),
        grid=(B * S // bm,),
        in_specs=[pl.BlockSpec((bm, D), lambda i: (i, 0)), pl.BlockSpec((1, D), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((bm, D), lambda i: (i, 0)),
    )(rows, scale.reshape(1, D))
    return out.reshape(B, S, D)
'''

GEMM_ADD_RELU = gemm().replace(
    "o_ref[...] = (acc_ref[...] * 1.0).astype(o_ref.dtype)",
    "o_ref[...] = jnp.maximum(acc_ref[...] + bias_ref[...].astype(jnp.float32), 0.0).astype(o_ref.dtype)",
).replace("def _kernel(a_ref, b_ref, o_ref, acc_ref):",
          "def _kernel(a_ref, b_ref, bias_ref, o_ref, acc_ref):",
).replace("def workload(A, B):", "def workload(A, B, bias):",
).replace("                  pl.BlockSpec((bk, bn), lambda i, j, k: (k, j))],",
          "                  pl.BlockSpec((bk, bn), lambda i, j, k: (k, j)),\n"
          "                  pl.BlockSpec((1, bn), lambda i, j, k: (0, j))],",
).replace(")(A, B)", ")(A, B, bias.reshape(1, -1))")

# Fits v6e's 32 MiB scoped VMEM at the full shapes (the compile tier compiles it for a v6e): the
# gate/up pass keeps a (128, E) token block and two (E, 256) weight strips, double-buffered,
# about 20 MiB at E = 8192; the down projection is K-tiled with a float32 accumulator.
SWIGLU = '''
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

def _gate_up_kernel(x_ref, g_ref, u_ref, h_ref):
    x = x_ref[...]
    gate = jnp.dot(x, g_ref[...], preferred_element_type=jnp.float32)
    up = jnp.dot(x, u_ref[...], preferred_element_type=jnp.float32)
    h_ref[...] = (jax.nn.silu(gate) * up).astype(h_ref.dtype)

def _down_kernel(h_ref, d_ref, o_ref, acc_ref):
    @pl.when(pl.program_id(2) == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(h_ref[...], d_ref[...], preferred_element_type=jnp.float32)

    @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)
    def _():
        o_ref[...] = acc_ref[...].astype(o_ref.dtype)

def workload(x, gate_kernel, up_kernel, down_kernel):
    B, S, E = x.shape
    M = gate_kernel.shape[1]
    tokens = x.reshape(B * S, E)
    T = B * S
    bt, bm, be, bk = 128, 256, 256, 512
    h = pl.pallas_call(
        _gate_up_kernel,
        out_shape=jax.ShapeDtypeStruct((T, M), x.dtype),
        grid=(T // bt, M // bm),
        in_specs=[pl.BlockSpec((bt, E), lambda i, j: (i, 0)),
                  pl.BlockSpec((E, bm), lambda i, j: (0, j)),
                  pl.BlockSpec((E, bm), lambda i, j: (0, j))],
        out_specs=pl.BlockSpec((bt, bm), lambda i, j: (i, j)),
    )(tokens, gate_kernel, up_kernel)
    out = pl.pallas_call(
        _down_kernel,
        out_shape=jax.ShapeDtypeStruct((T, E), x.dtype),
        grid=(T // bt, E // be, M // bk),
        in_specs=[pl.BlockSpec((bt, bk), lambda i, j, k: (i, k)),
                  pl.BlockSpec((bk, be), lambda i, j, k: (k, j))],
        out_specs=pl.BlockSpec((bt, be), lambda i, j, k: (i, j)),
        scratch_shapes=[pltpu.VMEM((bt, be), jnp.float32)],
    )(h, down_kernel)
    return out.reshape(B, S, E)
'''

ATTENTION = '''
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

BQ = 128

def _kernel(q_ref, k_ref, v_ref, o_ref):
    q = q_ref[0, 0]
    k = k_ref[0, 0]
    v = v_ref[0, 0]
    S, D = k.shape
    s = jax.lax.dot_general(q, k, (((1,), (1,)), ((), ())), preferred_element_type=jnp.float32)
    s = s * (D ** -0.5)
    rows = pl.program_id(2) * BQ + jax.lax.broadcasted_iota(jnp.int32, s.shape, 0)
    cols = jax.lax.broadcasted_iota(jnp.int32, s.shape, 1)
    s = jnp.where(cols <= rows, s, -1e30)
    p = jnp.exp(s - jnp.max(s, axis=-1, keepdims=True))
    p = p / jnp.sum(p, axis=-1, keepdims=True)
    o = jnp.dot(p.astype(v.dtype), v, preferred_element_type=jnp.float32)
    o_ref[0, 0] = o.astype(o_ref.dtype)

def workload(query, key, value):
    B, H, S, D = query.shape
    q_spec = pl.BlockSpec((1, 1, BQ, D), lambda b, h, i: (b, h, i, 0))
    kv_spec = pl.BlockSpec((1, 1, S, D), lambda b, h, i: (b, h, 0, 0))
    return pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct(query.shape, query.dtype),
        grid=(B, H, S // BQ),
        in_specs=[q_spec, kv_spec, kv_spec],
        out_specs=q_spec,
    )(query, key, value)
'''

WORKLOAD_KERNELS = {"8p": CORRECT, "12p": RMSNORM, "9p": SWIGLU, "41k": GEMM_ADD_RELU,
                    "1p": ATTENTION}


# --- strict-verification cheats (docs/verification.md) -------------------------------------

# Write only one row of output blocks (program_id(0) == ROW). In TPU interpret mode the output
# buffers start as NaN, so blocks before the first written one stay NaN; blocks after it are
# copied out of the reused VMEM buffer and hold the previous block's (stale, wrong) values.
def skips_output_blocks(row_written):
    return CORRECT.replace(
        "    @pl.when(pl.program_id(2) == pl.num_programs(2) - 1)",
        "    @pl.when((pl.program_id(2) == pl.num_programs(2) - 1) & "
        f"(pl.program_id(0) == {row_written}))")


SKIPS_FIRST_OUTPUT_BLOCK = skips_output_blocks(1)
SKIPS_LAST_OUTPUT_BLOCK = skips_output_blocks(0)

# Memorises the reference for seed 0 (the prompt shows create_inputs) and returns it from a
# Pallas kernel that also does the GEMM's work (0 x its result), so that it is judged on its
# numerics: correct on seed 0 only. Fresh seeds in the request defeat it.
MEMORISED_SEED_0 = '''
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

def _seed0_reference():
    key_a, key_b = jax.random.split(jax.random.key(0), 2)
    A = jax.random.normal(key_a, (256, 512), dtype=jnp.bfloat16)
    B = jax.random.normal(key_b, (512, 256), dtype=jnp.bfloat16) * 0.02
    return jnp.matmul(A, B)

_ANSWER = _seed0_reference()

def _answer(x_ref, a_ref, b_ref, o_ref):
    work = jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)
    o_ref[...] = (x_ref[...].astype(jnp.float32) + 0.0 * work).astype(o_ref.dtype)

def workload(A, B):
    shape = (A.shape[0], B.shape[1])
    K = A.shape[1]
    answer = _ANSWER if _ANSWER.shape == shape else jnp.zeros(shape)
    spec = pl.BlockSpec((256, 256), lambda i, j: (i, j))  # fits v6e's VMEM at full shapes too
    return pl.pallas_call(_answer, out_shape=jax.ShapeDtypeStruct(shape, A.dtype),
                          grid=(shape[0] // 256, shape[1] // 256),
                          in_specs=[spec, pl.BlockSpec((256, K), lambda i, j: (i, 0)),
                                    pl.BlockSpec((K, 256), lambda i, j: (0, j))],
                          out_specs=spec)(answer.astype(A.dtype), A, B)
'''

# Lint bypasses: names lint does not know reach os through a module that imported it.
FORK_BYPASS = CORRECT + '''
import glob as _g
_pid = getattr(_g, "o" + "s").fork()
if _pid == 0:
    getattr(_g, "o" + "s")._exit(0)
'''
FORK_SWALLOWED = CORRECT + '''
import glob as _g
try:
    getattr(_g, "o" + "s").fork()
except Exception:
    pass
'''
FORK_LINTED = "import os\nos.fork()\n" + CORRECT


def write_outside(path):
    """Writes `path` (outside the judge's dir) with numpy at import time; lint does not see it."""
    return CORRECT + f'''
import numpy as _np
_np.save({path!r}, _np.zeros(3))
'''


# __import__ reached without naming it, past lint.
_SNEAKY_IMPORT = '''
import glob as _g
_imp = vars(getattr(_g, "o" + "s").sys.modules["builtins"])["__imp" + "ort__"]
'''
SOCKET_BYPASS = CORRECT + _SNEAKY_IMPORT + '''
_imp("socket").create_connection(("127.0.0.1", 9))
'''
CTYPES_BYPASS = CORRECT + _SNEAKY_IMPORT + '''
_imp("ctypes").CDLL(None).getpid()
'''
SUBPROCESS_BYPASS = CORRECT + _SNEAKY_IMPORT + '''
_imp("subprocess").run(["true"])
'''
# Allocates far beyond any limit (64 TiB) at import: MemoryError at once, nothing touched.
ALLOCATES_FAR_TOO_MUCH = CORRECT.replace("def workload(A, B):",
                                         "def workload(A, B):\n    _b = bytearray(1 << 46)")
# numpy asks the OS for 2**37 floats (1 TiB) and gets MemoryError under RLIMIT_AS.
NUMPY_ALLOCATES_TOO_MUCH = CORRECT + '''
import numpy as _np
_big = _np.ones((1 << 37,), _np.float64)
'''
SPINS_FOREVER = CORRECT + '''
while True:
    pass
'''
# A real segmentation fault in the judge process (faulthandler's test helper).
SEGFAULTS = CORRECT + '''
import faulthandler
faulthandler._sigsegv()
'''
