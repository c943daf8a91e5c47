"""`--compile-from BUILD_DIR`: kernels' registers and local memory read from binaries a build
made (kernlint/compile/build_dir.py), and finding the CUDA tools (kernlint/compile/toolchain.py).

The binaries are built here, in a temporary folder, with pip's nvcc (or one the search finds);
those tests skip when nvcc or cuobjdump is missing. The parser, the tool search and the
demangler's fallbacks run everywhere.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys

import pytest

from kernlint.compile import build_dir, toolchain
from kernlint.compile.ptxas import source_name

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "compile_build")

KERNELS = r"""
__global__ void light(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * 2.0f;
}

template <typename T, int N>
__global__ void heavy(T* out, const T* in, int n) {
  T acc[N];
#pragma unroll
  for (int k = 0; k < N; ++k) acc[k] = in[threadIdx.x + k * n];
  T s = 0;
#pragma unroll
  for (int k = 0; k < N; ++k)
#pragma unroll
    for (int j = 0; j < N; ++j) s += acc[k] * acc[j] + acc[(k + j) % N];
  out[threadIdx.x] = s;
}
template __global__ void heavy<float, 16>(float*, const float*, int);

// A local array indexed by data: it cannot live in registers.
__global__ void local_array(float* out, const int* idx, int n) {
  float buf[64];
  for (int k = 0; k < 64; ++k) buf[k] = out[k];
  for (int k = 0; k < n; ++k) buf[idx[k] & 63] += out[k + 64];
  out[threadIdx.x] = buf[idx[threadIdx.x] & 63];
}

// Not a kernel: a relocatable build lists it without a parameter bank.
__device__ __noinline__ float helper(const float* p, int i) { return p[i] * 3.0f; }
__global__ void calls_helper(float* p) { p[threadIdx.x] = helper(p, threadIdx.x); }
// File-local kernels: a relocatable build prefixes their symbols with `__nv_static_`.
static __global__ void file_local(int* p) { p[threadIdx.x] = 1; }
namespace {
__global__ void unnamed_ns(int* p) { p[threadIdx.x] = 2; }
}
void launch_locals(int* p) {
  file_local<<<1, 1>>>(p);
  unnamed_ns<<<1, 1>>>(p);
}
"""
NAMES = {"light", "heavy", "local_array", "calls_helper", "file_local", "unnamed_ns"}


def _nvcc() -> str | None:
    """pip's nvcc first (what CI installs), then whatever the search finds."""
    for d in toolchain.pip_bin_dirs():
        cand = os.path.join(d, "nvcc")
        if os.access(cand, os.X_OK):
            return cand
    return toolchain.find_tool("nvcc")


@pytest.fixture(scope="module")
def tools():
    nvcc, cuobjdump = _nvcc(), toolchain.find_tool("cuobjdump")
    missing = [n for n, p in (("nvcc", nvcc), ("cuobjdump", cuobjdump)) if p is None]
    if missing:
        pytest.skip(toolchain.missing_message(*missing))
    return nvcc, cuobjdump


