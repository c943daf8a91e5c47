"""`kernlint inspect FILE`: the facts kernlint found in a file, on the fixtures and on small
files written here; the JSON form against a schema; bad input."""

from __future__ import annotations

import json
import os
import re

import pytest
from cli_support import run

from kernlint.inspect import inspect_path, render_text

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIX = os.path.join(ROOT, "fixtures")


def fixture(*parts) -> str:
    return os.path.join(FIX, *parts)


def expected_lines(path: str, code: str) -> set[int]:
    """Lines whose `kernlint-expect` comment names `code` (the fixtures' own annotations)."""
    out = set()
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            m = re.search(r"kernlint-expect:(.*)$", line)
            if m and re.search(rf"\b{code}@", m.group(1)):
                out.add(n)
    return out


def line_of(path: str, text: str) -> int:
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if text in line:
                return n
    raise AssertionError(f"{text!r} not in {path}")


# -- C/C++/CUDA ---------------------------------------------------------------------------
def test_kernels_and_parameters():
    path = fixture("cpp", "kernel-pointer-not-restrict", "bad.cuh")
    r = inspect_path(path)
    assert r["language"] == "cpp"
    names = [k["name"] for k in r["kernels"]]
    assert names[:3] == ["scale_kernel", "copy_kernel", "macro_kernel"]
    scale = r["kernels"][0]
    assert scale["template"] is True
    assert scale["scope"] == "sglang"
    assert "global" in scale["qualifiers"]
    out, inp, n = scale["parameters"]
    assert (out["name"], out["type"], out["pointer_depth"], out["const"]) == ("out", "T", 1, False)
    assert (inp["name"], inp["pointer_depth"], inp["const"], inp["restrict"]) == (
        "in",
        1,
        True,
        False,
    )
    assert (n["name"], n["type"], n["pointer_depth"]) == ("n", "int32_t", 0)
    copy = r["kernels"][1]
    by_name = {p["name"]: p for p in copy["parameters"]}
    assert by_name["src"]["restrict"] and by_name["src"]["const"]
    assert by_name["rows"]["pointer_depth"] == 2
    # The macro kernel is a kernel through the attribute macro normalization understood.
    assert "global" in r["kernels"][2]["qualifiers"]
    # Device and host helpers are not kernels.
    assert "helper" not in names and "host_helper" not in names
    # reported_by: the rule's findings inside each kernel, as the fixture annotates them.
    expect = expected_lines(path, "CU003")
    for k in r["kernels"]:
        annotated = any(k["line"] <= ln <= k["end_line"] for ln in expect)
        assert ("CU003" in k["reported_by"]) == annotated, k["name"]


def test_ffi_boundary_and_reasons():
    path = fixture("cpp", "ffi-non-fixed-width-int", "bad.cuh")
    r = inspect_path(path)
    ffi = {f["name"]: f for f in r["ffi_functions"]}
    assert set(ffi) == {"run", "count_rows", "exported_fn", "entry", "aliased"}
    assert ffi["run"]["scope"] == "sglang::ScaleKernel"
    assert any("TensorView" in why for why in ffi["run"]["reasons"])
    assert ffi["exported_fn"]["reasons"] == ["exported by TVM_FFI_DLL_EXPORT_TYPED_FUNC"]
    # A TensorView helper called from the entry point is not at the boundary, and says why.
    helpers = {h["name"]: h["why"] for h in r["not_ffi"]}
    assert "called in this file" in helpers["launch_helper"]
    # Kernels and device functions are never FFI functions.
    assert "kernel" not in ffi and "device_helper" not in ffi
    assert [k["name"] for k in r["kernels"]] == ["kernel"]
    # CU005's findings sit in exactly the functions the fixture annotates.
    expect = expected_lines(path, "CU005")
    for f in r["ffi_functions"]:
        annotated = any(f["line"] <= ln <= f["end_line"] for ln in expect)
        assert ("CU005" in f["reported_by"]) == annotated, f["name"]
    params = {p["name"]: p for p in ffi["run"]["parameters"]}
    assert params["in"]["reference"] and params["in"]["const"]
    assert params["num_tokens"]["type"] == "long"


