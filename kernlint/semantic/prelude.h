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

/* CCCL declares its `cuda::ptx` wrappers (which CUB's device code calls) only for the PTX ISA
   the CUDA compiler provides; outside nvcc that ISA is 0. Provide nvcc 13's (9.0) in place of
   CCCL's detection header, whose include guard is set here. */
#define __CCCL_PTX_ISA_H_
#define __cccl_ptx_isa 900ULL

#if __has_include(<vector_types.h>)
/* nvcc includes cuda_runtime.h in every CUDA translation unit. */
#include <cuda_runtime.h>
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
__device__ unsigned long long atomicExch(unsigned long long*, unsigned long long);
__device__ long long atomicMax(long long*, long long);
__device__ unsigned long long atomicMax(unsigned long long*, unsigned long long);
__device__ long long atomicMin(long long*, long long);
__device__ unsigned long long atomicMin(unsigned long long*, unsigned long long);
__device__ unsigned long long atomicOr(unsigned long long*, unsigned long long);
__device__ unsigned long long atomicAnd(unsigned long long*, unsigned long long);
__device__ unsigned long long atomicXor(unsigned long long*, unsigned long long);
__device__ float atomicMax(float*, float);
__device__ float atomicMin(float*, float);
__device__ unsigned long long __cvta_generic_to_shared(const void*);
__device__ unsigned long long __cvta_generic_to_global(const void*);
__device__ unsigned long long __cvta_generic_to_constant(const void*);
__device__ unsigned long long __cvta_generic_to_local(const void*);
__device__ void* __cvta_shared_to_generic(unsigned long long);
__device__ void* __cvta_global_to_generic(unsigned long long);
__device__ void* __cvta_constant_to_generic(unsigned long long);
__device__ void* __cvta_local_to_generic(unsigned long long);
__device__ void __barrier_sync(unsigned int);
__device__ void __barrier_sync_count(unsigned int, unsigned int);
__device__ unsigned int __reduce_add_sync(unsigned int, unsigned int);
__device__ int __reduce_add_sync(unsigned int, int);
__device__ unsigned int __reduce_min_sync(unsigned int, unsigned int);
__device__ int __reduce_min_sync(unsigned int, int);
__device__ unsigned int __reduce_max_sync(unsigned int, unsigned int);
__device__ int __reduce_max_sync(unsigned int, int);
__device__ unsigned int __reduce_and_sync(unsigned int, unsigned int);
__device__ unsigned int __reduce_or_sync(unsigned int, unsigned int);
__device__ unsigned int __reduce_xor_sync(unsigned int, unsigned int);
__device__ unsigned int __match_any_sync(unsigned int, unsigned int);
__device__ unsigned int __match_any_sync(unsigned int, unsigned long long);
__device__ int __dp4a(int, int, int);
__device__ unsigned int __dp4a(unsigned int, unsigned int, unsigned int);
__device__ int __dp2a_lo(int, int, int);
__device__ unsigned int __dp2a_lo(unsigned int, unsigned int, unsigned int);
__device__ int __dp2a_hi(int, int, int);
__device__ unsigned int __dp2a_hi(unsigned int, unsigned int, unsigned int);
#if __has_include(<vector_types.h>)
__device__ int __dp4a(char4, char4, int);
__device__ unsigned int __dp4a(uchar4, uchar4, unsigned int);
#endif

/* Half and bfloat16 arithmetic intrinsics: cuda_fp16.hpp / cuda_bf16.hpp declare them only for
   the device pass. One template each serves __half, __half2, __nv_bfloat16 and
   __nv_bfloat162 (a non-template declaration from the headers, where there is one, wins). */
