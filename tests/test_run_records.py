"""Run records: a warm run of an unchanged tree answers every file from the record of the run
before (its files, their cache keys, and what making the keys asked the file system), and any
change the keys depend on (a file outside the run that a finding depends on, a file that
appears where one was missing, a new file, a config edit) makes the run compute its keys again.

Each run is a fresh process, as the `kernlint` command is (only a process's first run keeps a
record); every warm result is compared with a `--no-cache` run of the same tree.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from cli_support import write_old

from kernlint import fsprobe

SELECT = "PY008,PY009,PY010,CU001"
PY = (
    "from sglang.kernels.jit.utils import cache_once, load_jit\n\n\n"
    "@cache_once\ndef _module():\n    return load_jit(\n"
    '        "scale",\n        cuda_files=["elementwise/scale.cuh"],\n'
    '        cuda_wrappers=[("scale", "ScaleKernel::run")],\n'
    "    )\n"
)
CUH = (
    "#pragma once\n\nnamespace sglang {\n"
    "struct ScaleKernel {\n  static void run(const float* __restrict__ x, int n);\n};\n"
    "}  // namespace sglang\n"
)
DRIVER = (
    "import sys\nfrom kernlint import cli, runner\nrunner.record_runs()\n"
    "rc = cli.main(sys.argv[1:])\nprint('RUN:' + (runner.LAST_RUN or ['-'])[0], file=sys.stderr)\n"
    "sys.exit(rc)\n"
)


class Tree:
    def __init__(self, root) -> None:
        self.root = root
        self.jit = root / "repo" / "python" / "sglang" / "kernels" / "jit"
        self.ops = root / "repo" / "python" / "sglang" / "kernels" / "ops"
        self.cache = root / "cache"
        self.env = dict(os.environ, XDG_CACHE_HOME=str(root / "xdg"))

    def run(self, *extra, cache=True, paths=None) -> tuple[list, str]:
        """(findings, how the run went: "recorded", "replayed", "linted")."""
        args = ["check", *(paths or [str(self.ops)]), "--select", SELECT]
        args += ["--output-format", "json", *extra]
        args += ["--cache-dir", str(self.cache)] if cache else ["--no-cache"]
        proc = subprocess.run(
            [sys.executable, "-c", DRIVER, *args],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr
        how = [line[4:] for line in proc.stderr.splitlines() if line.startswith("RUN:")]
        found = sorted((d["path"], d["code"], d["message"]) for d in json.loads(proc.stdout))
        return found, how[-1]

    def warm(self, **kw) -> tuple[list, str]:
        """A cached run, checked against a run without the cache."""
        found, how = self.run(**kw)
        assert found == self.run(cache=False, **kw)[0]
        return found, how

    def records(self) -> dict:
        """signature -> record (the cache directory's `run-*.json` files, their header lines
        left out)."""
        out = {}
        for name in os.listdir(self.cache):
            if name.startswith("run-") and name.endswith(".json"):
                body = (self.cache / name).read_bytes().split(b"\n", 1)[1]
                out[name[4:-5]] = json.loads(body)
        return out


@pytest.fixture
def tree(tmp_path):
    t = Tree(tmp_path)
    (t.jit / "include").mkdir(parents=True)
    write_old(t.jit / "csrc" / "elementwise" / "scale.cuh", CUH)
    write_old(t.ops / "scale.py", PY)
    write_old(t.ops / "other.py", "def f(x):\n    return x\n")
    return t


def test_an_unchanged_tree_is_answered_from_its_record(tree):
    first, how = tree.warm()
    assert how == "recorded" and len(tree.records()) == 1
    again, how = tree.warm()
    assert (again, how) == (first, "replayed")


def test_an_edit_outside_the_checked_files_is_seen(tree):
    assert tree.warm() == ([], "recorded")
    assert tree.warm() == ([], "replayed")
    cuh = tree.jit / "csrc" / "elementwise" / "scale.cuh"
    write_old(cuh, CUH.replace("static void run(", "static void launch("), tick=2)
    found, how = tree.warm()
    assert how == "recorded"  # (the keys were made again: the header's answer changed)
    assert [code for _, code, _ in found] == ["PY009"]
    assert tree.warm() == (found, "replayed")


def test_a_file_appearing_where_one_was_missing_is_seen(tree):
    cuh = tree.jit / "csrc" / "elementwise" / "scale.cuh"
    cuh.unlink()
    found, how = tree.warm()
    assert how == "recorded" and [code for _, code, _ in found] == ["PY008"]
    assert tree.warm() == (found, "replayed")
    write_old(cuh, CUH, tick=3)
    assert tree.warm() == ([], "recorded")


def test_a_new_file_and_a_config_edit_make_new_keys(tree):
    tree.warm()
    write_old(tree.ops / "new.py", "x = 1  # \u2014\n", tick=4)
    assert tree.warm()[1] == "recorded"
    assert tree.warm()[1] == "replayed"
    write_old(tree.root / "repo" / "kernlint.toml", 'extend-exclude = ["other.py"]\n', tick=5)
    assert tree.warm()[1] == "recorded"
    assert tree.warm()[1] == "replayed"
    (tree.ops / "new.py").unlink()
    assert tree.warm()[1] == "recorded"


def test_each_set_of_checked_files_keeps_its_record(tree):
    whole = [str(tree.root / "repo")]
    assert tree.warm()[1] == "recorded"
    assert tree.warm(paths=whole)[1] == "recorded"
    assert tree.warm()[1] == "replayed"
    assert tree.warm(paths=whole)[1] == "replayed"
    assert len(tree.records()) == 2


def test_a_tree_edited_just_now_keeps_no_record(tree):
    (tree.ops / "other.py").write_text("def g(y):\n    return y\n", encoding="utf-8")
    assert tree.warm()[1] == "recorded"
    assert tree.records() == {}
    assert tree.warm()[1] == "recorded"  # (still racy: nothing to replay)


def test_fixing_runs_compute_the_facts(tree):
    tree.warm()
    assert tree.warm()[1] == "replayed"
    _, how = tree.run("--fix", "--exit-zero")  # (a fix lints a file again: the facts are made)
    assert how == "recorded"
    assert tree.warm()[1] == "replayed"


def test_a_record_that_does_not_check_out_is_dropped(tree):
    found, _ = tree.warm()
    ((signature, record),) = tree.records().items()
    path = tree.cache / f"run-{signature}.json"
    header = path.read_bytes().split(b"\n", 1)[0]
    record["results"] = {}  # (every file's findings gone; the mac is the old one)
    path.write_bytes(header + b"\n" + json.dumps(record).encode())
    assert tree.warm() == (found, "recorded")
    assert tree.warm() == (found, "replayed")


def _resign(tree, monkeypatch, forge):
    """Edit the run's record and sign it again with the user's own key."""
    from kernlint.cache import Cache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tree.root / "xdg"))
    ((signature, record),) = tree.records().items()
    forge(record)
    cache = Cache(str(tree.cache))
    cache.store_run(signature, json.dumps(record))
    cache.save()


@pytest.mark.parametrize(
    "forge",
    [
        lambda r: r.update(stats=r["stats"].replace(":", ";", 1)),
        lambda r: r.update(probes=r["probes"] + "\nd\t/x\0y\tls:0"),
        lambda r: r.update(probes=r["probes"] + "\nd\t/x\udcffy\tls:0"),
        lambda r: r.update(probes=r["probes"] + "\ns\t/x\0y\t1:2:3"),
        lambda r: r.update(probes=r["probes"] + "\ns\tonly two"),
        lambda r: r.update(files="x"),
        lambda r: r.update(results="x"),
        lambda r: r.update(results={"0": 5}),
        lambda r: r.update(results={"0": "[[[1]],[],[]]"}),
    ],
)
def test_a_signed_record_of_odd_values_falls_back(tree, monkeypatch, forge):
    found, _ = tree.warm()
    _resign(tree, monkeypatch, forge)
    assert tree.warm() == (found, "recorded")


def test_in_process_runs_keep_no_record(tree, monkeypatch, capsys):
    from kernlint.cli import main

    monkeypatch.setenv("XDG_CACHE_HOME", str(tree.root / "xdg"))
    args = ["check", str(tree.ops), "--select", SELECT, "--cache-dir", str(tree.cache)]
    assert main(args) == 0
    assert main(args) == 0
    assert tree.records() == {}


# -- what a recorder notes, and what tells a changed answer ---------------------------------
def test_the_recorder_notes_each_way_of_asking(tmp_path):
    import pathlib

    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f.txt").write_text("x")
    with fsprobe.Recorder() as rec:
        os.path.isfile(tmp_path / "d" / "f.txt")
        os.path.exists(tmp_path / "missing")
        os.path.islink(tmp_path / "d")
        with open(tmp_path / "d" / "f.txt") as fh:
            fh.read()
        list(os.walk(tmp_path))
        os.listdir(tmp_path / "d")
        pathlib.Path(tmp_path / "p").exists()
        fd = os.open(tmp_path / "d" / "f.txt", os.O_RDONLY)
        os.stat(fd)  # (a descriptor: the open that made it is what counts)
        os.close(fd)
    assert os.stat is fsprobe._real["stat"] and open is fsprobe._real["builtin_open"]
    kinds = {(kind, os.path.relpath(path, tmp_path)) for kind, path in rec.probes}
    assert kinds >= {
        ("s", "d/f.txt"),
        ("s", "missing"),
        ("l", "d"),
        ("d", "."),
        ("d", "d"),
        ("s", "p"),
    }
    assert rec.probes[("s", str(tmp_path / "missing"))] == "-"
    probes = [(k, p, a) for (k, p), a in rec.probes.items()]
    assert not fsprobe.changed(probes)

    (tmp_path / "p").write_text("now")  # a missing path appears
    assert fsprobe.changed(probes)
    (tmp_path / "p").unlink()
    assert not fsprobe.changed(probes)
    st = os.stat(tmp_path / "d")
    (tmp_path / "d" / "g").mkdir()  # a listed directory gains an entry
    assert fsprobe.changed(probes)
    (tmp_path / "d" / "g").rmdir()
    os.utime(tmp_path / "d", ns=(st.st_atime_ns, st.st_mtime_ns))  # (as it was)
    assert not fsprobe.changed(probes)
    stamp = os.stat(tmp_path / "d" / "f.txt").st_mtime_ns
    (tmp_path / "d" / "f.txt").write_text("xy")  # a read file grows
    os.utime(tmp_path / "d" / "f.txt", ns=(stamp, stamp))
    assert fsprobe.changed(probes)
    (tmp_path / "d" / "f.txt").write_text("x")
    os.utime(tmp_path / "d" / "f.txt", ns=(stamp, stamp))
    assert not fsprobe.changed(probes)
    os.chmod(tmp_path / "d" / "f.txt", 0)  # made unreadable: size and time unchanged
    assert fsprobe.changed(probes)


def test_a_listing_notes_entry_types(tmp_path):
    (tmp_path / "x").write_text("")
    with fsprobe.Recorder() as rec:
        with os.scandir(tmp_path) as it:
            assert [e.name for e in it] == ["x"]
    probes = [(k, p, a) for (k, p), a in rec.probes.items()]
    st = os.stat(tmp_path)
    (tmp_path / "x").unlink()
    (tmp_path / "x").mkdir()  # (the same name, now a directory)
    os.utime(tmp_path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert fsprobe.changed(probes)


def test_racy_answers(tmp_path):
    (tmp_path / "f").write_text("")
    with fsprobe.Recorder() as rec:
        os.stat(tmp_path / "f")
    probes = [(k, p, a) for (k, p), a in rec.probes.items()]
    now = os.stat(tmp_path / "f").st_mtime_ns
    assert fsprobe.racy(probes, now)
    assert not fsprobe.racy(probes, now + 10 * fsprobe.RACY_NS)
    assert not fsprobe.racy([("s", "/x", "-")], now)
