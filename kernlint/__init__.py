"""kernlint: a static linter and convention checker for GPU kernel sources."""

__version__ = "0.1.0"
