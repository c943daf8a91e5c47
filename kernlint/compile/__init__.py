"""The compile pass (`kernlint check --compile`): registers and spills of kernels, as findings.

Off by default (`compile = true` or `--compile` turns it on): it needs a CUDA toolchain and
takes seconds per build. Before the files are linted, the pass builds what it can instantiate
(kernlint.compile.instances: `compile-instantiate`, `load_jit` calls with literal template
arguments, kernels that are no template), and, with `--compile-from BUILD_DIR`, reads the
binaries a build already made; each kernel's figures are placed on its `__global__` (or
`@triton.jit`) definition in the checked files, and the rules `register-budget-exceeded` and
`register-spill` report them. What could not be built or placed is said in one note each.
"""

from __future__ import annotations

import re

from ..config import COMPILE_RULES as RULE_NAMES
from ..lazyre import lazy_compile
from .model import Usage

# A file's results: (start, end, kernel name, usages, budget, where the budget comes from)
_RESULTS: dict[str, list] = {}
_FINGERPRINTS: dict[str, str] = {}
_ACTIVE = [False]
_PLACED: dict[tuple, Placed] = {}  # (path, name offset) -> the kernel's figures
STATS: dict = {}  # the last pass's counts (scripts/compile_report.py prints them)
# Registers per SM on every architecture since Kepler; per-thread allocation is in units of 8.
REGISTERS_PER_SM = 65536
MAX_REGISTERS = 255

_INLINE_BUDGET = lazy_compile(rb"kernlint:[ \t]*register-budget[ \t]+(\d+)")


class Placed:
    """One kernel definition's figures: every usage measured for it, and its budget."""

    def __init__(self, start, end, name, budget, budget_from) -> None:
        self.start, self.end, self.name = start, end, name
        self.budget, self.budget_from = budget, budget_from
        self.usages: list[Usage] = []


def reset() -> None:
    _RESULTS.clear()
    _FINGERPRINTS.clear()
    _PLACED.clear()
    STATS.clear()
    _ACTIVE[0] = False


def active() -> bool:
    return _ACTIVE[0]


def results_for(abspath: str | None) -> list[Placed]:
    return _RESULTS.get(abspath or "", [])


def fingerprint(abspath: str) -> str:
    """What a file's compile findings depend on (for the result cache's key)."""
    if not _ACTIVE[0]:
        return ""
    found = _FINGERPRINTS.get(abspath)
    if found is None:
        import hashlib

        h = hashlib.sha256()
        for p in _RESULTS.get(abspath, []):
            h.update(f"{p.start}:{p.end}:{p.name}:{p.budget}:{p.budget_from}".encode())
            for u in p.usages:
                h.update(repr(u).encode("utf-8", "surrogateescape"))
        found = _FINGERPRINTS[abspath] = "|compile:" + h.hexdigest()[:16]
    return found


def wants_compile(settings, rules) -> bool:
    return bool(getattr(settings, "compile", False)) and any(r.name in RULE_NAMES for r in rules)


def budget_of(settings, abspath: str, data: bytes, def_start: int, name_start: int):
    """(budget, where it comes from) for a kernel whose definition starts at `def_start`: a
    `kernlint: register-budget N` comment in the comment lines just above it or on its lines up
    to its name, else what `__launch_bounds__(T, B)` implies (with B: that many blocks of T
    threads on one SM; without: the configured budget, lowered if T threads allow fewer),
    else the file's `register-budget` / `per-file-register-budget`."""
    base, where = settings.register_budget_for(abspath)
    # (Python: the comments and decorators above a `def`)
    leads = (b"#", b"@") if abspath.endswith((".py", ".pyi")) else (b"//", b"/*", b"*")
    above = data.rfind(b"\n", 0, def_start) + 1
    while above > 0:
        prev = data.rfind(b"\n", 0, above - 1) + 1
        text = data[prev : above - 1].strip()
        if not text.startswith(leads):
            break
        above = prev
    end = data.find(b"\n", name_start)
    m = _INLINE_BUDGET.search(data, above, len(data) if end < 0 else end)
    if m:
        return max(
            1, min(int(m.group(1)), MAX_REGISTERS)
        ), "its `kernlint: register-budget` comment"
    if abspath.endswith((".py", ".pyi")):
        return base, f"`{where}`" if where == "register-budget" else where
    prefix = data[def_start:name_start]
    at = prefix.rfind(b"__global__")
    prefix = prefix[at:] if at >= 0 else prefix  # (not a template's parameter list)
    if b"__launch_bounds__" in prefix:
        found = _launch_bounds(data, prefix)
        if found is None:
            return None, "`__launch_bounds__` whose arguments are not numbers kernlint can read"
        threads, blocks, shown = found
        implied = REGISTERS_PER_SM // (threads * (blocks or 1)) // 8 * 8
        implied = max(8, min(implied, MAX_REGISTERS))
        if blocks or implied < base:
            return implied, f"`{shown}`"
    elif _MACRO_ATTRIBUTE.search(prefix):
        # (a macro between `__global__` and the name may stand for `__launch_bounds__`)
        return None, "a macro before the kernel's name that may set its launch bounds"
    return base, f"`{where}`" if where == "register-budget" else where


