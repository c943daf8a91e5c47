"""Configuration: `[tool.kernlint]` in `pyproject.toml`, or `kernlint.toml`.

Discovery: for each file, the nearest directory upward holding `kernlint.toml` or a
`pyproject.toml` with a `[tool.kernlint]` table (a `kernlint.toml` wins in the same directory).
`--config FILE` uses one file for everything. `extend = "path"` inherits from another file
(relative to the file that names it); keys set here override the inherited ones.
Paths and globs in a config file (`exclude`, `per-file-ignores`, `jit-roots`,
`jit-benchmark-roots`, `registered-tests-roots`, `sglang-package-roots`, `rules-path`) are relative to the directory of the config file that set them.

Errors (a ConfigError: one line naming the file, and the key where there is one): a config
file that cannot be read, is not UTF-8 (a UTF-8 BOM is allowed), is not TOML or cannot be
parsed; a wrong table shape (`tool`, `tool.kernlint`), an unknown key, a value of the wrong
type, an empty rule selector, an invalid glob; an `extend` cycle or missing target. A
`pyproject.toml` whose bytes do not contain `kernlint` cannot be kernlint's and is not parsed;
one that does is read like any config file (an invalid one is an error, as in ruff), and
skipped when it has no `[tool.kernlint]` table.
"""

from __future__ import annotations

import os
import re
import sys
from functools import cached_property, lru_cache

from .lazyre import lazy_compile
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

# Where SGLang's JIT kernel benchmarks live (`direct-triton-benchmark`): the CI-registered
# benchmarks of the source tree and the JIT trees' own `benchmark/` folders in the wheels.
DEFAULT_JIT_BENCHMARK_ROOTS = [
    "**/test/registered/kernels/benchmark/**",
    "**/kernels/jit/benchmark/**",
    "**/jit_kernel/benchmark/**",
    # AOT (sgl-kernel) benchmarks use triton.testing by their own guide.
    "!**/aot/**",
]

# Where SGLang's CI collects registered tests (`test/run_suite.py`), and where the importable
# `sglang` package lives in the source tree (the CI-registration rules, kernlint/ci_layout.py).
DEFAULT_REGISTERED_TESTS_ROOTS = ["**/test/registered/**"]
DEFAULT_SGLANG_PACKAGE_ROOTS = ["**/python/sglang/**"]
# Holds "registered-tests-roots" once any settings of this process name other roots than the
# default: until then a file without `test/registered/` in its path is no collected test (the
# rules' path filter, which sees no settings).
CUSTOMIZED_ROOTS: set[str] = set()

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
    "jit-benchmark-roots": list,
    "extend-jit-benchmark-roots": list,
    "registered-tests-roots": list,
    "extend-registered-tests-roots": list,
    "sglang-package-roots": list,
    "extend-sglang-package-roots": list,
    "preview": bool,
    "respect-gitignore": bool,
    "aiter-import-policy": str,
    "semantic": bool,
    "include-paths": list,
    "jit-source-root": str,
    "defines": list,
    "max-file-size": int,
    "jit-exempt-markers": bool,
    "generated-markers": bool,
    # The compile pass (kernlint.compile): registers and spills of kernels.
    "compile": bool,
    "compile-archs": list,
    "compile-instantiate": dict,
    "register-budget": int,
    "per-file-register-budget": dict,
    # Directories of local rule modules (kernlint.registry; docs/local-rules.md).
    "rules-path": list,
    # House conventions (docs/presets.md): a shipped preset under the config, and the names the
    # rules take as the project's own. Unset: SGLang's (the `sglang` preset).
    "preset": str,
    "namespaces": list,
    "third-party-namespaces": list,
    "launch-wrappers": list,
    "launch-check": (str, list),
    "primitives": list,
    "drop-primitives": list,
    "primitives-implementation": list,
    "ffi-boundaries": list,
    "aiter-gates": list,
    "jit-loaders": list,
    "jit-cache-decorators": list,
    "ci-registration-functions": list,
}
PRESETS = ("sglang", "flashinfer", "vllm", "generic")
PRESET_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "presets")
FFI_BOUNDARIES = ("tvm-ffi", "torch-library", "pybind11")
# The convention keys (Settings attributes of the same name, `-` as `_`; None when unset).
CONVENTION_KEYS = (
    "namespaces",
    "third-party-namespaces",
    "launch-wrappers",
    "launch-check",
    "primitives",
    "drop-primitives",
    "primitives-implementation",
    "ffi-boundaries",
    "aiter-gates",
    "jit-loaders",
    "jit-cache-decorators",
    "ci-registration-functions",
)
_PRIMITIVE_KEYS = {"name": str, "pattern": str, "replacement": str, "message": str}
_NAME = lazy_compile(r"(::)?[A-Za-z_]\w*(::[A-Za-z_]\w*)*")
# (the keys naming Python functions and flags: plain identifiers, matched by their last part)
_PYTHON_NAME_KEYS = (
    "aiter-gates",
    "jit-loaders",
    "jit-cache-decorators",
    "ci-registration-functions",
)
AITER_IMPORT_POLICIES = ("reachable", "lexical", "import-time")
DEFAULT_MAX_FILE_SIZE = 50 * 1024 * 1024  # bytes; a larger file is skipped with a warning


