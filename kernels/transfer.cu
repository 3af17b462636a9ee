// SM copies, L2 and shared-memory reads, the pointer chase and the empty kernel (see transfer.cuh):
// the device side of pcie.*_sm, nvlink.*, l2.read, smem.read and latency.*.
#include "ceilings/kernels/hbm.cuh"
#include "ceilings/kernels/transfer.cuh"

#include "ceilings/kernels/block_sum.cuh"

#include <mutex>
#include <set>
#include <utility>

namespace ceilings::kernels {

namespace {

template <L2Load Load>
__device__ inline uint4 load_l2_only(const uint4* p) {
  uint4 r;
  if constexpr (Load == L2Load::kCoherent)
    asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  else
    asm volatile("ld.global.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
  return r;
}

constexpr int kL2Unroll = 4;

// Thread t of T reads vectors t, t + T, t + 2T, ...: a working set of k * T vectors gives every thread
// (and every SM) the same k loads per pass, whatever the block size, so no SM finishes early.
// At most 32 registers: two 1024-thread blocks per SM (full occupancy) must fit.
template <L2Load Load>
__global__ void __launch_bounds__(1024, 2)
    l2_read_kernel(const uint4* __restrict__ src, std::size_t n, int passes, std::uint32_t* sum) {
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::uint32_t acc = 0;
  for (int p = 0; p < passes; ++p) {
    for (std::size_t base = tid; base < n; base += threads * kL2Unroll) {
      uint4 v[kL2Unroll];
#pragma unroll
      for (int u = 0; u < kL2Unroll; ++u) {
        const std::size_t i = base + static_cast<std::size_t>(u) * threads;
        v[u] = i < n ? load_l2_only<Load>(src + i) : make_uint4(0, 0, 0, 0);
      }
#pragma unroll
      for (int u = 0; u < kL2Unroll; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;
    }
  }
  block_sum_add(acc, sum);
}

// The chunked L2 read (see transfer.cuh): block b reads `reads` whole chunks in turn, chunk b * reads mod
// `chunks` first, each with kL2ChunkLoads 16-byte loads per thread all in flight before the first add
// (48 registers of data: launch bounds of 512 x 2 leave each thread 64). Each block adds its sum into one of
// kL2SumSlots words 256 bytes apart, so the blocks' closing atomics do not queue on a single L2 line.
template <L2Load Load>
__global__ void __launch_bounds__(kL2ChunkThreads, 2)
    l2_read_chunks_kernel(const uint4* __restrict__ src, unsigned chunks, int reads, std::uint32_t* sums) {
  const std::size_t chunk_vectors = static_cast<std::size_t>(blockDim.x) * kL2ChunkLoads;
  unsigned c = static_cast<unsigned>((static_cast<unsigned long long>(blockIdx.x) * reads) % chunks);
  std::uint32_t acc = 0;
  for (int r = 0; r < reads; ++r) {
    const uint4* p = src + c * chunk_vectors + threadIdx.x;
    uint4 v[kL2ChunkLoads];
#pragma unroll
    for (int u = 0; u < kL2ChunkLoads; ++u) v[u] = load_l2_only<Load>(p + static_cast<std::size_t>(u) * blockDim.x);
#pragma unroll
    for (int u = 0; u < kL2ChunkLoads; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;
    if (++c == chunks) c = 0;
  }
  block_sum_add(acc, sums + (blockIdx.x % kL2SumSlots) * kL2SumStride);
}

__device__ inline uint4 load_shared(const uint4* p) {
  uint4 r;
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(p));
  asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "r"(addr));
  return r;
}

// At most 32 registers, so that 2048 threads per SM fit in any block size the bench uses.
__global__ void __launch_bounds__(1024, 2) smem_read_kernel(int reps, std::uint32_t seed, std::uint32_t* sum) {
  extern __shared__ uint4 buf[];
  const unsigned vectors = blockDim.x * kSmemVectorsPerThread;  // a power of two: the launcher checks
  const unsigned mask = vectors - 1;
  for (unsigned i = threadIdx.x; i < vectors; i += blockDim.x) {
    const unsigned w = i * 4;
    buf[i] = make_uint4(w * kPatternMul + seed, (w + 1) * kPatternMul + seed, (w + 2) * kPatternMul + seed,
                        (w + 3) * kPatternMul + seed);
  }
  __syncthreads();
  std::uint32_t acc = 0;
  // Each rep reads every vector exactly once, in an order rotated by the rep: the loads cannot be
  // hoisted out of the loop, and neighbouring lanes touch neighbouring 16 bytes (no bank conflicts).
  for (int r = 0; r < reps; ++r) {
    const unsigned first = threadIdx.x + static_cast<unsigned>(r) * 32u;
#pragma unroll
    for (int j = 0; j < kSmemVectorsPerThread; ++j) {
      const unsigned i = (first + j * blockDim.x) & mask;
      const uint4 v = load_shared(buf + i);
      acc += v.x + v.y + v.z + v.w;
    }
  }
  block_sum_add(acc, sum);
}

__global__ void write_chain_kernel(char* chain, const std::uint32_t* next, std::size_t slots,
                                   std::uint32_t stride_bytes) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < slots;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    *reinterpret_cast<std::uint64_t*>(chain + i * stride_bytes) =
        reinterpret_cast<std::uint64_t>(chain + static_cast<std::size_t>(next[i]) * stride_bytes);
}

// The L1 variant is a plain weak load (SASS LDG.E, cached in L1 by default on sm_70+). Not
// ld.global.ca: ptxas for sm_90 turns an explicit .ca into LDG.E.STRONG.SM, a CTA-scope strong
// load, which need not be served by the L1 the sweep is meant to show. .cg becomes
// LDG.E.STRONG.GPU: L2 is the point of coherence for it, so it never hits L1.
template <bool L1>
__global__ void chase_kernel(std::uint64_t* position, int loads) {
  std::uint64_t at = *position;
#pragma unroll 8
  for (int i = 0; i < loads; ++i) {
    if constexpr (L1)
      asm volatile("ld.global.u64 %0, [%0];" : "+l"(at));
    else
      asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(at));
  }
  *position = at;
}

// The count is a fire-and-forget reduction (REDG): a load-add-store would make every kernel wait one L2
// round trip for its own count, a cost no empty kernel has.
__global__ void empty(unsigned long long* launches) {
  if (launches) atomicAdd(launches, 1ull);
}

}  // namespace

