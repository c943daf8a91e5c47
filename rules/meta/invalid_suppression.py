"""Reports a suppression comment that does not name known rules.

## What it does
Reports `kernlint: ignore`, `kernlint: ignore-next-line` and `kernlint: ignore-file`
comments that name no rule (a bare `kernlint: ignore`) or name a code or rule name that
kernlint does not know, and misspelt directives: a comment where `kernlint:` is followed by a
word that is not one of those three but is written like one (it starts with `ignore`, or a
`[...]` list follows it: `kernlint: ignore-nextline[CU001]`, `kernlint: ignore_file[CU001]`).
A misspelt directive suppresses nothing. Comments that merely mention `kernlint:` in prose
are not reported.

## Why is this bad?
A blanket suppression hides every present and future finding on the line; a misspelled
code suppresses nothing while looking as if it did. kernlint requires suppressions to say
exactly what they suppress.

## Example
```cpp
// kernlint: ignore
// kernlint: ignore[CU9999]
// kernlint: ignore-nextline[CU002]
```

## Use instead
```cpp
// kernlint: ignore[non-ascii-character]
```

## Fix safety
No automatic fix.
"""

from kernlint.model import Rule

RULE = Rule(
    code="KL002",
    name="invalid-suppression",
    language="any",
    summary="A suppression comment that names no rule or an unknown rule",
    severity="warning",
)