_DEFINE = lazy_compile(r"[A-Za-z_][A-Za-z0-9_]*(=.*)?", re.S)
_ARCH = lazy_compile(r"sm_\d{2,3}[af]?")
_ANY_LIST_KEYS = frozenset({"primitives"})  # (list keys whose items need not be strings)
DEFAULT_REGISTER_BUDGET = 64
COMPILE_RULES = frozenset({"register-budget-exceeded", "register-spill"})  # (kernlint.compile)
DEFAULT_COMPILE_ARCHS = ["sm_90"]


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
    # the config file that set each key (`extend` chains; `kernlint check --show-settings`)
    key_files: dict = field(default_factory=dict)


_BARE_KEY = lazy_compile(r"[A-Za-z0-9_-]+")
_SELECTOR = lazy_compile(r"[A-Za-z0-9_-]+")
_GLOB_KEYS = (
    "exclude",
    "extend-exclude",
    "jit-roots",
    "extend-jit-roots",
    "jit-benchmark-roots",
    "extend-jit-benchmark-roots",
    "registered-tests-roots",
    "extend-registered-tests-roots",
    "sglang-package-roots",
    "extend-sglang-package-roots",
)
_SELECTOR_KEYS = ("select", "extend-select", "ignore")
_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def _show(text: str, limit: int = 60) -> str:
    """A config string for an error message: quoted, escaped (one line), cut when long."""
    shown = repr(text[: limit + 1])
    return shown if len(text) <= limit else shown[:-1] + "..." + shown[-1]


def _key(name: str, limit: int = 60) -> str:
    """A TOML key for an error message: itself when bare, else quoted (one line, cut when long)."""
    if _BARE_KEY.fullmatch(name):
        return name if len(name) <= limit else name[:limit] + "..."
    import json

    quoted = json.dumps(name[:limit])
    return quoted if len(name) <= limit else quoted[:-1] + '..."'


def _toml_type(value) -> str:
    """The TOML name of a parsed value's type, with its article."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        if value and all(isinstance(v, dict) for v in value):
            return "an array of tables"
        return "an array"
    return "a date or time"


_EXPECTED = {
    (str, list): "a string or an array of strings",
    str: "a string",
    list: "an array of strings",
    bool: "true or false",
    dict: "a table",
    int: "an integer",
}


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc.strerror or exc}") from None


def _parse(path: str, data: bytes) -> dict:
    """The TOML document in `data` (a UTF-8 BOM is allowed), else a ConfigError naming `path`:
    every failure of the decoder or the parser (invalid UTF-8, invalid TOML, nesting deeper
    than the parser's recursion, an integer too long to convert) is one."""
    if data.startswith(_UTF8_BOM):
        data = data[len(_UTF8_BOM) :]
    elif data.startswith(_UTF16_BOMS):
        raise ConfigError(f"{path}: not valid UTF-8 (a UTF-16 file): save it as UTF-8")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(
            f"{path}: not valid UTF-8 (byte 0x{data[exc.start]:02x} on line {line}): "
            "a config file must be UTF-8 TOML"
        ) from None
    tomllib = _tomllib()
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {_one_line(exc)}") from None
    except RecursionError:
        raise ConfigError(f"{path}: invalid TOML: nested too deeply to parse") from None
    except Exception as exc:  # the parser's other failures (ValueError, MemoryError, ...)
        raise ConfigError(f"{path}: invalid TOML: {_one_line(exc)}") from None


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:300] + "..."


