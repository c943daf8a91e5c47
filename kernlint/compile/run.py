"""The compile pass itself: what to build, building it, and placing each kernel's figures."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

from . import _PLACED, STATS, Placed, budget_of, place
from .model import Usage
from .ptxas import ptxas_report, source_name


class KernelDef:
    """A `__global__` function definition in a checked file."""

    def __init__(self, path, start, end, def_start, name, is_template) -> None:
        self.path, self.start, self.end = path, start, end
        self.def_start, self.name, self.is_template = def_start, name, is_template


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def _name_node(func):
    d = func.child_by_field_name("declarator")
    while d is not None and d.type not in (
        "identifier",
        "qualified_identifier",
        "field_identifier",
    ):
        nxt = d.child_by_field_name("declarator")
        if nxt is None:
            break
        d = nxt
    if d is not None and d.type == "qualified_identifier":
        name = d.child_by_field_name("name")
        while name is not None and name.type == "qualified_identifier":
            name = name.child_by_field_name("name")
        d = name
    if d is not None and d.type == "template_function":
        d = d.child_by_field_name("name")
    return d if d is not None and d.type in ("identifier", "field_identifier") else None


def kernel_defs(path: str, data: bytes, settings) -> list[KernelDef]:
    from ..engine import Context
    from ..source import SourceFile

    ctx = Context(SourceFile(path, data, "cpp", abspath=path), settings, True)
    if ctx.tree is None:
        return []
    out = []
    for kernel in ctx.facts.kernels:
        node = _name_node(kernel.node)
        if node is None:
            continue
        parent = kernel.node.parent
        is_template = parent is not None and parent.type == "template_declaration"
        def_start = parent.start_byte if is_template else kernel.node.start_byte
        out.append(
            KernelDef(path, node.start_byte, node.end_byte, def_start, kernel.name, is_template)
        )
    return out


def _include_flags(path: str, settings, nvcc: str) -> list[str]:
    from ..semantic import _dependency_includes, _package_includes, _tree_includes
    from .toolchain import nvcc_includes

    directory = os.path.dirname(path)
    dirs = [
        *_tree_includes(directory),
        *getattr(settings, "include_paths", []),
        *_package_includes(),
        *_dependency_includes(),
        *nvcc_includes(nvcc),
    ]
    flags = [f"-I{d}" for d in dict.fromkeys(dirs)]
    flags += [f"-D{d}" for d in getattr(settings, "defines", [])]
    return flags


def run_pass(chosen, resolver, *, cache_dir=None, compile_from=None, jobs=None) -> list[str]:
    """Build, measure and place; returns the notes for the user (one line each)."""
    from .cuda import Build, CompileCache, run_build, toolchain_id
    from .instances import configured, load_jit_instances
    from .toolchain import find_tool, missing_message

    notes: list[str] = []
    defs: dict[str, list[KernelDef]] = {}
    by_file: dict[str, list[KernelDef]] = {}
    settings_of: dict[str, object] = {}
    datas: dict[str, bytes] = {}
    for cand, settings in chosen:
        if cand.language != "cpp":
            continue
        data = _read(cand.abspath)
        if data is None or b"__global__" not in data:
            continue
        found = kernel_defs(cand.abspath, data, settings)
        if not found:
            continue
        datas[cand.abspath] = data
        settings_of[cand.abspath] = settings
        by_file[cand.abspath] = found
        for k in found:
            defs.setdefault(k.name, []).append(k)

    builds: list[Build] = []
    unresolved_calls = 0
    covered: set[str] = set()
    for path in by_file:
        settings = settings_of[path]
        symbols = [e for e in configured(settings, path) if isinstance(e, str)]
        if symbols:
            for arch in settings.compile_archs:
                label = ", ".join(symbols)
                builds.append(Build([path], symbols, arch, [], label, "config", [path]))
            covered.add(path)
    for cand, settings in chosen:
        if cand.language != "python":
            continue
        data = _read(cand.abspath)
        if data is None:
            continue
        found, unresolved = load_jit_instances(cand.abspath, data, settings)
        unresolved_calls += unresolved
        for inst in found:
            for arch in settings.compile_archs:
                label = ", ".join(inst.symbols)
                builds.append(
                    Build(inst.files, inst.symbols, arch, inst.flags, label, "load_jit", inst.files)
                )
            covered.update(inst.files)
    for path, kernels in by_file.items():
        # (a file that is no JIT source is built by a build system kernlint does not know)
        if path in covered or not any(not k.is_template for k in kernels):
            continue
        if not settings_of[path].is_jit(path):
            continue
        for arch in settings_of[path].compile_archs:
            builds.append(Build([path], [], arch, [], os.path.basename(path), "plain", [path]))

    nvcc = find_tool("nvcc") if builds else None
    if builds and nvcc is None:
        notes.append(f"compile: {missing_message('nvcc')}; {len(builds)} builds not run")
        builds = []
    results = []
    cache = CompileCache(cache_dir)  # (the CUDA and the Triton builds')
    if builds:
        tool_id = toolchain_id(nvcc)
        notes.append(f"compile: {_nvcc_version(nvcc)} ({nvcc})")
        for b in builds:
            settings = settings_of.get(b.files[0]) or resolver.for_file(b.files[0])
            b.flags = _include_flags(b.files[0], settings, nvcc) + b.flags
        workers = jobs or (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 2)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(lambda b: run_build(b, nvcc, cache, tool_id), builds))

    cached = failed = measured = 0
    unplaced: set[str] = set()
    nodef: set[str] = set()
    from .toolchain import demangle

    readable = demangle(
        sorted({row[0] for r in results if r[0] is not None for row in ptxas_report(r[0])})
    )
    for build, (report, deps, error, hit) in zip(builds, results, strict=True):
        if error is not None:
            failed += 1
            shown = os.path.relpath(build.files[0]) if build.files else "?"
            notes.append(
                f"compile: {shown}: `{build.label}` did not build for {build.arch}: {error}"
            )
            continue
        cached += hit
        read = {os.path.realpath(d) for d in deps} | {os.path.realpath(f) for f in build.files}
        for symbol, arch, regs, stack, stores, loads in ptxas_report(report):
            name = source_name(symbol)
            usage = Usage(
                symbol=symbol,
                name=name or symbol,
                arch=arch,
                registers=regs,
                spill_stores=stores,
                spill_loads=loads,
                local_bytes=stack,
                instantiation=instance_name(readable.get(symbol, symbol)),
                source=build.source,
            )
            targets = [k for k in defs.get(name or "", []) if os.path.realpath(k.path) in read]
            if not targets:
                nodef.add(symbol)  # (e.g. a definition whose parameter list is a macro)
                continue
            if len({k.path for k in targets}) != 1:
                unplaced.add(symbol)  # (defined in two checked files the build read)
                continue
            # One file (definitions under `#if`/`#else`): the first definition stands for it.
            measured += 1
            _add(targets[0], usage, datas, settings_of)

    if compile_from is not None:
        notes += _from_build_dir(compile_from, defs, datas, settings_of)

    triton_notes, triton_measured, triton_skipped = _triton(chosen, settings_of, datas, cache)
    notes += triton_notes

    templates = sum(
        1 for path, ks in by_file.items() if path not in covered for k in ks if k.is_template
    )
    parts = []
    if builds:
        kinds = {}
        for b in builds:
            kinds[b.source] = kinds.get(b.source, 0) + 1
        of = ", ".join(f"{n} {_SOURCE_NAMES[k]}" for k, n in sorted(kinds.items()))
        parts.append(f"{len(builds)} builds ({of}; {cached} from the cache, {failed} failed)")
    parts.append(f"{measured} kernel measurements placed")
    if triton_measured or triton_skipped:
        parts.append(
            f"{triton_measured} Triton builds measured, {triton_skipped} Triton kernels not "
            "compiled (no signature: give one in `compile-instantiate`)"
        )
    if templates:
        parts.append(
            f"{templates} kernel templates not instantiated (no `compile-instantiate` entry, no "
            "`load_jit` call with literal template arguments)"
        )
    if unresolved_calls:
        parts.append(
            f"{unresolved_calls} `load_jit` calls with template arguments known only at run time"
        )
    if unplaced:
        parts.append(f"{len(unplaced)} kernels defined in more than one checked file, not placed")
    if nodef:
        parts.append(
            f"{len(nodef)} kernels built whose definition kernlint does not see (not placed)"
        )
    unjudged = sum(1 for p in _PLACED.values() if p.budget is None and p.usages)
    if unjudged:
        parts.append(
            f"{unjudged} kernels with launch bounds kernlint cannot read: registers not judged"
        )
    notes.append("compile: " + "; ".join(parts))
    STATS.update(
        builds={k: sum(b.source == k for b in builds) for k in _SOURCE_NAMES},
        failed={
            k: sum(b.source == k and r[2] is not None for b, r in zip(builds, results, strict=True))
            for k in _SOURCE_NAMES
        },
        cached=cached,
        templates_not_instantiated=templates,
        unresolved_load_jit=unresolved_calls,
        unplaced=len(unplaced),
        no_definition=len(nodef),
        triton_measured=triton_measured,
        triton_skipped=triton_skipped,
    )
    return notes


_SOURCE_NAMES = {
    "config": "from compile-instantiate",
    "load_jit": "from load_jit calls",
    "plain": "of files as they are",
}


def instance_name(demangled: str) -> str:
    """`void sglang::pairwise_kernel<96>(float *, const float *)` -> `pairwise_kernel<96>`;
    empty for a kernel that is no template (its name says it all) or a symbol not demangled."""
    text = demangled.strip()
    if text.startswith("_Z") or "<" not in text:
        return ""
    depth = 0
    for i, ch in enumerate(text):
        if ch in "<(":
            if ch == "(" and depth == 0:
                text = text[:i]
                break
            depth += 1
        elif ch in ">)":
            depth -= 1
    # the return type: everything before the last top-level space outside template arguments
    depth, cut = 0, 0
    for i, ch in enumerate(text):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == " " and depth == 0:
            cut = i + 1
    text = text[cut:]
    if text.startswith("sglang::"):
        text = text[len("sglang::") :]
    return text


def _add(kernel: KernelDef, usage: Usage, datas, settings_of) -> None:
    key = (kernel.path, kernel.start)
    placed = _PLACED.get(key)
    if placed is None:
        data = datas[kernel.path]
        budget, where = budget_of(
            settings_of[kernel.path], kernel.path, data, kernel.def_start, kernel.start
        )
        placed = _PLACED[key] = Placed(kernel.start, kernel.end, kernel.name, budget, where)
        place(kernel.path, placed)
    if usage not in placed.usages:
        placed.usages.append(usage)


def _from_build_dir(build_dir, defs, datas, settings_of) -> list[str]:
    from .build_dir import usages
    from .toolchain import find_tool, missing_message

    cuobjdump = find_tool("cuobjdump")
    if cuobjdump is None:
        return [f"compile: {missing_message('cuobjdump')}; `--compile-from` not read"]
    found, notes = usages(build_dir, cuobjdump)
    placed = ambiguous = elsewhere = 0
    for usage in found:
        targets = defs.get(usage.name, [])
        if len(targets) == 1:
            placed += 1
            _add(targets[0], usage, datas, settings_of)
        elif targets:
            ambiguous += 1
        else:
            elsewhere += 1
    summary = f"compile: {build_dir}: {len(found)} kernels read, {placed} placed"
    if ambiguous:
        summary += f", {ambiguous} named by more than one checked definition (not placed)"
    if elsewhere:
        summary += f", {elsewhere} defined in no checked file"
    return [*notes, summary]


def _triton(chosen, settings_of, datas, cache) -> tuple[list[str], int, int]:
    """Triton kernels of the run's Python files (kernlint.compile.triton): (notes, builds
    measured, kernels not compiled for want of a signature). A kernel's builds depend only on
    its file's bytes (what the child loads), the builds and the arch, and Triton's version:
    that is their cache key, the file their one dependency."""
    todo = []
    for cand, settings in chosen:
        if cand.language != "python":
            continue
        data = _read(cand.abspath)
        if data is None or b"triton" not in data or b"jit" not in data:
            continue
        todo.append((cand, settings, data))
    if not todo:
        return [], 0, 0
    from . import triton as tr
    from .instances import configured

    if tr.triton_available() is not None:
        return [f"compile: {tr.triton_available()}"], 0, 0
    notes = []
    measured = skipped = 0
    for cand, settings, data in todo:
        kernels = [k for k in tr.find_kernels(cand.abspath, data) if not k.helper]
        if not kernels:
            continue
        shown = os.path.relpath(cand.abspath)
        entries = [e for e in configured(settings, cand.abspath) if isinstance(e, dict)]
        for kernel in kernels:
            mine = [e for e in entries if e.get("kernel") == kernel.name]
            plan = tr.instantiations(kernel, mine)
            if isinstance(plan, str):
                if mine:
                    notes.append(f"compile: {shown}: {plan}")
                skipped += 1
                continue
            datas[cand.abspath] = data
            settings_of[cand.abspath] = settings
            kdef = KernelDef(
                cand.abspath, kernel.start, kernel.end, kernel.start, kernel.name, False
            )
            for arch in settings.compile_archs:
                for got in _triton_builds(tr, cache, cand.abspath, data, kernel, plan, arch):
                    if isinstance(got, str):
                        notes.append(f"compile: {shown}: {got}")
                        continue
                    for usage in got:
                        measured += 1
                        _add(kdef, usage, datas, settings_of)
    return notes, measured, skipped


def _triton_builds(tr, cache, path, data, kernel, plan, arch) -> list:
    import hashlib
    import json

    h = hashlib.sha256()
    for part in ("triton:1", _triton_version(), path, kernel.name, arch, repr(plan)):
        h.update(part.encode("utf-8", "surrogateescape") + b"\0")
    h.update(data)
    key = h.hexdigest()
    found = cache.lookup(key)
    if found is not None:
        try:
            rows = json.loads(found[0])
            return [r if isinstance(r, str) else [Usage(**u) for u in r] for r in rows]
        except (ValueError, TypeError):
            pass
    got = tr.compile_builds(path, data, kernel, plan, arch)
    rows = [g if isinstance(g, str) else [_usage_dict(u) for u in g] for g in got]
    if not any(isinstance(g, str) and "took over" in g for g in got):  # (a timeout: retry later)
        cache.store(key, json.dumps(rows), [path], "")
    return got


def _usage_dict(u: Usage) -> dict:
    return {
        k: getattr(u, k)
        for k in (
            "symbol",
            "name",
            "arch",
            "registers",
            "spill_stores",
            "spill_loads",
            "local_bytes",
            "instantiation",
            "source",
            "threads",
        )
    }


_TRITON_VERSION: list[str] = []


def _triton_version() -> str:
    if not _TRITON_VERSION:
        try:
            from importlib.metadata import version

            _TRITON_VERSION.append(version("triton"))
        except Exception:  # (a missing or broken install: builds fail and say so)
            _TRITON_VERSION.append("?")
    return _TRITON_VERSION[0]


def _nvcc_version(nvcc: str) -> str:
    """`nvcc 13.0.88`, from `nvcc --version` (which nvcc built the figures)."""
    import re
    import subprocess

    try:
        out = subprocess.run(
            [nvcc, "--version"], capture_output=True, text=True, timeout=30, errors="replace"
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return "nvcc"
    m = re.search(r"V(\d+\.\d+\.\d+)", out) or re.search(r"release (\d+\.\d+)", out)
    return f"nvcc {m.group(1)}" if m else "nvcc"
