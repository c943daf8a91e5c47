"""kernlint: a static linter and convention checker for GPU kernel sources."""

# The one place the version is set: pyproject.toml reads it (`dynamic = ["version"]`).
__version__ = "0.1.0"
