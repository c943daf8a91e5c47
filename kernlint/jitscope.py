"""Which files under the JIT roots are SGLang JIT sources, whether the tree's JIT headers use
`namespace sglang`, and which files are machine-generated (`generated_reason`: no rule checks
those; the config key `generated-markers = false` turns the detection off).

`jit-roots` says where SGLang's JIT kernels live; a few files there are not SGLang JIT code, and
the JIT-scoped rules (those with scope "jit") do not apply to them. `exempt_reason` names why,
from the file's own bytes, cheaply:

- a **torch extension**: it includes `<torch/extension.h>` or defines `PYBIND11_MODULE(...)` /
  `TORCH_LIBRARY(...)` (built by `torch.utils.cpp_extension`, not by `load_jit`, and without
  the `sgl_kernel` abstractions);
- a **verbatim copy or a generated file**: its leading comment block (the comments before the
  first line of code, preprocessor lines skipped, in the first `HEAD_BYTES` bytes) says
  "Copied from", "Copied and adapted from", "Taken from", "Vendored from", "auto-generated",
  "@generated" or "Generated ... do not edit" (a copy marker must open a comment line).
  "Adapted from" alone marks SGLang's own modified code and exempts nothing.
- a **vendored copy under another project's copyright**: a copyright line of that leading
  comment block names another open-source project (FlashInfer, vLLM, TensorRT-LLM, DeepSpeed,
  llama.cpp/ggml) and none names SGLang ("Copyright (c) 2023 by FlashInfer team." alone;
  SGLang's adaptations add their own "Copyright ... by SGLang team" line): vendored code keeps
  its own conventions. A copyright of a company or a person (NVIDIA, a kernel's author) exempts
  nothing: SGLang's own kernels carry those too.
(Vendored directories, `vendor/`, `3rdparty/`, `third_party/`, are outside the default
`jit-roots` already.)

The config key `jit-exempt-markers = false` turns these exemptions off (every file under the
JIT roots is then a JIT source).

`namespace_convention` answers, for a file under the JIT roots, whether the `namespace sglang`
convention is in force in its tree: the `include/sgl_kernel/utils.h` found in the nearest
directory above the file (`D/include/sgl_kernel/utils.h`) opens `namespace sglang` (older
SGLang trees, such as the 0.5.15 wheel, define `host::` and `device::` at global scope and
export their functions there). Without such a header (a file checked on its own, outside its
tree) the convention is taken to be in force. With the `namespaces` setting naming a project's
own namespaces (anything but `["sglang"]`), SGLang's headers are not consulted: the convention
is in force.
"""

from __future__ import annotations

import os
import re

from .lazyre import lazy_compile

# Top-level namespaces of third-party libraries: code inside them specializes or extends the
# library (template specializations must live in their primary template's namespace; a CUTLASS
# device adapter in `cutlass::gemm::device` launches the CUTLASS way), so the JIT conventions
# about SGLang's own code do not apply to it.
LIBRARY_NAMESPACES = frozenset(
    {"std", "cute", "cutlass", "cub", "thrust", "tvm", "at", "c10", "torch"}
)

# How much of a file's start holds its leading comment block (license headers included).
HEAD_BYTES = 8192

_TORCH_INCLUDE = lazy_compile(rb"^[ \t]*#[ \t]*include[ \t]*[<\"]torch/extension\.h[>\"]", re.M)
_TORCH_MODULE = lazy_compile(
    rb"^[ \t]*(PYBIND11_MODULE|TORCH_LIBRARY|TORCH_LIBRARY_FRAGMENT|TORCH_LIBRARY_IMPL)[ \t]*\(",
    re.M,
)

# A copy marker opens a comment line ("Kernel body vendored from X" in the middle of a sentence
# introduces SGLang's own integration of it, not a copy); a generated-file marker is anywhere.
_COPY_MARKER = lazy_compile(
    r"^[ \t]*(copied|taken|vendored)([ \t]+(and|&)[ \t]+(adapted|modified|pruned))?"
    r"([ \t]+verbatim)?[ \t]+from\b"
    r"|\bauto-?generated\b|@generated\b|\bgenerated\b.{0,200}?\bdo\s+not\s+edit\b",
    re.I | re.M | re.S,
)

