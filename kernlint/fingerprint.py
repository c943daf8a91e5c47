"""Location-independent fingerprints of findings (SARIF partialFingerprints, baselines).

A fingerprint hashes the rule, the file and the *content* of the finding's line (whitespace
collapsed), plus an occurrence counter among identical (rule, line content) pairs in the file.
Moving the line, or editing unrelated lines, keeps it; editing the line itself changes it.
"""

from __future__ import annotations

import hashlib


def line_fingerprints(diagnostics, sources, path_key=lambda d: d.path) -> list[str]:
    """Fingerprints for `diagnostics`, in the same order."""
    counts: dict[tuple, int] = {}
    lines: dict[tuple, str] = {}  # (path, line) -> collapsed text: once per line, not per finding
    paths: dict[str, str] = {}
    out = []
    for d in diagnostics:
        where = (d.path, d.line)
        text = lines.get(where)
        if text is None:
            source = sources.get(d.path)
            text = ""
            if source is not None and 0 < d.line <= len(source.line_starts):
                text = " ".join(source.line_text(d.line - 1).split())
            lines[where] = text
        path = paths.get(d.path)
        if path is None:
            path = paths[d.path] = path_key(d)
        key = (path, d.code, text)
        n = counts.get(key, 0) + 1
        counts[key] = n
        digest = hashlib.sha256("\0".join(key).encode("utf-8", "surrogateescape")).hexdigest()
        out.append(f"{digest[:16]}:{n}")
    return out
