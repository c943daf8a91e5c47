"""Baselines: adopt kernlint on a legacy tree by recording today's findings, report only new ones.

The file is JSON: `{"kernlint_baseline": 1, "findings": [{"path", "code", "fingerprint"}]}`.
Paths are relative to the baseline file's directory; fingerprints hash the finding's line content
(see `fingerprint.py`), so findings on lines that merely moved stay matched.
"""

from __future__ import annotations

import json
import os
from collections import Counter

from .config import ConfigError
from .fingerprint import line_fingerprints
from .fixes import write_atomic

VERSION = 1


def _keys(path: str, diagnostics, sources):
    base = os.path.dirname(os.path.abspath(path))

    def rel(d):
        src = sources.get(d.path)
        p = src.abspath if src is not None and src.abspath else os.path.abspath(d.path)
        return os.path.relpath(p, base).replace(os.sep, "/")

    fps = line_fingerprints(diagnostics, sources, path_key=rel)
    return [(rel(d), d.code, fp) for d, fp in zip(diagnostics, fps, strict=True)]


def write_baseline(path: str, diagnostics, sources) -> int:
    keys = _keys(path, diagnostics, sources)
    doc = {
        "kernlint_baseline": VERSION,
        "findings": [{"path": p, "code": c, "fingerprint": f} for p, c, f in keys],
    }
    data = (json.dumps(doc, indent=2) + "\n").encode()
    try:
        if os.path.exists(path):
            write_atomic(path, data)
        else:
            with open(path, "wb") as fh:
                fh.write(data)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write baseline: {exc.strerror or exc}") from None
    return len(keys)


def filter_baseline(path: str, diagnostics, sources):
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
        if doc.get("kernlint_baseline") != VERSION or not isinstance(doc.get("findings"), list):
            raise ValueError("not a kernlint baseline (version 1)")
        recorded = Counter((f["path"], f["code"], f["fingerprint"]) for f in doc["findings"])
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read baseline: {exc.strerror or exc}") from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"{path}: invalid baseline file: {exc}") from None
    kept = []
    matched = 0
    for d, key in zip(diagnostics, _keys(path, diagnostics, sources), strict=True):
        if recorded[key] > 0:
            recorded[key] -= 1
            matched += 1
        else:
            kept.append(d)
    return kept, matched
