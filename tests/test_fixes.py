"""The fix engine: safe vs unsafe applicability, overlaps, byte preservation."""

from kernlint.fixes import apply_fixes
from kernlint.model import Diagnostic, Edit, Fix


def _d(start, end, content, applicability):
    return Diagnostic(
        "a.cu",
        1,
        start + 1,
        1,
        end + 1,
        "CU001",
        "n",
        "m",
        "error",
        Fix((Edit(start, end, content),), applicability),
        start,
        end,
    )


def test_unsafe_fixes_only_when_asked():
    data = b"ab\xffcd"
    safe, unsafe = _d(0, 1, "A", "safe"), _d(3, 4, "C", "unsafe")
    new, fixed, remaining = apply_fixes(data, [safe, unsafe], unsafe=False)
    assert new == b"Ab\xffcd" and fixed == [safe] and remaining == [unsafe]
    new, fixed, remaining = apply_fixes(data, [safe, unsafe], unsafe=True)
    assert new == b"Ab\xffCd" and remaining == []  # the invalid byte is kept as is


def test_overlapping_fixes_first_wins():
    data = b"abcdef"
    first, second = _d(1, 4, "X", "safe"), _d(2, 5, "Y", "safe")
    new, fixed, remaining = apply_fixes(data, [second, first], unsafe=False)
    assert new == b"aXef" and fixed == [first] and remaining == [second]
