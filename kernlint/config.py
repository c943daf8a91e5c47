"""Configuration: `[tool.kernlint]` in `pyproject.toml`, or `kernlint.toml`.

Discovery: for each file, the nearest directory upward holding `kernlint.toml` or a
`pyproject.toml` with a `[tool.kernlint]` table (a `kernlint.toml` wins in the same directory).
`--config FILE` uses one file for everything. `extend = "path"` inherits from another file
(relative to the file that names it); keys set here override the inherited ones.
Paths and globs in a config file (`exclude`, `per-file-ignores`, `jit-roots`) are relative to
the directory of the config file that set them.
"""

from __future__ import annotations

import os
import re
import sys
from functools import cached_property

from .record import field, record


def _tomllib():
    """The TOML parser, imported when a config file is read (most runs on a tree without one
    never need it: 6 ms at start-up)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    return tomllib


class ConfigError(Exception):
    """A configuration problem; the CLI prints it and exits with status 2."""


DEFAULT_EXCLUDE = [
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".kernlint_cache",
    "__pycache__",
    "node_modules",
    "site-packages",
    "build",
    "dist",
]

DEFAULT_JIT_ROOTS = [
    "**/kernels/jit/csrc/**",
    "**/kernels/jit/include/**",
    "**/jit_kernel/csrc/**",
    "**/jit_kernel/include/**",
    # Vendored third-party code keeps its own conventions.
    "!**/vendor/**",
    "!**/3rdparty/**",
    "!**/third_party/**",
]

# key -> expected type (checked strictly; unknown keys are errors)
KNOWN_KEYS: dict[str, type | tuple[type, ...]] = {
    "extend": str,
    "select": list,
    "extend-select": list,
    "ignore": list,
    "per-file-ignores": dict,
    "exclude": list,
    "extend-exclude": list,
    "jit-roots": list,
    "extend-jit-roots": list,
    "preview": bool,
    "respect-gitignore": bool,
    "aiter-import-policy": str,
    "semantic": bool,
    "include-paths": list,
    "defines": list,
}
AITER_IMPORT_POLICIES = ("lexical", "import-time")


_DEFINE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(=.*)?", re.S)


def check_define(text: str, where: str) -> None:
    """`NAME` or `NAME=VALUE` (a macro for the semantic pass), else a ConfigError."""
    if not _DEFINE.fullmatch(text):
        raise ConfigError(f"{where}: {text!r} is not a macro definition (NAME or NAME=VALUE)")


@record
class RawConfig:
    """The merged key/value pairs of one config file (after `extend`), with provenance."""

    path: str | None  # the config file, or None for defaults
    root: str  # directory that relative globs in this config are relative to
    values: dict = field(default_factory=dict)
    # where each key came from (for per-file-ignores / exclude relative roots)
    key_roots: dict = field(default_factory=dict)


def _load_toml(path: str) -> dict:
    tomllib = _tomllib()
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None


def _table_of(path: str) -> dict | None:
    data = _load_toml(path)
    if os.path.basename(path) == "pyproject.toml":
        table = data.get("tool", {}).get("kernlint")
        return table if isinstance(table, dict) else None
    return data


def _validate(path: str, table: dict) -> None:
    for key, value in table.items():
        if key not in KNOWN_KEYS:
            known = ", ".join(sorted(KNOWN_KEYS))
            raise ConfigError(f"{path}: unknown key `{key}` (known keys: {known})")
        expected = KNOWN_KEYS[key]
        if not isinstance(value, expected):
            name = expected.__name__ if isinstance(expected, type) else "value"
            raise ConfigError(f"{path}: `{key}` must be a {name}, not {type(value).__name__}")
        if isinstance(value, list) and not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{path}: `{key}` must be a list of strings")
        if key == "aiter-import-policy" and value not in AITER_IMPORT_POLICIES:
            choices = ", ".join(f'"{c}"' for c in AITER_IMPORT_POLICIES)
            raise ConfigError(
                f"{path}: `aiter-import-policy` must be one of {choices}, not {value!r}"
            )
        if key == "defines":
            for d in value:
                check_define(d, f"{path}: `defines`")
        if key == "per-file-ignores":
            for pattern, codes in value.items():
                if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
                    raise ConfigError(
                        f"{path}: `per-file-ignores.{pattern}` must be a list of rule codes"
                    )


def load_config_file(path: str, _seen: tuple[str, ...] = ()) -> RawConfig:
    path = os.path.abspath(path)
    if path in _seen:
        raise ConfigError(f"{path}: `extend` cycle: {' -> '.join(_seen + (path,))}")
    if not os.path.isfile(path):
        raise ConfigError(f"{path}: config file not found")
    table = _table_of(path)
    if table is None:
        table = {}
    _validate(path, table)
    root = os.path.dirname(path)
    if "extend" in table:
        base_path = os.path.join(root, os.path.expanduser(table["extend"]))
        raw = load_config_file(base_path, _seen + (path,))
    else:
        raw = RawConfig(path=path, root=root)
    for key, value in table.items():
        if key == "extend":
            continue
        raw.values[key] = value
        raw.key_roots[key] = root
    raw.path = path
    raw.root = root
    return raw


def find_config_in(directory: str, names=None) -> str | None:
    """The config file that lives in `directory`, if any. `names`: the directory's entries,
    when the caller has listed it (a file that is not among them is not looked for)."""
    candidate = os.path.join(directory, "kernlint.toml")
    if (names is None or "kernlint.toml" in names) and os.path.isfile(candidate):
        return candidate
    candidate = os.path.join(directory, "pyproject.toml")
    if (names is None or "pyproject.toml" in names) and os.path.isfile(candidate):
        try:
            with open(candidate, "rb") as fh:
                head = fh.read()
        except OSError:
            return None
        if b"[tool.kernlint" in head and _table_of(candidate) is not None:
            return candidate
    return None


@record
class Overrides:
    """Command-line settings that apply on top of every config file."""

    select: list[str] | None = None
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    preview: bool | None = None
    semantic: bool | None = None
    exclude: list[str] | None = None
    extend_exclude: list[str] = field(default_factory=list)
    defines: list[str] = field(default_factory=list)


def import_time_policy(settings) -> bool:
    """Do these settings (or None) choose the `import-time` policy of ungated-aiter-import?"""
    return getattr(settings, "aiter_import_policy", "") == "import-time"


class Settings:
    """Effective settings for the files governed by one config file (plus CLI overrides)."""

    def __init__(self, raw: RawConfig, overrides: Overrides, registry) -> None:
        self.raw = raw
        self.root = raw.root
        v = raw.values
        self.preview = (
            overrides.preview if overrides.preview is not None else v.get("preview", False)
        )
        self.respect_gitignore = v.get("respect-gitignore", True)
        self.aiter_import_policy = v.get("aiter-import-policy", "lexical")
        self.semantic = (
            overrides.semantic if overrides.semantic is not None else v.get("semantic", False)
        )
        # Macros for the semantic pass (`-D`), as the kernel's build passes them; the command
        # line's come after the config's, so they win.
        self.defines = list(v.get("defines", [])) + list(overrides.defines)
        inc_root = raw.key_roots.get("include-paths", raw.root)
        self.include_paths = [
            p if os.path.isabs(p) else os.path.normpath(os.path.join(inc_root, p))
            for p in v.get("include-paths", [])
        ]
        where = raw.path or "command line"
        select = overrides.select if overrides.select is not None else v.get("select", ["ALL"])
        extend = list(v.get("extend-select", [])) + overrides.extend_select
        ignore = list(v.get("ignore", [])) + overrides.ignore
        self.enabled = registry.resolve(select, extend, ignore, preview=self.preview, where=where)
        self.exclude_root = raw.key_roots.get("exclude", raw.root)
        if overrides.exclude is not None:
            self.exclude = list(overrides.exclude)
            self.exclude_root = os.getcwd()
        else:
            self.exclude = list(v.get("exclude", DEFAULT_EXCLUDE))
        self.extend_exclude = [
            (p, raw.key_roots.get("extend-exclude", raw.root)) for p in v.get("extend-exclude", [])
        ]
        self.extend_exclude += [(p, os.getcwd()) for p in overrides.extend_exclude]
        self.jit_roots = list(v.get("jit-roots", DEFAULT_JIT_ROOTS)) + list(
            v.get("extend-jit-roots", [])
        )
        self.jit_root_base = raw.key_roots.get(
            "jit-roots", raw.key_roots.get("extend-jit-roots", raw.root)
        )
        pfi_root = raw.key_roots.get("per-file-ignores", raw.root)
        self.per_file_ignores = []
        for pattern, selectors in v.get("per-file-ignores", {}).items():
            codes = registry.resolve(
                selectors, [], [], preview=True, where=f"{where} per-file-ignores"
            )
            self.per_file_ignores.append((_spec([pattern]), pfi_root, codes))

    @cached_property
    def _exclude_names(self) -> frozenset[str]:
        """Exclude patterns that are plain names (`build`, `.git`): matched by base name."""
        return frozenset(p.rstrip("/") for p in self.exclude if _is_plain_name(p))

    @cached_property
    def _exclude_specs(self):
        complex_ = [p for p in self.exclude if not _is_plain_name(p)]
        specs = [(_spec(complex_), self.exclude_root)] if complex_ else []
        by_root: dict[str, list[str]] = {}
        for pattern, root in self.extend_exclude:
            by_root.setdefault(root, []).append(pattern)
        specs += [(_spec(pats), root) for root, pats in by_root.items()]
        return specs

    @cached_property
    def _jit_spec(self):
        return _spec(self.jit_roots)

    def is_excluded(self, abspath: str, is_dir: bool = False, name: str | None = None) -> bool:
        """`name`: the path's last component, when the caller has it."""
        if name is None:
            name = os.path.basename(abspath)
        if name in self._exclude_names:
            return True
        for spec, root in self._exclude_specs:
            rel = _relative(abspath, root)
            if rel is None:
                # outside the config's root: match on the base name and absolute path
                if spec.match_file(name + ("/" if is_dir else "")):
                    return True
                continue
            if spec.match_file(rel + ("/" if is_dir else "")):
                return True
        return False

    def is_jit(self, abspath: str) -> bool:
        posix = abspath.replace(os.sep, "/").lstrip("/")
        rel = _relative(abspath, self.jit_root_base)
        if rel is not None and self._jit_spec.match_file(rel):
            return True
        return self._jit_spec.match_file(posix)

    def rules_for(self, abspath: str):
        """The enabled rules for one file, after per-file-ignores."""
        if not self.per_file_ignores:
            return self.enabled
        ignored = set()
        for spec, root, codes in self.per_file_ignores:
            rel = _relative(abspath, root)
            if rel is not None and spec.match_file(rel):
                ignored |= set(codes)
        return [r for r in self.enabled if r not in ignored] if ignored else self.enabled


