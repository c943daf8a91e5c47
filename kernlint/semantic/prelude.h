/* kernlint's CUDA prelude for the semantic pass. libclang parses each file as C++ (host
   side): the CUDA keywords become empty or plain attributes, and the builtin variables,
   intrinsics and launch API that CUDA code uses are declared here, so that types and
   declarations resolve without nvcc, clang's CUDA wrapper headers or a GPU. Only declarations:
   nothing is compiled. (`kernel<<<...>>>(...)` is not C++ and is reported as a parse problem;
   `raw-kernel-launch` asks for `host::LaunchKernel` there anyway.) */
#pragma once
#define __global__ __attribute__((annotate("kernlint:global")))
#define __device__
#define __host__
#define __shared__
#define __constant__
#define __managed__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __cluster_dims__(...)
#define __grid_constant__
#define __restrict__ __restrict
#define __align__(n) alignas(n)

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef __cplusplus
#include <tuple> /* nvcc's host pass brings it in through its own headers */
#endif

#if __has_include(<vector_types.h>)
#include <vector_types.h>
#include <driver_types.h>
/* The template overloads cuda_runtime.h only declares under nvcc (`__CUDACC__`). */
template <class T>
cudaError_t cudaFuncSetAttribute(T* entry, enum cudaFuncAttribute attr, int value);
template <class T>
cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes* attr, T* entry);
#else
/* No CUDA headers: the few types and functions kernels use. */
struct uint3 { unsigned int x, y, z; };
struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
};
typedef struct CUstream_st* cudaStream_t;
typedef int cudaError_t;
#endif
extern const uint3 threadIdx;
extern const uint3 blockIdx;
extern const dim3 blockDim;
extern const dim3 gridDim;
extern const int warpSize;
void __syncthreads();

