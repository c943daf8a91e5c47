"""SARIF 2.1.0 output, with what GitHub code scanning reads."""

from __future__ import annotations

import json
import os
import re
from urllib.parse import quote_from_bytes

from .. import __version__
from ..fingerprint import line_fingerprints
from . import unicode_text

LEVELS = {"error": "error", "warning": "warning", "info": "note"}
INFO_URI = "https://github.com/kernlint/kernlint"


def _section(doc: str, title: str) -> str:
    m = re.search(rf"## {re.escape(title)}\s*\n(.*?)(?=\n## |\Z)", doc, re.S)
    return m.group(1).strip() if m else ""


def _repo_root() -> str:
    from ..discovery import git_root

    return git_root(os.getcwd()) or os.getcwd()


def _bytes(s: str) -> bytes:
    """A path's bytes (a byte that was not valid UTF-8 is back as itself)."""
    try:
        return s.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # (a surrogate that escapes no byte)
        return s.encode("utf-8", "surrogatepass")


def quote_path(path: str) -> str:
    """A '/'-separated path as an RFC 3986 path: every byte but the unreserved characters and
    '/' percent-encoded (`with space.cu` -> `with%20space.cu`, a byte 0xFF -> `%FF`)."""
    return quote_from_bytes(_bytes(path), safe="/")


def file_uri(path: str) -> str:
    """The absolute `file://` URI of an absolute path."""
    p = path.replace(os.sep, "/")
    if not p.startswith("/"):  # a drive (C:/x): file:///C:/x
        p = "/" + p
    drive = p[:3] if re.match(r"/[A-Za-z]:", p) else ""
    return "file://" + drive + quote_path(p[len(drive) :])


def _location(path: str, root: str) -> tuple[str, bool]:
    """(the path relative to `root` with '/' separators, or its absolute path when outside;
    whether it is relative)."""
    absolute = os.path.abspath(path)
    try:
        rel = os.path.relpath(absolute, root)
    except ValueError:  # (another drive)
        return absolute, False
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return absolute, False
    return rel.replace(os.sep, "/"), True


def rule_descriptor(rule) -> dict:
    what = _section(rule.doc, "What it does")
    first_paragraph = what.split("\n\n")[0].replace("\n", " ") if what else rule.summary
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": first_paragraph},
        "help": {"text": rule.doc, "markdown": rule.doc},
        "defaultConfiguration": {"level": LEVELS.get(rule.severity, "warning")},
        "properties": {"tags": [rule.language, rule.status], "precision": "high"},
    }


def render(diagnostics, registry, sources) -> str:
    root = _repo_root()
    rules = registry.rules
    index = {r.code: i for i, r in enumerate(rules)}
    located: dict[str, tuple[str, bool]] = {}

    def location(path: str) -> tuple[str, bool]:
        found = located.get(path)
        if found is None:
            found = located[path] = _location(path, root)
        return found

    def fingerprint_key(d) -> str:  # (the unencoded form: fingerprints stay as they were)
        where, relative = location(d.path)
        return where if relative else "file://" + where.replace(os.sep, "/")

    fingerprints = line_fingerprints(diagnostics, sources, path_key=fingerprint_key)
    results = []
    for d, fp in zip(diagnostics, fingerprints, strict=True):
        where, relative = location(d.path)
        if relative:
            artifact = {"uri": quote_path(where), "uriBaseId": "%SRCROOT%"}
        else:
            artifact = {"uri": file_uri(where)}
        results.append(
            {
                "ruleId": d.code,
                "ruleIndex": index[d.code],
                "level": LEVELS.get(d.severity, "warning"),
                "message": {"text": unicode_text(d.message)},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": artifact,
                            "region": {
                                "startLine": d.line,
                                "startColumn": d.column,
                                "endLine": d.end_line,
                                "endColumn": max(d.end_column, d.column),
                            },
                        }
                    }
                ],
                "partialFingerprints": {"primaryLocationLineHash": fp},
            }
        )
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "kernlint",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFO_URI,
                        "rules": [rule_descriptor(r) for r in rules],
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": file_uri(root).rstrip("/") + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return json.dumps(doc, indent=2) + "\n"
