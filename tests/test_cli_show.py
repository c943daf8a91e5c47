"""`kernlint check --show-files` (what a run would check, and why a file is a JIT source) and
`--show-settings PATH` (one file's resolved settings, each with where it came from). Real runs
of the command."""

from __future__ import annotations

import pytest
from cli_support import run


def ok(*args, cwd):
    done = run(*args, cwd=cwd)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr
    return done.stdout


def usage_error(*args, cwd) -> str:
    done = run(*args, cwd=cwd)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    return done.stderr


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "kernlint.toml").write_text(
        'jit-roots = ["kern/**", "!kern/vendor/**"]\nextend-jit-roots = ["extra/*.cuh"]\n'
        'ignore = ["CU002"]\n[per-file-ignores]\n"kern/legacy/*" = ["CU003"]\n'
    )
    for name, text in {
        "kern/a.cu": "int a;\n",
        "kern/legacy/old.cu": "int o;\n",
        "kern/vendor/v.cu": "int v;\n",
        "kern/t.cu": "#include <torch/extension.h>\nint t;\n",
        "extra/h.cuh": "int h;\n",
        "other/b.py": "x = 1\n",
        "build/x.cu": "int b;\n",  # (excluded by default)
        "notes.txt": "not a source\n",
    }.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_show_files_lists_the_checked_files_and_why_each_is_jit(tree):
    lines = ok("check", "--show-files", cwd=tree).splitlines()
    assert sorted(lines) == sorted(
        [
            "extra/h.cuh  [JIT: extend-jit-roots `extra/*.cuh` (kernlint.toml)]",
            "kern/a.cu  [JIT: jit-roots `kern/**` (kernlint.toml)]",
            "kern/legacy/old.cu  [JIT: jit-roots `kern/**` (kernlint.toml)]",
            "kern/t.cu  [not JIT: torch extension: includes <torch/extension.h>; "
            "under jit-roots `kern/**` (kernlint.toml)]",
            "kern/vendor/v.cu  [not JIT: taken out by jit-roots `!kern/vendor/**` (kernlint.toml)]",
            "other/b.py",
        ]
    )


def test_show_files_follows_paths_and_excludes(tree):
    lines = ok("check", "--show-files", "kern/a.cu", "other", "--extend-exclude", "kern", cwd=tree)
    # (a file named on the command line is listed unless --force-exclude)
    assert lines.splitlines() == [
        "kern/a.cu  [JIT: jit-roots `kern/**` (kernlint.toml)]",
        "other/b.py",
    ]
    assert (
        ok(
            "check",
            "--show-files",
            "--force-exclude",
            "kern/a.cu",
            "--extend-exclude",
            "kern",
            cwd=tree,
        )
        == ""
    )


def test_show_files_with_the_default_jit_roots(tmp_path):
    (tmp_path / "pkg/kernels/jit/csrc").mkdir(parents=True)
    (tmp_path / "pkg/kernels/jit/csrc/k.cu").write_text("int k;\n")
    (tmp_path / "pkg/kernels/jit/csrc/third_party").mkdir()
    (tmp_path / "pkg/kernels/jit/csrc/third_party/t.cu").write_text("int t;\n")
    assert sorted(ok("check", "--show-files", cwd=tmp_path).splitlines()) == [
        "pkg/kernels/jit/csrc/k.cu  [JIT: jit-roots `**/kernels/jit/csrc/**` (default)]",
        "pkg/kernels/jit/csrc/third_party/t.cu  "
        "[not JIT: taken out by jit-roots `!**/third_party/**` (default)]",
    ]


def settings_lines(out: str) -> dict[str, str]:
    """`key = value  # where` rows of --show-settings, and its `name: value` header lines."""
    rows = {}
    for line in out.splitlines():
        if " = " in line and "  # " in line:
            key, rest = line.split(" = ", 1)
            rows[key.strip()] = rest
        elif ": " in line:
            key, rest = line.split(": ", 1)
            rows[key] = rest
    return rows


