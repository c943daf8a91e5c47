"""A fuzz campaign against kernlint: random and mutated sources, file names, file kinds, configs,
concurrent runs on one cache, and edits racing `--fix`.

    python scripts/fuzz.py --runs 5000 --out /tmp/kernlint-fuzz
    python scripts/fuzz.py --runs 200 --categories names,configs --seed 7
    python scripts/fuzz.py --corpus /path/to/sglang --corpus /path/to/flashinfer/data

Every run checks the promises kernlint makes: no traceback, no hang (a time limit per run), exit
status 0, 1 or 2 (2 only with one `kernlint: error: ...` line), every report valid for its format
(JSON and SARIF parse, JUnit is well-formed XML, GitHub annotations are one command per line, text
is valid UTF-8 without raw control characters), results equal to a `--no-cache` run whatever the
cache holds, and `--fix` never losing a concurrent edit. It prints counts per category and writes
a reproducer for every failure to `--out` (shrunk for source inputs).

Sources are mutated from the corpora named with `--corpus` (default: the SGLang snapshot if
`KERNLINT_SGLANG_DIR` or `../corpora/sglang` exists, and kernlint's own fixtures).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zlib
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from xml.etree import ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CPP_EXT = (".cu", ".cuh", ".h", ".hpp", ".cc", ".cpp", ".c")
FORMATS = ("text", "json", "github", "sarif", "junit")
RUN_LIMIT_S = 60

CATEGORIES = {
    # name: (share of the runs, in-process?)
    "bytes-cpp": (0.10, True),
    "bytes-py": (0.10, True),
    "mutated-cpp": (0.22, True),
    "mutated-py": (0.22, True),
    "extreme": (0.04, True),
    "names": (0.10, True),
    "configs": (0.10, True),
    "kinds": (0.04, False),
    "cache": (0.04, False),
    "fix-race": (0.04, False),
}

FRAGMENTS = [
    b"{",
    b"}",
    b"(",
    b")",
    b'"',
    b"'",
    b"/*",
    b"*/",
    b"//",
    b'R"d(',
    b"#if 0\n",
    b"#else\n",
    b"#endif\n",
    b"#ifndef USE_ROCM\n",
    b"\\\n",
    b"\x00",
    b"\xef\xbb\xbf",
    b"\xff\xfe",
    b"\xc3\xa9",
    b"\xe2\x80\x9c",
    b"\r",
    b"\r\n",
    b'"""',
    b"__global__ void k(float* p) {",
    b"<<<g, b>>>",
    b"1'0'0'0",
    b"# kernlint: ignore[PY001]",
    b"// kernlint: ignore-next-line[CU001]",
    b"if _is_hip:\n    import aiter\n",
    b"cuda_wrappers=[(",
    b"@lru_cache\ndef f():\n    return load_jit('x')\n",
]


# -- corpora -------------------------------------------------------------------------------------


def corpus_files(dirs, limit_per_lang=4000) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {"cpp": [], "python": []}
    for d in dirs:
        for base, subdirs, names in os.walk(d):
            subdirs[:] = [s for s in subdirs if not s.startswith(".")]
            for n in names:
                path = os.path.join(base, n)
                if n.endswith(CPP_EXT):
                    out["cpp"].append(path)
                elif n.endswith(".py"):
                    out["python"].append(path)
    for k in out:
        out[k] = sorted(out[k])[:limit_per_lang] if len(out[k]) > limit_per_lang else out[k]
    return out


def default_corpora() -> list[str]:
    dirs = []
    env = os.environ.get("KERNLINT_SGLANG_DIR")
    for cand in (env, os.path.join(ROOT, "..", "corpora", "sglang")):
        if cand and os.path.isdir(cand):
            dirs.append(os.path.abspath(cand))
            break
    dirs.append(os.path.join(ROOT, "fixtures"))
    return dirs


# -- mutations -----------------------------------------------------------------------------------


