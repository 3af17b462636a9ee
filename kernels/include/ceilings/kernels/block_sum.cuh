// Device helper shared by the read kernels (hbm.read, l2.read, smem.read): adds every thread's
// 32-bit partial sum of a block into *sum. Unsigned addition wraps, so the total is exact mod 2^32
// in any order and checks every word read against its closed form.
#pragma once
#include <cstdint>

namespace ceilings::kernels {

__device__ inline void block_sum_add(std::uint32_t acc, std::uint32_t* sum) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
  __shared__ std::uint32_t warp_sums[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();  // the caller's own shared-memory reads are done before warp_sums is written
  if (lane == 0) warp_sums[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = lane < static_cast<int>((blockDim.x + 31) / 32) ? warp_sums[lane] : 0;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
    if (lane == 0) atomicAdd(sum, acc);
  }
}

}  // namespace ceilings::kernels
