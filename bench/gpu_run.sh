#!/usr/bin/env bash
# GPU checks for the reference kernels, as run on the device machine (H200, torch + triton +
# nvcc preinstalled, no package registry). Wheels and the SGLang JIT headers come from .gpu/
# (gitignored; see docs/benchmarks.md for how to fill it), results go to $OUT.
#
#   bash bench/gpu_run.sh [tests|bench|all]
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/gpu-out}"
mkdir -p "$OUT"
what="${1:-all}"
python -m pip install -q --no-index --find-links .gpu/wheels apache-tvm-ffi pytest 2>&1 | tail -2 || true
export KERNLINT_SGLANG_DIR="$PWD/.gpu/sglang"
export TRITON_DEFAULT_FP_FUSION=1
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  nvcc --version | tail -1
} | tee "$OUT/device.txt"
if [[ "$what" == tests || "$what" == all ]]; then
  python -m pytest -p no:cacheprovider -m gpu tests/test_reference_gpu.py -q -o addopts="" \
    2>&1 | tee "$OUT/gpu_tests.txt" | tail -5
fi
if [[ "$what" == bench || "$what" == all ]]; then
  python bench/reference_kernels.py --out "$OUT" 2>&1 | tee "$OUT/bench.txt" | tail -32
fi
