"""`kernlint check`: discover files, lint them, apply fixes, report."""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
from array import array

from .config import import_time_policy
from .discovery import discover
from .engine import FileResult, lint_file, recording_unparsed
from .fixes import applicable, apply_fixes, unified_diff
from .output.text import counted, severity_counts


def _warn(message: str) -> None:
    from .output import warn_line  # (names made printable: no surrogates, no escapes)

    warn_line(sys.stderr, f"warning: {message}")


_POOL_STATE: dict = {}
PARALLEL_THRESHOLD = 48
# From this many Python files on, the FFI wrapper scan is done by the pool (see lint_candidates).
DEFER_WRAPPER_SCAN = 200


_RULE_FACTS: dict = {}


def _rule_facts(rules, language: str) -> tuple:
    """(rules, JIT-scoped rules apply, the aiter rule is on, the FFI rule is on) for one rule
    list and language, computed once per list: most files share their settings' list. The memo
    holds the list, so its id cannot be reused by another one meanwhile."""
    key = (id(rules), language)
    found = _RULE_FACTS.get(key)
    if found is None or found[0] is not rules:
        if len(_RULE_FACTS) > 1024:  # per-file-ignores make a list per file: keep it bounded
            _RULE_FACTS.clear()
        names = {r.name for r in rules}
        jit = any(r.scope == "jit" and r.language in (language, "any") for r in rules)
        found = _RULE_FACTS[key] = (rules, jit, AITER_RULE in names, FFI_RULE in names)
    return found


def _jit_matters(rules, language) -> bool:
    return _rule_facts(rules, language)[1]


def _lint_one(cand, resolver, registry, keep_source, want_digest=True):
    settings = resolver.for_file(cand.abspath)
    rules = settings.rules_for(cand.abspath)
    is_jit = _jit_matters(rules, cand.language) and settings.is_jit(cand.abspath)
    res = lint_file(cand.abspath, cand.display, cand.language, settings, is_jit, registry, rules)
    digest = None
    if res.source is not None:
        if want_digest:
            from .cache import content_hash

            digest = content_hash(res.source.data)
        if not keep_source:
            res.source = None
    return res, digest


def _lint_chunk(job):
    chunk, want_digest, want_targets = job
    resolver, registry = _POOL_STATE["resolver"], _POOL_STATE["registry"]
    gather = _POOL_STATE.get("gather", False)
    fix_sources = _POOL_STATE.get("fix_sources", True)
    candidates = _POOL_STATE["candidates"]
    done, found, pieces, later = [], set(), {}, []
    if want_targets:
        from .project import targets_in_snippets
    if gather:
        from .aiter_graph import piece_for
    for i in chunk:
        cand = candidates[i]
        res, digest = _lint_one(cand, resolver, registry, True, want_digest)
        if res.source is not None:
            # The file was read once, for the lint: its FFI wrapper targets and its part of
            # the aiter import index come with it.
            if want_targets:
                found |= targets_in_snippets(res.source.data)
            if gather:
                path = os.path.abspath(cand.abspath)
                piece = piece_for(path, res.source.data)
                if piece is not None:
                    pieces[path] = piece
        if res.pending:  # (it needs the whole index: linted once the index is built)
            later.append(i)
            continue
        _drop_source(res, fix_sources)
        if digest is not None or res.diagnostics or res.warnings or res.notes:
            done.append((i, res, digest))
        elif res.unparsed is not None or res.generated:  # (`--statistics` counts them)
            done.append((i, res, digest))
        # else: nothing to send back (most files); the parent fills in an empty result
    if pieces:
        from .aiter_graph import pack_pieces

        pieces = pack_pieces(pieces)  # (compact: the parent keeps them to the end of the run)
    return done, found, pieces, later


def _drop_source(res, fix_sources: bool) -> None:
    """A pool run's result keeps the file's bytes only for a fix (`fix_sources`), computed on
    exactly those; the report reads the others again when it shows them (`ReportSources`)."""
    if not (fix_sources and any(d.fix is not None for d in res.diagnostics)):
        res.source = None


def _by_package(items, candidates) -> list[list[int]]:
    """The candidates numbered `items` grouped by the top-level package of the file (scripts:
    one group), in order of their first appearance."""
    from .aiter_graph import top_of

    groups: dict = {}
    for i in items:
        groups.setdefault(top_of(candidates[i].abspath), []).append(i)
    return list(groups.values())


def _build_index(group: list[int], candidates) -> None:
    """The aiter index of the package of a group's files (`_by_package`), built here."""
    from .aiter_graph import package_for

    package_for(candidates[group[0]].abspath)


def _release_index() -> None:
    from .aiter_graph import release

    release()


def _preload_cpp() -> None:
    from .cpp import normalize  # noqa: F401  (imported for the workers to inherit)
    from .cpp.parser import parser

    parser()


def _jobs() -> int:
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, n)


def lint_candidates(
    candidates, resolver, registry, cache=None, jobs=None, replay=False, fix_sources=True
):
    """Lint candidates (cached results reused); results come back in candidate order.
    `replay`: the results may come from a run record (see `_replayed`): the caller needs no
    cross-file facts after the run (it fixes nothing). `fix_sources`: a result with a fix
    from a worker keeps the bytes it was computed on (for a fix to apply to exactly those);
    False when nothing will be fixed (the report reads a file's source when it needs it)."""
    global _RECORD_RUN
    for name in ("kernlint.jitscope", "kernlint.sgl_headers", "kernlint.jit_wiring"):
        if name in sys.modules:  # (headers read by an earlier run may have changed)
            sys.modules[name].reset()
    signature = recorder = stats = None
    if cache is not None:
        stats = [_stat(c.abspath) for c in candidates]  # once: the project facts use them too
    if cache is not None and (replay or _RECORD_RUN):
        signature = _run_signature(candidates, resolver, registry)
        if signature is not None:
            if replay:
                found = _replayed(cache, signature, candidates, stats)
                if found is not None:
                    LAST_RUN[:] = ["replayed"]
                    return found
            if _RECORD_RUN:
                from .fsprobe import Recorder

                recorder = Recorder()
    _RECORD_RUN = False  # (only a process's first run: no earlier run's memo hid a question)
    LAST_RUN[:] = ["recorded" if recorder is not None else "linted"]
    return _lint_candidates(
        candidates, resolver, registry, cache, jobs, stats, recorder, signature, fix_sources
    )


# The first `lint_candidates` of a process started as the `kernlint` command keeps a run record
# (`record_runs`); LAST_RUN: how the last run went ("replayed", "recorded", "linted").
_RECORD_RUN = False
LAST_RUN: list[str] = []


