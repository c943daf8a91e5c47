"""kernlint.compile.triton: Triton kernels found with `ast` and built for sm_90 without a GPU.

find_kernels and instantiations are plain `ast` work and always run. The builds need triton
(it brings its own ptxas and cuobjdump); without it they are skipped. Builds are batched into a
few module fixtures (one child process each) to keep the file fast on a small machine.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import re

import pytest

import kernlint.compile.triton as kt
from kernlint.compile.model import Usage
from kernlint.compile.triton import (
    compile_builds,
    compile_kernel,
    find_kernels,
    instantiations,
)

DATA = os.path.join(os.path.dirname(__file__), "data", "compile_triton")

needs_triton = pytest.mark.skipif(
    importlib.util.find_spec("triton") is None,
    reason="triton is not installed: the Triton builds need it (pip install triton)",
)


def load(name: str) -> tuple[str, bytes]:
    path = os.path.join(DATA, name)
    with open(path, "rb") as fh:
        return path, fh.read()


def kernels(name: str) -> dict:
    path, data = load(name)
    return {k.name: k for k in find_kernels(path, data)}


def line_of(name: str, text: str) -> int:
    """1-based line of the first line of fixture `name` that contains `text`."""
    _, data = load(name)
    for n, line in enumerate(data.decode().splitlines(), 1):
        if text in line:
            return n
    raise AssertionError(f"{text!r} not in {name}")


SIZES_SIG = {"X": "*fp32", "Y": "*fp32", "N": "i32"}


# --- find_kernels ------------------------------------------------------------------------------


def test_every_decorator_form_is_found_in_order():
    path, data = load("forms.py")
    found = find_kernels(path, data)
    assert [k.name for k in found] == [
        "plain",
        "bare",  # `from triton import jit` / `@jit`
        "with_args",  # `@triton.jit(...)`
        "tuned",  # under autotune and heuristics
        "tuned_by_name",
        "tuned_computed",
        "tuned_comprehension",
        "guarded",  # inside a module-level `if`
    ]  # (not `@torch.jit.script`, not a class member)


def test_positions_are_byte_offsets_of_the_name():
    path, data = load("forms.py")
    assert "ö".encode() in data  # (non-ASCII text before the kernels)
    for k in find_kernels(path, data):
        assert data[k.start : k.end] == k.name.encode()
        assert data[: k.start].count(b"\n") + 1 == k.line
        assert re.match(rb"\s*def\s+" + k.name.encode(), data.splitlines()[k.line - 1])


def test_params_constexprs_defaults_and_hints():
    k = kernels("forms.py")["with_args"]
    assert k.params == ("X", "N", "eps", "n", "FLAG")
    assert k.constexpr == ("FLAG",)
    assert k.defaults == {"eps": 1e-6, "n": 0, "FLAG": True}
    assert k.types == {"n": "i64"}  # (from `n: tl.int64`)
    assert set(k.no_align) == {"N", "X"}  # (do_not_specialize names N, ..._on_alignment index 0)
    assert kernels("forms.py")["bare"].constexpr == ("BLOCK",)


def test_literal_autotune_configs():
    ks = kernels("forms.py")
    assert ks["tuned"].autotune == [
        ({"BLOCK_M": 64, "BLOCK_N": 32}, 4, 2),
        ({"BLOCK_M": 128, "BLOCK_N": 64}, 8, 3),  # (triton.Config's default num_stages)
    ]
    assert ks["tuned"].heuristics == ("EVEN",)
    assert ks["tuned"].reason == ""
    # `configs=SHARED_CONFIGS`: a module-level list of literal configs (`Cfg` = triton.Config).
    assert ks["tuned_by_name"].autotune == [({"BLOCK": 64}, 2, 3), ({"BLOCK": 128}, 4, 3)]
    assert ks["plain"].autotune is None and ks["plain"].reason == ""


def test_autotune_configs_that_are_not_literal():
    ks = kernels("forms.py")
    computed = ks["tuned_computed"]
    assert computed.autotune is None
    assert "configs_for(4)" in computed.reason
    assert f"line {line_of('forms.py', 'configs=configs_for(4)')}" in computed.reason
    comprehension = ks["tuned_comprehension"]
    assert comprehension.autotune is None and "not a literal list" in comprehension.reason


def test_other_jit_decorators_and_broken_files():
    path, data = load("decorators_other.py")
    assert find_kernels(path, data) == []
    assert find_kernels("broken.py", b"import triton\n@triton.jit\ndef k(:\n") == []


def test_helpers_that_return_values_are_marked():
    ks = kernels("failures.py")
    assert ks["_square"].helper and ks["_scaled"].helper
    assert not ks["uses_literals"].helper and not ks["bad_body"].helper


# --- instantiations ------------------------------------------------------------------------------


def test_one_build_per_entry_with_a_readable_label():
    k = kernels("sizes.py")["add_kernel"]
    entry = {
        "kernel": "add_kernel",
        "signature": {"X": "*bfloat16", "Y": "*bf16", "Z": "*kbf16", "N": "int32"},
        "constexprs": {"BLOCK": 1024},
    }
    [(sig, constexprs, warps, stages, label)] = instantiations(k, [entry])
    assert sig == {"X": "*bf16", "Y": "*bf16", "Z": "*kbf16", "N": "i32", "BLOCK": "constexpr"}
    assert constexprs == {"BLOCK": 1024}
    assert (warps, stages) == (4, None)
    assert label == "add_kernel[X=*bf16, Y=*bf16, Z=*kbf16, N=i32, BLOCK=1024, num_warps=4]"
    entry2 = {**entry, "num_warps": 8, "num_stages": 2, "constexprs": {"BLOCK": 256}}
    builds = instantiations(k, [entry, entry2])
    assert [(b[2], b[3]) for b in builds] == [(4, None), (8, 2)]
    assert builds[1][4].endswith("BLOCK=256, num_warps=8, num_stages=2]")


def test_autotune_configs_win_and_entries_fill_the_rest():
    k = kernels("forms.py")["tuned"]
    entry = {"signature": {"A": "*fp16", "M": "i32"}, "constexprs": {"EVEN": True, "BLOCK_M": 7}}
    builds = instantiations(k, [entry])
    assert [(b[1], b[2], b[3]) for b in builds] == [
        ({"BLOCK_M": 64, "BLOCK_N": 32, "EVEN": True}, 4, 2),
        ({"BLOCK_M": 128, "BLOCK_N": 64, "EVEN": True}, 8, 3),
    ]
    assert "EVEN=true" in builds[0][4]


def test_no_signature_no_build():
    reason = instantiations(kernels("sizes.py")["add_kernel"], [])
    assert isinstance(reason, str)
    assert reason.startswith("`add_kernel`: no signature given")


def test_a_kernel_typed_by_its_annotations_needs_no_entry():
    data = (
        b"import triton\nimport triton.language as tl\n\n@triton.jit\n"
        b"def k(n: tl.int64, scale=0.5, BLOCK: tl.constexpr = 64):\n    pass\n"
    )
    [k] = find_kernels("typed.py", data)
    [(sig, constexprs, _, _, label)] = instantiations(k, [])
    assert sig == {"n": "i64", "scale": "fp32", "BLOCK": "constexpr"}
    assert constexprs == {"BLOCK": 64}
    assert label == "k[n=i64, scale=fp32, BLOCK=64, num_warps=4]"


ADD_SIG = {"X": "*fp32", "Y": "*fp32", "Z": "*fp32", "N": "i32"}


@pytest.mark.parametrize(
    "entry, expected",
    [
        ({"signature": {**ADD_SIG, "Q": "i32"}, "constexprs": {"BLOCK": 1}}, "`signature.Q`"),
        ({"signature": ADD_SIG, "constexprs": {"BLOCK": 1, "R": 2}}, "`constexprs.R` names no"),
        ({"signature": {"X": "*fp32", "Y": "*fp32", "Z": "*fp32"}}, "`signature` lacks `N`"),
        ({"signature": ADD_SIG}, "constexpr `BLOCK` has no value: give `constexprs.BLOCK`"),
        ({"signature": {**ADD_SIG, "N": "*bfloat17"}}, '`signature.N` = "*bfloat17" is no'),
        ({"signature": {**ADD_SIG, "BLOCK": "i32"}}, "`signature.BLOCK` is a tl.constexpr"),
        ({"signature": ADD_SIG, "num_warp": 4}, "unknown key `num_warp`"),
        ({"signature": ADD_SIG, "constexprs": {"BLOCK": 8}, "num_warps": 3}, "`num_warps` must"),
        ({"signature": ADD_SIG, "constexprs": {"BLOCK": 8}, "num_stages": 0}, "`num_stages`"),
        ({"kernel": "other", "signature": ADD_SIG}, '`kernel` = "other" is another kernel'),
        ("X=*fp32", "an instantiation must be a table"),
    ],
)
def test_bad_entries_are_one_line_errors_naming_kernel_and_key(entry, expected):
    reason = instantiations(kernels("sizes.py")["add_kernel"], [entry])
    assert isinstance(reason, str)
    assert reason.startswith("`add_kernel`: ")
    assert expected in reason
    assert "\n" not in reason


def test_constexprs_computed_by_heuristics_say_so():
    k = kernels("forms.py")["tuned"]
    reason = instantiations(k, [{"signature": {"A": "*fp16", "M": "i32"}}])
    assert "constexpr `EVEN` has no value (triton.heuristics sets it at run time)" in reason


# --- building ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sizes():
    """One child process: the vector add, a row kernel holding 64 floats a thread, and one
    holding 128 (past 255 registers: it spills)."""
    path, data = load("sizes.py")
    ks = kernels("sizes.py")
    add = compile_builds(
        path,
        data,
        ks["add_kernel"],
        [({**SIZES_SIG, "Z": "*fp32"}, {"BLOCK": 1024}, 4, None)],
        "sm_90",
    )
    rows = compile_builds(
        path,
        data,
        ks["row_kernel"],
        [(SIZES_SIG, {"BLOCK": 2048}, 1, None), (SIZES_SIG, {"BLOCK": 4096}, 1, None)],
        "sm_90",
    )
    return {"add": add[0], "heavy": rows[0], "spill": rows[1]}


@needs_triton
def test_small_kernel_uses_fewer_registers_than_a_heavy_one(sizes):
    [add], [heavy] = sizes["add"], sizes["heavy"]
    assert isinstance(add, Usage) and isinstance(heavy, Usage)
    assert 0 < add.registers < 64 < heavy.registers <= 255
    assert heavy.registers >= 2 * add.registers
    assert not add.spills and not heavy.spills and add.local_bytes == 0


@needs_triton
def test_usage_names_the_build(sizes):
    [add] = sizes["add"]
    assert (add.symbol, add.name, add.arch, add.source) == (
        "add_kernel",
        "add_kernel",
        "sm_90",
        "triton",
    )
    assert (
        add.instantiation == "add_kernel[X=*fp32, Y=*fp32, Z=*fp32, N=i32, BLOCK=1024, num_warps=4]"
    )
    assert add.threads == 128
    [heavy] = sizes["heavy"]
    assert heavy.threads == 32 and "BLOCK=2048, num_warps=1" in heavy.instantiation


@needs_triton
def test_a_huge_per_thread_tile_spills(sizes):
    [spill] = sizes["spill"]
    assert spill.spills and spill.spill_stores > 0 and spill.spill_loads > 0
    assert spill.local_bytes >= spill.spill_stores > 0
    assert spill.registers > 64


@needs_triton
def test_autotune_gives_one_usage_per_config():
    path, data = load("sizes.py")
    k = kernels("sizes.py")["tuned_row_kernel"]
    builds = instantiations(k, [{"signature": SIZES_SIG}])
    results = compile_builds(path, data, k, builds, "sm_90")
    assert len(results) == 2 and all(isinstance(r, list) and len(r) == 1 for r in results)
    small, big = results[0][0], results[1][0]
    assert small.instantiation.endswith("BLOCK=1024, num_warps=4, num_stages=3]")
    assert big.instantiation.endswith("BLOCK=2048, num_warps=1, num_stages=2]")
    assert (small.threads, big.threads) == (128, 32)
    assert small.registers < 64 < big.registers


@needs_triton
def test_compile_kernel_for_another_arch():
    path, data = load("sizes.py")
    k = kernels("sizes.py")["add_kernel"]
    result = compile_kernel(
        path, data, k, {**SIZES_SIG, "Z": "*bf16"}, {"BLOCK": 512}, 2, 2, "sm_100"
    )
    assert isinstance(result, list) and len(result) == 1
    assert result[0].arch == "sm_100" and result[0].registers > 0 and result[0].threads == 64
    assert result[0].instantiation.endswith("BLOCK=512, num_warps=2, num_stages=2]")


@needs_triton
def test_cuobjdump_reads_the_cubin_when_no_ptxas_report_comes_back(sizes, monkeypatch):
    if kt._cuobjdump() is None:
        pytest.skip("no cuobjdump (triton's bundled one, nvidia-cuda-cuobjdump or PATH)")
    monkeypatch.setattr(kt, "ptxas_report", lambda text: [])
    path, data = load("sizes.py")
    k = kernels("sizes.py")["row_kernel"]
    [usage] = compile_kernel(path, data, k, SIZES_SIG, {"BLOCK": 4096}, 1, None, "sm_90")
    [reported] = sizes["spill"]
    assert usage.registers == reported.registers
    assert usage.local_bytes == reported.local_bytes > 0  # (cuobjdump gives no spill split)


# --- why a build fails -----------------------------------------------------------------------


def failure(kernel: str, constexprs=None, signature=None) -> list[Usage] | str:
    path, data = load("failures.py")
    k = kernels("failures.py")[kernel]
    return compile_kernel(
        path, data, k, signature or {"X": "*fp32"}, constexprs or {}, 4, None, "sm_90"
    )


def assert_one_line(reason):
    assert isinstance(reason, str), reason
    assert "\n" not in reason and "Traceback" not in reason


@needs_triton
def test_literals_and_helpers_of_the_file_are_there_and_the_module_never_runs():
    # failures.py raises SystemExit at import: a build that works proves it was not imported.
    [usage] = failure("uses_literals")
    assert usage.registers > 0


@needs_triton
def test_a_helper_imported_from_another_module():
    reason = failure("reads_import", {"BLOCK": 128})
    assert_one_line(reason)
    line = line_of("failures.py", "fast_exp(tl.load")
    assert reason.startswith(
        f"`reads_import` reads `fast_exp` (line {line}), which is not a literal"
    )
    assert "(imported from `.helpers`)" in reason


@needs_triton
def test_a_global_computed_at_import_time():
    reason = failure("reads_computed", {"BLOCK": 128})
    assert_one_line(reason)
    assert "reads `SCALE`" in reason
    assert f"computed at import time, line {line_of('failures.py', 'SCALE = float')}" in reason


@needs_triton
def test_a_helper_reading_a_missing_global_is_named():
    reason = failure("calls_bad_helper")
    assert_one_line(reason)
    line = line_of("failures.py", "return x * SCALE")
    assert reason.startswith(
        f"`_scaled` (called by `calls_bad_helper`) reads `SCALE` (line {line})"
    )


@needs_triton
def test_an_annotated_global_is_not_a_constexpr_for_triton():
    reason = failure("reads_annotated")
    assert_one_line(reason)
    assert "reads the global `ANNOTATED_BLOCK`" in reason and "tl.constexpr(...)" in reason


@needs_triton
def test_a_statement_that_fails_on_its_own():
    reason = failure("reads_failed")
    assert_one_line(reason)
    line = line_of("failures.py", "missing_fn = tl.no_such_function")
    assert f"reads `missing_fn` (line {line + 5}), whose definition (line {line})" in reason
    assert "AttributeError" in reason


@needs_triton
def test_a_default_computed_from_a_missing_global():
    reason = failure("default_from_global", {"LIMIT": 3})
    assert_one_line(reason)
    line = line_of("failures.py", "def default_from_global")
    assert f"the definition of `default_from_global` (line {line}) needs `SCALE`" in reason


@needs_triton
def test_a_compile_error_in_the_body():
    reason = failure("bad_body", {"BLOCK": 128})
    assert_one_line(reason)
    line = line_of("failures.py", "tl.reshape(x, (3, 5))")
    assert (
        reason
        == f"`bad_body` does not compile for sm_90 (line {line}): Shape element 0 must be a power of 2"
    )


def test_bad_signatures_and_archs_fail_before_building():
    assert failure("bad_body", {"BLOCK": 128}, {"X": "*fp33"}).startswith(
        '`bad_body`: `signature.X` = "*fp33" is no Triton type'
    )
    assert "constexpr `BLOCK` has no value" in failure("bad_body")
    path, data = load("failures.py")
    k = kernels("failures.py")["bad_body"]
    assert "arch 'sm90'" in compile_kernel(
        path, data, k, {"X": "*fp32"}, {"BLOCK": 8}, 4, None, "sm90"
    )
    assert "num_warps" in compile_kernel(
        path, data, k, {"X": "*fp32"}, {"BLOCK": 8}, 5, None, "sm_90"
    )


@needs_triton
def test_a_build_past_its_timeout_is_stopped():
    path, data = load("sizes.py")
    k = kernels("sizes.py")["row_kernel"]
    reason = compile_kernel(
        path, data, k, SIZES_SIG, {"BLOCK": 16384}, 1, None, "sm_90", timeout=0.5
    )
    assert reason == "`row_kernel`: compiling for sm_90 took over 0.5 s; stopped"


def test_a_helper_is_not_built_on_its_own():
    expected = (
        "`_square` returns a value: a @triton.jit helper, built within the kernels that call it"
    )
    assert failure("_square", signature={"x": "fp32"}) == expected
    assert instantiations(kernels("failures.py")["_square"], []) == expected


@needs_triton
def test_an_error_of_triton_s_passes_names_its_line():
    # Built as if it were a kernel, the helper fails in Triton's MLIR passes (a kernel returns
    # nothing): the first `error:` diagnostic Triton writes, at the file's line.
    path, data = load("failures.py")
    k = dataclasses.replace(kernels("failures.py")["_square"], helper=False)
    reason = compile_kernel(path, data, k, {"x": "fp32"}, {}, 4, None, "sm_90")
    assert_one_line(reason)
    line = line_of("failures.py", "return x * x")
    assert reason.startswith(
        f"`_square` does not compile for sm_90 (line {line}): failed to legalize"
    )


@needs_triton
def test_a_ptxas_error_is_one_line():
    path, data = load("failures.py")
    k = kernels("failures.py")["bad_asm"]
    reason = compile_kernel(path, data, k, {"X": "*i32"}, {}, 4, None, "sm_90")
    assert_one_line(reason)
    assert reason.startswith("`bad_asm`: ptxas failed for sm_90: ")
    assert "bogus" in reason or "Unknown modifier" in reason


@needs_triton
def test_dtype_constexprs_and_divisibility_hints():
    path, data = load("sizes.py")
    k = kernels("sizes.py")["cast_kernel"]
    sig = {"X": "*fp32", "Y": "*fp16", "stride": "i32:16", "N": "i32"}
    entries = [
        {"signature": sig, "constexprs": {"OUT": "tl.float16", "BLOCK": 256}},
        {"signature": {**sig, "stride": "i32"}, "constexprs": {"OUT": "tl.bfloat16", "BLOCK": 256}},
    ]
    results = compile_builds(path, data, k, instantiations(k, entries), "sm_90")
    assert all(isinstance(r, list) for r in results), results
    assert "stride=i32:16, N=i32, OUT=tl.float16" in results[0][0].instantiation
    assert "stride=i32, N=i32, OUT=tl.bfloat16" in results[1][0].instantiation
    assert all(r[0].registers > 0 for r in results)
    bad = compile_kernel(path, data, k, sig, {"OUT": "tl.float17", "BLOCK": 256}, 4, None, "sm_90")
    assert bad.startswith('`cast_kernel`: `constexprs.OUT` = "tl.float17" is no Triton dtype')
