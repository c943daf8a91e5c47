"""The real SGLang 0.5.23 wheel, downloaded at test time (never committed); skipped offline."""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import zipfile

import pytest

VERSION = "0.5.23"


def sglang_root(tmp_factory) -> str:
    """Path of the unpacked `sglang` package. KERNLINT_SGLANG_DIR reuses an unpacked copy."""
    given = os.environ.get("KERNLINT_SGLANG_DIR")
    if given:
        if not os.path.isdir(os.path.join(given, "kernels", "jit")):
            pytest.skip(f"KERNLINT_SGLANG_DIR={given} holds no kernels/jit")
        return given
    base = tmp_factory.mktemp("sglang")
    wheel_dir = base / "w"
    try:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                f"sglang=={VERSION}",
                "--no-deps",
                "--only-binary=:all:",
                "-q",
                "-d",
                str(wheel_dir),
            ],
            check=True,
            capture_output=True,
            timeout=300,
        )
    except (subprocess.SubprocessError, OSError) as exc:
        pytest.skip(f"cannot download sglang=={VERSION}: {exc}")
    wheels = glob.glob(str(wheel_dir / "sglang-*.whl"))
    if not wheels:
        pytest.skip("no sglang wheel downloaded")
    with zipfile.ZipFile(wheels[0]) as zf:
        zf.extractall(base / "sg")
    return str(base / "sg" / "sglang")
