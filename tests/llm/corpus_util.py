"""Helpers for the offline replay corpus (llm/replay_corpus/<workload_id>/NN.md) and its test.

`extract_code` mirrors llm/code_extractor.cpp (the C++ the replay provider's responses go
through before they reach the judge); keep the two in step. Run as a script,
`python tests/llm/corpus_util.py 8p/05.md`, it evaluates one corpus response with the judge's
in-process API and prints the verdict; the corpus test uses that to run responses that are
expected to time out in a child process it can kill.
"""
import pathlib
import sys

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS_DIR = REPO_ROOT / "llm" / "replay_corpus"

_PYTHON_INFOS = ("python", "py", "python3")


def _indent_of(line):
    return len(line) - len(line.lstrip(" \t"))


def _backtick_run(s):
    return len(s) - len(s.lstrip("`"))


def _opening_fence(line):
    """(backtick count, lower-cased info word) if `line` opens a fence, else None."""
    rest = line[_indent_of(line):]
    ticks = _backtick_run(rest)
    if ticks < 3:
        return None
    info = rest[ticks:]
    if "`" in info:  # CommonMark: no backticks in a backtick fence's info string
        return None
    info = info.lstrip(" \t")
    end = 0
    while end < len(info) and not info[end].isspace() and info[end] != "{":
        end += 1
    return ticks, info[:end].lower()


def _closes_fence(line, ticks):
    rest = line[_indent_of(line):]
    n = _backtick_run(rest)
    return n >= ticks and not rest[n:].strip()


def _dedent(line, indent):
    i = 0
    while i < indent and i < len(line) and line[i] in " \t":
        i += 1
    return line[i:]


def _fenced_blocks(text):
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    blocks, i = [], 0
    while i < len(lines):
        fence = _opening_fence(lines[i])
        if fence is None:
            i += 1
            continue
        ticks, info = fence
        indent = _indent_of(lines[i])
        body = []
        i += 1
        while i < len(lines) and not _closes_fence(lines[i], ticks):
            body.append(_dedent(lines[i], indent) + "\n")
            i += 1
        closed = i < len(lines)
        i += 1  # the closing fence, if any
        body = "".join(body)
        if body.strip():
            blocks.append((info, body, closed))
    return blocks


def _defines_workload(body):
    for line in body.split("\n"):
        if _indent_of(line) != 0:
            continue
        if line.startswith(("def workload(", "def workload (", "workload = ", "workload=")):
            return True
    return False


_THINK_TAGS = ("think", "thinking", "reasoning")


def _split_thinking(text):
    """(answer, thinking): text outside and inside <think>-style tags (case-insensitive)."""
    low = text.lower()
    answer, thinking, pos = [], [], 0
    while pos < len(text):
        found = [(low.find("<" + t + ">", pos), t) for t in _THINK_TAGS]
        found = [(at, t) for at, t in found if at >= 0]
        if not found:
            answer.append(text[pos:])
            break
        at, tag = min(found)
        answer.append(text[pos:at] + "\n")
        start = at + len(tag) + 2
        close = low.find("</" + tag + ">", start)
        if close < 0:  # cut off while thinking
            thinking.append(text[start:])
            break
        thinking.append(text[start:close] + "\n")
        pos = close + len(tag) + 3
    return "".join(answer), "".join(thinking)


def _choose(blocks):
    defining = [b for b in blocks if _defines_workload(b[1])]
    closed = [b for b in defining if b[2]]
    if closed:
        return closed[-1][1]
    if defining:
        return defining[-1][1]
    for info, body, _ in blocks:
        if info in _PYTHON_INFOS:
            return body
    return blocks[0][1] if blocks else ""


def extract_code(response):
    """Mirrors palladium::extract_code (llm/code_extractor.cpp; its header has the rules):
    thinking set aside; the last closed (else last) block defining `workload`; else the first
    python/py/python3 block; else the first block of any kind; else "" (no code). CRLF and lone
    CR become LF; unclosed fences run to the end; whitespace-only blocks are skipped.
    """
    text = response.replace("\r\n", "\n").replace("\r", "\n")
    answer, thinking = _split_thinking(text)
    code = _choose(_fenced_blocks(answer))
    if not code and thinking:
        code = _choose(_fenced_blocks(thinking))
    return code


def corpus_files():
    """Sorted "workload_id/NN.md" names of every corpus response."""
    return sorted(p.relative_to(CORPUS_DIR).as_posix() for p in CORPUS_DIR.glob("*/*.md"))


def read_response(name):
    return (CORPUS_DIR / name).read_text(encoding="utf-8")


def evaluate_response(name, seeds=(0, 1)):
    """Judge result dict for one corpus response (in this process)."""
    from judge.evaluate import evaluate
    return evaluate(name.split("/")[0], extract_code(read_response(name)), seeds=tuple(seeds))


if __name__ == "__main__":
    sys.path.insert(0, str(REPO_ROOT))
    name = sys.argv[1]
    # jax, the judge and its candidate sandbox, before the clock matters.
    from judge.evaluate import shared_evaluator
    shared_evaluator(start=True)
    print("START", name, flush=True)  # start-up done; the evaluation itself starts now
    print("VERDICT", evaluate_response(name)["verdict"], flush=True)
