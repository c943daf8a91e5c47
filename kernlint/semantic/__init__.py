"""Semantic mode: C++/CUDA files parsed a second time with libclang, for what needs types.

`kernlint check --semantic` (or `semantic = true`) parses each C++/CUDA file with libclang (the
`libclang` wheel, `pip install 'kernlint[semantic]'`) as C++ with a CUDA prelude, without a
compile database:

* include paths are found automatically: the file's directory, an SGLang JIT `include/` (a
  directory holding `sgl_kernel/` found above the file, or the installed `sglang` package's),
  `tvm_ffi`'s headers if installed, the header-only libraries SGLang's JIT builds against when
  installed (CUTLASS/CuTe and flashinfer's headers from `flashinfer`, `deep_gemm`,
  `nvidia.mathdx`: where `sglang/kernels/jit/utils/deps.py` looks), CUDA headers (`CUDA_HOME`, `/usr/local/cuda`, pip's
  `nvidia-cuda-*`), and `include-paths` from the config;
* the compiler's builtin headers (`stddef.h`, `stdarg.h`, `limits.h`, ...), which the wheel does
  not ship, come from a clang installation when one is found and otherwise from minimal
  stand-ins shipped with kernlint (`kernlint/semantic/include/`);
* CUDA keywords come from a small prelude (`prelude.h`): `__global__`, `__device__`, ...
  defined away, the builtin variables (`threadIdx`, ...), the device intrinsics and atomics
  declared. Parsing as C++ rather than CUDA avoids needing clang's CUDA wrapper headers and
  host/device overload checks, which a linter has no use for.

What the rules get from it (`SemanticFile`): canonical integer types of parameters through
aliases and typedefs (`ffi-non-fixed-width-int`), and the declared parameter types of callees
visible in any included header (`read-only-pointer-not-const`). Parse errors and missing headers
degrade gracefully: whatever libclang resolved is used, the tree-sitter results stand, and the
runner prints one note per run about what could not be resolved.
"""

from __future__ import annotations

import ctypes
import glob
import importlib.util
import os
import re
import shutil
import subprocess
from functools import lru_cache

from ..lazyre import lazy_compile

HERE = os.path.dirname(os.path.abspath(__file__))
SHIPPED_INCLUDE = os.path.join(HERE, "include")
# Stand-ins for CUDA headers that declare nothing outside nvcc's device pass.
CUDA_STANDINS = os.path.join(HERE, "cuda")
PRELUDE = os.path.join(HERE, "prelude.h")

FIXED_WIDTH = frozenset(
    {"int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t"}
)
# Names an alias chain may pass through and be fine at the FFI boundary (ffi-non-fixed-width-int):
# the fixed-width names, `size_t` (SGLang's guide lists it among the preferred types) and the
# pointer-width `intptr_t` / `uintptr_t`.
ACCEPTED_INTEGER_NAMES = FIXED_WIDTH | {"size_t", "intptr_t", "uintptr_t"}


class SemanticUnavailable(RuntimeError):
    pass


@lru_cache(maxsize=1)
def cindex():
    try:
        import clang.cindex as ci
    except ImportError as exc:
        raise SemanticUnavailable(
            "semantic mode needs libclang: pip install 'kernlint[semantic]'"
        ) from exc
    try:
        ci.Index.create()
    except Exception as exc:  # libclang.so missing or unloadable
        raise SemanticUnavailable(f"cannot load libclang: {exc}") from exc
    # `clang_isInvalidDeclaration` (libclang >= 7) has no Python binding in the 18.x wheels.
    fn = getattr(ci.conf.lib, "clang_isInvalidDeclaration", None)
    if fn is not None:
        fn.argtypes = [ci.Cursor]
        fn.restype = ctypes.c_uint
    return ci


def _invalid_decl(cursor) -> bool:
    """Did libclang mark this declaration invalid (its type is error recovery's guess)?"""
    fn = getattr(cindex().conf.lib, "clang_isInvalidDeclaration", None)
    return fn is not None and bool(fn(cursor))


@lru_cache(maxsize=1)
def builtin_include() -> str:
    """A directory with the compiler's builtin headers: a real clang's, else kernlint's own."""
    clang = shutil.which("clang")
    if clang:
        try:
            out = subprocess.run(
                [clang, "-print-resource-dir"], capture_output=True, text=True, timeout=10
            ).stdout.strip()
            if out and os.path.exists(os.path.join(out, "include", "stddef.h")):
                return os.path.join(out, "include")
        except (OSError, subprocess.SubprocessError):
            pass
    for cand in sorted(glob.glob("/usr/lib/llvm-*/lib/clang/*/include"), reverse=True):
        if os.path.exists(os.path.join(cand, "stddef.h")):
            return cand
    return SHIPPED_INCLUDE


