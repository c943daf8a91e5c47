"""Rules about kernlint itself (code prefix KL)."""
