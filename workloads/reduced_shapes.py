"""The rule that a workload's reduced CPU shapes keep the divisibility of its full TPU shapes.

A kernel is written for the full CONFIG shapes. It tiles a dimension with blocks of up to 1024
(8p: tm = 1024 over M = 8192) and may flatten dimensions into rows (18k: N*126*126 rows in tiles
of 128). Where CPU_CONFIG drops a power of two that the full size has, such a kernel leaves rows
unwritten, or gets an empty grid, at the reduced shape: a kernel that is right on the TPU fails
on the CPU (issue 9). The rule: every dimension of every input and output keeps, at CPU_CONFIG,
the largest power of two up to 1024 that divides it at CONFIG (`required_multiple`), and is no
larger than at CONFIG.

Where a workload cannot afford that (TPU interpret mode costs a Python callback per memory op
and grid step, so its time grows with the shape), its module names the CONFIG keys it keeps
smaller, each with the measured reason, next to CPU_CONFIG:

    CPU_SHAPE_EXCEPTIONS = {"batch": "why this key cannot keep its power of two"}

`violations(module)` lists the dimensions that break the rule, each with the CONFIG keys that
set it (found by moving one key at a time and watching which dimensions change), so that a test
can require every broken dimension to be owned by an excepted key, and every excepted key to
own a broken dimension. Abstract shapes only (jax.eval_shape): nothing is allocated.
"""
import dataclasses
import inspect

import jax

from workloads import registry

MAX_POWER = 1024


def required_multiple(full):
    """The largest power of two, up to MAX_POWER, that divides `full` (MAX_POWER for 0)."""
    if full == 0:
        return MAX_POWER
    return min(MAX_POWER, full & -full)


@dataclasses.dataclass(frozen=True)
class Violation:
    where: str        # "input 2 (bias)" or "output 0"
    axis: int
    full: int
    reduced: int
    required: int     # the power of two `reduced` must be a multiple of
    owners: tuple     # the CONFIG keys that set this dimension, sorted

    def __str__(self):
        if self.reduced > self.full:
            broken = f"larger than the full {self.full}"
        else:
            broken = f"not a multiple of {self.required}"
        return (f"{self.where} axis {self.axis}: {self.full} -> {self.reduced}, {broken} "
                f"(set by {', '.join(self.owners) or 'no CONFIG key'})")


def shapes(module, config):
    """(input shapes, output shapes) at `config`, static inputs left out of the inputs."""
    static = registry.static_argnums(module)
    abstract = jax.eval_shape(lambda: module.create_inputs(config, 0))
    arrays = [x for i, x in enumerate(abstract) if i not in static]
    values = dict(zip(static, module.static_args(config))) if static else {}

    def call(*array_args):
        it = iter(array_args)
        return module.workload(*[values[i] if i in values else next(it)
                                 for i in range(len(abstract))])
    out = jax.eval_shape(call, *arrays)
    return ([tuple(x.shape) for x in arrays],
            [tuple(x.shape) for x in jax.tree_util.tree_leaves(out)])


def _input_names(module, count):
    try:
        names = list(inspect.signature(module.workload).parameters)
    except (TypeError, ValueError):
        names = []
    static = registry.static_argnums(module)
    names = [n for i, n in enumerate(names) if i not in static]
    return [names[i] if i < len(names) else f"input{i}" for i in range(count)]


def _owners(module, base_inputs, base_outputs):
    """{("in"|"out", index, axis): CONFIG keys} found by moving one CPU_CONFIG key at a time.

    A key is tried at twice its reduced value, then at its full value: a value the module
    rejects (a derived constraint such as heads divisible by KV heads) moves on to the next.
    """
    owners = {}
    for key, value in module.CPU_CONFIG.items():
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            continue
        for trial in (value * 2, module.CONFIG[key]):
            if trial == value:
                continue
            try:
                moved_in, moved_out = shapes(module, {**module.CPU_CONFIG, key: trial})
            except Exception:  # noqa: BLE001 - the module rejects this value: try the next
                continue
            for kind, base, moved in (("in", base_inputs, moved_in),
                                      ("out", base_outputs, moved_out)):
                for index, (a, b) in enumerate(zip(base, moved)):
                    for axis, (x, y) in enumerate(zip(a, b)):
                        if x != y:
                            owners.setdefault((kind, index, axis), set()).add(key)
            break
    return owners


def violations(module):
    """Every input and output dimension whose reduced size breaks the rule, as Violations."""
    full_in, full_out = shapes(module, module.CONFIG)
    cpu_in, cpu_out = shapes(module, module.CPU_CONFIG)
    owners = _owners(module, cpu_in, cpu_out)
    names = _input_names(module, len(cpu_in))
    found = []
    for kind, fulls, cpus in (("in", full_in, cpu_in), ("out", full_out, cpu_out)):
        for index, (full_shape, cpu_shape) in enumerate(zip(fulls, cpus)):
            where = f"input {index} ({names[index]})" if kind == "in" else f"output {index}"
            for axis, (full, reduced) in enumerate(zip(full_shape, cpu_shape)):
                need = required_multiple(full)
                if reduced % need or reduced > full:
                    found.append(Violation(where, axis, full, reduced, need,
                                           tuple(sorted(owners.get((kind, index, axis), ())))))
    return found
