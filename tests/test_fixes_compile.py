"""Fixed CUDA still compiles: every fix kernlint offers, safe and unsafe, applied to kernels that
compile with pip's nvcc, leaves them compiling.

Each kernel of fixtures/fix-compile/ is copied, fixed with `kernlint check --fix --unsafe-fixes
--select ALL --preview` until no fix remains (at most 5 rounds), and compiled for sm_90 with
`nvcc -c`, next to the untouched original (which must compile: else the fixture is wrong). A
fixed object may not need a symbol the original defined itself (a kernel whose forward
declaration no longer matches its definition compiles, and then fails to link). The reference
kernel is fixed the same way (it has no fix to offer) and compiled as tests/reference_support.py
compiles it. Skipped without a CUDA toolchain.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest
from cli_support import run
from reference_support import (
    CUDA_SOURCE,
    ToolchainMissing,
    nvcc_command,
    nvcc_path,
    sglang_include,
)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX_COMPILE = os.path.join(ROOT, "fixtures", "fix-compile")
SOURCES = sorted(os.path.basename(p) for p in glob.glob(os.path.join(FIX_COMPILE, "*.cu")))
MAX_ROUNDS = 5
ARCH = 90
LINT = ["check", "--select", "ALL", "--preview", "--unsafe-fixes", "--no-cache", "--exit-zero"]
# nvcc runs two at a time: the machines that run the suite are small.
WORKERS = 2


def _fixable(directory: str) -> list[dict]:
    """The findings under `directory` that carry a fix (safe or unsafe)."""
    proc = run(*LINT, "--output-format", "json", ".", cwd=directory)
    assert proc.returncode == 0, proc.stderr
    return [d for d in json.loads(proc.stdout) if d.get("fix")]


def _snapshot(directory: str) -> dict[str, bytes]:
    out = {}
    for name in sorted(os.listdir(directory)):
        if name.endswith((".cu", ".cuh")):
            with open(os.path.join(directory, name), "rb") as fh:
                out[name] = fh.read()
    return out


def _fix_until_done(directory: str) -> tuple[list[tuple[str, int, str, str]], int]:
    """Apply every offered fix until none remains; (the fixes applied, rounds that fixed)."""
    applied: dict[tuple[str, int, str], str] = {}
    for rounds in range(MAX_ROUNDS + 1):
        fixable = _fixable(directory)
        if not fixable:
            return [(*key, title) for key, title in sorted(applied.items())], rounds
        assert rounds < MAX_ROUNDS, f"fixes still offered after {MAX_ROUNDS} rounds: " + ", ".join(
            f"{d['path']}:{d['line']} {d['code']}" for d in fixable
        )
        before = _snapshot(directory)
        proc = run(*LINT, "--fix", "-q", ".", cwd=directory)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
        after = _snapshot(directory)
        changed = {name for name in before if before[name] != after[name]}
        stuck = [d for d in fixable if os.path.basename(d["path"]) not in changed]
        assert len(stuck) < len(fixable), f"offered fixes change nothing: {stuck}"
        for d in fixable:
            if os.path.basename(d["path"]) in changed:
                applied.setdefault(
                    (os.path.basename(d["path"]), d["line"], d["code"]), d["fix"]["message"]
                )
    raise AssertionError("unreachable")


def _compile(cmd: list[str], obj: str) -> tuple[bool, str, dict | None]:
    """(compiled, compiler output, the object's {"undefined", "defined"} symbols or None
    without `nm`)."""
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        return False, proc.stdout + proc.stderr, None
    nm = shutil.which("nm")
    if nm is None:
        return True, proc.stdout + proc.stderr, None
    symbols = {}
    for kind, flag in (("undefined", "-u"), ("defined", "--defined-only")):
        listed = subprocess.run([nm, flag, obj], capture_output=True, text=True, timeout=120)
        symbols[kind] = {line.split()[-1] for line in listed.stdout.splitlines() if line.strip()}
    return True, proc.stdout + proc.stderr, symbols


def _kernel_command(nvcc: str, includes: list[str], source: str, obj: str) -> list[str]:
    return [
        nvcc,
        "-c",
        "-std=c++17",
        f"-gencode=arch=compute_{ARCH},code=sm_{ARCH}",
        *("-I" + p for p in includes),
        source,
        "-o",
        obj,
    ]


# The edits the fixes made before they learned what must change with them: `const` on the
# parameter alone (the cast then casts const away; the definition no longer matches the forward
# declaration that the launch calls).
NAIVE = {
    "reinterpret_cast_read.cu": (
        "vec_copy(float* out, float* in,",
        "vec_copy(float* out, const float* in,",
    ),
    "forward_declaration.cu": (
        "__global__ void gather(float* out, float* table, int32_t* index, int32_t n) {",
        "__global__ void gather(float* out, const float* table, int32_t* index, int32_t n) {",
    ),
}


def _naive(directory: str, name: str) -> str:
    with open(os.path.join(FIX_COMPILE, name), encoding="utf-8") as fh:
        text = fh.read()
    old, new = NAIVE[name]
    assert text.count(old) == 1, (name, old)
    path = os.path.join(directory, name)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text.replace(old, new))
    return path


def _reference_command(directory: str) -> list[str]:
    """reference_support's nvcc command for the reference kernel, with the fixed copy in
    `directory` in place of fixtures/reference/cuda (the wrapper it writes there includes
    `fused_add_rmsnorm.cuh`)."""
    cmd = nvcc_command(ARCH, directory, False, sglang_include())
    original = "-I" + os.path.dirname(CUDA_SOURCE)
    assert original in cmd
    return [("-I" + directory) if part == original else part for part in cmd]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    try:
        nvcc, includes = nvcc_path()
    except ToolchainMissing as exc:
        pytest.skip(f"CUDA toolchain not installed: {exc}")
    base = tmp_path_factory.mktemp("fix-compile")
    orig, fixed, ref, naive = (str(base / d) for d in ("original", "fixed", "reference", "naive"))
    for d in (orig, fixed, ref, naive):
        os.makedirs(d)
    for name in SOURCES:
        shutil.copy(os.path.join(FIX_COMPILE, name), orig)
        shutil.copy(os.path.join(FIX_COMPILE, name), fixed)
    shutil.copy(CUDA_SOURCE, ref)
    for d in (fixed, ref):  # JIT sources, so JIT-scoped rules (and their fixes) apply
        with open(os.path.join(d, "kernlint.toml"), "w") as fh:
            fh.write('jit-roots = ["**"]\n')
    applied, rounds = _fix_until_done(fixed)
    ref_applied, _ = _fix_until_done(ref)
    ref_cmd, ref_skip = None, None
    try:
        ref_cmd = _reference_command(ref)
    except subprocess.CalledProcessError as exc:  # the SGLang wheel could not be downloaded
        ref_skip = f"cannot download the SGLang headers: {exc}"
    except ToolchainMissing as exc:  # (nvcc found, the reference's headers not installed)
        ref_skip = f"CUDA toolchain not installed: {exc}"
    jobs = {}
    for name in SOURCES:
        for kind, d in (("original", orig), ("fixed", fixed)):
            obj = os.path.join(d, name + ".o")
            jobs[(kind, name)] = (_kernel_command(nvcc, includes, os.path.join(d, name), obj), obj)
    for name in NAIVE:
        obj = os.path.join(naive, name + ".o")
        jobs[("naive", name)] = (_kernel_command(nvcc, includes, _naive(naive, name), obj), obj)
    if ref_cmd is not None:
        jobs[("reference", "fused_add_rmsnorm.cuh")] = (ref_cmd, ref_cmd[-1])
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        futures = {key: pool.submit(_compile, cmd, obj) for key, (cmd, obj) in jobs.items()}
        compiled = {key: f.result() for key, f in futures.items()}
    print(f"\n{len(applied)} fixes applied in {rounds} rounds:")
    for path, line, code, title in applied:
        print(f"  {path}:{line} {code} {title}")
    return {
        "applied": applied,
        "reference_applied": ref_applied,
        "reference_skip": ref_skip,
        "compiled": compiled,
        "fixed_dir": fixed,
    }


def test_the_fixture_set_is_large_enough():
    assert len(SOURCES) >= 20


def test_fixes_were_applied(results):
    """The set exercises every rule that offers C++ fixes, and the edits fixes must carry."""
    applied = results["applied"]
    assert applied, "no fix was applied to any fixture kernel"
    codes = {code for _, _, code, _ in applied}
    assert {"CU001", "CU003", "CU004", "CU005"} <= codes, codes
    fixed = _snapshot(results["fixed_dir"])
    # Edits carried by the const fix (a cast, a local, an explicit instantiation, a declaration).
    assert b"reinterpret_cast<const float4*>(in)" in fixed["reinterpret_cast_read.cu"]
    assert b"const float* row = in" in fixed["local_alias.cu"]
    assert b"scale<float>(float*, const float*, float" in fixed["template_instantiation.cu"]
    assert b"gather(float* out, const float* table" in fixed["forward_declaration.cu"]
    assert b"void resize(TensorView x, int64_t n);" in fixed["ffi_long_long.cu"]


@pytest.mark.parametrize("name", SOURCES)
def test_fixed_kernel_compiles(results, name):
    ok, output, symbols = results["compiled"][("original", name)]
    assert ok, (
        f"fixtures/fix-compile/{name} does not compile as it is (the fixture is wrong):\n{output}"
    )
    fixed_ok, fixed_output, fixed_symbols = results["compiled"][("fixed", name)]
    with open(os.path.join(results["fixed_dir"], name), encoding="utf-8") as fh:
        text = fh.read()
    assert fixed_ok, f"{name} no longer compiles after kernlint's fixes:\n{fixed_output}\n{text}"
    if symbols is not None and fixed_symbols is not None:
        # E.g. a launch that still calls a forward declaration the fixed definition no longer
        # matches: it compiles, and needs the old kernel's host stub, which nothing defines.
        missing = sorted(fixed_symbols["undefined"] & symbols["defined"])
        assert not missing, (
            f"{name}: the fixed object needs symbols only the original defined: {missing}"
        )


def test_the_check_sees_fixes_that_break_the_build(results):
    """What the fixes did before they carried their edits is caught: a compile error, and a
    launch left calling a kernel that nothing defines any more."""
    ok, output, _ = results["compiled"][("naive", "reinterpret_cast_read.cu")]
    assert not ok and "cast away const" in output, output
    ok, output, symbols = results["compiled"][("naive", "forward_declaration.cu")]
    assert ok, output
    _, _, original = results["compiled"][("original", "forward_declaration.cu")]
    if symbols is None or original is None:
        pytest.skip("no `nm` to list the object's symbols")
    assert symbols["undefined"] & original["defined"]


def test_reference_kernel_has_no_fix_and_compiles(results):
    assert results["reference_applied"] == []
    if results["reference_skip"]:
        pytest.skip(results["reference_skip"])
    ok, output, _ = results["compiled"][("reference", "fused_add_rmsnorm.cuh")]
    assert ok, output
