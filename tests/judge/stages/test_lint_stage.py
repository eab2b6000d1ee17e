"""judge/stages/lint.py: extract (one markdown fence) and lint, before any process runs."""
from judge.stages.lint import LintStage, strip_fence
from stage_fakes import context


def test_one_markdown_fence_is_stripped():
    assert strip_fence("```python\nx = 1\n```") == "x = 1"
    assert strip_fence("  x = 1\n") == "x = 1"


def test_empty_code_is_no_code_in_the_extract_stage():
    ctx = context(code="```\n   \n```")
    failure = LintStage().run(ctx)
    assert (failure.verdict, ctx.stage) == ("no_code", "extract")


def test_a_forbidden_import_is_lint_rejected_in_the_lint_stage():
    ctx = context(code="import os\ndef workload(x):\n    return x\n")
    failure = LintStage().run(ctx)
    assert (failure.verdict, ctx.stage) == ("lint_rejected", "lint")
    assert "os" in str(failure)


def test_clean_code_goes_on_unfenced():
    ctx = context(code="```\nimport jax\ndef workload(x):\n    return x\n```")
    assert LintStage().run(ctx) is None
    assert ctx.code.startswith("import jax")