def test_wrapper_targets_from_python(tmp_path):
    """A function is at the FFI boundary when a Python `cuda_wrappers` target names it (only
    when the Python side is given, as `kernlint check` needs it among the checked files)."""
    cu = tmp_path / "k.cuh"
    cu.write_text(
        "namespace sglang {\nstruct AddKernel {\n  static void run(int n) {}\n};\n}\n",
        encoding="utf-8",
    )
    py = tmp_path / "ops.py"
    py.write_text(
        "from sglang.jit_kernel.utils import load_jit\n"
        "def m(args):\n"
        '    return load_jit("add", cuda_files=["k.cuh"], '
        'cuda_wrappers=[("add", f"&AddKernel<{args}>::run")])\n',
        encoding="utf-8",
    )
    alone = json.loads(run("inspect", str(cu), "--format", "json").stdout)
    assert alone["ffi_functions"] == []
    p = run("inspect", str(cu), "--format", "json", "--wrappers-from", str(tmp_path))
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert [f["name"] for f in r["ffi_functions"]] == ["run"]
    assert r["ffi_functions"][0]["reasons"] == ["named by a Python `cuda_wrappers` target"]
    assert r["wrapper_targets"] == ["AddKernel::run"]


def test_reference_kernel():
    path = fixture("reference", "cuda", "fused_add_rmsnorm.cuh")
    r = inspect_path(path)
    names = {k["name"] for k in r["kernels"]}
    assert names == {"fused_add_rmsnorm_kernel", "fused_add_rmsnorm_two_pass_kernel"}
    for k in r["kernels"]:
        params = {p["name"]: p for p in k["parameters"]}
        assert params["x"]["const"] and params["x"]["restrict"]
        assert params["out"]["restrict"] and not params["out"]["const"]
    ns = [n["name"] for n in r["namespaces"]]
    assert ns == ["sglang", "sglang::fused_add_rmsnorm"]
    assert all(n["parsed"] for n in r["namespaces"])
    # `host::LaunchKernel(grid, threads, device).enable_pdl(use_pdl)(kernel, ...)`
    launches = r["launch_sites"]
    assert [(s["kind"], s["kernel"]) for s in launches] == [("LaunchKernel", "kernel")]
    assert launches[0]["line"] == line_of(path, "host::LaunchKernel(grid, threads, device)")
    assert [f["name"] for f in r["ffi_functions"]] == ["run"]
    assert r["unparsed"] == [] and r["missed_kernels"] == []
    assert r["jit"]["is_jit"] and r["jit"]["glob"] == "**"


def test_launch_sites():
    path = fixture("cpp", "raw-kernel-launch", "bad.cu")
    r = inspect_path(path)
    kinds = [(s["kind"], s["kernel"]) for s in r["launch_sites"]]
    assert ("<<<>>>", "scale_kernel") in kinds
    assert ("cudaLaunchKernel", "(const void*)scale_kernel") in kinds
    assert ("LaunchKernel", "scale_kernel") in kinds
    chevrons = [s for s in r["launch_sites"] if s["kind"] == "<<<>>>"]
    assert all(s["config"].startswith("<<<") and "//" not in s["config"] for s in chevrons)
    # raw-kernel-launch reports the raw launches, never the LaunchKernel one.
    for s in r["launch_sites"]:
        assert ("CU006" in s["reported_by"]) == (s["kind"] != "LaunchKernel"), s


def test_unparsed_region_and_lost_kernel(tmp_path):
    f = tmp_path / "broken.cu"
    f.write_text(
        "__global__ void ok(float* out) { out[0] = 0; }\n"
        "void f() {\n"
        "  if (x {\n"
        "    y;\n"
        "}\n"
        "__global__ void lost(float* out) { out[0] = 1; }\n"
        "#define KERNEL __global__\n"
        "// __global__ in a comment\n",
        encoding="utf-8",
    )
    r = inspect_path(str(f))
    assert [k["name"] for k in r["kernels"]] == ["ok"]
    assert r["unparsed"], r
    region = r["unparsed"][0]
    assert region["start_line"] <= 3 <= region["end_line"]
    # The kernel after the broken brace is lost to the region, and inspect says so; the
    # `#define` and the comment are not kernels.
    assert [(m["line"], m["in_unparsed_region"]) for m in r["missed_kernels"]] == [(6, True)]
    text = render_text(r)
    assert "Kernels the parse lost (1):" in text
    assert f"lines {region['start_line']}-{region['end_line']}" in text