# A copyright line naming another project (not SGLang) in the leading comment block.
_FOREIGN_COPYRIGHT = lazy_compile(
    r"^[ \t]*(?:SPDX-FileCopyrightText:[ \t]*)?(?:Copyright|\(c\))\b[^\n]*?"
    r"\b(FlashInfer|vLLM|TensorRT-LLM|DeepSpeed|llama\.cpp|ggml)\b[^\n]*",
    re.I | re.M,
)

_SGLANG_COPYRIGHT = lazy_compile(
    r"^[ \t]*(?:SPDX-FileCopyrightText:[ \t]*)?(?:Copyright|\(c\))\b[^\n]*\bSGLang\b", re.I | re.M
)


def jit_exemption(settings, data: bytes, language: str = "cpp") -> str | None:
    """Why a file under the JIT roots with these bytes is not a JIT source after all (see
    `exempt_reason`), or None; always None when the settings turn the exemptions off
    (`jit-exempt-markers = false`) and for Python files. What the engine asks of each file the
    JIT roots hold, and what `kernlint inspect` shows."""
    if language != "cpp" or not getattr(settings, "jit_exempt_markers", True):
        return None
    return exempt_reason(data)


def exempt_reason(data: bytes) -> str | None:
    """Why the file with these bytes is not an SGLang JIT source although it sits
    under the JIT roots, or None: it is one."""
    if b"torch/extension.h" in data:
        m = _TORCH_INCLUDE.search(data)
        if m is not None:
            return "torch extension: includes <torch/extension.h>"
    if b"PYBIND11_MODULE" in data or b"TORCH_LIBRARY" in data:
        m = _TORCH_MODULE.search(data)
        if m is not None:
            return f"torch extension: defines {m.group(1).decode()}(...)"
    comments = leading_comments(data[:HEAD_BYTES])
    if comments:
        m = _COPY_MARKER.search(comments)
        if m is not None:
            marker = " ".join(m.group().split())
            if len(marker) > 40:
                marker = marker[:18] + " ... " + marker[-15:]
            kind = "generated file" if "generated" in marker.lower() else "verbatim copy"
            return f'{kind}: its leading comment says "{marker}"'
        m = _FOREIGN_COPYRIGHT.search(comments)
        if m is not None and not _SGLANG_COPYRIGHT.search(comments):
            return f'vendored copy: its leading comment says "{_shorten(m.group())}"'
    return None


def leading_comments(head: bytes) -> str:
    """The text of the comments before the first line of code in `head` (preprocessor lines
    are skipped, not code), comment delimiters removed, as one string."""
    return _leading(head)[0]


def _leading(head: bytes) -> tuple[str, int]:
    """(`leading_comments(head)`, the offset of the first code in `head`: `len(head)` if
    none)."""
    out: list[str] = []
    i, n = 0, len(head)
    while i < n:
        c = head[i]
        if c in b" \t\r\n\f\v":
            i += 1
        elif head.startswith(b"//", i):
            end = head.find(b"\n", i)
            end = n if end < 0 else end
            out.append(head[i + 2 : end].decode("utf-8", "replace"))
            i = end
        elif head.startswith(b"/*", i):
            end = head.find(b"*/", i + 2)
            end = n if end < 0 else end
            body = head[i + 2 : end].decode("utf-8", "replace")
            out.extend(line.strip().lstrip("*") for line in body.splitlines())
            i = end + 2
        elif c == 0x23:  # `#`: a preprocessor line, with its continuations
            while True:
                end = head.find(b"\n", i)
                if end < 0:
                    i = n
                    break
                i = end + 1
                if not head[:end].rstrip(b"\r").endswith(b"\\"):
                    break
        else:
            break
    return "\n".join(out), i


# -- generated files -------------------------------------------------------------------------

