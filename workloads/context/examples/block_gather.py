"""Scalar prefetch: gather row blocks of x in the order of an int32 table held in SMEM.

out[i*rows:(i+1)*rows] = x[table[i]*rows:(table[i]+1)*rows]. The table drives the input index
map, so each grid step's DMA fetches a data-dependent block (the pattern behind paged and grouped
kernels).
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _kernel(table_ref, x_ref, o_ref):
    del table_ref  # already used by the index map; also readable here as table_ref[i]
    o_ref[...] = x_ref[...] * 2


def gather_blocks(x, table, rows=64):
    n_out = table.shape[0]
    cols = x.shape[1]
    grid_spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=1,
        grid=(n_out,),
        in_specs=[pl.BlockSpec((rows, cols), lambda i, table_ref: (table_ref[i], 0))],
        out_specs=pl.BlockSpec((rows, cols), lambda i, table_ref: (i, 0)),
    )
    return pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct((n_out * rows, cols), x.dtype),
        grid_spec=grid_spec,
        compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel",)),
    )(table, x)


def reference(x, table, rows=64):
    blocks = x.reshape(x.shape[0] // rows, rows, x.shape[1])
    return (blocks[table] * 2).reshape(table.shape[0] * rows, x.shape[1])


def example_inputs():
    x = jax.random.normal(jax.random.key(4), (512, 256), jnp.float32)
    table = jnp.array([5, 0, 7, 7, 2, 1], dtype=jnp.int32)
    return x, table


run = gather_blocks
