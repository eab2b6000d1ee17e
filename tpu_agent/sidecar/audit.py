"""Input-sensitivity audit of a workload's reference (docs/verification.md, "Degenerate workloads").

    audit_workload(workload_id) -> {"degenerate": bool, "insensitive_inputs": [names], ...}

Some published workloads compute an output that does not depend on one of their inputs (25k's
output is constant, 26k has a dead matmul). A kernel that constant-folds such an input is
"correct" and can look like a huge speedup. The audit runs the XLA reference at CPU_CONFIG on the
seed-0 inputs, then again with one input at a time replaced by the same input drawn from other
seeds (1 and 2); an input whose replacement leaves the output bit-identical for both is
insensitive, and a workload with any insensitive input is degenerate. Reports show the flag; the
verdicts are unchanged (the kernel is still correct, the speedup is not meaningful).

Static arguments (STATIC_ARGNUMS) are configuration, not data, and are not perturbed. Results
are cached as JSON in `cache_dir()` keyed by workload id, JAX version and a hash of the workload
module's source, so a sidecar pays for each audit once per machine.
"""
import hashlib
import inspect
import json
import os

import jax
import numpy as np

from workloads import registry

AUDIT_SEEDS = (1, 2)
CACHE_VERSION = 1


def cache_dir():
    """$PALLADIUM_SIDECAR_CACHE, else $XDG_CACHE_HOME/palladium/sidecar, else ~/.cache/..."""
    explicit = os.environ.get("PALLADIUM_SIDECAR_CACHE")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "palladium", "sidecar")


def static_argnums(module):
    return tuple(int(i) for i in getattr(module, "STATIC_ARGNUMS", ()) or ())


def input_names(module, count):
    try:
        params = list(inspect.signature(module.workload).parameters)
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) else f"input{i}" for i in range(count)]


def _leaves(tree):
    return [np.asarray(leaf, np.float32) for leaf in jax.tree.leaves(tree)]


def _same(a, b):
    return len(a) == len(b) and all(
        x.shape == y.shape and np.array_equal(x, y, equal_nan=True) for x, y in zip(a, b))


def audit_module(module, config=None):
    """The audit of one workload module (no caching)."""
    config = config if config is not None else module.CPU_CONFIG
    static = static_argnums(module)
    fn = jax.jit(module.workload, static_argnums=static)
    base_inputs = tuple(module.create_inputs(config, 0))
    base = _leaves(fn(*base_inputs))
    others = [tuple(module.create_inputs(config, seed)) for seed in AUDIT_SEEDS]
    names = input_names(module, len(base_inputs))
    insensitive = []
    for i, name in enumerate(names):
        if i in static:
            continue
        unchanged = True
        for other in others:
            if np.array_equal(np.asarray(other[i]), np.asarray(base_inputs[i])):
                continue  # this seed did not change the input (e.g. a fixed mask); no evidence
            perturbed = base_inputs[:i] + (other[i],) + base_inputs[i + 1:]
            if not _same(_leaves(fn(*perturbed)), base):
                unchanged = False
                break
        if unchanged:
            insensitive.append(name)
    return {"workload_id": module.ID, "degenerate": bool(insensitive),
            "insensitive_inputs": insensitive, "inputs": names,
            "static_inputs": [names[i] for i in static if i < len(names)],
            "constant_output": all(name in insensitive for i, name in enumerate(names)
                                   if i not in static) and bool(names)}


def _cache_key(module):
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):
        source = repr(sorted(vars(module)))
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    return f"{module.ID}-jax{jax.__version__}-{digest}-v{CACHE_VERSION}"


def audit_workload(workload_id, use_cache=True):
    """The audit of `workload_id`, from the JSON cache when the module is unchanged."""
    module = registry.get(workload_id)
    path = os.path.join(cache_dir(), f"audit-{_cache_key(module)}.json")
    if use_cache:
        try:
            with open(path, encoding="utf-8") as handle:
                cached = json.load(handle)
            if cached.get("workload_id") == module.ID:
                return cached
        except (OSError, ValueError):
            pass
    result = audit_module(module)
    if use_cache:
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            temp = f"{path}.{os.getpid()}.tmp"
            with open(temp, "w", encoding="utf-8") as handle:
                json.dump(result, handle, indent=1, sort_keys=True)
            os.replace(temp, path)
        except OSError:
            pass  # read-only home, or RLIMIT_FSIZE: the audit is still answered
    return result