def test_kernel_lost_to_an_error_in_its_definition(tmp_path):
    f = tmp_path / "macro_param.cuh"
    f.write_text(
        "template <class P>\n"
        "__global__ void k(P a,\n"
        "                  GRID_CONSTANT P const b) {\n"
        "  a.x = 1;\n"
        "}\n",
        encoding="utf-8",
    )
    r = inspect_path(str(f))
    if r["kernels"]:  # (normalization learned this form: nothing is lost)
        assert r["missed_kernels"] == []
        return
    (missed,) = r["missed_kernels"]
    assert missed["line"] == 2 and not missed["in_unparsed_region"]
    (region,) = r["unparsed"]
    assert missed["why"] == (
        f"its definition (lines 2-5) holds an unparsed region at line {region['start_line']}"
    )


def test_parse_error_fixture():
    path = fixture("cpp", "code-outside-sglang-namespace", "parse_error.cuh")
    r = inspect_path(path)
    broken = line_of(path, "void broken(")
    assert any(u["start_line"] <= broken <= u["end_line"] for u in r["unparsed"])


def test_jit_status_and_glob():
    inside = inspect_path(fixture("cpp", "code-outside-sglang-namespace", "good.cuh"))["jit"]
    assert inside["is_jit"] and inside["glob"] == "**"
    assert inside["config"] == fixture("kernlint.toml")
    outside = inspect_path(
        fixture("cpp", "code-outside-sglang-namespace", "not_jit", "outside_jit_roots.cuh")
    )["jit"]
    assert outside["is_jit"] is False
    assert outside["excluded_by"] == "!**/not_jit/**"


def test_default_jit_roots(tmp_path):
    d = tmp_path / "python" / "sglang" / "jit_kernel" / "csrc"
    d.mkdir(parents=True)
    (d / "a.cuh").write_text("namespace sglang {}\n", encoding="utf-8")
    (tmp_path / "b.cuh").write_text("namespace sglang {}\n", encoding="utf-8")
    r = inspect_path(str(d / "a.cuh"))["jit"]
    assert r["is_jit"] and r["glob"] == "**/jit_kernel/csrc/**" and r["config"] is None
    r = inspect_path(str(tmp_path / "b.cuh"))["jit"]
    assert r["is_jit"] is False and r["glob"] is None and r["excluded_by"] is None


# -- Python -------------------------------------------------------------------------------
def test_aiter_imports_and_guards():
    path = fixture("python", "ungated-aiter-import", "bad.py")
    r = inspect_path(path)
    assert r["language"] == "python" and r["parsed"]
    assert {"_use_aiter", "_use_aiter_gfx95", "_fast"} <= set(r["aiter_gates"])
    by_line = {a["line"]: a for a in r["aiter_imports"]}
    hip = by_line[line_of(path, "from aiter import rmsnorm2d_fwd")]
    assert hip["guard"] == "HIP check only"
    assert [c["kind"] for c in hip["conditions"]] == ["hip-check"]
    assert hip["runs_on_cuda"] is False
    gated = by_line[line_of(path, "from aiter import silu_and_mul")]
    assert gated["guard"] == "aiter gate `_use_aiter`"
    assert gated["conditions"][0]["on_cuda"] is False
    local = by_line[line_of(path, "from aiter import rms_norm  # kernlint-expect")]
    assert local["function"] == "forward" and local["guard"] is None
    tried = by_line[line_of(path, "import aiter.utility")]
    assert tried["guard"] == "`try:` that catches ImportError"
    top = by_line[line_of(path, "import aiter  #")]
    assert top["guard"] is None and top["runs_on_cuda"] is True and top["function"] is None
    # The relative import and `aiter_compat` are not aiter imports.
    assert all(a["module"].split(".")[0] == "aiter" for a in r["aiter_imports"])
    # PY001 reports exactly the annotated imports; the guard kernlint found agrees with it.
    assert {a["line"] for a in r["aiter_imports"] if a["reported_by"]} == expected_lines(
        path, "PY001"
    )
    for a in r["aiter_imports"]:
        safe = (a["guard"] or "").startswith(("aiter gate", "`try:`"))
        assert safe == (not a["reported_by"]), a