def record_runs() -> None:
    """The next `lint_candidates` with a cache (this process's first) keeps a run record."""
    global _RECORD_RUN
    _RECORD_RUN = True


def _lint_candidates(
    candidates, resolver, registry, cache, jobs, stats, recorder, signature, fix_sources=True
):
    if cache is not None:
        from .cache import settings_key

    jobs = jobs or _jobs()
    parallel = jobs > 1 and len(candidates) >= PARALLEL_THRESHOLD and _can_fork()
    # Without a cache, in parallel, the FFI wrapper targets named in many Python files are
    # gathered by the workers while they lint those files (each file read once), and handed to
    # the C++ files after; with a cache they are needed first, for the C++ files' cache keys.
    # A few Python files are read here first instead: cheaper than a second pool phase.
    # Likewise the aiter import index: the workers compute each file's part of it from the
    # bytes they lint; the files whose rules need the whole index are linted after it is built.
    in_pool = (
        parallel
        and cache is None
        and sum(c.language == "python" for c in candidates) >= DEFER_WRAPPER_SCAN
    )
    deferred = in_pool and _wants_wrappers(candidates, resolver)
    results = [None] * len(candidates)
    # (without a cache, no file has a key, a stat or a stored payload: nothing is kept for each)
    keys = [None] * len(candidates) if cache is not None else _NONES
    if stats is None:
        stats = [None] * len(candidates) if cache is not None else _NONES
    unparsed = recording_unparsed()
    # The cross-file facts and the keys made of them: what they ask the file system is what a
    # run record holds (`recorder`; the cache's own file read before, no question of theirs).
    if recorder is not None:
        cache.load()
    with recorder if recorder is not None else contextlib.nullcontext():
        gather = _collect_project_facts(
            candidates, resolver, cache, wrappers=not deferred, stats=stats, aiter_in_pool=in_pool
        )
        # The candidates to lint, by number (an array: a run of 50,000 files keeps 8 bytes
        # for each, not a tuple and a number object; the workers inherit `candidates`).
        pending = array(_INDEX_TYPE)
        # (with a cache: each result as it is stored)
        payloads = [None] * len(candidates) if cache is not None else _NONES
        key_memo: dict[tuple, tuple] = {}
        for i, cand in enumerate(candidates):
            if cache is not None:
                settings = resolver.for_file(cand.abspath)
                rules = settings.rules_for(cand.abspath)
                is_jit = _jit_matters(rules, cand.language) and settings.is_jit(cand.abspath)
                project = _project_key(cand, rules, settings, is_jit, cache, stats[i])
                if unparsed:  # (entries that hold the unparsed regions: their own key)
                    project += UNPARSED_KEY
                # Most files share their settings: the key is computed once per combination (the
                # memo holds `rules`, so its id cannot be reused by another list meanwhile).
                memo_key = (id(settings), id(rules), is_jit, project)
                memo = key_memo.get(memo_key)
                if memo is None:
                    memo = key_memo[memo_key] = (
                        rules,
                        settings_key(settings, rules, is_jit, project),
                    )
                keys[i] = memo[1]
                if stats[i] is not None:
                    payload = cache.lookup_stat(cand.abspath, keys[i], stats[i])
                    if payload is not None:
                        results[i] = _from_payload(cand, payload)
                        if results[i] is not None:  # (None: an entry of the wrong shape)
                            payloads[i] = payload
                            continue
            pending.append(i)
    probes = recorder.probes if recorder is not None else None

    semantic = _plan_semantic(pending, candidates, resolver, cache)
    want_digest = cache is not None
    if parallel and len(pending) >= PARALLEL_THRESHOLD:
        from .engine import use_memmem
        from .forkpool import imap_unordered

        use_memmem()  # (before the fork: the workers inherit it)
        _POOL_STATE.update(
            resolver=resolver,
            registry=registry,
            gather=gather,
            fix_sources=fix_sources,
            candidates=candidates,
        )
        done = []
        pieces: dict = {}
        later: list = []

        def lint_all(items, want_targets=False, meanwhile=None) -> set[str]:
            # (forked after the wrapper targets are set: the workers inherit them)
            found: set[str] = set()
            work = _chunks(items, jobs, want_digest, want_targets)
            for part, got, got_pieces, got_later in imap_unordered(
                _lint_chunk, work, jobs, meanwhile
            ):
                done.extend(part)
                found |= got
                for top, blob in got_pieces.items():
                    pieces.setdefault(top, []).append(blob)
                later.extend(got_later)
            return found

        def lint_here(items) -> None:  # (in this process: a few files)
            for i in items:
                res, digest = _lint_one(candidates[i], resolver, registry, True, want_digest)
                _drop_source(res, fix_sources)
                done.append((i, res, digest))

        try:
            if deferred or gather:
                from .project import set_wrapper_targets

                # While the Python files are linted, the parent loads the C++ parser once for
                # the C++ phase's workers to inherit (instead of each loading it).
                python = array(
                    _INDEX_TYPE, (i for i in pending if candidates[i].language == "python")
                )
                others = array(
                    _INDEX_TYPE, (i for i in pending if candidates[i].language != "python")
                )
                targets = lint_all(python, deferred, _preload_cpp if others else None)
                if deferred:
                    set_wrapper_targets(targets)
                _POOL_STATE["gather"] = False
                # The files that wait for the aiter index, by package: each package's index
                # is built when its first file asks and dropped after its last, so that the
                # run holds one package's index at a time however many packages it checks.
                waiting = _by_package(sorted(later), candidates)
                many: list = []

                def finish_gathering():
                    # The C/C++ files need no aiter index: the parent ends the gathering while
                    # the workers lint them, and lints the files that wait for it (a
                    # package's at a time) where they are few.
                    if gather:
                        from .aiter_graph import gather_finish

                        gather_finish(pieces)
                        pieces.clear()  # (packed again, per package, by the index)
                    for group in waiting:
                        if len(group) >= PARALLEL_THRESHOLD:
                            many.append(group)
                        else:
                            lint_here(group)
                            _release_index()

                if len(others) >= PARALLEL_THRESHOLD:
                    lint_all(others, False, finish_gathering)
                else:
                    finish_gathering()
                    if others:
                        many.append(others)
                for group in many:
                    if len(group) >= PARALLEL_THRESHOLD:
                        _build_index(group, candidates)  # (before the fork: the workers share it)
                        lint_all(group)
                    else:
                        lint_here(group)
                    _release_index()
            else:
                if any(candidates[i].language == "cpp" for i in pending):
                    _preload_cpp()
                lint_all(pending)
        finally:
            _POOL_STATE.clear()
    else:
        done = [
            (i, *_lint_one(candidates[i], resolver, registry, True, want_digest)) for i in pending
        ]

    stored = 0
    for i, res, digest in done:
        results[i] = res
        if cache is not None and digest is not None and stats[i] is not None:
            payloads[i] = _to_payload(res)
            cache.store(candidates[i].abspath, keys[i], stats[i], digest, payloads[i])
            stored += 1
    for i, res in enumerate(results):
        if res is None:  # linted in a worker that found nothing: not sent back
            results[i] = candidates[i]  # (a candidate is its own empty result)
    if probes is not None and stored == len(done):  # (every result is in the cache)
        record = _run_record(candidates, stats, probes, payloads, cache)
        if record is not None:
            cache.store_run(signature, record)
    if semantic:
        from .semantic.pch import finish

        finish()
    return results


