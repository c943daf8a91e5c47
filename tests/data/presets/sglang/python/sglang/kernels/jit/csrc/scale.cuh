// A JIT source under the sglang preset: the SGLang guide's conventions apply.
#pragma once

#include <cstdint>

constexpr int kBlock = 256;  // kernlint-expect: CU002

namespace sglang {

__global__ void scale(float* out, const float* in, int32_t n) {  // kernlint-expect: CU003@23, CU003@35
  if (threadIdx.x < n) out[threadIdx.x] = in[threadIdx.x] * 2.0f;
}

void launch(float* out, const float* in, int32_t n) {
  scale<<<1, kBlock>>>(out, in, n);  // kernlint-expect: CU006
}

}  // namespace sglang
