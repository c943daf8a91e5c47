import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pytest  # noqa: E402

# The result cache's per-user key lives under XDG_CACHE_HOME: tests (and the kernlint processes
# they start) use one of their own, never the user's.
if "KERNLINT_TEST_KEEP_XDG" not in os.environ:
    import tempfile

    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="kernlint-test-xdg-")

# Tests read the plain text report: a colour setting of the caller's environment (a CI runner
# with FORCE_COLOR) must not colour it. Colour tests set these themselves.
for _name in ("FORCE_COLOR", "NO_COLOR"):
    os.environ.pop(_name, None)


@pytest.fixture(scope="session")
def sglang_package(tmp_path_factory):
    """The unpacked SGLang 0.5.23 `sglang` package (downloaded once per session; skip offline)."""
    from sglang_tree import sglang_root

    return sglang_root(tmp_path_factory)
