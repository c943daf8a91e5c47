"""SARIF 2.1.0 output, with what GitHub code scanning reads."""

from __future__ import annotations

import json
import os
import re

from .. import __version__
from ..fingerprint import line_fingerprints

LEVELS = {"error": "error", "warning": "warning", "info": "note"}
INFO_URI = "https://github.com/kernlint/kernlint"


def _section(doc: str, title: str) -> str:
    m = re.search(rf"## {re.escape(title)}\s*\n(.*?)(?=\n## |\Z)", doc, re.S)
    return m.group(1).strip() if m else ""


def _repo_root() -> str:
    from ..discovery import git_root

    return git_root(os.getcwd()) or os.getcwd()


def _uri(path: str, root: str) -> str:
    rel = os.path.relpath(os.path.abspath(path), root)
    if rel.startswith(os.pardir):
        return "file://" + os.path.abspath(path).replace(os.sep, "/")
    return rel.replace(os.sep, "/")


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
    fingerprints = line_fingerprints(diagnostics, sources, path_key=lambda d: _uri(d.path, root))
    results = []
    for d, fp in zip(diagnostics, fingerprints, strict=True):
        results.append(
            {
                "ruleId": d.code,
                "ruleIndex": index[d.code],
                "level": LEVELS.get(d.severity, "warning"),
                "message": {"text": d.message},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {
                                "uri": _uri(d.path, root),
                                "uriBaseId": "%SRCROOT%",
                            },
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
                "originalUriBaseIds": {
                    "%SRCROOT%": {"uri": "file://" + root.replace(os.sep, "/").rstrip("/") + "/"}
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return json.dumps(doc, indent=2) + "\n"