def _package_dirs(name: str) -> list[str]:
    """Directories of an installed package, found without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return []
    if spec is None:
        return []
    return [d for d in (spec.submodule_search_locations or []) if os.path.isdir(d)]


# Header-only dependencies of SGLang's JIT kernels, where SGLang's own JIT build looks for them
# (`sglang/kernels/jit/utils/deps.py`): (package, include directories relative to it).
JIT_DEPENDENCIES = (
    (
        "flashinfer",
        (
            "data/include",
            "data/csrc",
            "data/csrc/nv_internal",
            "data/csrc/nv_internal/include",
            "data/cutlass/include",
            "data/cutlass/tools/util/include",
            "data/spdlog/include",
        ),
    ),
    ("deep_gemm", ("include",)),
    ("nvidia.mathdx", ("include", "external/cutlass/include")),
    ("torch", ("include", "include/torch/csrc/api/include")),
)


# SGLang's own JIT headers and tvm-ffi's, from the installed packages.
PACKAGE_INCLUDES = (("sglang", ("kernels/jit/include",)), ("tvm_ffi", ("include",)))


def _installed_includes(table) -> tuple[str, ...]:
    """The existing include directories of a (package, relative directories) table."""
    out = []
    for package, subdirs in table:
        for base in _package_dirs(package):
            for sub in subdirs:
                out.append(os.path.join(base, *sub.split("/")))
    return tuple(dict.fromkeys(d for d in out if os.path.isdir(d)))


@lru_cache(maxsize=1)
def _dependency_includes() -> tuple[str, ...]:
    """Include directories of SGLang's installed header-only JIT dependencies (CUTLASS/CuTe
    through flashinfer or mathdx, DeepGEMM, flashinfer's own headers), in SGLang's order, then
    torch's C++ headers (ATen) for the kernels that include them."""
    return _installed_includes(JIT_DEPENDENCIES)


@lru_cache(maxsize=1)
def _package_includes() -> tuple[str, ...]:
    return _installed_includes(PACKAGE_INCLUDES)


@lru_cache(maxsize=1)
def cuda_roots() -> tuple[str, ...]:
    """CUDA installations with headers, first the one the build would use (`CUDA_HOME`,
    `CUDA_PATH`, `/usr/local/cuda`), then pip's `nvidia-*` wheels (which also hold the headers
    of libraries a system toolkit may lack, such as cuRAND or cuSPARSE)."""
    out = []
    for env in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(env)
        if root and os.path.exists(os.path.join(root, "include", "cuda_runtime.h")):
            out.append(root)
    if os.path.exists("/usr/local/cuda/include/cuda_runtime.h"):
        out.append("/usr/local/cuda")
    for base in _package_dirs("nvidia"):
        for sub in ("cu13", "cu12", "cuda_runtime"):
            root = os.path.join(base, sub)
            if os.path.isdir(os.path.join(root, "include")):
                out.append(root)
    return tuple(dict.fromkeys(out))


_VENDOR_DIRS = ("vendor", "3rdparty", "third_party")


@lru_cache(maxsize=256)
def _vendor_includes(directory: str) -> tuple[str, ...]:
    """`include/` directories of vendored libraries next to a directory (`vendor/x/include`,
    `vendor/3rdparty/y/include`, ...), up to four levels down."""
    out = []
    for name in _VENDOR_DIRS:
        base = os.path.join(directory, name)
        if not os.path.isdir(base):
            continue
        for d, dirs, _files in os.walk(base):
            depth = d[len(base) :].count(os.sep)
            if os.path.basename(d) == "include":
                out.append(d)
                dirs[:] = []
            elif depth >= 4:
                dirs[:] = []
    return tuple(sorted(out))


@lru_cache(maxsize=256)
def _tree_includes(directory: str) -> tuple[str, ...]:
    """Include roots above a directory: SGLang-style roots holding `sgl_kernel/`, and the
    `include/` directories of vendored libraries beside the file or its ancestors."""
    out = []
    d = directory
    for _ in range(12):
        for cand in (d, os.path.join(d, "include")):
            if os.path.isdir(os.path.join(cand, "sgl_kernel")) and cand not in out:
                out.append(cand)
        out += [cand for cand in _vendor_includes(d) if cand not in out]
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return tuple(out)