def _load_toml(path: str) -> dict:
    return _parse(path, _read(path))


def _kernlint_table(path: str, data: dict) -> dict | None:
    """kernlint's table in a parsed config file: the whole document of a `kernlint.toml` (or
    any other name), `[tool.kernlint]` of a `pyproject.toml` (None when it has none)."""
    if os.path.basename(path) != "pyproject.toml":
        return data
    tool = data.get("tool")
    if tool is None:
        return None
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: `tool` must be a table, not {_toml_type(tool)}")
    table = tool.get("kernlint")
    if table is None or isinstance(table, dict):
        return table
    raise ConfigError(f"{path}: `tool.kernlint` must be a table, not {_toml_type(table)}")


def _table_of(path: str) -> dict | None:
    return _kernlint_table(path, _load_toml(path))


def _check_selectors(path: str, key: str, selectors: list[str]) -> None:
    for s in selectors:
        if not s.strip():
            raise ConfigError(f"{path}: {key}: an empty rule selector is not allowed")
        if not _SELECTOR.fullmatch(s.strip()):
            raise ConfigError(f"{path}: {key}: {_show(s)} is not a rule code, name or prefix")


def _check_globs(path: str, key: str, patterns) -> None:
    from .globmatch import compile_pattern

    for pattern in patterns:
        try:
            compile_pattern(pattern)
        except re.error as exc:
            raise ConfigError(f"{path}: {key}: invalid glob {_show(pattern)}: {exc}") from None