# The candidates' numbers are kept as 4-byte integers (a run checks fewer than 2**31 files).
_INDEX_TYPE = "i"


class _Nones:
    """A sequence of Nones as long as asked: the per-file keys, stats and payloads of a run
    without a cache (a list of None per file would grow with the tree for nothing)."""

    __slots__ = ()

    def __getitem__(self, i):
        return None

    def __iter__(self):  # (it has no end: iterating it would never stop)
        raise TypeError("a run without a cache has no per-file keys, stats or payloads")


_NONES = _Nones()


def _plan_semantic(pending, candidates, resolver, cache) -> bool:
    """Semantic mode: plan the precompiled headers the C++/CUDA files' libclang parses share
    (kernlint.semantic.pch), before the workers fork (they inherit the plan)."""
    items = []
    for i in pending:
        cand = candidates[i]
        if cand.language == "cpp":
            settings = resolver.for_file(cand.abspath)
            if getattr(settings, "semantic", False):
                items.append((cand.abspath, settings.include_paths, settings.defines))
    if not items:
        return False
    from .semantic.pch import prepare

    prepare(items, cache)
    return True


CHUNK_FILES = 512


def _chunks(pending, jobs, want_digest, want_targets):
    """Work items: the files mixed (every n-th file together, so big and small files from one
    directory are spread out), cut into chunks that shrink as the work runs out (each a share
    of what remains), so the workers finish together: a worker that takes the last chunk
    holds the others up by a small chunk, not by an average one."""
    from .forkpool import MAX_ITEMS

    n = min(len(pending), jobs * 16)
    mixed = array(_INDEX_TYPE)
    for k in range(n):
        mixed.extend(pending[k::n])
    out = []
    i, total = 0, len(mixed)
    share = jobs * 4
    while i < total:
        # (at most CHUNK_FILES: what a worker holds for a chunk until it sends the results
        # back does not grow with the tree)
        size = min(CHUNK_FILES, max(1, -(-(total - i) // share)))
        if len(out) == MAX_ITEMS - 1:
            size = total - i
        out.append((mixed[i : i + size], want_digest, want_targets))
        i += size
    return out


FFI_RULE = "ffi-non-fixed-width-int"
AITER_RULE = "ungated-aiter-import"
UNPARSED_KEY = "|unparsed"  # (the cache key of a result recorded with its unparsed regions)


def _wants_wrappers(candidates, resolver) -> bool:
    """Do the C++ files need the FFI wrapper targets named in the Python files?"""
    first_cpp = next((c for c in candidates if c.language == "cpp"), None)
    if first_cpp is None:
        return False
    settings = resolver.for_file(first_cpp.abspath)
    return _rule_facts(settings.rules_for(first_cpp.abspath), "cpp")[3]


def _collect_project_facts(candidates, resolver, cache, wrappers, stats, aiter_in_pool=False):
    """Cross-file facts (FFI wrapper targets named in Python), gathered once per run
    (`wrappers=False`: the pool gathers the targets while linting the Python files).
    `stats`: the candidates' `os.stat` results (read when there is a cache). `aiter_in_pool`:
    the pool may gather the aiter import index as it lints (`aiter_graph.gather_start`);
    returns whether it is to."""
    from .project import collect, collect_aiter_import_time, set_aiter_findings, set_wrapper_targets

    python = [k for k, c in enumerate(candidates) if c.language == "python"]
    targets: set[str] = set()
    if wrappers and _wants_wrappers(candidates, resolver):
        targets = collect(
            [candidates[k].abspath for k in python], cache, [stats[k] for k in python]
        )
    set_wrapper_targets(targets)
    from .cpp.registrations import gather as gather_registrations

    gather_registrations(candidates, resolver, cache, stats)  # (the torch-library boundary)
    aiter: dict = {}
    if _uses_import_time_policy(candidates, python, resolver):
        aiter = collect_aiter_import_time([candidates[k].abspath for k in python])
    set_aiter_findings(aiter)
    from .aiter_graph import collect as collect_aiter_reachability

    reachable = _reachable_files(candidates, python, resolver)
    if aiter_in_pool:
        from .aiter_graph import gather_start

        if gather_start([candidates[k].abspath for k in reachable]):
            return True
    collect_aiter_reachability(
        [candidates[k].abspath for k in reachable],
        keys=cache is not None,
        cache=cache,
        stats=[stats[k] for k in reachable] if cache is not None else None,
    )
    return False


def project_facts_state() -> tuple:
    """The cross-file facts of the last `_collect_project_facts` (for `restore_project_facts`)."""
    from . import aiter_graph, project
    from .cpp import registrations

    return (project.state(), aiter_graph.state(), registrations.state())


def restore_project_facts(saved: tuple) -> None:
    from . import aiter_graph, project
    from .cpp import registrations

    project.restore(saved[0])
    aiter_graph.restore(saved[1])
    registrations.restore(saved[2] if len(saved) > 2 else ())


def _uses_import_time_policy(candidates, python, resolver) -> bool:
    """Does any Python candidate run ungated-aiter-import under the `import-time` policy?
    Asked of each file only when some config sets that policy (a file's settings are always
    one the resolver has built: those of the walked directories, or of a named file)."""
    for k in python:
        if candidates[k].explicit:
            resolver.for_file(candidates[k].abspath)  # (a named file's may not be built yet)
    if not any(import_time_policy(s) for s in resolver.all_settings()):
        return False
    return any(_import_time_policy(candidates[k], resolver) for k in python)


def _import_time_policy(cand, resolver) -> bool:
    settings = resolver.for_file(cand.abspath)
    if not import_time_policy(settings):
        return False
    return _rule_facts(settings.rules_for(cand.abspath), "python")[2]


def _reachable_policy(cand, resolver) -> bool:
    from .config import reachable_policy

    settings = resolver.for_file(cand.abspath)
    return reachable_policy(settings) and _rule_facts(settings.rules_for(cand.abspath), "python")[2]


def _reachable_files(candidates, python, resolver) -> list[int]:
    """The numbers of the Python candidates that run ungated-aiter-import under the
    `reachable` policy. (Asked once per settings object where no per-file-ignores can change
    a file's rules: before the pool starts, the parent's time counts whole.)"""
    out = []
    memo: dict[int, tuple] = {}  # id(settings) -> (settings, answer)
    for k in python:
        cand = candidates[k]
        settings = resolver.for_file(cand.abspath)
        entry = memo.get(id(settings))
        if entry is not None and entry[0] is settings:
            ok = entry[1]
        else:
            ok = _reachable_policy(cand, resolver)
            if not getattr(settings, "per_file_ignores", True):
                memo[id(settings)] = (settings, ok)
        if ok:
            out.append(k)
    return out


def _stat(path: str):
    try:
        return os.stat(path)
    except OSError:
        return None


# -- run records ------------------------------------------------------------------------------
# The first run of a `kernlint` process with a cache keeps, beside the files' results, a record
# of the whole run (kernlint.cache: a file per signature): each checked file's mode, size and
# modification time, its findings, and every question that making the files' cache keys asked
# the file system (kernlint.fsprobe: each path stat-ed, opened or listed, and what it was). A
# key is a function of the settings, the file's bytes and those answers, and a file's findings
# are a function of its key. The next run of the same files under the same settings (the
# signature) asks those questions again; when every answer is the same, and every file's mode,
# size and modification time, the recorded findings are the run's, without the cross-file
# facts the keys are made of. Any other answer and the run goes on as it would without a
# record. No record is kept when a checked or probed file changed within the racy window of
# the run (an edit within the same timestamp tick), or when a result could not be cached.
RUN_RECORD_FORMAT = 2


def _run_signature(candidates, resolver, registry) -> str | None:
    """What a run record is kept under: the checked files, kernlint and its rules, the Python
    version, each config's merged values and the command line's overrides, whether the
    unparsed regions are recorded; None for a run whose results depend on more (the semantic
    pass, compilation)."""
    import hashlib
    import json

    from . import __version__
    from .cache import FORMAT, code_key
    from .registry import local_key

    for cand in candidates:
        if cand.explicit:
            resolver.for_file(cand.abspath)  # (a named file's settings may not be built yet)
    all_settings = resolver.all_settings()
    if any(getattr(s, "semantic", False) or getattr(s, "compile", False) for s in all_settings):
        return None
    parts = [
        __version__,
        FORMAT,
        RUN_RECORD_FORMAT,
        code_key(),
        local_key(registry.rules),
        list(sys.version_info[:2]),
        recording_unparsed(),
        repr(resolver.overrides),
        os.getcwd(),
    ]
    for s in sorted(all_settings, key=lambda s: (s.raw.path or "", s.root)):
        raw = s.raw
        parts.append([raw.path, raw.root, raw.values, raw.key_roots, raw.key_files])
    text = json.dumps(parts, sort_keys=True, default=repr, ensure_ascii=True)
    h = hashlib.sha256(text.encode())
    for c in candidates:  # (each set of checked files its own record: `.` and `srt/` both kept)
        h.update(
            f"{c.display}\0{c.abspath}\0{c.language}\0{c.explicit:d}\0".encode(
                errors="surrogateescape"
            )
        )
    return h.hexdigest()[:32]


def _run_record(candidates, stats, probes, payloads, cache) -> str | None:
    """The record of a run (JSON text), or None when it cannot vouch for its results: a file
    without a stat, a probed path that cannot be written on a line of its own, or a file or a
    probed path modified within the racy window of the run's start. It holds each file's mode,
    size and modification time, the results that are not empty (as the cache stores them), and
    the probes (lines of tab-separated fields: one string, quick to read back); the checked
    files are those the signature was made of."""
    import json

    from .cache import EMPTY_RESULT, RACY_NS
    from .fsprobe import describe, racy

    if any(st is None for st in stats) or any(p is None for p in payloads):
        return None
    rows = [(kind, path, seen) for (kind, path), seen in probes.items()]
    floor = cache.started - RACY_NS
    if racy(rows, cache.started) or any(st.st_mtime_ns >= floor for st in stats):
        return None
    if any(_SEPARATORS.intersection(path) for _kind, path, _seen in rows):
        return None
    record = {
        "files": len(candidates),
        "stats": ",".join(map(describe, stats)),
        "results": {str(i): p for i, p in enumerate(payloads) if p != EMPTY_RESULT},
        "probes": "\n".join("\t".join(row) for row in rows),
    }
    return json.dumps(record, separators=(",", ":"), ensure_ascii=True)


_SEPARATORS = frozenset("\t\n")


def _replayed(cache, signature, candidates, stats) -> list | None:
    """The results of a run answered from its record (see above), or None."""
    text = cache.lookup_run(signature)
    if text is None:
        return None
    from .cache import EMPTY_RESULT, _loads
    from .fsprobe import changed, describe

    record = _loads(text)
    if not (
        type(record) is dict
        and record.get("files") == len(candidates)
        and type(record.get("stats")) is str
        and type(record.get("results")) is dict
        and type(record.get("probes")) is str
    ):
        return None
    if any(st is None for st in stats) or record["stats"] != ",".join(map(describe, stats)):
        return None  # (a checked file changed: its mode, size or modification time)
    probes = [row.split("\t") for row in record["probes"].split("\n")] if record["probes"] else []
    if any(len(p) != 3 for p in probes):
        return None
    known = {c.abspath: st for c, st in zip(candidates, stats, strict=True)}
    if changed(probes, known):
        return None
    stored = record["results"]
    plain = not recording_unparsed()  # (then an empty payload is an empty result)
    results = []
    for i, cand in enumerate(candidates):
        payload = stored.get(str(i), EMPTY_RESULT)
        if plain and payload == EMPTY_RESULT:  # (most files)
            res = cand  # (a candidate is its own empty result)
        else:
            res = _from_payload(cand, payload) if type(payload) is str else None
            if res is None:
                return None
        results.append(res)
    return results


def _project_key(cand, rules, settings=None, is_jit=False, cache=None, stat=None) -> str:
    from .project import aiter_fingerprint, fingerprint

    _, _, aiter_rule, ffi_rule = _rule_facts(rules, cand.language)
    key = _generated_key(cand, settings)
    if "kernlint.compile" in sys.modules and getattr(settings, "compile", False):
        key += sys.modules["kernlint.compile"].fingerprint(cand.abspath)
    if cand.language == "python":
        key += aiter_fingerprint(cand.abspath) if aiter_rule else ""
        # direct-triton-benchmark judges `bench_*.py` under the config's `jit-benchmark-roots`.
        name = os.path.basename(cand.abspath)
        if name.startswith("bench_") and settings is not None:
            if settings.is_jit_benchmark(cand.abspath):
                key += "|jit-benchmark"
                if any(r.name == BENCH_TENSOR_RULE for r in rules):
                    from kernlint_rules.python.raw_benchmark_tensor import fingerprint as helpers

                    key += helpers(cand.abspath)  # (the shorthands its tree's utilities define)
        # The registration rules judge a file by where it sits (kernlint.ci_layout).
        if settings is not None and any(r.name in CI_LAYOUT_RULES for r in rules):
            from .ci_layout import project_key as ci_key

            key += ci_key(cand.abspath, settings)
        from .jit_wiring import dependency_key, wants_dependencies

        # The `load_jit` rules read the C++ files a call names (kernlint.jit_wiring).
        if wants_dependencies(rules):
            key += dependency_key(cand.abspath, settings, cache, stat)
        # jit-test-misplaced reads the wrapper modules a registered test imports.
        if any(r.name == JIT_TEST_RULE for r in rules):
            from kernlint_rules.python.jit_test_misplaced import fingerprint as wrappers

            key += wrappers(cand.abspath, settings, cache, stat)
        return key
    if cand.language != "cpp":
        return key
    key += fingerprint() if ffi_rule else ""
    if ffi_rule and "torch-library" in (getattr(settings, "ffi_boundaries", None) or ()):
        from .cpp.registrations import fingerprint as registrations

        key += "|torch-registrations:" + registrations()
    if is_jit:
        key += _jit_key(rules, settings, cand.abspath)
    return key


BENCH_TENSOR_RULE = "raw-benchmark-tensor"
JIT_TEST_RULE = "jit-test-misplaced"
CI_LAYOUT_RULES = frozenset(
    {"registered-test-in-package", "bare-pytest-main", "test-not-registered"}
)


def _generated_key(cand, settings) -> str:
    """What a file's generated-file verdict depends on beyond its bytes: whether the detection
    is on, and for a path with a `generated` directory, the root it is taken relative to."""
    if settings is None:
        return ""
    if not getattr(settings, "generated_markers", True):
        return "|no-generated"
    if "generated" in cand.abspath.lower():
        return f"|generated-root:{getattr(settings, 'root', '')}"
    return ""


NAMESPACE_RULE = "code-outside-sglang-namespace"


def _jit_key(rules, settings, abspath: str) -> str:
    """What a JIT file's findings depend on beyond its bytes (kernlint.jitscope): whether the
    JIT exemptions are on, whether its tree's JIT headers use `namespace sglang`, and which
    abstractions they define (kernlint.sgl_headers)."""
    key = "" if getattr(settings, "jit_exempt_markers", True) else "|no-jit-exemptions"
    if any(r.name == NAMESPACE_RULE for r in rules):
        from .jitscope import convention_fingerprint

        key += convention_fingerprint(abspath, getattr(settings, "namespaces", None))
    if any(r.name == PRIMITIVE_RULE for r in rules):
        from .sgl_headers import fingerprint as abstractions_fingerprint

        key += abstractions_fingerprint(abspath)  # (what the tree's sgl_kernel headers define)
        from .jitscope import included_by_upstream

        key += "|vendored-include" if included_by_upstream(abspath) else ""
    return key


PRIMITIVE_RULE = "raw-cuda-primitive"


def _namespace_notes(candidates, resolver) -> list[str]:
    """One line per tree whose JIT headers do not open `namespace sglang` (an SGLang layout
    older than the convention): code-outside-sglang-namespace is silent on its JIT files."""
    headers: dict[str, int] = {}
    wanted: dict[int, tuple] = {}  # id(rules) -> (rules, the rule is on)
    for cand in candidates:
        if cand.language != "cpp":
            continue
        settings = resolver.for_file(cand.abspath)
        rules = settings.rules_for(cand.abspath)
        memo = wanted.get(id(rules))
        if memo is None:
            memo = wanted[id(rules)] = (rules, any(r.name == NAMESPACE_RULE for r in rules))
        if not memo[1] or not settings.is_jit(cand.abspath):
            continue
        from .jitscope import namespace_convention

        in_force, header = namespace_convention(cand.abspath, getattr(settings, "namespaces", None))
        if not in_force:
            headers[header] = headers.get(header, 0) + 1
    from .engine import relpath_for_display

    return [
        f"{NAMESPACE_RULE}: {relpath_for_display(h)} does not open `namespace sglang` (a JIT "
        f"layout older than the convention); not checked in the {n} JIT file"
        f"{'s' if n != 1 else ''} it governs"
        for h, n in sorted(headers.items())
    ]


def _semantic_note(results) -> None:
    """One note per run (not per file) about what the semantic pass could not resolve."""
    noted = [r for r in results if r.notes]
    if not noted:
        return
    unavailable = next((n for r in noted for n in r.notes if n.startswith("unavailable: ")), None)
    if unavailable:
        _warn(f"semantic mode off: {unavailable[len('unavailable: ') :]}")
        return
    cpp = sum(1 for r in results if r.language == "cpp")
    # The rules' `unjudged: parameter|callee PATH:LINE` notes: what was left to the tree-sitter
    # verdict because its type did not resolve (kernlint.semantic.note_unjudged).
    unjudged = {"parameter": 0, "callee": 0}
    problems = []
    for r in noted:
        mine = [n for n in r.notes if not n.startswith("unjudged: ")]
        for n in r.notes:
            what = n[len("unjudged: ") :].split(" ", 1)[0] if n.startswith("unjudged: ") else ""
            if what in unjudged:
                unjudged[what] += 1
        if mine:
            problems.append(mine[0])
    examples = "; ".join(problems[:3])
    skipped = ""
    if unjudged["parameter"] or unjudged["callee"]:
        skipped = (
            f"; not judged, their types unresolved: {unjudged['parameter']} FFI parameter(s), "
            f"{unjudged['callee']} callee(s) (no finding is built on a guessed type)"
        )
    _warn(
        f"semantic: libclang could not fully resolve {len(problems)} of {cpp} C++/CUDA files "
        f"(e.g. {examples}); the tree-sitter findings stand for them{skipped}"
    )


def _can_fork() -> bool:
    # (the pool, kernlint.forkpool, forks the workers: no spawn fallback is needed)
    return hasattr(os, "fork")


def _to_payload(res) -> str:
    from .cache import encode_result

    notes = res.notes
    if res.generated:  # (a generated file: its reason travels as a note, see _from_payload)
        notes = [*notes, GENERATED_NOTE + res.generated]
    payload = encode_result(res.diagnostics, res.warnings, notes)
    if recording_unparsed():  # (under UNPARSED_KEY: the result and its unparsed regions)
        from .inspect import encode_unparsed

        return encode_unparsed(payload, res.unparsed)
    return payload


def _decode_result(payload: str, path: str):
    """`kernlint.cache.decode_result`, imported on the first call (it runs once per cached
    file: an import statement in each call costs about 1 us)."""
    global _decode_result
    from .cache import decode_result as _decode_result

    return _decode_result(payload, path)


def _from_payload(cand, payload: str):
    """The FileResult of a cached entry's payload; None if it does not decode."""
    unparsed = None
    if recording_unparsed():
        from .inspect import decode_unparsed

        found = decode_unparsed(payload)
        if found is None:
            return None
        payload, unparsed = found
    decoded = _decode_result(payload, cand.display)
    if decoded is None:
        return None
    diags, warnings, notes = decoded
    generated = None
    if notes and notes[-1].startswith(GENERATED_NOTE):
        generated = notes.pop()[len(GENERATED_NOTE) :]
    res = FileResult(cand.display, diags, warnings, None, cand.abspath, cand.language, notes)
    res.unparsed = unparsed
    res.generated = generated
    return res


GENERATED_NOTE = "\0generated: "  # (a cached note no rule writes: a NUL cannot be in one)


def lint_paths(
    paths,
    *,
    select=None,
    extend_select=(),
    ignore=(),
    preview=None,
    config=None,
    force_exclude=False,
    warn=_warn,
):
    """Library entry point: lint `paths` and return the FileResults (no output, no fixes)."""
    from .config import ConfigResolver, Overrides
    from .registry import load_registry

    registry = load_registry()
    overrides = Overrides(
        select=list(select) if select is not None else None,
        extend_select=list(extend_select),
        ignore=list(ignore),
        preview=preview,
    )
    resolver = ConfigResolver(registry, overrides, config)
    candidates = list(discover(list(paths), resolver, force_exclude=force_exclude, warn=warn))
    _compile_pass(candidates, resolver, None, None, warn)
    results = lint_candidates(candidates, resolver, registry)
    for res in results:
        if res.source is None and res.diagnostics:
            _load_source(res)
    for note in _namespace_notes(candidates, resolver):
        warn(note)
    return results


def _compile_pass(candidates, resolver, cache_dir, compile_from, warn=None) -> None:
    """`--compile`: build and measure the kernels (kernlint.compile) before the lint, when a
    file's settings turn it on; otherwise nothing (the pass is not even imported)."""
    if "kernlint.compile" in sys.modules:
        sys.modules["kernlint.compile"].reset()
    for cand in candidates:
        if cand.explicit:
            resolver.for_file(cand.abspath)  # (a named file's settings may not be built yet)
    if compile_from is None and not any(
        getattr(s, "compile", False) for s in resolver.all_settings()
    ):
        return
    from .compile import prepare

    prepare(
        candidates, resolver, cache_dir=cache_dir, compile_from=compile_from, warn=warn or _warn
    )


def run_check(args, registry, resolver) -> int:
    paths = args.paths or ["."]
    candidates = list(discover(paths, resolver, force_exclude=args.force_exclude, warn=_warn))
    cache = None
    if not args.no_cache:
        from .cache import Cache

        cache = Cache(args.cache_dir or os.path.join(os.getcwd(), ".kernlint_cache"))
    from .engine import record_unparsed

    show_skipped = getattr(args, "show_skipped", False)
    record_unparsed(args.statistics or show_skipped)  # (else no file's regions are looked for)
    compile_cache = None if args.no_cache else cache.directory
    _compile_pass(candidates, resolver, compile_cache, getattr(args, "compile_from", None))
    try:
        fixing = _fixing(args) or args.diff
        # (a fix lints again: it needs the facts; and it applies to the bytes it was made on)
        results = lint_candidates(
            candidates, resolver, registry, cache=cache, replay=not fixing, fix_sources=fixing
        )
    finally:
        record_unparsed(False)
    if cache is not None:
        cache.save()

    unsafe = bool(args.unsafe_fixes)
    diagnostics = []
    # Without fixes, each file's source is read for the report when it is first needed, and
    # one file's at a time is kept (`ReportSources`); with fixes, the sources they produced.
    sources = {} if fixing else ReportSources(results)
    fixed_count: dict[str, int] = {}  # findings fixed, per severity
    diffs = []
    written: dict = {}  # (device, inode) -> the bytes written there (a file with several names)
    _semantic_note(results)
    for note in _namespace_notes(candidates, resolver):
        _warn(note)
    for res in results:
        for w in res.warnings:
            _warn(w)
        if not fixing:  # (the report reads the source, `ReportSources`)
            diags, source = res.diagnostics, None
        elif any(applicable(d, unsafe) for d in res.diagnostics):
            diags, source, fixed = _fix_file(res, args, unsafe, resolver, registry, diffs, written)
            for severity, n in fixed.items():
                fixed_count[severity] = fixed_count.get(severity, 0) + n
        else:
            if res.source is None and res.diagnostics:
                _load_source(res)
            diags, source = res.diagnostics, res.source
        if source is not None:
            sources[res.path] = source
        diagnostics += diags
    diagnostics.sort(key=lambda d: d.sort_key())
    if show_skipped:  # (on stderr, whatever the report's format)
        from .inspect import skipped_lines
        from .output import warn_line

        for line in skipped_lines(results):
            warn_line(sys.stderr, line)

    if args.write_baseline:
        from .baseline import write_baseline

        n = write_baseline(args.write_baseline, diagnostics, sources)
        if not args.quiet:
            print(
                f"Wrote a baseline of {n} finding{'s' if n != 1 else ''} to {args.write_baseline}."
            )
        return 0
    if args.baseline:
        from .baseline import filter_baseline

        diagnostics, matched = filter_baseline(args.baseline, diagnostics, sources)
        if not args.quiet and matched:
            print(
                f"{matched} finding{'s' if matched != 1 else ''} matched the baseline.",
                file=sys.stderr,
            )

    if args.diff:
        text = "".join(diffs)
        from .output import write_report

        write_report([text])  # (a failed write raises, for `main` to report)
        would = severity_counts([d for d in diagnostics if applicable(d, unsafe)])
        if not args.quiet:
            print(f"Would fix {counted(would)}.", file=sys.stderr)
        return 1 if text and not args.exit_zero else 0

    if getattr(args, "fix_only", False):  # (fixes applied, nothing else reported)
        if fixed_count and not args.quiet:
            print(f"Fixed {counted(fixed_count)}.")
        return _exit_status(args, [], fixed_count)
    checked = CheckedPaths(results)
    report = _render(args, diagnostics, sources, registry, unsafe, fixed_count, checked, results)
    if not _emit(args, report):
        return 2
    return _exit_status(args, diagnostics, fixed_count)


def _emit(args, report, stream=None) -> bool:
    """Write the report to `--output-file`, else to `stream` (stdout when None: streamed, a
    failed write raises for `main` to report). False: the output file could not be written
    (said on stderr)."""
    from .output import warn_line, write_chunks, write_report

    if args.output_file:
        try:
            with open(args.output_file, "w", encoding="utf-8", errors="backslashreplace") as fh:
                write_chunks(fh, report)
        except OSError as exc:
            warn_line(sys.stderr, f"kernlint: error: {args.output_file}: {exc.strerror or exc}")
            return False
    elif stream is not None:
        write_chunks(stream, report)
    else:
        write_report(report)
    return True


def _fixing(args) -> bool:
    """Are fixes to be applied (`--fix`, or `--fix-only`, which implies it)?"""
    return bool(args.fix or getattr(args, "fix_only", False))


def _exit_status(args, diagnostics, fixed_count: dict) -> int:
    """As ruff: 0 with `--exit-zero`; 1 while findings remain (none count under `--fix-only`)
    or, with `--exit-non-zero-on-fix`, when anything was fixed; else 0."""
    if args.exit_zero:
        return 0
    if diagnostics:
        return 1
    return 1 if fixed_count and getattr(args, "exit_non_zero_on_fix", False) else 0


def run_stdin(args, registry, resolver, data: bytes) -> int:
    """`kernlint check --stdin-filename PATH -`: lint `data` (the buffer read from stdin) as the
    file PATH: its config, per-file ignores, JIT roots and generated-file test are those of PATH,
    which need not exist. `--fix`: the fixed text goes to stdout, the findings that remain to
    stderr (or `-o`); `--fix-only`: only the fixed text; `--diff`: the diff, on stdout."""
    from .discovery import Candidate, PathError, _excluded_parents
    from .engine import lint_source, record_unparsed
    from .output import report_error, warn_line, write_report
    from .source import SourceFile, language_of

    display = args.stdin_filename
    language = language_of(display)
    if language is None:
        raise PathError(
            f"--stdin-filename {display}: not a C/C++/CUDA or Python file name (by extension)"
        )
    abspath = os.path.abspath(display)
    settings = resolver.for_file(abspath)
    fixing = _fixing(args) and not args.diff

    def echo(text: bytes) -> None:  # (the buffer, byte for byte, for an editor to take back)
        out = getattr(sys.stdout, "buffer", None)
        try:
            sys.stdout.flush()
            if out is None:
                sys.stdout.write(text.decode("utf-8", "surrogateescape"))
            else:
                out.write(text)
                out.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise report_error(exc) from None

    if b"\0" in data:
        raise PathError(f"{display} (stdin): binary input (contains NUL bytes); nothing checked")
    if len(data) > settings.max_file_size:
        raise PathError(
            f"{display} (stdin): {len(data)} bytes, larger than max-file-size "
            f"({settings.max_file_size} bytes); nothing checked"
        )
    if args.force_exclude and (
        settings.is_excluded(abspath) or _excluded_parents(abspath, settings)
    ):
        if fixing:
            echo(data)
        return 0
    for name in ("kernlint.jitscope", "kernlint.sgl_headers", "kernlint.jit_wiring"):
        if name in sys.modules:
            sys.modules[name].reset()
    cand = Candidate(display, abspath, language, True)
    # Cross-file facts as `kernlint check PATH` gathers them (from the tree as saved).
    _collect_project_facts([cand], resolver, None, wrappers=True, stats=[None])
    rules = settings.rules_for(abspath)
    is_jit = _jit_matters(rules, language) and settings.is_jit(abspath)
    show_skipped = getattr(args, "show_skipped", False)
    record_unparsed(args.statistics or show_skipped)
    try:
        source = SourceFile(display, data, language, abspath=abspath)
        res = lint_source(source, settings, is_jit, registry, rules)
    except (RecursionError, MemoryError):
        raise PathError(
            f"{display} (stdin): too deeply nested to analyze; nothing checked"
        ) from None
    finally:
        record_unparsed(False)
    res.path = display
    _semantic_note([res])
    for note in _namespace_notes([cand], resolver):
        _warn(note)
    unsafe = bool(args.unsafe_fixes)
    diagnostics, source, new, fixed_count = res.diagnostics, res.source, data, {}
    if (fixing or args.diff) and any(applicable(d, unsafe) for d in diagnostics):
        new, fixed, _ = apply_fixes(data, diagnostics, unsafe)
        if new != data and fixing:
            fixed_count = severity_counts(fixed)
            again = _lint_bytes(res, new, settings, registry)
            if again is None:
                _warn(f"{display}: fixed, but cannot be linted again; its findings are not shown")
                diagnostics, source = [], None
            else:
                diagnostics, source = again.diagnostics, again.source
    if show_skipped:
        from .inspect import skipped_lines

        for line in skipped_lines([res]):
            warn_line(sys.stderr, line)
    if args.diff:
        text = unified_diff(display, data, new) if new != data else ""
        write_report([text])
        would = severity_counts([d for d in diagnostics if applicable(d, unsafe)])
        if not args.quiet:
            print(f"Would fix {counted(would)}.", file=sys.stderr)
        return 1 if text and not args.exit_zero else 0
    if fixing:
        echo(new)
    if getattr(args, "fix_only", False):
        if fixed_count and not args.quiet:
            print(f"Fixed {counted(fixed_count)}.", file=sys.stderr)
        return _exit_status(args, [], fixed_count)
    sources = {display: source} if source is not None else {}
    # (with a fix, stdout holds the fixed text: the report goes to stderr)
    stream = sys.stderr if fixing else None
    report = _render(
        args, diagnostics, sources, registry, unsafe, fixed_count, [display], [res], stream
    )
    if not _emit(args, report, stream):
        return 2
    return _exit_status(args, diagnostics, fixed_count)


class CheckedPaths:
    """The display paths of the files a run checked (those not skipped with only a warning),
    made when a report asks (statistics, JUnit) instead of listed for every run."""

    def __init__(self, results) -> None:
        self._results = results

    def __iter__(self):
        return (r.path for r in self._results if not r.warnings or r.diagnostics)

    def __len__(self) -> int:
        return sum(1 for _ in self)


class ReportSources:
    """The sources of the files with findings, by display path, for a report (`.get`): a
    file's source is the one its lint kept, else read when first asked for, and only the last
    one asked for is held. The report asks in its findings' order (sorted by path), so it
    holds one file's source at a time instead of every file with findings; a file asked for
    again later is read again."""

    def __init__(self, results) -> None:
        self._results = {r.path: r for r in results if r.diagnostics}
        self._last: tuple = (None, None)

    def get(self, path: str, default=None):
        if self._last[0] == path:
            source = self._last[1]
        else:
            res = self._results.get(path)
            if res is None:
                return default
            source = res.source if res.source is not None else _read_again(res)
            self._last = (path, source)
        return default if source is None else source


def _load_source(res) -> None:
    """Re-read a file whose result came from the cache or a worker (only files with findings;
    `res.source` stays None when it can no longer be read)."""
    res.source = _read_again(res)


def _read_again(res):
    """The SourceFile of a result's file as it is now on disk, or None (unreadable)."""
    from .engine import read_source

    return read_source(res.abspath, res.path, res.language)[0]


def _fix_file(res, args, unsafe, resolver, registry, diffs, written):
    """Fix one file (or add its diff to `diffs`), only over the bytes its findings were
    computed on. Returns (findings to report, the source they refer to or None, the findings fixed per
    severity).

    `res.source` holds the bytes the findings were computed on (the lint keeps them for files
    with a fix); the file is read again and fixed only if it still holds exactly those bytes.
    A result from the cache has no bytes: the file's current bytes are linted again, and those
    findings fixed; so is a file that this run fixed under another name (a hard link). The
    write itself checks the bytes once more (see fixes.write_fix)."""
    from .fixes import CHANGED, READ_ONLY, NotFixed, read_snapshot, write_fix

    linted = res.source
    settings = resolver.for_file(res.abspath)
    try:  # (a file grown past the lint's size cap since is not read)
        snap = read_snapshot(res.abspath, getattr(settings, "max_file_size", None))
    except FileNotFoundError:
        _warn(f"{res.path}: deleted while kernlint ran; not fixed")
        return [], None, {}
    except NotFixed:
        _warn(f"{res.path}: {CHANGED}")
        return res.diagnostics, linted, {}
    except OSError as exc:
        _warn(f"{res.path}: cannot read it again: {exc.strerror or exc}; not fixed")
        return res.diagnostics, linted, {}
    ours = written.get((snap.st.st_dev, snap.st.st_ino)) == snap.data
    if linted is not None and (snap.data == linted.data or not ours):
        if snap.data != linted.data:
            _warn(f"{res.path}: {CHANGED}")
            return res.diagnostics, linted, {}
        diags, source = res.diagnostics, linted
    else:
        again = _lint_bytes(res, snap.data, settings, registry)
        if again is None:
            _warn(f"{res.path}: {CHANGED}")
            return res.diagnostics, None, {}
        diags, source = again.diagnostics, again.source
    new, fixed, _ = apply_fixes(source.data, diags, unsafe)
    if new == source.data:
        return diags, source, {}
    if args.diff:
        diffs.append(unified_diff(res.path, source.data, new))
        return diags, source, {}
    if snap.read_only:
        _warn(f"{res.path}: {READ_ONLY}")
        return diags, source, {}
    try:
        write_fix(snap, new)
    except NotFixed as exc:
        _warn(f"{res.path}: {exc}")
        return diags, source, {}
    except OSError as exc:
        _warn(f"{res.path}: cannot write fixes: {exc.strerror or exc}")
        return diags, source, {}
    try:  # (the file now there: the same inode when written in place, else a new one)
        st = os.stat(snap.real)
        written[(st.st_dev, st.st_ino)] = new
    except OSError:
        pass
    # Re-lint the fixed file so reported positions match its new content.
    is_jit = settings.is_jit(res.abspath)
    again = lint_file(res.abspath, res.path, res.language, settings, is_jit, registry)
    return again.diagnostics, again.source, severity_counts(fixed)


def _lint_bytes(res, data: bytes, settings, registry):
    """Lint `data` as the file of `res` (its FileResult; None if these bytes are not lintable:
    binary now)."""
    from .engine import lint_source
    from .source import SourceFile

    if b"\0" in data:
        return None
    source = SourceFile(res.path, data, res.language, abspath=res.abspath)
    try:
        return lint_source(source, settings, settings.is_jit(res.abspath), registry)
    except RecursionError:
        return None


def _render(
    args, diagnostics, sources, registry, unsafe, fixed_count, checked, results=(), stream=None
):
    """The report as an iterable of strings (text, json and github are generated as written).
    `stream`: where it goes, when not stdout (its being a terminal decides the colour)."""
    fmt = args.output_format

    def fix_available(d):
        return applicable(d, unsafe)

    if fmt in ("text", "full", "concise", "grouped"):  # (`text`: `full`)
        from .output import text

        color = text.use_color(
            getattr(args, "color", None), None if args.output_file else stream or sys.stdout
        )
        if args.statistics:
            from .inspect import statistics_tail

            tail = statistics_tail(results, checked, getattr(args, "show_skipped", False))
            return [text.statistics(diagnostics, fix_available, color=color), tail]
        out = text.iter_render(
            diagnostics,
            sources,
            show_source=not args.no_show_source,
            fix_available=fix_available,
            output_format="full" if fmt == "text" else fmt,
            color=color,
        )
        if args.quiet:
            return out
        fixable = sum(1 for d in diagnostics if fix_available(d))
        hidden = (
            0
            if unsafe
            else sum(1 for d in diagnostics if d.fix and d.fix.applicability == "unsafe")
        )
        tail = text.summary(  # (full and grouped end each finding or file in a blank line)
            text.severity_counts(diagnostics), fixable, fixed_count, hidden, color=color
        )
        return itertools.chain(out, [tail])
    if fmt == "json":
        if args.statistics:
            from .inspect import statistics_json

            skipped = getattr(args, "show_skipped", False)
            return [statistics_json(diagnostics, fix_available, results, checked, skipped)]
        from .output import json_format

        return json_format.iter_render(diagnostics, sources)
    if fmt == "github":
        from .output import github

        return github.iter_render(diagnostics)
    if fmt == "sarif":
        from .output import sarif

        return [sarif.render(diagnostics, registry, sources)]
    if fmt == "junit":
        from .output import junit

        return [junit.render(diagnostics, checked)]
    raise AssertionError(fmt)
