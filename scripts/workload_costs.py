#!/usr/bin/env python3
"""Writes workloads/workload_costs.json: each workload's FLOPs and HBM bytes at its full shapes,
what the report's roofline fraction (search/roofline.hpp) divides by the v6e peaks.

  flops : the module's FLOPS (the count each workload module derives and compares with XLA's
          cost_analysis in its comments); xla_flops is XLA's own cost_analysis of the baseline,
          lowered for the host CPU, kept beside it for reference.
  bytes : the bytes of the baseline's array inputs plus its outputs, from jax.eval_shape (nothing
          is allocated): what any kernel must move between HBM and the chip at least once, so a
          time below bytes / bandwidth is impossible for a kernel that does the work.

Run after adding or changing a workload:  .venv/bin/python scripts/workload_costs.py
tests/workloads/test_workload_costs.py fails while the file is stale.
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
OUT = os.path.join(ROOT, "workloads", "workload_costs.json")


def costs_of(module):
    import jax
    import numpy as np

    config = module.CONFIG
    from workloads import registry
    static = registry.static_argnums(module)
    args = list(jax.eval_shape(lambda: module.create_inputs(config, 0)))
    values = dict(zip(static, module.static_args(config))) if static else {}
    arrays = [a for i, a in enumerate(args) if i not in values]

    def call(*arrays_):
        it = iter(arrays_)
        return module.workload(*[values[i] if i in values else next(it) for i in range(len(args))])

    def nbytes(tree):
        return sum(int(np.prod(x.shape)) * np.dtype(x.dtype).itemsize for x in jax.tree.leaves(tree))

    out = jax.eval_shape(call, *arrays)
    entry = {"flops": float(module.FLOPS), "bytes": float(nbytes(arrays) + nbytes(out))}
    try:
        analysis = jax.jit(call).lower(*arrays).cost_analysis()
        if isinstance(analysis, list):
            analysis = analysis[0]
        entry["xla_flops"] = float(analysis.get("flops", 0.0))
    except Exception as e:  # a reference only; the roof uses FLOPS
        entry["xla_flops"] = None
        entry["xla_note"] = f"cost_analysis failed: {type(e).__name__}"
    return entry


def table():
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    from workloads import registry

    return {wid: costs_of(registry.get(wid)) for wid in registry.ids()}


def main():
    doc = {
        "description": "FLOPs and HBM bytes (inputs + outputs) of each workload at its full "
                       "shapes; written by scripts/workload_costs.py, read by the report's "
                       "roofline fraction.",
        "workloads": table(),
    }
    with open(OUT, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    print(OUT)


if __name__ == "__main__":
    main()