def _validate(path: str, table: dict) -> None:
    for key, value in table.items():
        if key not in KNOWN_KEYS:
            known = ", ".join(sorted(KNOWN_KEYS))
            hint = (
                "; only a pyproject.toml holds a [tool.kernlint] table, any other config file is "
                "that table"
                if key == "tool"
                else ""
            )
            raise ConfigError(f"{path}: unknown key `{_key(key)}` (known keys: {known}){hint}")
        expected = KNOWN_KEYS[key]
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise ConfigError(
                f"{path}: `{key}` must be {_EXPECTED[expected]}, not {_toml_type(value)}"
            )
        if isinstance(value, list) and key not in _ANY_LIST_KEYS:
            for i, v in enumerate(value, 1):
                if not isinstance(v, str):
                    raise ConfigError(
                        f"{path}: `{key}` must be an array of strings, "
                        f"not one holding {_toml_type(v)} (item {i})"
                    )
        if key in _SELECTOR_KEYS:
            _check_selectors(path, f"`{key}`", value)
        if key in _GLOB_KEYS:
            _check_globs(path, f"`{key}`", value)
        if key == "aiter-import-policy" and value not in AITER_IMPORT_POLICIES:
            choices = ", ".join(f'"{c}"' for c in AITER_IMPORT_POLICIES)
            raise ConfigError(
                f"{path}: `aiter-import-policy` must be one of {choices}, not {_show(value)}"
            )
        if key == "rules-path" and not all(p.strip() for p in value):
            raise ConfigError(f"{path}: `rules-path` must hold directory paths, not empty ones")
        if key == "jit-source-root" and not value.strip():
            raise ConfigError(f"{path}: `jit-source-root` must be a directory path, not empty")
        if key == "max-file-size" and value < 1:
            raise ConfigError(f"{path}: `max-file-size` must be a positive number of bytes")
        if key == "defines":
            for d in value:
                check_define(d, f"{path}: `defines`")
        if key == "preset" and value not in PRESETS:
            choices = ", ".join(f'"{c}"' for c in PRESETS)
            raise ConfigError(f"{path}: `preset` must be one of {choices}, not {_show(value)}")
        if key == "ffi-boundaries":
            for kind in value:
                if kind not in FFI_BOUNDARIES:
                    choices = ", ".join(f'"{c}"' for c in FFI_BOUNDARIES)
                    raise ConfigError(
                        f"{path}: `ffi-boundaries`: {_show(kind)} is not one of {choices}"
                    )
        if key in (
            "namespaces",
            "third-party-namespaces",
            "launch-wrappers",
            "aiter-gates",
            "jit-loaders",
            "jit-cache-decorators",
            "ci-registration-functions",
        ):
            for name in value:
                if not _NAME.fullmatch(name):
                    raise ConfigError(f"{path}: `{key}`: {_show(name)} is not a C++ or Python name")
                if "::" in name and key in _PYTHON_NAME_KEYS:
                    raise ConfigError(f"{path}: `{key}`: {_show(name)} is not a Python name")
        if key == "launch-check":
            for name in [value] if isinstance(value, str) else value:
                if name and not _NAME.fullmatch(name):
                    raise ConfigError(
                        f"{path}: `launch-check`: {_show(name)} is not a macro or function name"
                    )
        if key == "primitives":
            for i, entry in enumerate(value, 1):
                where = f"{path}: `primitives` item {i}"
                if not isinstance(entry, dict):
                    raise ConfigError(
                        f"{where} must be a table (name, pattern, replacement, message)"
                    )
                for k, v2 in entry.items():
                    if k not in _PRIMITIVE_KEYS:
                        known = ", ".join(_PRIMITIVE_KEYS)
                        raise ConfigError(f"{where}: unknown key `{_key(k)}` (known: {known})")
                    if not isinstance(v2, str) or not v2.strip():
                        raise ConfigError(f"{where}: `{k}` must be a non-empty string")
                for k in ("name", "pattern", "replacement"):
                    if k not in entry:
                        raise ConfigError(f"{where}: `{k}` is missing")
                try:
                    re.compile(entry["pattern"])
                except re.error as exc:
                    raise ConfigError(
                        f"{where}: `pattern` is not a regular expression: {exc}"
                    ) from None
        if key == "primitives-implementation":
            _check_globs(path, "`primitives-implementation`", value)
        if key == "drop-primitives":
            from kernlint_rules.cpp.raw_cuda_primitive import drop_primitives_problem

            problem = drop_primitives_problem(value)
            if problem is not None:
                raise ConfigError(f"{path}: `drop-primitives`: {problem}")
        if key == "compile-archs":
            for arch in value:
                if not _ARCH.fullmatch(arch):
                    raise ConfigError(
                        f"{path}: `compile-archs`: {_show(arch)} is not a CUDA architecture "
                        '(such as "sm_90", "sm_90a", "sm_100")'
                    )
        if key == "register-budget" and not 1 <= value <= 255:
            raise ConfigError(
                f"{path}: `register-budget` must be a number of registers from 1 to 255"
            )
        if key == "per-file-register-budget":
            for pattern, budget in value.items():
                where = f"`per-file-register-budget.{_key(pattern)}`"
                if (
                    not isinstance(budget, int)
                    or isinstance(budget, bool)
                    or not 1 <= budget <= 255
                ):
                    raise ConfigError(
                        f"{path}: {where} must be a number of registers from 1 to 255"
                    )
                _check_globs(path, "`per-file-register-budget`", [pattern])
        if key == "compile-instantiate":
            from .compile.instances import check_config

            check_config(path, value)
        if key == "per-file-ignores":
            for pattern, codes in value.items():
                where = f"`per-file-ignores.{_key(pattern)}`"
                if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
                    raise ConfigError(f"{path}: {where} must be an array of rule codes")
                _check_selectors(path, where, codes)
                _check_globs(path, "`per-file-ignores`", [pattern])


