"""`kernlint check --statistics` (text and JSON) and `--show-skipped`: the files whose parsed
tree has regions no rule could judge, with their line ranges; the cache keeps them apart."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from cli_support import run

from kernlint.runner import PARALLEL_THRESHOLD

GOOD = "__global__ void good(float* out, const float* __restrict__ in, int n) { out[n] = in[n]; }\n"
# Line 3 opens a brace it never closes: the rest of the file is one unparsed region, and the
# kernel on line 6 is lost in it.
BROKEN = (
    "__global__ void first(float* out, const float* __restrict__ in, int n) { out[n] = in[n]; }\n"
    "void f() {\n"
    "  if (x {\n"
    "    y;\n"
    "}\n"
    "__global__ void lost(float* out) { out[0] = 1; }\n"
)
BROKEN_LINE = 3
SKIPPED = re.compile(
    r"^(?P<path>.+):(?P<start>\d+)-(?P<end>\d+): unparsed region(?: \((?P<why>.*)\))?$"
)
TAIL = re.compile(
    r"^Files: (?P<checked>\d+) checked, (?P<parsed>\d+) parsed by the rules, "
    r"(?P<unparsed>\d+) with regions no rule could judge "
    r"\(C/C\+\+/CUDA: (?P<cpp>\d+) of (?P<cpp_parsed>\d+); "
    r"Python: (?P<py>\d+) of (?P<py_parsed>\d+)\)\."
)


@pytest.fixture
def tree(tmp_path):
    d = tmp_path / "src"
    d.mkdir()
    (d / "good.cu").write_text(GOOD, encoding="utf-8")
    (d / "broken.cu").write_text(BROKEN, encoding="utf-8")
    (d / "plain.cu").write_text("int x = 0;\n", encoding="utf-8")  # no rule parses it
    return d


def skipped(stderr: str) -> list[tuple[str, int, int, str | None]]:
    out = []
    for line in stderr.splitlines():
        m = SKIPPED.match(line)
        if m:
            out.append((m["path"], int(m["start"]), int(m["end"]), m["why"]))
    return out


def tail(stdout: str):
    found = [TAIL.match(line) for line in stdout.splitlines()]
    found = [m for m in found if m]
    assert len(found) == 1, stdout
    return {k: int(v) for k, v in found[0].groupdict().items()}


def test_text_statistics_counts_files_with_unparsed_regions(tree):
    p = run("check", str(tree), "--statistics", "--no-cache")
    assert p.returncode == 1, p.stderr
    rows = [line.split() for line in p.stdout.splitlines() if not line.startswith("Files:")]
    # Both kernels outside the region are reported; the lost one is not.
    assert rows == [["2", "CU003", "[-]", "kernel-pointer-not-restrict"]]  # (unsafe fixes)
    t = tail(p.stdout)
    assert t == {
        "checked": 3,
        "parsed": 2,  # (plain.cu holds nothing a tree rule looks for: never parsed)
        "unparsed": 1,
        "cpp": 1,
        "cpp_parsed": 2,
        "py": 0,
        "py_parsed": 0,
    }
    assert "`--show-skipped` lists them." in p.stdout
    assert skipped(p.stderr) == []  # (listed only when asked)


def test_show_skipped_lists_regions_on_stderr(tree):
    p = run("check", str(tree), "--show-skipped", "--no-cache")
    assert p.returncode == 1
    found = skipped(p.stderr)
    assert len(found) == 1, p.stderr
    path, start, end, why = found[0]
    assert path == str(tree / "broken.cu")
    assert start <= BROKEN_LINE <= end and end <= BROKEN.count("\n")
    assert why is None
    # The report on stdout is the normal one.
    assert "Found 2 warnings." in p.stdout  # (CU003 is a warning)
    assert "unparsed region" not in p.stdout


def test_statistics_json(tree):
    plain = run("check", str(tree), "--output-format", "json", "--no-cache")
    findings = json.loads(plain.stdout)
    p = run(
        "check", str(tree), "--output-format", "json", "--statistics", "--no-cache", "--exit-zero"
    )
    assert p.returncode == 0, p.stderr
    obj = json.loads(p.stdout)
    assert set(obj) == {"rules", "total", "fixable", "files"}
    assert obj["total"] == len(findings) == 2
    by_code = {}
    for f in findings:
        by_code[f["code"]] = by_code.get(f["code"], 0) + 1
    assert {r["code"]: r["count"] for r in obj["rules"]} == by_code
    assert obj["rules"] == [
        {"code": "CU003", "name": "kernel-pointer-not-restrict", "count": 2, "fixable": False}
    ]
    files = obj["files"]
    assert files["checked"] == 3 and files["parsed"] == 2
    assert files["with_unparsed_regions"] == 1 and files["unparsed_regions"] == 1
    assert files["by_language"]["cpp"] == {"parsed": 2, "with_unparsed_regions": 1}
    # With --show-skipped the object lists the regions, as stderr does.
    p = run("check", str(tree), "--output-format", "json", "--statistics", "--show-skipped")
    obj = json.loads(p.stdout)
    regions = [(u["path"], u["start_line"], u["end_line"]) for u in obj["unparsed"]]
    assert regions == [s[:3] for s in skipped(p.stderr)]
    assert len(regions) == 1


def test_fixable_in_json_statistics(tmp_path):
    f = tmp_path / "kernels" / "jit" / "csrc" / "a.cuh"
    f.parent.mkdir(parents=True)
    f.write_text("namespace sglang {\n// a \u2014 b\n}\n", encoding="utf-8")
    p = run("check", str(tmp_path), "--output-format", "json", "--statistics", "--no-cache")
    obj = json.loads(p.stdout)
    assert obj["rules"] == [
        {"code": "CU001", "name": "non-ascii-character", "count": 1, "fixable": True}
    ]
    assert obj["fixable"] == 1


def test_python_file_that_does_not_parse(tmp_path):
    (tmp_path / "bad.py").write_text("import aiter\ndef f(:\n    pass\n", encoding="utf-8")
    (tmp_path / "ok.py").write_text("import aiter\n", encoding="utf-8")
    p = run("check", str(tmp_path), "--statistics", "--show-skipped", "--no-cache")
    t = tail(p.stdout)
    assert (t["py"], t["py_parsed"], t["cpp_parsed"]) == (1, 2, 0)
    (found,) = skipped(p.stderr)
    assert found[0] == str(tmp_path / "bad.py")
    assert (found[1], found[2]) == (1, 3)  # the whole file: no rule judged any of it
    assert found[3].startswith("cannot parse: ") and "(line 2)" in found[3]
    assert "`--show-skipped`" not in p.stdout  # (it is given)


def test_cache_keeps_regions_and_is_never_stale(tree, tmp_path):
    cache = str(tmp_path / "cache")
    expected = run("check", str(tree), "--statistics", "--no-cache").stdout
    # A normal run fills the cache; the statistics run after it still finds the regions.
    run("check", str(tree), "--cache-dir", cache)
    first = run("check", str(tree), "--statistics", "--cache-dir", cache)
    again = run("check", str(tree), "--statistics", "--show-skipped", "--cache-dir", cache)
    assert first.stdout == expected
    assert again.stdout.splitlines()[0] == expected.splitlines()[0]
    assert tail(again.stdout) == tail(expected)
    assert len(skipped(again.stderr)) == 1
    # And a normal run after them reports as before (the entries are kept apart).
    normal = run("check", str(tree), "--cache-dir", cache)
    assert normal.stdout == run("check", str(tree), "--no-cache").stdout
    # The file fixed: the cached region is not reported again.
    (tree / "broken.cu").write_text(GOOD.replace("good", "mended"), encoding="utf-8")
    fixed = run("check", str(tree), "--statistics", "--show-skipped", "--cache-dir", cache)
    assert tail(fixed.stdout)["unparsed"] == 0
    assert skipped(fixed.stderr) == []


def test_parallel_run_counts_every_file(tree):
    """Past the pool's threshold the workers send back the parsed files' regions too (and the
    clean files, which count as parsed)."""
    n = PARALLEL_THRESHOLD // 2 + 1
    for i in range(n):
        shutil.copy(tree / "good.cu", tree / f"good{i}.cu")
        shutil.copy(tree / "broken.cu", tree / f"broken{i}.cu")
    p = run("check", str(tree), "--statistics", "--show-skipped", "--no-cache")
    t = tail(p.stdout)
    assert t["checked"] == 2 * n + 3
    assert t["cpp_parsed"] == 2 * n + 2
    assert t["cpp"] == n + 1
    assert sorted(s[0] for s in skipped(p.stderr)) == sorted(
        str(tree / name) for name in ["broken.cu"] + [f"broken{i}.cu" for i in range(n)]
    )


def test_a_normal_run_records_nothing(tree):
    """Without the options no file's regions are looked for."""
    from kernlint.runner import lint_paths

    results = lint_paths([str(tree)], warn=lambda m: None)
    assert results and all(r.unparsed is None for r in results)
