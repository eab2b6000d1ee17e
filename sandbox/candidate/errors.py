"""Error text of a failed candidate, formatted where the exception lives (the candidate process).

`format_error(exc, filename)` is the traceback without library frames, head and tail kept; the
judge only truncates and scrubs it further. `describe(exc, filename)` is the one-line message
the judge classifies and signs: for an exception without a message (a bare `assert` inside the
Pallas lowering or in the kernel) it names the candidate's own innermost source line, so the next
prompt can say where, not just "AssertionError".
"""
import linecache
import traceback

MAX_ERROR_CHARS = 8000

# Frames inside JAX and the runner tell the LLM nothing it can act on and push the candidate's
# own frames and the message out of the truncation window.
_NOISE_FRAMES = ("/site-packages/", "/palladium/", "/lib/python3")


def truncate(text, limit):
    if len(text) <= limit:
        return text
    head = limit // 4
    tail = limit - head - 40
    return f"{text[:head]}\n... [{len(text) - head - tail} chars omitted] ...\n{text[-tail:]}"


def _prune(te, seen, noise):
    if te is None or id(te) in seen:
        return
    seen.add(id(te))
    kept = [frame for frame in te.stack if not any(n in frame.filename for n in noise)]
    te.stack = traceback.StackSummary.from_list(kept)
    _prune(te.__cause__, seen, noise)
    _prune(te.__context__, seen, noise)


def format_error(exc, limit=MAX_ERROR_CHARS, noise=_NOISE_FRAMES):
    """The traceback text without frames whose file path holds any of `noise`, keeping its
    head and its tail (the message). The judge formats its own errors with this too."""
    te = traceback.TracebackException.from_exception(exc)
    _prune(te, set(), noise)
    return truncate("".join(te.format()), limit)


def _chain(exc):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def candidate_line(exc, filename):
    """'candidate.py line N: <source>' of the innermost frame of `filename` in exc's chain."""
    for link in _chain(exc):
        frames = [f for f in traceback.extract_tb(link.__traceback__) if f.filename == filename]
        if frames:
            frame = frames[-1]
            source = (frame.line or linecache.getline(filename, frame.lineno)).strip()
            return f"{filename.rsplit('/', 1)[-1]} line {frame.lineno}: {source}"
    return ""


def describe(exc, filename):
    """The message to classify: str(exc), or where a message-less exception was raised."""
    message = str(exc)
    if message.strip():
        return message
    where = candidate_line(exc, filename)
    inner = next((link for link in _chain(exc) if str(link).strip()), None)
    parts = [f"{type(exc).__name__} without a message"]
    if where:
        parts.append(f"at {where}")
    if inner is not None and inner is not exc:
        parts.append(f"(caused by {type(inner).__name__}: {str(inner).splitlines()[0]})")
    return " ".join(parts)
