"""Build the reference CUDA kernel without a system CUDA: pip's `nvidia-cuda-nvcc`,
`nvidia-cuda-runtime`, `nvidia-cuda-cccl`, `apache-tvm-ffi`, and the SGLang JIT headers from
the `sglang==0.5.23` wheel (downloaded at run time, only `kernels/jit/include` unpacked).

Used by the test suite (compile for sm_90, read the ptxas report) and by the GPU scripts
(`bench/reference_kernels.py`), which also build a loadable module.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REFERENCE = os.path.join(ROOT, "fixtures", "reference")
CUDA_SOURCE = os.path.join(REFERENCE, "cuda", "fused_add_rmsnorm.cuh")
SGLANG_VERSION = "0.5.23"
DTYPES = {"bf16": "bf16_t", "fp16": "fp16_t"}

_INCLUDES = """\
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>
#include "fused_add_rmsnorm.cuh"
"""

WRAPPER = (
    _INCLUDES
    + """\
namespace sglang {
TVM_FFI_DLL_EXPORT_TYPED_FUNC(fused_add_rmsnorm_bf16, (FusedAddRMSNormKernel<bf16_t>::run));
TVM_FFI_DLL_EXPORT_TYPED_FUNC(fused_add_rmsnorm_fp16, (FusedAddRMSNormKernel<fp16_t>::run));
}  // namespace sglang
"""
)

_INSTANTIATION = """\
template <int64_t kVecsPerThread, bool kPrefetch, bool kTwoPass>
void instantiation(tvm::ffi::TensorView out, tvm::ffi::TensorView residual, tvm::ffi::TensorView x,
                   tvm::ffi::TensorView weight, double eps) {
  FusedAddRMSNormKernel<bf16_t>::launch<8, kVecsPerThread, kPrefetch, kTwoPass>(
      out, residual, x, weight, x.size(0), x.size(1), static_cast<float>(eps), false, x.device());
}
"""


def instantiations_wrapper(variants: dict[str, tuple[int, bool, bool]], extra: str = "") -> str:
    """C++ for a module that exports explicit bf16 instantiations of the launcher, each called
    as (out, residual, x, weight, eps): `variants` maps an export name to (16-byte vectors per
    thread, prefetch, two-pass); `extra` is more code inside `namespace sglang`."""
    exports = "".join(
        f"TVM_FFI_DLL_EXPORT_TYPED_FUNC({name}, "
        f"(instantiation<{v}, {str(p).lower()}, {str(t).lower()}>));\n"
        for name, (v, p, t) in variants.items()
    )
    return (
        _INCLUDES
        + "namespace sglang {\n"
        + extra
        + _INSTANTIATION
        + exports
        + "}  // namespace sglang\n"
    )


class ToolchainMissing(RuntimeError):
    pass


def nvcc_path() -> tuple[str, list[str]]:
    """(nvcc, extra include dirs): pip's CUDA toolchain first, then one on PATH."""
    try:
        import nvidia  # namespace package of the nvidia-cuda-* wheels

        for base in getattr(nvidia, "__path__", []):
            for sub in ("cu13", "cuda_nvcc", "cu12"):
                cand = os.path.join(base, sub, "bin", "nvcc")
                if os.path.exists(cand):
                    root = os.path.dirname(os.path.dirname(cand))
                    return cand, [os.path.join(root, "include")]
    except ImportError:
        pass
    found = shutil.which("nvcc")
    if found:
        return found, []
    raise ToolchainMissing("no nvcc: pip install nvidia-cuda-nvcc nvidia-cuda-runtime")


def tvm_ffi_paths() -> tuple[list[str], str]:
    """(include dirs, directory of libtvm_ffi.so)."""
    try:
        import tvm_ffi.libinfo as info
    except ImportError as exc:
        raise ToolchainMissing("apache-tvm-ffi is not installed") from exc
    includes = [info.find_include_path(), info.find_dlpack_include_path()]
    return list(dict.fromkeys(includes)), os.path.dirname(info.find_libtvm_ffi())


