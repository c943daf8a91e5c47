"""Reports non-ASCII characters in JIT C/C++/CUDA sources.

## What it does
In JIT sources (files under `jit-roots`), reports every run of consecutive non-ASCII characters
(in comments, strings and identifiers) at its line and column, naming the characters. Bytes
that are not valid UTF-8 are reported too. Files the parser cannot fully understand are
checked too.

Only JIT sources are checked: ASCII-only is a convention of SGLang's JIT kernel guide, not of
its AOT kernels, vendored code or FlashInfer. Torch extensions and verbatim copies marked as
such in their leading comment are not JIT sources (`jit-exempt-markers = false` makes them
so), nor are generated files. To hold other code to ASCII too, add its directories to
`extend-jit-roots`.

## Why is this bad?
SGLang's JIT kernel guide requires ASCII-only C++/CUDA sources. Non-ASCII text breaks
compilers and tools that assume a locale, hides look-alike characters (a Unicode minus or
quote inside code is a compile error that is hard to see), and makes diffs and greps
unreliable. Byte-order marks and invalid UTF-8 confuse NVRTC and some nvcc front ends.

## Example
```cpp
// Computes x × y — the “fast” path
float mul(float x, float y) { return x * y; }
```

## Use instead
```cpp
// Computes x x y -- the "fast" path
float mul(float x, float y) { return x * y; }
```

## Fix safety
The fix is safe and offered only inside comments, and only when every character of the run
has an ASCII look-alike (curly quotes, dashes, ellipsis, arrows, multiplication and division
signs, <=, >=, !=, Unicode spaces, bullets, ...). Characters in literals or identifiers, or
without a look-alike, are reported without a fix: changing them changes the program,
or needs a human choice.
"""

from __future__ import annotations

import unicodedata

from kernlint.cpp.lexer import span_at
from kernlint.lazyre import lazy_compile
from kernlint.model import Edit, Fix, Rule

RULE = Rule(
    code="CU001",
    name="non-ascii-character",
    language="cpp",
    summary="Non-ASCII character in a JIT C/C++/CUDA source",
    scope="jit",
    fix="sometimes",
    needs_tree=False,
)

# ASCII look-alikes, used for the fix inside comments.
ASCII_LOOKALIKES = {
    "\u2018": "'",  # left single quotation mark
    "\u2019": "'",  # right single quotation mark
    "\u201a": "'",
    "\u201b": "'",
    "\u2032": "'",  # prime
    "\u201c": '"',  # left double quotation mark
    "\u201d": '"',  # right double quotation mark
    "\u201e": '"',
    "\u2033": '"',  # double prime
    "\u00ab": "<<",
    "\u00bb": ">>",
    "\u2010": "-",  # hyphen
    "\u2011": "-",  # non-breaking hyphen
    "\u2012": "-",  # figure dash
    "\u2013": "-",  # en dash
    "\u2014": "--",  # em dash
    "\u2015": "--",  # horizontal bar
    "\u2212": "-",  # minus sign
    "\u2026": "...",  # horizontal ellipsis
    "\u2192": "->",
    "\u2190": "<-",
    "\u2194": "<->",
    "\u21d2": "=>",
    "\u21d0": "<=",
    "\u27f6": "->",
    "\u00d7": "x",  # multiplication sign
    "\u00f7": "/",  # division sign
    "\u2264": "<=",
    "\u2265": ">=",
    "\u2260": "!=",
    "\u2248": "~=",
    "\u00b1": "+/-",
    "\u00b7": "*",  # middle dot
    "\u2022": "*",  # bullet
    "\u2219": "*",
    "\u22c5": "*",  # dot operator
    "\u00a0": " ",  # no-break space
    "\u2002": " ",
    "\u2003": " ",
    "\u2009": " ",  # thin space
    "\u200a": " ",
    "\u202f": " ",  # narrow no-break space
    "\u3000": " ",
    "\u200b": "",  # zero-width space
    "\u2060": "",  # word joiner
    "\u00b5": "u",  # micro sign
    "\u03bc": "u",  # greek mu (as in "us")
    "\u00b2": "^2",
    "\u00b3": "^3",
    "\u221e": "inf",
    "\u2713": "v",
    "\u2714": "v",
}

_NON_ASCII_RUN = lazy_compile(rb"[\x80-\xff]+")


def _describe(ch: str) -> str:
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape of an invalid byte
        return f"invalid UTF-8 byte 0x{code - 0xDC00:02X}"
    name = unicodedata.name(ch, "")
    return f"U+{code:04X} {name}" if name else f"U+{code:04X}"


def check(ctx) -> None:
    data = ctx.data
    if data.isascii():
        return
    spans = None
    for m in _NON_ASCII_RUN.finditer(data):
        chars = m.group().decode("utf-8", "surrogateescape")
        # A byte run may join a valid character to stray continuation bytes; report it once.
        # (The message names 3 characters: the run is read until a 4th distinct one.)
        described = []
        for ch in chars:
            d = _describe(ch)
            if d not in described:
                described.append(d)
                if len(described) > 3:
                    break
        if len(described) > 3:
            listing = ", ".join(described[:3]) + f", ... ({len(chars)} characters)"
        else:
            listing = ", ".join(described)
        plural = "s" if len(chars) > 1 else ""
        fix = None
        replacement = _replacement(chars)
        message = f"non-ASCII character{plural}: {listing}; {_advice(chars, replacement)}"
        if replacement is not None:
            if spans is None:
                spans = ctx.literal_spans
            span = span_at(spans, m.start())
            if span is not None and span.kind == "comment":
                fix = Fix(
                    (Edit(m.start(), m.end(), replacement),),
                    "safe",
                    f"Replace with `{replacement}`" if replacement else "Remove",
                )
        ctx.report(m.start(), m.end(), message, fix)


def _advice(chars: str, replacement: str | None) -> str:
    """What to write instead: the ASCII look-alike, or (without one) ASCII or an escape."""
    it = "it" if len(chars) == 1 else "them"
    if chars == "\ufeff":
        return "remove it (a byte-order mark)"
    if replacement == "":
        return f"remove {it}"
    if replacement is not None and replacement.strip(" ") == "":
        return f"replace {it} with {'a space' if len(replacement) == 1 else 'spaces'}"
    if replacement is not None:
        return f"replace {it} with `{replacement}`"
    code = ord(chars[0])
    if 0xDC80 <= code <= 0xDCFF:  # an invalid byte
        escape = f"\\x{code - 0xDC00:02x}"
    else:
        escape = f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
    if len(chars) == 1:
        return f"write it in ASCII (in a string literal, as the escape `{escape}`)"
    return f"write them in ASCII (in a string literal, as escapes: `{escape}`, ...)"


def _replacement(chars: str) -> str | None:
    out = []
    for ch in chars:
        ascii_ = ASCII_LOOKALIKES.get(ch)
        if ascii_ is None:
            return None
        out.append(ascii_)
    return "".join(out)