def load_config_file(path: str) -> RawConfig:
    """The merged settings of one config file and the files it `extend`s (iteratively: a long
    chain cannot exhaust the stack). A cycle, or a target that does not exist, is an error
    naming the file whose `extend` leads there."""
    path = os.path.abspath(path)
    chain: list[tuple[str, dict]] = []  # from the named file down to the base
    seen: set[str] = set()
    referrer = None
    while True:
        if path in seen:
            cycle = " -> ".join([p for p, _ in chain] + [path])
            raise ConfigError(f"{referrer}: `extend`: cycle: {cycle}")
        if not os.path.isfile(path):
            if referrer is None:
                raise ConfigError(f"{path}: config file not found")
            raise ConfigError(f"{referrer}: `extend`: {path}: config file not found")
        table = _table_of(path)
        if table is None:
            table = {}
        _validate(path, table)
        seen.add(path)
        chain.append((path, table))
        if "extend" not in table:
            break
        referrer = path
        target = os.path.expanduser(table["extend"])
        path = os.path.abspath(os.path.join(os.path.dirname(path), target))
    raw = RawConfig(path=chain[0][0], root=os.path.dirname(chain[0][0]))
    layers = [(p, table, os.path.dirname(p)) for p, table in reversed(chain)]
    # `preset`: a shipped config under the whole chain (the nearest file that names one wins);
    # its paths are relative to the directory of the file that names it.
    named = next(((p, t["preset"]) for p, t in chain if "preset" in t), None)
    if named is not None:
        preset_path = os.path.join(PRESET_DIR, f"{named[1]}.toml")
        table = _table_of(preset_path) or {}
        _validate(preset_path, table)
        layers.insert(0, (preset_path, table, os.path.dirname(named[0])))
    for p, table, root in layers:
        for key, value in table.items():
            if key == "extend":
                continue
            raw.values[key] = value
            raw.key_roots[key] = root
            raw.key_files[key] = p
    return raw


def _may_configure_kernlint(data: bytes) -> bool:
    """Could these `pyproject.toml` bytes hold a `tool.kernlint` table? (Not without the word:
    a file that cannot be kernlint's is not parsed, whatever it holds.) A UTF-16 file counts,
    so that it is reported rather than silently skipped."""
    return (
        b"kernlint" in data
        or "kernlint".encode("utf-16-le") in data
        or data.startswith(_UTF16_BOMS)
    )


def find_config_in(directory: str, names=None) -> str | None:
    """The config file that lives in `directory`, if any. `names`: the directory's entries,
    when the caller has listed it (a file that is not among them is not looked for)."""
    candidate = os.path.join(directory, "kernlint.toml")
    if (names is None or "kernlint.toml" in names) and os.path.isfile(candidate):
        return candidate
    candidate = os.path.join(directory, "pyproject.toml")
    if (names is None or "pyproject.toml" in names) and os.path.isfile(candidate):
        data = _read(candidate)
        if _may_configure_kernlint(data) and (
            _kernlint_table(candidate, _parse(candidate, data)) is not None
        ):
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
    compile: bool | None = None
    exclude: list[str] | None = None
    extend_exclude: list[str] = field(default_factory=list)
    defines: list[str] = field(default_factory=list)

    def all_selectors(self) -> list[str]:
        """The rule selectors given on the command line."""
        return list(self.select or ()) + self.extend_select + self.ignore


def import_time_policy(settings) -> bool:
    """Do these settings (or None) choose the `import-time` policy of ungated-aiter-import?"""
    return getattr(settings, "aiter_import_policy", "") == "import-time"