void copy_sm(uint4* dst, const uint4* src, std::size_t vectors, int blocks, int threads, cudaStream_t stream,
             int hint) {
  // The HBM copy kernel with four 16-byte loads in flight per thread before any store: a PCIe or NVLink
  // read has a long round trip, and only bytes in flight hide it.
  hbm_copy(dst, src, vectors, StreamShape{blocks, threads, 4, hint}, stream);
}

void l2_read(const uint4* src, std::size_t vectors, int passes, std::uint32_t* sum, int blocks, int threads,
             cudaStream_t stream, L2Load load) {
  if (load == L2Load::kCoherent)
    l2_read_kernel<L2Load::kCoherent><<<blocks, threads, 0, stream>>>(src, vectors, passes, sum);
  else
    l2_read_kernel<L2Load::kNoL1Allocate><<<blocks, threads, 0, stream>>>(src, vectors, passes, sum);
}

void l2_read_chunks(const uint4* src, unsigned chunks, int reads, unsigned blocks, std::uint32_t* sums,
                    cudaStream_t stream, L2Load load) {
  if (chunks == 0 || reads < 1) {
    // Not a launch: surface it as a launch error, like any other bad configuration.
    l2_read_chunks_kernel<L2Load::kCoherent><<<0, 0, 0, stream>>>(src, 1, 1, sums);
    return;
  }
  if (load == L2Load::kCoherent)
    l2_read_chunks_kernel<L2Load::kCoherent><<<blocks, kL2ChunkThreads, 0, stream>>>(src, chunks, reads, sums);
  else
    l2_read_chunks_kernel<L2Load::kNoL1Allocate><<<blocks, kL2ChunkThreads, 0, stream>>>(src, chunks, reads, sums);
}

std::size_t smem_read_bytes_per_block(int threads) {
  return static_cast<std::size_t>(threads) * kSmemVectorsPerThread * sizeof(uint4);
}

void smem_read(int blocks, int threads, int reps, std::uint32_t seed, std::uint32_t* sum, cudaStream_t stream) {
  if (threads < 32 || threads > 1024 || (threads & (threads - 1)) != 0) {
    // Not a launch: surface it as a launch error, like any other bad configuration.
    smem_read_kernel<<<0, 0, 0, stream>>>(reps, seed, sum);
    return;
  }
  const std::size_t bytes = smem_read_bytes_per_block(threads);
  if (bytes > 48 * 1024) {
    // Once per device and size, not per launch (a launch may be queued behind a blocking kernel, where no
    // other CUDA call belongs); a refusal stays for the caller's launch check.
    static std::mutex mutex;
    static std::set<std::pair<int, std::size_t>> allowed;
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) return;
    const std::lock_guard<std::mutex> lock(mutex);
    if (!allowed.count({device, bytes})) {
      if (cudaFuncSetAttribute(smem_read_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)) !=
          cudaSuccess)
        return;
      allowed.insert({device, bytes});
    }
  }
  smem_read_kernel<<<blocks, threads, bytes, stream>>>(reps, seed, sum);
}

void write_chase_chain(void* chain, const std::uint32_t* next, std::size_t slots, std::uint32_t stride_bytes,
                       cudaStream_t stream) {
  write_chain_kernel<<<1024, 256, 0, stream>>>(static_cast<char*>(chain), next, slots, stride_bytes);
}

void pointer_chase(std::uint64_t* position, int loads, bool l1, cudaStream_t stream) {
  if (l1)
    chase_kernel<true><<<1, 1, 0, stream>>>(position, loads);
  else
    chase_kernel<false><<<1, 1, 0, stream>>>(position, loads);
}

void empty_kernel(unsigned long long* launches, cudaStream_t stream) { empty<<<1, 1, 0, stream>>>(launches); }

}  // namespace ceilings::kernels