# A generated-file marker in a leading comment block (the generator's own words): "@generated",
# "auto-generated", "Generated by X -- do not edit" and "do not edit ... generated", in either
# order, at most 200 characters apart.
_GENERATED_MARKER = lazy_compile(
    r"@generated\b|\bauto-?generated\b"
    r"|\bgenerated\b.{0,200}?\bdo\s+not\s+edit\b|\bdo\s+not\s+edit\b.{0,200}?\bgenerated\b",
    re.I | re.S,
)
# A content hash in a file name: 16 or more hex digits, with a digit and a letter among them
# (`cake_kda_tf32_<64 hex>_kernel.cu`, `..._7aed2a34a320c3d25080_kernel.cu`).
_HEX_RUN = lazy_compile(r"[0-9a-fA-F]{16,}")
# The typedef preamble of sources written for NVRTC by a generator: the file's first code
# declares the fixed-width integer names itself (`typedef unsigned int uint32_t;`).
_TYPEDEF_PREAMBLE = lazy_compile(
    rb"typedef[ \t]+[A-Za-z_][A-Za-z0-9_ \t]*[ \t](u?int(?:8|16|32|64)_t)[ \t]*;"
)
# The layout block the Cake/Loom kernel exporter (FlashInfer's generated kernels) writes before
# each kernel body: `#define NUM_MAIN_STAGES n` and `#define SMEM_<buffer>_STAGE_BYTES n`.
_EXPORTER_LAYOUT = lazy_compile(
    rb"^[ \t]*#[ \t]*define[ \t]+(NUM_MAIN_STAGES|SMEM_[A-Za-z0-9_]+_STAGE_BYTES)\b", re.M
)


def generated_exemption(settings, data: bytes, relpath: str, language: str = "cpp") -> str | None:
    """Why the file is machine-generated (see `generated_reason`), or None; always None when
    the settings turn the detection off (`generated-markers = false`). What the engine asks
    of every file before any rule runs, and what `kernlint inspect` shows."""
    if not getattr(settings, "generated_markers", True):
        return None
    return generated_reason(data, relpath, language)


def generated_reason(data: bytes, relpath: str = "", language: str = "cpp") -> str | None:
    """Why the file with these bytes at `relpath` (`/`-separated; relative to the project root,
    or only the file's name) was written by a generator, or None. Linting generated code is not
    actionable (the generator is what to fix), so no rule checks such a file. The signals, each
    measured on the ecosystem corpora to exempt no reviewed true finding:

    - a marker in the leading comment blocks (license blocks included): "@generated",
      "auto-generated", "Generated ... do not edit" or "do not edit ... generated";
    - a directory in the path named `generated`;
    - a file name holding a content hash (16 or more hex digits, letters and digits);
    - C/C++: the file's first code is a typedef of a fixed-width integer name
      (`typedef unsigned int uint32_t;`), the preamble of generated NVRTC sources;
    - C/C++: the layout macros of the Cake/Loom kernel exporter (`#define NUM_MAIN_STAGES`,
      `#define SMEM_<buffer>_STAGE_BYTES`)."""
    head = data[:HEAD_BYTES]
    code_start = 0
    if b"generat" not in head.lower():
        comments = ""  # (no marker can be there; the code's start matters only for C/C++)
        if language == "cpp" and b"typedef" in head:
            _, code_start = _leading(head)
    elif language == "cpp":
        comments, code_start = _leading(head)
    else:
        comments = _python_leading(head)
    if comments:
        m = _GENERATED_MARKER.search(comments)
        if m is not None:
            return f'generated file: its leading comment says "{_shorten(m.group())}"'
    parts = relpath.replace("\\", "/").split("/")
    if any(p.lower() == "generated" for p in parts[:-1]):
        return "generated file: it is under a directory named `generated`"
    for m in _HEX_RUN.finditer(parts[-1]):
        run = m.group()
        if any(c.isdigit() for c in run) and any(not c.isdigit() for c in run):
            return f"generated file: its name holds a {len(run)}-digit hex hash"
    if language != "cpp":
        return None
    if head.startswith(b"typedef", code_start):
        m = _TYPEDEF_PREAMBLE.match(head, code_start)
        if m is not None:
            name = m.group(1).decode()
            return f"generated file: its code starts with `typedef ... {name};`, an NVRTC preamble"
    if b"NUM_MAIN_STAGES" in data or b"_STAGE_BYTES" in data:
        m = _EXPORTER_LAYOUT.search(data)
        if m is not None:
            return (
                f"generated file: it defines `{m.group(1).decode()}`, a layout macro of the "
                "Cake/Loom kernel exporter"
            )
    return None


