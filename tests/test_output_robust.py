"""Every output format survives hostile file names and huge lines, and write failures surface.

File names that are not valid UTF-8 (`os.fsdecode` gives lone surrogates) or hold control
characters are linted through the real command line for each format, and each report is
checked the way its consumer reads it: strict UTF-8, JSON, the SARIF 2.1.0 schema and RFC 3986
URIs, well-formed XML, one GitHub workflow command per line. The text excerpt is a bounded
window (the report grows linearly with the findings), and a full disk or a closed pipe on
stdout ends the run cleanly.
"""

from __future__ import annotations

import errno
import io
import json
import os
import re
import subprocess
import sys
from urllib.parse import unquote_to_bytes, urlsplit
from xml.etree import ElementTree as ET

import pytest

from kernlint.model import Diagnostic
from kernlint.output import json_format, printable, text, write_chunks
from kernlint.source import SourceFile

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = os.path.join(HERE, "data", "sarif-schema-2.1.0.json")

# A C++ file with one CU001 (non-ascii-character) finding: line 1, column 7.
BODY = b"// caf\xc3\xa9\n"
NAMES = [
    b"bad\xff.cu",
    b"lat\xe9.cu",
    b"ctl\x01.cu",
    b"esc\x1b[31m.cu",
    b"nl\nx.cu",
    b"with space.cu",
    b"50%.cu",
    b"a#b.cu",
    b"q?.cu",
]
FORMATS = ("text", "json", "github", "sarif", "junit")

# RFC 3986 URI-reference characters: unreserved, reserved, and percent-encoded octets.
URI_CHARS = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?#\[\]]|%[0-9A-Fa-f]{2})*\Z")


@pytest.fixture(autouse=True)
def _all_jit(tmp_path):
    """Every file of a test tree is a JIT source (CU001, the finding printed here, is
    JIT-scoped)."""
    (tmp_path / "kernlint.toml").write_text('jit-roots = ["**"]\n')


def _cli(*args, cwd=None, env=None, stdout=subprocess.PIPE, timeout=300):
    """`python -m kernlint ARGS` with strict UTF-8 stdio (an unencodable name would raise);
    stdout and stderr as bytes."""
    environ = {**os.environ, "PYTHONIOENCODING": "utf-8:strict", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "kernlint", *args],
        cwd=cwd,
        env=environ,
        stdout=stdout,
        stderr=subprocess.PIPE,
        timeout=timeout,
    )


def _create(directory, name: bytes, body: bytes = BODY) -> bytes:
    path = os.path.join(os.fsencode(directory), name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, body)
    finally:
        os.close(fd)
    return path


@pytest.fixture
def hostile(tmp_path):
    (tmp_path / ".git").mkdir()  # (the SARIF root)
    for name in NAMES:
        _create(tmp_path, name)
    return tmp_path


def _raw_controls(s: str) -> list[str]:
    """Control characters other than newline and tab (C0, DEL, C1)."""
    return [c for c in s if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]


def _check(hostile, fmt):
    p = _cli("check", ".", "--no-cache", "--output-format", fmt, cwd=hostile)
    err = p.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err
    assert p.returncode == 1, err
    return p.stdout


@pytest.mark.parametrize("fmt", FORMATS)
def test_output_file_holds_what_stdout_gets(hostile, fmt):
    shown = _check(hostile, fmt)
    p = _cli("check", ".", "--no-cache", "--output-format", fmt, "-o", "report.out", cwd=hostile)
    assert p.returncode == 1 and p.stdout == b"", p.stderr
    assert (hostile / "report.out").read_bytes() == shown


def test_rule_cu001_is_what_the_files_trigger(hostile):
    p = _cli("rule", "CU001")
    assert p.returncode == 0 and b"non-ascii-character" in p.stdout


