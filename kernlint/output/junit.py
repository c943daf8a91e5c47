"""JUnit XML: one test case per finding, and one passing case per clean file.

Names and messages are made printable first (control characters as visible escapes such as
`\\x01`, bytes that are not valid UTF-8 as U+FFFD), which leaves no character XML 1.0 forbids.
"""

from __future__ import annotations

from xml.etree import ElementTree as ET

from . import printable


def _xml_text(s: str) -> str:
    s = printable(s)
    if "\ufffe" in s or "\uffff" in s:  # (the two other characters XML 1.0 forbids)
        s = s.replace("\ufffe", "\\ufffe").replace("\uffff", "\\uffff")
    return s


def render(diagnostics, checked_paths) -> str:
    by_path: dict[str, list] = {}
    for d in diagnostics:
        by_path.setdefault(d.path, []).append(d)
    paths = sorted(set(checked_paths) | set(by_path))
    suites = ET.Element("testsuites", name="kernlint")
    suite = ET.SubElement(suites, "testsuite", name="kernlint")
    tests = failures = 0
    for path in paths:
        found = by_path.get(path, [])
        shown = _xml_text(path)
        if not found:
            ET.SubElement(suite, "testcase", name=shown, classname="kernlint", file=shown)
            tests += 1
            continue
        for d in found:
            message = _xml_text(d.message)
            case = ET.SubElement(
                suite,
                "testcase",
                name=f"{d.code} {d.name} at {shown}:{d.line}:{d.column}",
                classname=shown,
                file=shown,
                line=str(d.line),
            )
            failure = ET.SubElement(case, "failure", message=message, type=d.code)
            failure.text = f"{shown}:{d.line}:{d.column}: {d.code} [{d.name}] {message}"
            tests += 1
            failures += 1
    for el in (suites, suite):
        el.set("tests", str(tests))
        el.set("failures", str(failures))
        el.set("errors", "0")
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
    )