def _generic_includes(directory: str, extra=()) -> list[str]:
    """The include paths of a file in `directory` but that directory itself (a precompiled
    header is built with these, and used where the directory shadows none of its lookups)."""
    out = [*_tree_includes(directory), *extra, *_package_includes(), *_dependency_includes()]
    out.append(CUDA_STANDINS)
    for root in cuda_roots():
        out.append(os.path.join(root, "include"))
        cccl = os.path.join(root, "include", "cccl")
        if os.path.isdir(cccl):
            out.append(cccl)
    return [p for p in dict.fromkeys(out) if p]


def include_paths(path: str, extra: list[str] | tuple[str, ...] = ()) -> list[str]:
    directory = os.path.dirname(os.path.abspath(path))
    return [p for p in dict.fromkeys([directory, *_generic_includes(directory, extra)]) if p]


def _base_args(defines) -> list[str]:
    args = [
        "-x",
        "c++",
        "-std=c++20",
        "-DSGL_CUDA_ARCH=900",
        "-Wno-everything",
        "-ferror-limit=0",  # every problem in one pass (headers to re-read are found at once)
        "-isystem",
        builtin_include(),
        "-include",
        PRELUDE,
    ]
    return args + [f"-D{d}" for d in defines]


def compile_args(path: str, extra_includes=(), defines=()) -> list[str]:
    """libclang's arguments for one file; `defines`: `NAME` or `NAME=VALUE` macros, after
    kernlint's own (so they can override `SGL_CUDA_ARCH`)."""
    args = _base_args(defines)
    for inc in include_paths(path, extra_includes):
        args += ["-I", inc]
    return args


def _build_args(directory: str, extra_includes=(), defines=()) -> list[str]:
    """The arguments of a precompiled header for files in `directory`: `compile_args` without
    the directory's own include path."""
    args = _base_args(defines)
    for inc in _generic_includes(directory, extra_includes):
        args += ["-I", inc]
    return args


_ASM = lazy_compile(rb"\b(?:asm|__asm__)\s*(?:volatile\s*|__volatile__\s*)?\(")
_CHEVRONS = lazy_compile(rb"<<<(?:[^<>;]|<(?!<<)|>(?!>>))*?>>>")


def host_view(data: bytes) -> bytes:
    """The file as the host-side C++ parse should see it, same length and line breaks: inline
    PTX asm statements (their register constraints are invalid for the host target) and the
    `<<<grid, block>>>` of launches (not C++) are blanked, so the rest keeps its types."""
    out = bytearray(data)

    def blank(start: int, end: int) -> None:
        for i in range(start, end):
            if out[i] in (0x0A, 0x0D):
                continue
            if out[i] == 0x5C and data[i + 1 : i + 2] in (b"\n", b"\r"):
                continue  # a line continuation (asm inside a macro definition) stays
            out[i] = 0x20

    if b"asm" in data:
        for m in _ASM.finditer(data):
            depth, i = 1, m.end()
            while i < len(data) and depth:
                c = data[i]
                if c == 0x28:
                    depth += 1
                elif c == 0x29:
                    depth -= 1
                elif c == 0x22:  # skip a string literal
                    i += 1
                    while i < len(data) and data[i] != 0x22:
                        i += 2 if data[i] == 0x5C else 1
                i += 1
            if depth == 0:
                blank(m.start(), i)
                if m.start() > 0:
                    out[m.start()] = 0x30  # `0`: the statement stays an expression statement
    if b"<<<" in data:
        for m in _CHEVRONS.finditer(data):
            blank(m.start(), m.end())
    return bytes(out)


