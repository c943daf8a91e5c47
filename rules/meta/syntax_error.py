"""Reports a Python file that cannot be parsed.

## What it does
Reports Python files that `ast` cannot parse (syntax errors, undecodable bytes), at the
position Python gives. The file's other rules are skipped; the run goes on with other files.

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
)
