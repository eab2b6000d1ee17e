"""Output shapes and dtypes against the baseline's, and the comparison against the exact
reference (compare.py's rules), shared by the compile and numerics stages."""
import numpy as np

from judge import compare
from judge.stages.context import Failure


def np_dtype(name):
    if name == "bfloat16":
        import ml_dtypes
        return ml_dtypes.bfloat16
    return name


def describe(spec):
    return "[" + ", ".join(f"{d}{list(s)}" for s, d in spec) + "]"


def mismatch_kind(got, want):
    if len(got) == len(want) and [s for s, _ in got] == [s for s, _ in want]:
        return "dtype"
    return "shape"


def reference_spec(reference):
    return [(tuple(s), np.dtype(np_dtype(d))) for s, d in zip(reference.shapes, reference.dtypes)]


def _same(got_spec, want_spec, exact_dtype):
    if exact_dtype:
        return got_spec == want_spec
    return [s for s, _ in got_spec] == [s for s, _ in want_spec]


def check_outputs(module, got_leaves, reference, where, result, exact_dtype=True,
                  atol_scale=1.0):
    """Shapes AND dtypes exactly (shapes only when not `exact_dtype`: a dtype objection was
    already deferred, and the values are still compared), then compare.py's rules against the
    exact reference; raises a Failure, and records the largest errors seen in `result`."""
    got_spec = [(tuple(np.shape(g)), np.dtype(np.asarray(g).dtype)) for g in got_leaves]
    want_spec = reference_spec(reference)
    if not _same(got_spec, want_spec, exact_dtype):
        raise Failure("shape_mismatch", mismatch_kind(got_spec, want_spec),
                      f"{where}: outputs {describe(got_spec)} differ from the baseline's "
                      f"{describe(want_spec)} (shape and dtype must match exactly)")
    outcome = compare.compare(reference.tree(list(got_leaves)), reference,
                              module.ATOL * atol_scale, module.RTOL)
    result["max_abs_err"] = max(result["max_abs_err"] or 0.0, outcome.max_abs_err)
    result["max_rel_err"] = max(result["max_rel_err"] or 0.0, outcome.max_rel_err)
    if not outcome.ok:
        raise Failure("shape_mismatch" if outcome.kind == "shape" else "numerics_mismatch",
                      outcome.kind, f"{where}: {outcome.message}")


def differs(module, got, reference, info, exact_dtype=True, atol_scale=1.0):
    """Why interpreted outputs fail compare.py's rules against `reference`, or None."""
    got_spec = [(tuple(np.shape(g)), np.dtype(g.dtype)) for g in got]
    want_spec = reference_spec(reference)
    if not _same(got_spec, want_spec, exact_dtype):
        return f"outputs {describe(got_spec)}, not {describe(want_spec)}"
    outcome = compare.compare(reference.tree(got), reference, module.ATOL * atol_scale,
                              module.RTOL)
    info["max_abs_err"] = outcome.max_abs_err
    return None if outcome.ok else outcome.message


def rms(reference):
    """The root mean square of a reference's exact floating-point outputs, or 0."""
    total = count = 0
    for leaf in reference.exact:
        leaf = np.asarray(leaf)
        if leaf.dtype.kind == "f" and leaf.size:
            total += float(np.sum(np.square(leaf, dtype=np.float64)))
            count += leaf.size
    return float(np.sqrt(total / count)) if count else 0.0
