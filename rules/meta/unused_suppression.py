"""Reports a `kernlint: ignore[...]` entry that suppresses nothing.

## What it does
Checks every rule named in an inline suppression comment (`// kernlint: ignore[...]`,
`ignore-next-line[...]`, `ignore-file[...]`, or `#` in Python) and reports each one that did
not suppress a finding of that rule, on the line (or file) it applies to.

Only rules that ran on the file are judged: a suppression for a disabled rule, or for a rule
that does not apply to the file (e.g. a JIT-only rule outside `jit-roots`), is not reported.

## Why is this bad?
A stale suppression hides the next real finding on that line and tells readers something
that is no longer true. Keeping suppressions exact keeps them trustworthy.

## Example
```cpp
int x = 0;  // kernlint: ignore[non-ascii-character]
```

## Use instead
```cpp
int x = 0;
```

## Fix safety
No automatic fix.
"""

from kernlint.model import Rule

RULE = Rule(
    code="KL001",
    name="unused-suppression",
    language="any",
    summary="A suppression comment that suppresses nothing",
    severity="warning",
)
