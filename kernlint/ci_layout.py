"""SGLang's CI layout, as its collector sees it: where registered tests live, which files the
collector reads, what counts as a registration, and what the importable `sglang` package is.

SGLang's `test/run_suite.py` globs every `*.py` under `test/registered/` except `__init__.py`
and `conftest.py`, and hands them to `collect_tests` (`python/sglang/test/ci/ci_register.py`),
which parses each file's AST: a registration is a module-level expression statement calling one
of the names in its `REGISTER_MAPPING` by that very name (no alias, no attribute); a file with
an enabled registration (no `disabled=`) must have an `if __name__ == "__main__":` block whose
body holds a call.

The `ci-registration-functions` setting names a collector's registration functions in place of
REGISTER_FUNCTIONS (`registration_functions(settings)`; None where unset).
"""

from __future__ import annotations

import ast
import os
from functools import lru_cache

from .config import CUSTOMIZED_ROOTS, DEFAULT_REGISTERED_TESTS_ROOTS, DEFAULT_SGLANG_PACKAGE_ROOTS

# The names of the collector's REGISTER_MAPPING (one registration function per backend).
REGISTER_FUNCTIONS = frozenset(
    (
        "register_cpu_ci",
        "register_cuda_ci",
        "register_amd_ci",
        "register_musa_ci",
        "register_npu_ci",
        "register_xpu_ci",
        "register_mlx_ci",
    )
)
# The settings' attribute naming other registration functions (`ci-registration-functions`).
CI_FUNCTIONS = "ci_registration_functions"


def registration_functions(settings) -> frozenset[str] | None:
    """The configured registration functions (`ci-registration-functions`), or None: SGLang's
    (REGISTER_FUNCTIONS, and `register_<backend>_ci` where a rule accepts any backend)."""
    names = getattr(settings, CI_FUNCTIONS, None)
    return None if names is None else frozenset(names)


def names_a_registration(data: bytes, names: frozenset[str] | None) -> bool:
    """Can the file register (does it hold `register_`, or a configured function's name)?"""
    if names is None:
        return b"register_" in data
    return any(n.encode() in data for n in names)


# Files under the registered-tests root that the runner does not collect.
NOT_COLLECTED = ("__init__.py", "conftest.py")


def _posix(abspath: str) -> str:
    return abspath.replace(os.sep, "/").lstrip("/")


def under_registered_tests(abspath: str, settings=None) -> bool:
    """Is the file under the settings' `registered-tests-roots` (the defaults without
    settings)?"""
    roots = getattr(settings, "registered_tests_roots", None)
    if roots is None or roots == DEFAULT_REGISTERED_TESTS_ROOTS:
        # (`**/test/registered/**`, matched without the glob machinery: every Python file
        # is asked)
        return "/test/registered/" in "/" + _posix(abspath)
    return settings.is_registered_tests_path(abspath)


def may_be_collected_test(path: str) -> bool:
    """Can the file be a collected test under some settings of this process (a `.py` file
    other than `__init__.py` and `conftest.py`, under `test/registered/` unless a config named
    other roots)? A path filter: an over-approximation of `is_collected_test`."""
    if not CUSTOMIZED_ROOTS and _REGISTERED_PART not in path:
        return False
    name = os.path.basename(path)
    return name.endswith(".py") and name not in NOT_COLLECTED


_REGISTERED_PART = os.path.join("test", "registered", "")


def is_collected_test(abspath: str, settings=None) -> bool:
    """A file the runner collects: a `.py` file under the registered-tests roots, other than
    `__init__.py` and `conftest.py`, and not in the `sglang` package (which the runner never
    globs)."""
    name = os.path.basename(abspath)
    if not name.endswith(".py") or name in NOT_COLLECTED:
        return False
    return under_registered_tests(abspath, settings) and not in_sglang_package(abspath, settings)


def collected_test(ctx) -> bool:
    """`is_collected_test` of the file a rule checks (`ctx`), worked out once for the rules
    that ask."""
    memo = ctx.__dict__
    found = memo.get("_ci_collected_test")
    if found is None:
        found = memo["_ci_collected_test"] = is_collected_test(
            ctx.source.abspath or ctx.source.path, ctx.settings
        )
    return found


