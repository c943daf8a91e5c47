"""The kernlint rule catalogue: one rule per module, grouped by language family.

Installed as the `kernlint_rules` package. Families: `meta` (KL: kernlint itself),
`cpp` (CU: C/C++/CUDA), `python` (PY: Python).
"""
