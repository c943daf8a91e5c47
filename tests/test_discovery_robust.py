"""Hostile file kinds and sizes: only regular files are read, never past `max-file-size`; `--`
ends options; files or directories that vanish or cannot be listed give warnings."""

from __future__ import annotations

import builtins
import errno
import os
import resource
import signal
import socket
import stat
import subprocess
import sys

import pytest

from kernlint import cli, engine, runner
from kernlint.config import DEFAULT_MAX_FILE_SIZE, ConfigResolver, Overrides
from kernlint.registry import load_registry

# A finding in every file written with it: CU001 (non-ASCII character) at 1:7.
CAFE = "// caf\u00e9\n"
HANG_GUARD_S = 60  # only catches a hang; a normal run takes about a second


ALL_JIT = 'jit-roots = ["**"]\n'  # (CU001, the finding of these tests, is JIT-scoped)


@pytest.fixture(autouse=True)
def _all_jit(tmp_path):
    (tmp_path / "kernlint.toml").write_text(ALL_JIT)


def kernlint(*args, cwd, memory_limit=None):
    """`python -m kernlint ARGS` in `cwd`, optionally under an address-space limit (bytes)."""

    def limit():
        if memory_limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))

    return subprocess.run(
        [sys.executable, "-m", "kernlint", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
        preexec_fn=limit,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def hang_guard():
    """In-process tests that meet a FIFO: a blocking open fails the test instead of hanging."""

    def expired(signum, frame):
        raise TimeoutError(f"still running after {HANG_GUARD_S} s: blocked on a FIFO?")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(HANG_GUARD_S)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def warnings_of(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("warning: ")]


@pytest.fixture
def tree(tmp_path):
    """src/ with one file holding a finding, two FIFOs, a socket and a link to /dev/zero."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.cu").write_text(CAFE, encoding="utf-8")
    os.mkfifo(src / "pipe.cu")
    os.mkfifo(src / "pipe.py")
    (src / "zero.cu").symlink_to("/dev/zero")
    sock = socket.socket(socket.AF_UNIX)
    old = os.getcwd()
    os.chdir(src)  # (a short relative name: socket paths are limited to about 100 bytes)
    try:
        sock.bind("sock.cu")
    finally:
        os.chdir(old)
    yield src
    sock.close()


def assert_no_reader(fifo) -> None:
    """Nobody holds the FIFO open for reading (a non-blocking writer open fails with ENXIO)."""
    with pytest.raises(OSError) as info:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert info.value.errno == errno.ENXIO


def test_walk_skips_fifos_sockets_and_device_links_quietly(tree, tmp_path):
    p = kernlint("check", "--no-cache", "src", cwd=tmp_path, memory_limit=2 << 30)
    assert p.returncode == 1, p.stderr
    assert "Traceback" not in p.stderr
    assert p.stdout.startswith(os.path.join("src", "a.cu") + ":1:7: CU001 ")
    assert "Found 1 error." in p.stdout
    # Walked special files and links are skipped without a word (documented in the README).
    assert warnings_of(p.stderr) == []
    assert_no_reader(tree / "pipe.cu")
    assert_no_reader(tree / "pipe.py")


def test_walk_never_opens_special_files(tree, monkeypatch, hang_guard):
    opened = []
    real_os_open, real_open = os.open, builtins.open

    def spy_os_open(path, *args, **kwargs):
        opened.append(os.fspath(path))
        return real_os_open(path, *args, **kwargs)

    def spy_open(file, *args, **kwargs):
        if not isinstance(file, int):
            opened.append(os.fspath(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", spy_os_open)
    monkeypatch.setattr(builtins, "open", spy_open)
    told = []
    results = runner.lint_paths([str(tree)], warn=told.append)
    assert [r.path for r in results] == [os.path.join(str(tree), "a.cu")]
    assert [d.code for d in results[0].diagnostics] == ["CU001"]
    assert told == []
    names = {os.path.basename(p) for p in opened}
    assert "a.cu" in names  # (the spy sees the reads)
    assert names.isdisjoint({"pipe.cu", "pipe.py", "zero.cu", "sock.cu"}), opened


@pytest.mark.parametrize("name", ["pipe.cu", "pipe.py", "sock.cu", "zero.cu"])
def test_named_special_file_is_a_warning_and_the_run_goes_on(tree, tmp_path, name):
    named = os.path.join("src", name)
    p = kernlint("check", "--no-cache", named, "src/a.cu", cwd=tmp_path, memory_limit=2 << 30)
    assert "Traceback" not in p.stderr
    assert warnings_of(p.stderr) == [f"warning: {named}: not a regular file; skipped"]
    assert p.returncode == 1, p.stderr  # the finding in a.cu
    assert "src/a.cu:1:7: CU001" in p.stdout
    # Named alone: nothing to lint, nothing found.
    p = kernlint("check", "--no-cache", named, cwd=tmp_path, memory_limit=2 << 30)
    assert p.returncode == 0, p.stderr
    assert warnings_of(p.stderr) == [f"warning: {named}: not a regular file; skipped"]
    if name.startswith("pipe"):
        assert_no_reader(tree / name)


def test_named_devices_are_skipped_with_bounded_memory(tmp_path):
    (tmp_path / "a.cu").write_text(CAFE, encoding="utf-8")
    p = kernlint(
        "check", "--no-cache", "/dev/zero", "/dev/null", "a.cu", cwd=tmp_path, memory_limit=2 << 30
    )
    assert p.returncode == 1, p.stderr
    assert "Traceback" not in p.stderr and "MemoryError" not in p.stderr
    assert warnings_of(p.stderr) == [
        "warning: /dev/zero: not a regular file; skipped",
        "warning: /dev/null: not a regular file; skipped",
    ]


def test_reader_refuses_what_is_not_a_regular_file(tree, hang_guard):
    for name in ("pipe.cu", "zero.cu", "sock.cu"):
        source, warning = engine.read_source(str(tree / name), name, "cpp")
        assert source is None
        assert warning == f"{name}: not a regular file; skipped"
    source, warning = engine.read_source(str(tree), "src", "cpp")
    assert source is None and warning == "src: is a directory; skipped"
    assert_no_reader(tree / "pipe.cu")


def test_fifo_swapped_in_after_the_stat_does_not_block(tree, monkeypatch, hang_guard):
    """The check before the open can be outrun: the open does not block and is checked again."""
    regular = os.stat(tree / "a.cu")
    real_stat = os.stat
    monkeypatch.setattr(
        os, "stat", lambda p, *a, **k: regular if "pipe" in str(p) else real_stat(p)
    )
    source, warning = engine.read_source(str(tree / "pipe.cu"), "pipe.cu", "cpp")
    assert source is None and warning == "pipe.cu: not a regular file; skipped"


@pytest.mark.parametrize("config", ["kernlint.toml", "pyproject.toml"])
def test_max_file_size(tmp_path, config):
    table = ALL_JIT + "max-file-size = 100\n"
    if config == "pyproject.toml":
        table = "[tool.kernlint]\n" + table
        (tmp_path / "kernlint.toml").unlink()  # (it would win over pyproject.toml)
    (tmp_path / config).write_text(table, encoding="utf-8")
    src = tmp_path / "src"
    src.mkdir()
    (src / "big.cu").write_text(CAFE + " " * (200 - len(CAFE.encode())) + "\n", encoding="utf-8")
    assert (src / "big.cu").stat().st_size == 201
    exact = CAFE + "/" * (99 - len(CAFE.encode())) + "\n"
    (src / "exact.cu").write_text(exact, encoding="utf-8")
    assert (src / "exact.cu").stat().st_size == 100
    for args in (["src"], ["src/big.cu", "src/exact.cu"]):
        p = kernlint("check", "--no-cache", *args, cwd=tmp_path)
        assert "Traceback" not in p.stderr
        assert warnings_of(p.stderr) == [
            "warning: src/big.cu: 201 bytes, larger than max-file-size (100 bytes); skipped"
        ]
        assert p.returncode == 1
        assert "src/exact.cu:1:7: CU001" in p.stdout
        assert "big.cu:" not in p.stdout


def test_default_max_file_size_is_50_mb(tmp_path):
    resolver = ConfigResolver(load_registry(), Overrides())
    assert resolver.for_directory(str(tmp_path)).max_file_size == DEFAULT_MAX_FILE_SIZE
    assert DEFAULT_MAX_FILE_SIZE == 52428800


@pytest.mark.parametrize("value", ["0", "-1", "true", '"1MB"', "1.5", "[1]"])
def test_bad_max_file_size_is_a_config_error(tmp_path, value):
    (tmp_path / "kernlint.toml").write_text(f"max-file-size = {value}\n", encoding="utf-8")
    (tmp_path / "a.cu").write_text(CAFE, encoding="utf-8")
    p = kernlint("check", "--no-cache", ".", cwd=tmp_path)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert "kernlint.toml" in lines[0] and "`max-file-size`" in lines[0]


def test_growing_file_is_read_at_most_to_the_cap_plus_one(tmp_path, monkeypatch):
    """A file whose size says little (it grows, or is endless) is never read past the cap."""
    f = tmp_path / "grows.cu"
    f.write_bytes(b"x" * 1_000_000)
    small = os.stat(f)
    fake = os.stat_result((stat.S_IFREG | 0o644, *small[1:6], 10, *small[7:]))
    assert fake.st_size == 10
    real_read = os.read
    read = []

    def spy_read(fd, n):
        data = real_read(fd, n)
        read.append(len(data))
        return data

    monkeypatch.setattr(os, "stat", lambda *a, **k: fake)
    monkeypatch.setattr(os, "fstat", lambda *a, **k: fake)
    monkeypatch.setattr(os, "read", spy_read)
    source, warning = engine.read_source(str(f), "grows.cu", "cpp", limit=1000)
    assert source is None
    assert warning.startswith("grows.cu: ") and "larger than max-file-size (1000 bytes)" in warning
    assert sum(read) == 1001
    # Under the cap, the whole file (more than its stat said) is read.
    read.clear()
    f.write_bytes(b"int x;\n" * 3)
    source, warning = engine.read_source(str(f), "grows.cu", "cpp", limit=1000)
    assert warning is None and source.data == b"int x;\n" * 3


def test_double_dash_ends_options(tmp_path):
    (tmp_path / "-weird.cu").write_text(CAFE, encoding="utf-8")
    p = kernlint("check", "--no-cache", "--", "-weird.cu", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    assert p.stdout.startswith("-weird.cu:1:7: CU001 ")
    # After `--`, even an option's spelling is a path.
    p = kernlint("check", "--no-cache", "--", "-weird.cu", "--select", cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.strip() == "kernlint: error: --select: no such file or directory"


def test_dash_path_without_double_dash_is_an_option_error(tmp_path):
    (tmp_path / "-weird.cu").write_text(CAFE, encoding="utf-8")
    p = kernlint("check", "--no-cache", "-weird.cu", cwd=tmp_path)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    assert "kernlint: error: unrecognized arguments: -weird.cu" in p.stderr
    assert p.stdout == ""


def test_file_vanishing_after_discovery_is_a_warning(tmp_path, monkeypatch, capsys):
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.cu").write_text(CAFE, encoding="utf-8")
    (src / "gone.cu").write_text(CAFE, encoding="utf-8")
    real_discover = runner.discover

    def discover_then_delete(*args, **kwargs):
        found = list(real_discover(*args, **kwargs))
        assert {os.path.basename(c.abspath) for c in found} == {"a.cu", "gone.cu"}
        os.unlink(src / "gone.cu")
        return found

    monkeypatch.setattr(runner, "discover", discover_then_delete)
    monkeypatch.chdir(tmp_path)
    rc = cli.main(["check", "--cache-dir", str(tmp_path / "cache"), "src"])
    out, err = capsys.readouterr()
    assert rc == 1
    gone = os.path.join("src", "gone.cu")
    assert warnings_of(err) == [
        f"warning: {gone}: cannot read file: No such file or directory; skipped"
    ]
    assert os.path.join("src", "a.cu") + ":1:7: CU001" in out


def test_directory_that_cannot_be_listed_is_a_warning(tmp_path, monkeypatch, capsys):
    # (tests run as root, which can list any directory: the refusal is simulated)
    src = tmp_path / "src"
    (src / "locked").mkdir(parents=True)
    (src / "locked" / "b.cu").write_text(CAFE, encoding="utf-8")
    (src / "a.cu").write_text(CAFE, encoding="utf-8")
    real_scandir = os.scandir

    def scandir(path="."):
        if os.path.basename(os.fspath(path)) == "locked":
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.chdir(tmp_path)
    rc = cli.main(["check", "--no-cache", "src"])
    out, err = capsys.readouterr()
    assert rc == 1
    locked = os.path.join("src", "locked")
    assert warnings_of(err) == [f"warning: {locked}: cannot read directory: Permission denied"]
    assert os.path.join("src", "a.cu") + ":1:7: CU001" in out
    assert "b.cu" not in out
