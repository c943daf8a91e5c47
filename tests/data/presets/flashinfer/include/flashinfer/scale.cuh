// A FlashInfer header under the flashinfer preset: code lives in `namespace flashinfer`; raw
// launches are FlashInfer's style (checked once per launcher: the preset leaves them alone).
#pragma once

#include <cstdint>

constexpr int kBlock = 256;  // kernlint-expect: CU002

namespace tensorrt_llm {
constexpr int kPorted = 1;  // (a vendored library's namespace: allowed)
}  // namespace tensorrt_llm

namespace flashinfer {

__global__ void scale(float* __restrict__ out, const float* __restrict__ in, int32_t n) {
  if (threadIdx.x < n) out[threadIdx.x] = in[threadIdx.x] * 2.0f;
}

inline cudaError_t launch(float* out, const float* in, int32_t n, cudaStream_t stream) {
  scale<<<1, kBlock, 0, stream>>>(out, in, n);
  return cudaGetLastError();
}

inline void launch_unchecked(float* out, const float* in, int32_t n, cudaStream_t stream) {
  scale<<<1, kBlock, 0, stream>>>(out, in, n);
}

}  // namespace flashinfer
