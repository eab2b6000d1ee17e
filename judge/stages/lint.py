"""Extract the candidate's module from the answer and lint it, before any process runs it:
empty code is no_code (taxonomy stage extract), a lint finding lint_rejected (stage lint)."""
from judge.lint import lint
from judge.stages.context import Failure


def strip_fence(code):
    """Accept a single markdown-fenced block, which LLM answers often are."""
    text = code.strip()
    if text.startswith("```"):
        lines = text.splitlines()[1:]
        if lines and lines[-1].strip().startswith("```"):
            lines = lines[:-1]
        text = "\n".join(lines)
    return text


class LintStage:
    def run(self, ctx):
        ctx.code = strip_fence(ctx.code or "")
        if not ctx.code.strip():
            return Failure("no_code", "empty", "no code was extracted from the response")
        ctx.enter("lint")
        problems = lint(ctx.code)
        if problems:
            return Failure("lint_rejected", "lint", "\n".join(problems))
        return None
