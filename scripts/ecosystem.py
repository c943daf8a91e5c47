"""The ecosystem check: kernlint on pinned real code, two versions side by side, and the
reviewed verdicts that guard every rule's precision.

    python scripts/ecosystem.py prepare                  # the corpora, outside the repository
    python scripts/ecosystem.py diff --base HEAD~1       # findings added/removed per corpus and rule
    python scripts/ecosystem.py diff --base main --markdown --examples 5
    python scripts/ecosystem.py verdicts                 # the verdicts file against the working tree
    python scripts/ecosystem.py table                    # the per-rule table of docs/real-world.md
    python scripts/ecosystem.py sample CU003 --corpus sglang-snapshot -n 30   # findings to review
    python scripts/ecosystem.py merge reviewed.toml      # add reviewed verdicts to the file

Corpora (pinned; `prepare` lays them out under `--dir`, default `~/.cache/kernlint/ecosystem`):

| name | what | linted root |
|---|---|---|
| `sglang-snapshot` | SGLang main at 9be3044b (`shared/corpus/sglang-9be3044b.tar.xz`) | the repository |
| `sglang-0.5.23` | the `sglang==0.5.23` wheel | its `sglang/` package |
| `sglang-0.5.15` | the `sglang==0.5.15` wheel (older JIT layout, `jit_kernel/`) | its `sglang/` package |
| `flashinfer-0.7.2.post1` | the `flashinfer-python==0.7.2.post1` wheel | `flashinfer/data` (csrc, include) |

Both versions run with the default rules and with `--select ALL --preview`, `--no-cache`,
from the corpus root (paths are relative to it). The base version is a `git worktree` of
`--base` (default: the merge base with `main`, or `HEAD~1` on `main`), imported from there.

The verdicts file (`tests/ecosystem/verdicts.toml`) holds reviewed findings: corpus, path, line,
rule, verdict and a one-line reason (data about the code, never the code). `verdicts` checks it
against the working tree: a finding of a stable rule labelled false must be gone (unless marked
`known = true`, a false positive the rule's docs accept), a finding labelled true must still be
reported (unless marked `known = true`: a real instance the rule's docs say it does not
report). It prints precision per rule and corpus over the labelled set. Exit 1 on a violation.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VERDICTS = os.path.join(ROOT, "tests", "ecosystem", "verdicts.toml")
SNAPSHOT = os.path.join(ROOT, "..", "shared", "corpus", "sglang-9be3044b.tar.xz")
DEFAULT_DIR = os.path.join(os.path.expanduser("~"), ".cache", "kernlint", "ecosystem")

# name -> (kind, source, root below the unpacked directory)
CORPORA = {
    "sglang-snapshot": ("tarball", SNAPSHOT, "sglang"),
    "sglang-0.5.23": ("wheel", "sglang==0.5.23", "sglang"),
    "sglang-0.5.15": ("wheel", "sglang==0.5.15", "sglang"),
    "flashinfer-0.7.2.post1": ("wheel", "flashinfer-python==0.7.2.post1", "flashinfer/data"),
}
# What a wheel corpus keeps (the rest of a wheel is not source kernlint reads).
WHEEL_MEMBERS = {
    "sglang": ("sglang/",),
    "flashinfer-python": ("flashinfer/data/csrc/", "flashinfer/data/include/"),
}
SELECTIONS = {"default": [], "all": ["--select", "ALL", "--preview"]}


def _tomllib():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib


# -- corpora ------------------------------------------------------------------------------------


def corpus_root(directory: str, name: str) -> str:
    return os.path.join(directory, name, CORPORA[name][2])


def prepare(directory: str, names, quiet=False) -> dict[str, str]:
    """Lay out the corpora (idempotent); returns name -> linted root for those available."""
    out = {}
    for name in names:
        kind, source, _ = CORPORA[name]
        dest = os.path.join(directory, name)
        root = corpus_root(directory, name)
        if os.path.isdir(root) and os.path.exists(os.path.join(dest, ".complete")):
            out[name] = root
            continue
        shutil.rmtree(dest, ignore_errors=True)
        os.makedirs(dest, exist_ok=True)
        try:
            if kind == "tarball":
                if not os.path.exists(source):
                    raise FileNotFoundError(f"{source} not found")
                with tarfile.open(source) as tf:
                    tf.extractall(dest, filter="data")
            else:
                _unpack_wheel(source, dest)
        except (OSError, subprocess.SubprocessError, tarfile.TarError, zipfile.BadZipFile) as e:
            if not quiet:
                print(f"ecosystem: {name}: not available ({e})", file=sys.stderr)
            shutil.rmtree(dest, ignore_errors=True)
            continue
        open(os.path.join(dest, ".complete"), "w").close()
        out[name] = root
    return out


def _unpack_wheel(requirement: str, dest: str) -> None:
    project = requirement.split("==")[0]
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:"]
            + ["-d", tmp, requirement],
            check=True,
            capture_output=True,
            timeout=900,
        )
        wheels = glob.glob(os.path.join(tmp, "*.whl"))
        if not wheels:
            raise FileNotFoundError(f"pip downloaded no wheel for {requirement}")
        keep = WHEEL_MEMBERS[project]
        with zipfile.ZipFile(wheels[0]) as zf:
            members = [m for m in zf.namelist() if m.startswith(keep)]
            zf.extractall(dest, members)


# -- running a version ----------------------------------------------------------------------------


def shim_for_ref(ref: str, workdir: str) -> str:
    """A `git worktree` of `ref` and a directory to put first on PYTHONPATH that imports its
    `kernlint` and `kernlint_rules` (the rules/ folder, as the wheel installs it)."""
    tree = os.path.join(workdir, "tree")
    subprocess.run(
        ["git", "-C", ROOT, "worktree", "add", "--detach", "-f", tree, ref],
        check=True,
        capture_output=True,
    )
    shim = os.path.join(workdir, "shim")
    os.makedirs(shim)
    os.symlink(os.path.join(tree, "kernlint"), os.path.join(shim, "kernlint"))
    os.symlink(os.path.join(tree, "rules"), os.path.join(shim, "kernlint_rules"))
    return shim


def remove_worktree(workdir: str) -> None:
    tree = os.path.join(workdir, "tree")
    if os.path.isdir(tree):
        subprocess.run(
            ["git", "-C", ROOT, "worktree", "remove", "--force", tree], capture_output=True
        )


def run_kernlint(root: str, selection: str, shim: str | None = None) -> list[dict]:
    """The findings of one kernlint version on one corpus, as JSON rows."""
    env = dict(os.environ)
    if shim:
        env["PYTHONPATH"] = shim + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, "-m", "kernlint", "check", "--no-cache", "--exit-zero"]
    cmd += ["--output-format", "json", *SELECTIONS[selection], "."]
    p = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        raise RuntimeError(f"kernlint failed on {root}: {p.stderr.strip()[-500:]}")
    return json.loads(p.stdout)


def key(row) -> tuple:
    return (row["path"], row["line"], row["code"])


# -- diff -------------------------------------------------------------------------------------


def default_base() -> str:
    branch = subprocess.run(
        ["git", "-C", ROOT, "rev-parse", "--abbrev-ref", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    if branch != "main":
        mb = subprocess.run(
            ["git", "-C", ROOT, "merge-base", "HEAD", "main"], capture_output=True, text=True
        )
        if mb.returncode == 0 and mb.stdout.strip():
            return mb.stdout.strip()
    return "HEAD~1"


def diff_rows(base: list[dict], new: list[dict]) -> dict[str, tuple[list, list]]:
    """code -> (added rows, removed rows), by (path, line, code, message)."""

    def k(r):
        return (r["path"], r["line"], r["code"], r["message"])

    before = {k(r): r for r in base}
    after = {k(r): r for r in new}
    out: dict[str, tuple[list, list]] = {}
    for kk in sorted(set(after) - set(before)):
        out.setdefault(kk[2], ([], []))[0].append(after[kk])
    for kk in sorted(set(before) - set(after)):
        out.setdefault(kk[2], ([], []))[1].append(before[kk])
    return out


def print_diff(corpus, selection, base, new, changes, examples, markdown) -> None:
    title = f"{corpus}, {selection} rules: {len(base)} -> {len(new)} findings"
    print(f"\n## {title}\n" if markdown else f"\n{title}")
    if not changes:
        print("no change" if not markdown else "No change.")
        return
    if markdown:
        print("| rule | added | removed |\n|---|---|---|")
        for code, (added, removed) in sorted(changes.items()):
            print(f"| {code} | +{len(added)} | -{len(removed)} |")
        print()
    for code, (added, removed) in sorted(changes.items()):
        if not markdown:
            print(f"  {code}: +{len(added)} -{len(removed)}")
        for sign, rows in (("+", added), ("-", removed)):
            for r in rows[:examples]:
                line = f"{sign} {r['path']}:{r['line']}:{r['column']}: {r['code']} {r['message']}"
                print(f"    {line}" if not markdown else f"    {line}")


def cmd_diff(args) -> int:
    corpora = prepare(args.dir, args.corpus or list(CORPORA))
    base_ref = args.base or default_base()
    workdir = tempfile.mkdtemp(prefix="kernlint-eco-")
    try:
        shim = shim_for_ref(base_ref, workdir)
        if args.markdown:
            print(f"# Ecosystem check: `{base_ref}` against the working tree")
        for corpus, root in corpora.items():
            for selection in args.selection or list(SELECTIONS):
                base = run_kernlint(root, selection, shim)
                new = run_kernlint(root, selection)
                changes = diff_rows(base, new)
                print_diff(corpus, selection, base, new, changes, args.examples, args.markdown)
    finally:
        remove_worktree(workdir)
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


# -- verdicts ---------------------------------------------------------------------------------


class VerdictError(Exception):
    pass


def load_verdicts(path: str = VERDICTS) -> list[dict]:
    with open(path, "rb") as fh:
        doc = _tomllib().load(fh)
    rows = doc.get("verdict", [])
    seen = set()
    for i, v in enumerate(rows):
        for field, typ in (("corpus", str), ("path", str), ("line", int), ("rule", str)):
            if not isinstance(v.get(field), typ):
                raise VerdictError(f"{path}: verdict #{i + 1}: `{field}` missing or not {typ}")
        if not isinstance(v.get("verdict"), bool) or not isinstance(v.get("reason"), str):
            raise VerdictError(f"{path}: verdict #{i + 1}: needs `verdict` (bool) and `reason`")
        if v["corpus"] not in CORPORA:
            raise VerdictError(f"{path}: verdict #{i + 1}: unknown corpus {v['corpus']!r}")
        k = (v["corpus"], v["path"], v["line"], v["rule"])
        if k in seen:
            raise VerdictError(f"{path}: verdict #{i + 1}: duplicate of {k}")
        seen.add(k)
    return rows


def load_misses(path: str = VERDICTS) -> dict:
    with open(path, "rb") as fh:
        return _tomllib().load(fh).get("misses", {})


def stable_codes() -> set[str]:
    from kernlint.registry import load_registry

    return {r.code for r in load_registry().rules if r.status == "stable"}


def check_verdicts(verdicts, findings_by_corpus, stable) -> tuple[list[str], dict]:
    """(violations, stats, notes) for the corpora in `findings_by_corpus` (corpus -> JSON rows).
    stats: (corpus, rule) -> dict(findings, reviewed, true, false, fixed); notes: verdicts
    marked `known` whose finding is now as reviewed (the mark is stale)."""
    violations, notes = [], []
    stats: dict[tuple[str, str], dict] = {}
    present = {
        c: {(r["path"], r["line"], r["code"]) for r in rows}
        for c, rows in findings_by_corpus.items()
    }
    for c, rows in findings_by_corpus.items():
        for r in rows:
            s = stats.setdefault((c, r["code"]), _zero())
            s["findings"] += 1
    for v in verdicts:
        c = v["corpus"]
        if c not in present:
            continue
        s = stats.setdefault((c, v["rule"]), _zero())
        here = (v["path"], v["line"], v["rule"]) in present[c]
        where = f"{c}: {v['path']}:{v['line']} {v['rule']}"
        if v["verdict"]:
            if here:
                s["reviewed"] += 1
                s["true"] += 1
                if v.get("known", False):
                    notes.append(f"{where}: a known miss, now reported (drop `known`)")
            elif v.get("known", False):
                s["missed"] += 1  # a real instance the rule's docs say it does not report
            else:
                violations.append(f"{where}: reviewed as a true finding, no longer reported")
        elif here:
            s["reviewed"] += 1
            s["false"] += 1
            if v["rule"] in stable and not v.get("known", False):
                violations.append(f"{where}: reviewed as a false positive, reported again")
        else:
            s["fixed"] += 1
            if v.get("known", False):
                notes.append(f"{where}: a known false positive, no longer reported (drop `known`)")
    return violations, stats, notes


def _zero():
    return {"findings": 0, "reviewed": 0, "true": 0, "false": 0, "fixed": 0, "missed": 0}


def precision(s) -> str:
    n = s["true"] + s["false"]
    return f"{100.0 * s['true'] / n:.1f}%" if n else "-"


def print_stats(stats, misses, markdown=True) -> None:
    from kernlint.registry import load_registry

    rules = {r.code: r for r in load_registry().rules}
    # A rule with no finding on a corpus still gets its row where its misses were searched
    # there (what the search found is the measurement).
    stats = dict(stats)
    corpora_seen = {c for c, _ in stats}
    for c, rows in misses.items():
        if c in corpora_seen:
            for code in rows:
                stats.setdefault((c, code), _zero())
    header = "| corpus | rule | status | findings | reviewed | true | false | precision | misses searched |"
    print(header + "\n|---|---|---|---|---|---|---|---|---|")
    order = list(CORPORA)
    for (c, code), s in sorted(stats.items(), key=lambda kv: (order.index(kv[0][0]), kv[0][1])):
        m = misses.get(c, {}).get(code, "").replace("|", "\\|")
        r = rules.get(code)
        name = f"{code} `{r.name}`" if r else code
        status = r.status if r else "removed"
        row = [
            c,
            name,
            status,
            s["findings"],
            s["reviewed"],
            s["true"],
            s["false"],
            precision(s),
            m,
        ]
        print("| " + " | ".join(str(x) for x in row) + " |")


def findings_for(corpora: dict[str, str], selection="all", shim=None) -> dict[str, list[dict]]:
    return {c: run_kernlint(root, selection, shim) for c, root in corpora.items()}


def cmd_verdicts(args) -> int:
    corpora = prepare(args.dir, args.corpus or list(CORPORA))
    verdicts = load_verdicts()
    workdir = tempfile.mkdtemp(prefix="kernlint-eco-") if args.ref else None
    try:
        shim = shim_for_ref(args.ref, workdir) if args.ref else None
        findings = findings_for(corpora, shim=shim)
    finally:
        if workdir:
            remove_worktree(workdir)
            shutil.rmtree(workdir, ignore_errors=True)
    violations, stats, notes = check_verdicts(verdicts, findings, stable_codes())
    print_stats(stats, load_misses())
    for n in notes:
        print(f"NOTE {n}")
    for v in violations:
        print(f"VIOLATION {v}")
    print(f"\n{len(verdicts)} verdicts, {len(violations)} violations")
    return 1 if violations else 0


def cmd_sample(args) -> int:
    """An evenly spaced sample of a rule's findings with context, skipping reviewed ones."""
    corpora = prepare(args.dir, args.corpus or list(CORPORA))
    reviewed = {(v["corpus"], v["path"], v["line"], v["rule"]) for v in load_verdicts()}
    for c, root in corpora.items():
        rows = [r for r in run_kernlint(root, "all") if r["code"] == args.rule]
        todo = [r for r in rows if (c, r["path"], r["line"], r["code"]) not in reviewed]
        print(f"# {c}: {len(rows)} {args.rule} findings, {len(todo)} not reviewed")
        by_file: dict[str, list] = {}
        for r in todo:
            by_file.setdefault(r["path"], []).append(r)
        picked, files = [], sorted(by_file)
        while files and len(picked) < args.n:  # round-robin over files: spread the sample
            for f in list(files):
                if not by_file[f]:
                    files.remove(f)
                    continue
                picked.append(by_file[f].pop(0))
                if len(picked) >= args.n:
                    break
        for r in picked:
            print(f"\n{c} {r['path']}:{r['line']}:{r['column']}: {r['code']} {r['message']}")
            with open(os.path.join(root, r["path"]), encoding="utf-8", errors="replace") as fh:
                lines = fh.read().split("\n")
            lo = max(0, r["line"] - 1 - args.context)
            hi = min(len(lines), r["line"] + args.context)
            for k in range(lo, hi):
                mark = ">" if k == r["line"] - 1 else " "
                print(f"  {mark}{k + 1:5d} | {lines[k][:160]}")
    return 0


