"""Integrations checked with the real client or the official schema: GitHub, SARIF, JUnit,
baselines, pre-commit."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from xml.etree import ElementTree as ET

import pytest
from cli_support import run

from kernlint.model import Diagnostic
from kernlint.output import github

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "sarif-schema-2.1.0.json")
BAD = "namespace sglang {\n// a \u2014 b\nint x = 0;\n}  // namespace sglang\nint g = 0;\n"


@pytest.fixture
def repo(tmp_path):
    (tmp_path / ".git").mkdir()
    d = tmp_path / "kernels" / "jit" / "csrc"
    d.mkdir(parents=True)
    (d / "a.cuh").write_text(BAD, encoding="utf-8")
    return tmp_path


def _diag(**kw):
    base = dict(
        path="a.cu",
        line=1,
        column=2,
        end_line=1,
        end_column=5,
        code="CU001",
        name="non-ascii-character",
        message="m",
        severity="error",
    )
    base.update(kw)
    return Diagnostic(**base)


# -- GitHub ---------------------------------------------------------------------------------


def test_github_format_end_to_end(repo):
    p = run("check", ".", "--output-format", "github", cwd=repo)
    assert p.returncode == 1
    lines = p.stdout.splitlines()
    path = "kernels/jit/csrc/a.cuh"
    assert lines[0] == (
        f"::error file={path},line=2,col=6,endLine=2,endColumn=6,"
        "title=CU001 non-ascii-character::CU001 non-ASCII character%3A U+2014 EM DASH; "
        "replace it with `--`".replace("%3A", ":")
    )
    assert lines[1].startswith(f"::error file={path},line=5,col=1,endLine=5,endColumn=")


def test_github_escaping_and_multiline():
    d = _diag(path="a,b:c%.cu", message="50% done\r\nnext", name="x", code="CU001")
    out = github.render([d])
    assert out == (
        "::error file=a%2Cb%3Ac%25.cu,line=1,col=2,endLine=1,endColumn=4,"
        "title=CU001 x::CU001 50%25 done%0D%0Anext\n"
    )
    multi = github.render([_diag(end_line=3, end_column=1, severity="warning")])
    assert multi.startswith("::warning file=a.cu,line=1,endLine=3,title=")
    assert "col=" not in multi and "endColumn" not in multi
    zero_width = github.render([_diag(column=4, end_column=4, severity="info")])
    assert "::notice " in zero_width and "col=4," in zero_width and "endColumn=4," in zero_width


# -- SARIF ----------------------------------------------------------------------------------


def test_sarif_validates_against_official_schema(repo):
    jsonschema = pytest.importorskip("jsonschema")
    p = run("check", ".", "--output-format", "sarif", "-o", "out.sarif", cwd=repo)
    assert p.returncode == 1
    with open(repo / "out.sarif") as fh:
        doc = json.load(fh)
    with open(SCHEMA) as fh:
        schema = json.load(fh)
    jsonschema.validate(doc, schema)
    run_ = doc["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    for r in rules:
        assert {"id", "name", "shortDescription", "fullDescription", "help"} <= set(r)
        assert r["help"]["text"] and r["help"]["markdown"]
    results = run_["results"]
    assert [r["ruleId"] for r in results] == ["CU001", "CU002"]
    loc = results[0]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "kernels/jit/csrc/a.cuh"
    assert loc["region"] == {"startLine": 2, "startColumn": 6, "endLine": 2, "endColumn": 7}
    assert results[0]["level"] == "error"
    assert rules[results[0]["ruleIndex"]]["id"] == "CU001"


def _fingerprints(repo):
    p = run("check", ".", "--output-format", "sarif", cwd=repo)
    doc = json.loads(p.stdout)
    return {
        r["ruleId"]: (
            r["partialFingerprints"]["primaryLocationLineHash"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
        )
        for r in doc["runs"][0]["results"]
    }


def test_sarif_fingerprints_stable_when_unrelated_lines_move(repo):
    before = _fingerprints(repo)
    f = repo / "kernels" / "jit" / "csrc" / "a.cuh"
    f.write_text("// new header comment\n\n" + BAD, encoding="utf-8")
    after = _fingerprints(repo)
    for code in before:
        assert before[code][0] == after[code][0]
        assert after[code][1] == before[code][1] + 2
    f.write_text(BAD.replace("int g = 0;", "int g = 1;"), encoding="utf-8")
    changed = _fingerprints(repo)
    assert changed["CU002"][0] != before["CU002"][0]  # the finding's own line changed
    assert changed["CU001"][0] == before["CU001"][0]


# -- JSON, JUnit ----------------------------------------------------------------------------


def test_junit(repo):
    (repo / "kernels" / "jit" / "csrc" / "clean.cuh").write_text("namespace sglang {}\n")
    p = run("check", ".", "--output-format", "junit", cwd=repo)
    assert p.returncode == 1
    root = ET.fromstring(p.stdout)
    suite = root.find("testsuite")
    assert suite.get("tests") == "3" and suite.get("failures") == "2"
    failures = [c.find("failure") for c in suite.findall("testcase")]
    assert sorted(f.get("type") for f in failures if f is not None) == ["CU001", "CU002"]


def test_output_file_for_any_format(repo):
    for fmt in ("text", "json", "github", "junit"):
        p = run("check", ".", "--output-format", fmt, "-o", f"report.{fmt}", cwd=repo)
        assert p.returncode == 1
        assert p.stdout == ""
        assert (repo / f"report.{fmt}").read_text()


# -- baseline -------------------------------------------------------------------------------


def test_baseline_reports_only_new_findings(repo):
    p = run("check", ".", "--write-baseline", "kernlint-baseline.json", cwd=repo)
    assert p.returncode == 0, p.stderr
    assert run("check", ".", "--baseline", "kernlint-baseline.json", cwd=repo).returncode == 0
    f = repo / "kernels" / "jit" / "csrc" / "a.cuh"
    # Unrelated lines move: still matched.
    f.write_text("// moved\n\n\n" + BAD, encoding="utf-8")
    assert run("check", ".", "--baseline", "kernlint-baseline.json", cwd=repo).returncode == 0
    # A new finding is reported, alone.
    f.write_text("// moved\n\n\n" + BAD + "int h = 0;\n", encoding="utf-8")
    p = run(
        "check", ".", "--baseline", "kernlint-baseline.json", "--output-format", "json", cwd=repo
    )
    assert p.returncode == 1
    found = json.loads(p.stdout)
    assert [(d["code"], d["line"]) for d in found] == [("CU002", 9)]


def test_baseline_errors(repo):
    p = run("check", ".", "--baseline", "missing.json", cwd=repo)
    assert p.returncode == 2 and "missing.json" in p.stderr
    (repo / "bad.json").write_text("{}")
    p = run("check", ".", "--baseline", "bad.json", cwd=repo)
    assert p.returncode == 2 and "invalid baseline" in p.stderr


# -- config discovery -----------------------------------------------------------------------


def test_nearest_config_and_extend(tmp_path):
    (tmp_path / "base.toml").write_text('ignore = ["CU001"]\n')
    sub = tmp_path / "pkg"
    sub.mkdir()
    (tmp_path / "kernlint.toml").write_text('select = ["CU001"]\njit-roots = ["**"]\n')
    (sub / "pyproject.toml").write_text(
        '[tool.kernlint]\nextend = "../base.toml"\nselect = ["CU001", "CU002"]\n'
        'jit-roots = ["**"]\n'
    )
    (tmp_path / "top.cu").write_text("int g = 0; // \u2014\n", encoding="utf-8")
    (sub / "inner.cu").write_text("int g = 0; // \u2014\n", encoding="utf-8")
    p = run("check", ".", "--output-format", "json", cwd=tmp_path)
    found = sorted((d["path"], d["code"]) for d in json.loads(p.stdout))
    # top.cu: root config selects CU001 only; inner.cu: nearest config (extends base: ignore CU001)
    assert found == [(os.path.join("pkg", "inner.cu"), "CU002"), ("top.cu", "CU001")]


def test_per_file_ignores_relative_to_config(tmp_path):
    sub = tmp_path / "pkg"
    sub.mkdir()
    # (every file a JIT source: CU001 is JIT-scoped)
    (tmp_path / "kernlint.toml").write_text('jit-roots = ["**"]\n')
    (sub / "kernlint.toml").write_text(
        'jit-roots = ["**"]\n[per-file-ignores]\n"legacy/*.cu" = ["CU001"]\n'
    )
    (sub / "legacy").mkdir()
    (sub / "legacy" / "a.cu").write_text("// \u2014\n", encoding="utf-8")
    (tmp_path / "legacy").mkdir()
    (tmp_path / "legacy" / "a.cu").write_text("// \u2014\n", encoding="utf-8")
    p = run("check", ".", "--output-format", "json", cwd=tmp_path)
    assert [d["path"] for d in json.loads(p.stdout)] == [os.path.join("legacy", "a.cu")]


# -- pre-commit -----------------------------------------------------------------------------


def _git(cwd, *args):
    subprocess.run(
        ["git", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
        },
    )


def test_pre_commit_hooks_file():
    yaml = pytest.importorskip("yaml")
    with open(os.path.join(ROOT, ".pre-commit-hooks.yaml")) as fh:
        hooks = yaml.safe_load(fh)
    hook = hooks[0]
    assert hook["id"] == "kernlint"
    assert hook["entry"] == "kernlint check --force-exclude"
    assert hook["language"] == "python"
    assert hook["types_or"] == ["c", "c++", "cuda", "python"]
    assert hook["require_serial"] is True
    assert hook["minimum_pre_commit_version"]


@pytest.mark.network
def test_pre_commit_try_repo(tmp_path):
    if shutil.which("pre-commit") is None and not _has_module("pre_commit"):
        pytest.skip("pre-commit not installed")
    if not os.path.isdir(os.path.join(ROOT, ".git")):
        pytest.skip("kernlint checkout is not a git repository")
    work = tmp_path / "user-repo"
    work.mkdir()
    _git(work, "init", "-q")
    d = work / "kernels" / "jit" / "csrc"
    d.mkdir(parents=True)
    (d / "clean.cuh").write_text("namespace sglang {\nint x = 0;\n}  // namespace sglang\n")
    (d / "bad.cuh").write_text("int g = 0;\n")
    _git(work, "add", ".")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pc-home")}

    def try_repo(*files):
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "try-repo", ROOT, "kernlint", "--files", *files],
            cwd=work,
            capture_output=True,
            text=True,
            env=env,
            timeout=900,
        )

    ok = try_repo("kernels/jit/csrc/clean.cuh")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "Passed" in ok.stdout
    bad = try_repo("kernels/jit/csrc/bad.cuh")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "kernels/jit/csrc/bad.cuh:1:1: CU002" in bad.stdout
    assert "code-outside-sglang-namespace" in bad.stdout


def _has_module(name):
    import importlib.util

    return importlib.util.find_spec(name) is not None
