"""Shared facts about one Python file (imports, guards), computed once on first use."""

from __future__ import annotations


class PyFacts:
    def __init__(self, tree, source) -> None:
        self.tree = tree
        self.source = source
