// CUDA-core FMA peaks: fma.fp32 (FFMA), fma.fp64 (DFMA), fma.fp16 (HFMA2 on half2), fma.bf16 (HFMA2.BF16_V2 on
// bfloat162). Independent chains per thread, results stored and checked against a closed form.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace ceilings::kernels {

enum class FmaType { kFp32, kFp64, kHalf2, kBf162 };

// Independent accumulator chains per thread and FMAs per chain per loop trip (fully unrolled). The unroll
// is odd so that an odd trip count makes an odd step count, which the half2/bf162 check needs (below).
constexpr int kFmaChains = 8;
constexpr int kFmaUnroll = 63;

// FLOPs of one launch: threads * chains * trips * unroll FMAs, 2 FLOPs each (4 per packed half2/bf162 FMA).
double fma_flops(FmaType type, std::size_t threads, int trips);

// Each thread runs kFmaChains chains of x = fma(x, a, b), trips * kFmaUnroll times, and stores every
// chain's final value to out[thread * kFmaChains + chain] (packed types: one 32-bit word per chain).
// a and b are the same for every chain and arrive as kernel arguments of the chain's type, so the compiler
// cannot fold the chains, and most FMAs read just their chain's register (a and b come from the operand
// reuse cache or a uniform register; for half2/bf162 ptxas then splits the FMAs between HFMA2 and
// HFMA2.MMA, two pipes: see fma.cu).
// fp32/fp64 use a = 1 and b = 2^-10, so x_n = x_0 + n*b exactly (the count is checked); half2/bf162 use
// a = -1 and b = 1.125, so x alternates between x_0 and b - x_0 exactly (b != 2 x_0 for every chain):
// only the parity of the step count is checked there, so callers run an odd number of trips, and a launch
// that did no FMAs at all (x still x_0) fails the check. To tell 1 trip from 3, each half2/bf162 thread also
// counts its trips in a float and stores it at ((float*)(out + threads * kFmaChains words))[thread]: `out`
// holds fma_output_bytes(type, blocks * threads).
void fma_peak(FmaType type, void* out, int blocks, int threads, int trips, cudaStream_t stream);

// Bytes of `out` for a launch of `threads` threads in all: the chains' values (4 bytes each, 8 for fp64) and,
// for half2/bf162, one float trip count per thread.
std::size_t fma_output_bytes(FmaType type, std::size_t threads);
// Values count_fma_mismatches checks for `threads` threads: every chain, and each packed thread's trip count.
std::size_t fma_checked_values(FmaType type, std::size_t threads);

// Counts the stored values (chains, and the packed types' trip counts) that differ from the closed form
// (added to *mismatches).
void count_fma_mismatches(FmaType type, const void* out, std::size_t threads, int trips,
                          unsigned long long* mismatches, cudaStream_t stream);

// Blocks of `threads` that fit on one SM at once (the grid is this times the SM count: one full wave, no
// tail of a partial second wave); 0 when the runtime cannot say.
int fma_blocks_per_sm(FmaType type, int threads);

// A safe cap on trips: the fp32 closed form (x_0 + n*b within 24 bits) stays exact well beyond it.
int fma_max_trips(FmaType type);

}  // namespace ceilings::kernels
