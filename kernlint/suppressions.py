"""Inline suppressions.

    x = bad();  // kernlint: ignore[CU001]                 this line
    // kernlint: ignore-next-line[non-ascii-character]    the next line
    // kernlint: ignore-file[CU002, raw-kernel-launch]    the whole file

(`#` instead of `//` in Python; `/* ... */` works too.) A suppression must name what it
suppresses (codes or rule names, comma-separated); one that names nothing or an unknown rule is
reported as `invalid-suppression`; one that suppresses nothing is reported as
`unused-suppression`. Suppressions are only recognized inside comments. A comment where
`kernlint:` is followed by a word that is not a directive but is written like one (it starts
with `ignore`, or a `[` list follows it: `kernlint: ignore-nextline[CU001]`) is reported as
`invalid-suppression` too, and suppresses nothing.

Finding and applying suppressions is linear in the file's size and in the number of
directives and findings.
"""

from __future__ import annotations

import re

from .lazyre import lazy_compile
from .record import field, record

KINDS = ("ignore", "ignore-next-line", "ignore-file")
_KNOWN = ", ".join(f"`{k}`" for k in KINDS)
# `kernlint:`, a word (letters, digits, `_` and `-`), and an optional `[...]` list. Which
# words are directives is decided after the match (see `_directive`).
_MARKER = lazy_compile(
    rb"kernlint:[ \t]*(?P<kind>[A-Za-z_][\w-]*)(?:[ \t]*\[(?P<codes>[^\]\r\n]*)\])?"
)
_BOM = b"\xef\xbb\xbf"


@record
class Suppression:
    kind: str  # "ignore" | "ignore-next-line" | "ignore-file", or the misspelt word written
    line: int  # 1-based line the comment is on
    target_line: int  # line it applies to (0 for the whole file, -1 for nothing)
    start: int  # byte span of the directive
    end: int
    names: list[str]  # as written
    codes: list[str | None]  # resolved codes (None = unknown)
    used: set[str] = field(default_factory=set)

    @property
    def known(self) -> bool:
        return self.kind in KINDS

    def problems(self) -> list[str]:
        """Why this directive is invalid (`invalid-suppression` messages); [] when valid."""
        if not self.known:
            return [
                f"`kernlint: {self.kind}` is not a suppression directive: "
                f"the known ones are {_KNOWN}"
            ]
        out = []
        if not self.names:
            out.append(
                f"`kernlint: {self.kind}` must name the rules it suppresses, "
                f"e.g. `kernlint: {self.kind}[CODE]`"
            )
        for name, code in zip(self.names, self.codes, strict=True):
            if code is None:
                out.append(
                    f"`kernlint: {self.kind}` names an unknown rule `{name}`: use a code or "
                    "name that `kernlint rules` lists"
                )
        return out


def _directive(m) -> bool:
    """Is a `kernlint: word` match meant as a directive? A known kind, or a word written like
    one: it starts with `ignore` (any case), or a `[...]` list follows it. (Prose such as
    `# kernlint: the linter` is not.)"""
    kind = m.group("kind")
    return (
        kind.decode() in KINDS or m.group("codes") is not None or kind.lower().startswith(b"ignore")
    )


def _comment_ranges(source) -> list[tuple[int, int]]:
    data = source.data
    if source.language == "cpp":
        from .cpp.lexer import literal_spans

        return [(s.start, s.end) for s in literal_spans(data) if s.kind == "comment"]
    return python_comment_ranges(data)


