"""Python rules (code prefix PY)."""
