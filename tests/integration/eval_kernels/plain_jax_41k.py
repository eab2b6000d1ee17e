# 41k written as plain JAX with no Pallas kernel: correct numbers, but not a kernel.
import jax.numpy as jnp


def workload(x, weight, bias):
    return jnp.maximum(jnp.dot(x, weight, preferred_element_type=jnp.float32) + bias, 0).astype(x.dtype)
