"""11p Megablox grouped matmul: rows of group g (consecutive, sizes from group_sizes) @ rhs[g].

A work list of (row tile, group) pairs, built in XLA from group_sizes (O(G) integer glue) and
scalar-prefetched into SMEM, drives one Pallas kernel, grid (N/bn, W, K/bk) with
W = M/bm + G - 1 (the most pairs any group sizes can produce; spare items do nothing). Items of
one row tile are consecutive, so its float32 accumulator stays in VMEM while every group touching
the tile adds its rows (masked by the group's row range); tiles no group covers come out zero.
bm 256, bn <= 2048 (all of N = 1536), bk 1024: VMEM at full shape ~10 MiB.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _tile(dim, target, align):
    """Largest multiple of `align` that divides `dim` and is <= target; `dim` itself if none."""
    t = min(target, dim) // align * align
    while t >= align:
        if dim % t == 0:
            return t
        t -= align
    return dim


def _work_list(group_sizes, M, bm):
    """Per work item: row tile, group, row range [lo, hi) to add, first/last item of its tile."""
    G = group_sizes.shape[0]
    num_tiles = M // bm
    W = num_tiles + G - 1
    ends = jnp.clip(jnp.cumsum(group_sizes.astype(jnp.int32)), 0, M)
    starts = jnp.concatenate([jnp.zeros((1,), jnp.int32), ends[:-1]])
    nonempty = ends > starts
    first = starts // bm
    count = jnp.where(nonempty, (ends - 1) // bm - first + 1, 0)
    count_end = jnp.cumsum(count)
    n_group_items = count_end[-1]
    covered = (ends[-1] + bm - 1) // bm          # rows [0, ends[-1]) lie in groups

    w = jnp.arange(W, dtype=jnp.int32)
    g = jnp.minimum(jnp.searchsorted(count_end, w, side="right"), G - 1).astype(jnp.int32)
    in_group = w < n_group_items
    tile_g = first[g] + w - (count_end[g] - count[g])
    tile_rest = jnp.minimum(covered + (w - n_group_items), num_tiles - 1)
    tile = jnp.where(in_group, tile_g, tile_rest).astype(jnp.int32)
    lo = jnp.where(in_group, jnp.maximum(starts[g], tile * bm), 0).astype(jnp.int32)
    hi = jnp.where(in_group, jnp.minimum(ends[g], (tile + 1) * bm), 0).astype(jnp.int32)
    is_first = jnp.concatenate([jnp.ones((1,), bool), tile[1:] != tile[:-1]]).astype(jnp.int32)
    is_last = jnp.concatenate([tile[1:] != tile[:-1], jnp.ones((1,), bool)]).astype(jnp.int32)
    return W, (tile, g, lo, hi, is_first, is_last)


def _kernel(tile_ref, group_ref, lo_ref, hi_ref, first_ref, last_ref,
            lhs_ref, rhs_ref, o_ref, acc_ref):
    w, k = pl.program_id(1), pl.program_id(2)
    bm = lhs_ref.shape[0]
    lo, hi = lo_ref[w], hi_ref[w]

    @pl.when((first_ref[w] == 1) & (k == 0))
    def _init():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    @pl.when(hi > lo)
    def _accumulate():
        part = jnp.dot(lhs_ref[...], rhs_ref[...], preferred_element_type=jnp.float32)
        rows = tile_ref[w] * bm + jax.lax.broadcasted_iota(jnp.int32, part.shape, 0)
        acc_ref[...] += jnp.where((rows >= lo) & (rows < hi), part, 0.0)

    @pl.when((last_ref[w] == 1) & (k == pl.num_programs(2) - 1))
    def _store():
        o_ref[...] = acc_ref[...].astype(o_ref.dtype)


def workload(lhs, rhs, group_sizes, max_expert_size):
    del max_expert_size  # the work list bounds every group size; no static bound is needed
    M, K = lhs.shape
    G, _, N = rhs.shape
    bm, bn, bk = _tile(M, 256, 16), _tile(N, 2048, 128), _tile(K, 1024, 128)
    W, items = _work_list(group_sizes, M, bm)

    grid_spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=len(items),
        grid=(N // bn, W, K // bk),
        in_specs=[pl.BlockSpec((bm, bk), lambda j, w, k, t, g, *_: (t[w], k)),
                  pl.BlockSpec((None, bk, bn), lambda j, w, k, t, g, *_: (g[w], k, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda j, w, k, t, g, *_: (t[w], j)),
        scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
    )
    return pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct((M, N), lhs.dtype),
        grid_spec=grid_spec,
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel", "arbitrary", "arbitrary")),
    )(*items, lhs, rhs)
