"""Human-readable output (`full`, `concise`, `grouped`): `path:line:col: CODE [*] [name]
message`, and in `full` the line, a caret and the fix's title.

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


FORMATS = ("full", "concise", "grouped")  # (`text` is `full`)

# ANSI styles, close to ruff's: the path bold, `:` cyan, the code and caret in the severity's
# colour, the gutter bold blue, `help` bold cyan, the `[*]` / `[-]` marks cyan / yellow.
RESET = "\x1b[0m"
BOLD = "\x1b[1m"
UNDERLINE = "\x1b[4m"
CYAN = "\x1b[36m"
YELLOW = "\x1b[33m"
GUTTER = "\x1b[1;94m"
HELP = "\x1b[1;96m"
NOTE = "\x1b[1;33m"
PASSED = "\x1b[1;32m"
SEVERITY = {"error": "\x1b[1;31m", "warning": "\x1b[1;33m", "info": "\x1b[1;34m"}
MARKS = {"*": CYAN, "-": YELLOW}


class _Paint:
    """Wraps text in a style when colour is on; the identity when it is off."""

    def __init__(self, on: bool) -> None:
        self.on = on

    def __call__(self, style: str, s: str) -> str:
        return f"{style}{s}{RESET}" if self.on and s else s

    def mark(self, m: str | None) -> str:
        """` [*]` (a fix `--fix` applies) / ` [-]` (an unsafe fix, not enabled) / ``."""
        return f" [{self(MARKS[m], m)}]" if m else ""

    def sep(self) -> str:
        return self(CYAN, ":")


def mark(d, fix_available) -> str | None:
    """`*` when `--fix` would apply the finding's fix, `-` when it has an unsafe fix that
    `--unsafe-fixes` would enable, None when it has no fix."""
    if d.fix is None:
        return None
    return "*" if fix_available is None or fix_available(d) else "-"


def _code(paint, d) -> str:
    return paint(SEVERITY.get(d.severity, SEVERITY["error"]), d.code)


def _head(paint, d, fix_available) -> str:
    """`CODE [*] [name] message` (the part after the location)."""
    m = mark(d, fix_available) if fix_available is not None else None
    return f"{_code(paint, d)}{paint.mark(m)} [{d.name}] {printable(d.message)}"


def _help(paint, d, fix_available) -> str:
    """The fix's title under a finding (`help: Add `__restrict__``), and for an unsafe fix a
    note on what enables it; `` without a fix."""
    if d.fix is None:
        return ""
    out = f"{paint(HELP, 'help')}: {printable(d.fix.title)}\n"
    if d.fix.applicability == "unsafe":
        out += f"{paint(NOTE, 'note')}: this is an unsafe fix: it may change what the code does\n"
    return out


def iter_render(
    diagnostics,
    sources,
    *,
    show_source: bool = True,
    fix_available=None,
    output_format: str = "full",
    color: bool = False,
):
    """The report, one finding (its lines, each ending in a newline) at a time.

    `full`: `path:line:col: CODE [*] [name] message`, the source line, a caret and the fix's
    title, then a blank line; `concise`: the first line only; `grouped`: the findings under each file's name."""
    paint = _Paint(color)
    sep = paint.sep()
    if output_format == "grouped":
        yield from _grouped(paint, diagnostics, fix_available)
        return
    concise = output_format == "concise"
    for d in diagnostics:
        where = f"{paint(BOLD, printable(d.path))}{sep}{d.line}{sep}{d.column}{sep}"
        head = f"{where} {_head(paint, d, fix_available)}\n"
        if concise:
            yield head
            continue
        source = sources.get(d.path) if show_source else None
        shown = excerpt(source, d) if source is not None else None
        if shown is not None:
            line, caret = shown
            pad, carets = caret[: caret.index("^")], caret[caret.index("^") :]
            carets = paint(SEVERITY.get(d.severity, SEVERITY["error"]), carets)
            bar = paint(GUTTER, "|")
            head += f"{paint(GUTTER, f'{d.line:>5}')} {bar} {line}\n      {bar} {pad}{carets}\n"
        yield head + _help(paint, d, fix_available) + "\n"


def _grouped(paint, diagnostics, fix_available):
    """Each file's name, then its findings as `  line:col CODE [*] [name] message` (line and
    column padded to the file's widest), then a blank line."""
    group: list = []
    for d in diagnostics:
        if group and group[0].path != d.path:
            yield _group(paint, group, fix_available)
            group = []
        group.append(d)
    if group:
        yield _group(paint, group, fix_available)


