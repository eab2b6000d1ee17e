"""17p Triangle multiplication (outgoing), channel-major, in three Pallas kernels.

Projection kernel, grid (N*N/bp,): the four gated projections as NT dots (W^T against the
position-major activations), written channel-major: left^T, right^T [C, N, N] in bf16.
Triangle kernel, grid (C, N/bi, N/bj): t[c] = left^T[c] @ right^T[c]^T over the full k = N
(float32, [C, N, N]). Output kernel, grid (N*N/bp,): RMS "center norm" over the channel axis
(sublanes), a TN dot with out_proj_w back to position-major, times sigmoid(pair_act @ out_gate_w).
bp 2048, bi = bj = 512: VMEM at full shape (N 1536, C 128) ~9, ~8 and ~7 MiB.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

_NT = (((1,), (1,)), ((), ()))     # a (m, k) x b (n, k) -> (m, n)
_TN = (((0,), (0,)), ((), ()))     # a (k, m) x b (k, n) -> (m, n)


def _tile(dim, target, align):
    """Largest multiple of `align` that divides `dim` and is <= target; `dim` itself if none."""
    t = min(target, dim) // align * align
    while t >= align:
        if dim % t == 0:
            return t
        t -= align
    return dim


def _project_kernel(x_ref, m_ref, lp_ref, lg_ref, rp_ref, rg_ref, l_ref, r_ref):
    act = (x_ref[...].astype(jnp.float32) * m_ref[...].astype(jnp.float32)).astype(x_ref.dtype)

    def proj_t(w_ref):             # (C_out, bp) = w^T @ act^T
        return jax.lax.dot_general(w_ref[...], act, _NT, preferred_element_type=jnp.float32)

    l_ref[...] = (proj_t(lp_ref) * jax.nn.sigmoid(proj_t(lg_ref))).astype(l_ref.dtype)
    r_ref[...] = (proj_t(rp_ref) * jax.nn.sigmoid(proj_t(rg_ref))).astype(r_ref.dtype)


def _triangle_kernel(l_ref, r_ref, t_ref):
    t_ref[...] = jax.lax.dot_general(l_ref[...], r_ref[...], _NT,
                                     preferred_element_type=jnp.float32)


def _output_kernel(t_ref, x_ref, s_ref, wo_ref, wg_ref, o_ref):
    t = t_ref[...]                                                    # (C, bp) float32
    t = t * jax.lax.rsqrt(jnp.mean(t * t, axis=0, keepdims=True) + 1e-6)
    t = (t * s_ref[...].astype(jnp.float32)).astype(x_ref.dtype)      # scale is (C, 1)
    out = jax.lax.dot_general(t, wo_ref[...], _TN, preferred_element_type=jnp.float32)
    gate = jnp.dot(x_ref[...], wg_ref[...], preferred_element_type=jnp.float32)
    o_ref[...] = (out * jax.nn.sigmoid(gate)).astype(o_ref.dtype)


def workload(pair_act, mask, left_proj_w, right_proj_w, left_gate_w, right_gate_w,
             center_scale, out_proj_w, out_gate_w):
    N, _, C = pair_act.shape
    P = N * N
    dtype = pair_act.dtype
    x = pair_act.reshape(P, C)
    bp = _tile(P, 2048, 128)

    def rows(i):
        return (i, 0)

    def whole(i):
        return (0, 0)

    wspec = pl.BlockSpec((C, C), whole)
    left_t, right_t = pl.pallas_call(
        _project_kernel,
        out_shape=[jax.ShapeDtypeStruct((C, P), dtype)] * 2,
        grid=(P // bp,),
        in_specs=[pl.BlockSpec((bp, C), rows), pl.BlockSpec((bp, 1), rows)] + [wspec] * 4,
        out_specs=[pl.BlockSpec((C, bp), lambda i: (0, i))] * 2,
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel",)),
    )(x, mask.reshape(P, 1), left_proj_w.T, left_gate_w.T, right_proj_w.T, right_gate_w.T)

    bi = _tile(N, 512, 128)
    t = pl.pallas_call(
        _triangle_kernel,
        out_shape=jax.ShapeDtypeStruct((C, N, N), jnp.float32),
        grid=(C, N // bi, N // bi),
        in_specs=[pl.BlockSpec((None, bi, N), lambda c, i, j: (c, i, 0)),
                  pl.BlockSpec((None, bi, N), lambda c, i, j: (c, j, 0))],
        out_specs=pl.BlockSpec((None, bi, bi), lambda c, i, j: (c, i, j)),
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel", "parallel", "parallel")),
    )(left_t.reshape(C, N, N), right_t.reshape(C, N, N))

    out = pl.pallas_call(
        _output_kernel,
        out_shape=jax.ShapeDtypeStruct((P, C), dtype),
        grid=(P // bp,),
        in_specs=[pl.BlockSpec((C, bp), lambda i: (0, i)), pl.BlockSpec((bp, C), rows),
                  pl.BlockSpec((C, 1), whole), wspec, wspec],
        out_specs=pl.BlockSpec((bp, C), rows),
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel",)),
    )(t.reshape(C, P), x, center_scale.reshape(C, 1), out_proj_w, out_gate_w)
    return out.reshape(N, N, C)
