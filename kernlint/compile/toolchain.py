"""Finding the CUDA tools the compile pass runs (nvcc, ptxas, cuobjdump, a demangler).

Nothing here imports a heavy package: pip's `nvidia-cuda-*` wheels are found through the
`nvidia` namespace package's search path (`importlib.util.find_spec`), never imported.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess

from ..lazyre import lazy_compile

# The pip wheels' layouts: CUDA 13 puts every component under `nvidia/cu13/`; CUDA 12 gives each
# its own folder (`nvidia/cuda_nvcc/`, `nvidia/cuda_cuobjdump/`, ...), and some keep `cu12/`.
_PIP_SUBDIRS = ("cu13", "cu12", "cuda_nvcc", "cuda_cuobjdump")
# What `pip install 'kernlint[compile]'` brings in.
PIP_PACKAGES = (
    "nvidia-cuda-nvcc",
    "nvidia-cuda-runtime",
    "nvidia-cuda-cccl",
    "nvidia-cuda-cuobjdump",
)
SYSTEM_CUDA = "/usr/local/cuda"  # (the toolkit installer's default prefix)
SEARCHED = "PATH, $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin, pip's nvidia-cuda-* packages"


def nvidia_dirs() -> list[str]:
    """The folders of the `nvidia` namespace package (where pip's CUDA wheels install)."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return []
    if spec is None:
        return []
    return [p for p in (spec.submodule_search_locations or []) if os.path.isdir(p)]


def pip_bin_dirs() -> list[str]:
    """`nvidia/<cu13|cu12|cuda_nvcc|cuda_cuobjdump>/bin` folders that exist, in that order."""
    out = []
    for base in nvidia_dirs():
        for sub in _PIP_SUBDIRS:
            path = os.path.join(base, sub, "bin")
            if os.path.isdir(path) and path not in out:
                out.append(path)
    return out


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find_tool(name: str) -> str | None:
    """The path of the CUDA tool `name` ("nvcc", "ptxas", "cuobjdump", "cu++filt"), or None.

    Searched in this order, the first executable found wins:
      1. `PATH` (what the user's shell would run);
      2. `$CUDA_HOME/bin`, then `$CUDA_PATH/bin`;
      3. `/usr/local/cuda/bin`;
      4. pip's wheels: `nvidia/cu13/bin`, `nvidia/cu12/bin`, `nvidia/cuda_nvcc/bin`,
         `nvidia/cuda_cuobjdump/bin` in the `nvidia` namespace package's folders.
    """
    found = shutil.which(name)
    if found:
        return found
    dirs = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root:
            dirs.append(os.path.join(root, "bin"))
    dirs.append(os.path.join(SYSTEM_CUDA, "bin"))
    dirs += pip_bin_dirs()
    for d in dirs:
        cand = os.path.join(d, name)
        if _executable(cand):
            return cand
    return None


def _pip_root(tool: str) -> tuple[str, str] | None:
    """(the `nvidia` folder, the component folder) of a tool a pip wheel installed."""
    bin_dir = os.path.dirname(os.path.realpath(tool))
    if os.path.basename(bin_dir) != "bin":
        return None
    root = os.path.dirname(bin_dir)
    nvidia = os.path.dirname(root)
    if os.path.basename(nvidia) != "nvidia":
        return None
    return nvidia, root


def nvcc_includes(nvcc: str) -> list[str]:
    """The include folders a pip-installed nvcc needs passed as `-I`: its root's `include/`
    (the CUDA runtime's headers, in the CUDA 13 layout) and, in the CUDA 12 layout where each
    wheel has its own folder, `nvidia/cuda_runtime/include` and `nvidia/cuda_cccl/include`.
    Only folders that exist. Empty for a system toolkit (one not inside an `nvidia` package),
    whose nvcc finds its headers itself."""
    found = _pip_root(nvcc)
    if found is None:
        return []
    nvidia, root = found
    cands = [os.path.join(root, "include")]
    cands += [os.path.join(nvidia, sub, "include") for sub in ("cuda_runtime", "cuda_cccl")]
    out = []
    for path in cands:
        if os.path.isdir(path) and path not in out:
            out.append(path)
    return out


def find_demangler() -> str | None:
    """NVIDIA's `cu++filt` (searched as `find_tool` does), else binutils' `c++filt` or
    `llvm-cxxfilt` on PATH; None when there is none."""
    return find_tool("cu++filt") or shutil.which("c++filt") or shutil.which("llvm-cxxfilt")


_SYMBOL = lazy_compile(r"[A-Za-z_.$][\w.$]*")
_ARGS_LIMIT = 100_000  # characters of symbols per demangler process (well under ARG_MAX)


def demangle(symbols: list[str], timeout: float = 30.0) -> dict[str, str]:
    """Readable names for mangled symbols: {symbol: demangled}. Runs the demangler
    (`find_demangler`) once for all of them (once per 100,000 characters of symbols), each
    symbol an argument, one output line each. A symbol maps to itself when there is no
    demangler, when it fails, or when its output does not line up. Never raises."""
    out = {s: s for s in symbols}
    todo = [s for s in dict.fromkeys(symbols) if _SYMBOL.fullmatch(s) and s.startswith("_Z")]
    if not todo:
        return out
    tool = find_demangler()
    if tool is None:
        return out
    chunks: list[list[str]] = [[]]
    size = 0
    for s in todo:
        if chunks[-1] and size + len(s) > _ARGS_LIMIT:
            chunks.append([])
            size = 0
        chunks[-1].append(s)
        size += len(s) + 1
    for chunk in chunks:
        try:
            proc = subprocess.run(
                [tool, *chunk],
                capture_output=True,
                text=True,
                errors="replace",
                timeout=timeout,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.SubprocessError):
            return out
        lines = proc.stdout.splitlines()
        if proc.returncode != 0 or len(lines) != len(chunk):
            continue
        for s, line in zip(chunk, lines, strict=True):
            line = line.strip()
            if line:
                out[s] = line
    return out


def missing_message(*tools: str) -> str:
    """One line naming the missing tools and how to install them."""
    names = ", ".join(tools) or "the CUDA toolchain"
    return (
        f"{names} not found (searched {SEARCHED}); "
        f"pip install 'kernlint[compile]' ({', '.join(PIP_PACKAGES)})"
    )


class ToolchainMissing(RuntimeError):
    """A tool the compile pass needs is not installed; str() is `missing_message`'s line."""

    def __init__(self, *tools: str) -> None:
        self.tools = tools
        super().__init__(missing_message(*tools))


def require_tool(name: str) -> str:
    """`find_tool(name)`, or ToolchainMissing."""
    path = find_tool(name)
    if path is None:
        raise ToolchainMissing(name)
    return path
