"""JUnit XML: one test case per finding, and one passing case per clean file."""

from __future__ import annotations

from xml.etree import ElementTree as ET


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
        if not found:
            ET.SubElement(suite, "testcase", name=path, classname="kernlint", file=path)
            tests += 1
            continue
        for d in found:
            case = ET.SubElement(
                suite,
                "testcase",
                name=f"{d.code} {d.name} at {path}:{d.line}:{d.column}",
                classname=path,
                file=path,
                line=str(d.line),
            )
            failure = ET.SubElement(case, "failure", message=d.message, type=d.code)
            failure.text = f"{path}:{d.line}:{d.column}: {d.code} [{d.name}] {d.message}"
            tests += 1
            failures += 1
    for el in (suites, suite):
        el.set("tests", str(tests))
        el.set("failures", str(failures))
        el.set("errors", "0")
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
    )
