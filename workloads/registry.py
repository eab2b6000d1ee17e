"""Look up workload modules by JAXBench id ("8p", "41k", ...).

`get(id)` imports and returns `workloads.wl_<id>`; `ids()` lists the ids that have a module, in
JAXBench order (numeric prefix). The set is discovered from the files, so adding a workload is
adding one module.
"""
import importlib
import pkgutil
import re

import workloads as _package

_MODULE_RE = re.compile(r"^wl_(\d+)([a-z])$")


def _sort_key(workload_id):
    match = re.match(r"^(\d+)([a-z])$", workload_id)
    return (int(match.group(1)), match.group(2))


def ids():
    found = []
    for info in pkgutil.iter_modules(_package.__path__):
        match = _MODULE_RE.match(info.name)
        if match:
            found.append(match.group(1) + match.group(2))
    return sorted(found, key=_sort_key)


def get(workload_id):
    if workload_id not in ids():
        raise KeyError(f"unknown workload {workload_id!r}; known: {', '.join(ids())}")
    return importlib.import_module(f"workloads.wl_{workload_id}")
