"""The rule registry: every module under `rules/` (installed as `kernlint_rules`) defines one rule.

A rule module has a docstring (its documentation), `RULE = Rule(...)` (its metadata) and a
`check(ctx)` function (file-level) and/or a `visit(node, ctx)` function (called for each node
whose type is in `RULE.node_types`).
"""

from __future__ import annotations

import importlib
import os
from functools import lru_cache

from .config import ConfigError
from .model import Rule
from .record import replace

FAMILIES = ("meta", "cpp", "python", "compile")


class Registry:
    def __init__(self, rules: list[Rule]) -> None:
        self.rules = sorted(rules, key=lambda r: r.code)
        self.by_code = {r.code: r for r in self.rules}
        self.by_name = {r.name: r for r in self.rules}
        if len(self.by_code) != len(self.rules) or len(self.by_name) != len(self.rules):
            raise RuntimeError("duplicate rule code or name in the catalogue")

    def get(self, key: str) -> Rule | None:
        return self.by_code.get(key.upper()) or self.by_name.get(key.lower())

    def select(self, selector: str) -> list[Rule] | None:
        """Rules matching a selector: `ALL`, a code, a name, or a code prefix. None if unknown."""
        sel = selector.strip()
        if sel.upper() == "ALL":
            return list(self.rules)
        rule = self.get(sel)
        if rule is not None:
            return [rule]
        prefix = sel.upper()
        matched = [r for r in self.rules if r.code.startswith(prefix)]
        return matched or None

    def resolve(self, select, extend_select, ignore, *, preview: bool, where: str) -> list[Rule]:
        """The enabled rules. Preview rules need `preview` or an exact code/name selection."""

        def expand(selectors, key, keep_all=False):
            out = []
            for s in selectors:
                rules = self.select(s)
                if rules is None:
                    raise ConfigError(f"{where}: `{key}`: unknown rule or prefix `{s}`")
                exact = self.get(s) is not None
                out += [r for r in rules if keep_all or preview or exact or r.status != "preview"]
            return out

        chosen = {
            r.code: r for r in expand(select, "select") + expand(extend_select, "extend-select")
        }
        for r in expand(ignore, "ignore", keep_all=True):
            chosen.pop(r.code, None)
        return sorted(chosen.values(), key=lambda r: r.code)


def _load_module(modname: str) -> Rule:
    module = importlib.import_module(modname)
    rule = getattr(module, "RULE", None)
    if not isinstance(rule, Rule):
        raise RuntimeError(f"rule module {modname} does not define RULE")
    if hasattr(module, "visit") and not rule.node_types:
        raise RuntimeError(f"rule module {modname} defines visit() but RULE has no node_types")
    return replace(
        rule,
        doc=(module.__doc__ or "").strip(),
        module=modname,
        check=getattr(module, "check", None),
        visit=getattr(module, "visit", None),
    )


@lru_cache(maxsize=1)
def load_registry() -> Registry:
    import kernlint_rules

    rules = []
    for family in FAMILIES:
        package = importlib.import_module(f"kernlint_rules.{family}")
        # The rule modules are the package's .py files (listed directly: pkgutil imports typing,
        # about 3 ms of every start).
        names = sorted(
            {f[:-3] for d in package.__path__ for f in os.listdir(d) if f.endswith(".py")}
        )
        for name in names:
            if not name.startswith("_"):
                rules.append(_load_module(f"kernlint_rules.{family}.{name}"))
    del kernlint_rules
    return Registry(rules)
