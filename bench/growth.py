"""Growth benchmark: kernlint's time on generated inputs at sizes 1x, 2x, 4x, 8x.

Usage:
    python bench/growth.py                 # every case, default sizes (a few minutes at most)
    python bench/growth.py --quick         # smaller sizes, seconds
    python bench/growth.py --case suppressions --case elif-chain --scale 4
    python bench/growth.py --list          # the cases and their base sizes
    python bench/growth.py --write DIR --case suppressions --scale 10   # only write the inputs

Each case is a generator in `CASES`: a function of a size `n` returning the files of one
directory ({name: bytes}). The files of each size are written to a temporary directory and
checked by the real command line (`kernlint check --no-cache --select ALL --preview .`, or the
case's own arguments, in a subprocess, so a hang is bounded by `--timeout`). The table gives
the seconds per size (start-up included, about 0.2 s) and the ratio to the previous size; a
ratio above `SUPERLINEAR` (2.6) per doubling is flagged (linear work doubles, quadratic work
quadruples; runs under `MIN_JUDGED_S` are start-up and noise, not judged). A run that times
out, whose output holds a Python traceback, or that lacks the case's expected text (a finding
code, a warning) is flagged too. Exit status 1 when anything was flagged.

To add a case (e.g. a C++ input), write a generator and add a `Case` row to `CASES`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
KERNLINT = [sys.executable, "-m", "kernlint"]
ARGS = ["check", "--no-cache", "--select", "ALL", "--preview"]
SUPERLINEAR = 2.6
# Below this many seconds a ratio is mostly start-up time and noise: not judged.
MIN_JUDGED_S = 0.5


# -- generators: size n -> {file name: bytes} (one directory, checked as a whole) ----------
_GATES = (
    b"from sglang.srt.utils import get_bool_env_var, is_hip\n\n"
    b"_is_hip = is_hip()\n"
    b'_use_aiter = get_bool_env_var("SGLANG_USE_AITER") and _is_hip\n'
)
# A kernel: with it in the directory, the Python files' `cuda_wrappers` are scanned.
_KERNEL = {"kernel.cu": b"__global__ void k(float* __restrict__ x) { x[0] = 1.0f; }\n"}


def plain_python(n: int) -> dict[str, bytes]:
    """A plain Python module of n functions and n classes, with gates and aiter imports (n of
    them ungated)."""
    out = [_GATES, b"if _use_aiter:\n    from aiter import rmsnorm2d_fwd\n\n\n"]
    for i in range(n):
        out.append(
            b"def f%d(x, y=%d):\n"
            b'    """Docstring %d."""\n'
            b"    z = [a * 2 for a in range(x) if a %% 3]  # a comment\n"
            b"    if _use_aiter:\n"
            b"        import aiter.ops\n"
            b"        return aiter.ops.run(z)\n"
            b"    return {k: v for k, v in zip(z, z)}, y\n\n\n"
            b"class C%d:\n"
            b"    def m(self, a):\n"
            b"        if a:  # (a function choosing its path: the default policy judges it)\n"
            b"            import aiter.x  # ungated: a PY001 finding\n"
            b"        return a + %d\n\n\n" % (i, i, i, i, i)
        )
    return {"plain.py": b"".join(out)}


def suppressions(n: int) -> dict[str, bytes]:
    """n lines, each with a suppression that suppresses nothing (n unused-suppression findings)."""
    return {"suppressions.py": b"x = 1  # kernlint: ignore[PY001]\n" * n}


def suppressions_cr(n: int) -> dict[str, bytes]:
    """The same with lone `\\r` line endings (one line for anything that splits on `\\n`)."""
    return {"suppressions_cr.py": b"x = 1  # kernlint: ignore[PY001]\r" * n}


def aiter_imports(n: int) -> dict[str, bytes]:
    """n suppressed aiter imports: half at module level, half under `if _is_hip:`; and one
    that is not suppressed."""
    half = n // 2
    top = b"import aiter  # kernlint: ignore[PY001]\n" * half
    hip = b"if _is_hip:\n" + b"    import aiter  # kernlint: ignore[PY001]\n" * (n - half)
    return {"aiter_imports.py": _GATES + top + hip + b"    import aiter.last\n"}


def elif_chain(n: int) -> dict[str, bytes]:
    """An `if` with n - 1 `elif` branches (each nests one level deeper in the tree), each
    with a suppressed aiter import and a binding, the last one's import not suppressed; and a
    use after the chain."""
    out = [_GATES, b"if _use_aiter:\n    import aiter\n    y = 0\n"]
    out += [
        b"elif x == %d:\n    import aiter.ops  # kernlint: ignore[PY001]\n    y = %d\n" % (i, i)
        for i in range(1, n)
    ]
    out.append(b"else:\n    import aiter.last\n    y = -1\nprint(y)\n")
    return {"elif_chain.py": b"".join(out)}


def unary_minus(n: int) -> dict[str, bytes]:
    """`x = ` and n unary minus signs: an expression n deep."""
    return {"unary_minus.py": _GATES + b"import aiter\nx = " + b"-" * n + b"1\n"}


def wrapper_sum(n: int) -> dict[str, bytes]:
    """n Python files whose `cuda_wrappers=[(1+1+...` has 3,000 terms (a left-deep expression,
    deeper than Python's parser goes), beside a kernel."""
    terms = b"+".join([b"1"] * 3000)
    body = (
        b"from sglang.jit_kernel.utils import load_jit\n\n"
        b'm = load_jit("m", cuda_wrappers=[(' + terms + b', "&K::run")])\n'
    )
    return {**{f"wrapper_sum_{k}.py": body for k in range(n)}, **_KERNEL}


def unbalanced_wrappers(n: int) -> dict[str, bytes]:
    """n KB of `f(cuda_wrappers=[` repeated, never closed, beside a kernel."""
    unit = b"f(cuda_wrappers=[\n"
    return {"unbalanced_wrappers.py": unit * (n * 1024 // len(unit)), **_KERNEL}


def triple_quote_line(n: int) -> dict[str, bytes]:
    """One line of n KB of one-line triple-quoted strings, in a file a skeleton is built for."""
    unit = b'"""a""" '
    line = b"s = (" + unit * (n * 1024 // len(unit)) + b")\n"
    head = b"import aiter  # kernlint: ignore[PY001]\n\n\ndef f():\n    return 1\n\n\n"
    return {"triple_quote_line.py": head + line}


# -- C++/CUDA generators (each directory holds a kernlint.toml that makes it a JIT root) -------
_JIT = {"kernlint.toml": b'jit-roots = ["**"]\n'}
_KERNEL_HEAD = b"namespace sglang {\n__global__ void k(float* out, float* a, int n) {\n"
_KERNEL_TAIL = b"\n}\n}  // namespace sglang\n"


def cpp_nested_if(n: int) -> dict[str, bytes]:
    """A kernel with n nested `if` blocks, each reading the pointer `a` and writing `out`."""
    body = b"".join(b"if (n > %d) { out[%d] = a[%d];\n" % (i, i, i) for i in range(n))
    return {"nested_if.cu": _KERNEL_HEAD + body + b"}" * n + _KERNEL_TAIL, **_JIT}


def cpp_deep_braces(n: int) -> dict[str, bytes]:
    """A use of the pointers inside n nested blocks `{{{...}}}`."""
    body = b"{" * n + b"out[0] = a[0];" + b"}" * n
    return {"deep_braces.cu": _KERNEL_HEAD + body + _KERNEL_TAIL, **_JIT}


def cpp_deep_parens(n: int) -> dict[str, bytes]:
    """A read of the pointer inside n nested parentheses, and a pointer sum of n terms."""
    body = b"out[0] = " + b"(" * n + b"a[0]" + b")" * n + b";\nout[1] = *(a" + b" + 1" * n + b");"
    return {"deep_parens.cu": _KERNEL_HEAD + body + _KERNEL_TAIL, **_JIT}


def cpp_deep_namespaces(n: int) -> dict[str, bytes]:
    """A function inside n nested namespaces, and one inside n nested `#if` blocks."""
    deep = b"namespace a {" * n + b"\nint f(int x) { return x; }\n" + b"}" * n + b"\n"
    ifs = b"#if A\n" * n + b"int g(int x) { return x; }\n" + b"#endif\n" * n
    return {"deep_namespaces.cu": deep, "deep_if.cu": ifs, **_JIT}


def cpp_flat_kernels(n: int) -> dict[str, bytes]:
    """n small kernels in one namespace."""
    kernel = (
        b"__global__ void k%d(float* __restrict__ out, float* a, int n) {\n"
        b"  int i = threadIdx.x;\n  if (i < n) out[i] = a[i] * 2.0f;\n}\n"
    )
    body = b"".join(kernel % i for i in range(n))
    return {"flat.cu": b"namespace sglang {\n" + body + b"}  // namespace sglang\n", **_JIT}


def cpp_digit_separators(n: int) -> dict[str, bytes]:
    """One line of n KB of a number with digit separators (`1'0'0...`), after a comment with
    non-ASCII characters."""
    number = b"1" + b"'0" * (n * 512)
    comment = "// caf\u00e9 \u2014 the number below\n".encode()
    return {"digits.cu": comment + b"int x = " + number + b";\n", **_JIT}


def cpp_unbalanced(n: int) -> dict[str, bytes]:
    """n KB of unbalanced braces, parentheses, quotes, `#if`, comments and raw strings."""
    unit = (
        b'__global__ void k(float* a) { if (a) { "x\n#if X\n/* c\nR"y( r\n\'q\n'
        b"__launch_bounds__(\nFOO_BAR(\n_Pragma(\nalignas(\n"
    )
    return {"unbalanced.cu": unit * (n * 1024 // len(unit)), **_JIT}


def cpp_macro_lines(n: int) -> dict[str, bytes]:
    """Lines normalization rewrites, at n KB each: a `#define` with a long run of blanks, one
    upper-case word full of `UNROLL`s, `using a, b` lines with no `;` after, macro calls nested
    in macro calls, non-ASCII runs of many characters."""
    size = n * 1024
    parts = [
        b"#define A b" + b" " * size + b"c\n",
        b"X" + b"UNROLL" * (size // 6) + b"(\n",
        b"using a::b, c;\n" + b"using a, b\n" * (size // 11),
        b"void f() {\n" + b"FOO_BAR(\n" * (size // 9) + b")" * (size // 9) + b"\n}\n",
        "// \u4e00\u4e8c\u4e09\u56db\u4e94\u516d\u4e03\u516b\n".encode() * (size // 25),
    ]
    return {"macro_lines.cu": b"".join(parts), **_JIT}


_FIXTURES = os.path.join(ROOT, "fixtures", "cpp")


def cpp_big_file(n: int) -> dict[str, bytes]:
    """About n KB of real kernels: the C++ fixtures (fixtures/cpp/*/bad.cu*) again and again
    in one file, each copy's own functions and types renamed (`name_u7`)."""
    import glob
    import re

    from kernlint.cpp.facts import node_name
    from kernlint.cpp.normalize import normalize
    from kernlint.cpp.parser import nodes_of_types, parse

    units = []
    for path in sorted(glob.glob(os.path.join(_FIXTURES, "*", "bad.cu*"))):
        if path.endswith((".fixed", ".unsafe-fixed")):
            continue
        with open(path, "rb") as fh:
            data = fh.read()
        root = parse(normalize(data).data).root_node
        kinds = ("function_definition", "struct_specifier", "class_specifier")
        names = {node_name(node).split("::")[-1] for node in nodes_of_types(root, kinds)}
        names = sorted((x for x in names if re.fullmatch(r"[A-Za-z_]\w*", x)), key=len)
        words = b"|".join(re.escape(x.encode()) for x in reversed(names))
        units.append((data, re.compile(rb"\b(" + words + rb")\b") if names else None))
    out, size, i = [], 0, 0
    while size < n * 1024:
        data, pattern = units[i % len(units)]
        suffix = b"_u%d" % i
        if pattern is not None:
            data = pattern.sub(lambda m, s=suffix: m.group(1) + s, data)
        out.append(data + b"\n")
        size += len(data) + 1
        i += 1
    return {"big.cu": b"".join(out), **_JIT}


def import_words_line(n: int) -> dict[str, bytes]:
    """One line of n KB of the word `import` (in a string) that names `aiter` only as part of
    another word, in a file a skeleton is built for: the aiter-import searches of the line."""
    line = b"s = '" + b"import " * (n * 1024 // 7) + b"xaiter'\n"
    tail = b"import aiter  # kernlint: ignore[PY001]\n\n\ndef f():\n    return 1\n"
    return {"import_words_line.py": line + tail}


# Without --preview the syntax-error rule is off, and a file only a few rules read is parsed
# as a skeleton: the case that times the skeleton.
NO_PREVIEW = ["check", "--no-cache", "--select", "ALL"]


@dataclass(frozen=True)
class Case:
    name: str
    generate: Callable[[int], dict[str, bytes]]
    base: int  # the 1x size
    quick: int  # the 1x size with --quick
    unit: str  # what n counts
    expect: str = ""  # text the output must hold at every size ("" for no check)
    args: tuple[str, ...] = ()  # the command's arguments, when not `ARGS`


CASES: list[Case] = [
    Case("plain-python", plain_python, 1000, 150, "functions", "PY001"),
    Case("suppressions", suppressions, 12500, 2000, "lines", "KL001"),
    Case("suppressions-cr", suppressions_cr, 12500, 2000, "lines", "KL001"),
    Case("aiter-imports", aiter_imports, 5000, 1000, "imports", "PY001"),
    Case("elif-chain", elif_chain, 250, 125, "branches", "PY001"),
    Case("elif-chain-too-deep", elif_chain, 6000, 3000, "branches", "too deeply nested"),
    Case("unary-minus", unary_minus, 250, 125, "signs", "PY001"),
    Case("unary-minus-too-deep", unary_minus, 6000, 3000, "signs", "too deeply nested"),
    Case("wrapper-sum", wrapper_sum, 4, 2, "files", "too deeply nested"),
    Case("unbalanced-wrappers", unbalanced_wrappers, 64, 16, "KB"),
    Case("triple-quote-line", triple_quote_line, 16, 4, "KB", "", tuple(NO_PREVIEW)),
    Case("import-words-line", import_words_line, 16, 4, "KB", "", tuple(NO_PREVIEW)),
    Case("cpp-nested-if", cpp_nested_if, 500, 125, "levels", "CU004"),
    Case("cpp-deep-braces", cpp_deep_braces, 2500, 500, "levels", "CU004"),
    Case("cpp-deep-parens", cpp_deep_parens, 2500, 500, "levels", "CU004"),
    Case("cpp-deep-namespaces", cpp_deep_namespaces, 1000, 250, "levels", "CU002"),
    Case("cpp-flat-kernels", cpp_flat_kernels, 1000, 250, "kernels", "CU003"),
    Case("cpp-digit-separators", cpp_digit_separators, 16, 4, "KB", "CU001"),
    Case("cpp-unbalanced", cpp_unbalanced, 64, 16, "KB"),
    Case("cpp-macro-lines", cpp_macro_lines, 16, 4, "KB", "CU001"),
    Case("cpp-big-file", cpp_big_file, 1024, 128, "KB", "CU004"),
]


# -- running ----------------------------------------------------------------------------------
@dataclass
class Run:
    seconds: float
    timed_out: bool
    traceback: bool
    missing: bool
    tail: str


def write_case(case: Case, n: int, directory: str) -> int:
    """Write the case's files of size n into `directory` (emptied first); their total bytes."""
    for name in os.listdir(directory):
        os.unlink(os.path.join(directory, name))
    total = 0
    for name, data in case.generate(n).items():
        with open(os.path.join(directory, name), "wb") as fh:
            fh.write(data)
        total += len(data)
    return total


def run_kernlint(directory: str, args, timeout: float, expect: str = "") -> Run:
    """`kernlint <args> --output-format json .` in `directory`, in a subprocess."""
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            [*KERNLINT, *args, "--output-format", "json", "."],
            capture_output=True,
            timeout=timeout,
            cwd=directory,
        )
    except subprocess.TimeoutExpired:
        return Run(time.perf_counter() - start, True, False, False, "")
    seconds = time.perf_counter() - start
    out = proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")
    return Run(
        seconds,
        False,
        "Traceback (most recent call last)" in out,
        bool(expect) and expect not in out,
        out[-400:],
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes (seconds in all)")
    ap.add_argument("--case", action="append", help="run only this case (repeatable)")
    ap.add_argument("--scale", type=float, default=None, help="multiply the 1x size")
    ap.add_argument("--steps", type=int, default=4, help="sizes 1x, 2x, ... (default 4: to 8x)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per run (default 60)")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("--write", metavar="DIR", help="only write the 1x inputs to DIR/<case>/")
    args = ap.parse_args(argv)

    by_name = {c.name: c for c in CASES}
    if args.list:
        for c in CASES:
            print(f"{c.name:22} 1x = {c.base} {c.unit} (--quick: {c.quick})")
        return 0
    names = args.case or [c.name for c in CASES]
    unknown = [n for n in names if n not in by_name]
    if unknown:
        print(f"unknown case(s): {', '.join(unknown)}; see --list", file=sys.stderr)
        return 2
    cases = [by_name[n] for n in names]

    def size_of(case: Case) -> int:
        n = case.quick if args.quick else case.base
        return max(1, int(n * args.scale)) if args.scale else n

    if args.write:
        for case in cases:
            directory = os.path.join(args.write, case.name)
            os.makedirs(directory, exist_ok=True)
            total = write_case(case, size_of(case), directory)
            print(f"{directory}: {total} bytes")
        return 0

    flagged = 0
    header = f"{'case':22} {'size':>16} {'bytes':>10} {'seconds':>9} {'ratio':>6}"
    print(header)
    print("-" * len(header))
    total_s = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kernlint-growth-") as tmp:
        for case in cases:
            previous = None
            for step in range(args.steps):
                n = size_of(case) * 2**step
                size = write_case(case, n, tmp)
                run = run_kernlint(tmp, case.args or ARGS, args.timeout, case.expect)
                ratio = ""
                flags = []
                if previous is not None and not run.timed_out:
                    r = run.seconds / previous if previous > 0 else 0.0
                    ratio = f"{r:.2f}"
                    if r > SUPERLINEAR and run.seconds >= MIN_JUDGED_S:
                        flags.append("SUPERLINEAR")
                if run.timed_out:
                    flags.append(f"TIMEOUT (> {args.timeout:g} s)")
                if run.traceback:
                    flags.append("TRACEBACK")
                if run.missing:
                    flags.append(f"no `{case.expect}` in the output")
                flagged += bool(flags)
                print(
                    f"{case.name:22} {f'{n} {case.unit}':>16} {size:>10} "
                    f"{run.seconds:>9.2f} {ratio:>6}  {' '.join(flags)}".rstrip(),
                    flush=True,
                )
                if run.traceback or run.missing:
                    print("    " + run.tail.strip().replace("\n", "\n    "))
                if run.timed_out:
                    break  # larger sizes would only time out too
                previous = run.seconds
    elapsed = time.perf_counter() - total_s
    print(f"\n{len(cases)} case(s) in {elapsed:.1f} s; flagged: {flagged}")
    return 1 if flagged else 0


if __name__ == "__main__":
    sys.exit(main())