def _shorten(marker: str) -> str:
    marker = " ".join(marker.split())
    return marker if len(marker) <= 40 else marker[:18] + " ... " + marker[-15:]


def _python_leading(head: bytes) -> str:
    """The text of the `#` comment lines before a Python file's first code line."""
    out: list[str] = []
    for line in head.split(b"\n"):
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith(b"#"):
            break
        out.append(stripped[1:].decode("utf-8", "replace"))
    return "\n".join(out)


# -- the namespace sglang convention ---------------------------------------------------------

CONVENTION_HEADER = os.path.join("include", "sgl_kernel", "utils.h")
_OPENS_SGLANG = lazy_compile(rb"^[ \t]*(inline[ \t]+)?namespace[ \t]+sglang\b", re.M)

_HEADER_OF_DIR: dict[str, str | None] = {}
_HEADER_IN_FORCE: dict[str, bool] = {}


def nearest_above(start: str, probe, memo: dict, key=None):
    """The first answer of `probe(d)` that is not None, for `d` = the directory `start` and each
    directory above it in turn; None when no directory answers. Memoized in `memo` for every
    directory passed (under `key(d)`, or `d`), so a run asks each directory once."""
    passed = []
    d = start
    found = None
    while True:
        k = d if key is None else key(d)
        if k in memo:
            found = memo[k]
            break
        passed.append(k)
        found = probe(d)
        if found is not None:
            break
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    for k in passed:
        memo[k] = found
    return found


def convention_header(abspath: str) -> str | None:
    """The `include/sgl_kernel/utils.h` of the nearest directory above `abspath` that has one,
    or None. (Memoized per directory: a few `stat`s per directory of a run.)"""

    def probe(d):
        candidate = os.path.join(d, CONVENTION_HEADER)
        return candidate if os.path.isfile(candidate) else None

    return nearest_above(os.path.dirname(os.path.abspath(abspath)), probe, _HEADER_OF_DIR)


def sglang_namespaces(namespaces) -> bool:
    """Are these `namespaces` settings SGLang's (unset, or `["sglang"]`)? Only then does the
    tree's `include/sgl_kernel/utils.h` say whether the convention is in force."""
    return namespaces is None or {n.lstrip(":") for n in namespaces} == {"sglang"}


def namespace_convention(abspath: str, namespaces=None) -> tuple[bool, str | None]:
    """(in force, the header that decided it) for a file under the JIT roots: in force unless
    the tree's `include/sgl_kernel/utils.h` exists and does not open `namespace sglang`.
    `namespaces`: the `namespaces` setting; a project's own namespaces (not SGLang's) are in
    force whatever SGLang's headers hold (`sglang_namespaces`)."""
    if not sglang_namespaces(namespaces):
        return True, None
    header = convention_header(abspath)
    if header is None:
        return True, None
    in_force = _HEADER_IN_FORCE.get(header)
    if in_force is None:
        try:
            with open(header, "rb") as fh:
                data = fh.read(1 << 20)
        except OSError:
            in_force = True  # (unreadable: today's behaviour)
        else:
            in_force = _OPENS_SGLANG.search(data) is not None
        _HEADER_IN_FORCE[header] = in_force
    return in_force, header