/* CUDA device intrinsics (normally from clang's CUDA wrapper headers / libdevice). */
__device__ float __fmaf_rn(float, float, float);
__device__ float __fmaf_rz(float, float, float);
__device__ float __fmaf_ru(float, float, float);
__device__ float __fmaf_rd(float, float, float);
__device__ float __fmaf_ieee_rn(float, float, float);
__device__ float __fmaf_ieee_rz(float, float, float);
__device__ float __fmaf_ieee_ru(float, float, float);
__device__ float __fmaf_ieee_rd(float, float, float);
__device__ float __fadd_rn(float, float);
__device__ float __fadd_rz(float, float);
__device__ float __fadd_ru(float, float);
__device__ float __fadd_rd(float, float);
__device__ float __fsub_rn(float, float);
__device__ float __fsub_rz(float, float);
__device__ float __fsub_ru(float, float);
__device__ float __fsub_rd(float, float);
__device__ float __fmul_rn(float, float);
__device__ float __fmul_rz(float, float);
__device__ float __fmul_ru(float, float);
__device__ float __fmul_rd(float, float);
__device__ float __fdiv_rn(float, float);
__device__ float __fdiv_rz(float, float);
__device__ float __fdiv_ru(float, float);
__device__ float __fdiv_rd(float, float);
__device__ float __fdividef(float, float);
__device__ float __powf(float, float);
__device__ float fdividef(float, float);
__device__ float __frcp_rn(float);
__device__ float __frcp_rz(float);
__device__ float __frcp_ru(float);
__device__ float __frcp_rd(float);
__device__ float __fsqrt_rn(float);
__device__ float __fsqrt_rz(float);
__device__ float __fsqrt_ru(float);
__device__ float __fsqrt_rd(float);
__device__ float __frsqrt_rn(float);
__device__ float __expf(float);
__device__ float __exp10f(float);
__device__ float __logf(float);
__device__ float __log2f(float);
__device__ float __log10f(float);
__device__ float __sinf(float);
__device__ float __cosf(float);
__device__ float __tanf(float);
__device__ float __saturatef(float);
__device__ float __tanhf(float);
__device__ float exp2f(float);
__device__ float rsqrtf(float);
__device__ double __fma_rn(double, double, double);
__device__ double __fma_rz(double, double, double);
__device__ double __fma_ru(double, double, double);
__device__ double __fma_rd(double, double, double);
__device__ double __dadd_rn(double, double);
__device__ double __dadd_rz(double, double);
__device__ double __dadd_ru(double, double);
__device__ double __dadd_rd(double, double);
__device__ double __dsub_rn(double, double);
__device__ double __dsub_rz(double, double);
__device__ double __dsub_ru(double, double);
__device__ double __dsub_rd(double, double);
__device__ double __dmul_rn(double, double);
__device__ double __dmul_rz(double, double);
__device__ double __dmul_ru(double, double);
__device__ double __dmul_rd(double, double);
__device__ double __ddiv_rn(double, double);
__device__ double __ddiv_rz(double, double);
__device__ double __ddiv_ru(double, double);
__device__ double __ddiv_rd(double, double);
__device__ double __drcp_rn(double);
__device__ double __drcp_rz(double);
__device__ double __drcp_ru(double);
__device__ double __drcp_rd(double);
__device__ double __dsqrt_rn(double);
__device__ double __dsqrt_rz(double);
__device__ double __dsqrt_ru(double);
__device__ double __dsqrt_rd(double);
__device__ int __float2int_rn(float);
__device__ unsigned int __float2uint_rn(float);
__device__ float __int2float_rn(int);
__device__ float __uint2float_rn(unsigned int);
__device__ long long __float2ll_rn(float);
__device__ unsigned long long __float2ull_rn(float);
__device__ float __ll2float_rn(long long);
__device__ float __ull2float_rn(unsigned long long);
__device__ float __double2float_rn(double);
__device__ int __double2int_rn(double);
__device__ unsigned int __double2uint_rn(double);
__device__ long long __double2ll_rn(double);
__device__ unsigned long long __double2ull_rn(double);
__device__ double __ll2double_rn(long long);
__device__ double __ull2double_rn(unsigned long long);
__device__ int __float2int_rz(float);
__device__ unsigned int __float2uint_rz(float);
__device__ float __int2float_rz(int);
__device__ float __uint2float_rz(unsigned int);
__device__ long long __float2ll_rz(float);
__device__ unsigned long long __float2ull_rz(float);
__device__ float __ll2float_rz(long long);
__device__ float __ull2float_rz(unsigned long long);
__device__ float __double2float_rz(double);
__device__ int __double2int_rz(double);
__device__ unsigned int __double2uint_rz(double);
__device__ long long __double2ll_rz(double);
__device__ unsigned long long __double2ull_rz(double);
__device__ double __ll2double_rz(long long);
__device__ double __ull2double_rz(unsigned long long);
__device__ int __float2int_ru(float);
__device__ unsigned int __float2uint_ru(float);
__device__ float __int2float_ru(int);
__device__ float __uint2float_ru(unsigned int);
__device__ long long __float2ll_ru(float);
__device__ unsigned long long __float2ull_ru(float);
__device__ float __ll2float_ru(long long);
__device__ float __ull2float_ru(unsigned long long);
__device__ float __double2float_ru(double);
__device__ int __double2int_ru(double);
__device__ unsigned int __double2uint_ru(double);
__device__ long long __double2ll_ru(double);
__device__ unsigned long long __double2ull_ru(double);
__device__ double __ll2double_ru(long long);
__device__ double __ull2double_ru(unsigned long long);
__device__ int __float2int_rd(float);
__device__ unsigned int __float2uint_rd(float);
__device__ float __int2float_rd(int);
__device__ float __uint2float_rd(unsigned int);
__device__ long long __float2ll_rd(float);
__device__ unsigned long long __float2ull_rd(float);
__device__ float __ll2float_rd(long long);
__device__ float __ull2float_rd(unsigned long long);
__device__ float __double2float_rd(double);
__device__ int __double2int_rd(double);
__device__ unsigned int __double2uint_rd(double);
__device__ long long __double2ll_rd(double);
__device__ unsigned long long __double2ull_rd(double);
__device__ double __ll2double_rd(long long);
__device__ double __ull2double_rd(unsigned long long);
__device__ int __float_as_int(float);
__device__ float __int_as_float(int);
__device__ unsigned int __float_as_uint(float);
__device__ float __uint_as_float(unsigned int);
__device__ long long __double_as_longlong(double);
__device__ double __longlong_as_double(long long);
__device__ int __double2hiint(double);
__device__ int __double2loint(double);
__device__ double __hiloint2double(int, int);
__device__ int __popc(unsigned int);
__device__ int __popcll(unsigned long long);
__device__ int __clz(int);
__device__ int __clzll(long long);
__device__ int __ffs(int);
__device__ int __ffsll(long long);
__device__ unsigned int __brev(unsigned int);
__device__ unsigned long long __brevll(unsigned long long);
__device__ unsigned int __byte_perm(unsigned int, unsigned int, unsigned int);
__device__ int __mulhi(int, int);
__device__ unsigned int __umulhi(unsigned int, unsigned int);
__device__ long long __mul64hi(long long, long long);
__device__ unsigned long long __umul64hi(unsigned long long, unsigned long long);
__device__ unsigned int __funnelshift_l(unsigned int, unsigned int, unsigned int);
__device__ unsigned int __funnelshift_r(unsigned int, unsigned int, unsigned int);
__device__ unsigned int __activemask();
__device__ unsigned int __ballot_sync(unsigned int, int);
__device__ int __any_sync(unsigned int, int);
__device__ int __all_sync(unsigned int, int);
__device__ void __syncwarp(unsigned int = 0xffffffffu);
__device__ void __threadfence();
__device__ void __threadfence_block();
__device__ void __threadfence_system();
__device__ void __nanosleep(unsigned int);
__device__ long long clock64();
__device__ int __syncthreads_count(int);
__device__ int __syncthreads_and(int);
__device__ int __syncthreads_or(int);
template <typename T> __device__ T __shfl_sync(unsigned int, T, int, int = 32);
template <typename T> __device__ T __shfl_xor_sync(unsigned int, T, int, int = 32);
template <typename T> __device__ T __shfl_up_sync(unsigned int, T, unsigned int, int = 32);
template <typename T> __device__ T __shfl_down_sync(unsigned int, T, unsigned int, int = 32);
template <typename T> __device__ T __ldg(const T*);
template <typename T> __device__ T __ldcs(const T*);
template <typename T> __device__ T __ldcg(const T*);
template <typename T> __device__ T __ldca(const T*);
template <typename T> __device__ T __ldlu(const T*);
template <typename T> __device__ T __ldcv(const T*);
template <typename T> __device__ void __stcs(T*, T);
template <typename T> __device__ void __stcg(T*, T);
template <typename T> __device__ void __stwb(T*, T);
template <typename T> __device__ void __stwt(T*, T);
__device__ int atomicAdd(int*, int);
__device__ unsigned int atomicAdd(unsigned int*, unsigned int);
__device__ unsigned long long atomicAdd(unsigned long long*, unsigned long long);
__device__ float atomicAdd(float*, float);
__device__ double atomicAdd(double*, double);
__device__ int atomicCAS(int*, int, int);
__device__ unsigned int atomicCAS(unsigned int*, unsigned int, unsigned int);
__device__ unsigned long long atomicCAS(unsigned long long*, unsigned long long, unsigned long long);
__device__ unsigned short atomicCAS(unsigned short*, unsigned short, unsigned short);
__device__ int atomicMax(int*, int);
__device__ unsigned int atomicMax(unsigned int*, unsigned int);
__device__ int atomicMin(int*, int);
__device__ unsigned int atomicMin(unsigned int*, unsigned int);
__device__ int atomicExch(int*, int);
__device__ unsigned int atomicExch(unsigned int*, unsigned int);
__device__ float atomicExch(float*, float);
__device__ int atomicSub(int*, int);
__device__ unsigned int atomicSub(unsigned int*, unsigned int);
__device__ int atomicOr(int*, int);
__device__ unsigned int atomicOr(unsigned int*, unsigned int);
__device__ int atomicAnd(int*, int);
__device__ unsigned int atomicAnd(unsigned int*, unsigned int);
__device__ int atomicXor(int*, int);
__device__ unsigned int atomicXor(unsigned int*, unsigned int);
__device__ unsigned int atomicInc(unsigned int*, unsigned int);
__device__ unsigned int atomicDec(unsigned int*, unsigned int);
__device__ unsigned int __cvta_generic_to_shared(const void*);

