"""Inline suppressions.

    x = bad();  // kernlint: ignore[CU001]                 this line
    // kernlint: ignore-next-line[non-ascii-character]    the next line
    // kernlint: ignore-file[CU002, raw-kernel-launch]    the whole file

(`#` instead of `//` in Python; `/* ... */` works too.) A suppression must name what it
suppresses (codes or rule names, comma-separated); one that names nothing or an unknown rule is
reported as `invalid-suppression`; one that suppresses nothing is reported as
`unused-suppression`. Suppressions are only recognized inside comments.
"""

from __future__ import annotations

import re

from .record import field, record

_MARKER = re.compile(
    rb"kernlint:[ \t]*(?P<kind>ignore-file|ignore-next-line|ignore)\b(?:[ \t]*\[(?P<codes>[^\]\n]*)\])?"
)


@record
class Suppression:
    kind: str  # "ignore" | "ignore-next-line" | "ignore-file"
    line: int  # 1-based line the comment is on
    target_line: int  # line it applies to (0 for the whole file)
    start: int  # byte span of the directive
    end: int
    names: list[str]  # as written
    codes: list[str | None]  # resolved codes (None = unknown)
    used: set[str] = field(default_factory=set)


def _comment_ranges(source) -> list[tuple[int, int]]:
    data = source.data
    if source.language == "cpp":
        from .cpp.lexer import literal_spans

        return [(s.start, s.end) for s in literal_spans(data) if s.kind == "comment"]
    # Python: tokenize finds real comments (not `#` inside strings).
    import io
    import tokenize

    out = []
    try:
        for tok in tokenize.tokenize(io.BytesIO(data).readline):
            if tok.type == tokenize.COMMENT:
                start = source.offset_of(tok.start[0], tok.start[1] + 1)
                end = source.offset_of(tok.end[0], tok.end[1] + 1)
                out.append((start, end))
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError):
        # Unparseable file: fall back to `#` that starts a line's trailing part.
        for m in re.finditer(rb"#[^\n]*", data):
            out.append((m.start(), m.end()))
    return out


def find_suppressions(source, registry) -> list[Suppression]:
    data = source.data
    if b"kernlint:" not in data:
        return []
    out: list[Suppression] = []
    for cstart, cend in _comment_ranges(source):
        chunk = data[cstart:cend]
        for m in _MARKER.finditer(chunk):
            start, end = cstart + m.start(), cstart + m.end()
            line = source.line_index(start) + 1
            kind = m.group("kind").decode()
            raw = m.group("codes")
            names = [n.strip() for n in raw.decode("utf-8", "replace").split(",")] if raw else []
            names = [n for n in names if n]
            codes = []
            for n in names:
                rule = registry.get(n)
                codes.append(rule.code if rule is not None else None)
            target = {"ignore": line, "ignore-next-line": line + 1, "ignore-file": 0}[kind]
            out.append(Suppression(kind, line, target, start, end, names, codes))
    return out


def apply_suppressions(diagnostics, suppressions):
    """Drop suppressed diagnostics; mark which suppression entries were used."""
    if not suppressions:
        return diagnostics
    file_level: dict[str, list[Suppression]] = {}
    by_line: dict[int, list[Suppression]] = {}
    for s in suppressions:
        for code in s.codes:
            if code is None:
                continue
            if s.target_line == 0:
                file_level.setdefault(code, []).append(s)
            else:
                by_line.setdefault(s.target_line, []).append(s)
    kept = []
    for d in diagnostics:
        hit = None
        for s in by_line.get(d.line, ()):
            if d.code in s.codes:
                hit = s
                break
        if hit is None and d.code in file_level:
            hit = file_level[d.code][0]
        if hit is None:
            kept.append(d)
        else:
            hit.used.add(d.code)
    return kept
