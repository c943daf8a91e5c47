"""The result cache is data, checked entry by entry: nothing in it can run code or change results.

Every test compares a run with the cache to a `--no-cache` run of the same tree (the whole JSON
report, fixes included). Runs are in-process (`kernlint.cli.main`); the HMAC key lives under a
per-test `XDG_CACHE_HOME`. The tree's mtimes are set in the past, so entries are trusted on size
and mtime alone (a recently modified file is checked by its bytes too; see the racy tests).
"""

from __future__ import annotations

import json
import os
import pickle
import random
import stat
import time
import types

import pytest
from cli_support import run

import kernlint.runner
from kernlint import __version__, aiter_graph
from kernlint import cache as cache_mod
from kernlint.cli import main

OLD_NS = 1_600_000_000 * 10**9  # 2020: far from any run's start

FILES = {
    # CU001 with a safe fix, CU003 (unsafe fixes) and CU004 on a kernel.
    "kernels/jit/csrc/add.cuh": (
        "#pragma once\n#include <cstdint>\n\nnamespace sglang {\n"
        "// adds a \u2014 b\n"
        "__global__ void add_kernel(float* out, float* a, int32_t n) {\n"
        "  if (threadIdx.x < n) out[threadIdx.x] += a[threadIdx.x];\n}\n"
        "}  // namespace sglang\n"
    ),
    # CU005 only through the FFI target named in ops/probe.py (a cross-file fact).
    "kernels/jit/csrc/probe.cuh": (
        "#pragma once\n#include <cstdint>\n\nnamespace sglang {\n"
        "template <typename T>\nstruct ProbeKernel {\n"
        "  static int fits(int64_t n) { return n > 0; }\n};\n}  // namespace sglang\n"
    ),
    "ops/probe.py": (
        "from sglang.jit_kernel.utils import cache_once, load_jit\n\n\n@cache_once\n"
        "def _module(dtype):\n    args = make_cpp_args(dtype)\n    return load_jit(\n"
        '        "probe",\n        *args,\n        cuda_files=["probe.cuh"],\n'
        '        cuda_wrappers=[("fits", f"&sglang::ProbeKernel<{args}>::fits")],\n    )\n'
    ),
    "ops/uses_aiter.py": "import aiter\n",  # PY001
    "ops/clean.py": "def f(x):\n    return x\n",
    "kernels/jit/csrc/clean.cuh": "#pragma once\nnamespace sglang {\nint x = 0;\n}\n",
}
SELECT = "CU001,CU003,CU004,CU005,PY001"
RESULTS = f"results-v{cache_mod.FORMAT}-{__version__}.json"


class Tree:
    def __init__(self, root, capsys, monkeypatch):
        self.root = root
        self.capsys = capsys
        self.monkeypatch = monkeypatch
        self.cache_dir = str(root / "cache")
        self.linted = []
        real = kernlint.runner.lint_file

        def counting(abspath, *args, **kwargs):
            self.linted.append(abspath)
            return real(abspath, *args, **kwargs)

        monkeypatch.setattr(kernlint.runner, "lint_file", counting)

    @property
    def results(self) -> str:
        return os.path.join(self.cache_dir, RESULTS)

    def check(self, *extra, cache=True) -> str:
        """One `kernlint check` of the tree; its JSON report (asserting a clean run)."""
        self.linted.clear()
        self.capsys.readouterr()
        args = ["check", "src", "--select", SELECT, "--output-format", "json", *extra]
        if not cache:
            args.append("--no-cache")
        elif "--cache-dir" not in extra:
            args += ["--cache-dir", self.cache_dir]
        rc = main(args)
        out, err = self.capsys.readouterr()
        assert rc == 1, err
        assert "Traceback" not in err and "warning" not in err, err
        json.loads(out)
        return out

    def use_key(self, name: str) -> None:
        """Point the HMAC key somewhere else (another user, another machine)."""
        self.monkeypatch.setenv("XDG_CACHE_HOME", str(self.root / name))


@pytest.fixture
def tree(tmp_path, capsys, monkeypatch):
    for rel, text in FILES.items():
        path = tmp_path / "src" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        os.utime(path, ns=(OLD_NS, OLD_NS))
    monkeypatch.chdir(tmp_path)
    t = Tree(tmp_path, capsys, monkeypatch)
    t.use_key("xdg")
    t.expected = t.check(cache=False)
    codes = {d["code"] for d in json.loads(t.expected)}
    assert codes == set(SELECT.split(",")), t.expected
    return t