def in_sglang_package(abspath: str, settings=None) -> bool:
    """Is the file part of the importable `sglang` package (shipped in the wheel)? Under the
    settings' `sglang-package-roots` (default `**/python/sglang/**`, the source tree's layout),
    or, unless the config sets those roots, below a directory named `sglang` that holds an
    `__init__.py` (an installed or unpacked package)."""
    roots = getattr(settings, "sglang_package_roots", None)
    if roots is None or roots == DEFAULT_SGLANG_PACKAGE_ROOTS:
        if "/python/sglang/" in "/" + _posix(abspath):  # (`**/python/sglang/**`)
            return True
    elif settings.is_sglang_package_path(abspath):
        return True
    if not getattr(settings, "detect_sglang_package", True):
        return False
    if not os.path.isabs(abspath):
        abspath = os.path.abspath(abspath)
    return _package_dir_above(os.path.dirname(abspath))


@lru_cache(maxsize=4096)
def _package_dir_above(directory: str) -> bool:
    """Is `directory`, or a directory above it, a `sglang` directory holding `__init__.py`?"""
    if os.path.basename(directory) == "sglang" and os.path.isfile(
        os.path.join(directory, "__init__.py")
    ):
        return True
    parent = os.path.dirname(directory)
    return parent != directory and _package_dir_above(parent)


def registered_root(abspath: str, settings=None) -> str | None:
    """The registered-tests root directory holding a collected test: with the default roots,
    the path up to its last `test/registered/`; else the topmost directory above the file in
    which a file of that name is under the settings' roots. None: not under them."""
    roots = getattr(settings, "registered_tests_roots", None)
    if roots is None or roots == DEFAULT_REGISTERED_TESTS_ROOTS:
        posix = abspath.replace(os.sep, "/")
        head, sep, _ = ("/" + posix if posix[:1] != "/" else posix).rpartition("/test/registered/")
        if not sep:
            return None
        root = head + "/test/registered"
        return (root if posix[:1] == "/" else root[1:]).replace("/", os.sep)
    name = os.path.basename(abspath)
    directory = os.path.dirname(abspath)
    chain = [directory]
    while os.path.dirname(chain[-1]) != chain[-1]:
        chain.append(os.path.dirname(chain[-1]))
    for d in reversed(chain):
        if settings.is_registered_tests_path(os.path.join(d, name)):
            return d
    return None


def project_key(abspath: str, settings) -> str:
    """What the CI-registration rules' findings on a Python file depend on beyond its bytes:
    whether it is a collected test and whether it is in the `sglang` package (for a cache
    key)."""
    if in_sglang_package(abspath, settings):
        return "|sglang-package"
    return "|registered-test" if is_collected_test(abspath, settings) else ""


def registration(stmt, names=REGISTER_FUNCTIONS) -> ast.Call | None:
    """The registration call of a module-level statement as the collector reads it: an
    expression statement calling a REGISTER_MAPPING name (or one of `names`) directly; else
    None."""
    if not isinstance(stmt, ast.Expr):
        return None
    call = stmt.value
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        return None
    return call if call.func.id in names else None


def is_enabled(call: ast.Call) -> bool:
    """Does the collector count this registration as enabled (its `disabled`, the fourth
    positional argument or the keyword, absent, `None`, or not a literal)?"""
    value = call.args[3] if len(call.args) > 3 else None
    for kw in call.keywords:
        if kw.arg == "disabled":
            value = kw.value
    return not (isinstance(value, ast.Constant) and value.value is not None)


def is_main_entry(stmt) -> bool:
    """The collector's `_is_main_block_with_call`: a module-level `if __name__ == "__main__":`
    (in that order, `==` only) whose body holds a call somewhere (nested code included)."""
    if not isinstance(stmt, ast.If):
        return False
    test = stmt.test
    if not isinstance(test, ast.Compare):
        return False
    if not (isinstance(test.left, ast.Name) and test.left.id == "__name__"):
        return False
    if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq) or len(test.comparators) != 1:
        return False
    rhs = test.comparators[0]
    if not (isinstance(rhs, ast.Constant) and rhs.value == "__main__"):
        return False
    return any(isinstance(n, ast.Call) for s in stmt.body for n in ast.walk(s))
