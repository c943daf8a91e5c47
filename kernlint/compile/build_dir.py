"""Registers and local memory of kernels in binaries a build already made (`--compile-from`).

`cuobjdump -res-usage` prints, for each compiled (SASS) image in a file, a block such as

    Fatbin elf code:
    ================
    arch = sm_90
    ...
    Resource usage:
     Common:
      GLOBAL:0
     Function _Z5heavyIfLi32EEvPT_PKS0_i:
      REG:255 STACK:32 SHARED:0 LOCAL:0 CONSTANT[0]:548 TEXTURE:0 SURFACE:0 SAMPLER:0

(a bare `.cubin` has no `arch =` header: its architecture comes from `cuobjdump -lelf`, which
names its image `<stem>.sm_90a.cubin`, or else from the ELF header). Kernels are the functions
with a `CONSTANT[0]` bank (their parameters); non-inlined device functions of a relocatable
build are listed without one and are left out.

cuobjdump does not report spills: `STACK` is the stack frame (spilled registers and local arrays
alike) and `LOCAL` any other local memory. A `Usage` from a binary has `spill_stores` and
`spill_loads` 0 and `local_bytes` = STACK + LOCAL, so `register-spill` on a binary is judged by
its local memory.

A relocatable object (`nvcc -rdc=true -c`) shows figures from before device linking: its STACK
is 0 even for a kernel with a local array; the library linked from it has the final figures.
"""

from __future__ import annotations

import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor

from ..lazyre import lazy_compile
from .model import Usage
from .ptxas import source_name
from .toolchain import demangle

# Files a build leaves that can hold device code, by name: cubins, fatbins, shared objects
# (`.so` and versioned `.so.1.2`), objects and static archives (cuobjdump reads each member).
_BINARY = lazy_compile(r".*\.(cubin|fatbin|o|a|so)(\.\d+)*")
_ELF = b"\x7fELF"
_FATBIN = b"\x50\xed\x55\xba"
_ARCHIVE = b"!<arch>\n"
_EM_CUDA = 190
_NO_DEVICE_CODE = "no device code"

_HEADER = lazy_compile(r"^Fatbin (elf|ptx) code:")
_ARCH = lazy_compile(r"^arch = (sm_\w+)")
_FUNCTION = lazy_compile(r"^\s*Function (\S+):\s*$")
_FIELD = lazy_compile(r"([A-Z]+(?:\[\d+\])?):(\d+)")
_LELF = lazy_compile(r"\.(sm_\w+)\.cubin\s*$")


_NV_STATIC = lazy_compile(r"__nv_static_(\d+)__")


def mangled_name(symbol: str) -> str:
    """The C++ mangled name in a kernel symbol: a file-local (`static`, anonymous namespace)
    kernel of a relocatable build is named `__nv_static_<n>__<n characters of module id>` +
    the mangled name (`__nv_static_26__ddd6ef6d_5_st_cu_4536d6f1__Z2skPi` -> `_Z2skPi`)."""
    m = _NV_STATIC.match(symbol)
    if m:
        rest = symbol[m.end() + int(m.group(1)) :]
        if rest.startswith("_Z"):
            return rest
    return symbol


def binaries(build_dir: str) -> list[str]:
    """Paths of the files under `build_dir` that may hold device code (`*.cubin`, `*.fatbin`,
    `*.so`, `*.so.N`, `*.o`, `*.a`), walked recursively without following symlinks (a linked
    file or folder is skipped), sorted."""
    found = []
    for root, dirs, files in os.walk(build_dir, followlinks=False):
        dirs.sort()
        for name in files:
            path = os.path.join(root, name)
            if _BINARY.fullmatch(name) and not os.path.islink(path):
                found.append(path)
    return sorted(found)


def parse_res_usage(text: str) -> list[tuple[str | None, str, dict[str, int]]]:
    """(arch, mangled symbol, fields) for each kernel in `cuobjdump -res-usage` output, in
    order; fields maps REG, STACK, SHARED, LOCAL, CONSTANT[0], ... to numbers. arch is None
    where the output has no `arch =` header (a bare cubin). PTX images and functions without
    a `CONSTANT[0]` bank (device functions) are left out."""
    out: list[tuple[str | None, str, dict[str, int]]] = []
    arch: str | None = None
    elf = True
    symbol: str | None = None
    for line in text.splitlines():
        m = _HEADER.match(line)
        if m:
            elf = m.group(1) == "elf"
            arch = None
            symbol = None
            continue
        m = _ARCH.match(line)
        if m:
            arch = m.group(1)
            continue
        if line.startswith("member "):  # (an archive's next member)
            arch, symbol = None, None
            continue
        m = _FUNCTION.match(line)
        if m:
            symbol = m.group(1) if elf else None
            continue
        if symbol is not None and "REG:" in line:
            fields = {k: int(v) for k, v in _FIELD.findall(line)}
            if "CONSTANT[0]" in fields and "$" not in symbol:
                out.append((arch, symbol, fields))
            symbol = None
    return out