def test_text_output_for_hostile_names(hostile):
    out = _check(hostile, "text").decode("utf-8")  # strict: valid UTF-8
    assert not _raw_controls(out)
    heads = [line for line in out.splitlines() if ": CU001 " in line]
    assert sorted(h.split(":1:7: ")[0] for h in heads) == sorted(
        [
            "bad\ufffd.cu",
            "lat\ufffd.cu",
            "ctl\\x01.cu",
            "esc\\x1b[31m.cu",
            "nl\\nx.cu",
            "with space.cu",
            "50%.cu",
            "a#b.cu",
            "q?.cu",
        ]
    )
    assert "Found 9 errors" in out


def test_text_output_on_an_ascii_stdout(hostile):
    p = _cli("check", ".", "--no-cache", cwd=hostile, env={"PYTHONIOENCODING": "ascii:strict"})
    assert p.returncode == 1 and b"Traceback" not in p.stderr
    out = p.stdout.decode("ascii")  # what ASCII cannot carry is backslash-escaped
    assert "bad\\ufffd.cu:1:7: CU001" in out and "// caf\\xe9" in out


def test_json_output_for_hostile_names(hostile):
    raw = _check(hostile, "json")
    rows = json.loads(raw.decode("utf-8"))
    got = sorted(r["path"] for r in rows)
    want = sorted(os.fsdecode(n) for n in NAMES)
    # The documented replacement: each byte that is not valid UTF-8 becomes U+FFFD.
    want = sorted(re.sub("[\udc80-\udcff]", "\ufffd", n) for n in want)
    assert got == want
    assert all(not re.search("[\ud800-\udfff]", p) for p in got)


def test_github_output_for_hostile_names(hostile):
    out = _check(hostile, "github").decode("utf-8")
    lines = out.splitlines()  # (splits on every line boundary Python knows)
    assert len(lines) == len(NAMES)
    assert all(line.startswith("::error file=") for line in lines)
    assert not _raw_controls(out)
    files = sorted(re.match(r"::error file=([^,]*),", line).group(1) for line in lines)
    assert files == sorted(
        [
            "bad\ufffd.cu",
            "lat\ufffd.cu",
            "ctl\\x01.cu",
            "esc\\x1b[31m.cu",
            "nl%0Ax.cu",  # the runner's own escapes for CR, LF, %, : and ,
            "with space.cu",
            "50%25.cu",
            "a#b.cu",
            "q?.cu",
        ]
    )


def test_junit_output_for_hostile_names(hostile):
    raw = _check(hostile, "junit")
    raw.decode("utf-8")
    root = ET.fromstring(raw)  # well-formed XML 1.0
    cases = root.find("testsuite").findall("testcase")
    assert len(cases) == len(NAMES) and root.get("failures") == str(len(NAMES))
    files = sorted(c.get("file") for c in cases)
    assert "ctl\\x01.cu" in files and "esc\\x1b[31m.cu" in files and "bad\ufffd.cu" in files
    for case in cases:
        assert not _raw_controls(case.get("name") + case.find("failure").text)


def _sarif_doc(raw):
    jsonschema = pytest.importorskip("jsonschema")
    doc = json.loads(raw.decode("utf-8"))
    with open(SCHEMA) as fh:
        jsonschema.validate(doc, json.load(fh))
    return doc


def _uris(doc):
    return [
        r["locations"][0]["physicalLocation"]["artifactLocation"] for r in doc["runs"][0]["results"]
    ]


