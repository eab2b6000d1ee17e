"""JAXBench workloads as Python modules, one per workload (`wl_<id>.py`).

Each module defines ID, NAME, CONFIG (full TPU shapes, exactly as JAXBench), CPU_CONFIG (reduced
shapes for the CPU interpret judge), ATOL, RTOL, BASELINE_MS_V6E, FLOPS (at CONFIG),
`create_inputs(config=CONFIG, seed=0, dtype=jnp.bfloat16)` and `workload(*inputs)`, the XLA
baseline. Use `workloads.registry` to look them up by id.
"""