def _group(paint, group, fix_available) -> str:
    lw = max(len(str(d.line)) for d in group)
    cw = max(len(str(d.column)) for d in group)
    lines = [f"{paint(UNDERLINE, printable(group[0].path))}:\n"]
    for d in group:
        at = f"{d.line:>{lw}}{paint.sep()}{d.column:<{cw}}"
        lines.append(f"  {at} {_head(paint, d, fix_available)}\n")
    lines.append("\n")
    return "".join(lines)


def render(diagnostics, sources, **kwargs) -> str:
    return "".join(iter_render(diagnostics, sources, **kwargs))


def _plural(n: int, word: str) -> str:
    if word == "info":
        return f"{n} info finding{'s' if n != 1 else ''}"
    return f"{n} {word}{'s' if n != 1 else ''}"


def severity_counts(diagnostics) -> dict[str, int]:
    """Findings per severity, errors first (only the severities that occur)."""
    counts = {"error": 0, "warning": 0, "info": 0}
    for d in diagnostics:
        counts[d.severity] = counts.get(d.severity, 0) + 1
    return {k: v for k, v in counts.items() if v}


def counted(counts: dict[str, int]) -> str:
    """`2 errors, 1 warning` (`0 errors` for none), errors first."""
    order = {"error": 0, "warning": 1, "info": 2}
    kinds = sorted((k for k, n in counts.items() if n), key=lambda k: order.get(k, 3))
    return ", ".join(_plural(counts[k], k) for k in kinds) or "0 errors"


def summary(
    counts,
    fixable: int,
    fixed: dict[str, int] | int = 0,
    unsafe_hidden: int = 0,
    *,
    color: bool = False,
) -> str:
    """`Found 3 errors, 5 warnings.` (`counts`: findings per severity, or their number), then
    what `[*]` and `[-]` mean: `[*] 2 fixable with `--fix` ([-] 1 unsafe fix available with
    `--fix --unsafe-fixes`).`"""
    paint = _Paint(color)
    if isinstance(counts, int):
        counts = {"error": counts} if counts else {}
    lines = []
    if isinstance(fixed, int):
        fixed = {"error": fixed} if fixed else {}
    if fixed:
        lines.append(paint(PASSED, f"Fixed {counted(fixed)}."))
    if not counts:
        lines.append(paint(PASSED, "All checks passed!") if not fixed else "No errors remain.")
        return "\n".join(lines) + "\n"
    lines.append(paint(BOLD, f"Found {', '.join(_plural(n, k) for k, n in counts.items())}."))
    unsafe = f"{unsafe_hidden} unsafe fix{'es' if unsafe_hidden != 1 else ''} available with "
    unsafe += "`--fix --unsafe-fixes`"
    if fixable and unsafe_hidden:
        lines.append(f"[{paint(CYAN, '*')}] {fixable} fixable with `--fix` ")
        lines[-1] += f"([{paint(YELLOW, '-')}] {unsafe})."
    elif fixable:
        lines.append(f"[{paint(CYAN, '*')}] {fixable} fixable with `--fix`.")
    elif unsafe_hidden:
        lines.append(f"[{paint(YELLOW, '-')}] {unsafe}.")
    return "\n".join(lines) + "\n"


def statistics(diagnostics, fix_available, *, color: bool = False) -> str:
    """One line per rule, most findings first: count, code, `[*]` (some finding has a fix
    `--fix` applies) or `[-]` (only unsafe fixes, not enabled), name."""
    paint = _Paint(color)
    counts: dict[str, list] = {}
    for d in diagnostics:
        entry = counts.setdefault(d.code, [0, d.name, 0, 0, d.severity])
        entry[0] += 1
        if fix_available(d):
            entry[2] += 1
        elif d.fix is not None:
            entry[3] += 1
    rows = sorted(counts.items(), key=lambda kv: (-kv[1][0], kv[0]))
    width = max((len(str(v[0])) for _, v in rows), default=1)
    lines = []
    for code, (count, name, fixable, hidden, severity) in rows:
        m = paint.mark("*" if fixable else ("-" if hidden else None)).lstrip() or "   "
        code = paint(SEVERITY.get(severity, SEVERITY["error"]), code)
        lines.append(f"{paint(BOLD, f'{count:>{width}}')}\t{code}\t{m} {name}")
    return "\n".join(lines) + ("\n" if lines else "")


def use_color(when: str | None, stream=None, environ=None) -> bool:
    """Whether the text report is coloured. `--color always` / `never` decide; else (`auto`)
    `NO_COLOR` (any non-empty value) turns it off, `FORCE_COLOR` (non-empty) on, `TERM=dumb`
    off, and otherwise it is on when `stream` is a terminal (None: a file, `-o FILE`: off)."""
    if when == "always":
        return True
    if when == "never":
        return False
    import os

    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    if stream is None:
        return False
    if env.get("FORCE_COLOR"):
        return True
    if env.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False
