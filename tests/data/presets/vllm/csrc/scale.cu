// A vLLM kernel under the vllm preset: ops are registered with PyTorch's dispatcher
// (torch_bindings.cpp), whose schema `int` is int64_t.
#include <cstdint>

#include <torch/all.h>

namespace vllm {

__global__ void scale_kernel(float* out, const float* __restrict__ in, int64_t n) {  // kernlint-expect: CU003@30
  if (threadIdx.x < n) out[threadIdx.x] = in[threadIdx.x] * 2.0f;
}

}  // namespace vllm

void scale(torch::Tensor& out, const torch::Tensor& in, int n) {  // kernlint-expect: CU005@57
  vllm::scale_kernel<<<1, 256>>>(out.data_ptr<float>(), in.data_ptr<float>(), out.numel());
}
