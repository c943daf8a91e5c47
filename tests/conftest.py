import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def sglang_package(tmp_path_factory):
    """The unpacked SGLang 0.5.23 `sglang` package (downloaded once per session; skip offline)."""
    from sglang_tree import sglang_root

    return sglang_root(tmp_path_factory)