def _unsaved_view(path: str, asm_only: bool = False) -> tuple[str, str] | None:
    """(path, host view) of a header, to hand libclang as an unsaved file; None when reading
    fails or the view is the file itself (with `asm_only`: when the file holds no inline asm)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    if asm_only and not (b"asm" in data and _ASM.search(data)):
        return None
    view = host_view(data)
    return (path, view.decode("utf-8", "surrogateescape")) if view != data else None


@lru_cache(maxsize=16)
def _header_views(root: str) -> tuple[tuple[str, str], ...]:
    """Host views of the headers under an SGLang include root that hold inline asm (handed to
    libclang as unsaved files, so their PTX constraints do not stop the parse)."""
    out = []
    for d, _, names in os.walk(root):
        for name in names:
            if name.endswith((".h", ".cuh", ".hpp")):
                found = _unsaved_view(os.path.join(d, name), asm_only=True)
                if found is not None:
                    out.append(found)
    return tuple(out)


def _view_roots(directory: str) -> tuple[str, ...]:
    """The SGLang include roots whose asm-holding headers a parse hands over as host views."""
    roots = _tree_includes(directory) + _package_includes()
    return tuple(r for r in dict.fromkeys(roots) if os.path.isdir(os.path.join(r, "sgl_kernel")))


def _header_view_list(roots) -> list[tuple[str, str]]:
    return [u for root in roots for u in _header_views(root)]


_ASM_ROUNDS = 3


def _diagnostics(tu) -> list[tuple[int, str, str | None, int]]:
    """The errors of a parse: (severity, text, absolute file or None, offset)."""
    ci = cindex()
    out = []
    for diag in tu.diagnostics:
        if diag.severity < ci.Diagnostic.Error:
            continue
        loc = diag.location
        name = os.path.abspath(loc.file.name) if loc.file is not None else None
        out.append((diag.severity, diag.spelling, name, loc.offset))
    return out


def _asm_headers(diags, seen: set[str]) -> list[tuple[str, str]]:
    """Host views of the headers where libclang reported errors and that hold inline asm or
    `<<<...>>>` launches (not yet handed over)."""
    out = []
    for _severity, _text, path, _offset in diags:
        if path is None or path in seen:
            continue
        seen.add(path)
        found = _unsaved_view(path)
        if found is not None:
            out.append(found)
    return out


# A parse that used a precompiled header and went wrong because of it.
_PCH_TROUBLE = lazy_compile(r"precompiled header|PCH file|AST file|module file", re.I)


class SemanticFile:
    """libclang's view of one file: what the rules ask, keyed by byte offsets of the file."""

    def __init__(self, path: str, data: bytes, extra_includes=(), defines=()) -> None:
        from . import pch as _pch

        cindex()
        self.path = os.path.abspath(path)
        self.problems: list[str] = []
        self.pch: str | None = None  # the precompiled header the parse used, if any
        view = host_view(data)
        unsaved = [(self.path, view.decode("utf-8", "surrogateescape"))]
        for root in _view_roots(os.path.dirname(self.path)):
            unsaved += [u for u in _header_views(root) if u[0] != self.path]
        args = compile_args(self.path, extra_includes, defines)
        diags = None
        use = None
        if _pch.planned(self.path):
            try:
                use = _pch.use_for(self.path, view, args)
            except Exception:  # (a PCH is only ever a shortcut: never a reason to fail)
                use = None
        if use is not None:
            text = use.text.decode("utf-8", "surrogateescape")
            diags = self._parse(use.args, [(self.path, text), *unsaved[1:]], use.path)
            if diags is None:
                use.failed()  # (libclang could not use it: parsed without it)
            else:
                self.pch = use.path
        if diags is None:
            diags = self._parse(args, unsaved, None)
        if self.tu is None:
            return
        # Where the parse went wrong: the first error's offset per file, and the names
        # libclang reported as unknown (a missing header's types; after the first fatal
        # error, such as a header not found, libclang reports nothing more, but still marks
        # the declarations it had to guess invalid).
        self._first_error: dict[str, int] = {}
        self._unknown_names: set[str] = set()
        for _severity, text, name, offset in diags:
            self.problems.append(text)
            if name is not None:
                self._first_error[name] = min(offset, self._first_error.get(name, offset))
            self._unknown_names.update(_UNKNOWN_NAME.findall(text))
        self._params = None
        self._calls = None
        # Call offsets whose callee libclang could not resolve without guessing a type.
        self.unresolved_calls: set[int] = set()

    def _parse(self, args, unsaved, pch: str | None):
        """Parse (again with the host views of headers whose inline PTX stopped it), setting
        `self.tu`; the errors. With a precompiled header: None when libclang could not use it
        (the caller parses without it)."""
        ci = cindex()
        # (With a PCH, the walk over the file's declarations skips the PCH's.)
        index = ci.Index.create(excludeDecls=pch is not None)
        for _round in range(_ASM_ROUNDS):
            try:
                self.tu = index.parse(
                    self.path,
                    args=args,
                    unsaved_files=unsaved,
                    options=ci.TranslationUnit.PARSE_INCOMPLETE,
                )
            except ci.TranslationUnitLoadError as exc:
                self.tu = None
                if pch is not None:
                    return None
                self.problems.append(f"libclang could not parse the file ({exc})")
                return []
            diags = _diagnostics(self.tu)
            if pch is not None and any(
                path is None or path == pch or _PCH_TROUBLE.search(text)
                for _s, text, path, _o in diags
            ):
                self.tu = None
                return None
            # Inline PTX in other headers (vendored libraries, CUTLASS extensions): parse again
            # with those headers' host views.
            more = _asm_headers(diags, {u[0] for u in unsaved})
            if not more:
                break
            unsaved = unsaved + more
        return diags

    @property
    def resolved(self) -> bool:
        return self.tu is not None and not self.problems

    def _walk(self):
        ci = cindex()
        if self.tu is None:
            return
        stack = [self.tu.cursor]
        while stack:
            cur = stack.pop()
            for child in cur.get_children():
                loc = child.location
                if loc.file is not None and os.path.abspath(loc.file.name) != self.path:
                    continue  # declarations from headers: not walked
                yield child
                if child.kind != ci.CursorKind.MACRO_DEFINITION:
                    stack.append(child)

    def _index(self) -> None:
        ci = cindex()
        self._params = {}
        self._calls = {}
        for cur in self._walk():
            if cur.kind == ci.CursorKind.PARM_DECL and cur.location.file is not None:
                self._params[cur.location.offset] = cur
            elif cur.kind == ci.CursorKind.CALL_EXPR:
                self._calls.setdefault(cur.extent.start.offset, cur)

    # -- what could not be resolved -------------------------------------------------------
    def _decl_guessed(self, decl) -> bool:
        """Is this declaration (a typedef/using, a function, a parameter) built on something
        libclang could not resolve? Marked invalid; named in an "unknown type name" error; or
        declared in a file after an error there (a header that was not found, a macro that
        was not defined: what follows may read differently with it)."""
        if _invalid_decl(decl):
            return True
        if decl.spelling and decl.spelling in self._unknown_names:
            return True
        loc = decl.location
        if loc.file is None:
            return False
        first = self._first_error.get(os.path.abspath(loc.file.name))
        return first is not None and first <= loc.offset

    def _type_guessed(self, t, depth: int = 0) -> bool:
        """Does the type, or any step of its alias chain (through pointers, references and
        template arguments), come from an unresolved include or an invalid declaration?"""
        ci = cindex()
        for _ in range(32):
            kind = t.kind
            if kind == ci.TypeKind.INVALID:
                return True
            if kind in (
                ci.TypeKind.POINTER,
                ci.TypeKind.LVALUEREFERENCE,
                ci.TypeKind.RVALUEREFERENCE,
            ):
                t = t.get_pointee()
                continue
            if kind == ci.TypeKind.ELABORATED:
                t = t.get_named_type()
                continue
            decl = t.get_declaration()
            if decl.kind != ci.CursorKind.NO_DECL_FOUND and self._decl_guessed(decl):
                return True
            if depth < 4:
                for i in range(max(t.get_num_template_arguments(), 0)):
                    arg = t.get_template_argument_type(i)
                    if arg.kind != ci.TypeKind.INVALID and self._type_guessed(arg, depth + 1):
                        return True
            if kind == ci.TypeKind.TYPEDEF:
                underlying = decl.underlying_typedef_type
                if self.problems and self._recovered(decl, underlying):
                    return True
                t = underlying
                continue
            break
        return t.get_canonical().kind == ci.TypeKind.INVALID

    def _recovered(self, decl, underlying) -> bool:
        """A typedef/using (in a translation unit with errors) whose tokens name a type
        libclang reported unknown, or whose underlying `int` its tokens do not spell: error
        recovery's `int` for an unknown name."""
        ci = cindex()
        spelled = {tok.spelling for tok in decl.get_tokens()}
        if spelled & self._unknown_names:
            return True
        if underlying.kind != ci.TypeKind.INT or underlying.spelling != "int":
            return False
        return not spelled & {"int", "signed", "unsigned"}

    # -- canonical integer types ------------------------------------------------------------
    def param_integer(self, name_offset: int) -> tuple[str, str] | None | object:
        """For the parameter whose name starts at `name_offset`: (spelled type, platform-width
        builtin it aliases) when the type is a typedef/alias chain that reaches a platform-width
        integer without passing through a fixed-width name; `UNRESOLVED` when the parameter's
        type, or a step of its alias chain, could not be resolved (not judged: no finding is
        built on error recovery's `int`); None otherwise."""
        if self._params is None:
            self._index()
        cur = self._params.get(name_offset)
        if cur is None:
            return None
        # (The parameter itself is judged by its type alone: an earlier error in its file says
        # nothing about a parameter whose type resolved.)
        if _invalid_decl(cur) or self._type_guessed(cur.type):
            return UNRESOLVED
        return classify_integer(cur.type)

    # -- callee parameter constness --------------------------------------------------------
    def callee_param_const(self, call_offset: int, index: int) -> bool | None:
        """For the call starting at `call_offset`: is the callee's parameter `index` a pointer to
        const (True), a pointer to non-const (False)? None when unknown (unresolved callee,
        template-dependent, not a pointer, variadic)."""
        ci = cindex()
        if self._calls is None:
            self._index()
        call = self._calls.get(call_offset)
        if call is None:
            return None
        decl = call.referenced
        if decl is None or decl.kind not in (
            ci.CursorKind.FUNCTION_DECL,
            ci.CursorKind.CXX_METHOD,
            ci.CursorKind.FUNCTION_TEMPLATE,
        ):
            return None
        params = [c for c in decl.get_children() if c.kind == ci.CursorKind.PARM_DECL]
        if index >= len(params):
            return None
        if self._call_guessed(call, decl, params[index], index):
            self.unresolved_calls.add(call_offset)
            return None
        t = params[index].type.get_canonical()
        if t.kind != ci.TypeKind.POINTER:
            return None
        pointee = t.get_pointee()
        if pointee.kind == ci.TypeKind.UNEXPOSED:
            return None  # dependent on a template parameter
        return pointee.is_const_qualified()

    def _call_guessed(self, call, decl, param, index: int) -> bool:
        """Is the callee (its declaration, the parameter) or the argument's type a guess of
        error recovery? (An argument of a guessed type can pick the wrong overload.)"""
        if self._decl_guessed(decl) or self._decl_guessed(param) or self._type_guessed(param.type):
            return True
        args = list(call.get_arguments())
        return index < len(args) and self._type_guessed(args[index].type)


