"""The rule registry: kernlint's own rules, then the local rules of a project.

Every module under `rules/` (installed as `kernlint_rules`) defines one rule. A rule module has
a docstring (its documentation), `RULE = Rule(...)` (its metadata) and a `check(ctx)` function
(file-level) and/or a `visit(node, ctx)` function (called for each node whose type is in
`RULE.node_types`). docs/rule-api.md is the interface, versioned as `kernlint.RULE_API`.

Local rules are written the same way and come from two places:

* `rules-path = ["tools/kernlint_rules"]` in a config file: each directory's `*.py` files (not
  those starting with `_`) are rule modules, imported when a config that names the directory is
  read (before its `select` is resolved) as modules of a package of their own, so that they can
  import their `_helpers.py` relatively. Only the configs naming a directory enable its rules.
* The entry point group `kernlint.rules` of installed distributions: each entry point names a
  rule module, or a package whose modules are rules; read at start-up, after kernlint's own
  rules, from the distributions' `entry_points.txt` (without importlib.metadata, whose import
  alone costs about 40 ms of every start).

A module that cannot be used (it does not import, has no `RULE`, a malformed one, a code or name
another rule has) is a RuleLoadError: one line naming the module's file and what is wrong.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from functools import lru_cache

from . import RULE_API
from .config import ConfigError
from .lazyre import lazy_compile
from .model import APPLICABILITIES, SEVERITIES, STATUSES, Rule
from .record import replace

FAMILIES = ("meta", "cpp", "python", "compile")
ENTRY_POINT_GROUP = "kernlint.rules"
_DIST_SUFFIXES = (".dist-info", ".egg-info")  # (where installed distributions' metadata is)
# The package names the directories of `rules-path` are imported under (one per directory).
LOCAL_PACKAGE = "kernlint_local_rules_"

_CODE = lazy_compile(r"[A-Z]+[0-9]+")
_NAME = lazy_compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_LANGUAGES = ("cpp", "python", "any")
_SCOPES = ("all", "jit")
_FIXES = (None, "sometimes", *APPLICABILITIES)


class RuleLoadError(ConfigError):
    """A local rule module that cannot be used (the CLI prints it and exits with status 2)."""


class Registry:
    def __init__(self, rules: list[Rule]) -> None:
        self.rules = sorted(rules, key=lambda r: r.code)
        self.by_code = {r.code: r for r in self.rules}
        self.by_name = {r.name: r for r in self.rules}
        if len(self.by_code) != len(self.rules) or len(self.by_name) != len(self.rules):
            raise RuntimeError("duplicate rule code or name in the catalogue")
        # code -> the `rules-path` directory of a local rule: only the configs naming that
        # directory enable it (entry point rules, like kernlint's, are everyone's).
        self.scope: dict[str, str] = {}
        # code -> the file of a local rule's module (for messages and the result cache)
        self.files: dict[str, str] = {}
        self._directories: dict[str, list[Rule]] = {}  # the `rules-path` directories loaded

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

    def resolve(
        self, select, extend_select, ignore, *, preview: bool, where: str, local=(), given=()
    ) -> list[Rule]:
        """The enabled rules. Preview rules need `preview` or an exact code/name selection.

        `local`: the `rules-path` directories of the config resolving (the local rules of other
        directories are not its to select). `given`: selectors from the command line, already
        checked against every rule: one that names only other directories' rules selects
        nothing here instead of being an error of this config."""
        hidden = {c for c, d in self.scope.items() if d not in local} if self.scope else ()

        def expand(selectors, key, keep_all=False):
            out = []
            for s in selectors:
                rules = self.select(s)
                if rules is not None and hidden:
                    visible = [r for r in rules if r.code not in hidden]
                    if not visible and s not in given:
                        raise ConfigError(
                            f"{where}: `{key}`: `{s}` is a local rule of "
                            f"{self.scope[rules[0].code]}, which this config's `rules-path` "
                            "does not name"
                        )
                    rules = visible
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

    # -- local rules ------------------------------------------------------------------------
    def add(self, rule: Rule, path: str, scope: str | None = None) -> None:
        """Add a local rule defined in the module file `path` (`scope`: its `rules-path`
        directory, or None for everyone's). A code or name that another rule has is a
        RuleLoadError naming both modules."""
        for taken, key, what in (
            (self.by_code.get(rule.code), rule.code, "code"),
            (self.by_name.get(rule.name), rule.name, "name"),
        ):
            if taken is not None:
                raise RuleLoadError(
                    f"{path}: rule {what} `{key}` is already taken by {self._origin(taken)}"
                )
        self.by_code[rule.code] = rule
        self.by_name[rule.name] = rule
        self.files[rule.code] = path
        if scope is not None:
            self.scope[rule.code] = scope
        self.rules[:] = sorted(self.by_code.values(), key=lambda r: r.code)

    def _origin(self, rule: Rule) -> str:
        where = self.files.get(rule.code)
        if where is not None:
            return f"the local rule `{rule.name}` ({rule.code}) of {where}"
        return f"kernlint's rule `{rule.name}` ({rule.code}, {rule.module})"

    def load_directory(self, directory: str) -> list[Rule]:
        """The rules of one `rules-path` directory (an absolute path), imported once."""
        directory = os.path.normpath(directory)
        found = self._directories.get(directory)
        if found is not None:
            return found
        rules = []
        for name in sorted(os.listdir(directory)):
            path = os.path.join(directory, name)
            if name.endswith(".py") and not name.startswith(("_", ".")) and os.path.isfile(path):
                rules.append(self.load_file(path))
        self._directories[directory] = rules
        return rules

    def load_file(self, path: str) -> Rule:
        """The rule of one local module file, imported (once) as a module of its directory's
        package, and enabled only by the configs whose `rules-path` names that directory."""
        path = os.path.normpath(os.path.abspath(path))
        for code, file in self.files.items():
            if file == path:
                return self.by_code[code]
        directory, name = os.path.split(path)
        if not name.endswith(".py") or not name[:-3].isidentifier():
            raise RuleLoadError(
                f"{path}: a rule module's name must be a Python identifier (letters, digits "
                "and _) ending in .py"
            )
        module = _import(f"{_directory_package(directory)}.{name[:-3]}", path)
        rule = _local_rule(module, path)
        self.add(rule, path, scope=directory)
        _SOURCES[rule.module] = (directory, True)
        return rule

    def load_rules_path(self, raw) -> tuple[str, ...]:
        """Load the `rules-path` directories of a config (a RawConfig) and return them
        (absolute), for `resolve`'s `local`. A directory that does not exist is a ConfigError
        naming the config file that set the key."""
        paths = raw.values.get("rules-path") or ()
        where = raw.key_files.get("rules-path", raw.path)
        root = raw.key_roots.get("rules-path", raw.root)
        out: list[str] = []
        for p in paths:
            directory = os.path.normpath(os.path.join(root, os.path.expanduser(p)))
            if directory in out:
                continue
            if not os.path.isdir(directory):
                why = "not a directory" if os.path.exists(directory) else "no such directory"
                raise ConfigError(f"{where}: `rules-path`: {directory}: {why}")
            self.load_directory(directory)
            out.append(directory)
        return tuple(out)

    def load_entry_points(self, entry_points) -> None:
        """Add the rules the `kernlint.rules` entry points name: (distribution directory, entry
        point name, value) triples, as `entry_points()` finds them."""
        for dist, name, value in entry_points:
            try:
                self._load_entry_point(name, value, dist)
            except RuleLoadError as exc:
                raise RuleLoadError(
                    f"{exc} (entry point `{name} = {value}` of {os.path.basename(dist)}, "
                    f"group {ENTRY_POINT_GROUP}, in {os.path.dirname(dist)})"
                ) from None

    def _load_entry_point(self, name: str, value: str, dist: str) -> None:
        target = value.split("[")[0].strip()  # (extras: `module [extra]`)
        if ":" in target or not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", target):
            raise RuleLoadError(
                f"`{value}` must name a rule module or a package of them (`package.module`)"
            )
        module = _import(target, target)
        if hasattr(module, "RULE") or not hasattr(module, "__path__"):
            modules = [module]
        else:  # a package whose modules are rules
            names = sorted(
                {
                    f[:-3]
                    for d in module.__path__
                    for f in _listdir(d)
                    if f.endswith(".py") and not f.startswith(("_", "."))
                }
            )
            modules = [_import(f"{target}.{n}", f"{target}.{n}") for n in names]
        for m in modules:
            path = getattr(m, "__file__", None) or m.__name__
            rule = _local_rule(m, path)
            self.add(rule, path)
            _SOURCES[rule.module] = _entry_point_source(m, module, dist)


def _listdir(directory: str) -> list[str]:
    try:
        return os.listdir(directory)
    except OSError:
        return []


def _directory_package(directory: str):
    """The package a `rules-path` directory's modules are imported into: named after the
    directory, with the directory as its path (its `__init__.py`, if any, is not run)."""
    import hashlib
    import types

    name = (
        LOCAL_PACKAGE
        + hashlib.sha256(directory.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    )
    if name not in sys.modules:
        package = types.ModuleType(name, f"kernlint local rules of {directory}")
        package.__path__ = [directory]
        package.__package__ = name
        sys.modules[name] = package
    return name


def _import(module_name: str, where: str):
    """Import a local rule module; every failure is a RuleLoadError naming `where` (its file,
    or the entry point that names it) and the exception, never a traceback."""
    try:
        return importlib.import_module(module_name)
    except SyntaxError as exc:
        at = f"{exc.filename}:{exc.lineno}" if exc.filename and exc.lineno else where
        if exc.filename and os.path.abspath(exc.filename) != os.path.abspath(where):
            at = f"{where}: {at}"  # (the error is in a module the rule module imports)
        raise RuleLoadError(
            f"{at}: cannot load the local rule module: {type(exc).__name__}: {exc.msg}"
        ) from None
    except Exception as exc:
        detail = " ".join(str(exc).split())[:300]
        raise RuleLoadError(
            f"{where}: cannot load the local rule module: {type(exc).__name__}: {detail}"
        ) from None


def _local_rule(module, path: str) -> Rule:
    """The Rule a local module defines, checked as kernlint's own are and more (a malformed
    one would fail on some file, later, as a crash of the rule)."""

    def bad(message: str):
        return RuleLoadError(f"{path}: {message}")

    wanted = getattr(module, "RULE_API", RULE_API)
    if not isinstance(wanted, int) or isinstance(wanted, bool) or wanted > RULE_API:
        raise bad(
            f"written for rule API {wanted!r}; this kernlint has rule API {RULE_API}: "
            "upgrade kernlint"
        )
    rule = getattr(module, "RULE", None)
    if rule is None:
        raise bad("defines no `RULE` (a kernlint.model.Rule)")
    if not isinstance(rule, Rule):
        raise bad(f"`RULE` must be a kernlint.model.Rule, not {type(rule).__name__}")
    if not isinstance(rule.code, str) or not _CODE.fullmatch(rule.code):
        raise bad(f"`RULE.code` {rule.code!r} is not a rule code (capital letters, then digits)")
    if not isinstance(rule.name, str) or not _NAME.fullmatch(rule.name):
        raise bad(f"`RULE.name` {rule.name!r} is not a rule name (lower-case words joined by -)")
    for field, value, allowed in (
        ("language", rule.language, _LANGUAGES),
        ("severity", rule.severity, SEVERITIES),
        ("status", rule.status, STATUSES),
        ("scope", rule.scope, _SCOPES),
        ("fix", rule.fix, _FIXES),
    ):
        if value not in allowed:
            choices = ", ".join(repr(a) for a in allowed)
            raise bad(f"`RULE.{field}` must be one of {choices}, not {value!r}")
    if not isinstance(rule.summary, str) or not rule.summary.strip():
        raise bad("`RULE.summary` must be a non-empty string")
    if not isinstance(rule.triggers, tuple) or not all(
        isinstance(t, bytes) and t for t in rule.triggers
    ):
        raise bad('`RULE.triggers` must be a tuple of non-empty bytes (b"...")')
    if not isinstance(rule.node_types, tuple) or not all(
        isinstance(t, str) and t for t in rule.node_types
    ):
        raise bad("`RULE.node_types` must be a tuple of node type names")
    check, visit = getattr(module, "check", None), getattr(module, "visit", None)
    for fname, fn in (("check", check), ("visit", visit)):
        if fn is not None and not callable(fn):
            raise bad(f"`{fname}` must be a function")
    if check is None and visit is None:
        raise bad("defines neither check(ctx) nor visit(node, ctx)")
    if visit is not None and not rule.node_types:
        raise bad("defines visit() but `RULE.node_types` is empty")
    if rule.node_types and visit is None:
        raise bad("`RULE.node_types` is set but the module defines no visit(node, ctx)")
    return replace(
        rule, doc=(module.__doc__ or "").strip(), module=module.__name__, check=check, visit=visit
    )


# -- entry points -----------------------------------------------------------------------------
def entry_points(group: str = ENTRY_POINT_GROUP, path=None) -> list[tuple[str, str, str]]:
    """(distribution directory, name, value) of the entry points of `group` that the
    distributions on `path` (sys.path) declare, read from their `*.dist-info` and `*.egg-info`
    directories' `entry_points.txt` as importlib.metadata does (the first distribution of a name
    on the path wins), for a fraction of its cost: one directory listing per path entry and one
    open per distribution."""
    header = f"[{group}]"
    marker = header.encode()
    seen: set[str] = set()
    out = []
    for entry in sys.path if path is None else path:
        directory = entry or "."
        for name in sorted(n for n in _listdir(directory) if n.endswith(_DIST_SUFFIXES)):
            # (the distribution's name, normalized: `Foo.Bar-1.0.dist-info` -> `foo_bar`)
            dist = name.rpartition(".")[0].split("-")[0].lower().replace(".", "_")
            if dist in seen:
                continue
            seen.add(dist)
            try:
                with open(os.path.join(directory, name, "entry_points.txt"), "rb") as fh:
                    data = fh.read()
            except OSError:
                continue
            if marker not in data:
                continue
            where = os.path.join(directory, name)
            section = None
            for line in data.decode("utf-8", "replace").splitlines():
                line = line.strip()
                if not line or line.startswith(("#", ";")):
                    continue
                if line.startswith("["):
                    section = line
                elif section == header and "=" in line:
                    key, _, value = line.partition("=")
                    out.append((where, key.strip(), value.strip()))
    return out


def _entry_point_source(module, named, dist: str):
    """What the result cache hashes for an entry point's rule: the distribution (its version is
    in its directory's name) and the source of the package it names, or of the module and its
    sibling modules (a top-level module: its file)."""
    if named is not module or hasattr(module, "__path__"):
        return (next(iter(named.__path__)), True, dist)
    if "." in module.__name__:
        return (os.path.dirname(module.__file__), False, dist)
    return (module.__file__, False, dist)


# module name of a local rule -> (file or directory, recursive, distribution or absent)
_SOURCES: dict[str, tuple] = {}
_DIGESTS: dict[tuple, str] = {}


def local_key(rules) -> str:
    """A digest of the source of the local rules among `rules` ("" when there are none): the
    result cache's key covers it, so an edited local rule is never answered from old results.
    Computed once per source per process (a process runs the code it imported)."""
    if not _SOURCES:
        return ""
    parts = []
    for rule in rules:
        source = _SOURCES.get(rule.module)
        if source is not None:
            digest = _DIGESTS.get(source)
            if digest is None:
                digest = _DIGESTS[source] = _digest(*source)
            parts.append(f"{rule.code}={digest}")
    return "|".join(parts)


def _digest(path: str, recursive: bool, dist: str = "") -> str:
    import hashlib

    h = hashlib.sha256(os.path.basename(dist).encode("utf-8", "surrogateescape"))
    if os.path.isfile(path):
        files = [path]
    else:
        files = []
        for directory, subdirs, names in os.walk(path):
            subdirs[:] = sorted(d for d in subdirs if d != "__pycache__") if recursive else []
            files += [os.path.join(directory, n) for n in sorted(names) if n.endswith(".py")]
    for f in files:
        try:
            with open(f, "rb") as fh:
                data = fh.read()
        except OSError:
            data = b"\0unreadable"
        h.update(f"{os.path.relpath(f, path)}\0{len(data)}\0".encode("utf-8", "surrogateescape"))
        h.update(data)
    return h.hexdigest()[:16]


# -- kernlint's own rules -----------------------------------------------------------------------
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


def shipped_rules() -> list[Rule]:
    """kernlint's own rules (the `kernlint_rules` package)."""
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
    return rules