def _relative(abspath: str, root: str) -> str | None:
    prefix = root if root.endswith(os.sep) else root + os.sep
    if abspath.startswith(prefix):
        rel = abspath[len(prefix) :]
        return rel if os.sep == "/" else rel.replace(os.sep, "/")
    try:
        rel = os.path.relpath(abspath, root)
    except ValueError:
        return None
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return None
    return rel.replace(os.sep, "/")


def _is_plain_name(pattern: str) -> bool:
    """`build` or `build/`: a gitignore pattern that matches a base name anywhere."""
    name = pattern[:-1] if pattern.endswith("/") else pattern
    return bool(name) and not any(c in name for c in "/*?[]!\\") and not name.startswith("#")


def _spec(patterns: list[str]):
    from .globmatch import matcher

    return matcher(tuple(patterns))


class ConfigResolver:
    """Finds and caches the settings that govern each directory."""

    def __init__(self, registry, overrides: Overrides, config_file: str | None = None) -> None:
        self.registry = registry
        self.overrides = overrides
        self._by_config: dict[str | None, Settings] = {}
        self._by_dir: dict[str, Settings] = {}
        self.fixed = None
        if config_file is not None:
            self.fixed = self._settings_for_config(config_file)

    def _settings_for_config(self, path: str | None) -> Settings:
        key = os.path.abspath(path) if path else None
        settings = self._by_config.get(key)
        if settings is None:
            raw = load_config_file(key) if key else RawConfig(path=None, root=os.getcwd())
            settings = Settings(raw, self.overrides, self.registry)
            self._by_config[key] = settings
        return settings

    def all_settings(self) -> list[Settings]:
        """Every settings object built so far (one per config file found, or the fixed one)."""
        return list(self._by_config.values())

    def for_directory(self, directory: str, names=None) -> Settings:
        """The settings of the files in `directory` (`names`: its entries, when listed)."""
        if self.fixed is not None:
            return self.fixed
        directory = os.path.abspath(directory)
        found = self._by_dir.get(directory)
        if found is not None:
            return found
        chain = []
        d = directory
        config_path = None
        while True:
            if d in self._by_dir:
                settings = self._by_dir[d]
                break
            chain.append(d)
            config_path = find_config_in(d, names if d == directory else None)
            if config_path is not None:
                settings = self._settings_for_config(config_path)
                break
            parent = os.path.dirname(d)
            if parent == d:
                settings = self._settings_for_config(None)
                break
            d = parent
        for c in chain:
            self._by_dir[c] = settings
        return settings

    def for_file(self, abspath: str) -> Settings:
        directory = os.path.dirname(abspath)
        found = self._by_dir.get(directory) if self.fixed is None else None
        # (keys are normalized absolute paths: a path spelled otherwise takes the long way)
        return found if found is not None else self.for_directory(directory)
