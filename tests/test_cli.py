"""The command line, end to end: formats, exit codes, selection, config, suppressions, bad input."""

from __future__ import annotations

import json
import os
import stat

import pytest
from cli_support import run

NON_ASCII_CU = "namespace sglang {\n// a \u2014 b\nint x = 0;\n}  // namespace sglang\n"
# A config making every file of a test tree a JIT source (CU001, like CU002, is JIT-scoped).
ALL_JIT = 'jit-roots = ["**"]\n'


@pytest.fixture
def jit(tmp_path):
    d = tmp_path / "kernels" / "jit" / "csrc"
    d.mkdir(parents=True)
    return d


def test_version():
    p = run("--version")
    assert p.returncode == 0
    assert p.stdout.startswith("kernlint ")


def test_text_output_and_exit_code(jit, tmp_path):
    f = jit / "a.cuh"
    f.write_text(NON_ASCII_CU, encoding="utf-8")
    p = run("check", "kernels", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    first = p.stdout.splitlines()[0]
    path = os.path.join("kernels", "jit", "csrc", "a.cuh")
    assert (
        first
        == f"{path}:2:6: CU001 [*] [non-ascii-character] non-ASCII character: U+2014 EM DASH; "
        "replace it with `--`"
    )
    assert "    2 | // a \u2014 b" in p.stdout
    assert "|      ^" in p.stdout
    assert "Found 1 error.\n[*] 1 fixable with `--fix`." in p.stdout


def test_clean_exit_zero(jit, tmp_path):
    (jit / "ok.cuh").write_text("namespace sglang {\nint x = 0;\n}\n")
    p = run("check", str(jit))
    assert p.returncode == 0
    assert "All checks passed!" in p.stdout


def test_json_output(jit):
    f = jit / "a.cuh"
    f.write_text("int g = 0;\n" + NON_ASCII_CU, encoding="utf-8")
    p = run("check", str(f), "--output-format", "json")
    assert p.returncode == 1
    data = json.loads(p.stdout)
    assert [(d["code"], d["line"], d["column"]) for d in data] == [("CU002", 1, 1), ("CU001", 3, 6)]
    d = data[1]
    assert set(d) >= {
        "path",
        "line",
        "column",
        "end_line",
        "end_column",
        "code",
        "name",
        "message",
        "severity",
        "fix",
    }
    assert d["end_column"] == 7
    assert d["fix"]["applicability"] == "safe"
    assert d["fix"]["edits"][0]["content"] == "--"
    assert data[0]["fix"] is None


def test_select_ignore_by_code_name_prefix(jit):
    f = jit / "a.cuh"
    f.write_text("int g = 0;\n" + NON_ASCII_CU, encoding="utf-8")

    def codes(*args):
        p = run("check", str(f), "--output-format", "json", *args)
        return sorted({d["code"] for d in json.loads(p.stdout)})

    assert codes() == ["CU001", "CU002"]
    assert codes("--select", "CU001") == ["CU001"]
    assert codes("--select", "code-outside-sglang-namespace") == ["CU002"]
    assert codes("--select", "CU") == ["CU001", "CU002"]
    assert codes("--ignore", "non-ascii-character") == ["CU002"]
    assert codes("--select", "CU001", "--extend-select", "CU002") == ["CU001", "CU002"]


def test_unknown_selector_is_usage_error(jit):
    p = run("check", str(jit), "--select", "CU999")
    assert p.returncode == 2
    assert "unknown rule or prefix `CU999`" in p.stderr


def test_bad_option_exit_2():
    p = run("check", "--no-such-option")
    assert p.returncode == 2


def test_nonexistent_path_exit_2(tmp_path):
    p = run("check", str(tmp_path / "missing.cu"))
    assert p.returncode == 2
    assert "missing.cu: no such file or directory" in p.stderr
    assert "Traceback" not in p.stderr


def test_exit_zero(jit):
    (jit / "a.cuh").write_text(NON_ASCII_CU, encoding="utf-8")
    p = run("check", str(jit), "--exit-zero")
    assert p.returncode == 0
    assert "Found 1 error" in p.stdout


def test_statistics(jit):
    (jit / "a.cuh").write_text("int g = 0;\nint h = 0;\n" + NON_ASCII_CU, encoding="utf-8")
    p = run("check", str(jit), "--statistics")
    assert p.returncode == 1
    lines = p.stdout.splitlines()
    assert lines[0].split() == ["2", "CU002", "code-outside-sglang-namespace"]
    assert lines[1].split() == ["1", "CU001", "[*]", "non-ascii-character"]


def test_quiet(jit):
    (jit / "a.cuh").write_text(NON_ASCII_CU, encoding="utf-8")
    p = run("check", str(jit), "-q")
    assert "Found" not in p.stdout
    assert "CU001" in p.stdout


def test_fix_and_diff(jit):
    f = jit / "a.cuh"
    f.write_text(NON_ASCII_CU, encoding="utf-8")
    os.chmod(f, 0o640)
    p = run("check", str(f), "--diff")
    assert p.returncode == 1
    assert "-// a \u2014 b" in p.stdout and "+// a -- b" in p.stdout
    assert f.read_text(encoding="utf-8") == NON_ASCII_CU  # --diff writes nothing
    p = run("check", str(f), "--fix")
    assert p.returncode == 0, p.stdout
    assert "Fixed 1 error." in p.stdout
    assert f.read_text(encoding="utf-8") == NON_ASCII_CU.replace("\u2014", "--")
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o640
    before = f.read_bytes()
    p = run("check", str(f), "--fix")
    assert p.returncode == 0
    assert f.read_bytes() == before  # idempotent


def test_fix_keeps_crlf_and_unfixable_remain(jit):
    f = jit / "a.cuh"
    f.write_bytes(
        'namespace sglang {\r\n// \u201cq\u201d\r\nconst char* s = "\u00e9";\r\n}\r\n'.encode()
    )
    p = run("check", str(f), "--fix")
    assert p.returncode == 1
    assert f.read_bytes() == b'namespace sglang {\r\n// "q"\r\nconst char* s = "\xc3\xa9";\r\n}\r\n'
    assert "CU001" in p.stdout and ":3:18:" in p.stdout


def test_rules_listing():
    p = run("rules", "--format", "json")
    assert p.returncode == 0
    rows = json.loads(p.stdout)
    names = {r["name"] for r in rows}
    assert {"non-ascii-character", "code-outside-sglang-namespace", "unused-suppression"} <= names
    for r in rows:
        assert set(r) >= {"code", "name", "summary", "languages", "fixable", "status"}
    text = run("rules").stdout
    assert "CU001" in text and "non-ascii-character" in text


def test_rule_doc():
    p = run("rule", "CU002")
    assert p.returncode == 0
    assert "## Why is this bad?" in p.stdout
    assert run("rule", "non-ascii-character").returncode == 0
    p = run("rule", "nope")
    assert p.returncode == 2


# -- configuration --------------------------------------------------------------------------


def test_config_select_and_per_file_ignores(tmp_path, jit):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.kernlint]\nselect = ["CU002"]\n'
        '[tool.kernlint.per-file-ignores]\n"kernels/jit/csrc/skip_*.cuh" = ["CU002"]\n'
    )
    (jit / "a.cuh").write_text("int g = 0;\n" + NON_ASCII_CU, encoding="utf-8")
    (jit / "skip_me.cuh").write_text("int g = 0;\n")
    p = run("check", ".", "--output-format", "json", cwd=tmp_path)
    found = [(os.path.basename(d["path"]), d["code"]) for d in json.loads(p.stdout)]
    assert found == [("a.cuh", "CU002")]