class _Unresolved:
    """What the semantic pass answers for a type it could not resolve."""

    def __repr__(self) -> str:
        return "UNRESOLVED"


UNRESOLVED = _Unresolved()

# Prefix of the notes the rules add for what the semantic pass did not judge (counted in the
# run's one note): `unjudged: parameter PATH:LINE`, `unjudged: callee PATH:LINE`.
UNJUDGED = "unjudged: "


def note_unjudged(ctx, what: str, offset: int) -> None:
    """Record on the file's notes that the semantic pass did not judge `what` ("parameter",
    "callee") at `offset`: its type did not resolve, the syntactic verdict stands."""
    line = ctx.data.count(b"\n", 0, offset) + 1
    ctx.notes.append(f"{UNJUDGED}{what} {ctx.source.path}:{line}")


_UNKNOWN_NAME = lazy_compile(
    r"(?:unknown type name|no type named|no template named|unknown template name|"
    r"use of undeclared identifier) '(?:[\w:]*::)?(\w+)'"
)


_PLATFORM_KINDS = {
    "INT": "int32_t",
    "UINT": "uint32_t",
    "LONG": "int64_t",
    "ULONG": "uint64_t",
    "LONGLONG": "int64_t",
    "ULONGLONG": "uint64_t",
    "SHORT": "int16_t",
    "USHORT": "uint16_t",
}


def classify_integer(t) -> tuple[str, str] | None:
    """(spelled, replacement) if `t` is an alias chain ending in a platform-width integer."""
    ci = cindex()
    spelled = t.spelling
    seen_alias = False
    for _ in range(16):
        if t.kind == ci.TypeKind.ELABORATED:
            t = t.get_named_type()
            continue
        if t.kind == ci.TypeKind.TYPEDEF:
            name = t.get_typedef_name() or t.spelling
            if name.split("::")[-1] in ACCEPTED_INTEGER_NAMES:  # `int64_t`, `std::size_t`
                return None
            seen_alias = True
            t = t.get_declaration().underlying_typedef_type
            continue
        break
    if not seen_alias:
        return None  # spelled directly: the syntactic pass reports it
    kind = t.get_canonical().kind.name
    replacement = _PLATFORM_KINDS.get(kind)
    return (spelled.replace("const ", "").strip(), replacement) if replacement else None
