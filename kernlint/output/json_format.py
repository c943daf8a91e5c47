"""JSON output: one array of findings on stdout. Schema: docs/output-formats.md."""

from __future__ import annotations

import json


def fix_to_json(d, source):
    if d.fix is None:
        return None
    edits = []
    for e in d.fix.edits:
        sl, sc = source.position(e.start) if source else (0, 0)
        el, ec = source.position(e.end) if source else (0, 0)
        edits.append(
            {
                "content": e.content,
                "location": {"line": sl, "column": sc},
                "end_location": {"line": el, "column": ec},
            }
        )
    return {"applicability": d.fix.applicability, "message": d.fix.title, "edits": edits}


def to_json_obj(d, source):
    return {
        "path": d.path,
        "line": d.line,
        "column": d.column,
        "end_line": d.end_line,
        "end_column": d.end_column,
        "code": d.code,
        "name": d.name,
        "message": d.message,
        "severity": d.severity,
        "fix": fix_to_json(d, source),
    }


def render(diagnostics, sources) -> str:
    return json.dumps([to_json_obj(d, sources.get(d.path)) for d in diagnostics], indent=2) + "\n"
