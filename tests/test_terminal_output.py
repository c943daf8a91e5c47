"""The terminal report, end to end: colour (a terminal, a pipe, NO_COLOR, FORCE_COLOR, --color),
the full / concise / grouped formats, fix titles and the [*] / [-] marks, the summary by
severity, --statistics in JSON, and findings that say what to do."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from kernlint.cli import main

# CU001 (an error with a safe fix), CU003 twice (warnings with unsafe fixes), CU002 (an error
# without a fix), in a tree whose every file is a JIT source.
A_CUH = (
    "namespace sglang {\n"
    "// a \u2014 b\n"
    "__global__ void k(float* out, const float* in) { out[threadIdx.x] = in[threadIdx.x]; }\n"
    "}  // namespace sglang\n"
)
B_CUH = "int g = 0;\n"
SGR = re.compile(r"\x1b\[[0-9;]*m")
A = os.path.join("kernels", "jit", "csrc", "a.cuh")
B = os.path.join("kernels", "jit", "csrc", "b.cuh")


@pytest.fixture
def tree(tmp_path):
    d = tmp_path / "kernels" / "jit" / "csrc"
    d.mkdir(parents=True)
    (d / "a.cuh").write_text(A_CUH, encoding="utf-8")
    (d / "b.cuh").write_text(B_CUH, encoding="utf-8")
    return tmp_path


def kernlint(cwd, *args, env=None):
    """`python -m kernlint check --no-cache ARGS kernels` in `cwd`, stdout a pipe."""
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    environ.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "kernlint", "check", "--no-cache", *args, "kernels"],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=environ,
        timeout=120,
    )


def plain(s: str) -> str:
    return SGR.sub("", s)


# -- colour ----------------------------------------------------------------------------------


def test_piped_output_has_no_colour(tree):
    p = kernlint(tree)
    assert p.returncode == 1, p.stderr
    assert "\x1b" not in p.stdout
    assert f"{A}:2:6: CU001 [*] [non-ascii-character]" in p.stdout


def test_colour_always_marks_path_code_caret_and_summary(tree):
    p = kernlint(tree, "--color", "always")
    assert p.returncode == 1, p.stderr
    out = p.stdout
    cyan_colon = "\x1b[36m:\x1b[0m"
    # The path bold, `:` cyan, the code in its severity's colour (CU001 an error: red).
    assert f"\x1b[1m{A}\x1b[0m{cyan_colon}2{cyan_colon}6{cyan_colon} \x1b[1;31mCU001\x1b[0m" in out
    # CU003 is a warning: yellow; its unsafe-fix mark yellow, CU001's safe-fix mark cyan.
    assert "\x1b[1;33mCU003\x1b[0m [\x1b[33m-\x1b[0m]" in out
    assert "\x1b[1;31mCU001\x1b[0m [\x1b[36m*\x1b[0m]" in out
    # The caret in the severity's colour, the gutter bold blue, `help` bold cyan.
    assert "      \x1b[1;94m|\x1b[0m      \x1b[1;31m^\x1b[0m\n" in out
    assert "\x1b[1;94m    2\x1b[0m \x1b[1;94m|\x1b[0m // a \u2014 b\n" in out
    assert "\x1b[1;96mhelp\x1b[0m: Replace with `--`\n" in out
    assert "\x1b[1mFound 2 errors, 2 warnings.\x1b[0m\n" in out
    assert "[\x1b[36m*\x1b[0m] 1 fixable with `--fix`" in out
    # Without the escapes it is the piped report, byte for byte.
    assert plain(out) == kernlint(tree).stdout


def test_all_checks_passed_in_green(tmp_path):
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "ok.py").write_text("x = 1\n", encoding="utf-8")
    p = kernlint(tmp_path, "--color", "always")
    assert p.returncode == 0 and p.stdout == "\x1b[1;32mAll checks passed!\x1b[0m\n"


@pytest.mark.parametrize(
    "args, env, coloured",
    [
        ((), {"FORCE_COLOR": "1"}, True),
        ((), {"FORCE_COLOR": ""}, False),  # (an empty value sets nothing)
        ((), {"NO_COLOR": "1", "FORCE_COLOR": "1"}, False),
        ((), {"NO_COLOR": "", "FORCE_COLOR": "1"}, True),
        (("--color", "always"), {"NO_COLOR": "1"}, True),  # the flag wins
        (("--color", "never"), {"FORCE_COLOR": "1"}, False),
        (("--color", "auto"), {"FORCE_COLOR": "1"}, True),
    ],
)
def test_colour_settings(tree, args, env, coloured):
    p = kernlint(tree, *args, env=env)
    assert p.returncode == 1, p.stderr
    assert ("\x1b[" in p.stdout) == coloured
    assert plain(p.stdout) == kernlint(tree).stdout


def _on_a_terminal(cwd, *args, env=None):
    """Run kernlint with stdout on a pseudo-terminal; what it wrote there."""
    import pty

    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    environ["TERM"] = "xterm"
    environ.update(env or {})
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kernlint", "check", "--no-cache", *args, "kernels"],
            cwd=cwd,
            stdout=follower,
            stderr=subprocess.DEVNULL,
            env=environ,
        )
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                data = os.read(leader, 65536)
            except OSError:  # (EIO: the terminal's other side closed)
                break
            if not data:
                break
            chunks.append(data)
        assert proc.wait(timeout=120) == 1
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)
    return b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals")
def test_colour_in_a_terminal_unless_no_color(tree):
    out = _on_a_terminal(tree)
    assert "\x1b[1;31mCU001\x1b[0m" in out
    assert plain(out) == kernlint(tree).stdout
    assert "\x1b" not in _on_a_terminal(tree, env={"NO_COLOR": "1"})
    assert "\x1b" not in _on_a_terminal(tree, "--color", "never")
    assert "\x1b" not in _on_a_terminal(tree, env={"TERM": "dumb"})


def test_report_file_is_plain_unless_always(tree):
    p = kernlint(tree, "-o", "report.txt", env={"FORCE_COLOR": "1"})
    assert p.returncode == 1 and p.stdout == ""
    report = (tree / "report.txt").read_text(encoding="utf-8")
    assert "\x1b" not in report and "CU001" in report
    kernlint(tree, "-o", "report.txt", "--color", "always")
    assert "\x1b[1;31mCU001" in (tree / "report.txt").read_text(encoding="utf-8")


def test_colour_never_lets_a_name_colour_the_terminal(tmp_path):
    d = tmp_path / "kernels" / "jit" / "csrc"
    d.mkdir(parents=True)
    (d / "esc\x1b[31m.cuh").write_text(B_CUH, encoding="utf-8")
    p = kernlint(tmp_path, "--color", "always")
    assert "esc\\x1b[31m.cuh" in p.stdout
    assert "\x1b[31m" not in p.stdout.replace("\x1b[1;31m", "")  # only kernlint's own codes


def test_bad_color_value_is_a_usage_error(tree):
    p = kernlint(tree, "--color", "sometimes")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "--color" in p.stderr and "invalid choice" in p.stderr


# -- formats -----------------------------------------------------------------------------------


def test_full_is_the_default_and_text_its_old_name(tree):
    default = kernlint(tree).stdout
    assert kernlint(tree, "--output-format", "full").stdout == default
    assert kernlint(tree, "--output-format", "text").stdout == default
    # Each finding: its line, the source line and caret, the fix's title, a blank line.
    assert (
        f"{A}:2:6: CU001 [*] [non-ascii-character] non-ASCII character: U+2014 EM DASH; "
        "replace it with `--`\n"
        "    2 | // a \u2014 b\n"
        "      |      ^\n"
        "help: Replace with `--`\n\n"
    ) in default
    # A finding without a fix has no help line.
    assert default.endswith(
        f"{B}:1:1: CU002 [code-outside-sglang-namespace] declaration `g` is in the global "
        "namespace, not inside `namespace sglang`: enclose it in `namespace sglang { ... }`\n"
        "    1 | int g = 0;\n"
        "      | ^^^^^^^^^^\n\n"
        "Found 2 errors, 2 warnings.\n"
        "[*] 1 fixable with `--fix` ([-] 2 unsafe fixes available with `--fix --unsafe-fixes`).\n"
    )


def test_unsafe_fix_title_and_note(tree):
    out = kernlint(tree).stdout
    block = out.split(f"{A}:3:19: ")[1].split("\n\n")[0]
    assert block.startswith("CU003 [-] [kernel-pointer-not-restrict] ")
    assert block.endswith(
        "help: Add `__restrict__`\nnote: this is an unsafe fix: it may change what the code does"
    )
    # --no-show-source drops the source line and caret, never the fix's title.
    out = kernlint(tree, "--no-show-source").stdout
    assert " | " not in out
    assert f"{A}:3:19: CU003 [-] [kernel-pointer-not-restrict] " in out
    assert out.count("help: Add `__restrict__`\n") == 2


def test_concise(tree):
    p = kernlint(tree, "--output-format", "concise")
    assert p.returncode == 1
    lines = p.stdout.splitlines()
    assert [line.split(": ", 1)[0] for line in lines[:4]] == [
        f"{A}:2:6",
        f"{A}:3:19",
        f"{A}:3:31",
        f"{B}:1:1",
    ]
    assert lines[1].startswith(f"{A}:3:19: CU003 [-] [kernel-pointer-not-restrict] pointer ")
    assert lines[4:] == [
        "Found 2 errors, 2 warnings.",
        "[*] 1 fixable with `--fix` ([-] 2 unsafe fixes available with `--fix --unsafe-fixes`).",
    ]


def test_grouped(tree):
    p = kernlint(tree, "--output-format", "grouped")
    assert p.returncode == 1
    out = p.stdout
    assert out.startswith(
        f"{A}:\n"
        "  2:6  CU001 [*] [non-ascii-character] non-ASCII character: U+2014 EM DASH; "
        "replace it with `--`\n"
        "  3:19 CU003 [-] [kernel-pointer-not-restrict] pointer parameter `out` of kernel `k` "
    )
    groups = out.split("\n\n")
    assert [g.splitlines()[0] for g in groups[:2]] == [f"{A}:", f"{B}:"]
    assert [len(g.splitlines()) for g in groups[:2]] == [4, 2]
    assert groups[2] == (
        "Found 2 errors, 2 warnings.\n"
        "[*] 1 fixable with `--fix` ([-] 2 unsafe fixes available with `--fix --unsafe-fixes`).\n"
    )
    coloured = kernlint(tree, "--output-format", "grouped", "--color", "always").stdout
    assert f"\x1b[4m{A}\x1b[0m:\n" in coloured and plain(coloured) == out


# -- marks and the summary ---------------------------------------------------------------------


def test_unsafe_fixes_turn_the_marks_into_stars(tree):
    out = kernlint(tree, "--output-format", "concise", "--unsafe-fixes").stdout
    assert out.count(" CU003 [*] ") == 2 and "[-]" not in out
    assert out.endswith("Found 2 errors, 2 warnings.\n[*] 3 fixable with `--fix`.\n")


@pytest.mark.parametrize(
    "select, summary",
    [
        ("CU001", "Found 1 error.\n[*] 1 fixable with `--fix`.\n"),
        ("CU002", "Found 1 error.\n"),
        ("CU003", "Found 2 warnings.\n[-] 2 unsafe fixes available with `--fix --unsafe-fixes`.\n"),
        ("CU001,CU002", "Found 2 errors.\n[*] 1 fixable with `--fix`.\n"),
    ],
)
def test_summary_counts_by_severity(tree, select, summary):
    out = kernlint(tree, "--select", select, "--output-format", "concise").stdout
    assert out.endswith("\n" + summary)


def test_summary_singular_unsafe_fix(tree):
    (tree / "kernels" / "jit" / "csrc" / "a.cuh").write_text(
        A_CUH.replace("const float* in", "const float* __restrict__ in"), encoding="utf-8"
    )
    out = kernlint(tree, "--select", "CU003", "--output-format", "concise").stdout
    assert out.endswith(
        "\nFound 1 warning.\n[-] 1 unsafe fix available with `--fix --unsafe-fixes`.\n"
    )


def test_info_findings_are_counted_as_such():
    from kernlint.model import Diagnostic
    from kernlint.output import text

    def diag(severity):
        return Diagnostic("a.cu", 1, 1, 1, 2, "X", "x", "m", severity)

    counts = text.severity_counts([diag("info"), diag("error"), diag("info"), diag("warning")])
    assert list(counts.items()) == [("error", 1), ("warning", 1), ("info", 2)]
    assert text.summary(counts, 0) == "Found 1 error, 1 warning, 2 info findings.\n"


def test_statistics_marks(tree):
    out = kernlint(tree, "--statistics").stdout.splitlines()
    assert [line.split() for line in out[:3]] == [
        ["2", "CU003", "[-]", "kernel-pointer-not-restrict"],
        ["1", "CU001", "[*]", "non-ascii-character"],
        ["1", "CU002", "code-outside-sglang-namespace"],
    ]
    coloured = kernlint(tree, "--statistics", "--color", "always").stdout
    assert "\x1b[1m2\x1b[0m\t\x1b[1;33mCU003\x1b[0m\t[\x1b[33m-\x1b[0m]" in coloured


# -- JSON statistics --------------------------------------------------------------------------


def test_json_statistics_one_object_per_rule_and_totals(tree):
    findings = json.loads(kernlint(tree, "--output-format", "json").stdout)
    assert isinstance(findings, list) and len(findings) == 4  # (the list without --statistics)
    p = kernlint(tree, "--output-format", "json", "--statistics")
    assert p.returncode == 1, p.stderr
    obj = json.loads(p.stdout)
    assert obj["rules"] == [
        {"code": "CU003", "name": "kernel-pointer-not-restrict", "count": 2, "fixable": False},
        {"code": "CU001", "name": "non-ascii-character", "count": 1, "fixable": True},
        {"code": "CU002", "name": "code-outside-sglang-namespace", "count": 1, "fixable": False},
    ]
    assert obj["total"] == len(findings) and obj["fixable"] == 1
    assert obj["files"]["checked"] == 2
    # No colour in JSON, whatever is asked.
    assert kernlint(tree, "--output-format", "json", "--color", "always").stdout == (
        kernlint(tree, "--output-format", "json").stdout
    )


# -- findings say what to do -------------------------------------------------------------------


def test_messages_say_what_to_do(tree):
    d = tree / "kernels" / "jit" / "csrc"
    (d / "c.cuh").write_text(
        'namespace sglang {\nconst char* s = "caf\u00e9";\n// zero\u200bwidth\n}\n',
        encoding="utf-8",
    )
    rows = json.loads(kernlint(tree, "--output-format", "json", "--select", "CU001,CU003").stdout)
    messages = {(r["path"], r["line"], r["column"]): r["message"] for r in rows}
    assert messages[(A, 2, 6)] == "non-ASCII character: U+2014 EM DASH; replace it with `--`"
    c = os.path.join("kernels", "jit", "csrc", "c.cuh")
    assert messages[(c, 2, 21)] == (
        "non-ASCII character: U+00E9 LATIN SMALL LETTER E WITH ACUTE; write it in ASCII "
        "(in a string literal, as the escape `\\u00e9`)"
    )
    assert messages[(c, 3, 8)] == "non-ASCII character: U+200B ZERO WIDTH SPACE; remove it"
    assert messages[(A, 3, 19)] == (
        "pointer parameter `out` of kernel `k` is not `__restrict__`: "
        "declare it `float* __restrict__` (when it aliases no other pointer)"
    )
    assert messages[(A, 3, 31)] == (
        "pointer parameter `in` of kernel `k` is not `__restrict__`: "
        "declare it `const float* __restrict__` (when it aliases no other pointer)"
    )


def test_main_in_process_concise(tree, capsys, monkeypatch):
    monkeypatch.chdir(tree)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    rc = main(["check", "--no-cache", "--output-format", "concise", "--color", "never", "kernels"])
    out = capsys.readouterr().out
    assert rc == 1 and "\x1b" not in out
    assert out.splitlines()[-2] == "Found 2 errors, 2 warnings."


def test_fixed_findings_are_counted_by_severity(tree):
    # CU001 is an error, CU003 a warning: the summary says which were fixed.
    p = kernlint(tree, "--fix", "--unsafe-fixes")
    assert p.returncode == 1, p.stderr
    assert "Fixed 1 error, 2 warnings.\n" in p.stdout
    assert "Found 1 error.\n" in p.stdout  # (CU002 in b.cuh has no fix)
    only = kernlint(tree, "--fix", "--unsafe-fixes", "--fix-only")
    assert only.stdout == ""  # (everything fixable was fixed by the first run)


def test_fix_only_and_stdin_count_fixed_warnings(tree):
    a = tree / A
    a.write_text(A_CUH.replace("\u2014", "-"), encoding="utf-8")
    p = kernlint(tree, "--fix-only", "--unsafe-fixes")
    assert p.returncode == 0, p.stderr
    assert p.stdout == "Fixed 2 warnings.\n"
    fed = subprocess.run(
        [sys.executable, "-m", "kernlint", "check", "--no-cache", "--stdin-filename", A]
        + ["--diff", "--unsafe-fixes", "-"],
        cwd=tree,
        input=A_CUH,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Would fix 1 error, 2 warnings.\n" in fed.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals")
def test_stdin_fix_colours_the_report_on_a_terminal_stderr(tree):
    # With `--fix` and stdin, stdout carries the fixed text (never coloured) and the report
    # goes to stderr: its colour follows stderr.
    import pty

    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    environ["TERM"] = "xterm"
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kernlint", "check", "--no-cache", "--stdin-filename", A]
            + ["--fix", "-"],
            cwd=tree,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=follower,
            env=environ,
        )
        os.close(follower)
        follower = -1
        out, _ = proc.communicate(A_CUH.encode(), timeout=120)
        chunks = []
        while True:
            try:
                data = os.read(leader, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)
    err = b"".join(chunks).decode("utf-8")
    assert out.decode() == A_CUH.replace("\u2014", "--")  # (the fixed text, no escapes)
    assert "\x1b[" in err and "CU003" in plain(err) and "Fixed 1 error." in plain(err)