def mutate(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        kind = rng.choice(
            ["flip", "truncate", "insert", "delete", "nul", "bom", "cr", "crlf", "dup", "nest"]
        )
        at = rng.randint(0, len(b))
        if kind == "flip" and b:
            b[min(at, len(b) - 1)] ^= 1 << rng.randint(0, 7)
        elif kind == "truncate":
            del b[at:]
        elif kind == "insert":
            b[at:at] = rng.choice(FRAGMENTS) * rng.randint(1, 4)
        elif kind == "delete":
            del b[at : at + rng.randint(1, 200)]
        elif kind == "nul":
            b[at:at] = b"\x00"
        elif kind == "bom":
            b[0:0] = b"\xef\xbb\xbf"
        elif kind == "cr":
            b = bytearray(bytes(b).replace(b"\n", b"\r"))
        elif kind == "crlf":
            b = bytearray(bytes(b).replace(b"\n", b"\r\n"))
        elif kind == "dup":
            b[at:at] = b[at : at + rng.randint(1, 2000)] * rng.randint(1, 3)
        elif kind == "nest":
            n = rng.randint(10, 3000)
            b[at:at] = rng.choice([b"{", b"(", b"[", b"if (x) {", b"-"]) * n
    return bytes(b)


def extreme_input(rng: random.Random) -> tuple[str, bytes]:
    """Legal but extreme sources (scaled down from the shapes that once hung or crashed)."""
    n = rng.choice([500, 2000, 6000])
    kind = rng.randrange(9)
    if kind == 0:
        return "python", b"x = " + b"-" * n + b"1\n"
    if kind == 1:
        body = b"if a:\n    pass\n" + b"".join(b"elif a == %d:\n    pass\n" % i for i in range(n))
        return "python", body
    if kind == 2:
        return "python", b"".join(b"x%d = 1  # kernlint: ignore[PY001]\n" % i for i in range(n))
    if kind == 3:
        terms = b"+".join(b"1" for _ in range(n))
        return "python", b"load_jit('m', cuda_wrappers=[(" + terms + b", 'f')])\n"
    if kind == 4:
        return "python", b"f(cuda_wrappers=[" * (n * 4)
    if kind == 5:
        return "python", b"s = '''" + b"x" * (n * 10) + b"'''" * 3 + b"\n"
    if kind == 6:
        body = b"if (p[0]) {" * n + b"q[0] = p[0];" + b"}" * n
        return "cpp", b"__global__ void k(float* p, float* q) {" + body + b"}\n"
    if kind == 7:
        return "cpp", b"int x = 1" + b"'0" * (n * 10) + b"; // caf\xc3\xa9\n"
    return "cpp", b"{" * n + b"\n" + b"(" * n + b"\n"


# -- one run ------------------------------------------------------------------------------------


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def run_cli_inprocess(args, limit=RUN_LIMIT_S) -> tuple[int, bytes, str]:
    """`kernlint ARGS` in this process, with stdout/stderr captured and a time limit."""
    from kernlint.cli import main

    out, err = io.BytesIO(), io.StringIO()
    wrapper = io.TextIOWrapper(out, encoding="utf-8", errors="strict", write_through=True)
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = wrapper, err
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(limit)
    try:
        try:
            code = main(args)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
        wrapper.flush()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        sys.stdout, sys.stderr = saved
    return code, out.getvalue(), err.getvalue()


def run_cli_subprocess(args, cwd=None, limit=RUN_LIMIT_S, env=None):
    try:
        p = subprocess.run(
            [sys.executable, "-m", "kernlint", *args],
            cwd=cwd,
            capture_output=True,
            timeout=limit,
            env=env,
        )
    except subprocess.TimeoutExpired:
        raise Hang() from None
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def _raw_control(text: str) -> bool:
    return any((ord(c) < 0x20 and c not in "\n\t") or ord(c) == 0x7F for c in text)


def validate(fmt: str, code: int, out: bytes, err: str) -> str | None:
    """The failure class of one run's result, or None."""
    if "Traceback (most recent call last)" in err:
        last = err.strip().splitlines()[-1] if err.strip() else ""
        return f"traceback: {last[:120]}"
    if code not in (0, 1, 2):
        return f"exit status {code}"
    if code == 2:
        lines = [ln for ln in err.splitlines() if ln.startswith("kernlint: error:")]
        if len(lines) != 1:
            return "exit 2 without exactly one `kernlint: error:` line"
        return None
    try:
        text = out.decode("utf-8")
    except UnicodeDecodeError:
        return f"{fmt}: report is not valid UTF-8"
    try:
        if fmt == "json":
            json.loads(text)
        elif fmt == "sarif":
            doc = json.loads(text)
            for r in doc["runs"][0]["results"]:
                uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                if any(not 33 <= ord(c) < 127 for c in uri):
                    return "sarif: uri not percent-encoded"
        elif fmt == "junit":
            ET.fromstring(out)
        elif fmt == "github":
            for line in text.splitlines():
                if not line.startswith(("::error ", "::warning ", "::notice ")):
                    return "github: a line that is not a workflow command"
            if _raw_control(text):
                return "github: raw control character"
        elif fmt == "text" and _raw_control(text):
            return "text: raw control character"
    except (ValueError, KeyError, IndexError, TypeError, ET.ParseError) as exc:
        return f"{fmt}: invalid report ({type(exc).__name__})"
    return None


def _lint_bytes(data: bytes, name: str, fmt: str, extra=()) -> str | None:
    with tempfile.TemporaryDirectory(prefix="kfz-") as d:
        path = os.path.join(d, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(data)
        args = ["check", "--no-cache", "--select", "ALL", "--preview", "--output-format", fmt]
        try:
            code, out, err = run_cli_inprocess([*args, *extra, path])
        except Hang:
            return "hang"
        except RecursionError:
            return "RecursionError escaped"
        except MemoryError:
            return "MemoryError escaped"
        except Exception as exc:  # (main itself raised: the same as a traceback for the user)
            return f"traceback: {type(exc).__name__}: {str(exc)[:100]}"
        return validate(fmt, code, out, err)


JIT_NAME = {"cpp": "python/sglang/jit_kernel/csrc/k.cuh", "python": "benchmark/bench_k.py"}
PLAIN_NAME = {"cpp": "src/k.cu", "python": "pkg/m.py"}


def case_source(rng, files, category):
    lang = "cpp" if category.endswith("cpp") else "python"
    if category.startswith("bytes"):
        data = rng.randbytes(rng.choice([0, 1, 16, 300, 4000, 40000]))
    else:
        pool = files[lang]
        with open(rng.choice(pool), "rb") as fh:
            data = mutate(rng, fh.read(2_000_000))
    name = rng.choice([JIT_NAME, PLAIN_NAME])[lang]
    return {"lang": lang, "name": name, "fmt": rng.choice(FORMATS)}, data


def run_source(spec, data) -> str | None:
    return _lint_bytes(data, spec["name"], spec["fmt"])


def case_extreme(rng):
    lang, data = extreme_input(rng)
    return {"lang": lang, "name": PLAIN_NAME[lang], "fmt": "json"}, data


def jit_tree(directory) -> None:
    """Make every file under `directory` a JIT source (the JIT-scoped rules apply there)."""
    with open(os.path.join(directory, "kernlint.toml"), "w") as fh:
        fh.write('jit-roots = ["**"]\n')


def random_name(rng) -> bytes:
    pool = [b"\xff", b"\xe9", b"\xed\xa0\x80", b" ", b"%", b"#", b"?", b"\x01", b"\x1b[31m"]
    pool += [b"\n", b"\r", b":", b",", b"&", b"<", b">", b'"', b"'", b"\\", b"\xc3\xa9", b"\t"]
    parts = [rng.choice(pool) if rng.random() < 0.5 else b"a" for _ in range(rng.randint(1, 12))]
    return b"".join(parts)


def run_names(rng) -> tuple[dict, str | None]:
    stem = random_name(rng)
    fmt = rng.choice(FORMATS)
    ext = rng.choice([b".cu", b".py"])
    body = b"// caf\xc3\xa9\n" if ext == b".cu" else b"import aiter\n"
    spec = {"name": stem.hex(), "ext": ext.decode(), "fmt": fmt}
    with tempfile.TemporaryDirectory(prefix="kfz-") as d:
        jit_tree(d)
        path = os.path.join(os.fsencode(d), stem + ext)
        try:
            with open(path, "wb") as fh:
                fh.write(body)
        except OSError:
            return spec, None
        args = ["check", "--no-cache", "--output-format", fmt]
        target = rng.choice([os.fsdecode(path), d])  # named, or found by walking
        try:
            code, out, err = run_cli_inprocess([*args, target])
        except Hang:
            return spec, "hang"
        except Exception as exc:
            return spec, f"traceback: {type(exc).__name__}: {str(exc)[:100]}"
        failure = validate(fmt, code, out, err)
        if failure is None and code != 1:
            failure = f"vacuous: exit {code}, the file's finding is missing"
        return spec, failure


CONFIG_VALUES = [
    b'["ALL"]',
    b'[""]',
    b'[" "]',
    b'"CU001"',
    b"1",
    b"true",
    b"[[[[[[[[[[]]]]]]]]]]",
    b"9" * 5000,
    b'{"**" = [""]}',
    b'["CU001", "nope"]',
    b'"../x.toml"',
]
CONFIG_KEYS = [
    b"select",
    b"ignore",
    b"extend-select",
    b"preview",
    b"exclude",
    b"extend-exclude",
    b"jit-roots",
    b"per-file-ignores",
    b"extend",
    b"respect-gitignore",
    b"aiter-import-policy",
    b"semantic",
    b"defines",
    b"include-paths",
    b"max-file-size",
    b"bogus-key",
]


def random_config(rng) -> tuple[str, bytes]:
    kind = rng.randrange(6)
    if kind == 0:
        return "kernlint.toml", rng.randbytes(rng.randint(1, 300))
    if kind == 1:
        body = b"[" * rng.choice([100, 1000, 10000]) + b"]"
        return "kernlint.toml", b"select = " + body + b"\n"
    if kind == 2:
        text = "select = ['ALL']\n# caf\u00e9\n".encode(rng.choice(["utf-16", "latin-1"]))
        return rng.choice(["kernlint.toml", "pyproject.toml"]), text
    if kind == 3:
        return "pyproject.toml", rng.choice(
            [b"tool = 1\n", b'tool = "x"\n', b"[tool]\nkernlint = 1\n", b"[[tool.kernlint]]\n"]
        )
    lines = [
        rng.choice(CONFIG_KEYS) + b" = " + rng.choice(CONFIG_VALUES)
        for _ in range(rng.randint(1, 4))
    ]
    body = b"\n".join(lines) + b"\n"
    if rng.random() < 0.3:
        body = mutate(rng, body)
    if kind == 4:
        return "pyproject.toml", b"[tool.kernlint]\n" + body
    return "kernlint.toml", body


def run_configs(rng) -> tuple[dict, str | None]:
    name, body = random_config(rng)
    spec = {"config": name, "body": body.hex()[:4000]}
    with tempfile.TemporaryDirectory(prefix="kfz-") as d:
        with open(os.path.join(d, name), "wb") as fh:
            fh.write(body)
        with open(os.path.join(d, "k.cu"), "wb") as fh:
            fh.write(b"// caf\xc3\xa9\n")
        args = ["check", "--no-cache", "--output-format", "json"]
        if rng.random() < 0.3:
            args += ["--config", os.path.join(d, name)]
        try:
            code, out, err = run_cli_inprocess([*args, d])
        except Hang:
            return spec, "hang"
        except Exception as exc:
            return spec, f"traceback: {type(exc).__name__}: {str(exc)[:100]}"
        return spec, validate("json", code, out, err)


def run_kinds(rng) -> tuple[dict, str | None]:
    """Special files in a walked tree or named on the command line (a subprocess: a hang is
    bounded by its time limit)."""
    kind = rng.choice(["fifo", "fifo-named", "devzero", "devzero-named", "dir.cu", "empty", "big"])
    spec = {"kind": kind}
    with tempfile.TemporaryDirectory(prefix="kfz-") as d:
        jit_tree(d)
        with open(os.path.join(d, "ok.cu"), "wb") as fh:
            fh.write(b"// caf\xc3\xa9\n")
        target = [d]
        if kind.startswith("fifo"):
            os.mkfifo(os.path.join(d, "pipe.cu"))
            if kind == "fifo-named":
                target = [os.path.join(d, "pipe.cu"), d]
        elif kind.startswith("devzero") and os.path.exists("/dev/zero"):
            os.symlink("/dev/zero", os.path.join(d, "zero.cu"))
            if kind == "devzero-named":
                target = [os.path.join(d, "zero.cu"), d]
        elif kind == "dir.cu":
            os.mkdir(os.path.join(d, "sub.cu"))
            target = [os.path.join(d, "sub.cu"), d]
        elif kind == "empty":
            open(os.path.join(d, "e.cu"), "wb").close()
        elif kind == "big":
            with open(os.path.join(d, "big.py"), "wb") as fh:
                fh.write(b"x = 1\n" * rng.choice([10, 2_000_000]))
        try:
            code, out, err = run_cli_subprocess(
                ["check", "--no-cache", "--output-format", "json"] + target
            )
        except Hang:
            return spec, "hang"
        failure = validate("json", code, out, err)
        if failure is None and not any(r["code"] == "CU001" for r in json.loads(out or b"[]")):
            failure = "the regular file's finding is missing"
        return spec, failure


def _tree(d, rng, files):
    os.makedirs(os.path.join(d, "python", "sglang", "jit_kernel", "csrc"), exist_ok=True)
    picks = rng.sample(files["cpp"], min(4, len(files["cpp"]))) + rng.sample(
        files["python"], min(6, len(files["python"]))
    )
    for i, src in enumerate(picks):
        ext = os.path.splitext(src)[1]
        sub = "python/sglang/jit_kernel/csrc" if ext in CPP_EXT and i % 2 else "python"
        shutil.copyfile(src, os.path.join(d, sub, f"f{i}{ext}"))


def run_cache(rng, files) -> tuple[dict, str | None]:
    """Concurrent runs on one cache, then a corrupted cache: results equal a --no-cache run."""
    spec = {"seed": rng.random()}
    with tempfile.TemporaryDirectory(prefix="kfz-") as d:
        tree = os.path.join(d, "tree")
        _tree(tree, rng, files)
        cache = os.path.join(d, "cache")
        base = ["check", "--select", "ALL", "--preview", "--output-format", "json", tree]
        try:
            _, ref, _ = run_cli_subprocess([*base, "--no-cache"])
            procs = [
                subprocess.Popen(
                    [sys.executable, "-m", "kernlint", *base, "--cache-dir", cache],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                )
                for _ in range(rng.randint(2, 4))
            ]
            for p in procs:
                out, err = p.communicate(timeout=RUN_LIMIT_S)
                if b"Traceback" in err:
                    return spec, "traceback in a concurrent run"
                if out != ref:
                    return spec, "a concurrent run's results differ from --no-cache"
            for name in os.listdir(cache) if os.path.isdir(cache) else ():
                path = os.path.join(cache, name)
                if not os.path.isfile(path) or name.startswith("."):
                    continue
                with open(path, "rb") as fh:
                    blob = bytearray(fh.read())
                if blob:
                    for _ in range(rng.randint(1, 3)):
                        blob[rng.randrange(len(blob))] = rng.randrange(256)
                    if rng.random() < 0.2:
                        del blob[rng.randrange(len(blob)) :]
                with open(path, "wb") as fh:
                    fh.write(blob)
            code, out, err = run_cli_subprocess([*base, "--cache-dir", cache])
        except (Hang, subprocess.TimeoutExpired):
            return spec, "hang"
        if "Traceback" in err:
            return spec, "traceback after cache corruption"
        if out != ref:
            return spec, "results differ from --no-cache after cache corruption"
        return spec, None


RACE_SOURCE = b"// caf\xe2\x80\x99s\n__global__ void k(float* out, int n) { out[0] = n; }\n"


def run_fix_race(rng) -> tuple[dict, str | None]:
    """An edit lands while `--fix` runs: the final file holds the edit (fixed or not), never
    the fix of the old bytes over it, and never a mix."""
    delay = rng.uniform(0.0, 0.6)
    spec = {"delay": delay}
    with tempfile.TemporaryDirectory(prefix="kfz-") as d:
        jit_tree(d)
        path = os.path.join(d, "k.cu")
        edit = RACE_SOURCE.replace(b"int n", b"int n, int m") + b"// edited\n"
        # What --fix makes of the edited content, computed apart.
        ref_dir = os.path.join(d, "ref")
        os.mkdir(ref_dir)
        jit_tree(ref_dir)
        with open(os.path.join(ref_dir, "k.cu"), "wb") as fh:
            fh.write(edit)
        try:
            run_cli_subprocess(["check", "--no-cache", "--fix", "-q", ref_dir])
        except Hang:
            return spec, "hang"
        with open(os.path.join(ref_dir, "k.cu"), "rb") as fh:
            fixed_edit = fh.read()
        if fixed_edit == edit:
            return spec, "vacuous: --fix changed nothing in the reference run"
        with open(path, "wb") as fh:
            fh.write(RACE_SOURCE)
        p = subprocess.Popen(
            [sys.executable, "-m", "kernlint", "check", "--no-cache", "--fix", "-q", path],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        time.sleep(delay)
        with open(path, "r+b") as fh:  # an editor writing in place
            fh.write(edit)
            fh.truncate()
        try:
            _, err = p.communicate(timeout=RUN_LIMIT_S)
        except subprocess.TimeoutExpired:
            p.kill()
            return spec, "hang"
        with open(path, "rb") as fh:
            final = fh.read()
        if b"Traceback" in err:
            return spec, "traceback"
        if final not in (edit, fixed_edit):
            return spec, "the concurrent edit was lost or mixed"
        return spec, None


# -- shrinking -----------------------------------------------------------------------------------


def shrink(spec, data: bytes, failure: str, budget=60) -> bytes:
    """ddmin-style: drop chunks while the same failure class reproduces (bounded attempts)."""
    klass = failure.split(":")[0]
    n = 2
    tries = 0
    while len(data) > 1 and tries < budget:
        chunk = max(1, len(data) // n)
        reduced = False
        for i in range(0, len(data), chunk):
            tries += 1
            cand = data[:i] + data[i + chunk :]
            got = run_source(spec, cand)
            if got is not None and got.split(":")[0] == klass:
                data, n, reduced = cand, max(2, n - 1), True
                break
            if tries >= budget:
                break
        if not reduced:
            if chunk == 1:
                break
            n = min(len(data), n * 2)
    return data


# -- the campaign ---------------------------------------------------------------------------------


def one_run(category: str, seed: int, files) -> tuple[str, int, str | None, dict, bytes | None]:
    rng = random.Random(seed)
    data = None
    if category in ("bytes-cpp", "bytes-py", "mutated-cpp", "mutated-py"):
        spec, data = case_source(rng, files, category)
        failure = run_source(spec, data)
    elif category == "extreme":
        spec, data = case_extreme(rng)
        failure = run_source(spec, data)
    elif category == "names":
        spec, failure = run_names(rng)
    elif category == "configs":
        spec, failure = run_configs(rng)
    elif category == "kinds":
        spec, failure = run_kinds(rng)
    elif category == "cache":
        spec, failure = run_cache(rng, files)
    elif category == "fix-race":
        spec, failure = run_fix_race(rng)
    else:
        raise ValueError(category)
    if failure is not None and data is not None and category != "extreme":
        data = shrink(spec, data, failure)
    return category, seed, failure, spec, data if failure is not None else None


_FILES = None


def _worker_init(files):
    global _FILES
    _FILES = files
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))


def _worker(job):
    category, seed = job
    return one_run(category, seed, _FILES)


def plan(runs: int, categories, seed: int) -> list[tuple[str, int]]:
    total = sum(CATEGORIES[c][0] for c in categories)
    jobs = []
    for c in categories:
        n = max(1, round(runs * CATEGORIES[c][0] / total))
        jobs += [
            (c, seed * 1_000_003 + zlib.crc32(c.encode()) % 10_007 * 7919 + i) for i in range(n)
        ]
    random.Random(seed).shuffle(jobs)
    return jobs[:runs] if len(jobs) > runs else jobs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--runs", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--categories", default=",".join(CATEGORIES))
    ap.add_argument("--corpus", action="append", help="a directory of real sources to mutate")
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "kernlint-fuzz"))
    ap.add_argument("--markdown", action="store_true", help="print the table as markdown")
    args = ap.parse_args(argv)
    categories = [c.strip() for c in args.categories.split(",") if c.strip()]
    unknown = [c for c in categories if c not in CATEGORIES]
    if unknown:
        ap.error(f"unknown categories: {', '.join(unknown)} (known: {', '.join(CATEGORIES)})")
    files = corpus_files(args.corpus or default_corpora())
    if not files["cpp"] or not files["python"]:
        ap.error("the corpora hold no C++ or no Python files")
    os.makedirs(args.out, exist_ok=True)
    jobs = plan(args.runs, categories, args.seed)
    counts = {c: [0, 0] for c in categories}  # runs, failures
    classes: dict[tuple[str, str], int] = {}
    started = time.time()
    todo = list(jobs)
    while todo:
        try:
            with ProcessPoolExecutor(args.jobs, initializer=_worker_init, initargs=(files,)) as ex:
                futures = {ex.submit(_worker, job): job for job in todo}
                for fut in as_completed(futures):
                    job = futures[fut]
                    todo.remove(job)
                    category, seed, failure, spec, data = fut.result()
                    counts[category][0] += 1
                    if failure is None:
                        continue
                    counts[category][1] += 1
                    classes[(category, failure)] = classes.get((category, failure), 0) + 1
                    stem = os.path.join(args.out, f"{category}-{seed}")
                    with open(stem + ".json", "w") as fh:
                        json.dump(
                            {"category": category, "seed": seed, "failure": failure, "spec": spec},
                            fh,
                        )
                    if data is not None:
                        with open(stem + ".bin", "wb") as fh:
                            fh.write(data)
        except BrokenProcessPool:
            # A worker died (a crash of the interpreter itself): count the runs in flight.
            for job in list(todo)[: args.jobs]:
                todo.remove(job)
                counts[job[0]][0] += 1
                counts[job[0]][1] += 1
                classes[(job[0], "worker died")] = classes.get((job[0], "worker died"), 0) + 1
    elapsed = time.time() - started
    total = sum(v[0] for v in counts.values())
    failed = sum(v[1] for v in counts.values())
    sep = " | " if args.markdown else "  "
    if args.markdown:
        print("| category | runs | failures |\n|---|---|---|")
    for c in categories:
        runs, fails = counts[c]
        print(
            f"| {c} | {runs} | {fails} |"
            if args.markdown
            else f"{c:<12}{sep}{runs:>6}{sep}{fails:>6}"
        )
    print(
        f"| all | {total} | {failed} |"
        if args.markdown
        else f"{'all':<12}{sep}{total:>6}{sep}{failed:>6}"
    )
    print(f"\n{total} runs in {elapsed:.0f} s with {args.jobs} jobs, seed {args.seed}")
    for (c, f), n in sorted(classes.items(), key=lambda kv: -kv[1]):
        print(f"  {n:>5}  {c}: {f}")
    if failed:
        print(f"reproducers: {args.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
