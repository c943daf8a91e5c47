"""The project's own files, copied or committed elsewhere, for the release tests (the sdist, the
pre-commit hooks, the GitHub Action): they work the same from a git checkout and from the unpacked
sdist, which has no `.git`."""

from __future__ import annotations

import os
import shutil
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Directories that are never part of the project's sources (caches and build outputs).
_NOT_SOURCES = {
    ".git",
    "__pycache__",
    ".pytest_cache",
    ".ruff_cache",
    ".hypothesis",
    ".kernlint_cache",
    ".benchmarks",
    ".venv",
    "build",
    "dist",
}

GIT_ENV = {
    "GIT_AUTHOR_NAME": "kernlint tests",
    "GIT_AUTHOR_EMAIL": "tests@example.invalid",
    "GIT_COMMITTER_NAME": "kernlint tests",
    "GIT_COMMITTER_EMAIL": "tests@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def is_git_checkout() -> bool:
    return os.path.isdir(os.path.join(ROOT, ".git")) and shutil.which("git") is not None


def git(cwd, *args) -> str:
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **GIT_ENV},
        timeout=120,
    ).stdout


def source_files() -> list[str]:
    """Relative paths of the project's files: in a git checkout, those git tracks or would track
    (untracked, not ignored); elsewhere (an unpacked sdist) every file but caches and build outputs."""
    if is_git_checkout():
        listed = git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
        rels = [r for r in listed.split("\0") if r]
        return sorted(r for r in rels if os.path.isfile(os.path.join(ROOT, r)))
    rels = []
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames if d not in _NOT_SOURCES and not d.endswith(".egg-info")]
        for name in filenames:
            if not name.endswith((".pyc", ".pyo")):
                rels.append(os.path.relpath(os.path.join(dirpath, name), ROOT))
    return sorted(rels)


def copy_sources(dest) -> str:
    """The project's files copied to `dest` (created); `dest` as a string."""
    dest = str(dest)
    for rel in source_files():
        target = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, rel), target)
    return dest


def tagged_clone(dest, tag: str) -> str:
    """A git repository at `dest` holding the project's files as they are now, committed and
    tagged `tag`; the commit's sha is returned. In a git checkout it is a clone (its history kept)
    with the working tree's changes committed on top; from an unpacked sdist, a new repository."""
    dest = str(dest)
    if is_git_checkout():
        git(os.path.dirname(dest), "clone", "-q", "--no-hardlinks", ROOT, dest)
        for entry in os.listdir(dest):
            if entry != ".git":
                path = os.path.join(dest, entry)
                shutil.rmtree(path) if os.path.isdir(path) else os.unlink(path)
    else:
        os.makedirs(dest)
        git(dest, "init", "-q")
    copy_sources(dest)
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "--allow-empty", "--no-verify", "-m", "kernlint as tested")
    git(dest, "tag", "-f", tag)  # (a clone has the checkout's tags: this commit gets the name)
    return git(dest, "rev-parse", "HEAD").strip()


def pip_offline(output: str) -> bool:
    """Whether pip's output says it could not reach a package index."""
    return any(
        s in output
        for s in (
            "Retrying",
            "NewConnectionError",
            "Network is unreachable",
            "Temporary failure in name resolution",
            "No matching distribution found",
        )
    )
