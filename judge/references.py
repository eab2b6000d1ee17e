"""The workload side of the judge (trusted): baselines, references, argument specs and the
baseline's structure, computed from the workload module and cached per judge process.

The judge's Pipeline (evaluate.py) is a References, so that every stage reaches the same
caches through `ctx.judge`; nothing here runs a candidate's code.
"""
import secrets
import time

import jax
import numpy as np
from jax import export

from judge import compare, structure
from judge.audit import static_argnums
from workloads import input_variants


class References:
    """backend: "interpret" (CPU, reduced shapes) or "tpu" (a real chip, full shapes)."""

    def __init__(self, backend):
        self.backend = backend
        self._baselines = {}
        self._structures = {}
        # (workload id, secret seed, input arrays, compare.Reference) at the full shapes: one
        # workload's at a time, since they take up to a few GiB.
        self._full_reference = None

    def _baseline(self, module):
        if module.ID not in self._baselines:
            self._baselines[module.ID] = jax.jit(module.workload,
                                                 static_argnums=static_argnums(module))
        return self._baselines[module.ID]

    def numerics_config(self, module):
        """Reduced shapes in the CPU interpreter; the real JAXBench shapes on a chip."""
        return module.CONFIG if self.backend == "tpu" else module.CPU_CONFIG

    def reference(self, module, config, seed, store=np.float64, variant=0):
        """(inputs, compare.Reference, baseline run ms) at `config` for this seed: the bf16
        baseline's output and the same inputs computed in float64 (compare.make_reference),
        kept as `store`. `variant`: the inputs rescaled or shifted (input_variants.py)."""
        inputs = input_variants.create_inputs(module, config, seed, variant)
        start = time.perf_counter()
        out = jax.block_until_ready(self._baseline(module)(*inputs))
        ms = (time.perf_counter() - start) * 1e3
        return inputs, compare.make_reference(module, inputs, out, store), ms

    def _argument_specs(self, module, config):
        static = static_argnums(module)
        abstract = jax.eval_shape(lambda: module.create_inputs(config, 0))
        statics = iter(module.static_args(config)) if static else iter(())
        specs = []
        for i, leaf in enumerate(abstract):
            if i in static:
                specs.append({"static": next(statics)})
            else:
                specs.append({"shape": list(leaf.shape), "dtype": str(leaf.dtype)})
        return specs

    def _baseline_outputs(self, module, config):
        """[(shape, dtype)] of the baseline's output leaves at `config` (nothing is run)."""
        static = static_argnums(module)
        args = list(jax.eval_shape(lambda: module.create_inputs(config, 0)))
        values = dict(zip(static, module.static_args(config))) if static else {}
        arrays = [a for i, a in enumerate(args) if i not in values]

        def call(*arrays_):
            it = iter(arrays_)
            return module.workload(*[values[i] if i in values else next(it)
                                     for i in range(len(args))])
        out = jax.eval_shape(call, *arrays)
        return [(tuple(x.shape), np.dtype(x.dtype)) for x in jax.tree.leaves(out)]

    def baseline_structure(self, module, config=None):
        """structure.Measurement of the XLA baseline exported for TPU at `config` (default: the
        full shapes)."""
        config = module.CONFIG if config is None else config
        key = (module.ID, repr(sorted(config.items())))
        if key not in self._structures:
            specs = self._argument_specs(module, config)
            args = [s["static"] if "static" in s else
                    jax.ShapeDtypeStruct(tuple(s["shape"]), s["dtype"]) for s in specs]
            exported = export.export(self._baseline(module), platforms=["tpu"])(*args)
            self._structures[key] = structure.measure(exported.mlir_module())
        return self._structures[key]

    def _full_shape_reference(self, module):
        """(seed, input arrays, compare.Reference) at the full shapes, for one secret seed per
        workload and judge process: the exact reference costs as much as the candidate's run,
        and the candidate never sees these inputs (its process gets reduced-shape ones).
        Raises MemoryError when they do not fit the judge's address-space limit."""
        if self._full_reference is None or self._full_reference[0] != module.ID:
            self._full_reference = None  # free the last workload's arrays first
            seed = secrets.randbelow(2 ** 31)
            inputs, reference, _ = self.reference(module, module.CONFIG, seed, np.float32)
            static = static_argnums(module)
            arrays = [np.asarray(x) for i, x in enumerate(inputs) if i not in static]
            self._full_reference = (module.ID, seed, arrays, reference)
        return self._full_reference[1:]
