"""GitHub Actions workflow commands: one `::error ...::message` line per finding."""

from __future__ import annotations

LEVELS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(s: str) -> str:
    return escape_data(s).replace(":", "%3A").replace(",", "%2C")


def render(diagnostics) -> str:
    lines = []
    for d in diagnostics:
        props = [f"file={escape_property(d.path)}", f"line={d.line}", f"endLine={d.end_line}"]
        if d.end_line == d.line:
            # GitHub's endColumn is inclusive; kernlint's end column is exclusive.
            end_col = max(d.column, d.end_column - 1)
            props.insert(2, f"col={d.column}")
            props.append(f"endColumn={end_col}")
        props.append(f"title={escape_property(f'{d.code} {d.name}')}")
        level = LEVELS.get(d.severity, "warning")
        lines.append(f"::{level} {','.join(props)}::{escape_data(f'{d.code} {d.message}')}")
    return "\n".join(lines) + ("\n" if lines else "")