def _toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def write_verdicts(verdicts, misses, path: str = VERDICTS) -> None:
    """Write the verdicts file in its canonical form (sorted; the header comment kept)."""
    with open(path, encoding="utf-8") as fh:
        header = []
        for line in fh:
            if not line.startswith("#"):
                break
            header.append(line)
    out = ["".join(header)]
    order = list(CORPORA)
    for v in sorted(
        verdicts, key=lambda v: (order.index(v["corpus"]), v["rule"], v["path"], v["line"])
    ):
        out.append("\n[[verdict]]\n")
        for k in ("corpus", "path", "line", "rule", "verdict", "known", "reason"):
            if k not in v:
                continue
            val = v[k]
            text = (
                ("true" if val else "false")
                if isinstance(val, bool)
                else (str(val) if isinstance(val, int) else _toml_str(val))
            )
            out.append(f"{k} = {text}\n")
    for corpus in sorted(misses, key=order.index):
        out.append(f"\n[misses.{_toml_str(corpus)}]\n")
        for code, text in sorted(misses[corpus].items()):
            out.append(f"{code} = {_toml_str(text)}\n")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("".join(out))


def cmd_merge(args) -> int:
    """Merge reviewed verdicts from other files (a later file wins for the same finding)."""
    verdicts = {(v["corpus"], v["path"], v["line"], v["rule"]): v for v in load_verdicts()}
    misses = load_misses()
    for path in args.files:
        for v in load_verdicts(path):
            verdicts[(v["corpus"], v["path"], v["line"], v["rule"])] = v
        for corpus, rows in load_misses(path).items():
            misses.setdefault(corpus, {}).update(rows)
    write_verdicts(list(verdicts.values()), misses)
    load_verdicts()  # (the written file reads back)
    print(f"{len(verdicts)} verdicts in {os.path.relpath(VERDICTS)}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--dir", default=os.environ.get("KERNLINT_ECOSYSTEM_DIR", DEFAULT_DIR))
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--corpus", action="append", choices=list(CORPORA))
    d = sub.add_parser("diff")
    d.add_argument("--base", help="git ref of the base version (default: merge base / HEAD~1)")
    d.add_argument("--corpus", action="append", choices=list(CORPORA))
    d.add_argument("--selection", action="append", choices=list(SELECTIONS))
    d.add_argument("--examples", type=int, default=3)
    d.add_argument("--markdown", action="store_true")
    v = sub.add_parser("verdicts")
    v.add_argument("--corpus", action="append", choices=list(CORPORA))
    v.add_argument("--ref", help="check this git ref's kernlint instead of the working tree")
    t = sub.add_parser("table")
    t.add_argument("--corpus", action="append", choices=list(CORPORA))
    t.add_argument("--ref", help="check this git ref's kernlint instead of the working tree")
    s = sub.add_parser("sample")
    s.add_argument("rule")
    s.add_argument("--corpus", action="append", choices=list(CORPORA))
    s.add_argument("-n", type=int, default=30)
    s.add_argument("--context", type=int, default=3)
    m = sub.add_parser("merge", help="merge reviewed verdicts from other TOML files")
    m.add_argument("files", nargs="+")
    args = ap.parse_args(argv)
    if args.command == "merge":
        return cmd_merge(args)
    if args.command == "prepare":
        got = prepare(args.dir, args.corpus or list(CORPORA))
        for name, root in got.items():
            print(f"{name}: {root}")
        return 0 if got else 1
    if args.command == "diff":
        return cmd_diff(args)
    if args.command in ("verdicts", "table"):
        return cmd_verdicts(args)
    return cmd_sample(args)


if __name__ == "__main__":
    sys.exit(main())
