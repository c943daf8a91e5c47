# The tutorial's project (docs/local-rules.md) is run by tests/test_local_rules.py, in a copy
# made from the tutorial's text: kernlint's own test run does not collect its test file.
collect_ignore = ["tutorial"]
