"""Look up workload modules and their hand-tuned references by JAXBench id ("8p", "41k", ...).

The one registry of workloads in Python; `workloads/catalog.json` (`python -m workloads.catalog`)
is written from it for the C++ side. The sets are discovered from the files, so adding a workload
is adding one module (`wl_<id>.py`) and adding a reference is adding one `hand_tuned/ref_<id>.py`,
then rerunning `python -m workloads.catalog` (tests/workloads/test_catalog.py says when).

    ids() -> ["1p", ...]              get(id) -> workloads.wl_<id>
    hand_tuned_ids() -> ["1p", ...]   hand_tuned(id) -> workloads.hand_tuned.ref_<id>
    hand_tuned_source(id) -> the reference's text (what the judge evaluates as a candidate)
    static_argnums(module) -> the input indices that are configuration, not arrays

All lists are in JAXBench order (numeric prefix, then letter).
"""
import importlib
import pathlib
import pkgutil
import re

_DIR = pathlib.Path(__file__).resolve().parent
_HAND_TUNED_DIR = _DIR / "hand_tuned"
_ID_RE = re.compile(r"^(\d+)([a-z])$")


def _sort_key(workload_id):
    match = _ID_RE.match(workload_id)
    return (int(match.group(1)), match.group(2))


def _discover(directory, prefix):
    found = []
    for info in pkgutil.iter_modules([str(directory)]):
        if info.name.startswith(prefix) and _ID_RE.match(info.name[len(prefix):]):
            found.append(info.name[len(prefix):])
    return sorted(found, key=_sort_key)


def ids():
    return _discover(_DIR, "wl_")


def get(workload_id):
    if workload_id not in ids():
        raise KeyError(f"unknown workload {workload_id!r}; known: {', '.join(ids())}")
    return importlib.import_module(f"workloads.wl_{workload_id}")


def hand_tuned_ids():
    return _discover(_HAND_TUNED_DIR, "ref_")


def hand_tuned(workload_id):
    if workload_id not in hand_tuned_ids():
        raise KeyError(f"no hand-tuned reference for {workload_id!r}; "
                       f"have: {', '.join(hand_tuned_ids())}")
    return importlib.import_module(f"workloads.hand_tuned.ref_{workload_id}")


def hand_tuned_source(workload_id):
    hand_tuned(workload_id)  # KeyError for ids without a reference
    return (_HAND_TUNED_DIR / f"ref_{workload_id}.py").read_text(encoding="utf-8")


def static_argnums(module):
    """`module.STATIC_ARGNUMS` as a tuple of ints; () for a workload whose inputs are all arrays.

    Takes the module, not the id, so that the judge's stand-in workloads (tests) answer too.
    """
    value = getattr(module, "STATIC_ARGNUMS", ()) or ()
    try:
        return tuple(int(i) for i in value)
    except (TypeError, ValueError):
        raise ValueError(f"{getattr(module, '__name__', module)}.STATIC_ARGNUMS = {value!r}: "
                         f"expected a tuple of input indices") from None
