// Any CUDA project under the generic preset: no namespace, no launch wrapper and no pointer
// convention is assumed; suppressions are still checked.
#include <cstdint>

constexpr int kBlock = 256;

__global__ void scale(float* out, float* in, int32_t n) {
  if (threadIdx.x < n) out[threadIdx.x] = in[threadIdx.x] * 2.0f;
}

// kernlint: ignore-next-line[XX999]  kernlint-expect: KL002
void launch(float* out, float* in, int32_t n) { scale<<<1, kBlock>>>(out, in, n); }