#define KERNLINT_HALF_UNARY(name) template <class T> __device__ T name(T);
#define KERNLINT_HALF_BINARY(name) template <class T> __device__ T name(T, T);
#define KERNLINT_HALF_TERNARY(name) template <class T> __device__ T name(T, T, T);
#define KERNLINT_HALF_COMPARE(name) template <class T> __device__ bool name(T, T);
KERNLINT_HALF_BINARY(__hadd) KERNLINT_HALF_BINARY(__hsub) KERNLINT_HALF_BINARY(__hmul)
KERNLINT_HALF_BINARY(__hdiv) KERNLINT_HALF_BINARY(__hmax) KERNLINT_HALF_BINARY(__hmin)
KERNLINT_HALF_BINARY(__hadd_rn) KERNLINT_HALF_BINARY(__hsub_rn) KERNLINT_HALF_BINARY(__hmul_rn)
KERNLINT_HALF_BINARY(__hadd_sat) KERNLINT_HALF_BINARY(__hmul_sat) KERNLINT_HALF_BINARY(__hmax_nan)
KERNLINT_HALF_BINARY(__hmin_nan)
KERNLINT_HALF_BINARY(__hadd2) KERNLINT_HALF_BINARY(__hsub2) KERNLINT_HALF_BINARY(__hmul2)
KERNLINT_HALF_BINARY(__h2div) KERNLINT_HALF_BINARY(__hmax2) KERNLINT_HALF_BINARY(__hmin2)
KERNLINT_HALF_BINARY(__hadd2_rn) KERNLINT_HALF_BINARY(__hsub2_rn) KERNLINT_HALF_BINARY(__hmul2_rn)
KERNLINT_HALF_BINARY(__hadd2_sat) KERNLINT_HALF_BINARY(__hmul2_sat) KERNLINT_HALF_BINARY(__hmax2_nan)
KERNLINT_HALF_BINARY(__hmin2_nan)
KERNLINT_HALF_BINARY(__heq2) KERNLINT_HALF_BINARY(__hne2) KERNLINT_HALF_BINARY(__hlt2)
KERNLINT_HALF_BINARY(__hle2) KERNLINT_HALF_BINARY(__hgt2) KERNLINT_HALF_BINARY(__hge2)
KERNLINT_HALF_TERNARY(__hfma) KERNLINT_HALF_TERNARY(__hfma2) KERNLINT_HALF_TERNARY(__hfma_relu)
KERNLINT_HALF_TERNARY(__hfma2_relu) KERNLINT_HALF_TERNARY(__hfma_sat)
KERNLINT_HALF_TERNARY(__hfma2_sat)
KERNLINT_HALF_UNARY(__hneg) KERNLINT_HALF_UNARY(__hneg2) KERNLINT_HALF_UNARY(__habs)
KERNLINT_HALF_UNARY(__habs2) KERNLINT_HALF_UNARY(hexp) KERNLINT_HALF_UNARY(h2exp)
KERNLINT_HALF_UNARY(hexp2) KERNLINT_HALF_UNARY(h2exp2) KERNLINT_HALF_UNARY(hlog)
KERNLINT_HALF_UNARY(h2log) KERNLINT_HALF_UNARY(hsqrt) KERNLINT_HALF_UNARY(h2sqrt)
KERNLINT_HALF_UNARY(hrsqrt) KERNLINT_HALF_UNARY(h2rsqrt) KERNLINT_HALF_UNARY(hrcp)
KERNLINT_HALF_UNARY(h2rcp) KERNLINT_HALF_UNARY(htanh) KERNLINT_HALF_UNARY(h2tanh)
KERNLINT_HALF_COMPARE(__heq) KERNLINT_HALF_COMPARE(__hne) KERNLINT_HALF_COMPARE(__hlt)
KERNLINT_HALF_COMPARE(__hle) KERNLINT_HALF_COMPARE(__hgt) KERNLINT_HALF_COMPARE(__hge)
KERNLINT_HALF_COMPARE(__hbeq2) KERNLINT_HALF_COMPARE(__hblt2) KERNLINT_HALF_COMPARE(__hbgt2)
#undef KERNLINT_HALF_UNARY
#undef KERNLINT_HALF_BINARY
#undef KERNLINT_HALF_TERNARY
#undef KERNLINT_HALF_COMPARE

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

/* SIMD-in-a-word intrinsics: __vadd2, __vminu4, ... (two and four lanes per word). */
#define KERNLINT_SIMD_BINARY(name) \
  __device__ unsigned int __v##name##2(unsigned int, unsigned int); \
  __device__ unsigned int __v##name##4(unsigned int, unsigned int);
#define KERNLINT_SIMD_UNARY(name) \
  __device__ unsigned int __v##name##2(unsigned int); \
  __device__ unsigned int __v##name##4(unsigned int);
KERNLINT_SIMD_BINARY(adds) KERNLINT_SIMD_BINARY(addss) KERNLINT_SIMD_BINARY(addus)
KERNLINT_SIMD_BINARY(avgs) KERNLINT_SIMD_BINARY(avgu) KERNLINT_SIMD_BINARY(hadd)
KERNLINT_SIMD_BINARY(haddu) KERNLINT_SIMD_BINARY(cmpeq) KERNLINT_SIMD_BINARY(cmpges)
KERNLINT_SIMD_BINARY(cmpgeu) KERNLINT_SIMD_BINARY(cmpgts) KERNLINT_SIMD_BINARY(cmpgtu)
KERNLINT_SIMD_BINARY(cmples) KERNLINT_SIMD_BINARY(cmpleu) KERNLINT_SIMD_BINARY(cmplts)
KERNLINT_SIMD_BINARY(cmpltu) KERNLINT_SIMD_BINARY(cmpne) KERNLINT_SIMD_BINARY(absdiffs)
KERNLINT_SIMD_BINARY(absdiffu) KERNLINT_SIMD_BINARY(maxs) KERNLINT_SIMD_BINARY(maxu)
KERNLINT_SIMD_BINARY(mins) KERNLINT_SIMD_BINARY(minu) KERNLINT_SIMD_BINARY(seteq)
KERNLINT_SIMD_BINARY(setges) KERNLINT_SIMD_BINARY(setgeu) KERNLINT_SIMD_BINARY(setgts)
KERNLINT_SIMD_BINARY(setgtu) KERNLINT_SIMD_BINARY(setles) KERNLINT_SIMD_BINARY(setleu)
KERNLINT_SIMD_BINARY(setlts) KERNLINT_SIMD_BINARY(setltu) KERNLINT_SIMD_BINARY(setne)
KERNLINT_SIMD_BINARY(sads) KERNLINT_SIMD_BINARY(sadu) KERNLINT_SIMD_BINARY(sub)
KERNLINT_SIMD_BINARY(subss) KERNLINT_SIMD_BINARY(subus) KERNLINT_SIMD_BINARY(add)
KERNLINT_SIMD_UNARY(abs) KERNLINT_SIMD_UNARY(absss) KERNLINT_SIMD_UNARY(neg)
KERNLINT_SIMD_UNARY(negss)
#undef KERNLINT_SIMD_BINARY
#undef KERNLINT_SIMD_UNARY
/* Misc device intrinsics. */
[[noreturn]] void __trap();
void __brkpt();
int __isGlobal(const void*);
int __isShared(const void*);

/* nvcc's host pass: code guarded by `__CUDACC__`/`__NVCC__` (CUTLASS's device helpers, vendored
   libraries that refuse to build otherwise) is what nvcc compiles. The CUDA headers that change
   meaning under these macros are included above, before they are defined. */
#if __has_include(<cuda_fp16.h>)
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#endif
#define __CUDACC__ 1
#define __NVCC__ 1
#define __CUDACC_VER_MAJOR__ 13
#define __CUDACC_VER_MINOR__ 0
#define __CUDACC_VER_BUILD__ 0