def _read(path) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def _write(path, data: bytes) -> None:
    with open(path, "wb") as fh:
        fh.write(data)


def _entries(path) -> tuple[dict, dict]:
    header, body = _read(path).split(b"\n", 1)
    return json.loads(header), json.loads(body)


def _rewrite(path, header: dict, entries: dict) -> None:
    _write(path, json.dumps(header).encode() + b"\n" + json.dumps(entries).encode())


def test_warm_run_replays_without_reading_a_file(tree):
    assert tree.check() == tree.expected
    assert len(tree.linted) == len(FILES)
    assert tree.check() == tree.expected
    assert tree.linted == []  # every result came from the cache
    header, entries = _entries(tree.results)
    assert header["format"] == "kernlint-cache" and header["version"] == cache_mod.FORMAT
    # (each Python file also has its FFI facts and whether it names aiter)
    python = sum(rel.endswith(".py") for rel in FILES)
    assert sum(len(g) for g in entries.values()) == len(FILES) + 2 * python
    with open(os.path.join(tree.cache_dir, ".gitignore")) as fh:
        assert "*" in fh.read().split()
    key = tree.root / "xdg" / "kernlint" / "cache-key"
    assert stat.S_IMODE(os.stat(key).st_mode) == 0o600
    assert os.path.getsize(key) == cache_mod.KEY_BYTES


def test_default_cache_dir_is_used_and_stays_ignored(tree):
    assert tree.check("--cache-dir", ".kernlint_cache") == tree.expected
    assert tree.check("--cache-dir", ".kernlint_cache") == tree.expected
    assert tree.linted == []
    # without --cache-dir: the same .kernlint_cache in the working directory
    rc = main(["check", "src", "--select", SELECT, "--output-format", "json"])
    assert rc == 1 and tree.linted == []
    assert tree.capsys.readouterr().out == tree.expected


