"""What a run keeps per file: results of files with nothing to report, the sources the
report shows (read when first needed, one file's at a time, unless a fix needs the bytes it
was computed on)."""

from __future__ import annotations

import pytest

import kernlint.engine as engine
import kernlint.runner as runner
from kernlint.cli import main
from kernlint.discovery import Candidate

KERNEL = b"namespace sglang {\n__global__ void k(float* x, float* y) { x[0] = y[0]; }\n}\n"
CLEAN = b"namespace sglang {\nint answer() { return 42; }\n}\n"


def _tree(tmp_path, n_dirty: int, n_clean: int):
    for k in range(n_dirty):
        (tmp_path / f"k{k:02}.cu").write_bytes(KERNEL)
    for k in range(n_clean):
        (tmp_path / f"c{k:02}.cu").write_bytes(CLEAN)


def _reads(monkeypatch) -> list[str]:
    reads = []
    real = engine.read_source

    def counting(abspath, *args, **kwargs):
        reads.append(abspath)
        return real(abspath, *args, **kwargs)

    monkeypatch.setattr(engine, "read_source", counting)
    return reads


@pytest.mark.parametrize("fmt", ["full", "json", "sarif"])
def test_the_report_reads_each_source_once_and_matches_one_process(
    tmp_path, monkeypatch, capsys, fmt
):
    n = runner.PARALLEL_THRESHOLD + 4
    _tree(tmp_path, n, 6)
    monkeypatch.chdir(tmp_path)
    args = ["check", "--no-cache", "--select", "CU003", "--output-format", fmt, "."]
    monkeypatch.setattr(runner, "_jobs", lambda: 1)
    assert main(args) == 1
    alone = capsys.readouterr().out
    monkeypatch.setattr(runner, "_jobs", lambda: 2)
    reads = _reads(monkeypatch)
    assert main(args) == 1
    assert capsys.readouterr().out == alone
    # (the workers sent no bytes back: each file with findings read once, for the report)
    assert sorted(reads) == sorted(str(tmp_path / f"k{k:02}.cu") for k in range(n))


def test_report_sources_hold_the_last_file_asked_for(tmp_path):
    _tree(tmp_path, 3, 1)
    results = runner.lint_paths([str(tmp_path)], select=["CU003"], warn=print)
    for res in results:
        res.source = None  # (as a worker's result, or a cached one)
    by_path = {r.path: r for r in results}
    kept = by_path[str(tmp_path / "k01.cu")]
    kept.source = engine.read_source(kept.abspath, kept.path, "cpp")[0]
    sources = runner.ReportSources(results)
    first = sources.get(str(tmp_path / "k00.cu"))
    assert first is not None and first.data == KERNEL
    assert sources.get(str(tmp_path / "k00.cu")) is first  # (asked again: not read again)
    assert sources.get(str(tmp_path / "k01.cu")) is kept.source  # (the lint's own bytes)
    assert sources.get(str(tmp_path / "c00.cu")) is None  # (no findings: not a report's)
    assert sources.get(str(tmp_path / "k00.cu")) is not first  # (only the last is held)


def test_files_with_nothing_to_report_are_their_own_empty_results(tmp_path, monkeypatch):
    _tree(tmp_path, 1, runner.PARALLEL_THRESHOLD + 2)
    monkeypatch.setattr(runner, "_jobs", lambda: 2)
    results = runner.lint_paths([str(tmp_path)], select=["CU003"], warn=print)
    empty = [r for r in results if not r.diagnostics]
    assert len(empty) == runner.PARALLEL_THRESHOLD + 2
    assert all(isinstance(r, Candidate) for r in empty)  # (no result object of their own)
    res = empty[0]
    assert (res.diagnostics, res.warnings, res.notes, res.source) == ((), (), (), None)
    assert res.path.endswith(".cu") and res.language == "cpp"
    with pytest.raises(AttributeError):
        res.source = b""  # (read-only: a result to fill in is a FileResult)