def reachable_policy(settings) -> bool:
    """Do these settings choose the default `reachable` policy of ungated-aiter-import?"""
    return getattr(settings, "aiter_import_policy", "reachable") == "reachable"


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
        self.aiter_import_policy = v.get("aiter-import-policy", "reachable")
        self.max_file_size = v.get("max-file-size", DEFAULT_MAX_FILE_SIZE)
        # Files under the JIT roots that are not JIT code (kernlint.jitscope) are exempt.
        self.jit_exempt_markers = v.get("jit-exempt-markers", True)
        # Generated files (kernlint.jitscope.generated_reason) are checked by no rule.
        self.generated_markers = v.get("generated-markers", True)
        self.semantic = (
            overrides.semantic if overrides.semantic is not None else v.get("semantic", False)
        )
        # Macros for the semantic pass (`-D`), as the kernel's build passes them; the command
        # line's come after the config's, so they win.
        self.defines = list(v.get("defines", [])) + list(overrides.defines)
        self.compile = (
            overrides.compile if overrides.compile is not None else v.get("compile", False)
        )
        self.compile_archs = list(v.get("compile-archs", DEFAULT_COMPILE_ARCHS))
        self.register_budget = v.get("register-budget", DEFAULT_REGISTER_BUDGET)
        rb_root = raw.key_roots.get("per-file-register-budget", raw.root)
        self.per_file_register_budget = [
            (_spec([pattern]), rb_root, pattern, budget)
            for pattern, budget in v.get("per-file-register-budget", {}).items()
        ]
        # House conventions (CONVENTION_KEYS): None where the config leaves them to the rules'
        # defaults (SGLang's).
        for key in CONVENTION_KEYS:
            setattr(self, key.replace("-", "_"), v.get(key))
        self.preset = v.get("preset", "sglang")
        conv = {k: v[k] for k in CONVENTION_KEYS if k in v}
        if "primitives-implementation" in conv:
            conv["primitives-implementation-root"] = raw.key_roots.get("primitives-implementation")
        self.conventions_key = repr(sorted(conv.items())) if conv else ""
        # file path or glob (relative to its config) -> the instantiations to build
        self.compile_instantiate = dict(v.get("compile-instantiate", {}))
        self.compile_instantiate_root = raw.key_roots.get("compile-instantiate", raw.root)
        inc_root = raw.key_roots.get("include-paths", raw.root)
        self.include_paths = [
            p if os.path.isabs(p) else os.path.normpath(os.path.join(inc_root, p))
            for p in v.get("include-paths", [])
        ]
        # The JIT KERNEL_PATH (holding `csrc/` and `include/`) that `load_jit` resolves
        # `cuda_files` against (kernlint.jit_wiring); None: found from each checked file.
        src_root = v.get("jit-source-root")
        self.jit_source_root = (
            os.path.normpath(os.path.join(raw.key_roots.get("jit-source-root", raw.root), src_root))
            if src_root
            else None
        )
        where = raw.path or "command line"
        # Local rule modules (`rules-path`): loaded before the selection names their codes.
        self.rules_path = registry.load_rules_path(raw) if v.get("rules-path") else ()
        select = overrides.select if overrides.select is not None else v.get("select", ["ALL"])
        extend = list(v.get("extend-select", [])) + overrides.extend_select
        ignore = list(v.get("ignore", [])) + overrides.ignore
        local = {"local": self.rules_path, "given": overrides.all_selectors()}
        self.enabled = registry.resolve(
            select, extend, ignore, preview=self.preview, where=where, **local
        )
        if not self.compile:  # (the compile pass's rules report only what it measured)
            self.enabled = [r for r in self.enabled if r.name not in COMPILE_RULES]
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
        self.jit_benchmark_roots = list(
            v.get("jit-benchmark-roots", DEFAULT_JIT_BENCHMARK_ROOTS)
        ) + list(v.get("extend-jit-benchmark-roots", []))
        self.jit_benchmark_base = raw.key_roots.get(
            "jit-benchmark-roots", raw.key_roots.get("extend-jit-benchmark-roots", raw.root)
        )
        self.registered_tests_roots = list(
            v.get("registered-tests-roots", DEFAULT_REGISTERED_TESTS_ROOTS)
        ) + list(v.get("extend-registered-tests-roots", []))
        self.registered_tests_base = raw.key_roots.get(
            "registered-tests-roots", raw.key_roots.get("extend-registered-tests-roots", raw.root)
        )
        if self.registered_tests_roots != DEFAULT_REGISTERED_TESTS_ROOTS:
            CUSTOMIZED_ROOTS.add("registered-tests-roots")
        self.sglang_package_roots = list(
            v.get("sglang-package-roots", DEFAULT_SGLANG_PACKAGE_ROOTS)
        ) + list(v.get("extend-sglang-package-roots", []))
        self.sglang_package_base = raw.key_roots.get(
            "sglang-package-roots", raw.key_roots.get("extend-sglang-package-roots", raw.root)
        )
        # (An installed or unpacked `sglang` package is recognized by its `__init__.py` unless
        # the config names the package's roots itself.)
        self.detect_sglang_package = "sglang-package-roots" not in v
        pfi_root = raw.key_roots.get("per-file-ignores", raw.root)
        self.per_file_ignores = []
        for pattern, selectors in v.get("per-file-ignores", {}).items():
            codes = registry.resolve(
                selectors, [], [], preview=True, where=f"{where} per-file-ignores", **local
            )
            # (a `**/` pattern also matches files outside the config's directory, as the
            # `jit-roots` do: a config kept apart, given with --config)
            anywhere = pattern.startswith("**/")
            self.per_file_ignores.append((_spec([pattern]), pfi_root, codes, anywhere))

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

    def register_budget_for(self, abspath: str) -> tuple[int, str]:
        """(budget, where it comes from) for a file: the last `per-file-register-budget`
        pattern that matches it, else `register-budget`."""
        found = (self.register_budget, "register-budget")
        for spec, root, pattern, budget in self.per_file_register_budget:
            rel = _relative(abspath, root)
            if rel is not None and spec.match_file(rel):
                found = (budget, f'`per-file-register-budget` "{pattern}"')
        return found

    def is_jit(self, abspath: str) -> bool:
        posix = abspath.replace(os.sep, "/").lstrip("/")
        rel = _relative(abspath, self.jit_root_base)
        if rel is not None and self._jit_spec.match_file(rel):
            return True
        return self._jit_spec.match_file(posix)

    @cached_property
    def _jit_benchmark_spec(self):
        return _spec(self.jit_benchmark_roots)

    def is_jit_benchmark(self, abspath: str) -> bool:
        """Is the file under `jit-benchmark-roots` (relative to the config that set them, or
        anywhere in its absolute path)?"""
        rel = _relative(abspath, self.jit_benchmark_base)
        if rel is not None and self._jit_benchmark_spec.match_file(rel):
            return True
        return self._jit_benchmark_spec.match_file(abspath.replace(os.sep, "/").lstrip("/"))

    @cached_property
    def _registered_tests_spec(self):
        return _spec(self.registered_tests_roots)

    def is_registered_tests_path(self, abspath: str) -> bool:
        """Is the file under `registered-tests-roots` (relative to the config that set them,
        or anywhere in its absolute path)?"""
        return _under(self._registered_tests_spec, self.registered_tests_base, abspath)

    @cached_property
    def _sglang_package_spec(self):
        return _spec(self.sglang_package_roots)

    def is_sglang_package_path(self, abspath: str) -> bool:
        """Is the file under `sglang-package-roots` (as `is_registered_tests_path`)?"""
        return _under(self._sglang_package_spec, self.sglang_package_base, abspath)

    def rules_for(self, abspath: str):
        """The enabled rules for one file, after per-file-ignores."""
        if not self.per_file_ignores:
            return self.enabled
        ignored = set()
        for spec, root, codes, anywhere in self.per_file_ignores:
            rel = _relative(abspath, root)
            if rel is None and anywhere:
                rel = abspath.replace(os.sep, "/").lstrip("/")
            if rel is not None and spec.match_file(rel):
                ignored |= set(codes)
        return [r for r in self.enabled if r not in ignored] if ignored else self.enabled


def _under(spec, base: str, abspath: str) -> bool:
    directory, name = os.path.split(abspath)
    rel = _relative_directory(directory, base)  # (one relpath per directory, not per file)
    if rel is not None and spec.match_file(rel + name):
        return True
    return spec.match_file(abspath.replace(os.sep, "/").lstrip("/"))


@lru_cache(maxsize=4096)
def _relative_directory(directory: str, base: str) -> str | None:
    """`directory` relative to `base` with a trailing `/` (`""` for `base` itself), or None."""
    if directory == base.rstrip(os.sep):
        return ""
    rel = _relative(directory, base)
    return None if rel is None else ("" if rel == "." else rel + "/")


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


def absolute(path: str) -> str:
    """`os.path.abspath(path)`, as the very string `path` where that is already absolute and
    normalized (what a large run keeps per file or directory is then one copy, not two)."""
    found = os.path.abspath(path)
    return path if found == path else found


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
        directory = absolute(directory)
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
