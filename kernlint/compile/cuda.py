"""Building CUDA translation units with nvcc and reading ptxas's report, with a result cache.

Each build is one generated translation unit: the C++ files `#include`d, then one reference
per instantiated symbol inside `namespace sglang` (taking a symbol's address instantiates it and
every kernel it launches), compiled with `nvcc -cubin -Xptxas -v` for one architecture, with
the flags SGLang's JIT build uses (`-std=c++20 -O3 --expt-relaxed-constexpr
-DSGL_CUDA_ARCH=<NNN>`), the include paths the semantic mode finds, the config's `defines`
and `include-paths`, and the call's literal `extra_cuda_cflags`.

Cache: an entry per build key (the translation unit's text, the flags, the architecture and
the nvcc binary's path, size and modification time) holds ptxas's report and the files the
build read (nvcc's `-MD` list) with their size, modification time and content hash. An entry
is used when every such file still has the same bytes (size and time equal, or else the same
hash): a second run over an unchanged tree compiles nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile

TIMEOUT = 300  # seconds per build
BASE_FLAGS = ["-std=c++20", "-O3", "--expt-relaxed-constexpr"]
CACHE_FORMAT = 1


class Build:
    """One translation unit to compile for one architecture."""

    def __init__(self, includes, symbols, arch, flags, label, source, files):
        self.includes = list(includes)  # absolute paths of the C++ files, in order
        self.symbols = list(symbols)  # instantiated symbols (empty: the files as they are)
        self.arch = arch  # "sm_90", "sm_90a", ...
        self.flags = list(flags)  # the build's own flags (defines, include dirs, extra flags)
        self.label = label  # what the findings name as the instantiation
        self.source = source  # "config", "load_jit", "plain"
        self.files = list(files)  # the checked files it is built for

    def text(self) -> str:
        lines = [f'#include "{path}"' for path in self.includes]
        if self.symbols:
            lines.append("namespace sglang {")
            for i, sym in enumerate(self.symbols):
                ref = sym.strip().lstrip("&").strip()
                lines.append(f"[[maybe_unused]] static auto kl_instance_{i} = &{ref};")
            lines.append("}  // namespace sglang")
        return "\n".join(lines) + "\n"

    def command(self, nvcc: str, tu: str, out: str, deps: str) -> list[str]:
        digits = re.sub(r"\D", "", self.arch)
        sgl_arch = int(digits) * 10 if digits else 900
        target = self.arch[3:]
        return [
            nvcc,
            *BASE_FLAGS,
            f"-DSGL_CUDA_ARCH={sgl_arch}",
            "-cubin",
            f"-gencode=arch=compute_{target},code=sm_{target}",
            "-Xptxas",
            "-v",
            *self.flags,
            "-MD",
            "-MF",
            deps,
            tu,
            "-o",
            out,
        ]

    def key(self, toolchain_id: str) -> str:
        h = hashlib.sha256()
        for part in (str(CACHE_FORMAT), toolchain_id, self.arch, self.text(), *self.flags):
            h.update(part.encode("utf-8", "surrogateescape") + b"\0")
        return h.hexdigest()


def toolchain_id(nvcc: str) -> str:
    try:
        st = os.stat(nvcc)
    except OSError:
        return nvcc
    return f"{os.path.realpath(nvcc)}:{st.st_size}:{st.st_mtime_ns}"


def _file_hash(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return None


def _parse_deps(text: str) -> list[str]:
    body = text.replace("\\\n", " ")
    _, _, rest = body.partition(":")
    out = []
    for token in re.split(r"(?<!\\)\s+", rest.strip()):
        if token:
            out.append(token.replace("\\ ", " "))
    return out


class CompileCache:
    """Build results by key, each checked against the bytes of the files the build read."""

    def __init__(self, directory: str | None) -> None:
        self.directory = os.path.join(directory, "compile") if directory else None

    def _path(self, key: str) -> str | None:
        return os.path.join(self.directory, key[:2], key + ".json") if self.directory else None

    def lookup(self, key: str) -> tuple[str, list[str]] | None:
        path = self._path(key)
        if path is None:
            return None
        try:
            with open(path, encoding="utf-8") as fh:
                entry = json.load(fh)
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or entry.get("format") != CACHE_FORMAT:
            return None
        deps = entry.get("deps")
        report = entry.get("report")
        if not isinstance(deps, list) or not isinstance(report, str):
            return None
        for dep in deps:
            if not (isinstance(dep, list) and len(dep) == 4):
                return None
            dep_path, size, mtime, digest = dep
            try:
                st = os.stat(dep_path)
            except (OSError, TypeError, ValueError):
                return None
            if st.st_size == size and st.st_mtime_ns == mtime:
                continue
            if st.st_size != size or _file_hash(dep_path) != digest:
                return None
        return report, [d[0] for d in deps]

    def store(self, key: str, report: str, deps: list[str], tu: str) -> None:
        path = self._path(key)
        if path is None:
            return
        rows = []
        for dep in deps:
            if dep == tu:
                continue  # (the generated unit: its text is in the key)
            try:
                st = os.stat(dep)
            except OSError:
                return  # (a file gone already: nothing worth keeping)
            digest = _file_hash(dep)
            if digest is None:
                return
            rows.append([dep, st.st_size, st.st_mtime_ns, digest])
        entry = {"format": CACHE_FORMAT, "report": report, "deps": rows}
        try:
            if not os.path.isdir(self.directory):
                from ..cache import _write_gitignore

                os.makedirs(self.directory, exist_ok=True)
                _write_gitignore(os.path.dirname(self.directory))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(entry, fh)
            os.replace(tmp, path)
        except OSError:
            pass


def run_build(build: Build, nvcc: str, cache: CompileCache, tool_id: str):
    """(ptxas report, the files the build read, None, from the cache), or (None, [], the first
    error line, False)."""
    key = build.key(tool_id)
    found = cache.lookup(key)
    if found is not None:
        return found[0], found[1], None, True
    work = tempfile.mkdtemp(prefix="kernlint-compile-")
    try:
        tu = os.path.join(work, "unit.cu")
        with open(tu, "w", encoding="utf-8") as fh:
            fh.write(build.text())
        out = os.path.join(work, "unit.cubin")
        deps = os.path.join(work, "unit.d")
        cmd = build.command(nvcc, tu, out, deps)
        try:
            proc = subprocess.run(
                cmd, capture_output=True, text=True, timeout=TIMEOUT, cwd=work, errors="replace"
            )
        except subprocess.TimeoutExpired:
            return None, [], f"nvcc took longer than {TIMEOUT} s", False
        except OSError as exc:
            return None, [], f"cannot run nvcc: {exc.strerror or exc}", False
        report = proc.stdout + proc.stderr
        if proc.returncode != 0:
            return None, [], _first_error(report), False
        try:
            with open(deps, encoding="utf-8", errors="surrogateescape") as fh:
                dep_list = _parse_deps(fh.read())
        except OSError:
            dep_list = []
        cache.store(key, report, dep_list, tu)
        return report, [d for d in dep_list if d != tu], None, False
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _first_error(report: str) -> str:
    for line in report.splitlines():
        if " error" in line or line.startswith("error"):
            text = re.sub(r"^\S*unit\.cu\(\d+\): ", "", line.strip())
            return text[:300]
    lines = [ln for ln in report.splitlines() if ln.strip()]
    return lines[-1][:300] if lines else "nvcc failed"