def test_config_unknown_key(tmp_path):
    (tmp_path / "kernlint.toml").write_text('selct = ["CU001"]\n')
    (tmp_path / "a.cu").write_text("int x;\n")
    p = run("check", ".", cwd=tmp_path)
    assert p.returncode == 2
    assert "kernlint.toml: unknown key `selct`" in p.stderr


def test_config_unknown_code(tmp_path):
    (tmp_path / "kernlint.toml").write_text('ignore = ["CU9"]\n')
    (tmp_path / "a.cu").write_text("int x;\n")
    p = run("check", ".", cwd=tmp_path)
    assert p.returncode == 2
    assert "kernlint.toml" in p.stderr and "CU9" in p.stderr


def test_config_invalid_toml(tmp_path):
    (tmp_path / "kernlint.toml").write_text("select = [\n")
    (tmp_path / "a.cu").write_text("int x;\n")
    p = run("check", ".", cwd=tmp_path)
    assert p.returncode == 2
    assert "invalid TOML" in p.stderr and "Traceback" not in p.stderr


def test_config_exclude_and_jit_roots(tmp_path):
    (tmp_path / "kernlint.toml").write_text('extend-exclude = ["gen/"]\njit-roots = ["src/**"]\n')
    (tmp_path / "src").mkdir()
    (tmp_path / "gen").mkdir()
    (tmp_path / "other").mkdir()
    (tmp_path / "src" / "k.cuh").write_text("int g = 0;\n")
    (tmp_path / "gen" / "k.cuh").write_text("int g = 0; // \u2014\n", encoding="utf-8")
    (tmp_path / "other" / "k.cuh").write_text("int g = 0;\n")
    p = run("check", ".", "--output-format", "json", cwd=tmp_path)
    found = [(d["path"], d["code"]) for d in json.loads(p.stdout)]
    assert found == [(os.path.join("src", "k.cuh"), "CU002")]


