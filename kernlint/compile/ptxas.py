"""Reading what ptxas and cuobjdump say about kernels, and the source name in a mangled one."""

from __future__ import annotations

import re

from ..lazyre import lazy_compile

_ENTRY = lazy_compile(r"Compiling entry function '([^']+)' for '(sm_\w+)'")
_FRAME = lazy_compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_REGS = lazy_compile(r"Used (\d+) registers")


def ptxas_report(text: str) -> list[tuple[str, str, int, int, int, int]]:
    """(mangled entry, arch, registers, stack frame, spill stores, spill loads) for each kernel
    in the output of `nvcc -Xptxas -v` (entry functions only: device functions ptxas reports
    under "Function properties for" are inlined into them or counted as their own)."""
    out: list[list] = []
    current = None
    for line in text.splitlines():
        m = _ENTRY.search(line)
        if m:
            current = [m.group(1), m.group(2), 0, 0, 0, 0]
            out.append(current)
            continue
        if current is None:
            continue
        m = _REGS.search(line)
        if m:
            current[2] = int(m.group(1))
            current = None  # (the "Used N registers" line ends an entry's report)
            continue
        m = _FRAME.search(line)
        if m:
            current[3:6] = [int(m.group(1)), int(m.group(2)), int(m.group(3))]
    return [tuple(row) for row in out]


def source_name(symbol: str) -> str | None:
    """The unqualified name of the function a mangled (Itanium ABI) symbol names, read from
    the front of the name: `_Z6kernelPf` -> `kernel`, `_ZN6sglang10rms_kernelIfLi4EEEvPT_`
    -> `rms_kernel`, `_ZN12_GLOBAL__N_11kEv` -> `k`. A `__global__` function is never a class
    member, so the name before its first template argument list is the function's. None for a
    symbol that is not mangled that way (an `extern "C"` kernel keeps its plain name: returned
    as it is)."""
    if not symbol.startswith("_Z"):
        return symbol if re.fullmatch(r"[A-Za-z_]\w*", symbol) else None
    i = 2
    if symbol.startswith("L", i):  # (internal linkage)
        i += 1
    nested = symbol.startswith("N", i)
    if nested:
        i += 1
        while i < len(symbol) and symbol[i] in "rVK":  # (cv-qualifiers of a member)
            i += 1
    last = None
    while i < len(symbol):
        if symbol.startswith("St", i):  # (`std::`)
            i += 2
            continue
        m = re.match(r"\d+", symbol[i:])
        if not m:
            break
        n = int(m.group(0))
        i += len(m.group(0))
        last = symbol[i : i + n]
        i += n
        if not nested:
            break
        if i < len(symbol) and symbol[i] in "IE":
            break
    return last or None
