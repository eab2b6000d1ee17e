"""The verdict taxonomy and the one place that turns a failure into a verdict.

`VERDICTS` and `STAGES` are the wire and database spellings, from protocol/taxonomy.json.
`classify(stage, exc)` maps an exception raised in a stage to a verdict; `format_error` and
`error_signature` give the raw text returned to the LLM and the normalised form used to group
failures across candidates.
"""
import re

from protocol.taxonomy import STAGES, VERDICTS  # noqa: F401  (re-exported)
# The candidate runner's formatting, so a message reads the same from either side (our module,
# not candidate code: importing it runs nothing a candidate wrote).
from sandbox.candidate.errors import format_error as _format_error
from sandbox.candidate.errors import truncate  # noqa: F401  (re-exported)

MAX_ERROR_CHARS = 8000
MAX_SIGNATURE_CHARS = 240

# XLA and the TPU runtime report memory exhaustion as a status string, not as MemoryError.
_RESOURCE_MARKERS = ("RESOURCE_EXHAUSTED", "Out of memory", "out of memory", "OOM")

# libtpu's messages, as the deviceless compile tier (compile_tier.py) and a TPU's first call
# raise them. Which memory ran out is part of the evidence: VMEM comes from the kernel's block
# sizes (physical 128 MiB, or E1001 against the 32 MiB default scoped limit that
# vmem_limit_bytes raises), HBM from the whole program's buffers, SMEM from scalar prefetch.
_MEMORY_SPACES = (
    ("vmem", re.compile(r"(?i)memory space vmem|space=vmem|ScopedVmemOom|scoped vmem|"
                        r"vmem (capacity|limit)")),
    ("smem", re.compile(r"(?i)memory space smem|space=smem|smem (capacity|limit)")),
    ("hbm", re.compile(r"(?i)memory on HBM|available HBM|space=hbm|HBM (capacity|limit)|"
                       r"allocating device buffer")),
)
_MOSAIC_MARKERS = ("Mosaic failed to compile", "failed to compile TPU kernel")

# A missing name inside jax is an API-version problem (the LLM remembered an old Pallas), which
# the feedback should call an import problem, not misuse of an API that exists.
_MISSING_JAX_NAME = re.compile(r"module '(jax|jaxlib)[\w.]*' has no attribute")


def classify_compiler_message(message):
    """(verdict, kind) for a libtpu/XLA:TPU compile or allocation message, or None.

    kind is the error-signature kind: "resource_exhausted:vmem", ":smem", ":hbm" (or bare
    "resource_exhausted" when the message names no memory space), or "mosaic" for a kernel the
    Mosaic compiler rejects (shape casts, i8 vectors, E2003 unaligned dynamic lane access).
    """
    exhausted = any(m in message for m in _RESOURCE_MARKERS) or "E1001" in message
    for space, pattern in _MEMORY_SPACES:
        if pattern.search(message) and (exhausted or space == "vmem"):
            return "resource_exhausted", f"resource_exhausted:{space}"
    if any(m in message for m in _MOSAIC_MARKERS):
        return "compile_error", "mosaic"
    if exhausted:
        return "resource_exhausted", "resource_exhausted"
    return None


def describe(stage, exc):
    """(verdict, signature kind) for an exception raised while running `stage` on a candidate.

    The kind is the exception type name, except for libtpu messages in the stages that compile
    for or run on a TPU, whose kind says what the compiler found (classify_compiler_message).
    """
    if type(exc).__name__ != "SandboxViolation" and stage in _COMPILING_STAGES:
        found = classify_compiler_message(f"{type(exc).__name__}: {exc}")
        if found:
            return found
    return classify(stage, exc), type(exc).__name__


# The stages in which libtpu compiles (the compile tier; the first call on a TPU) or allocates.
_COMPILING_STAGES = ("compile", "numerics", "timing")


def classify_compiler_error(stage, exc):
    """(verdict, kind) for the compile tier: stage "lower" (the Python Mosaic lowering at full
    shapes) or "compile" (libtpu). Anything libtpu raises that names no known cause is still
    compile_error: the program did not compile for the TPU."""
    verdict, kind = describe(stage, exc)
    if stage == "compile" and verdict == "runtime_error":
        verdict = "compile_error"
    return verdict, kind


# The study's Figure 4 outcome classes, which our finer verdicts fold into for a comparison with
# its numbers. A kernel that writes zeros or leaves blocks unwritten is numerics_mismatch and
# so "numerics" whatever its amount of work; no_pallas (heavy work outside Pallas, a rule the
# study did not apply) has a class of its own rather than hiding in one of the study's.
STUDY_CLASSES = ("no code", "API misuse", "lowering/compile", "runtime/timeout", "numerics",
                 "no Pallas", "correct")
