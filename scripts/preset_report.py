"""A preset on its project's code: findings per rule, and the reviewed verdicts checked.

    python scripts/preset_report.py PRESET [--verdicts FILE ...] [--sample CODE N]

Corpora (laid out under KERNLINT_ECOSYSTEM_DIR, as scripts/ecosystem.py does): `sglang` ->
the SGLang snapshot, `flashinfer` -> the flashinfer-python 0.7.2.post1 wheel's `data/`
(csrc, include), `vllm` -> the vllm 0.33.0 sdist's `csrc/` (downloaded with pip). `generic`
runs on all three. Each run is `kernlint check --no-cache --config C --output-format json ROOT`
with a config C holding only `preset = "PRESET"` (kept outside the corpus).

Verdict files (tests/ecosystem/preset-verdicts-*.toml): `[[verdict]]` tables with preset,
corpus, path (relative to the corpus root), line, rule, verdict, reason. A true finding must
still be reported, a false one must be gone; the table gives reviewed / true / precision per rule.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ecosystem  # noqa: E402

VLLM = "vllm==0.33.0"
CORPUS_OF = {"sglang": ["sglang-snapshot"], "flashinfer": ["flashinfer-0.7.2.post1"]}
CORPUS_OF["vllm"] = ["vllm-0.33.0"]
CORPUS_OF["generic"] = ["sglang-snapshot", "flashinfer-0.7.2.post1", "vllm-0.33.0"]


def vllm_root(directory: str) -> str | None:
    """The vllm sdist's csrc/ (downloaded and unpacked once), or None when unavailable."""
    dest = os.path.join(directory, "vllm-0.33.0")
    root = os.path.join(dest, "vllm-0.33.0")
    if os.path.exists(os.path.join(dest, ".complete")) or os.path.isdir(os.path.join(root, "csrc")):
        return root
    os.makedirs(dest, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        try:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", "vllm"]
                + ["-d", tmp, VLLM],
                check=True,
                capture_output=True,
                timeout=900,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            print(f"preset_report: vllm: not available ({exc})", file=sys.stderr)
            return None
        (sdist,) = [f for f in os.listdir(tmp) if f.endswith(".tar.gz")]
        with tarfile.open(os.path.join(tmp, sdist)) as tf:
            members = [m for m in tf.getmembers() if "/csrc/" in m.name]
            tf.extractall(dest, members, filter="data")
    open(os.path.join(dest, ".complete"), "w").close()
    return root


def roots(directory: str, names) -> dict[str, str]:
    out = {}
    eco = [n for n in names if n in ecosystem.CORPORA]
    out.update(ecosystem.prepare(directory, eco))
    if "vllm-0.33.0" in names:
        root = vllm_root(directory)
        if root is not None:
            out["vllm-0.33.0"] = root
    return out


def run(preset: str, root: str) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        config = os.path.join(tmp, "kernlint.toml")
        with open(config, "w") as fh:
            fh.write(f'preset = "{preset}"\n')
        p = subprocess.run(
            [sys.executable, "-m", "kernlint", "check", "--no-cache", "--config", config]
            + ["--output-format", "json", "."],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=1800,
        )
    if p.returncode not in (0, 1):
        raise SystemExit(f"kernlint failed on {root}:\n{p.stderr[-2000:]}")
    return json.loads(p.stdout or "[]")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("preset", choices=sorted(CORPUS_OF))
    ap.add_argument(
        "--dir", default=os.environ.get("KERNLINT_ECOSYSTEM_DIR", ecosystem.DEFAULT_DIR)
    )
    ap.add_argument("--verdicts", action="append", default=[])
    ap.add_argument("--sample", nargs=2, metavar=("CODE", "N"), help="print N unreviewed findings")
    args = ap.parse_args(argv)

    tomllib = ecosystem._tomllib()
    verdicts = []
    for path in args.verdicts:
        with open(path, "rb") as fh:
            verdicts += [
                v for v in tomllib.load(fh).get("verdict", []) if v["preset"] == args.preset
            ]
    bad = 0
    for corpus, root in roots(args.dir, CORPUS_OF[args.preset]).items():
        found = run(args.preset, root)
        keys = {(d["path"], d["line"], d["code"]) for d in found}
        mine = [v for v in verdicts if v["corpus"] == corpus]
        reviewed = {(v["path"], v["line"], v["rule"]): v for v in mine}
        print(f"## preset {args.preset} on {corpus} ({root}): {len(found)} findings")
        print("| rule | findings | reviewed | true | false | precision |")
        print("|---|---|---|---|---|---|")
        by_rule: dict[str, list] = {}
        for d in found:
            by_rule.setdefault(d["code"], []).append(d)
        for code in sorted(set(by_rule) | {v["rule"] for v in mine}):
            rows = by_rule.get(code, [])
            judged = [
                reviewed[k]
                for k in ((d["path"], d["line"], d["code"]) for d in rows)
                if k in reviewed
            ]
            true = sum(1 for v in judged if v["verdict"])
            prec = f"{100 * true / len(judged):.1f}%" if judged else "-"
            print(
                f"| {code} | {len(rows)} | {len(judged)} | {true} | {len(judged) - true} | {prec} |"
            )
        for v in mine:
            key = (v["path"], v["line"], v["rule"])
            if v["verdict"] and key not in keys:
                print(f"violation: {corpus} {key} reviewed true, not reported")
                bad += 1
            if not v["verdict"] and key in keys:
                print(f"violation: {corpus} {key} reviewed false, still reported")
                bad += 1
        if args.sample:
            code, n = args.sample[0], int(args.sample[1])
            pool = [
                d for d in by_rule.get(code, []) if (d["path"], d["line"], code) not in reviewed
            ]
            random.Random(0).shuffle(pool)
            for d in pool[:n]:
                print(f"sample: {corpus} {d['path']}:{d['line']} {code} {d['message']}")
        print()
    print(f"{len(verdicts)} verdicts, {bad} violations")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