def test_forward_gated_early_exit():
    path = fixture("python", "ungated-aiter-import", "bad.py")
    r = inspect_path(path)
    gated = [a for a in r["aiter_imports"] if a["function"] == "forward_gated"]
    assert len(gated) == 1
    (cond,) = gated[0]["conditions"]
    assert cond["condition"] == "_use_aiter" and cond["holds"] is False
    assert cond["kind"] == "aiter-gate"


def test_load_jit_factories():
    path = fixture("python", "jit-module-not-cached", "bad.py")
    r = inspect_path(path)
    calls = {c["module_name"]: c for c in r["load_jit_calls"]}
    assert calls["eager"]["factory"] is None and calls["eager"]["cached"] is None
    assert calls["cached"]["factory"] == "cached" and calls["cached"]["cached"] == "cache_once"
    assert calls["cached_alias"]["cached"] == "cache_once"  # `cache_once as once`
    assert calls["nested"]["factory"] == "build_it"
    assert calls["nested"]["enclosing"] == ["cached_nested", "build_it"]
    assert calls["nested"]["cached"] == "cache_once"
    assert calls["lru"]["cached"] == "lru_cache"
    assert calls["ipc"]["registration_callback"] is True
    assert calls["lambda"]["factory"] == "<lambda>"
    assert calls["aliased"]["factory"] == "via_alias"  # `load_jit as build`
    assert {c["line"] for c in r["load_jit_calls"] if "PY004" in c["reported_by"]} == (
        expected_lines(path, "PY004")
    )


def test_lru_cache_factories():
    r = inspect_path(fixture("python", "lru-cache-on-jit-module", "bad.py"))
    cached = {c["factory"]: c["cached"] for c in r["load_jit_calls"]}
    assert cached == {
        "a": "lru_cache",
        "b": "lru_cache",
        "c": "lru_cache",
        "d": "lru_cache",
        "fine": "cache_once",
    }


def test_ci_registrations():
    path = fixture("python", "non-literal-ci-registration", "bad.py")
    r = inspect_path(path)
    regs = {c["line"]: c for c in r["ci_registrations"]}
    assert regs[line_of(path, "est_time=EST, suite=SUITE")]["non_literal"] == [
        "est_time",
        "suite",
    ]
    npu = regs[line_of(path, "npu_ci(est_time=30")]
    assert npu["function"] == "register_npu_ci" and npu["non_literal"] == ["suite"]
    later = regs[line_of(path, "def register_later") + 1]
    assert later["module_level"] is False and later["inside"] == "function `register_later`"
    cls = regs[line_of(path, "class TestThing") + 1]
    assert cls["inside"] == "class `TestThing`"
    main = regs[line_of(path, 'if __name__ == "__main__"') + 1]
    assert main["module_level"] and main["non_literal"] == []
    assert {ln for ln, c in regs.items() if c["reported_by"]} == expected_lines(path, "PY006")


