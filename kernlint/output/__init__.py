"""Report writers, and what they share: how names and messages are made safe for each consumer
and how a report reaches stdout (streamed, with write failures surfaced).

Strings in a report may hold what no consumer accepts: a file name that is not valid UTF-8
comes from `os.fsdecode` with each undecodable byte as a lone surrogate (U+DC80..U+DCFF), and
a name or a source line may hold control characters. `unicode_text` makes a string valid
Unicode (each lone surrogate becomes U+FFFD); `printable` also writes control characters (and
the bidirectional-text controls) as visible escapes, so a name cannot inject terminal escapes
or break a line.
"""

from __future__ import annotations

import errno
import io
import os
import sys

from ..lazyre import lazy_compile

# Lone surrogates (undecodable bytes of a name), C0 and C1 controls, DEL, the bidirectional
# controls and the Unicode line and paragraph separators.
UNSAFE = lazy_compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
)
_SURROGATE = lazy_compile("[\ud800-\udfff]")
_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
REPLACEMENT = "\ufffd"
CHUNK = 1 << 16  # characters written to the stream at once


class ReportWriteError(Exception):
    """The report could not be written to stdout (not a closed pipe: that is BrokenPipeError)."""


def unicode_text(s: str) -> str:
    """`s` as valid Unicode: each lone surrogate (an undecodable byte) becomes U+FFFD."""
    if s.isascii():
        return s
    return _SURROGATE.sub(REPLACEMENT, s)


def escape_char(c: str) -> str:
    """How `printable` shows one unsafe character."""
    o = ord(c)
    if 0xD800 <= o <= 0xDFFF:
        return REPLACEMENT
    short = _SHORT.get(c)
    if short is not None:
        return short
    return f"\\x{o:02x}" if o <= 0xFF else f"\\u{o:04x}"


def printable(s: str, keep: str = "") -> str:
    """`s` with lone surrogates as U+FFFD and control characters as visible escapes (`\\x1b`,
    `\\n`, `\\u202e`), except the characters in `keep`."""
    if s.isascii() and s.isprintable():
        return s

    def sub(m):
        c = m.group()
        return c if c in keep else escape_char(c)

    return UNSAFE.sub(sub, s)


def _encodable(stream, text: str) -> str:
    """`text` as the stream's encoding can write it (what it cannot, backslash-escaped)."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    return text.encode(encoding, "backslashreplace").decode(encoding, "replace")


def _write_all(binary, data: bytes) -> None:
    """Write all of `data` to an unbuffered binary stream, whose writes may be partial (a pipe
    that fills, a write over the 2 GiB a system call takes at most)."""
    view = memoryview(data)
    while view:
        n = binary.write(view)
        if n is None:  # (a non-blocking descriptor that is full: wait until it can take more)
            import select

            select.select([], [binary.fileno()], [])
            continue
        if n <= 0:
            raise OSError(errno.EIO, "the write wrote nothing")
        view = view[n:]


def write_text(stream, text: str) -> None:
    """Write all of `text`; characters the stream's encoding cannot take are backslash-escaped.

    A text stream over an unbuffered binary one (`python -u`, PYTHONUNBUFFERED) drops what a
    partial write leaves out, so there the bytes are written here, until all are written."""
    binary = getattr(stream, "buffer", None)
    if isinstance(binary, io.RawIOBase):
        stream.flush()
        if os.linesep != "\n":  # (what the text layer would have translated)
            text = text.replace("\n", os.linesep)
        _write_all(binary, text.encode(stream.encoding or "utf-8", "backslashreplace"))
        return
    try:
        stream.write(text)  # (encodes all of it before writing any of it)
    except UnicodeEncodeError:
        stream.write(_encodable(stream, text))


def write_chunks(stream, chunks) -> None:
    """Write the report's pieces in chunks of about CHUNK characters, then flush: any write
    error (a full disk, a closed pipe) is raised here, never lost at exit."""
    pending: list[str] = []
    size = 0
    for piece in chunks:
        pending.append(piece)
        size += len(piece)
        if size >= CHUNK:
            write_text(stream, "".join(pending))
            pending.clear()
            size = 0
    if pending:
        write_text(stream, "".join(pending))
    stream.flush()


def report_error(exc: OSError) -> ReportWriteError:
    return ReportWriteError(f"cannot write the report: {exc.strerror or exc}")


def write_report(chunks) -> None:
    """Stream the report to stdout. A closed pipe raises BrokenPipeError (for a quiet exit);
    any other write failure raises ReportWriteError with the reason."""
    try:
        write_chunks(sys.stdout, chunks)
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise report_error(exc) from None


def flush_stdout() -> None:
    """Flush stdout inside the caller's error handling (as `write_report` reports failures)."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise report_error(exc) from None


def silence_stdout() -> None:
    """Point stdout's file descriptor at the null device, so that what is still buffered is
    dropped at exit instead of failing again (the Python documentation's advice on SIGPIPE)."""
    try:
        fd = sys.stdout.fileno()
        devnull = os.open(os.devnull, os.O_WRONLY)
    except (AttributeError, OSError, ValueError):
        return  # (not a real file: nothing flushes it at exit)
    try:
        os.dup2(devnull, fd)
    except OSError:
        pass
    finally:
        os.close(devnull)


def warn_line(stream, line: str) -> None:
    """Write one diagnostic line (a warning, an error) to `stream`, made printable."""
    write_text(stream, printable(line) + "\n")
