"""The README's pre-commit snippet, extracted from the README, run with the real pre-commit client
against a tagged clone of this repository: only `repo:` and `rev:` are rewritten (to the clone and
its tag). The hook installs kernlint into its own virtualenv with pip, from the package index pip
is configured with; where pip cannot reach one, the test skips and says so."""

from __future__ import annotations

import difflib
import os
import re
import subprocess
import sys

import pytest
from release_support import GIT_ENV, ROOT, git, pip_offline, tagged_clone

from kernlint import __version__

yaml = pytest.importorskip("yaml")
pytest.importorskip("pre_commit")

BAD = "namespace sglang {\n// a \u2014 b\nint x = 0;\n}  // namespace sglang\n"
FIXED = "namespace sglang {\n// a -- b\nint x = 0;\n}  // namespace sglang\n"
TARGET = "kernels/jit/csrc/k.cuh"  # a JIT source by default: CU001 applies


def readme_snippet() -> str:
    """The first ```yaml block of the README's `## pre-commit` section, as written."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        readme = fh.read()
    section = re.search(r"^## pre-commit\n(.*?)(?=^## )", readme, re.S | re.M)
    assert section, "README.md has no `## pre-commit` section"
    block = re.search(r"^```yaml\n(.*?)^```", section.group(1), re.S | re.M)
    assert block, "the README's pre-commit section has no ```yaml block"
    return block.group(1)


def rewrite(snippet: str, repo: str, rev: str) -> str:
    """The snippet with the values of `repo:` and `rev:` replaced, and nothing else."""
    out, n_repo = re.subn(r"^(\s*- repo:\s*)\S+", lambda m: m.group(1) + repo, snippet, flags=re.M)
    out, n_rev = re.subn(r"^(\s*rev:\s*)\S+", lambda m: m.group(1) + rev, out, flags=re.M)
    assert (n_repo, n_rev) == (1, 1), "the snippet must name one repo and one rev"
    changed = [
        line
        for line in difflib.ndiff(snippet.splitlines(), out.splitlines())
        if line.startswith(("-", "+"))
    ]
    assert len(changed) <= 4, changed  # the repo and rev lines, removed and added
    return out


def test_readme_snippet_names_the_current_release():
    config = yaml.safe_load(readme_snippet())
    (repo,) = config["repos"]
    assert repo["rev"] == f"v{__version__}"
    assert [h["id"] for h in repo["hooks"]] == ["kernlint"]
    with open(os.path.join(ROOT, ".pre-commit-hooks.yaml")) as fh:
        ids = [h["id"] for h in yaml.safe_load(fh)]
    assert ids == ["kernlint", "kernlint-fix"]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    base = tmp_path_factory.mktemp("precommit")
    snippet = readme_snippet()
    rev = yaml.safe_load(snippet)["repos"][0]["rev"]
    clone = base / "kernlint-clone"
    sha = tagged_clone(clone, rev)
    return {"base": base, "snippet": snippet, "clone": str(clone), "tag": rev, "sha": sha}


def _user_repo(path, config: str):
    path.mkdir()
    git(path, "init", "-q")
    (path / ".pre-commit-config.yaml").write_text(config)
    target = path / TARGET
    target.parent.mkdir(parents=True)
    target.write_text(BAD, encoding="utf-8")
    git(path, "add", ".")
    return target


def _pre_commit(cwd, home, hook):
    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", hook, "--files", TARGET, "--color", "never"],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(home)},
        timeout=900,
    )
    out = proc.stdout + proc.stderr
    if "An unexpected error has occurred" in out:
        log = home / "pre-commit.log"
        detail = log.read_text(errors="replace") if log.exists() else out
        if pip_offline(detail):
            pytest.skip(
                "pre-commit could not install the hook's environment: pip cannot reach a "
                f"package index ({detail.strip().splitlines()[-1][:200]})"
            )
        raise AssertionError(f"pre-commit failed to run the hook:\n{detail[-3000:]}")
    return proc.returncode, out


def test_readme_snippet_reports_and_fixes(workspace):
    """As written (repo and rev aside) the hook fails with the finding; `id: kernlint-fix`, as
    the README says to write, fixes it; the check hook then passes."""
    config = rewrite(workspace["snippet"], workspace["clone"], workspace["tag"])
    user = workspace["base"] / "user-tag"
    target = _user_repo(user, config)
    home = workspace["base"] / "pc-home"

    rc, out = _pre_commit(user, home, "kernlint")
    assert rc == 1, out
    assert f"{TARGET}:2:6: CU001" in out, out
    assert "non-ascii-character" in out
    assert "Failed" in out
    assert target.read_text(encoding="utf-8") == BAD  # the check hook changes nothing

    fix_config, n = re.subn(r"^(\s*- id:) kernlint$", r"\1 kernlint-fix", config, flags=re.M)
    assert n == 1
    (user / ".pre-commit-config.yaml").write_text(fix_config)
    git(user, "add", ".pre-commit-config.yaml")
    rc, out = _pre_commit(user, home, "kernlint-fix")
    assert rc == 1, out  # pre-commit fails a hook that changed files
    assert "files were modified by this hook" in out, out
    assert target.read_text(encoding="utf-8") == FIXED

    (user / ".pre-commit-config.yaml").write_text(config)
    git(user, "add", ".")
    rc, out = _pre_commit(user, home, "kernlint")
    assert rc == 0, out
    assert "Passed" in out


def test_readme_snippet_with_a_commit_sha(workspace):
    """`rev:` may be a commit sha instead of a tag."""
    config = rewrite(workspace["snippet"], workspace["clone"], workspace["sha"])
    user = workspace["base"] / "user-sha"
    target = _user_repo(user, config)
    rc, out = _pre_commit(user, workspace["base"] / "pc-home", "kernlint")
    assert rc == 1, out
    assert f"{TARGET}:2:6: CU001" in out, out
    assert target.read_text(encoding="utf-8") == BAD
