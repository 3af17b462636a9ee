// Kernels for the transfer, cache and latency families: SM copies over PCIe/NVLink (pcie.*_sm,
// nvlink.* SM variants), L2 and shared-memory reads (l2.read, smem.read), the dependent pointer
// chase (latency.l2, latency.hbm) and the empty kernel (latency.launch, latency.graph_launch).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace ceilings::kernels {

// dst[i] = src[i] for 16-byte vectors, by SMs; either side may be mapped host memory or a peer's
// memory, so this is how an SM copy drives PCIe or NVLink. `blocks` x `threads` threads.
void copy_sm(uint4* dst, const uint4* src, std::size_t vectors, int blocks, int threads, cudaStream_t stream);

// Reads `vectors` 16-byte words `passes` times with L2-only loads (ld.global.cg: L1 never hits) and
// adds every 32-bit word into *sum (wraps mod 2^32). A buffer holding the pattern of hbm.cuh adds
// passes * pattern_sum(vectors * 4, seed) per launch.
void l2_read(const uint4* src, std::size_t vectors, int passes, std::uint32_t* sum, int blocks, int threads,
             cudaStream_t stream);

// Each block fills `threads * 4` 16-byte words of shared memory with the pattern (seed), then reads
// all of them `reps` times (a rotated order, 16-byte conflict-free loads), adding every word into
// *sum. threads: a power of two (32..1024). Per launch: blocks * reps * pattern_sum(threads * 16, seed).
void smem_read(int blocks, int threads, int reps, std::uint32_t seed, std::uint32_t* sum, cudaStream_t stream);
constexpr int kSmemVectorsPerThread = 4;
std::size_t smem_read_bytes_per_block(int threads);

// Pointer chase: slot i of the chain lives at word i * stride_words of `chain` and holds the word
// offset of the next slot. write_chase_chain lays out `next` (slot indices) that way.
void write_chase_chain(std::uint32_t* chain, const std::uint32_t* next, std::size_t slots, std::uint32_t stride_words,
                       cudaStream_t stream);
// One thread follows `loads` dependent loads starting from the word offset in *position and stores
// where it ended back there (so launches continue the walk). l1 = true: loads may hit L1 (plain
// ld.global, SASS LDG.E); false: L2 and beyond only (ld.global.cg, SASS LDG.E.STRONG.GPU).
// Word offsets are 32-bit: the chain must stay below 16 GiB.
void pointer_chase(const std::uint32_t* chain, std::uint32_t* position, int loads, bool l1, cudaStream_t stream);

// A kernel that does (almost) nothing: what a launch costs. One thread adds 1 to *launches (when not
// null), so a caller can check that every launch ran; kernels of one stream run in order.
void empty_kernel(unsigned long long* launches, cudaStream_t stream);

}  // namespace ceilings::kernels
