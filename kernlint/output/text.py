"""Human-readable output: `path:line:col: CODE [name] message`, the line, a caret."""

from __future__ import annotations


def _caret_line(line_text: str, col: int, width: int) -> str:
    before = line_text[: col - 1]
    if "\t" in before:  # keep tabs, so the caret lines up where the line has them
        prefix = "".join("\t" if c == "\t" else " " for c in before)
    else:
        prefix = " " * len(before)
    return prefix + "^" * max(1, width)


def render(diagnostics, sources, *, show_source: bool = True, fix_available=None) -> str:
    out = []
    for d in diagnostics:
        marker = " [*]" if fix_available and fix_available(d) else ""
        out.append(f"{d.path}:{d.line}:{d.column}: {d.code}{marker} [{d.name}] {d.message}")
        source = sources.get(d.path) if show_source else None
        if source is not None:
            # The finding's own offset gives its line: no need to find every line of the file
            # (the line number was computed from that offset in the same bytes).
            text = None
            if 0 <= d.start <= len(source.data):
                text = source.line_text_at(d.start)
            elif 0 <= d.line - 1 < len(source.line_starts):
                text = source.line_text(d.line - 1)
            if text is not None:
                text_clean = (
                    text
                    if text.isascii()
                    else text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
                )
                gutter = f"{d.line:>5} | "
                out.append(gutter + text_clean)
                width = (
                    (d.end_column - d.column) if d.end_line == d.line else len(text) - d.column + 1
                )
                out.append(" " * (len(gutter) - 2) + "| " + _caret_line(text, d.column, width))
    return "\n".join(out) + ("\n" if out else "")


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
