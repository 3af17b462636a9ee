// CUDA-core FMA peak kernels for fma.fp32, fma.fp64, fma.fp16 (half2) and fma.bf16 (bfloat162).
// SASS (sm_90): the inner loops compile to FFMA / DFMA / HFMA2 / HFMA2.BF16_V2 (tests/sass/check_sass.sh counts them).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "ceilings/kernels/fma.cuh"

namespace ceilings::kernels {

namespace {

// Per-chain start values: multiples of 1/8 below 4, exact in every type (bf16 has 8 mantissa bits).
__host__ __device__ __forceinline__ float start_value(std::size_t thread, int chain) {
  return 0.5f * static_cast<float>(chain) + 0.125f * static_cast<float>(thread % 4);
}
// One multiplier and one addend for every chain, kernel arguments of the chain's own type (so the compiler
// cannot fold the chains, and converts nothing): most FMAs then read only their chain's register from the
// register file, with a and b from the operand reuse cache or a uniform register (sm_90 SASS: FFMA Rx, Rx,
// Ra.reuse, Rb.reuse; DFMA Rx, Rx, URa, Rb.reuse). For the packed types this decides the pipe: with a and b
// whole half2/bfloat162 registers ptxas issues half of the FMAs as HFMA2.MMA, which runs beside HFMA2 on
// another pipe; with both packed into one register as halves (a float argument converted in the kernel:
// HFMA2 Rx, Rx, Rab.H0_H0, Rab.H1_H1) every FMA was a plain HFMA2, and the H200 ran them at the FFMA rate
// (66.8 TFLOP/s, 2026-11-30), half the packed peak.
// fp32/fp64: a = 1, b = 2^-10, so after n steps x = x0 + n b exactly. Packed: a = -1, b = 1.125, so
// x alternates between x0 and b - x0; 2 x0 is a multiple of 1/4 and b is not, so the two always differ.
constexpr float kGrowth = 1.0f / 1024.0f;
constexpr float kAddend = 1.125f;

template <class T>
struct Ops;
template <>
struct Ops<float> {
  using V = float;
  static __host__ __device__ V make(float v) { return v; }
  static __device__ V fma(V x, V a, V b) { return __fmaf_rn(x, a, b); }
};
template <>
struct Ops<double> {
  using V = double;
  static __host__ __device__ V make(float v) { return v; }
  static __device__ V fma(V x, V a, V b) { return __fma_rn(x, a, b); }
};
template <>
struct Ops<__half2> {
  using V = __half2;
  static __host__ __device__ V make(float v) { return __float2half2_rn(v); }
  static __device__ V fma(V x, V a, V b) { return __hfma2(x, a, b); }
};
template <>
struct Ops<__nv_bfloat162> {
  using V = __nv_bfloat162;
  static __host__ __device__ V make(float v) { return __float2bfloat162_rn(v); }
  static __device__ V fma(V x, V a, V b) { return __hfma2(x, a, b); }
};

template <class T>
constexpr bool kPacked = sizeof(T) == 4 && !std::is_same<T, float>::value;

// The packed chains only alternate, so their values tell an odd step count from an even one and no more: each
// thread also counts its trips in a float (one FADD per trip of 504 FMAs; `one` is an argument, so the
// compiler cannot fold the loop into a product) and stores the count after the chains (fma.cuh: layout).
template <class T>
__global__ void fma_kernel(T* out, T a, T b, int trips, float one) {
  using O = Ops<T>;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  T x[kFmaChains];
#pragma unroll
  for (int c = 0; c < kFmaChains; ++c) x[c] = O::make(start_value(tid, c));
  float counted = 0.0f;
  // One trip per iteration: unrolled further (nvcc does so for half2/bf162) the loop body outgrows the
  // instruction cache it must stay in to issue an FMA every cycle.
#pragma unroll 1
  for (int t = 0; t < trips; ++t) {
#pragma unroll
    for (int u = 0; u < kFmaUnroll; ++u) {
#pragma unroll
      for (int c = 0; c < kFmaChains; ++c) x[c] = O::fma(x[c], a, b);
    }
    if constexpr (kPacked<T>) counted = __fadd_rn(counted, one);
  }
#pragma unroll
  for (int c = 0; c < kFmaChains; ++c) out[tid * kFmaChains + c] = x[c];
  if constexpr (kPacked<T>) {
    const std::size_t total = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    reinterpret_cast<float*>(out + total * kFmaChains)[tid] = counted;
  }
}

__device__ bool matches(float got, double want) { return static_cast<double>(got) == want; }
__device__ bool matches(double got, double want) { return got == want; }
__device__ bool matches(__half2 got, double want) {
  return static_cast<double>(__low2float(got)) == want && static_cast<double>(__high2float(got)) == want;
}
__device__ bool matches(__nv_bfloat162 got, double want) {
  return static_cast<double>(__low2float(got)) == want && static_cast<double>(__high2float(got)) == want;
}

template <class T>
__global__ void check_kernel(const T* out, std::size_t threads, long long steps, int grows,
                             unsigned long long* mismatches) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned long long bad = 0;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < threads * kFmaChains;
       i += stride) {
    const std::size_t tid = i / kFmaChains;
    const int c = static_cast<int>(i % kFmaChains);
    const double x0 = start_value(tid, c);
    const double want = grows ? x0 + static_cast<double>(steps) * kGrowth : (steps % 2 ? kAddend - x0 : x0);
    if (!matches(out[i], want)) ++bad;
  }
  if constexpr (kPacked<T>) {  // and every thread's trip count
    const float* counted = reinterpret_cast<const float*>(out + threads * kFmaChains);
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < threads; i += stride)
      if (static_cast<double>(counted[i]) * kFmaUnroll != static_cast<double>(steps)) ++bad;
  }
  if (bad) atomicAdd(mismatches, bad);
}

