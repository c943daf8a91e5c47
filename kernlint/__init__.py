"""kernlint: a static linter and convention checker for GPU kernel sources."""

# The one place the version is set: pyproject.toml reads it (`dynamic = ["version"]`).
__version__ = "0.1.0"

# The version of the rule interface local rules are written against (docs/rule-api.md): raised
# only when a change could break a rule written for the previous one.
RULE_API = 1
