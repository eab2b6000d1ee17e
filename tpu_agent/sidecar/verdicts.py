"""The verdict taxonomy and the one place that turns a failure into a verdict.

`VERDICTS` and `STAGES` are the wire and database spellings, from protocol/taxonomy.json.
`classify(stage, exc)` maps an exception raised in a stage to a verdict; `format_error` and
`error_signature` give the raw text returned to the LLM and the normalised form used to group
failures across candidates.
"""
import re
import traceback

from protocol.taxonomy import STAGES, VERDICTS  # noqa: F401  (re-exported)

MAX_ERROR_CHARS = 8000
MAX_SIGNATURE_CHARS = 240

# XLA and the TPU runtime report memory exhaustion as a status string, not as MemoryError.
_RESOURCE_MARKERS = ("RESOURCE_EXHAUSTED", "Out of memory", "out of memory", "OOM")

# libtpu's Mosaic compiler (TPU backend only; on CPU hosts the Python lowering is the last step
# that runs, so compile_error cannot occur there). VMEM exhaustion is a property of the kernel's
# blocks, found at compile time, so it is compile_error, not resource_exhausted.
_COMPILE_MARKERS = ("Mosaic failed to compile", "failed to compile TPU kernel")
_VMEM_OOM = re.compile(r"(?i)(ran out of memory in memory space vmem|vmem.{0,40}(exceed|oom|"
                       r"out of memory|limit))")

# A missing name inside jax is an API-version problem (the LLM remembered an old Pallas), which
# the feedback should call an import problem, not misuse of an API that exists.
_MISSING_JAX_NAME = re.compile(r"module '(jax|jaxlib)[\w.]*' has no attribute")


def classify(stage, exc):
    """Verdict for an exception raised while running `stage` on a candidate."""
    message = f"{type(exc).__name__}: {exc}"
    if type(exc).__name__ == "SandboxViolation":
        return "runtime_error"  # a refused fork/socket/ctypes/outside write, at any stage
    if stage in ("numerics", "timing") and (
            any(m in message for m in _COMPILE_MARKERS) or _VMEM_OOM.search(message)):
        return "compile_error"
    if isinstance(exc, MemoryError) or any(m in message for m in _RESOURCE_MARKERS):
        return "resource_exhausted"
    if isinstance(exc, SyntaxError):
        return "syntax_error"
    if stage == "import":
        return "import_error"
    if isinstance(exc, (ImportError, AttributeError)) and _MISSING_JAX_NAME.search(message):
        return "import_error"
    if isinstance(exc, ImportError):
        return "import_error"
    if stage == "trace":
        # Tracing runs the candidate's Python: pallas_call/BlockSpec argument errors, index_map
        # arity, bad out_shape, shape errors in the kernel body. All are uses of the API that the
        # API rejects before any TPU-specific check.
        return "api_misuse"
    if stage == "lower":
        return "lowering_error"
    return "runtime_error"


# Frames inside JAX and the sidecar tell the LLM nothing it can act on and push the candidate's
# own frames and the message out of the truncation window.
_NOISE_FRAMES = ("/site-packages/", "/tpu_agent/sidecar/", "/lib/python3")


def _prune(te, seen):
    if te is None or id(te) in seen:
        return
    seen.add(id(te))
    kept = [frame for frame in te.stack if not any(n in frame.filename for n in _NOISE_FRAMES)]
    te.stack = traceback.StackSummary.from_list(kept)
    _prune(te.__cause__, seen)
    _prune(te.__context__, seen)


def format_error(exc, limit=MAX_ERROR_CHARS):
    """The traceback text without library frames, keeping its head and its tail (the message)."""
    te = traceback.TracebackException.from_exception(exc)
    _prune(te, set())
    return truncate("".join(te.format()), limit)


def truncate(text, limit):
    if len(text) <= limit:
        return text
    head = limit // 4
    tail = limit - head - 40
    return f"{text[:head]}\n... [{len(text) - head - tail} chars omitted] ...\n{text[-tail:]}"


_PATH = re.compile(r"(?:[A-Za-z]:)?(?:/[\w.+\-@]+)+/([\w.+\-]+)")
_LINE = re.compile(r"\bline \d+")
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_NUMBER = re.compile(r"(?<![A-Za-z])\d+(?:\.\d+)?(?:e[+-]?\d+)?")
_SPACE = re.compile(r"\s+")


def error_signature(stage, kind, message):
    """Short normalised form of a failure, stable across candidates that fail the same way.

    `kind` is the exception type name (or a check name such as "tolerance"). Paths keep their
    basename, and line numbers, numbers and hex ids are replaced, so "Block shape (8, 100)" and
    "Block shape (16, 36)" group together.
    """
    first = next((line for line in str(message).splitlines() if line.strip()), "")
    first = _PATH.sub(r"\1", first)
    first = _LINE.sub("line N", first)
    first = _HEX.sub("<hex>", first)
    first = _NUMBER.sub("N", first)
    first = _SPACE.sub(" ", first).strip()
    return f"{stage}:{kind}: {first}"[:MAX_SIGNATURE_CHARS]