def test_python_syntax_error(tmp_path):
    f = tmp_path / "bad.py"
    f.write_text("import os\n\ndef f(:\n    pass\n", encoding="utf-8")
    p = run("inspect", str(f), "--format", "json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["parsed"] is False
    assert r["syntax_error"]["line"] == 3
    assert [(u["start_line"], u["end_line"]) for u in r["unparsed"]] == [(1, 4)]
    text = run("inspect", str(f)).stdout
    assert "Cannot parse:" in text and "lines 1-4" in text


# -- the command --------------------------------------------------------------------------
def test_text_output():
    path = fixture("cpp", "ffi-non-fixed-width-int", "bad.cuh")
    p = run("inspect", path)
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert out.startswith(f"{path}: C/C++/CUDA, ")
    assert "JIT source: yes (jit-roots glob `**`" in out
    assert "Kernels (1):" in out and "  kernel in sglang, line " in out
    assert "#0 out: float* __restrict__ out  [pointer, restrict]" in out
    assert "why: exported by TVM_FFI_DLL_EXPORT_TYPED_FUNC" in out
    assert "not FFI: launch_helper" in out
    assert out.rstrip().endswith("Unparsed regions: none")
    py = run("inspect", fixture("python", "ungated-aiter-import", "bad.py")).stdout
    assert "guard: HIP check only" in py and "[reported: PY001]" in py


PARAM = {
    "type": "object",
    "required": ["index", "name", "type", "text", "pointer_depth", "const", "restrict"],
    "properties": {
        "index": {"type": "integer"},
        "name": {"type": "string"},
        "type": {"type": "string"},
        "text": {"type": "string"},
        "pointer_depth": {"type": "integer", "minimum": 0},
        "const": {"type": "boolean"},
        "restrict": {"type": "boolean"},
        "reference": {"type": "boolean"},
        "array": {"type": "boolean"},
    },
}
FUNCTION = {
    "type": "object",
    "required": ["name", "scope", "line", "end_line", "qualifiers", "parameters", "reported_by"],
    "properties": {
        "line": {"type": "integer", "minimum": 1},
        "end_line": {"type": "integer", "minimum": 1},
        "qualifiers": {"type": "array", "items": {"enum": ["global", "device", "host"]}},
        "parameters": {"type": "array", "items": PARAM},
        "reported_by": {"type": "array", "items": {"type": "string"}},
    },
}
REGION = {
    "type": "object",
    "required": ["start_line", "end_line"],
    "properties": {
        "start_line": {"type": "integer", "minimum": 1},
        "end_line": {"type": "integer", "minimum": 1},
    },
}
COMMON = {
    "version": {"const": 1},
    "path": {"type": "string"},
    "lines": {"type": "integer", "minimum": 1},
    "jit": {
        "type": "object",
        "required": ["is_jit", "glob", "excluded_by", "config", "jit_roots"],
        "properties": {"is_jit": {"type": "boolean"}, "glob": {"type": ["string", "null"]}},
    },
    "unparsed": {"type": "array", "items": REGION},
}
CPP_SCHEMA = {
    "type": "object",
    "required": [
        "version",
        "path",
        "language",
        "lines",
        "jit",
        "namespaces",
        "kernels",
        "missed_kernels",
        "ffi_functions",
        "not_ffi",
        "launch_sites",
        "unparsed",
    ],
    "properties": {
        **COMMON,
        "language": {"const": "cpp"},
        "kernels": {"type": "array", "items": FUNCTION},
        "ffi_functions": {
            "type": "array",
            "items": {
                "allOf": [FUNCTION, {"required": ["reasons"]}],
            },
        },
        "namespaces": {
            "type": "array",
            "items": {"type": "object", "required": ["name", "line", "end_line", "parsed"]},
        },
        "launch_sites": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["kind", "line", "column", "kernel", "config", "reported_by"],
                "properties": {
                    "kind": {
                        "enum": [
                            "<<<>>>",
                            "LaunchKernel",
                            "cudaLaunchKernel",
                            "cudaLaunchKernelEx",
                            "cudaLaunchKernelExC",
                        ]
                    }
                },
            },
        },
    },
}
PY_SCHEMA = {
    "type": "object",
    "required": ["version", "path", "language", "lines", "jit", "parsed", "unparsed"],
    "properties": {
        **COMMON,
        "language": {"const": "python"},
        "aiter_imports": {
            "type": "array",
            "items": {
                "type": "object",
                "required": [
                    "line",
                    "module",
                    "function",
                    "conditions",
                    "guard",
                    "runs_on_cuda",
                    "reported_by",
                ],
                "properties": {
                    "conditions": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["test", "holds", "condition", "kind", "on_cuda"],
                            "properties": {
                                "kind": {"enum": ["aiter-gate", "hip-check", "other"]},
                                "on_cuda": {"type": ["boolean", "null"]},
                            },
                        },
                    },
                    "runs_on_cuda": {"type": ["boolean", "null"]},
                },
            },
        },
        "load_jit_calls": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["line", "module_name", "factory", "cached", "reported_by"],
                "properties": {"cached": {"enum": ["cache_once", "lru_cache", None]}},
            },
        },
        "ci_registrations": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["line", "function", "module_level", "non_literal", "reported_by"],
            },
        },
    },
}