_BOUNDS_ARGS = lazy_compile(rb"__launch_bounds__\s*\(([^()]*)\)")
_MACRO_ATTRIBUTE = lazy_compile(rb"\b[A-Z][A-Z0-9_]*[A-Z0-9]\s*(\(|\s)")
_FILE_CONSTANT = (
    rb"(?:^|\n)[ \t]*(?:(?:static|inline)\s+)*constexpr\s+(?:const\s+)?(?:unsigned\s+)?(?:int|"
    rb"uint32_t|int32_t|size_t|auto)\s+%s\s*=\s*(\d+)\s*;"
)
_DEFINE_CONSTANT = rb"(?:^|\n)[ \t]*#[ \t]*define[ \t]+%s[ \t]+\(?(\d+)\)?[ \t]*(?:\n|//|$)"


def _launch_bounds(data: bytes, prefix: bytes):
    """(threads, blocks or None, as written) of a `__launch_bounds__(...)` whose arguments are
    numbers, or names the file defines as one number (`constexpr int kThreads = 128;`,
    `#define THREADS 128`); None for anything else (a template parameter, an expression)."""
    m = _BOUNDS_ARGS.search(prefix)
    if m is None:
        return None
    values = []
    for arg in m.group(1).split(b",")[:2]:
        arg = arg.strip()
        if arg.isdigit():
            values.append(int(arg))
            continue
        if not re.fullmatch(rb"[A-Za-z_]\w*", arg):
            return None
        name = re.escape(arg)
        found = [
            int(x.group(1))
            for pattern in (_FILE_CONSTANT, _DEFINE_CONSTANT)
            for x in re.finditer(pattern % name, data)
        ]
        if len(set(found)) != 1:
            return None  # (not defined here, or defined twice with different values)
        values.append(found[0])
    if not values or values[0] <= 0:
        return None
    shown = re.sub(r"\s+", " ", m.group(0).decode("ascii", "replace"))
    return values[0], (values[1] if len(values) > 1 and values[1] > 0 else None), shown


def prepare(candidates, resolver, *, cache_dir=None, compile_from=None, jobs=None, warn=print):
    """Build and measure what the run's files let kernlint instantiate; results for the rules."""
    reset()
    chosen = []
    for cand in candidates:
        settings = resolver.for_file(cand.abspath)
        if wants_compile(settings, settings.rules_for(cand.abspath)):
            chosen.append((cand, settings))
    if not chosen and compile_from is None:
        return
    _ACTIVE[0] = True
    from .run import run_pass

    notes = run_pass(chosen, resolver, cache_dir=cache_dir, compile_from=compile_from, jobs=jobs)
    for note in notes:
        warn(note)


def by_arch(placed: Placed) -> list[tuple[str, list[Usage]]]:
    """A kernel's usages per architecture, architectures in order (the rules' one finding per
    kernel and architecture)."""
    out: dict[str, list[Usage]] = {}
    for usage in placed.usages:
        out.setdefault(usage.arch, []).append(usage)
    return sorted(out.items())


def place(abspath: str, placed: Placed) -> None:
    _RESULTS.setdefault(abspath, []).append(placed)