def test_sarif_uris_are_valid_and_encode_the_names(hostile):
    doc = _sarif_doc(_check(hostile, "sarif"))
    locations = _uris(doc)
    got = {}
    for loc in locations:
        uri = loc["uri"]
        assert URI_CHARS.match(uri), uri
        parts = urlsplit(uri)
        # A relative reference: no scheme, authority, query or fragment; the path is all of it.
        assert (parts.scheme, parts.netloc, parts.query, parts.fragment) == ("", "", "", "")
        assert parts.path == uri
        assert loc["uriBaseId"] == "%SRCROOT%"
        got[unquote_to_bytes(uri)] = uri
    assert sorted(got) == sorted(NAMES)  # each name's own bytes, percent-decoded
    assert got[b"with space.cu"] == "with%20space.cu"
    assert got[b"50%.cu"] == "50%25.cu"
    assert got[b"a#b.cu"] == "a%23b.cu"
    assert got[b"q?.cu"] == "q%3F.cu"
    assert got[b"bad\xff.cu"] == "bad%FF.cu"
    base = doc["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert URI_CHARS.match(base) and base.endswith("/")
    parts = urlsplit(base)
    assert parts.scheme == "file" and parts.netloc == ""
    assert unquote_to_bytes(parts.path).rstrip(b"/") == os.fsencode(os.path.realpath(hostile))


def test_sarif_absolute_uri_outside_the_root(tmp_path):
    repo = tmp_path / "my repo"
    (repo / ".git").mkdir(parents=True)
    outside = _create(tmp_path, b"out side\xff#1.cu")
    p = _cli("check", "--no-cache", "--output-format", "sarif", os.fsdecode(outside), cwd=repo)
    assert p.returncode == 1, p.stderr
    doc = _sarif_doc(p.stdout)
    (loc,) = _uris(doc)
    assert "uriBaseId" not in loc  # an absolute URI stands alone
    uri = loc["uri"]
    assert URI_CHARS.match(uri), uri
    parts = urlsplit(uri)
    assert (parts.scheme, parts.netloc, parts.query, parts.fragment) == ("file", "", "", "")
    assert unquote_to_bytes(parts.path) == outside
    base = doc["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert "my%20repo" in base and URI_CHARS.match(base)


def test_warnings_on_a_strict_ascii_stderr(tmp_path):
    name = os.fsdecode(_create(tmp_path, b"w\xff\x1b[31m.txt"))
    code = (
        "import sys; sys.stderr.reconfigure(encoding='ascii', errors='strict'); "
        "from kernlint.cli import main; sys.exit(main())"
    )
    p = subprocess.run(
        [sys.executable, "-c", code, "check", "--no-cache", name],
        capture_output=True,
        cwd=tmp_path,
        timeout=120,
    )
    err = p.stderr.decode("ascii")
    assert "Traceback" not in err
    assert err.startswith("warning: ") and "\\x1b[31m.txt" in err and "\x1b" not in err


# -- the bounded excerpt --------------------------------------------------------------------


def test_long_line_excerpt_is_bounded(tmp_path):
    n = 8000
    line = "// " + "ab\u00e9xy " * n  # one 56 KB line, one finding per e-acute
    (tmp_path / "long.cu").write_text(line + "\n", encoding="utf-8")
    code = (
        "import sys; from kernlint.cli import main; rc = main(sys.argv[1:]); "
        "sys.stdout.flush(); "
        # VmHWM is this program's own peak (ru_maxrss would start at the forking pytest's RSS)
        "hwm = open('/proc/self/status').read().split('VmHWM:')[1].split()[0]; "
        "print('maxrss', hwm, file=sys.stderr); "
        "sys.exit(rc)"
    )
    p = subprocess.run(
        [sys.executable, "-c", code, "check", "--no-cache", "long.cu"],
        capture_output=True,
        cwd=tmp_path,
        timeout=600,
    )
    assert p.returncode == 1 and b"Traceback" not in p.stderr, p.stderr
    out = p.stdout.decode("utf-8")
    assert len(p.stdout) < 400 * n  # linear in the findings, with a small constant
    maxrss_kib = int(re.search(rb"maxrss (\d+)", p.stderr).group(1))
    assert maxrss_kib < 400 * 1024  # (unbounded output took 1.8 GB)
    lines = out.splitlines()
    excerpts = [(lines[i + 1], lines[i + 2]) for i, s in enumerate(lines) if ": CU001 " in s]
    assert len(excerpts) == n
    both_cut = 0
    for shown, caret in excerpts:
        assert shown.startswith("    1 | ") and caret.startswith("      | ")
        shown, caret = shown[8:], caret[8:]
        assert len(shown) <= text.WINDOW + 2 * len(text.ELLIPSIS)
        assert caret.count("^") == 1 and shown[caret.index("^")] == "\u00e9"
        both_cut += shown.startswith("...") and shown.endswith("...")
    assert both_cut > n // 2
    assert excerpts[0][0][8:].startswith("// ab\u00e9xy")  # the start of the line is not cut


def _finding(source: SourceFile, start: int, end: int) -> Diagnostic:
    line, col = source.position(start)
    end_line, end_col = source.position(end)
    return Diagnostic(
        source.path, line, col, end_line, end_col, "CU001", "x", "m", "error", None, start, end
    )


def _expanded_caret(source, d):
    shown, caret = text.excerpt(source, d)
    return shown.expandtabs(8), caret.expandtabs(8)


def test_excerpt_keeps_the_caret_under_the_character():
    # Tabs, control characters, invalid bytes and multi-byte characters before the column,
    # on a long line: the caret is under the marked character once tabs are expanded.
    data = b"\t\x1bab\xff\t\xe2\x80\x94" * 40 + b"\tMARK\x01rest" + b"\tz\xc3\xa9" * 60 + b"\n"
    source = SourceFile("t.cu", data, "cpp")
    for start in range(0, len(data) - 1, 7):
        if (data[start] & 0xC0) == 0x80:
            continue  # (inside a UTF-8 sequence: no finding starts there)
        d = _finding(source, start, start + 1)
        shown, caret = text.excerpt(source, d)
        assert len(shown) <= 2 * text.WINDOW  # (escapes widen a character to 4 columns)
        assert not _raw_controls(shown)
        wide_shown, wide_caret = shown.expandtabs(8), caret.expandtabs(8)
        at = wide_caret.index("^")
        first = data[start : start + 4].decode("utf-8", "surrogateescape")[0]
        if first != "\t":  # (a tab's caret is where its expansion starts)
            assert wide_shown[at:].startswith(printable(first)), (start, shown, caret)
    start = data.index(b"MARK")
    d = _finding(source, start, start + 5)  # "MARK\x01": the escape widens the carets
    shown, caret = _expanded_caret(source, d)
    at = caret.index("^")
    assert shown[at : at + 8] == "MARK\\x01" and caret[at:] == "^" * 8
    assert shown.startswith("...") and shown.endswith("...")


def test_excerpt_of_a_short_line_is_the_whole_line():
    source = SourceFile("t.cu", b"a\tb\t\xc3\xa9 end\n", "cpp")
    d = _finding(source, 4, 6)
    assert text.excerpt(source, d) == ("a\tb\t\u00e9 end", " \t \t^")


def test_excerpt_of_a_finding_spanning_lines_marks_to_the_line_end():
    source = SourceFile("t.cu", b"x = " + b"y" * 500 + b"\nnext\n", "cpp")
    d = _finding(source, 4, 510)
    shown, caret = text.excerpt(source, d)
    assert shown.startswith("x = y") and shown.endswith("...")
    assert caret == "    " + "^" * (text.WINDOW - 16)


def test_json_stream_is_the_array_json_dumps_writes():
    d = Diagnostic("a\udcff.cu", 1, 2, 1, 3, "CU001", "n", "m\x1b", "error")
    for rows in ([], [d], [d, d, d]):
        want = json.dumps([json_format.to_json_obj(r, None) for r in rows], indent=2) + "\n"
        assert json_format.render(rows, {}) == want
    assert json.loads(json_format.render([d], {}))[0]["path"] == "a\ufffd.cu"


# -- write failures -------------------------------------------------------------------------


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("fmt", FORMATS)
def test_full_disk_on_stdout(hostile, fmt):
    with open("/dev/full", "wb") as full:
        p = _cli("check", ".", "--no-cache", "--output-format", fmt, cwd=hostile, stdout=full)
    assert p.returncode == 2
    assert p.stderr.decode() == (
        "kernlint: error: cannot write the report: No space left on device\n"
    )


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("args", [("check", "clean.cu", "--no-cache"), ("rules",)])
def test_full_disk_on_a_small_report(tmp_path, args):
    # A few bytes stay in the buffer until the last flush: its failure is reported too.
    (tmp_path / "clean.cu").write_text("int x;\n")
    with open("/dev/full", "wb") as full:
        p = _cli(*args, cwd=tmp_path, stdout=full)
    assert p.returncode == 2
    assert p.stderr.decode().startswith("kernlint: error: cannot write the report: ")
    assert p.stderr.count(b"\n") == 1


def test_output_file_on_a_full_disk_exits_2(hostile):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    p = _cli("check", ".", "--no-cache", "-o", "/dev/full", cwd=hostile)
    assert p.returncode == 2 and p.stderr.decode() == (
        "kernlint: error: /dev/full: No space left on device\n"
    )


@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_closed_pipe_is_a_quiet_exit(tmp_path, fmt, unbuffered):
    # 3,000 findings: far more than a pipe buffer holds, so kernlint is still writing.
    (tmp_path / "many.cu").write_bytes(b"// caf\xc3\xa9\n" * 3000)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    proc = subprocess.Popen(
        [sys.executable, "-m", "kernlint", "check", "--no-cache", "--output-format", fmt, "."],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdout.readline()
        proc.stdout.close()
        err = proc.stderr.read().decode("utf-8", "replace")
        rc = proc.wait(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert err == ""
    assert rc == 141  # (not 1: the report was not all written)


class _Trickle(io.RawIOBase):
    """An unbuffered binary stream that takes at most `step` bytes per write (as a pipe or a
    write over 2 GiB does), and fails once `fail_after` bytes were written."""

    def __init__(self, step, fail_after=None):
        self.data = bytearray()
        self.step, self.fail_after = step, fail_after

    def writable(self):
        return True

    def write(self, b):
        if self.fail_after is not None and len(self.data) >= self.fail_after:
            raise OSError(errno.ENOSPC, "No space left on device")
        n = min(self.step, len(b))
        self.data += bytes(b[:n])
        return n


def test_partial_writes_are_completed():
    raw = _Trickle(step=1000)
    stream = io.TextIOWrapper(raw, encoding="utf-8", write_through=True)
    pieces = [f"finding {i} caf\u00e9\n" for i in range(20000)] + ["x" * 300000 + "\n"]
    write_chunks(stream, pieces)
    assert raw.data.decode("utf-8") == "".join(pieces)


def test_a_failing_partial_write_raises():
    raw = _Trickle(step=1000, fail_after=5000)
    stream = io.TextIOWrapper(raw, encoding="utf-8", write_through=True)
    with pytest.raises(OSError) as info:
        write_chunks(stream, ["y" * 100000])
    assert info.value.errno == errno.ENOSPC and len(raw.data) == 5000


def test_a_crashing_rule_names_itself_and_the_file(tmp_path, capsys):
    """A bug in one rule on one file: a one-line message naming both, the other files still
    linted, no traceback."""
    from kernlint.cli import main
    from kernlint.registry import load_registry

    rule = load_registry().by_code["CU001"]
    original = rule.check

    def boom(ctx):
        if ctx.source.path.endswith("bad.cuh"):
            raise ValueError("unexpected node")
        original(ctx)

    (tmp_path / "bad.cuh").write_text("namespace sglang {}  // caf\u00e9\n", encoding="utf-8")
    (tmp_path / "good.cuh").write_text("namespace sglang {}  // caf\u00e9\n", encoding="utf-8")
    (tmp_path / "kernlint.toml").write_text('jit-roots = ["**"]\n')
    object.__setattr__(rule, "check", boom)
    try:
        rc = main(["check", "--no-cache", "--select", "CU001", str(tmp_path)])
    finally:
        object.__setattr__(rule, "check", original)
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    assert "bad.cuh: internal error in rule CU001 (ValueError: unexpected node)" in err
    assert "good.cuh" in out and rc == 1  # (the other file's finding is still reported)
