"""Reports a Python file that cannot be parsed.

## What it does
Reports Python files that `ast` cannot parse (syntax errors, undecodable bytes), at the
position Python gives. The file's other rules are skipped; the run goes on with other files.

This rule is in preview: enabling it makes kernlint parse *every* Python file, where normally
only files that a Python rule can fire on (by its byte triggers) are parsed. Without it, a file
that fails to parse when a rule needs it is still reported, as a warning naming the file.

C/C++/CUDA files are never reported by this rule: tree-sitter recovers from what it cannot
parse, and rules stay silent inside the regions it could not understand.

## Why is this bad?
A file that does not parse cannot be checked (nor imported).

## Example
```python
def f(:
    pass
```

## Use instead
```python
def f():
    pass
```

## Fix safety
No automatic fix.
"""

from kernlint.model import Rule

RULE = Rule(
    code="KL003",
    name="syntax-error",
    language="python",
    summary="A Python file that cannot be parsed",
    status="preview",
)


def check(ctx) -> None:
    """Parse the file; the engine reports the syntax error (this rule needs the tree)."""
    del ctx
