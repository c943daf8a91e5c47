"""The release artifacts: the wheel and sdist `python -m build` makes (in a temporary copy of this
tree), `twine check` on both, the LICENSE in both, the version in one place, and an sdist that
holds everything the test suite reads (`.ci/run` runs the suite from the unpacked sdist)."""

from __future__ import annotations

import ast
import email
import glob
import hashlib
import importlib.util
import os
import subprocess
import sys
import tarfile
import zipfile

import pytest
from cli_support import run
from release_support import ROOT, copy_sources, pip_offline, source_files

from kernlint import __version__

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

pytest.importorskip("build")

# sha256 of the Apache License 2.0 as the ASF publishes it (apache.org/licenses/LICENSE-2.0.txt).
APACHE_2_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"

# What the sdist must hold beyond the packages: the test suite and what it reads.
SDIST_DIRS = ("fixtures", "tests", "bench", "scripts", "docs")
SDIST_FILES = ("LICENSE", "README.md", "pyproject.toml", ".pre-commit-hooks.yaml", "action.yml")


def _build(src, out, *flags):
    return subprocess.run(
        [sys.executable, "-m", "build", *flags, "--outdir", str(out), src],
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.fixture(scope="module")
def dists(tmp_path_factory):
    """`python -m build` on a copy of this tree: the sdist, then the wheel built from the sdist.
    Isolated (a fresh build environment from the package index); where pip cannot reach an index,
    without isolation when this environment has the build backend."""
    base = tmp_path_factory.mktemp("release")
    src = copy_sources(base / "src")
    out = base / "dist"
    proc = _build(src, out)
    if proc.returncode != 0 and pip_offline(proc.stdout + proc.stderr):
        if importlib.util.find_spec("setuptools") is None:
            pytest.skip(f"no package index for an isolated build, and no setuptools: {src}")
        proc = _build(src, out, "--no-isolation")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (sdist,) = glob.glob(str(out / "*.tar.gz"))
    (wheel,) = glob.glob(str(out / "*.whl"))
    return {"sdist": sdist, "wheel": wheel}


def _sdist_members(sdist) -> dict[str, tarfile.TarInfo]:
    prefix = f"kernlint-{__version__}/"
    with tarfile.open(sdist) as tf:
        members = tf.getmembers()
    assert all(m.name.startswith(prefix) or m.name + "/" == prefix for m in members)
    return {m.name[len(prefix) :]: m for m in members if m.isfile()}


def _sdist_file(sdist, rel) -> bytes:
    with tarfile.open(sdist) as tf:
        return tf.extractfile(f"kernlint-{__version__}/{rel}").read()


def _wheel_metadata(wheel):
    with zipfile.ZipFile(wheel) as zf:
        return email.message_from_bytes(zf.read(f"kernlint-{__version__}.dist-info/METADATA"))


def test_names_carry_the_version(dists):
    assert os.path.basename(dists["sdist"]) == f"kernlint-{__version__}.tar.gz"
    assert os.path.basename(dists["wheel"]) == f"kernlint-{__version__}-py3-none-any.whl"


def test_twine_check_passes(dists):
    pytest.importorskip("twine")
    proc = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", dists["sdist"], dists["wheel"]],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("PASSED") == 2, proc.stdout


def test_license_is_the_apache_text_and_ships_in_both(dists):
    with open(os.path.join(ROOT, "LICENSE"), "rb") as fh:
        license_bytes = fh.read()
    assert hashlib.sha256(license_bytes).hexdigest() == APACHE_2_SHA256
    with zipfile.ZipFile(dists["wheel"]) as zf:
        assert zf.read(f"kernlint-{__version__}.dist-info/licenses/LICENSE") == license_bytes
    assert _sdist_file(dists["sdist"], "LICENSE") == license_bytes
    meta = _wheel_metadata(dists["wheel"])
    assert meta["License-Expression"] == "Apache-2.0"
    assert meta.get_all("License-File") == ["LICENSE"]
    assert b"License-File: LICENSE" in _sdist_file(dists["sdist"], "PKG-INFO")


def test_metadata_has_classifiers_urls_and_keywords(dists):
    meta = _wheel_metadata(dists["wheel"])
    classifiers = meta.get_all("Classifier")
    assert "Programming Language :: Python :: 3" in classifiers
    assert any(
        c.startswith("Topic :: Software Development :: Quality Assurance") for c in classifiers
    )
    # PEP 639: the license is the expression, never a `License ::` classifier as well.
    assert not any(c.startswith("License ::") for c in classifiers)
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL"))
    assert {"Homepage", "Repository", "Issues"} <= set(urls)
    assert "cuda" in meta["Keywords"].split(",")
    assert meta["Requires-Python"] == ">=3.10"


def test_version_in_one_place(dists):
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
        project = tomllib.load(fh)["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert _wheel_metadata(dists["wheel"])["Version"] == __version__
    proc = run("--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"kernlint {__version__}\n"


def test_wheel_holds_the_packages_only(dists):
    with zipfile.ZipFile(dists["wheel"]) as zf:
        tops = {name.split("/", 1)[0] for name in zf.namelist()}
    assert tops == {"kernlint", "kernlint_rules", f"kernlint-{__version__}.dist-info"}


def _paths_tests_name() -> set[str]:
    """Every `os.path.join(ROOT, "a", "b", ...)` (or REPO) in the test modules: the literal
    leading parts, up to the first that is not a plain literal or holds a glob."""
    named = set()
    for path in glob.glob(os.path.join(ROOT, "tests", "*.py")):
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and ast.unparse(node.func) == "os.path.join"
                and node.args
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id in ("ROOT", "REPO")
            ):
                continue
            parts = []
            for arg in node.args[1:]:
                if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                    break
                if any(c in arg.value for c in "*?["):
                    break
                parts.append(arg.value)
            if parts and parts[0] != ".git":
                named.add("/".join(parts))
    return named


def test_sdist_holds_what_the_tests_read(dists):
    members = _sdist_members(dists["sdist"])
    for rel in SDIST_FILES:
        assert rel in members, f"the sdist lacks {rel}"
    ours = source_files()
    wanted = [r for r in ours if r.split(os.sep, 1)[0] in SDIST_DIRS]
    assert any(r.startswith("fixtures" + os.sep) for r in wanted)
    assert os.path.join("tests", "data", "sarif-schema-2.1.0.json") in wanted
    missing = [r for r in wanted if r.replace(os.sep, "/") not in members]
    assert not missing, f"the sdist lacks {len(missing)} files, e.g. {missing[:5]}"
    named = _paths_tests_name()
    assert {"fixtures", "bench/run.py", "scripts", ".pre-commit-hooks.yaml"} <= named
    for rel in sorted(named):
        assert rel in members or any(m.startswith(rel + "/") for m in members), (
            f"a test reads {rel}, which the sdist lacks"
        )
    # No caches or build outputs of the tree it was made from.
    assert not [m for m in members if "__pycache__" in m or m.endswith(".pyc")]