def test_config_flag(tmp_path, jit):
    cfg = tmp_path / "custom.toml"
    cfg.write_text('select = ["CU001"]\n')
    (jit / "a.cuh").write_text("int g = 0;\n")
    assert run("check", str(jit), "--config", str(cfg)).returncode == 0
    assert run("check", str(jit)).returncode == 1


def test_gitignore_honored(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("ignored/\n*.gen.cu\n")
    (tmp_path / "kernlint.toml").write_text(ALL_JIT)
    (tmp_path / "ignored").mkdir()
    (tmp_path / "ignored" / "a.cu").write_text("// \u2014\n", encoding="utf-8")
    (tmp_path / "b.gen.cu").write_text("// \u2014\n", encoding="utf-8")
    (tmp_path / "c.cu").write_text("// \u2014\n", encoding="utf-8")
    p = run("check", ".", "--output-format", "json", cwd=tmp_path)
    assert [d["path"] for d in json.loads(p.stdout)] == ["c.cu"]
    # An explicitly named file is linted even when ignored (like ruff) ...
    p = run("check", "b.gen.cu", "--output-format", "json", cwd=tmp_path)
    assert len(json.loads(p.stdout)) == 1


def test_nested_gitignore_reincludes(tmp_path):
    """A deeper .gitignore overrides an outer one: `!keep.cu` re-includes a file an outer `*.cu`
    ignores; a directory pattern ignores what is inside."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("*.cu\nbuild/\n")
    (tmp_path / "kernlint.toml").write_text(ALL_JIT)
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / ".gitignore").write_text("!keep.cu\n")
    for rel in ("a.cu", "sub/keep.cu", "sub/other.cu", "build/x.cuh", "c.cuh"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("// \u2014\n", encoding="utf-8")
    p = run("check", ".", "--output-format", "json", cwd=tmp_path)
    assert sorted(d["path"] for d in json.loads(p.stdout)) == ["c.cuh", "sub/keep.cu"]


def test_force_exclude(tmp_path):
    (tmp_path / "kernlint.toml").write_text('extend-exclude = ["third_party/"]\n' + ALL_JIT)
    (tmp_path / "third_party").mkdir()
    f = tmp_path / "third_party" / "x.cu"
    f.write_text("// \u2014\n", encoding="utf-8")
    assert run("check", "third_party/x.cu", cwd=tmp_path).returncode == 1
    assert run("check", "--force-exclude", "third_party/x.cu", cwd=tmp_path).returncode == 0


# -- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,content,expect_code,expect_warning",
    [
        ("empty.cu", b"", 0, None),
        ("binary.cu", b"\x7fELF\x00\x00\x01\x02", 0, "binary file"),
        ("nul.cuh", b"int x = 0;\x00\n", 0, "binary file"),
        ("bom.cuh", b"\xef\xbb\xbfnamespace sglang {}\n", 1, None),
        ("invalid.cu", b"// caf\xe9\n", 1, None),
        ("crlf.cuh", b"namespace sglang {\r\nint x;\r\n}\r\n", 0, None),
        ("syntax.cu", b"namespace sglang { int f( {{{ ]]] }\n", 0, None),
        ("syntax.py", b"def f(:\n", 0, None),
        ("latin1.py", b"x = '\xe9'\n", 0, None),
        # a string cut off by the end of the file after a backslash (the lexer used to crash)
        ("eof.cu", b'// caf\xe2\x80\x94\nconst char* s = "abc\\', 1, None),
    ],
)
def test_bad_input_never_crashes(jit, name, content, expect_code, expect_warning):
    f = jit / name
    f.write_bytes(content)
    p = run("check", str(f))
    assert "Traceback" not in p.stderr, p.stderr
    assert p.returncode == expect_code, (p.stdout, p.stderr)
    if expect_warning:
        assert expect_warning in p.stderr and name in p.stderr


def test_unreadable_file(jit):
    if os.geteuid() == 0:
        pytest.skip("root can read any file")
    f = jit / "secret.cu"
    f.write_text("int x;\n")
    os.chmod(f, 0)
    p = run("check", str(jit))
    assert "secret.cu: cannot read file" in p.stderr
    assert "Traceback" not in p.stderr


def test_unreadable_file_as_root_via_directory(jit, monkeypatch):
    # A FIFO named on the command line is never opened: a warning names it, the run goes on.
    fifo = jit / "pipe.cu"
    os.mkfifo(fifo)
    p = run("check", str(fifo))
    assert p.returncode == 0
    assert "pipe.cu: not a regular file; skipped" in p.stderr and "Traceback" not in p.stderr


def test_symlink_loop(tmp_path):
    d = tmp_path / "src"
    d.mkdir()
    (tmp_path / "kernlint.toml").write_text(ALL_JIT)
    (d / "loop").symlink_to(d, target_is_directory=True)
    (d / "self.cu").symlink_to(d / "self.cu")
    (d / "real.cu").write_text("// \u2014\n", encoding="utf-8")
    p = run("check", str(d))
    assert p.returncode == 1
    assert "Traceback" not in p.stderr
    assert p.stdout.count("CU001") == 1
    p = run("check", str(d / "self.cu"))
    assert p.returncode == 2
    assert "symbolic link" in p.stderr


def test_other_files_continue_after_bad_one(jit):
    (jit / "a.cu").write_bytes(b"\x00\x01binary")
    (jit / "b.cuh").write_text("// \u2014\n", encoding="utf-8")
    p = run("check", str(jit))
    assert p.returncode == 1
    assert "a.cu: binary file" in p.stderr
    assert "b.cuh:1:4: CU001" in p.stdout


def test_the_command_exits_without_teardown_but_with_its_output_and_exit_handlers(tmp_path, capsys):
    """`kernlint` leaves without freeing every object (a large run's teardown is slower than
    its report), after the exit handlers have run and the whole report is written: the
    report equals `main`'s in this process, byte for byte, and the status is the same."""
    import subprocess
    import sys

    from cli_support import check

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    fixtures = os.path.join(root, "fixtures", "cpp")
    marker = tmp_path / "exit-handler-ran"
    script = (
        "import atexit, sys\n"
        f"atexit.register(lambda: open({str(marker)!r}, 'w').write('yes'))\n"
        "from kernlint.cli import run\n"
        "sys.argv = ['kernlint', 'check', '--no-cache', '--output-format', 'json', "
        f"{fixtures!r}]\n"
        "run()\n"
    )
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    status, out, _ = check(capsys, "--output-format", "json", fixtures)
    assert (p.returncode, p.stdout.decode()) == (status, out)
    assert status == 1 and len(json.loads(out)) > 100
    assert marker.read_text() == "yes"
