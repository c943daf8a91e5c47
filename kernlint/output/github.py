"""GitHub Actions workflow commands: one `::error ...::message` line per finding.

Values are escaped as the runner unescapes them (`%25`, `%0D`, `%0A`; in properties also `%3A`
and `%2C`); other control characters are written as visible escapes (`\\x1b`) and bytes of a
name that are not valid UTF-8 as U+FFFD, so no value can end the line or color the log.
"""

from __future__ import annotations

from . import printable

LEVELS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(s: str) -> str:
    s = printable(s, keep="\r\n")
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def line(d) -> str:
    props = [f"file={escape_property(d.path)}", f"line={d.line}", f"endLine={d.end_line}"]
    if d.end_line == d.line:
        # GitHub's endColumn is inclusive; kernlint's end column is exclusive.
        end_col = max(d.column, d.end_column - 1)
        props.insert(2, f"col={d.column}")
        props.append(f"endColumn={end_col}")
    props.append(f"title={escape_property(f'{d.code} {d.name}')}")
    level = LEVELS.get(d.severity, "warning")
    return f"::{level} {','.join(props)}::{escape_data(f'{d.code} {d.message}')}\n"


def iter_render(diagnostics):
    return map(line, diagnostics)


def render(diagnostics) -> str:
    return "".join(iter_render(diagnostics))