template <class T>
void launch(void* out, int blocks, int threads, int trips, bool grows, cudaStream_t s) {
  fma_kernel<T><<<blocks, threads, 0, s>>>(static_cast<T*>(out), Ops<T>::make(grows ? 1.0f : -1.0f),
                                           Ops<T>::make(grows ? kGrowth : kAddend), trips, 1.0f);
}

template <class T>
void check(const void* out, std::size_t threads, int trips, bool grows, unsigned long long* mismatches,
           cudaStream_t s) {
  const long long steps = static_cast<long long>(trips) * kFmaUnroll;
  check_kernel<T><<<1024, 256, 0, s>>>(static_cast<const T*>(out), threads, steps, grows ? 1 : 0, mismatches);
}

}  // namespace

namespace {
bool packed(FmaType type) { return type == FmaType::kHalf2 || type == FmaType::kBf162; }
}  // namespace

std::size_t fma_output_bytes(FmaType type, std::size_t threads) {
  const std::size_t per_chain = type == FmaType::kFp64 ? 8 : 4;
  return threads * (kFmaChains * per_chain + (packed(type) ? sizeof(float) : 0));
}

std::size_t fma_checked_values(FmaType type, std::size_t threads) {
  return threads * (kFmaChains + (packed(type) ? 1 : 0));
}

double fma_flops(FmaType type, std::size_t threads, int trips) {
  const double fmas = static_cast<double>(threads) * kFmaChains * static_cast<double>(trips) * kFmaUnroll;
  return fmas * (packed(type) ? 4.0 : 2.0);
}

template <class T>
int resident_blocks(int threads) {
  int blocks = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fma_kernel<T>, threads, 0) != cudaSuccess) return 0;
  return blocks;
}

int fma_blocks_per_sm(FmaType type, int threads) {
  switch (type) {
    case FmaType::kFp32: return resident_blocks<float>(threads);
    case FmaType::kFp64: return resident_blocks<double>(threads);
    case FmaType::kHalf2: return resident_blocks<__half2>(threads);
    case FmaType::kBf162: return resident_blocks<__nv_bfloat162>(threads);
  }
  return 0;
}

int fma_max_trips(FmaType type) {
  // A safe cap, not the limit. fp32: x0 + n 2^-10 needs a 2^-10 resolution, which a 24-bit significand keeps
  // below 2^14 (x0 < 4): exact up to about 2^24 steps. 2^20 steps leaves room to spare and is far above the
  // ~30k steps of a 2 ms launch. fp64 (53 bits) and the alternating packed chains are exact at any count.
  if (type == FmaType::kFp32) return (1 << 20) / kFmaUnroll;
  return 1 << 24;
}

void fma_peak(FmaType type, void* out, int blocks, int threads, int trips, cudaStream_t stream) {
  switch (type) {
    case FmaType::kFp32: launch<float>(out, blocks, threads, trips, true, stream); break;
    case FmaType::kFp64: launch<double>(out, blocks, threads, trips, true, stream); break;
    case FmaType::kHalf2: launch<__half2>(out, blocks, threads, trips, false, stream); break;
    case FmaType::kBf162: launch<__nv_bfloat162>(out, blocks, threads, trips, false, stream); break;
  }
}

void count_fma_mismatches(FmaType type, const void* out, std::size_t threads, int trips,
                          unsigned long long* mismatches, cudaStream_t stream) {
  switch (type) {
    case FmaType::kFp32: check<float>(out, threads, trips, true, mismatches, stream); break;
    case FmaType::kFp64: check<double>(out, threads, trips, true, mismatches, stream); break;
    case FmaType::kHalf2: check<__half2>(out, threads, trips, false, mismatches, stream); break;
    case FmaType::kBf162: check<__nv_bfloat162>(out, threads, trips, false, mismatches, stream); break;
  }
}

}  // namespace ceilings::kernels