/* CUDA's global integer/float max and min overloads. */
int max(int, int);
int min(int, int);
unsigned int max(unsigned int, unsigned int);
unsigned int min(unsigned int, unsigned int);
long max(long, long);
long min(long, long);
unsigned long max(unsigned long, unsigned long);
unsigned long min(unsigned long, unsigned long);
long long max(long long, long long);
long long min(long long, long long);
unsigned long long max(unsigned long long, unsigned long long);
unsigned long long min(unsigned long long, unsigned long long);
float max(float, float);
float min(float, float);
double max(double, double);
double min(double, double);
unsigned int max(int, unsigned int);
unsigned int max(unsigned int, int);
unsigned int min(int, unsigned int);
unsigned int min(unsigned int, int);
long long max(long long, int);
long long min(long long, int);
long long max(int, long long);
long long min(int, long long);
float max(float, int);
float min(float, int);
double max(double, float);
double max(float, double);
double min(double, float);
double min(float, double);

/* SIMD-in-a-word and misc device intrinsics. */
unsigned int __vsubss4(unsigned int, unsigned int);
unsigned int __vaddss4(unsigned int, unsigned int);
unsigned int __vmaxs4(unsigned int, unsigned int);
unsigned int __vmins4(unsigned int, unsigned int);
unsigned int __vabsdiffs4(unsigned int, unsigned int);
unsigned int __vsub4(unsigned int, unsigned int);
unsigned int __vadd4(unsigned int, unsigned int);
unsigned int __vsubss2(unsigned int, unsigned int);
unsigned int __vaddss2(unsigned int, unsigned int);
[[noreturn]] void __trap();
void __brkpt();
int __isGlobal(const void*);
int __isShared(const void*);
