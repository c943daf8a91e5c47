"""Reports a Python file that a rule needed to read and that cannot be parsed.

## What it does
Reports a Python file that one of the selected rules needed to parse (its bytes hold what the
rule looks for) and that `ast` cannot parse (a syntax error, undecodable bytes), at the
position Python gives, instead of the warning kernlint prints otherwise. The file's rules are
skipped; the run goes on with other files.

kernlint parses only the files its rules need, so this rule does not make it a syntax checker
of every Python file: a file no rule needs to read is never parsed, and its syntax errors are
left to Python's own tools (`python -m compileall`, ruff), which read every file anyway.
A file nested deeper than Python's parser goes is a warning, not a finding.

C/C++/CUDA files are never reported by this rule: tree-sitter recovers from what it cannot
parse, and rules stay silent inside the regions it could not understand (`--statistics` counts
them, `--show-skipped` lists them).

## Why is this bad?
A file that does not parse cannot be checked (nor imported).

## Example
```python
from sglang.srt.utils import is_hip

_use_aiter = is_hip()
if _use_aiter:
    import aiter


def check(x:
    return x
```

## Use instead
```python
from sglang.srt.utils import is_hip

_use_aiter = is_hip()
if _use_aiter:
    import aiter


def check(x):
    return x
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
# (no check: the engine reports the file where a rule's parse fails)