def python_comment_ranges(data: bytes, stop: int | None = None) -> list[tuple[int, int]]:
    """Byte spans of the comments of a Python file (real comments, not `#` inside strings),
    those starting before `stop` (default: all). One pass of a lexer of Python's strings and
    comments over the bytes (`tokenize`'s tokens where they matter, and much faster than
    `tokenize`), linear in the file's size; files in an encoding whose multi-byte characters
    may hold those ASCII bytes (declared in a coding cookie) go through `tokenize`.

    Where `tokenize` reads an unterminated one-line string as an error token, so does the
    lexer; from an unterminated triple-quoted string on, `#` to the end of a line counts as
    a comment (the file does not parse; its directives are still found). A lone `\r` ends a
    line, as it does for Python."""
    if stop is None:
        stop = len(data)
    encoding = _declared_encoding(data)
    if encoding is None:  # an invalid declaration: the file does not parse
        return _hash_comments(data, 0, stop)
    if encoding not in _BYTE_LEXABLE:
        return _tokenize_comment_ranges(data, stop)
    out: list[tuple[int, int]] = []
    search = _PY_CODE.search
    n = len(data)
    pos = 0
    while True:
        m = search(data, pos, stop)  # (a comment or a string must start before `stop`)
        if m is None:
            return out
        at = m.start()
        if data[at] == 0x23:  # '#'
            e = _LINE_END.search(data, at)
            end = n if e is None else e.start()
            out.append((at, end))
            pos = end
            continue
        quote = data[at : at + 3]
        if quote not in _TRIPLE:
            quote = data[at : at + 1]
        end_of = _PY_STRING_END[quote].search
        i = at + len(quote)
        while True:
            e = end_of(data, i)
            if e is None:
                if len(quote) == 3:  # unterminated to the end of the file
                    out.extend(_hash_comments(data, at + 3, stop))
                    return out
                pos = at + 1  # (an error token, as tokenize reads it: code goes on)
                break
            c = data[e.start()]
            if c == 0x5C:  # a backslash: it escapes the next byte, or a `\r\n`
                i = e.start() + (3 if data[e.start() + 1 : e.start() + 3] == b"\r\n" else 2)
                continue
            if c in (0x0A, 0x0D):  # a one-line string not closed on its line
                pos = at + 1
            else:
                pos = e.end()
            break


_PY_CODE = lazy_compile(rb"[#'\"]")
_LINE_END = lazy_compile(rb"[\r\n]")
_TRIPLE = (b"'''", b'"""')
_PY_STRING_END = {
    b"'": lazy_compile(rb"['\\\r\n]"),
    b'"': lazy_compile(rb'["\\\r\n]'),
    b"'''": lazy_compile(rb"'''|\\"),
    b'"""': lazy_compile(rb'"""|\\'),
}
# Encodings in which the bytes `#`, `'`, `"`, `\\`, `\r` and `\n` always mean those characters.
_BYTE_LEXABLE = frozenset({"utf-8", "ascii", "iso8859-1", "iso8859-15", "cp1252"})
_COOKIE = lazy_compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_HASH = lazy_compile(rb"#[^\r\n]*")
_LINE_BREAK = lazy_compile(rb"\r\n|\r|\n")


def _declared_encoding(data: bytes) -> str | None:
    """The encoding of a Python file: its coding cookie on one of the first two lines (PEP
    263), else UTF-8; None for an unknown one or one that a BOM contradicts."""
    import codecs

    bom = data.startswith(_BOM)
    lines = []
    pos = 3 if bom else 0
    for _ in range(2):
        e = _LINE_BREAK.search(data, pos)
        lines.append(data[pos : len(data) if e is None else e.start()])
        if e is None:
            break
        pos = e.end()
    for line in lines:
        m = _COOKIE.match(line)
        if m is not None:
            try:
                name = codecs.lookup(m.group(1).decode("ascii")).name
            except (LookupError, UnicodeDecodeError):
                return None
            return None if bom and name != "utf-8" else name
        if not re.match(rb"^[ \t\f]*(?:#|$)", line):
            break  # (a cookie on line 2 only follows a comment or blank line 1)
    return "utf-8"


def _hash_comments(data: bytes, start: int, stop: int) -> list[tuple[int, int]]:
    """`#` to the end of each line, from `start` (what is left of a file that does not lex)."""
    out = []
    for m in _HASH.finditer(data, start):
        if m.start() >= stop:
            break
        out.append((m.start(), m.end()))
    return out


