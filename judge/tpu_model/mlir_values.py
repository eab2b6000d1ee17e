"""What the judge reads off an MLIR value's type, the same way for the StableHLO around a kernel
(structure.py) and the Mosaic body inside it (kernel_work.py): tensors, vectors and memrefs are
all shaped types. Nothing here runs code; a value whose type has no shape reads as a scalar.
"""
from jax._src.lib.mlir import ir


def shape(value):
    """The dimensions of a shaped value, or [] for any other."""
    try:
        return list(ir.ShapedType(value.type).shape)
    except (ValueError, TypeError):
        return []


def elements(value):
    """The number of elements (dynamic dimensions count as 0), 1 for a scalar."""
    n = 1
    for d in shape(value):
        n *= max(int(d), 0)
    return n


def is_float(value):
    """Whether the value's element type (or its type, for a scalar) is a floating-point one."""
    t = value.type
    try:
        t = ir.ShapedType(t).element_type
    except (ValueError, TypeError):
        pass
    return str(t).startswith(("f", "bf"))