def convention_fingerprint(abspath: str, namespaces=None) -> str:
    """What the cache key of a file's CU002 findings depends on beyond the file itself."""
    in_force, header = namespace_convention(abspath, namespaces)
    return "" if in_force else f"|no-sglang-ns:{header}"


# A leading comment saying the file's code comes from another project's C/C++/CUDA sources:
# "Adapted from https://github.com/NVIDIA/TensorRT-LLM/.../dsv3FusedAGemm.cu", "Forked from
# flashinfer's finalizeKernel (trtllm_fused_moe_dev_kernel.cu:639)", "Adapted from
# https://github.com/IST-DASLab/marlin" (a repository), "Kernel body vendored from ...
# (KDA_decode/kda_decode_fusion_kernel.cu)". The source must be named within the sentence: a C/C++ file name or a repository URL (not SGLang's own, not a Python file).
_DERIVED = lazy_compile(
    r"\b(?:adapted|adapt|forked|ported|derived|vendored|copied|taken|borrowed)\b"
    r"[^.;\n]{0,40}?\bfrom\b",
    re.I,
)
_CPP_SOURCE = lazy_compile(r"\w\.(?:cu|cuh|c|cc|cpp|cxx|h|hh|hpp|hxx|inl)\b(?![./\w])")
_REPOSITORY = lazy_compile(
    r"https?://(?:www\.)?(?:github|gitlab)\.com/([\w.-]+)/([\w.-]+?)(?:\.git)?/?(?=[\s)\]>,]|$)"
)
_SGLANG_SOURCE = lazy_compile(r"sgl[-_]kernel|sgl-project|sglang", re.I)


def upstream_source(data: bytes) -> str | None:
    """The words of the file's leading comment that say its code is adapted, forked or
    vendored from another project's C/C++/CUDA source, or None."""
    text = leading_comments(data[:HEAD_BYTES])
    if not text:
        return None
    for m in _DERIVED.finditer(text):
        # (the sentence: up to a full stop or a blank line)
        paragraph = re.split(r"\.\s|\n[ \t]*\n", text[m.end() : m.end() + 240], maxsplit=1)[0]
        named = _CPP_SOURCE.search(paragraph) or _REPOSITORY.search(paragraph)
        if named is None or _SGLANG_SOURCE.search(paragraph[: named.end()]):
            continue
        return " ".join((m.group() + paragraph[: named.end()]).split())
    return None


_QUOTED_INCLUDE = lazy_compile(rb'^[ \t]*#[ \t]*include[ \t]*"([^"/\\\n]+)"', re.M)
_CPP_NAMES = (".cu", ".cuh", ".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".inl")
_UPSTREAM_INCLUDES: dict[str, frozenset[str]] = {}


def included_by_upstream(abspath: str) -> bool:
    """Does a file of the same directory whose leading comment names another project's source
    (`upstream_source`) include this one by its bare name (`#include "dequant.h"`)? Such a file
    is part of the vendored code even when it carries no marker of its own. The directory's
    files are read once per run (their first bytes)."""
    directory, name = os.path.split(os.path.abspath(abspath))
    found = _UPSTREAM_INCLUDES.get(directory)
    if found is None:
        names: set[str] = set()
        try:
            entries = sorted(os.listdir(directory))
        except OSError:
            entries = []
        for entry in entries:
            if not entry.endswith(_CPP_NAMES):
                continue
            try:
                with open(os.path.join(directory, entry), "rb") as fh:
                    data = fh.read(HEAD_BYTES)
                    if upstream_source(data) is None:
                        continue
                    data += fh.read(1 << 20)
            except OSError:
                continue
            if b"#" in data:
                names.update(
                    m.group(1).decode("utf-8", "replace") for m in _QUOTED_INCLUDE.finditer(data)
                )
        found = _UPSTREAM_INCLUDES[directory] = frozenset(names)
    return name in found


def reset() -> None:
    """Forget the memoized headers (tests; a long-lived process between runs)."""
    _HEADER_OF_DIR.clear()
    _HEADER_IN_FORCE.clear()
    _UPSTREAM_INCLUDES.clear()
