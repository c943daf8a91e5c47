from pathlib import Path

import pytest

from kernlint.testing import check_fixture, check_rule, fixture_cases

RULES = Path(__file__).resolve().parent.parent / "tools" / "kernlint_rules"
RULE = RULES / "dropped_launch_error.py"


def test_rule_is_documented():
    check_rule(RULE)


@pytest.mark.parametrize("path", fixture_cases(RULES / "fixtures" / "dropped-launch-error"))
def test_fixture(path):
    check_fixture(path, RULE)
