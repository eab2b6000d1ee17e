"""Static checks on candidate source, before any of it runs.

`lint(code) -> list[str]` returns human-readable problems (empty when clean). It rejects
  * modules that reach outside the kernel: the process, files, network, threads, the interpreter
    (os, sys, subprocess, socket, ctypes, multiprocessing, ...) and dynamic code (`exec`, `eval`,
    `__import__`), and Palladium's own modules (workloads, judge, sandbox, agent, protocol). The candidate
    sandbox refuses all of it anyway (docs/verification.md); lint says why before anything runs;
  * changes to `jax.config`, which would leak into later candidates and the reference run;
  * JAX's lowering registry (`register_lowering`, `lower_per_platform`): a kernel module that
    re-registers how pallas_call lowers per platform could make the CPU branch the judge runs
    other code than the TPU branch (docs/verification.md, residual risks);
  * Pallas names that JAX 0.10.2 no longer has, naming the replacement, so the LLM learns the
    fix instead of seeing a bare AttributeError.
A syntax error is not a lint problem; the import stage reports it with its line.
"""
import ast

FORBIDDEN_MODULES = frozenset({
    "os", "sys", "subprocess", "socket", "ctypes", "multiprocessing", "threading", "signal",
    "shutil", "importlib", "pty", "resource", "asyncio", "concurrent", "builtins", "gc",
    "pickle", "marshal", "urllib", "http", "requests", "tempfile", "pathlib", "io", "fcntl",
    "select", "mmap",
})
# Palladium's own packages: a candidate that imports the workload module (`from workloads import
# wl_12p`) returns the baseline. The sandbox does not contain them; lint says so first.
PROJECT_MODULES = frozenset({"workloads", "judge", "sandbox", "agent", "tpu_agent", "protocol",
                             "palladium_candidate", "palladium_pipe_schema"})

FORBIDDEN_CALLS = frozenset({"exec", "eval", "compile", "__import__", "open", "breakpoint", "input"})

# Pallas TPU names that JAX 0.10.2 no longer has, with what to use instead. The TPU* names are
# distinctive enough to flag wherever they appear; the short ones only as attributes of the TPU
# module (jnp.repeat and pl.ANY are fine).
REMOVED_ANYWHERE = {
    "TPUCompilerParams": "pltpu.CompilerParams",
    "TPUMemorySpace": "pltpu.MemorySpace",
}
REMOVED_FROM_PLTPU = {
    "repeat": "jnp.tile or jnp.repeat inside the kernel",
    "KernelType": "nothing; the argument was removed",
    "ANY": "pl.ANY (or pltpu.MemorySpace.HBM)",
}
_TPU_MODULE = "jax.experimental.pallas.tpu"
LOWERING_REGISTRY = frozenset({"register_lowering", "lower_per_platform",
                               "_pallas_call_lowering"})


def _dotted(node):
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


class _Linter(ast.NodeVisitor):
    def __init__(self):
        self.problems = []
        # Local names bound to jax.experimental.pallas.tpu; "pltpu" is the universal convention.
        self.tpu_aliases = {"pltpu"}
        self.jax_aliases = {"jax"}

    def _flag(self, node, text):
        self.problems.append(f"line {getattr(node, 'lineno', '?')}: {text}")

    def _removed(self, node, name, replacement):
        self._flag(node, f"'{name}' does not exist in JAX 0.10.2; use {replacement}")

    def _check_module(self, node, name):
        root = name.split(".")[0]
        if root in FORBIDDEN_MODULES:
            self._flag(node, f"import of '{name}' is not allowed in a kernel module")
        elif root in PROJECT_MODULES:
            self._flag(node, f"import of '{name}' is not allowed: a kernel module may not "
                             "import Palladium's own modules (workloads, the judge, protocol)")

    def visit_Import(self, node):
        for alias in node.names:
            self._check_module(node, alias.name)
            if alias.name == _TPU_MODULE and alias.asname:
                self.tpu_aliases.add(alias.asname)
            if alias.name == "jax":
                self.jax_aliases.add(alias.asname or "jax")
            if alias.name == "jax.config":
                self._flag(node, "changing jax.config is not allowed")
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        module = node.module or ""
        self._check_module(node, module)
        for alias in node.names:
            full = f"{module}.{alias.name}"
            if full == _TPU_MODULE:
                self.tpu_aliases.add(alias.asname or alias.name)
            if module == "jax" and alias.name == "config":
                self._flag(node, "importing jax.config is not allowed (do not change JAX flags)")
            if alias.name in REMOVED_ANYWHERE and module.startswith("jax"):
                self._removed(node, full, REMOVED_ANYWHERE[alias.name])
            self._lowering_registry(node, alias.name)
            if module == _TPU_MODULE and alias.name in REMOVED_FROM_PLTPU:
                self._removed(node, full, REMOVED_FROM_PLTPU[alias.name])
        self.generic_visit(node)

    def _lowering_registry(self, node, name):
        if name in LOWERING_REGISTRY:
            self._flag(node, f"'{name}' is not allowed: a kernel module may not change how JAX "
                             "lowers primitives")

    def visit_Name(self, node):
        self._lowering_registry(node, node.id)

    def visit_Attribute(self, node):
        self._lowering_registry(node, node.attr)
        dotted = _dotted(node) or ""
        base = _dotted(node.value) or ""
        if node.attr in REMOVED_ANYWHERE:
            self._removed(node, dotted, REMOVED_ANYWHERE[node.attr])
        if node.attr in REMOVED_FROM_PLTPU and (base in self.tpu_aliases or base == _TPU_MODULE):
            self._removed(node, dotted, REMOVED_FROM_PLTPU[node.attr])
        if node.attr == "config" and base in self.jax_aliases:
            self._flag(node, "changing jax.config is not allowed (do not change JAX flags)")
        self.generic_visit(node)

    def visit_Call(self, node):
        if isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
            self._flag(node, f"call to '{node.func.id}' is not allowed in a kernel module")
        self.generic_visit(node)

    def visit_Constant(self, node):
        if isinstance(node.value, str) and node.value.startswith("jax_enable_x64"):
            self._flag(node, "64-bit mode (jax_enable_x64) is not allowed")


def lint(code):
    """Problems found in `code`, one string each; [] when clean or when it does not parse."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    linter = _Linter()
    # Aliases must be known before attributes are judged, so collect imports first.
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                full = alias.name if isinstance(node, ast.Import) else f"{node.module}.{alias.name}"
                if full == _TPU_MODULE:
                    linter.tpu_aliases.add(alias.asname or alias.name.split(".")[-1])
    linter.visit(tree)
    return linter.problems
