"""Manual DMA: sum the pages a page table lists, pages fetched from HBM with async copies.

pages [P, page_rows, D] stays in HBM (memory_space=pl.ANY). For output row block b the kernel
copies pages table[b, 0..n-1] into a VMEM buffer one at a time, double-buffered: the copy of page
t+1 is started before page t is added, and every started copy is waited on.
"""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _kernel(table_ref, pages_hbm, o_ref, buf_ref, sems):
    b = pl.program_id(0)
    n = table_ref.shape[1]

    def copy(t, slot):
        return pltpu.make_async_copy(pages_hbm.at[table_ref[b, t]], buf_ref.at[slot],
                                     sems.at[slot])

    copy(0, 0).start()

    def body(t, acc):
        slot = t % 2

        @pl.when(t + 1 < n)
        def _prefetch():
            copy(t + 1, 1 - slot).start()

        copy(t, slot).wait()
        return acc + buf_ref[slot].astype(jnp.float32)

    acc = jax.lax.fori_loop(0, n, body, jnp.zeros(o_ref.shape, jnp.float32))
    o_ref[...] = acc.astype(o_ref.dtype)


def paged_sum(pages, table):
    _, page_rows, dim = pages.shape
    batch = table.shape[0]
    grid_spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=1,
        grid=(batch,),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec((page_rows, dim), lambda b, table_ref: (b, 0)),
        scratch_shapes=[pltpu.VMEM((2, page_rows, dim), pages.dtype),
                        pltpu.SemaphoreType.DMA((2,))],
    )
    return pl.pallas_call(
        _kernel,
        out_shape=jax.ShapeDtypeStruct((batch * page_rows, dim), pages.dtype),
        grid_spec=grid_spec,
        compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
    )(table, pages)


def reference(pages, table):
    summed = jnp.sum(pages[table].astype(jnp.float32), axis=1)        # [batch, page_rows, D]
    return summed.reshape(-1, pages.shape[2]).astype(pages.dtype)


def example_inputs():
    pages = jax.random.normal(jax.random.key(5), (12, 16, 128), jnp.float32)
    table = jnp.array([[3, 0, 11], [7, 7, 2], [1, 5, 9], [10, 4, 6]], dtype=jnp.int32)
    return pages, table


run = paged_sum
