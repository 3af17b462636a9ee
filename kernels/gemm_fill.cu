// Device fill of GEMM operands with uniform random values, for gemm.<type> (see gemm_fill.cuh).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "ceilings/kernels/gemm_fill.cuh"

namespace ceilings::kernels {

namespace {

__device__ __forceinline__ std::uint64_t mix64(std::uint64_t x) {
  // splitmix64 finaliser: every output bit depends on every input bit.
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__device__ __forceinline__ std::uint32_t mix(std::uint64_t x) { return static_cast<std::uint32_t>(mix64(x) >> 32); }

// Uniform in (-1, 1): 23 random bits and a half step, (k + 1/2) / 2^22 - 1, every step exact in a float
// (with 24 bits, k + 1/2 would not fit a float's mantissa and k = 2^23 would round to exactly zero).
__device__ __forceinline__ float uniform_pm1(std::uint32_t h) {
  return (static_cast<float>(h >> 9) + 0.5f) * (1.0f / 4194304.0f) - 1.0f;
}

// Uniform in (-1, 1) with every one of the 52 mantissa bits random (a float's 24 bits would leave 29 of
// them zero: a low-entropy operand for DGEMM): a random sign and mantissa, in the binade [2^-e, 2^(1-e))
// with probability 2^-e (e = 1 + the leading zeros of a second random word), which is how the magnitude of
// a uniform variable falls. Never zero (e <= 64).
__device__ __forceinline__ double uniform_pm1_f64(std::uint64_t key) {
  const std::uint64_t r = mix64(key);
  const std::uint64_t e = 1 + static_cast<std::uint64_t>(__clzll(static_cast<long long>(mix64(r) | 1ull)));
  const std::uint64_t bits = (r & 0x8000000000000000ull) | ((1023 - e) << 52) | (r & 0x000fffffffffffffull);
  return __longlong_as_double(static_cast<long long>(bits));
}

template <class T>
__device__ __forceinline__ T convert(std::uint32_t h);
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
  // -127..-1 and 1..127, each equally likely: no zero operand.
  const int v = static_cast<int>(h % 254u);
  return static_cast<std::int8_t>(v < 127 ? v - 127 : v - 126);
}

// Element value from its key (seed and index): the narrow types from 32 hashed bits, fp64 from 64.
template <class T>
__device__ __forceinline__ T element(std::uint64_t key) {
  return convert<T>(mix(key));
}
template <>
__device__ __forceinline__ double element<double>(std::uint64_t key) {
  return uniform_pm1_f64(key);
}

template <class T>
__global__ void fill_kernel(T* dst, std::size_t count, std::uint32_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::uint64_t salt = static_cast<std::uint64_t>(seed) << 40;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    dst[i] = element<T>(salt ^ i);
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

cudaError_t kernel_image_status() {
  cudaFuncAttributes attributes{};
  return cudaFuncGetAttributes(&attributes, fill_kernel<float>);
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