def _magic(path: str) -> tuple[bytes, str | None]:
    """(the file's first bytes, a reason when it cannot hold device code)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(64)
    except OSError as exc:
        return b"", f"unreadable ({exc.strerror or exc})"
    if not head:
        return head, "empty file"
    if head.startswith(_ELF):
        if len(head) < 64:
            return head, "corrupt ELF file (truncated header)"
        if not _elf_may_hold_device_code(path, head):
            return head, _NO_DEVICE_CODE
        return head, None
    if head.startswith((_FATBIN, _ARCHIVE)):
        return head, None
    return head, "not an ELF file, fatbin or archive"


def _elf_may_hold_device_code(path: str, head: bytes) -> bool:
    """False only for a well-formed 64-bit host ELF file none of whose sections is a fatbin
    (`.nv_fatbin`, `__nv_relfatbin`, `.nvFatBinSegment`): those need no cuobjdump run. Anything
    this cannot read is left to cuobjdump."""
    if head[4] != 2 or head[5] != 1:  # (not ELF64 little-endian: let cuobjdump say)
        return True
    machine = int.from_bytes(head[18:20], "little")
    if machine == _EM_CUDA:
        return True
    shoff = int.from_bytes(head[40:48], "little")
    shentsize = int.from_bytes(head[58:60], "little")
    shnum = int.from_bytes(head[60:62], "little")
    shstrndx = int.from_bytes(head[62:64], "little")
    if not shoff or shentsize < 64 or not shnum or shstrndx >= shnum:
        return True
    try:
        with open(path, "rb") as fh:
            fh.seek(shoff)
            table = fh.read(shentsize * shnum)
            if len(table) < shentsize * shnum:
                return True
            entry = table[shstrndx * shentsize : (shstrndx + 1) * shentsize]
            fh.seek(int.from_bytes(entry[24:32], "little"))
            names = fh.read(min(int.from_bytes(entry[32:40], "little"), 1 << 20))
    except OSError:
        return True
    return b"fatbin" in names.lower()


def _is_device_image(head: bytes) -> bool:
    """A cubin (a CUDA ELF file) or a fatbin: files that are device code through and through."""
    if head.startswith(_FATBIN):
        return True
    return head.startswith(_ELF) and int.from_bytes(head[18:20], "little") == _EM_CUDA


def _elf_arch(head: bytes) -> str | None:
    """sm_XX from a cubin's ELF header (without a family or `a` suffix, which it lacks)."""
    if len(head) < 52 or int.from_bytes(head[18:20], "little") != _EM_CUDA:
        return None
    flags = int.from_bytes(head[48:52], "little")
    sm = (flags >> 8) & 0xFF if head[7] == 0x41 else flags & 0xFF  # (ABI 8 vs the older one)
    return f"sm_{sm}" if sm else None


def _run(cmd: list[str], timeout: float) -> tuple[int, str, str]:
    proc = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    return proc.returncode, proc.stdout, proc.stderr


def _reason(stderr: str, path: str, rc: int) -> str:
    msgs = []
    for line in stderr.splitlines():
        m = re.match(r"\s*cuobjdump (?:fatal|error|info|warning)\s*:\s*(.*)", line)
        if m:
            msgs.append(m.group(1).strip())
    text = "; ".join(msgs) or (stderr.strip().splitlines() or [f"exit status {rc}"])[-1]
    if "does not contain device code" in text:
        return _NO_DEVICE_CODE
    text = text.replace(f"'{path}'", "it").replace(path, "it")
    return f"cuobjdump: {text}"


def _scan(
    cuobjdump: str, path: str, timeout: float
) -> dict[tuple[str, str], tuple[int, int]] | str:
    """{(symbol, arch): (registers, local bytes)} of a file's kernels, or why it has none."""
    head, why = _magic(path)
    if why:
        return why
    try:
        rc, out, err = _run([cuobjdump, "-res-usage", path], timeout)
    except subprocess.TimeoutExpired:
        return f"cuobjdump timed out after {timeout:g} s"
    except OSError as exc:
        return f"cannot run cuobjdump ({exc.strerror or exc})"
    rows = parse_res_usage(out)
    if not rows:
        if rc != 0:
            why = _reason(err, path, rc)
            if why == _NO_DEVICE_CODE and _is_device_image(head):
                return "corrupt (cuobjdump finds no device code in this CUDA image)"
            return why
        if "Fatbin ptx code" in out and "Fatbin elf code" not in out:
            return "only PTX (no compiled code: registers are fixed when the driver compiles it)"
        return "no kernels in its device code"
    arch_default = None
    if any(arch is None for arch, _, _ in rows):
        arch_default = _cubin_arch(cuobjdump, path, head, timeout)
    best: dict[tuple[str, str], tuple[int, int]] = {}
    for arch, symbol, fields in rows:
        key = (symbol, arch or arch_default or "sm_unknown")
        figures = (fields.get("REG", 0), fields.get("STACK", 0) + fields.get("LOCAL", 0))
        if key not in best or figures > best[key]:
            best[key] = figures
    return best