def test_show_settings_gives_each_value_and_its_source(tree):
    (tree / "base.toml").write_text("preview = true\nmax-file-size = 1000\n")
    config = (tree / "kernlint.toml").read_text()
    (tree / "kernlint.toml").write_text('extend = "base.toml"\nmax-file-size = 2000\n' + config)
    out = ok(
        "check",
        "--show-settings",
        "kern/legacy/old.cu",
        "--select",
        "CU",
        "--ignore",
        "CU004",
        cwd=tree,
    )
    rows = settings_lines(out)
    assert rows["Settings for"] == "kern/legacy/old.cu"
    assert rows["config file"] == "kernlint.toml"
    assert rows["JIT source"] == "yes: jit-roots `kern/**` (kernlint.toml)"
    assert rows["select"] == '["CU"]  # command line (--select)'
    assert rows["ignore"] == '["CU002", "CU004"]  # kernlint.toml + command line (--ignore)'
    assert rows["preview"] == "true  # base.toml"  # (set by the file it extends)
    assert rows["max-file-size"] == "2000  # kernlint.toml"  # (the extending file wins)
    assert rows["jit-roots"] == '["kern/**", "!kern/vendor/**"]  # kernlint.toml'
    assert rows["respect-gitignore"] == "true  # default"
    assert rows["ignored here by per-file-ignores"] == "CU003"
    enabled = rows["rules enabled"].split(": ", 1)[1].split(", ")
    assert "CU003" not in enabled and "CU002" not in enabled and "CU004" not in enabled
    assert "CU001" in enabled and all(code.startswith("CU") for code in enabled)


def test_show_settings_of_a_path_that_does_not_exist_yet(tree):
    rows = settings_lines(ok("check", "--show-settings", "kern/vendor/new.cu", cwd=tree))
    assert rows["JIT source"] == "no: taken out by jit-roots `!kern/vendor/**` (kernlint.toml)"
    assert "generated" not in rows  # (nothing to read)


def test_show_settings_without_a_config_file(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    rows = settings_lines(ok("check", "--show-settings", "a.py", "--preview", cwd=tmp_path))
    assert rows["config file"] == "none (defaults)"
    assert rows["JIT source"] == "no (under no jit-roots pattern)"
    assert rows["generated"] == "no"
    assert rows["preview"] == "true  # command line (--preview)"
    assert rows["select"] == '["ALL"]  # default'


def test_show_settings_with_config_option(tree):
    (tree / "alt.toml").write_text('select = ["CU001"]\n')
    rows = settings_lines(
        ok("check", "--config", "alt.toml", "--show-settings", "kern/a.cu", cwd=tree)
    )
    assert rows["config file"] == "alt.toml (--config)"
    assert rows["select"] == '["CU001"]  # alt.toml'
    assert rows["rules enabled"] == "1: CU001"


def test_show_settings_generated_and_excluded(tree):
    (tree / "build/gen.cu").write_text("// auto-generated by gen.py, do not edit\nint g;\n")
    rows = settings_lines(ok("check", "--show-settings", "build/gen.cu", cwd=tree))
    assert rows["excluded"] == "yes"
    assert rows["generated"].startswith("yes: ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--show-settings",), "exactly one PATH"),
        (("--show-settings", "kern/a.cu", "other/b.py"), "exactly one PATH"),
        (("--show-settings", "kern"), "kern: --show-settings takes a file, not a directory"),
        (
            ("--show-settings", "kern/a.cu", "--select", "XX999"),
            "--select: unknown rule or prefix `XX999`",
        ),
        (("--show-files", "missing"), "missing: no such file or directory"),
    ],
)
def test_show_usage_errors(tree, args, message):
    assert message in usage_error("check", *args, cwd=tree)


def test_show_settings_of_a_path_whose_config_is_invalid(tree):
    (tree / "kern/bad").mkdir()
    (tree / "kern/bad/kernlint.toml").write_text("jit-roots = 3\n")
    err = usage_error("check", "--show-settings", "kern/bad/x.cu", cwd=tree)
    assert str(tree / "kern/bad/kernlint.toml") in err and "`jit-roots`" in err