_STUDY_CLASS = {
    "no_code": "no code",
    "syntax_error": "API misuse", "lint_rejected": "API misuse", "import_error": "API misuse",
    "api_misuse": "API misuse",
    "lowering_error": "lowering/compile", "compile_error": "lowering/compile",
    "resource_exhausted": "lowering/compile",
    "runtime_error": "runtime/timeout", "timeout": "runtime/timeout", "crash": "runtime/timeout",
    "shape_mismatch": "numerics", "numerics_mismatch": "numerics",
    "no_pallas": "no Pallas",
    "correct": "correct",
}


def study_class(verdict):
    """The study's Figure 4 class of a verdict; ValueError naming an unknown verdict."""
    try:
        return _STUDY_CLASS[verdict]
    except KeyError:
        raise ValueError(f"{verdict!r} is not a verdict of protocol/taxonomy.json") from None


def classify(stage, exc):
    """Verdict for an exception raised while running `stage` on a candidate."""
    message = f"{type(exc).__name__}: {exc}"
    if type(exc).__name__ == "SandboxViolation":
        return "runtime_error"  # a refused fork/socket/ctypes/outside write, at any stage
    if stage in _COMPILING_STAGES:
        found = classify_compiler_message(message)
        if found:
            return found[0]
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
    if stage == "compile":
        return "compile_error"
    return "runtime_error"


# Frames inside JAX and the judge tell the LLM nothing it can act on and push the candidate's
# own frames and the message out of the truncation window.
_NOISE_FRAMES = ("/site-packages/", "/judge/", "/lib/python3")


def format_error(exc, limit=MAX_ERROR_CHARS):
    """The traceback text without library frames, keeping its head and its tail (the message)."""
    return _format_error(exc, limit, _NOISE_FRAMES)


# A URL is evidence as written (an issue link, a doc page): kept whole, digits and all.
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"<>()]+")
_PATH = re.compile(r"(?:[A-Za-z]:)?(?:/[\w.+\-@]+)+/([\w.+\-]+)")
_LINE = re.compile(r"\bline \d+")
_HEX = re.compile(r"(?<![\w.])0x[0-9a-fA-F]+")
# MLIR/XLA shapes: 8x128xf32, 3x3, vector<64x8192xbf16>. Each extent becomes N; the element
# type after the last x (f32, bf16, i8) is an identifier and stays.
_DIMS = re.compile(r"(?<![\w.])\d+(?:x\d+)+(?=x[A-Za-z]|(?![\w.]))")
# A number is a token that does not continue an identifier: bfloat16, float32, f32, E2003,
# x128 and conv3d keep their digits. Units may follow (96.00M, 32MiB). After an underscore it
# is a serial (candidate_12_3), which differs per candidate and is replaced.
_NUMBER = re.compile(r"(?<![A-Za-z0-9.])[-+]?\d+(?:\.\d+)*(?:[eE][+-]?\d+)?")
_SPACE = re.compile(r"\s+")
_PLACEHOLDER = "\x00url{}\x00"  # NUL never occurs in an error message; url keeps digits safe
_RESTORE = re.compile(r"\x00url(\d+)\x00")


def error_signature(stage, kind, message):
    """Short normalised form of a failure, stable across candidates that fail the same way.

    `kind` is the exception type name, a check name such as "tolerance", or a compiler kind
    from classify_compiler_message ("resource_exhausted:vmem"). Paths keep their basename, and
    line numbers, numbers, shape extents and hex ids are replaced, so "Block shape (8, 100)" and
    "Block shape (16, 36)" group together. Digits inside identifiers (bfloat16, float32, E1001)
    and URLs are kept as written.
    """
    first = next((line for line in str(message).splitlines() if line.strip()), "")
    urls = []

    def keep_url(match):
        urls.append(match.group(0))
        return _PLACEHOLDER.format(len(urls) - 1)
    first = _URL.sub(keep_url, first)
    first = _PATH.sub(r"\1", first)
    first = _LINE.sub("line N", first)
    first = _HEX.sub("<hex>", first)
    first = _DIMS.sub(lambda m: "x".join("N" for _ in m.group(0).split("x")), first)
    first = _NUMBER.sub("N", first)
    first = _RESTORE.sub(lambda m: urls[int(m.group(1))], first)
    first = _SPACE.sub(" ", first).strip()
    return f"{stage}:{kind}: {first}"[:MAX_SIGNATURE_CHARS]
