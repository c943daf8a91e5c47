"""Human-readable output: `path:line:col: CODE [name] message`, the line, a caret.

The source excerpt is a window of at most WINDOW characters around the finding's column (an
ellipsis marks a cut side), so a report grows with the number of findings, not with the
length of their lines. Control characters are shown as escapes (tabs are kept), and the
caret stays under the characters it marks.
"""

from __future__ import annotations

from . import UNSAFE, escape_char, printable

WINDOW = 120  # source characters shown around a finding, at most
ELLIPSIS = "..."
_MIN_CONTEXT = 16  # characters of the window left for context when the highlight is long
_SPAN = 4 * WINDOW + 3  # bytes read on each side: WINDOW characters, plus a cut character


def _plain(s: str) -> bool:
    """No character of `s` needs an escape (tabs are kept)."""
    if s.isascii() and s.isprintable():
        return True
    return UNSAFE.search(s.replace("\t", " ")) is None


def _shown(c: str) -> str:
    if c == "\t" or UNSAFE.match(c) is None:
        return c
    return escape_char(c)


def _offset(source, d, row: int) -> int:
    """Byte offset of the finding's start on its line (its own offset when that is on the
    line, as it always is for kernlint's findings; else from its column)."""
    start = source.line_starts[row]
    end = source.line_end(row)
    if start <= d.start <= end:
        return d.start
    return min(max(start, source.offset_of(d.line, max(1, d.column))), end)


def excerpt(source, d) -> tuple[str, str] | None:
    """(the excerpt of the finding's line, the caret line under it), or None."""
    row = d.line - 1
    if not 0 <= row < len(source.line_starts):
        return None
    data = source.data
    line_start, line_end = source.line_starts[row], source.line_end(row)
    at = _offset(source, d, row)
    # Only a window of bytes on each side of the column is decoded: the cut characters at the
    # far ends (a split UTF-8 sequence) lie beyond the WINDOW characters that can be shown.
    pre_from = max(line_start, at - _SPAN)
    post_to = min(line_end, at + _SPAN)
    pre = data[pre_from:at].decode("utf-8", "surrogateescape")
    post = data[at:post_to].decode("utf-8", "surrogateescape")
    if d.end_line == d.line:
        width = max(1, d.end_column - d.column)
    else:  # to the end of the line
        width = max(1, len(post))
    mark = min(width, len(post), WINDOW - _MIN_CONTEXT)
    left_want = (WINDOW - mark) // 2
    right_want = WINDOW - mark - left_want
    left = min(len(pre), left_want)
    right = min(len(post) - mark, right_want + (left_want - left))
    left = min(len(pre), left + max(0, right_want - right))
    cut_left = left < len(pre) or pre_from > line_start
    cut_right = mark + right < len(post) or post_to < line_end

    before, marked, after = pre[len(pre) - left :], post[:mark], post[mark : mark + right]
    if _plain(before) and _plain(marked) and _plain(after):  # (the usual line: no escapes)
        pad = " " * len(before)
        if "\t" in before:
            pad = "".join("\t" if c == "\t" else " " for c in before)
        text = [before, marked, after]
        carets = len(marked)
    else:
        text, pads = [], []
        for c in before:
            shown = _shown(c)
            text.append(shown)
            pads.append("\t" if c == "\t" else " " * len(shown))
        pad = "".join(pads)
        shown = "".join(map(_shown, marked))
        carets = len(shown)
        text += [shown, *map(_shown, after)]
    if cut_left:
        text.insert(0, ELLIPSIS)
        pad = " " * len(ELLIPSIS) + pad
    if cut_right:
        text.append(ELLIPSIS)
    return "".join(text), pad + "^" * max(1, carets)


def iter_render(diagnostics, sources, *, show_source: bool = True, fix_available=None):
    """The report, one finding (its lines, each ending in a newline) at a time."""
    for d in diagnostics:
        marker = " [*]" if fix_available and fix_available(d) else ""
        head = f"{printable(d.path)}:{d.line}:{d.column}: {d.code}{marker} [{d.name}] "
        head += printable(d.message) + "\n"
        source = sources.get(d.path) if show_source else None
        shown = excerpt(source, d) if source is not None else None
        if shown is None:
            yield head
            continue
        gutter = f"{d.line:>5} | "
        yield (f"{head}{gutter}{shown[0]}\n{' ' * (len(gutter) - 2)}| {shown[1]}\n")


def render(diagnostics, sources, *, show_source: bool = True, fix_available=None) -> str:
    return "".join(
        iter_render(diagnostics, sources, show_source=show_source, fix_available=fix_available)
    )


def summary(n: int, fixable: int, fixed: int = 0, unsafe_hidden: int = 0) -> str:
    lines = []
    if fixed:
        lines.append(f"Fixed {fixed} error{'s' if fixed != 1 else ''}.")
    if n == 0:
        lines.append("All checks passed!" if not fixed else "No errors remain.")
    else:
        msg = f"Found {n} error{'s' if n != 1 else ''}"
        if fixable:
            msg += f" ({fixable} fixable with `--fix`)"
        lines.append(msg + ".")
        if unsafe_hidden:
            lines.append(f"{unsafe_hidden} more fixable with `--fix --unsafe-fixes`.")
    return "\n".join(lines) + "\n"


def statistics(diagnostics, fix_available) -> str:
    counts: dict[str, list] = {}
    for d in diagnostics:
        entry = counts.setdefault(d.code, [0, d.name, 0])
        entry[0] += 1
        if fix_available(d):
            entry[2] += 1
    rows = sorted(counts.items(), key=lambda kv: (-kv[1][0], kv[0]))
    width = max((len(str(v[0])) for _, v in rows), default=1)
    lines = []
    for code, (count, name, fixable) in rows:
        mark = "[*]" if fixable else "   "
        lines.append(f"{count:>{width}}\t{code}\t{mark} {name}")
    return "\n".join(lines) + ("\n" if lines else "")