def sglang_include(cache_dir: str | None = None) -> str:
    """`kernels/jit/include` of the SGLang wheel (KERNLINT_SGLANG_DIR reuses an unpacked one)."""
    given = os.environ.get("KERNLINT_SGLANG_DIR")
    if given:
        path = os.path.join(given, "kernels", "jit", "include")
        if os.path.isdir(path):
            return path
    cache_dir = cache_dir or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "kernlint"
    )
    target = os.path.join(cache_dir, f"sglang-{SGLANG_VERSION}-jit-include")
    marker = os.path.join(target, "sgl_kernel", "utils.cuh")
    if os.path.exists(marker):
        return target
    wheel_dir = os.path.join(cache_dir, "wheels")
    os.makedirs(wheel_dir, exist_ok=True)
    wheels = glob.glob(os.path.join(wheel_dir, f"sglang-{SGLANG_VERSION}-*.whl"))
    if not wheels:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", f"sglang=={SGLANG_VERSION}", "--no-deps"]
            + ["--only-binary=:all:", "-q", "-d", wheel_dir],
            check=True,
            capture_output=True,
            timeout=600,
        )
        wheels = glob.glob(os.path.join(wheel_dir, f"sglang-{SGLANG_VERSION}-*.whl"))
    prefix = "sglang/kernels/jit/include/"
    tmp = target + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    with zipfile.ZipFile(wheels[0]) as zf:
        for name in zf.namelist():
            if name.startswith(prefix) and not name.endswith("/"):
                dest = os.path.join(tmp, name[len(prefix) :])
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                with zf.open(name) as src, open(dest, "wb") as out:
                    shutil.copyfileobj(src, out)
    shutil.rmtree(target, ignore_errors=True)
    os.replace(tmp, target)
    return target


def nvcc_command(
    arch: int,
    out_dir: str,
    shared: bool,
    sglang_inc: str,
    wrapper_text: str = WRAPPER,
    name: str = "fused_add_rmsnorm",
) -> list[str]:
    nvcc, cuda_includes = nvcc_path()
    ffi_includes, ffi_lib = tvm_ffi_paths()
    wrapper = os.path.join(out_dir, f"{name}_ffi.cu")
    with open(wrapper, "w") as fh:
        fh.write(wrapper_text)
    cmd = [
        nvcc,
        f"-DSGL_CUDA_ARCH={arch * 10}",
        "-std=c++20",
        "-O3",
        "--expt-relaxed-constexpr",
        f"-gencode=arch=compute_{arch},code=sm_{arch}",
        "-Xptxas",
        "-v",
        "-Xcompiler",
        "-fPIC",
        "-I" + os.path.dirname(CUDA_SOURCE),
        "-I" + sglang_inc,
    ]
    cmd += ["-I" + p for p in ffi_includes + cuda_includes]
    if shared:
        cmd += ["-shared", wrapper, "-o", os.path.join(out_dir, f"{name}.so")]
        cmd += ["-L" + ffi_lib, "-ltvm_ffi", f"-Xlinker=-rpath={ffi_lib}"]
    else:
        cmd += ["-c", wrapper, "-o", os.path.join(out_dir, f"{name}.o")]
    return cmd


def compile_reference(
    arch: int,
    out_dir: str,
    shared: bool = False,
    wrapper_text: str = WRAPPER,
    name: str = "fused_add_rmsnorm",
) -> str:
    """Compile for sm_<arch>; returns nvcc's output (the ptxas report). Raises on failure."""
    os.makedirs(out_dir, exist_ok=True)
    cmd = nvcc_command(arch, out_dir, shared, sglang_include(), wrapper_text, name)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(f"nvcc failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return proc.stdout + proc.stderr


_ENTRY = re.compile(r"Compiling entry function '([^']+)' for 'sm_(\d+)'")
_SPILL = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_REGS = re.compile(r"Used (\d+) registers")


def ptxas_report(text: str) -> dict[str, dict[str, int]]:
    """{mangled kernel: {registers, stack, spill_stores, spill_loads}} from `-Xptxas -v`."""
    out: dict[str, dict[str, int]] = {}
    current = None
    for line in text.splitlines():
        m = _ENTRY.search(line)
        if m:
            current = m.group(1)
            out[current] = {}
            continue
        if current is None:
            continue
        m = _SPILL.search(line)
        if m:
            out[current].update(
                stack=int(m.group(1)), spill_stores=int(m.group(2)), spill_loads=int(m.group(3))
            )
        m = _REGS.search(line)
        if m:
            out[current]["registers"] = int(m.group(1))
    return out