CPP_FILES = [
    os.path.join(d, f)
    for d, _, files in sorted(os.walk(os.path.join(FIX, "cpp")))
    for f in sorted(files)
    if f.endswith((".cu", ".cuh", ".h"))
] + [fixture("reference", "cuda", "fused_add_rmsnorm.cuh")]
PY_FILES = [
    os.path.join(d, f)
    for d, _, files in sorted(os.walk(os.path.join(FIX, "python")))
    for f in sorted(files)
    if f.endswith(".py")
] + [fixture("reference", "triton", "fused_add_rmsnorm.py")]


@pytest.mark.parametrize(
    "path", CPP_FILES + PY_FILES, ids=lambda p: os.path.relpath(p, FIX).replace(os.sep, "/")
)
def test_json_schema_on_every_fixture(path):
    jsonschema = pytest.importorskip("jsonschema")
    p = run("inspect", path, "--format", "json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, CPP_SCHEMA if path in CPP_FILES else PY_SCHEMA)
    assert doc["path"] == path
    with open(path, "rb") as fh:
        data = fh.read()
    assert doc["lines"] == max(1, data.count(b"\n") + (0 if data.endswith(b"\n") else 1))
    # Every line number lies in the file.
    for item in doc.get("kernels", []) + doc.get("aiter_imports", []) + doc["unparsed"]:
        first = item.get("line", item.get("start_line"))
        last = item.get("end_line", first)
        assert 1 <= first <= last <= doc["lines"], item
    # The text form renders the same report without failing.
    assert render_text(doc).startswith(f"{path}: ")


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("missing.cu", None, "no such file or directory"),
        ("adir.cu", "DIR", "is a directory"),
        ("binary.cu", b"int x;\0\0\1", "binary file"),
        ("undecodable.py", b"x = '\xff\xfe'\n", "cannot be decoded"),
        ("bad_cookie.py", b"# -*- coding: no-such-codec -*-\nx = 1\n", "cannot be decoded"),
        ("notes.txt", b"hello\n", "not a C/C++/CUDA or Python file"),
    ],
)
def test_bad_input_exit_2(tmp_path, name, content, message):
    path = tmp_path / name
    if content == "DIR":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    for fmt in ("text", "json"):
        p = run("inspect", str(path), "--format", fmt)
        assert p.returncode == 2
        assert p.stdout == ""
        lines = p.stderr.splitlines()
        assert len(lines) == 1, p.stderr
        assert lines[0].startswith(f"kernlint: error: {path}: ")
        assert message in lines[0]
        assert "Traceback" not in p.stderr


def test_invalid_utf8_cpp_is_inspected():
    """A C/C++ file is bytes to kernlint (non-ascii-character reports the invalid UTF-8): it is
    inspected, not refused."""
    path = fixture("cpp", "non-ascii-character", "invalid_utf8.cuh")
    p = run("inspect", path, "--format", "json")
    assert p.returncode == 0, p.stderr
    assert [n["name"] for n in json.loads(p.stdout)["namespaces"]] == ["sglang"]


def test_usage_errors():
    assert run("inspect").returncode == 2
    assert run("inspect", "a.cu", "--format", "xml").returncode == 2
    p = run("inspect", "a.cu", "--config", "/nonexistent/kernlint.toml")
    assert p.returncode == 2 and "Traceback" not in p.stderr
