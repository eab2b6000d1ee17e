"""Every path the README and the manual's index name exists, so the map cannot drift from the tree.

A path is a backticked token with a slash or a file suffix, or a Markdown link target. Braces expand
(`configs/study/{a,b}.yaml`); tokens with placeholders (`runs/<file>.db`) and build outputs (`build/`,
`runs/`) are not paths of the checkout.
"""
import itertools
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", ROOT / "docs" / "README.md"]
SUFFIXES = (".md", ".py", ".yaml", ".json", ".sh", ".cpp", ".hpp", ".txt", ".sql")
NOT_IN_CHECKOUT = ("build/", "runs/", "http://", "https://")


def _expand(token):
    parts = re.split(r"\{([^{}]*)\}", token)
    choices = [[p] if i % 2 == 0 else p.split(",") for i, p in enumerate(parts)]
    return ["".join(c) for c in itertools.product(*choices)]


def named_paths(document):
    text = document.read_text()
    tokens = set(re.findall(r"\]\(([^)\s#]+)", text))
    for token in re.findall(r"`([^`\s]+)`", text):
        if "/" in token or token.endswith(SUFFIXES):
            tokens.add(token)
    paths = set()
    for token in tokens:
        if any(c in token for c in "<>*") or token.startswith(NOT_IN_CHECKOUT):
            continue
        if token.startswith(("-", "palladium", "--")) or "=" in token or ":" in token:
            continue
        paths.update(_expand(token))
    return sorted(paths)


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda d: str(d.relative_to(ROOT)))
def test_every_named_path_exists(document):
    base = document.parent
    missing = [p for p in named_paths(document)
               if not (base / p).exists() and not (ROOT / p).exists()]
    assert not missing, f"{document.relative_to(ROOT)} names paths that do not exist: {missing}"


def test_the_readme_is_a_map():
    text = (ROOT / "README.md").read_text()
    assert len(text.encode()) < 8192, f"README.md is {len(text.encode())} bytes, the limit is 8 KB"
    first_screen = "\n".join(text.splitlines()[:40])
    assert "scripts/quickstart.sh" in first_screen and "scripts/test.sh" in first_screen
    assert "## Folder map" in first_screen, "the folder map must start in the first 40 lines"
    folder_map = text.split("## Folder map", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `([a-z_]+)/`", folder_map, re.M))
    top = {p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(".")
           and p.name not in ("build", "runs", "__pycache__") and any(p.iterdir())}
    assert listed == top, f"folder map {sorted(listed)} != tree {sorted(top)}"