class _Payload:
    """Unpickling this creates `marker` (what a planted pickle would do, less harmfully)."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_planted_pickles_never_run(tree):
    marker = tree.root / "pwned"
    bomb = pickle.dumps({("x", "y"): _Payload(str(marker))})
    pickle.loads(bomb)  # (the bomb works: loading it creates the marker)
    assert marker.exists()
    marker.unlink()
    key = tree.root / "xdg" / "kernlint" / "cache-key"
    key.parent.mkdir(parents=True)
    for directory in (tree.root / ".kernlint_cache", tree.root / "cache"):
        directory.mkdir()
        for name in (f"results-v1-{__version__}.pickle", RESULTS):
            _write(directory / name, bomb)
    _write(key, bomb)  # not a key: replaced by a fresh one
    assert tree.check() == tree.expected
    assert tree.check("--cache-dir", ".kernlint_cache") == tree.expected
    rc = main(["check", "src", "--select", SELECT, "--output-format", "json"])
    assert rc == 1 and tree.capsys.readouterr().out == tree.expected
    assert not marker.exists()
    assert os.path.getsize(key) == cache_mod.KEY_BYTES and _read(key) != bomb
    # the planted files were replaced by JSON caches that work
    assert tree.check() == tree.expected and tree.linted == []
    assert _read(tree.results).startswith(b'{"format":"kernlint-cache"')


def test_truncated_and_tiny_cache_files(tree):
    tree.check()
    good = _read(tree.results)
    cuts = [0, 1, 11, good.index(b"\n"), good.index(b"\n") + 1, len(good) // 2, len(good) - 1]
    for data in [good[:n] for n in cuts] + [b"\x80\x04\x95\xff\xff\xff\xff\xff\xff\xff\x7f"]:
        _write(tree.results, data)
        assert tree.check() == tree.expected, data[:40]
        assert tree.check() == tree.expected and tree.linted == []  # repaired


def test_random_byte_flips(tree):
    tree.check()
    good = _read(tree.results)
    rng = random.Random(20)
    replayed = 0
    for _ in range(200):
        data = bytearray(good)
        data[rng.randrange(len(data))] ^= rng.randrange(1, 256)
        _write(tree.results, bytes(data))
        assert tree.check() == tree.expected
        replayed += len(tree.linted) < len(FILES)
    # (most flips damage one entry, or only the header's mac: the other entries are used)
    assert replayed > 100


def test_entries_from_another_machine_are_dropped(tree):
    tree.use_key("other-machine")
    tree.check()
    # On that machine, findings edited and signed again with its own key:
    c = cache_mod.Cache(tree.cache_dir)
    _forge(c, message="forged")
    c.save()
    assert "forged" in tree.check()  # (they would be replayed there)
    tree.use_key("xdg")  # this machine
    assert tree.check() == tree.expected
    assert len(tree.linted) == len(FILES)
    assert tree.check() == tree.expected and tree.linted == []


def _forge(c, message: str) -> int:
    """Replace the message of every cached finding; returns how many there were."""
    n = 0
    for key, group in list(c.entries.items()):
        for path, e in list(group.items()):
            if key in ("project:cuda-wrappers", aiter_graph._NAMES_KEY):
                continue
            st, _racy, digest, _mac, payload = _fields(e)
            rows, warnings, notes = json.loads(payload)
            for row in rows:
                row[6] = message
                n += 1
            if rows:
                c.store(path, key, st, digest, json.dumps([rows, warnings, notes]))
    return n


class _Stat:
    def __init__(self, size: int, mtime_ns: int) -> None:
        self.st_size = size
        self.st_mtime_ns = mtime_ns


def _fields(entry: str):
    """(stat, racy, digest, mac, payload) of an entry as stored."""
    size, mtime, racy, digest, mac, payload = entry.split(" ", 5)
    return _Stat(int(size), int(mtime)), racy, digest, mac, payload


def _with_payload(entry: str, payload: str) -> str:
    return " ".join(entry.split(" ", 5)[:5] + [payload])


def test_edited_entries_are_rejected_by_their_mac(tree):
    tree.check()
    header, entries = _entries(tree.results)
    edited, edited_paths = 0, []
    for key, group in entries.items():
        for path, e in group.items():
            payload = json.loads(_fields(e)[4])
            if key == aiter_graph._NAMES_KEY:
                group[path] = _with_payload(e, "1" if payload == 0 else "0")  # (flipped)
                continue
            if key == "project:cuda-wrappers":
                if payload:
                    group[path] = _with_payload(e, json.dumps(payload + ["sglang::Other::fn"]))
                continue
            if not payload[0]:
                continue
            edited_paths.append(path)
            for row in payload[0]:
                row[6] = "edited"  # message
                row[7] = "info"  # severity
                if row[10] is not None:
                    row[10][2][0][2] = "system(); "  # a fix's content
                edited += 1
            del payload[0][:1]
            group[path] = _with_payload(e, json.dumps(payload))
    assert edited
    for variant in (header, dict(header, mac="0" * 64)):
        _rewrite(tree.results, variant, entries)
        assert tree.check() == tree.expected
        assert sorted(tree.linted) == sorted(edited_paths)
    # The same edits, made by the key's owner, are replayed: the mac is what rejects them.
    c = cache_mod.Cache(tree.cache_dir)
    assert _forge(c, message="edited") == edited
    c.save()
    assert tree.check().count('"edited"') == edited


@pytest.mark.parametrize(
    "row_change",
    [
        lambda r: r.__setitem__(0, "3"),  # a line as text
        lambda r: r.__setitem__(1, True),  # a bool for a number
        lambda r: r.__setitem__(1, 1.5),
        lambda r: r.__setitem__(7, "fatal"),  # an unknown severity
        lambda r: r.__setitem__(4, None),
        lambda r: r.append(0),  # a field too many
        lambda r: r.pop(),
        lambda r: r.__setitem__(10, ["safe", "t", [[5, 2, "x"]]]),  # ends before its start
        lambda r: r.__setitem__(10, ["always", "t", []]),
        lambda r: r.__setitem__(10, ["safe", "t", [[-1, 0, "x"]]]),
        lambda r: r.__setitem__(10, {"edits": []}),
    ],
)
def test_signed_entries_of_the_wrong_shape_are_dropped(tree, row_change):
    """Even an entry whose mac is good must have the exact types and shapes: else re-linted."""
    tree.check()
    c = cache_mod.Cache(tree.cache_dir)
    changed = 0
    for key, group in list(c.entries.items()):
        for path, e in list(group.items()):
            st, _racy, digest, _mac, payload = _fields(e)
            if key in ("project:cuda-wrappers", aiter_graph._NAMES_KEY):
                continue
            if payload == cache_mod.EMPTY_RESULT:
                continue
            rows, warnings, notes = json.loads(payload)
            row_change(rows[0])
            c.store(path, key, st, digest, json.dumps([rows, warnings, notes]))
            changed += 1
    c.save()
    assert changed
    assert tree.check() == tree.expected
    assert len(tree.linted) == changed
    assert tree.check() == tree.expected and tree.linted == []


@pytest.mark.parametrize(
    "payload", ['["a", 1]', '{"a": 1}', '"x"', "[[[[[[[[", '[[],[],["note", 2]]', "[[],[]]"]
)
def test_signed_payloads_that_do_not_decode_are_dropped(tree, payload):
    tree.check()
    c = cache_mod.Cache(tree.cache_dir)
    for key, group in list(c.entries.items()):
        for path, e in list(group.items()):
            st, _racy, digest, _mac, _payload = _fields(e)
            c.store(path, key, st, digest, payload)
    c.save()
    assert tree.check() == tree.expected
    assert len(tree.linted) == len(FILES)


def test_wrong_format_or_version_is_dropped(tree):
    tree.check()
    header, entries = _entries(tree.results)
    for variant in (
        dict(header, version=cache_mod.FORMAT + 1),
        dict(header, version=float(cache_mod.FORMAT)),
        dict(header, kernlint="0.0.0"),
        dict(header, format="other"),
        [header],
    ):
        _rewrite(tree.results, variant, entries)
        assert tree.check() == tree.expected
        assert len(tree.linted) == len(FILES)


def test_entries_moved_to_another_file_are_dropped(tree):
    add = os.path.realpath("src/kernels/jit/csrc/add.cuh")
    clean = os.path.realpath("src/kernels/jit/csrc/clean.cuh")
    text = _read(clean)
    _write(clean, text + b" " * (os.path.getsize(add) - len(text)))  # same size, same mtime
    os.utime(clean, ns=(OLD_NS, OLD_NS))
    tree.check()
    header, entries = _entries(tree.results)
    moved = 0
    for group in entries.values():
        if add in group and clean in group:
            group[clean] = group[add]  # clean.cuh would get add.cuh's findings
            moved += 1
    assert moved == 1
    _rewrite(tree.results, header, entries)
    assert tree.check() == tree.expected
    assert tree.linted == [clean]


def test_oversized_cache_file_is_not_read(tree, monkeypatch):
    tree.check()
    monkeypatch.setattr(cache_mod, "MAX_BYTES", os.path.getsize(tree.results) - 1)
    assert tree.check() == tree.expected
    assert len(tree.linted) == len(FILES)


@pytest.mark.parametrize("kind", ["file", "inside-a-file", "read-only", "results-is-a-dir"])
def test_unusable_cache_directory(tree, kind):
    target = tree.root / "cache"
    if kind == "file":
        target.write_text("not a directory\n")
    elif kind == "inside-a-file":
        (tree.root / "blocker").write_text("x")
        target = tree.root / "blocker" / "cache"
    elif kind == "read-only":  # (as root it is writable all the same)
        target.mkdir()
        target.chmod(0o500)
    else:
        (target / RESULTS).mkdir(parents=True)
    try:
        for _ in range(2):
            assert tree.check("--cache-dir", str(target)) == tree.expected
    finally:
        if kind == "read-only":
            target.chmod(0o700)
    if target.is_dir():  # no temp file left behind
        assert [n for n in os.listdir(target) if n.startswith(".kernlint-")] == []
    if kind == "file":
        assert target.read_text() == "not a directory\n"


@pytest.mark.parametrize("kind", ["file", "directory"])
def test_unusable_key_location_runs_without_the_cache(tree, kind):
    home = tree.root / "xdg2"
    if kind == "file":
        home.write_text("x")  # $XDG_CACHE_HOME/kernlint cannot be created
    else:
        (home / "kernlint" / "cache-key").mkdir(parents=True)  # the key is a directory
    tree.use_key("xdg2")
    assert tree.check() == tree.expected
    assert tree.check() == tree.expected
    assert len(tree.linted) == len(FILES)  # no cache without a key
    assert not os.path.exists(tree.results)


def test_relative_xdg_cache_home_is_ignored(tree, monkeypatch):
    """A relative XDG_CACHE_HOME (it could point into the linted tree) is not used."""
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")
    monkeypatch.setenv("HOME", str(tree.root / "home"))
    assert cache_mod.key_path() == str(tree.root / "home" / ".cache" / "kernlint" / "cache-key")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_fifo_as_cache_file_does_not_hang(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.cuh").write_text("namespace sglang {\n// a \u2014 b\nint x = 0;\n}\n", "utf-8")
    (tmp_path / "kernlint.toml").write_text('jit-roots = ["**"]\n')  # (CU001 is JIT-scoped)
    cache = tmp_path / "cache"
    cache.mkdir()
    os.mkfifo(cache / RESULTS)
    env = ["--output-format", "json", "--select", "CU001"]
    p = run("check", str(src), *env, "--cache-dir", str(cache), timeout=60)
    q = run("check", str(src), *env, "--no-cache", timeout=60)
    assert p.returncode == q.returncode == 1, p.stderr
    assert p.stdout == q.stdout and "Traceback" not in p.stderr


def test_racy_same_size_edit_is_not_replayed(tree):
    """A file rewritten with the same size and mtime right after it was cached (an edit within
    one timestamp tick) is re-checked: its entry is racy, so its bytes are hashed."""
    path = tree.root / "src" / "kernels" / "jit" / "csrc" / "add.cuh"
    os.utime(path)  # modified now
    assert tree.check() == tree.expected
    before = os.stat(path)
    fixed = path.read_text("utf-8").replace("\u2014", "---")  # (as many bytes)
    assert len(fixed.encode()) == before.st_size
    path.write_text(fixed, "utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    expected = tree.check(cache=False)
    assert expected != tree.expected
    assert tree.check() == expected
    # unchanged bytes: the racy entry is used after hashing the file
    assert tree.check() == expected and tree.linted == []


def test_racy_entry_becomes_plain_once_old(tree, monkeypatch):
    path = tree.root / "src" / "ops" / "uses_aiter.py"
    os.utime(path)
    tree.check()
    c = cache_mod.Cache(tree.cache_dir)
    abspath = os.path.realpath(path)
    racy = [_fields(g[abspath])[1] for g in c.entries.values() if abspath in g]
    assert racy == ["1", "1", "1"]  # (lint result, FFI facts, whether it names aiter)
    later = time.time_ns() + 2 * cache_mod.RACY_NS
    monkeypatch.setattr(cache_mod, "time", types.SimpleNamespace(time_ns=lambda: later))
    assert tree.check() == tree.expected and tree.linted == []
    c = cache_mod.Cache(tree.cache_dir)
    assert [_fields(g[abspath])[1] for g in c.entries.values() if abspath in g] == ["0"] * 3


def test_a_lower_max_file_size_is_not_answered_from_the_cache(tmp_path):
    """A file linted with the default cap, then over a lowered cap: skipped, as --no-cache."""
    from kernlint.cli import main

    tree = tmp_path / "t"
    tree.mkdir()
    (tree / "k.cu").write_bytes(b"// caf\xc3\xa9\n" + b"int x;\n" * 40)
    jit = 'jit-roots = ["**"]\n'  # (CU001, the finding, is JIT-scoped)
    (tree / "kernlint.toml").write_text(jit)
    cache = str(tmp_path / "c")
    assert main(["check", "-q", "--cache-dir", cache, str(tree)]) == 1
    (tree / "kernlint.toml").write_text(jit + "max-file-size = 100\n")
    assert main(["check", "-q", "--cache-dir", cache, str(tree)]) == 0
    assert main(["check", "-q", "--no-cache", str(tree)]) == 0


def test_a_changed_kernlint_recomputes_cached_results(tmp_path, monkeypatch, capsys):
    """The cache key covers kernlint's own code: results from an edited rule (same version) are
    not reused."""
    import kernlint.cache as cache_mod
    import kernlint.runner as runner_mod
    from kernlint.cli import main

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    (tmp_path / "k.cuh").write_text("namespace sglang {}  // caf\u00e9\n", encoding="utf-8")
    (tmp_path / "kernlint.toml").write_text('jit-roots = ["**"]\n')
    calls = []
    real = runner_mod.lint_file

    def counting(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(runner_mod, "lint_file", counting)
    cache_dir = str(tmp_path / "cache")
    for key, linted in (("a", 1), ("a", 0), ("b", 1)):
        monkeypatch.setattr(cache_mod, "_CODE_KEY", [key])
        calls.clear()
        main(["check", "--select", "CU001", "--cache-dir", cache_dir, str(tmp_path)])
        assert len(calls) == linted, key
    capsys.readouterr()
