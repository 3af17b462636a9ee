// Device fill of GEMM operands with uniform random values, for gemm.<type> (see gemm_fill.cuh).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "ceilings/kernels/gemm_fill.cuh"

namespace ceilings::kernels {

namespace {

__device__ __forceinline__ std::uint32_t mix(std::uint64_t x) {
  // splitmix64 finaliser: every output bit depends on every input bit.
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return static_cast<std::uint32_t>(x >> 32);
}

// Uniform in [-1, 1) with 24 random bits; never exactly zero after the half-step offset.
__device__ __forceinline__ float uniform_pm1(std::uint32_t h) {
  return (static_cast<float>(h >> 8) + 0.5f) * (2.0f / 16777216.0f) - 1.0f;
}

template <class T>
__device__ __forceinline__ T convert(std::uint32_t h);
template <>
__device__ __forceinline__ double convert<double>(std::uint32_t h) {
  return static_cast<double>(uniform_pm1(h));
}
template <>
__device__ __forceinline__ float convert<float>(std::uint32_t h) {
  return uniform_pm1(h);
}
template <>
__device__ __forceinline__ __nv_bfloat16 convert<__nv_bfloat16>(std::uint32_t h) {
  return __float2bfloat16_rn(uniform_pm1(h));
}
template <>
__device__ __forceinline__ __half convert<__half>(std::uint32_t h) {
  return __float2half_rn(uniform_pm1(h));
}
template <>
__device__ __forceinline__ __nv_fp8_e4m3 convert<__nv_fp8_e4m3>(std::uint32_t h) {
  return __nv_fp8_e4m3(uniform_pm1(h));
}
template <>
__device__ __forceinline__ __nv_fp8_e5m2 convert<__nv_fp8_e5m2>(std::uint32_t h) {
  return __nv_fp8_e5m2(uniform_pm1(h));
}
template <>
__device__ __forceinline__ std::int8_t convert<std::int8_t>(std::uint32_t h) {
  return static_cast<std::int8_t>(static_cast<int>(h % 255u) - 127);
}

template <class T>
__global__ void fill_kernel(T* dst, std::size_t count, std::uint32_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::uint64_t salt = static_cast<std::uint64_t>(seed) << 40;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    dst[i] = convert<T>(mix(salt ^ i));
}

template <class T>
void launch(void* dst, std::size_t count, std::uint32_t seed, cudaStream_t stream) {
  if (count == 0) return;
  const int threads = 256;
  const std::size_t want = (count + threads - 1) / threads;
  const int blocks = static_cast<int>(want < 65536 ? want : 65536);
  fill_kernel<T><<<blocks, threads, 0, stream>>>(static_cast<T*>(dst), count, seed);
}

}  // namespace

int fill_type_bytes(FillType type) {
  switch (type) {
    case FillType::kF64: return 8;
    case FillType::kF32: return 4;
    case FillType::kBf16:
    case FillType::kF16: return 2;
    case FillType::kE4m3:
    case FillType::kE5m2:
    case FillType::kI8: return 1;
  }
  return 0;
}

void fill_uniform(void* dst, std::size_t count, FillType type, std::uint32_t seed, cudaStream_t stream) {
  switch (type) {
    case FillType::kF64: launch<double>(dst, count, seed, stream); break;
    case FillType::kF32: launch<float>(dst, count, seed, stream); break;
    case FillType::kBf16: launch<__nv_bfloat16>(dst, count, seed, stream); break;
    case FillType::kF16: launch<__half>(dst, count, seed, stream); break;
    case FillType::kE4m3: launch<__nv_fp8_e4m3>(dst, count, seed, stream); break;
    case FillType::kE5m2: launch<__nv_fp8_e5m2>(dst, count, seed, stream); break;
    case FillType::kI8: launch<std::int8_t>(dst, count, seed, stream); break;
  }
}

}  // namespace ceilings::kernels
