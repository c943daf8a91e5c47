"""Each rule's documentation is complete, and its examples run: "Example" fires, "Use instead" not."""

from __future__ import annotations

import re

import pytest

from kernlint.registry import load_registry
from kernlint.runner import lint_paths

REGISTRY = load_registry()
SECTIONS = [
    "## What it does",
    "## Why is this bad?",
    "## Example",
    "## Use instead",
    "## Fix safety",
]
_BLOCK = re.compile(r"## (Example|Use instead)\s*\n```(\w+)\n(.*?)```", re.S)
EXT = {"cpp": ".cuh", "python": ".py"}
_FILE_LINE = re.compile(r"(?:#|//) ([\w/.-]+\.(?:py|cuh|cu|h))\n")
_SECTION = re.compile(r"## (Example|Use instead)\s*\n(.*?)(?=\n## |\Z)", re.S)
_ANY_BLOCK = re.compile(r"```\w+\n(.*?)```", re.S)


def _beside(rule, kind) -> list[tuple[str, str]]:
    """(path, body) of the section's further code blocks that name their file on their first
    line (`// csrc/elementwise/scale.cuh`): written beside the example, for rules that read
    other files of the tree (a Python `load_jit` call and the C++ it names)."""
    for k, text in _SECTION.findall(rule.doc):
        if k == kind:
            blocks = _ANY_BLOCK.findall(text)[1:]
            return [(m.group(1), b) for b in blocks if (m := _FILE_LINE.match(b))]
    return []


@pytest.mark.parametrize("rule", REGISTRY.rules, ids=[r.name for r in REGISTRY.rules])
def test_doc_sections(rule):
    for section in SECTIONS:
        assert section in rule.doc, f"{rule.name}: missing `{section}`"
    assert rule.doc.index("## What it does") < rule.doc.index("## Fix safety")
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name)
    assert re.fullmatch(r"(KL|CU|PY|RB)\d{3}", rule.code)


@pytest.mark.parametrize("rule", REGISTRY.rules, ids=[r.name for r in REGISTRY.rules])
def test_doc_length(rule):
    # Rule docs are for reading in a terminal (`kernlint rule CODE`): about 300 words.
    words = len(rule.doc.split())
    assert words <= 300, f"{rule.name}: {words} words (at most 300)"


def _examples():
    out = []
    for rule in REGISTRY.rules:
        for kind, lang, body in _BLOCK.findall(rule.doc):
            out.append((rule, kind, lang, body))
    return out


EXAMPLES = _examples()


@pytest.mark.parametrize(
    "rule,kind,lang,body", EXAMPLES, ids=[f"{r.name}-{k}" for r, k, _, _ in EXAMPLES]
)
def test_doc_example(rule, kind, lang, body, tmp_path):
    ext = EXT["cpp" if lang in ("cpp", "cuda", "c++") else lang]
    # A JIT location, so JIT-scoped rules apply; a first line naming a file
    # (`# benchmark/bench_scale.py`) places the example there instead.
    named = _FILE_LINE.match(body)
    if named:
        path = tmp_path / "kernels" / "jit" / named.group(1)
        path.parent.mkdir(parents=True, exist_ok=True)
    else:
        d = tmp_path / "kernels" / "jit" / "csrc"
        d.mkdir(parents=True)
        path = d / f"example{ext}"
    path.write_text(body, encoding="utf-8")
    for name, text in _beside(rule, kind):
        extra = tmp_path / "kernels" / "jit" / name
        extra.parent.mkdir(parents=True, exist_ok=True)
        extra.write_text(text, encoding="utf-8")
        if name.startswith("csrc/"):  # (a JIT source tree holds `csrc/` and `include/`)
            (tmp_path / "kernels" / "jit" / "include").mkdir(exist_ok=True)
    if rule.module.startswith("kernlint_rules.compile."):
        # The compile pass's rules: the example is built with nvcc.
        from kernlint.compile.toolchain import find_tool

        if find_tool("nvcc") is None:
            pytest.skip("no nvcc (pip install 'kernlint[compile]'): compile rules not run")
        (tmp_path / "kernlint.toml").write_text('jit-roots = ["**"]\ncompile = true\n')
    # Meta rules judge other rules' suppressions: run them with everything on.
    select = ["ALL"] if rule.code.startswith("KL") else [rule.code]
    results = lint_paths([str(path)], select=select, preview=True, warn=lambda m: None)
    codes = [diag.code for res in results for diag in res.diagnostics]
    if kind == "Example":
        assert rule.code in codes, f"{rule.name}: the Example does not fire"
    else:
        assert rule.code not in codes, f"{rule.name}: the Use-instead code fires: {codes}"


def test_every_rule_has_examples():
    with_examples = {r.name for r, k, _, _ in EXAMPLES if k == "Example"}
    assert {r.name for r in REGISTRY.rules} <= with_examples