@pytest.fixture(scope="module")
def built(tools, tmp_path_factory):
    """A build folder: a cubin, a two-arch fatbin, a relocatable-free object, a shared library,
    an sm_90a cubin (in a subfolder), a host-only object, and the source (not a binary)."""
    nvcc, _ = tools
    root = tmp_path_factory.mktemp("build")
    src = root / "kernels.cu"
    src.write_text(KERNELS)
    (root / "host.cpp").write_text("int host_only(int x) { return x + 1; }\n")
    (root / "sub").mkdir()
    inc = [f"-I{p}" for p in toolchain.nvcc_includes(nvcc)]
    jobs = [
        ["-cubin", "-arch=sm_90", str(src), "-o", str(root / "kernels.cubin")],
        ["-fatbin", "-gencode=arch=compute_90,code=sm_90", "-gencode=arch=compute_100,code=sm_100"]
        + [str(src), "-o", str(root / "kernels.fatbin")],
        ["-c", "-arch=sm_90", str(src), "-o", str(root / "kernels.o")],
        ["-shared", "-Xcompiler", "-fPIC", "-arch=sm_90", str(src), "-o", str(root / "libk.so")],
        ["-cubin", "-arch=sm_90a", str(src), "-o", str(root / "sub" / "k90a.cubin")],
        ["-c", str(root / "host.cpp"), "-o", str(root / "host.o")],
    ]
    procs = [
        subprocess.Popen([nvcc, *inc, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        for args in jobs
    ]
    for proc, args in zip(procs, jobs, strict=True):
        out, _ = proc.communicate(timeout=300)
        assert proc.returncode == 0, f"nvcc {' '.join(args)} failed:\n{out.decode()[-3000:]}"
    return root


def _by_name(usages):
    return {(u.name, u.arch): u for u in usages}


# --- binaries from a real build ---------------------------------------------------------------


def test_cubin_kernels(tools, built):
    _, cuobjdump = tools
    found = build_dir.res_usage(cuobjdump, str(built / "kernels.cubin"), str(built))
    assert isinstance(found, list), found
    assert {u.name for u in found} == NAMES
    assert {u.arch for u in found} == {"sm_90"}
    by = _by_name(found)
    light, heavy, local = by["light", "sm_90"], by["heavy", "sm_90"], by["local_array", "sm_90"]
    assert 0 < light.registers < heavy.registers
    assert local.local_bytes >= 64 * 4  # (the array is in local memory)
    assert light.local_bytes == 0
    for u in found:
        assert u.source == "build"
        assert u.name == source_name(u.symbol)
        assert u.symbol.startswith("_Z")
        assert u.spill_stores == u.spill_loads == 0
        assert u.instantiation.endswith(" in kernels.cubin")
    if toolchain.find_demangler():  # (cu++filt and c++filt may space types differently)
        assert heavy.instantiation.startswith("heavy<float, 16>(")
        assert light.instantiation.startswith("light(float")


def test_cubin_arch_with_suffix_from_cuobjdump(tools, built):
    _, cuobjdump = tools
    found = build_dir.res_usage(cuobjdump, str(built / "sub" / "k90a.cubin"), str(built))
    assert {u.arch for u in found} == {"sm_90a"}
    assert {u.instantiation.rsplit(" in ", 1)[1] for u in found} == {"sub/k90a.cubin"}
    # Without cuobjdump -lelf, the ELF header gives the number (no suffix).
    with open(built / "sub" / "k90a.cubin", "rb") as fh:
        assert build_dir._elf_arch(fh.read(64)) == "sm_90"


def test_fatbin_object_and_shared_library(tools, built):
    _, cuobjdump = tools
    cubin = _by_name(build_dir.res_usage(cuobjdump, str(built / "kernels.cubin")))
    fatbin = build_dir.res_usage(cuobjdump, str(built / "kernels.fatbin"))
    assert {(u.name, u.arch) for u in fatbin} == {
        (n, a) for n in NAMES for a in ("sm_90", "sm_100")
    }
    for name in ("kernels.o", "libk.so"):
        found = build_dir.res_usage(cuobjdump, str(built / name))
        assert isinstance(found, list), (name, found)
        # (a .so holds an empty device-link image too: each kernel is still listed once)
        assert sorted((u.name, u.arch) for u in found) == sorted((n, "sm_90") for n in NAMES)
        for u in found:  # the same compilation as the cubin's: the same figures
            assert (u.registers, u.local_bytes) == (
                cubin[u.name, u.arch].registers,
                cubin[u.name, u.arch].local_bytes,
            ), name
    for u in fatbin:
        if u.arch == "sm_90":
            assert u.registers == cubin[u.name, "sm_90"].registers


def test_build_dir_walk_and_notes(tools, built, tmp_path):
    _, cuobjdump = tools
    root = tmp_path / "tree"
    shutil.copytree(built, root)
    (root / "notes.txt").write_text("not a binary by name\n")
    (root / "text.cubin").write_text("not an ELF file\n")
    data = (root / "kernels.cubin").read_bytes()
    (root / "sub" / "truncated.cubin").write_bytes(data[:300])
    (root / "empty.o").write_bytes(b"")
    os.symlink(root / "kernels.cubin", root / "link.cubin")
    os.symlink(root / "sub", root / "linked_dir")

    paths = build_dir.binaries(str(root))
    rel = [os.path.relpath(p, root) for p in paths]
    assert rel == sorted(rel)
    assert set(rel) == {
        "empty.o",
        "host.o",
        "kernels.cubin",
        "kernels.fatbin",
        "kernels.o",
        "libk.so",
        "text.cubin",
        "sub/k90a.cubin",
        "sub/truncated.cubin",
    }

    assert build_dir.usages(str(tmp_path / "none"), cuobjdump) == (
        [],
        [f"{tmp_path / 'none'}: not a folder"],
    )
    (tmp_path / "sources").mkdir()
    (tmp_path / "sources" / "k.cu").write_text(KERNELS)
    assert build_dir.usages(str(tmp_path / "sources"), cuobjdump)[1] == [
        f"{tmp_path / 'sources'}: no cubin, fatbin, .so, .o or .a files"
    ]

    usages, notes = build_dir.usages(str(root), cuobjdump, jobs=2)
    assert "text.cubin: skipped: not an ELF file, fatbin or archive" in notes
    assert "empty.o: skipped: empty file" in notes
    assert any(n.startswith("sub/truncated.cubin: skipped: corrupt") for n in notes), notes
    assert f"1 of {len(paths)} files hold no device code (skipped)" in notes  # (host.o)
    assert len(notes) == 4
    # The cubin, .o and .so hold the same sm_90 build: kept once, from the first file.
    keys = [(u.symbol, u.arch) for u in usages]
    assert len(keys) == len(set(keys))
    assert {u.arch for u in usages} == {"sm_90", "sm_90a", "sm_100"}
    sm90 = [u for u in usages if u.arch == "sm_90"]
    assert {u.name for u in sm90} == NAMES
    assert {u.instantiation.rsplit(" in ", 1)[1] for u in sm90} == {"kernels.cubin"}


def test_bad_files_give_reasons(tools, built, tmp_path):
    nvcc, cuobjdump = tools
    data = (built / "kernels.cubin").read_bytes()
    garbled = bytearray(data)  # (the section header table overwritten)
    shoff, shnum = int.from_bytes(data[40:48], "little"), int.from_bytes(data[60:62], "little")
    garbled[shoff : shoff + 64 * shnum] = b"\xff" * (64 * shnum)
    cases = {
        "garbled.cubin": bytes(garbled),
        "truncated.cubin": data[:3000],
        "text.so": b"hello\n",
        "short.o": b"\x7fELF\x02\x01",
    }
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
    assert build_dir.res_usage(cuobjdump, str(tmp_path / "garbled.cubin")).startswith("corrupt")
    assert build_dir.res_usage(cuobjdump, str(tmp_path / "truncated.cubin")).startswith("corrupt")
    assert build_dir.res_usage(cuobjdump, str(tmp_path / "text.so")) == (
        "not an ELF file, fatbin or archive"
    )
    assert build_dir.res_usage(cuobjdump, str(tmp_path / "short.o")).startswith("corrupt ELF")
    assert build_dir.res_usage(cuobjdump, str(built / "host.o")) == "no device code"
    assert build_dir.res_usage(cuobjdump, str(tmp_path / "missing.cubin")).startswith("unreadable")

    ptx = tmp_path / "ptx_only.fatbin"
    src = tmp_path / "k.cu"
    src.write_text("__global__ void k(int* p) { p[threadIdx.x] = 1; }\n")
    inc = [f"-I{p}" for p in toolchain.nvcc_includes(nvcc)]
    subprocess.run(
        [nvcc, *inc, "-fatbin", "-gencode=arch=compute_90,code=compute_90", str(src), "-o", ptx],
        check=True,
        capture_output=True,
        timeout=300,
    )
    assert build_dir.res_usage(cuobjdump, str(ptx)).startswith("only PTX")


def test_relocatable_object_lists_kernels_only(tools, tmp_path):
    """An `-rdc` object lists its non-inlined device functions too (without a CONSTANT[0]
    bank): they are not kernels."""
    nvcc, cuobjdump = tools
    src = tmp_path / "kernels.cu"
    src.write_text(KERNELS)
    obj = tmp_path / "rdc.o"
    inc = [f"-I{p}" for p in toolchain.nvcc_includes(nvcc)]
    subprocess.run(
        [nvcc, *inc, "-c", "-rdc=true", "-arch=sm_90", str(src), "-o", str(obj)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    listed = subprocess.run(
        [cuobjdump, "-res-usage", str(obj)], capture_output=True, text=True, timeout=60
    ).stdout
    assert "Function _Z6helperPKfi:" in listed
    assert "Function __nv_static_" in listed
    found = build_dir.res_usage(cuobjdump, str(obj))
    assert {u.name for u in found} == NAMES
    assert {u.arch for u in found} == {"sm_90"}
    local = next(u for u in found if u.name == "file_local")
    assert local.symbol.startswith("__nv_static_")
    assert build_dir.mangled_name(local.symbol) == "_Z10file_localPi"
    if toolchain.find_demangler():
        assert local.instantiation.startswith("file_local(int")
        assert local.instantiation.endswith(f" in {obj}")
        other = next(u for u in found if u.name == "unnamed_ns")
        assert other.instantiation.startswith("(anonymous namespace)::unnamed_ns(int")


def test_mangled_name():
    sym = "__nv_static_26__ddd6ef6d_5_st_cu_4536d6f1__Z2skPi"
    assert build_dir.mangled_name(sym) == "_Z2skPi"
    assert build_dir.mangled_name("_Z2skPi") == "_Z2skPi"
    assert build_dir.mangled_name("__nv_static_99__short") == "__nv_static_99__short"
    assert build_dir.mangled_name("plain_c") == "plain_c"


def test_cuobjdump_that_hangs_or_is_missing(built, tmp_path):
    slow = tmp_path / "cuobjdump"
    slow.write_text("#!/bin/sh\nexec sleep 30\n")
    slow.chmod(0o755)
    cubin = tmp_path / "k.cubin"
    shutil.copy(built / "kernels.cubin", cubin)
    assert build_dir.res_usage(str(slow), str(cubin), timeout=0.5) == (
        "cuobjdump timed out after 0.5 s"
    )
    gone = build_dir.res_usage(str(tmp_path / "no-such-cuobjdump"), str(cubin))
    assert gone.startswith("cannot run cuobjdump")


# --- the parser, on cuobjdump's output kept as text -------------------------------------------


def test_parse_sample_fatbin_object_archive():
    """res_usage_fatbin.txt: cuobjdump -res-usage of a two-arch fatbin, then of a relocatable
    object (device functions without CONSTANT[0]), then of an archive whose first member is
    host code."""
    with open(os.path.join(DATA, "res_usage_fatbin.txt")) as fh:
        rows = build_dir.parse_res_usage(fh.read())
    got = [(arch, sym, f["REG"], f["STACK"], f["LOCAL"]) for arch, sym, f in rows]
    assert got == [
        ("sm_90", "_Z11local_arrayPfPKii", 32, 256, 0),
        ("sm_100", "_Z11local_arrayPfPKii", 30, 256, 0),
        ("sm_90", "_Z4kernPf", 24, 0, 0),
        ("sm_90", "_Z11local_arrayPfPKii", 32, 256, 0),
    ]


def test_parse_sample_bare_cubin():
    """res_usage_cubin.txt: a cubin's output has no `arch =` header."""
    with open(os.path.join(DATA, "res_usage_cubin.txt")) as fh:
        rows = build_dir.parse_res_usage(fh.read())
    assert {arch for arch, _, _ in rows} == {None}
    names = {source_name(sym): f for _, sym, f in rows}
    assert set(names) == {"heavy", "plain_c", "local_array", "light"}
    assert names["plain_c"]["REG"] == 10  # (an extern "C" kernel keeps its plain name)
    assert all("CONSTANT[0]" in f for f in names.values())


def test_parse_ignores_ptx_images_and_noise():
    text = (
        "Fatbin ptx code:\n================\narch = sm_90\n"
        " Function _Z1kv:\n  REG:9 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:528\n"
        "Fatbin elf code:\n================\narch = sm_80\n"
        "Resource usage:\n Common:\n  GLOBAL:4 CONSTANT[4]:8\n"
        " Function _Z1kv:\n  REG:12 STACK:8 SHARED:16 LOCAL:4 CONSTANT[0]:528 TEXTURE:0\n"
    )
    rows = build_dir.parse_res_usage(text)
    assert rows == [
        (
            "sm_80",
            "_Z1kv",
            {"REG": 12, "STACK": 8, "SHARED": 16, "LOCAL": 4, "CONSTANT[0]": 528, "TEXTURE": 0},
        )
    ]
    assert build_dir.parse_res_usage("") == []


# --- demangling -------------------------------------------------------------------------------


def _isolate_tools(monkeypatch, tmp_path, path_dirs=()):
    """PATH is only `path_dirs`; no CUDA_HOME/CUDA_PATH, system toolkit or pip wheels."""
    monkeypatch.setenv("PATH", os.pathsep.join(str(d) for d in path_dirs) or str(tmp_path / "x"))
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setattr(toolchain, "SYSTEM_CUDA", str(tmp_path / "no-system-cuda"))
    monkeypatch.setattr(toolchain, "nvidia_dirs", lambda: [])


def _script(path, body):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{sys.executable}\n{body}")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


SYMBOLS = ["_Z5lightPfPKfi", "_Z5heavyIfLi16EEvPT_PKS0_i", "plain_c"]


def test_demangle_with_binutils_on_path(monkeypatch):
    cxxfilt = shutil.which("c++filt")
    if cxxfilt is None:
        pytest.skip("binutils' c++filt is not installed")
    monkeypatch.setattr(toolchain, "find_demangler", lambda: cxxfilt)
    names = toolchain.demangle(SYMBOLS)
    assert names["_Z5lightPfPKfi"] == "light(float*, float const*, int)"
    assert names["_Z5heavyIfLi16EEvPT_PKS0_i"] == "void heavy<float, 16>(float*, float const*, int)"
    assert names["plain_c"] == "plain_c"


def test_demangle_without_demangler(monkeypatch, tmp_path):
    _isolate_tools(monkeypatch, tmp_path)
    assert toolchain.find_demangler() is None
    assert toolchain.demangle(SYMBOLS) == {s: s for s in SYMBOLS}
    assert toolchain.demangle([]) == {}


def test_demangle_runs_one_process_and_falls_back(monkeypatch, tmp_path):
    bin_dir = tmp_path / "bin"
    log = tmp_path / "calls.log"
    _script(
        bin_dir / "c++filt",
        "import sys\n"
        f"open({str(log)!r}, 'a').write('call\\n')\n"
        "print('\\n'.join('readable' + a for a in sys.argv[1:]))\n",
    )
    _isolate_tools(monkeypatch, tmp_path, [bin_dir])
    assert toolchain.find_demangler() == str(bin_dir / "c++filt")
    names = toolchain.demangle(SYMBOLS + ["_Z1fv", "-rf", "_Z1fv"])
    assert names == {
        "_Z5lightPfPKfi": "readable_Z5lightPfPKfi",
        "_Z5heavyIfLi16EEvPT_PKS0_i": "readable_Z5heavyIfLi16EEvPT_PKS0_i",
        "_Z1fv": "readable_Z1fv",
        "plain_c": "plain_c",  # (not mangled: not passed)
        "-rf": "-rf",  # (not a symbol: never an option to the tool)
    }
    assert log.read_text() == "call\n"

    # cu++filt (the CUDA toolkit's) is preferred; output that does not line up is not used.
    _script(bin_dir / "cu++filt", "print('one line for all')\n")
    assert toolchain.find_demangler() == str(bin_dir / "cu++filt")
    assert toolchain.demangle(SYMBOLS) == {s: s for s in SYMBOLS}
    _script(bin_dir / "cu++filt", "import sys\nsys.exit(3)\n")
    assert toolchain.demangle(SYMBOLS) == {s: s for s in SYMBOLS}
    _script(bin_dir / "cu++filt", "import time\ntime.sleep(30)\n")
    assert toolchain.demangle(SYMBOLS, timeout=0.5) == {s: s for s in SYMBOLS}


# --- finding the tools ------------------------------------------------------------------------


def test_find_tool_order(monkeypatch, tmp_path):
    path_dir = tmp_path / "on_path"
    home = tmp_path / "cuda_home"
    cuda_path = tmp_path / "cuda_path"
    system = tmp_path / "system_cuda"
    nvidia = tmp_path / "site" / "nvidia"
    for d in (path_dir, home / "bin", cuda_path / "bin", system / "bin"):
        _script(d / "nvcc", "")
    _script(nvidia / "cuda_nvcc" / "bin" / "nvcc", "")
    _script(nvidia / "cu13" / "bin" / "nvcc", "")
    _isolate_tools(monkeypatch, tmp_path, [path_dir])
    monkeypatch.setenv("CUDA_HOME", str(home))
    monkeypatch.setenv("CUDA_PATH", str(cuda_path))
    monkeypatch.setattr(toolchain, "SYSTEM_CUDA", str(system))
    monkeypatch.setattr(toolchain, "nvidia_dirs", lambda: [str(nvidia)])

    assert toolchain.find_tool("nvcc") == str(path_dir / "nvcc")
    (path_dir / "nvcc").unlink()
    assert toolchain.find_tool("nvcc") == str(home / "bin" / "nvcc")
    monkeypatch.delenv("CUDA_HOME")
    assert toolchain.find_tool("nvcc") == str(cuda_path / "bin" / "nvcc")
    monkeypatch.delenv("CUDA_PATH")
    assert toolchain.find_tool("nvcc") == str(system / "bin" / "nvcc")
    (system / "bin" / "nvcc").chmod(0o644)  # (not executable: passed over)
    assert toolchain.find_tool("nvcc") == str(nvidia / "cu13" / "bin" / "nvcc")
    (nvidia / "cu13" / "bin" / "nvcc").unlink()
    assert toolchain.find_tool("nvcc") == str(nvidia / "cuda_nvcc" / "bin" / "nvcc")
    assert toolchain.find_tool("cuobjdump") is None
    with pytest.raises(toolchain.ToolchainMissing) as err:
        toolchain.require_tool("cuobjdump")
    assert err.value.tools == ("cuobjdump",)
    assert "cuobjdump not found" in str(err.value)


def test_nvidia_dirs_found_without_importing():
    code = (
        "import sys\n"
        "from kernlint.compile import toolchain\n"
        "dirs = toolchain.nvidia_dirs()\n"
        "print(len(dirs), all(d.endswith('nvidia') for d in dirs), 'nvidia' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split()
    assert out[1:] == ["True", "False"]
    if _nvcc() and toolchain._pip_root(_nvcc()):
        assert int(out[0]) >= 1


def test_nvcc_includes_by_layout(tmp_path):
    cu13 = tmp_path / "a" / "nvidia" / "cu13"
    _script(cu13 / "bin" / "nvcc", "")
    (cu13 / "include" / "cccl").mkdir(parents=True)
    assert toolchain.nvcc_includes(str(cu13 / "bin" / "nvcc")) == [str(cu13 / "include")]

    nv12 = tmp_path / "b" / "nvidia"
    _script(nv12 / "cuda_nvcc" / "bin" / "nvcc", "")
    for sub in ("cuda_nvcc", "cuda_runtime", "cuda_cccl"):
        (nv12 / sub / "include").mkdir(parents=True)
    assert toolchain.nvcc_includes(str(nv12 / "cuda_nvcc" / "bin" / "nvcc")) == [
        str(nv12 / sub / "include") for sub in ("cuda_nvcc", "cuda_runtime", "cuda_cccl")
    ]
    # A link to a pip nvcc (a venv's bin/) is followed to its wheel.
    os.symlink(cu13 / "bin" / "nvcc", tmp_path / "nvcc-link")
    assert toolchain.nvcc_includes(str(tmp_path / "nvcc-link")) == [str(cu13 / "include")]

    system = tmp_path / "opt" / "cuda"
    _script(system / "bin" / "nvcc", "")
    (system / "include").mkdir()
    assert toolchain.nvcc_includes(str(system / "bin" / "nvcc")) == []


def test_missing_message_is_one_line():
    msg = toolchain.missing_message("nvcc", "cuobjdump")
    assert "\n" not in msg
    assert msg.startswith("nvcc, cuobjdump not found (searched PATH, $CUDA_HOME/bin")
    assert "pip install 'kernlint[compile]'" in msg
    for pkg in (
        "nvidia-cuda-nvcc",
        "nvidia-cuda-runtime",
        "nvidia-cuda-cccl",
        "nvidia-cuda-cuobjdump",
    ):
        assert pkg in msg
