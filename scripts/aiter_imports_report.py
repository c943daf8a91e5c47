"""Classify every aiter import in a tree the way `ungated-aiter-import` sees it.

    python scripts/aiter_imports_report.py <tree>

Prints one count per pattern (gated, try/except ImportError, HIP check only, other condition,
function-local without a guard, module level without a guard), split by module vs function
level, and three examples of each.
"""

from __future__ import annotations

import ast
import collections
import os
import sys

from kernlint.python.facts import PyFacts
from kernlint.python.guards import hip_test
from kernlint.source import SourceFile


def classify(facts, node) -> str:
    g = facts.guards
    path = g.path(node)
    if g.aiter_gated(node):
        return "gated by _use_aiter (or a derived gate, or an early exit)"
    if g.in_import_guard(node):
        return "in try/except ImportError"
    if any(pol and hip_test(t) for t, pol in path):
        return "under a HIP check only"
    if path:
        return "under another condition"
    if g.enclosing_function(node) is not None:
        return "function-local, no guard"
    return "module level, no guard"


def main() -> None:
    root = sys.argv[1]
    counts = collections.Counter()
    examples = collections.defaultdict(list)
    for d, _, names in os.walk(root):
        for name in sorted(names):
            if not name.endswith(".py"):
                continue
            path = os.path.join(d, name)
            with open(path, "rb") as fh:
                data = fh.read()
            if b"aiter" not in data:
                continue
            try:
                tree = ast.parse(data)
            except SyntaxError:
                continue
            facts = PyFacts(tree, SourceFile(path, data, "python"))
            for node, _module in facts.aiter_imports:
                kind = classify(facts, node)
                level = "function" if facts.guards.enclosing_function(node) else "module"
                counts[(kind, level)] += 1
                examples[kind].append(f"{os.path.relpath(path, root)}:{node.lineno}")
    total = sum(counts.values())
    print(f"{total} aiter imports")
    kinds = sorted(
        {k for k, _ in counts}, key=lambda k: -sum(counts[(k, lv)] for lv in ("module", "function"))
    )
    for kind in kinds:
        m, f = counts[(kind, "module")], counts[(kind, "function")]
        print(
            f"{m + f:4d}  {kind}  (module level {m}, in functions {f})  e.g. {examples[kind][:3]}"
        )


if __name__ == "__main__":
    main()
