"""JSON output: one array of findings on stdout. Schema: docs/output-formats.md.

Every string is valid Unicode: a byte of a file name (or of fix content) that is not valid
UTF-8 is written as U+FFFD; the output itself is ASCII (non-ASCII characters as `\\u` escapes).
"""

from __future__ import annotations

import json

from . import unicode_text


def fix_to_json(d, source):
    if d.fix is None:
        return None
    edits = []
    for e in d.fix.edits:
        sl, sc = source.position(e.start) if source else (0, 0)
        el, ec = source.position(e.end) if source else (0, 0)
        edits.append(
            {
                "content": unicode_text(e.content),
                "location": {"line": sl, "column": sc},
                "end_location": {"line": el, "column": ec},
            }
        )
    return {
        "applicability": d.fix.applicability,
        "message": unicode_text(d.fix.title),
        "edits": edits,
    }


def to_json_obj(d, source):
    return {
        "path": unicode_text(d.path),
        "line": d.line,
        "column": d.column,
        "end_line": d.end_line,
        "end_column": d.end_column,
        "code": d.code,
        "name": d.name,
        "message": unicode_text(d.message),
        "severity": d.severity,
        "fix": fix_to_json(d, source),
    }


def iter_render(diagnostics, sources):
    """The array, one element at a time (what `json.dumps(rows, indent=2)` writes)."""
    first = True
    for d in diagnostics:
        item = json.dumps(to_json_obj(d, sources.get(d.path)), indent=2)
        yield ("[\n  " if first else ",\n  ") + item.replace("\n", "\n  ")
        first = False
    yield "[]\n" if first else "\n]\n"


def render(diagnostics, sources) -> str:
    return "".join(iter_render(diagnostics, sources))
