"""Configuration that cannot be used is an error: exit 2 and one line on stderr,
`kernlint: error: <file>: <what>`, naming the file (and the key or option where there is one),
never a traceback; and configuration that would silently lint nothing is refused."""

from __future__ import annotations

import builtins
import json
import os
import random

import pytest
from cli_support import check, run

from kernlint.config import KNOWN_KEYS

# CU002 (code outside the sglang namespace) on line 1, CU001 (non-ASCII) on line 2.
SOURCE = "int g = 0;\n// a \u2014 b\n"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A directory holding a JIT source with two findings; the working directory for the run."""
    d = tmp_path / "kernels" / "jit" / "csrc"
    d.mkdir(parents=True)
    (d / "a.cuh").write_text(SOURCE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def error_line(rc, err) -> str:
    """The one stderr line of a configuration error."""
    assert "Traceback" not in err, err
    assert rc == 2, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("kernlint: error: "), err
    return lines[0]


def fails(capsys, *args) -> str:
    """The one error line of `kernlint check ARGS`, which must fail with a config error."""
    rc, out, err = check(capsys, *args)
    assert out == ""
    return error_line(rc, err)


def codes(out) -> list[str]:
    return sorted(d["code"] for d in json.loads(out))


# -- files that are not UTF-8 TOML ----------------------------------------------------------

_NOISE = random.Random(20).randbytes(512)

# name -> (how the file's text becomes its bytes, what the message says)
CORRUPTIONS = {
    "invalid-utf8-byte": (lambda t: t.encode() + b"# caf\xe9\n", "not valid UTF-8"),
    "invalid-utf8-first-byte": (lambda t: b"\xff" + t.encode(), "not valid UTF-8"),
    "utf16-with-bom": (lambda t: t.encode("utf-16"), "UTF-16"),
    "utf16-be-with-bom": (lambda t: b"\xfe\xff" + t.encode("utf-16-be"), "UTF-16"),
    "utf16-without-bom": (lambda t: t.encode("utf-16-le"), ""),
    "random-binary": (lambda t: t.encode() + _NOISE, ""),
    "nul-byte": (lambda t: t.encode() + b"x = 1\x00\n", "invalid TOML"),
    "invalid-toml": (lambda t: (t + "x = [\n").encode(), "invalid TOML"),
    "deep-array": (lambda t: (t + "x = " + "[" * 10_000 + "]" * 10_000 + "\n").encode(), "TOML"),
    "deep-inline-table": (lambda t: (t + "x = " + "{a = " * 10_000 + "\n").encode(), "TOML"),
    "5000-digit-integer": (lambda t: (t + "x = " + "7" * 5000 + "\n").encode(), "TOML"),
}


def _place(tree, where, corrupt):
    """Write a corrupted config where `where` says; (extra CLI args, the file to be named)."""
    text = 'select = ["CU001"]\n'
    if where == "kernlint.toml":
        (tree / "kernlint.toml").write_bytes(corrupt(text))
        return [], "kernlint.toml"
    if where == "pyproject.toml":
        (tree / "pyproject.toml").write_bytes(corrupt("[tool.kernlint]\n" + text))
        return [], "pyproject.toml"
    if where == "extend":
        (tree / "kernlint.toml").write_text('extend = "base.toml"\n')
        (tree / "base.toml").write_bytes(corrupt(text))
        return [], "base.toml"
    assert where == "--config"
    (tree / "custom.toml").write_bytes(corrupt(text))
    return ["--config", str(tree / "custom.toml")], "custom.toml"


@pytest.mark.parametrize("where", ["kernlint.toml", "pyproject.toml", "extend", "--config"])
@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
def test_config_not_utf8_toml(tree, capsys, where, corruption):
    corrupt, says = CORRUPTIONS[corruption]
    args, name = _place(tree, where, corrupt)
    rc, out, err = check(capsys, *args, ".")
    line = error_line(rc, err)
    assert f"{os.sep}{name}: " in line
    assert says in line
    assert out == ""


def test_utf8_bom_is_accepted(tree, capsys):
    (tree / "kernlint.toml").write_bytes(b'\xef\xbb\xbfselect = ["CU001"]\n')
    rc, out, err = check(capsys, "--output-format", "json", ".")
    assert (rc, err) == (1, "")
    assert codes(out) == ["CU001"]


def test_traceback_free_through_the_real_entry_point(tree):
    """The same, through `python -m kernlint`: nothing but the one line on stderr."""
    (tree / "kernlint.toml").write_bytes("select = []\n".encode("utf-16"))
    p = run("check", ".", cwd=tree)
    assert p.returncode == 2
    assert p.stderr.splitlines() == [
        f"kernlint: error: {tree / 'kernlint.toml'}: not valid UTF-8 (a UTF-16 file): "
        "save it as UTF-8"
    ]


# -- pyproject.toml: table shapes, and which files are read ---------------------------------


@pytest.mark.parametrize(
    "content,key,says",
    [
        ("# kernlint\ntool = 1\n", "`tool`", "must be a table, not an integer"),
        ('# kernlint\ntool = "x"\n', "`tool`", "must be a table, not a string"),
        ("[tool]\nkernlint = 1\n", "`tool.kernlint`", "must be a table, not an integer"),
        ('[tool]\nkernlint = ["CU001"]\n', "`tool.kernlint`", "must be a table, not an array"),
        (
            '[[tool.kernlint]]\nselect = ["CU001"]\n',
            "`tool.kernlint`",
            "must be a table, not an array of tables",
        ),
    ],
)
@pytest.mark.parametrize("how", ["discovered", "--config"])
def test_pyproject_wrong_table_shape(tree, capsys, content, key, says, how):
    (tree / "pyproject.toml").write_text(content)
    args = ["--config", "pyproject.toml"] if how == "--config" else []
    line = fails(capsys, *args, ".")
    assert f"{tree / 'pyproject.toml'}: {key} {says}" in line


def test_pyproject_tool_not_a_table_via_config_without_mention(tree, capsys):
    """Named with --config, a pyproject.toml is always read, whatever it mentions."""
    (tree / "pyproject.toml").write_text("tool = 1\n")
    line = fails(capsys, "--config", "pyproject.toml", ".")
    assert "pyproject.toml: `tool` must be a table" in line


@pytest.mark.parametrize(
    "content",
    [
        "[tool.kernlint]\n",
        '[tool.kernlint]\nselect = ["CU001"]\n',
        '[tool]\nkernlint.select = ["CU001"]\n',
        'tool.kernlint.select = ["CU001"]\n',
        '[ tool . "kernlint" ]\nselect = ["CU001"]\n',
        'tool = {kernlint = {select = ["CU001"]}}\n',
    ],
)
def test_pyproject_table_in_any_spelling_is_found(tree, capsys, content):
    (tree / "pyproject.toml").write_text(content)
    rc, out, err = check(capsys, "--output-format", "json", ".")
    assert (rc, err) == (1, "")
    assert codes(out) == (["CU001"] if "select" in content else ["CU001", "CU002"])


@pytest.mark.parametrize(
    "content",
    [
        b'[project]\nname = "x"\n',  # valid, not ours
        b"tool = 1\n",  # not ours: no tool.kernlint table can be in it
        b"[project\nname = \x00\xff\n",  # invalid, and cannot be ours
        b'[project]\ndependencies = ["kernlint"]\n',  # mentions kernlint, valid, no table
    ],
)
def test_pyproject_that_cannot_be_ours_is_skipped(tree, capsys, content):
    (tree / "pyproject.toml").write_bytes(content)
    rc, out, err = check(capsys, "--output-format", "json", ".")
    assert (rc, err) == (1, "")
    assert codes(out) == ["CU001", "CU002"]


def test_pyproject_that_may_be_ours_must_be_valid(tree, capsys):
    """Like ruff: a pyproject.toml that could hold kernlint's table and is not TOML is an error
    (here the inner file's mention is a dependency, the table is in the outer kernlint.toml)."""
    (tree / "kernlint.toml").write_text('select = ["CU001"]\n')
    (tree / "kernels" / "pyproject.toml").write_text('[project]\ndependencies = ["kernlint"\n')
    line = fails(capsys, ".")
    assert f"{tree / 'kernels' / 'pyproject.toml'}: invalid TOML" in line


def test_utf16_pyproject_is_reported_not_skipped(tree, capsys):
    (tree / "pyproject.toml").write_bytes('[tool.kernlint]\nselect = ["CU001"]\n'.encode("utf-16"))
    line = fails(capsys, ".")
    assert "pyproject.toml: not valid UTF-8 (a UTF-16 file)" in line


@pytest.mark.parametrize("name", ["pyproject.toml", "kernlint.toml"])
def test_unreadable_config_file(tree, capsys, monkeypatch, name):
    """Simulated (tests run as root, who can read a mode-0 file): opening it fails with EACCES.
    An unreadable pyproject.toml is an error as an unreadable kernlint.toml is: it may be ours."""
    (tree / name).write_text("[tool.kernlint]\n" if name == "pyproject.toml" else "")
    real_open = builtins.open

    def fake_open(file, *args, **kwargs):
        if os.path.basename(os.fspath(file)) == name:
            raise PermissionError(13, "Permission denied", os.fspath(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake_open)
    line = fails(capsys, ".")
    assert line == f"kernlint: error: {tree / name}: cannot read config file: Permission denied"


@pytest.mark.parametrize("name", ["pyproject.toml", "kernlint.toml"])
def test_unreadable_config_file_mode_0(tree, name):
    if os.geteuid() == 0:
        pytest.skip("root can read any file")
    (tree / name).write_text('[tool.kernlint]\nselect = ["CU001"]\n')
    os.chmod(tree / name, 0)
    p = run("check", ".", cwd=tree)
    assert p.returncode == 2
    assert p.stderr.splitlines() == [
        f"kernlint: error: {tree / name}: cannot read config file: Permission denied"
    ]


@pytest.mark.parametrize("name", ["pyproject.toml", "kernlint.toml"])
def test_directory_with_a_config_name_is_not_a_config(tree, capsys, name):
    (tree / name).mkdir()
    rc, out, err = check(capsys, "--output-format", "json", ".")
    assert (rc, err) == (1, "")
    assert codes(out) == ["CU001", "CU002"]


# -- extend ---------------------------------------------------------------------------------


def test_extend_cycle_names_file_and_key(tree, capsys):
    (tree / "kernlint.toml").write_text('extend = "b.toml"\n')
    (tree / "b.toml").write_text('extend = "kernlint.toml"\n')
    line = fails(capsys, ".")
    a, b = tree / "kernlint.toml", tree / "b.toml"
    assert line == f"kernlint: error: {b}: `extend`: cycle: {a} -> {b} -> {a}"


def test_extend_self_cycle(tree, capsys):
    (tree / "kernlint.toml").write_text('extend = "./kernlint.toml"\n')
    line = fails(capsys, ".")
    assert f"{tree / 'kernlint.toml'}: `extend`: cycle" in line


def test_extend_missing_target_names_the_referrer(tree, capsys):
    (tree / "kernlint.toml").write_text('extend = "missing.toml"\n')
    line = fails(capsys, ".")
    assert line == (
        f"kernlint: error: {tree / 'kernlint.toml'}: `extend`: "
        f"{tree / 'missing.toml'}: config file not found"
    )


def test_long_extend_chain(tree, capsys):
    """1,500 files, each extending the next (deeper than Python's recursion limit)."""
    n = 1500
    (tree / "kernlint.toml").write_text('extend = "c1.toml"\n')
    for i in range(1, n):
        (tree / f"c{i}.toml").write_text(f'extend = "c{i + 1}.toml"\n')
    (tree / f"c{n}.toml").write_text('select = ["CU002"]\n')
    rc, out, err = check(capsys, "--output-format", "json", ".")
    assert (rc, err) == (1, "")
    assert codes(out) == ["CU002"]


# -- empty rule selectors -------------------------------------------------------------------


@pytest.mark.parametrize(
    "content,key",
    [
        ('ignore = [""]', "`ignore`"),
        ('ignore = [" "]', "`ignore`"),
        ('ignore = ["CU001", "\\t"]', "`ignore`"),
        ('select = [""]', "`select`"),
        ('extend-select = [" "]', "`extend-select`"),
        ('per-file-ignores."**" = [""]', '`per-file-ignores."**"`'),
        ('per-file-ignores.legacy = [" "]', "`per-file-ignores.legacy`"),
    ],
)
@pytest.mark.parametrize("name", ["kernlint.toml", "pyproject.toml"])
def test_empty_selector_in_config(tree, capsys, content, key, name):
    header = "[tool.kernlint]\n" if name == "pyproject.toml" else ""
    (tree / name).write_text(header + content + "\n")
    line = fails(capsys, ".")
    assert f"{tree / name}: {key}: an empty rule selector is not allowed" in line


@pytest.mark.parametrize(
    "args,option",
    [
        (["--select", ""], "--select"),
        (["--select", ","], "--select"),
        (["--select", " , "], "--select"),
        (["--ignore", ""], "--ignore"),
        (["--ignore", "CU002", "--ignore", ""], "--ignore"),
        (["--extend-select", ""], "--extend-select"),
    ],
)
def test_empty_selector_on_command_line(tree, capsys, args, option):
    line = fails(capsys, *args, ".")
    assert line == f"kernlint: error: {option}: an empty rule selector is not allowed"


def test_trailing_comma_on_command_line_is_accepted(tree, capsys):
    rc, out, err = check(capsys, "--select", "CU001,", "--output-format", "json", ".")
    assert (rc, err) == (1, "")
    assert codes(out) == ["CU001"]


# -- wrong value types ----------------------------------------------------------------------

_WRONG = {str: ["1", "[]"], list: ['"CU001"', "1"], bool: ['"yes"', "1"], dict: ["[]", '"x"']}
_WRONG[int] = ['"1MB"', "true", "1.5"]
_WRONG[(str, list)] = ["1", "true"]


def _wrong_values():
    for key, expected in sorted(KNOWN_KEYS.items()):
        for value in _WRONG[expected]:
            yield key, value


@pytest.mark.parametrize("key,value", list(_wrong_values()))
def test_every_key_rejects_a_wrong_type(tree, capsys, key, value):
    (tree / "kernlint.toml").write_text(f"{key} = {value}\n")
    line = fails(capsys, ".")
    assert f"{tree / 'kernlint.toml'}: `{key}` must be " in line


@pytest.mark.parametrize(
    "content,says",
    [
        ("exclude = [1]\n", "`exclude` must be an array of strings, not one holding an integer"),
        ('select = ["CU001", ["CU002"]]\n', "`select` must be an array of strings"),
        ("jit-roots = [{a = 1}]\n", "`jit-roots` must be an array of strings"),
        ("per-file-ignores = []\n", "`per-file-ignores` must be a table, not an array"),
        ('[per-file-ignores]\n"*.cu" = "CU001"\n', '`per-file-ignores."*.cu"` must be an array'),
        ('[per-file-ignores]\n"*.cu" = [1]\n', '`per-file-ignores."*.cu"` must be an array'),
        ('preview = "yes"\n', "`preview` must be true or false, not a string"),
        ('select = "CU001"\n', "`select` must be an array of strings, not a string"),
        ('aiter-import-policy = "sometimes"\n', "`aiter-import-policy` must be one of"),
        ('defines = ["1X"]\n', "`defines`: '1X' is not a macro definition"),
        ('select = ["CU 001"]\n', "`select`: 'CU 001' is not a rule code, name or prefix"),
        ('ignore = ["CU9"]\n', "`ignore`: unknown rule or prefix `CU9`"),
        ('exclude = ["[z-a]"]\n', "`exclude`: invalid glob '[z-a]'"),
        ('extend-jit-roots = ["[z-a]"]\n', "`extend-jit-roots`: invalid glob"),
        ('[per-file-ignores]\n"[z-a]" = ["CU001"]\n', "`per-file-ignores`: invalid glob"),
        ("selct = 1\n", "unknown key `selct`"),
        ("[tool.kernlint]\n", "unknown key `tool`"),
        ('"a\\nb" = 1\n', 'unknown key `"a\\nb"`'),
    ],
)
def test_wrong_values_name_file_and_key(tree, capsys, content, says):
    (tree / "kernlint.toml").write_text(content)
    line = fails(capsys, ".")
    assert f"{tree / 'kernlint.toml'}: {says}" in line


def test_wrong_value_in_extend_target_names_the_target(tree, capsys):
    (tree / "kernlint.toml").write_text('extend = "base.toml"\nselect = ["CU001"]\n')
    (tree / "base.toml").write_text("preview = 1\n")
    line = fails(capsys, ".")
    assert f"{tree / 'base.toml'}: `preview` must be true or false, not an integer" in line


def test_error_line_stays_short_for_a_huge_key_or_value(tree, capsys):
    (tree / "kernlint.toml").write_text("k" * 100_000 + " = 1\n")
    line = fails(capsys, ".")
    assert "unknown key `kkkk" in line and len(line) < 1000
    (tree / "kernlint.toml").write_text(f'select = ["{"C" * 100_000} X"]\n')
    line = fails(capsys, ".")
    assert "is not a rule code, name or prefix" in line and len(line) < 1000
