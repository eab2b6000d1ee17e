"""Inputs of other scales and means, inside each workload's domain (issue 21 item 7): the judge
checks a kernel on inputs the workload's own `create_inputs` draws (variant 0) and on the same
draws rescaled or shifted, so that a kernel right only on N(0,1)-like inputs (a softmax without
its max subtracted, a constant tuned to the usual magnitude) fails.

    inputs = create_inputs(module, config, seed, variant)      (variant 0: the workload's own)
    variant = variant_for(seed, position)                      (the judge's choice, replayable)

A variant transforms each floating-point input x by its domain:
  * "any"      (values of both signs): x * scale + shift * std(x);
  * "positive" (no negative value: uniform[0, 1), a variance): x * scale, so it stays >= 0;
  * "fixed"    (integer and boolean inputs: indices, lengths, masks; and any input a workload
    names in INPUT_DOMAINS as fixed): unchanged.
The judge widens the workload's ATOL by the variant's output magnitude over the usual one
(evaluate.py), since ATOL is calibrated at the usual magnitude.
The domain of an input is read from its dtype and its drawn values, unless the workload module
declares it (`INPUT_DOMAINS = {"name": "fixed" | "positive" | "any"}`, names as in
`workload`'s signature). The transform is a function of the seed alone, so a replay of an
evaluation's seeds sees the same inputs.
"""
import inspect

import jax.numpy as jnp
import numpy as np

# (scale, shift in units of the input's own standard deviation); variant 0 is the identity.
VARIANTS = ((1.0, 0.0), (4.0, 0.0), (0.25, 0.0), (1.0, 1.0), (1.0, -1.0))
DOMAINS = ("any", "positive", "fixed")


def variant_for(seed, position):
    """The variant of the numerics seed at `position` (0-based) of an evaluation: the first seed
    sees the workload's own distribution, every later one a variant drawn from its seed."""
    if position == 0:
        return 0
    return 1 + int(seed) % (len(VARIANTS) - 1)


def describe(variant):
    scale, shift = VARIANTS[variant]
    parts = []
    if scale != 1.0:
        parts.append(f"scaled by {scale:g}")
    if shift:
        parts.append(f"shifted by {shift:+g} standard deviation")
    return " and ".join(parts) or "as the workload draws them"


def input_domains(module, inputs):
    """[domain] of each of `inputs` (create_inputs' results) for `module`."""
    declared = dict(getattr(module, "INPUT_DOMAINS", {}) or {})
    for name, domain in declared.items():
        if domain not in DOMAINS:
            raise ValueError(f"workload {module.ID}: INPUT_DOMAINS[{name!r}] is {domain!r}, "
                             f"not one of {', '.join(DOMAINS)}")
    try:
        names = list(inspect.signature(module.workload).parameters)
    except (TypeError, ValueError):
        names = []
    domains = []
    for i, x in enumerate(inputs):
        name = names[i] if i < len(names) else f"input{i}"
        if name in declared:
            domains.append(declared[name])
        elif not hasattr(x, "dtype") or not jnp.issubdtype(x.dtype, jnp.floating):
            domains.append("fixed")
        elif bool(jnp.all(jnp.asarray(x) >= 0)):
            domains.append("positive")
        else:
            domains.append("any")
    return domains


def create_inputs(module, config, seed, variant=0):
    """The workload's inputs for `seed`, transformed by `variant` (module docstring)."""
    inputs = module.create_inputs(config, seed)
    if not variant:
        return inputs
    if not 0 <= variant < len(VARIANTS):
        raise ValueError(f"input variant {variant} is not one of 0..{len(VARIANTS) - 1}")
    scale, shift = VARIANTS[variant]
    out = []
    for x, domain in zip(inputs, input_domains(module, inputs)):
        if domain == "fixed":
            out.append(x)
            continue
        wide = jnp.asarray(x, jnp.float32)
        moved = wide * scale
        if domain == "any" and shift:
            moved = moved + shift * float(np.std(np.asarray(wide, np.float64)))
        out.append(moved.astype(x.dtype))
    return type(inputs)(out) if isinstance(inputs, tuple) else out