def _tokenize_comment_ranges(data: bytes, stop: int) -> list[tuple[int, int]]:
    """`python_comment_ranges` through `tokenize`, for a file in another encoding: each
    comment's position is converted to a byte offset from the previous one on its line."""
    import io
    import tokenize

    from .source import line_starts

    starts = line_starts(data)  # tokenize's rows: lines ended by `\n` (its readline's)
    n_rows = len(starts)
    out: list[tuple[int, int]] = []
    encoding = "utf-8"
    row, col0, byte0 = 0, 0, 0  # the line being read and a position on it
    last_row = 1  # the last row tokenize read without an error
    try:
        for tok in tokenize.tokenize(io.BytesIO(data).readline):
            r, c = tok.start
            if tok.type != tokenize.COMMENT:
                if tok.type == tokenize.ENCODING:
                    encoding = tok.string
                    continue
                if r <= n_rows and starts[r - 1] >= stop:
                    break  # past the last directive: no comment after it can hold one
                last_row = tok.end[0]
                continue
            last_row = r
            if r != row:
                row, col0 = r, 0
                byte0 = starts[r - 1] if r <= n_rows else len(data)
            byte0 += len(tok.line[col0:c].encode(encoding, "surrogatepass"))
            col0 = c
            if byte0 >= stop:
                break
            out.append((byte0, byte0 + len(tok.string.encode(encoding, "surrogatepass"))))
    except (tokenize.TokenError, SyntaxError, UnicodeError, LookupError):
        # Unreadable from some line on: from there, `#` to the end of a line is a comment.
        resume = starts[last_row - 1] if last_row <= n_rows else len(data)
        if out:
            resume = max(resume, out[-1][1])
        out.extend(_hash_comments(data, resume, stop))
    return out


def find_suppressions(source, registry) -> list[Suppression]:
    data = source.data
    last = data.rfind(b"kernlint:")
    if last < 0:
        return []
    out: list[Suppression] = []
    resolved: dict[str, str | None] = {}
    parsed: dict[bytes | None, tuple[list[str], list[str | None]]] = {}
    if source.language == "cpp":
        comments = _comment_ranges(source)
    else:
        comments = python_comment_ranges(data, last + 1)
    line_index = source.line_index
    for cstart, cend in comments:
        if data.find(b"kernlint:", cstart, cend) < 0:
            continue
        for m in _MARKER.finditer(data, cstart, cend):
            if not _directive(m):
                continue
            start, end = m.start(), m.end()
            line = line_index(start) + 1
            kind = m.group("kind").decode()
            raw = m.group("codes")
            found = parsed.get(raw)  # (the same list is often written many times)
            if found is None:
                names = raw.decode("utf-8", "replace").split(",") if raw else []
                names = [n.strip() for n in names if n.strip()]
                codes = []
                for n in names:
                    if n not in resolved:
                        rule = registry.get(n)
                        resolved[n] = rule.code if rule is not None else None
                    codes.append(resolved[n])
                found = parsed[raw] = (names, codes)
            names, codes = list(found[0]), list(found[1])
            if kind not in KINDS:
                out.append(Suppression(kind, line, -1, start, end, names, [None] * len(names)))
                continue
            target = {"ignore": line, "ignore-next-line": line + 1, "ignore-file": 0}[kind]
            out.append(Suppression(kind, line, target, start, end, names, codes))
    return out


def apply_suppressions(diagnostics, suppressions):
    """Drop suppressed diagnostics; mark which suppression entries were used. Linear: the
    suppressions are indexed by (line, code) and by code for the file-level ones."""
    if not suppressions:
        return diagnostics
    file_level: dict[str, Suppression] = {}
    by_line: dict[tuple[int, str], Suppression] = {}
    for s in suppressions:
        if s.target_line < 0:
            continue
        for code in s.codes:
            if code is None:
                continue
            if s.target_line == 0:
                file_level.setdefault(code, s)
            else:
                by_line.setdefault((s.target_line, code), s)  # the first one on the line wins
    kept = []
    for d in diagnostics:
        hit = by_line.get((d.line, d.code)) if by_line else None
        if hit is None:
            hit = file_level.get(d.code)
        if hit is None:
            kept.append(d)
        else:
            hit.used.add(d.code)
    return kept