@lru_cache(maxsize=1)
def load_registry() -> Registry:
    """kernlint's rules and those of the installed `kernlint.rules` entry points (a module
    that cannot be used raises RuleLoadError). The `rules-path` directories of a project are
    added when the configs naming them are read (Registry.load_rules_path)."""
    registry = Registry(shipped_rules())
    found = entry_points()
    if found:
        registry.load_entry_points(found)
    return registry


def load_local_rules_for(registry: Registry, config: str | None, paths) -> None:
    """Load the `rules-path` rules of the config named with `--config`, or of the configs that
    govern `paths` (files or directories; found as `kernlint check` finds them), so that the
    command line may name their rules before any file is looked at. ConfigError on failure."""
    from .config import find_config_in, load_config_file

    if config is not None:
        configs = {os.path.abspath(config)}
    else:
        configs = set()
        for p in paths:
            d = os.path.abspath(p)
            if not os.path.isdir(d):
                d = os.path.dirname(d)
            while True:
                found = find_config_in(d)
                if found is not None:
                    configs.add(found)
                    break
                parent = os.path.dirname(d)
                if parent == d:
                    break
                d = parent
    for path in sorted(configs):
        raw = load_config_file(path)
        if raw.values.get("rules-path"):
            registry.load_rules_path(raw)
