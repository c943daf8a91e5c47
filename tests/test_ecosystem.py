"""The ecosystem check's verdicts: reviewed findings on real code must keep their verdicts.

The SGLang snapshot (`../shared/corpus/sglang-9be3044b.tar.xz`) is unpacked once per run; the test
skips, saying why, where it is absent. The other corpora are checked by
`python scripts/ecosystem.py verdicts` (they are downloaded).
"""

from __future__ import annotations

import os
import sys
import tarfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import ecosystem  # noqa: E402


def _row(path, line, code):
    return {"path": path, "line": line, "code": code, "message": "m", "column": 1}


def _v(path, line, rule, verdict, **extra):
    return {
        "corpus": "sglang-snapshot",
        "path": path,
        "line": line,
        "rule": rule,
        "verdict": verdict,
        "reason": "r",
        **extra,
    }


def test_a_false_positive_that_comes_back_is_a_violation():
    verdicts = [_v("a.py", 3, "PY001", False), _v("b.py", 1, "PY001", True)]
    found = {"sglang-snapshot": [_row("a.py", 3, "PY001"), _row("b.py", 1, "PY001")]}
    violations, stats, _ = ecosystem.check_verdicts(verdicts, found, {"PY001"})
    assert violations == [
        "sglang-snapshot: a.py:3 PY001: reviewed as a false positive, reported again"
    ]
    s = stats[("sglang-snapshot", "PY001")]
    assert (s["findings"], s["reviewed"], s["true"], s["false"]) == (2, 2, 1, 1)
    assert ecosystem.precision(s) == "50.0%"


def test_a_true_finding_that_disappears_is_a_violation():
    verdicts = [_v("a.py", 3, "CU001", True), _v("c.py", 9, "CU001", False)]
    violations, stats, _ = ecosystem.check_verdicts(verdicts, {"sglang-snapshot": []}, {"CU001"})
    assert violations == [
        "sglang-snapshot: a.py:3 CU001: reviewed as a true finding, no longer reported"
    ]
    assert stats[("sglang-snapshot", "CU001")]["fixed"] == 1


def test_preview_rules_and_known_false_positives_are_counted_not_enforced():
    verdicts = [_v("a.py", 3, "PY003", False), _v("b.py", 4, "CU001", False, known=True)]
    found = {"sglang-snapshot": [_row("a.py", 3, "PY003"), _row("b.py", 4, "CU001")]}
    violations, stats, _ = ecosystem.check_verdicts(verdicts, found, {"CU001"})
    assert violations == []
    assert stats[("sglang-snapshot", "PY003")]["false"] == 1
    assert stats[("sglang-snapshot", "CU001")]["false"] == 1


def test_verdicts_file_is_well_formed():
    verdicts = ecosystem.load_verdicts()
    for v in verdicts:
        assert v["reason"].strip(), v
    codes = {r.code for r in __import__("kernlint.registry", fromlist=["x"]).load_registry().rules}
    assert {v["rule"] for v in verdicts} <= codes


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory):
    if not os.path.exists(ecosystem.SNAPSHOT):
        pytest.skip(f"the SGLang snapshot is absent ({os.path.normpath(ecosystem.SNAPSHOT)})")
    dest = tmp_path_factory.mktemp("snapshot")
    with tarfile.open(ecosystem.SNAPSHOT) as tf:
        tf.extractall(dest, filter="data")
    return str(dest / "sglang")


def test_snapshot_verdicts_hold(snapshot):
    verdicts = [v for v in ecosystem.load_verdicts() if v["corpus"] == "sglang-snapshot"]
    found = {"sglang-snapshot": ecosystem.run_kernlint(snapshot, "all")}
    violations, _, _ = ecosystem.check_verdicts(verdicts, found, ecosystem.stable_codes())
    assert violations == []


def test_a_known_miss_is_counted_not_enforced():
    verdicts = [_v("a.py", 3, "PY001", True, known=True)]
    violations, stats, _ = ecosystem.check_verdicts(verdicts, {"sglang-snapshot": []}, {"PY001"})
    assert violations == [] and stats[("sglang-snapshot", "PY001")]["missed"] == 1


def test_a_stale_known_mark_is_noted():
    verdicts = [
        _v("a.py", 3, "PY001", True, known=True),  # a known miss, found now
        _v("b.py", 4, "PY001", False, known=True),  # a known false positive, gone now
        _v("c.py", 5, "PY001", True, known=True),  # still missed
    ]
    found = {"sglang-snapshot": [_row("a.py", 3, "PY001")]}
    violations, stats, notes = ecosystem.check_verdicts(verdicts, found, {"PY001"})
    assert violations == []
    assert notes == [
        "sglang-snapshot: a.py:3 PY001: a known miss, now reported (drop `known`)",
        "sglang-snapshot: b.py:4 PY001: a known false positive, no longer reported (drop `known`)",
    ]
    assert stats[("sglang-snapshot", "PY001")]["missed"] == 1