def _cubin_arch(cuobjdump: str, path: str, head: bytes, timeout: float) -> str | None:
    try:
        rc, out, _ = _run([cuobjdump, "-lelf", path], timeout)
    except (OSError, subprocess.SubprocessError):
        rc, out = 1, ""
    archs = {m.group(1) for line in out.splitlines() if (m := _LELF.search(line))}
    if rc == 0 and len(archs) == 1:
        return archs.pop()
    return _elf_arch(head)


def _demangle(symbols) -> dict[str, str]:
    """{symbol: readable name} through `toolchain.demangle`, one process for all."""
    plain = {s: mangled_name(s) for s in symbols}
    names = demangle(sorted(set(plain.values())))
    return {s: names.get(m, m) for s, m in plain.items()}


def _usage(symbol: str, arch: str, figures: tuple[int, int], readable: str, rel: str) -> Usage:
    if readable.startswith("void "):  # (every kernel returns void)
        readable = readable[5:]
    return Usage(
        symbol=symbol,
        name=source_name(mangled_name(symbol)) or symbol,
        arch=arch,
        registers=figures[0],
        local_bytes=figures[1],
        instantiation=f"{readable} in {rel}",
        source="build",
    )


def res_usage(
    cuobjdump: str, path: str, build_dir: str | None = None, timeout: float = 120.0
) -> list[Usage] | str:
    """The kernels `cuobjdump -res-usage PATH` lists: one `Usage` per (kernel, arch), or a
    one-line reason the file gave none ("no device code", only PTX, corrupt, not a binary,
    cuobjdump failed or timed out). Never raises for a bad file.

    symbol is the kernel's symbol, name the `source_name` of its `mangled_name`, registers REG, local_bytes STACK +
    LOCAL (spill_stores/spill_loads 0: cuobjdump does not report spills), source "build",
    instantiation the demangled name (`toolchain.demangle`, a leading `void ` dropped) and
    `in <path relative to build_dir>`. A kernel listed twice for one arch (an archive's
    members, a `.so`'s images) is kept once, with its largest figures."""
    found = _scan(cuobjdump, path, timeout)
    if isinstance(found, str):
        return found
    names = _demangle({s for s, _ in found})
    rel = os.path.relpath(path, build_dir) if build_dir else path
    return [_usage(s, a, fig, names[s], rel) for (s, a), fig in found.items()]


def usages(
    build_dir: str, cuobjdump: str, jobs: int | None = None, timeout: float = 120.0
) -> tuple[list[Usage], list[str]]:
    """Every kernel of every binary under build_dir (`binaries`), and notes: one line per
    file skipped for a reason other than having no device code, one line counting those
    (host objects and libraries are common in a build folder), one line when there were no
    binaries at all (or no such folder). Usages come in file order; names are demangled in
    one process for all. A kernel found in several files with the same figures for the same
    arch (an object and the library linked from it) is kept once, from the first file; with
    different figures (other flags, a relocatable object) each is kept. cuobjdump runs in
    `jobs` threads (default: the CPU count, at most 8)."""
    if not os.path.isdir(build_dir):
        return [], [f"{build_dir}: not a folder"]
    paths = binaries(build_dir)
    if not paths:
        return [], [f"{build_dir}: no cubin, fatbin, .so, .o or .a files"]
    jobs = max(1, min(jobs or os.cpu_count() or 1, 8, len(paths)))
    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(lambda p: _scan(cuobjdump, p, timeout), paths))
    notes = []
    host_only = 0
    rows: list[tuple[str, str, tuple[int, int], str]] = []
    seen = set()
    for path, result in zip(paths, results, strict=True):
        rel = os.path.relpath(path, build_dir)
        if isinstance(result, str):
            if result == _NO_DEVICE_CODE:
                host_only += 1
            else:
                notes.append(f"{rel}: skipped: {result}")
            continue
        for (symbol, arch), figures in result.items():
            if (symbol, arch, figures) not in seen:
                seen.add((symbol, arch, figures))
                rows.append((symbol, arch, figures, rel))
    if host_only:
        notes.append(f"{host_only} of {len(paths)} files hold no device code (skipped)")
    names = _demangle({row[0] for row in rows})
    return [_usage(s, a, fig, names[s], rel) for s, a, fig, rel in rows], notes
