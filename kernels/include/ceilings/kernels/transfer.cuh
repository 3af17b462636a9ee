// Kernels for the transfer, cache and latency families: SM copies over PCIe/NVLink (pcie.*_sm,
// nvlink.* SM variants), L2 and shared-memory reads (l2.read, smem.read), the dependent pointer
// chase (latency.l2, latency.hbm) and the empty kernel (latency.launch, latency.graph_launch).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace ceilings::kernels {

// dst[i] = src[i] for 16-byte vectors, by SMs; either side may be mapped host memory or a peer's
// memory, so this is how an SM copy drives PCIe or NVLink. `blocks` x `threads` threads; `hint` as
// StreamShape's: 1 streaming (evict-first) loads and stores, 2 loads that allocate no L1 line and ask
// the L2 for 256-byte blocks (with streaming stores).
void copy_sm(uint4* dst, const uint4* src, std::size_t vectors, int blocks, int threads, cudaStream_t stream,
             int hint = 1);

// Reads `vectors` 16-byte words `passes` times with loads that L1 never serves and adds every 32-bit word
// into *sum (wraps mod 2^32). A buffer holding the pattern of hbm.cuh adds passes * pattern_sum(vectors * 4,
// seed) per launch. Two kinds of load: ld.global.cg (SASS LDG.E.128.STRONG.GPU: L2 is its point of
// coherence) and ld.global.L1::no_allocate (LDG.E.NA.128: a weak load that allocates no L1 line).
enum class L2Load { kCoherent, kNoL1Allocate };
void l2_read(const uint4* src, std::size_t vectors, int passes, std::uint32_t* sum, int blocks, int threads,
             cudaStream_t stream, L2Load load = L2Load::kCoherent);

// The same reads in the shape of gpu-benches' L2 sweep: many short blocks, each summing whole chunks of
// the working set, instead of one persistent wave. The working set is `chunks` chunks of l2_chunk_vectors()
// 16-byte words; each of `blocks` blocks of kL2ChunkThreads threads reads `reads` consecutive chunks
// (wrapping), every thread kL2ChunkLoads loads of each at once. With blocks * reads a multiple of `chunks`,
// every word is read blocks * reads / chunks times, and the pattern adds that many pattern_sum(chunks *
// l2_chunk_vectors() * 4, seed) per launch, spread over the kL2SumSlots words sums[i * kL2SumStride]
// (their sum, mod 2^32, is the total).
constexpr int kL2ChunkThreads = 512;
constexpr int kL2ChunkLoads = 12;
constexpr int kL2SumSlots = 32;
constexpr int kL2SumStride = 64;  // words: 256 bytes between slots
constexpr std::size_t l2_chunk_vectors() { return static_cast<std::size_t>(kL2ChunkThreads) * kL2ChunkLoads; }
void l2_read_chunks(const uint4* src, unsigned chunks, int reads, unsigned blocks, std::uint32_t* sums,
                    cudaStream_t stream, L2Load load = L2Load::kCoherent);

// Each block fills `threads * 4` 16-byte words of shared memory with the pattern (seed), then reads
// all of them `reps` times (a rotated order, 16-byte conflict-free loads), adding every word into
// *sum. threads: a power of two (32..1024). Per launch: blocks * reps * pattern_sum(threads * 16, seed).
void smem_read(int blocks, int threads, int reps, std::uint32_t seed, std::uint32_t* sum, cudaStream_t stream);
constexpr int kSmemVectorsPerThread = 4;
std::size_t smem_read_bytes_per_block(int threads);

// Pointer chase: slot i of the chain lives at byte i * stride_bytes of `chain` and holds the address of
// slot next[i] (write_chase_chain lays `next`, slot indices, out that way). Addresses, not offsets: a hop
// is one load with no address arithmetic in the dependent chain (an offset costs an IMAD.WIDE per hop,
// ~15% of an L1 hit).
void write_chase_chain(void* chain, const std::uint32_t* next, std::size_t slots, std::uint32_t stride_bytes,
                       cudaStream_t stream);
// One thread follows `loads` dependent loads starting from the slot address in *position and stores
// where it ended back there (so launches continue the walk). l1 = true: loads may hit L1 (plain
// ld.global, SASS LDG.E.64); false: L2 and beyond only (ld.global.cg, SASS LDG.E.64.STRONG.GPU).
void pointer_chase(std::uint64_t* position, int loads, bool l1, cudaStream_t stream);
// The position of slot `slot` (what *position starts as), and the slot a position stands for.
inline std::uint64_t chase_address(const void* chain, std::size_t slot, std::uint32_t stride_bytes) {
  return reinterpret_cast<std::uint64_t>(chain) + slot * stride_bytes;
}
inline std::size_t chase_slot(std::uint64_t position, const void* chain, std::uint32_t stride_bytes) {
  return static_cast<std::size_t>((position - reinterpret_cast<std::uint64_t>(chain)) / stride_bytes);
}

// A kernel that does (almost) nothing: what a launch costs. One thread adds 1 to *launches (when not
// null), so a caller can check that every launch ran; kernels of one stream run in order.
void empty_kernel(unsigned long long* launches, cudaStream_t stream);

}  // namespace ceilings::kernels
