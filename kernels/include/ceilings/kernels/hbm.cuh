// HBM streaming kernels (read, write, copy, triad) over 16-byte vectors, and the kernels that
// fill and verify their buffers. Feeds hbm.read, hbm.write, hbm.copy, hbm.triad.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace ceilings::kernels {

// Launch shape of a streaming kernel: a grid sized from the SM count, threads per block, and how
// many 16-byte accesses each thread has in flight per loop trip.
struct StreamShape {
  int blocks = 0;
  int threads = 256;
  int unroll = 4;   // 1, 2, 4 or 8
  int hint = 1;     // load/store cache hint: 0 default, 1 streaming (evict-first), 2 L2 256B prefetch
};
bool valid_stream_shape(const StreamShape& s);

enum class StreamOp { kRead, kWrite, kCopy, kTriad };
// Blocks of `shape.threads` threads of the op's kernel instance (shape.unroll, shape.hint) that one
// SM holds at once; 0 when the shape is invalid or the instance cannot launch at that block size;
// -1 when the CUDA query failed. A grid of SMs x this is exactly one wave: more blocks per SM would
// run as later waves.
int stream_resident_blocks_per_sm(StreamOp op, const StreamShape& shape);

// The pattern every buffer holds: 32-bit word w has value w * kPatternMul + seed (mod 2^32), plus
// floor(w / 2^32) * kPatternHighMul, so that past 16 GiB (an H200 holds 141 GB) a copy whose index wrapped at 2^32
// words does not write the pattern again (review 81); below it, the high part is 0.
constexpr std::uint32_t kPatternMul = 2654435761u;
constexpr std::uint32_t kPatternHighMul = 0x85EBCA77u;
// Host closed form of the sum of words [0, words) of the pattern, mod 2^32.
std::uint32_t pattern_sum(std::size_t words, std::uint32_t seed);
// The triad's float inputs come from the pattern: 1 + (u >> 9) * 2^-23, exactly representable.

void fill_pattern(uint4* dst, std::size_t vectors, std::uint32_t seed, cudaStream_t stream);
// The triad's inputs: the pattern read as floats.
void fill_pattern_floats(float4* dst, std::size_t vectors, std::uint32_t seed, cudaStream_t stream);
// Sets vectors 0, stride, 2 stride, ... and the last one of dst to `word` in each of their four 32-bit words (one
// launch, a thread a vector, whatever the size): the per-sample poison of a benchmark's output.
void poison_strided(uint4* dst, std::size_t vectors, std::size_t stride_vectors, std::uint32_t word,
                    cudaStream_t stream);

void hbm_read(const uint4* src, std::size_t vectors, std::uint32_t* sum, const StreamShape& shape, cudaStream_t stream);
void hbm_write(uint4* dst, std::size_t vectors, std::uint32_t seed, const StreamShape& shape, cudaStream_t stream);
void hbm_copy(uint4* dst, const uint4* src, std::size_t vectors, const StreamShape& shape, cudaStream_t stream);
// a = b + scalar * c, with b and c holding patterns (seed_b, seed_c) read as floats.
void hbm_triad(float4* a, const float4* b, const float4* c, float scalar, std::size_t vectors, const StreamShape& shape,
               cudaStream_t stream);

// The copy through the TMA unit (cp.async.bulk, compute capability 9.0+): each block stages the array in
// chunks of `chunk_bytes` through `stages` shared-memory buffers, one thread issuing bulk loads (global to
// shared, completing on an mbarrier) up to stages - 1 chunks ahead of the bulk stores (shared to global) it
// issues as each load lands, so no register ever holds the data. The chunks go to the blocks in turn.
struct BulkCopyShape {
  int blocks = 0;
  int chunk_bytes = 16384;  // a multiple of 16, at least 16
  int stages = 4;           // 2 to kMaxBulkStages; stages * chunk_bytes at most kMaxBulkSharedBytes
};
constexpr int kMaxBulkStages = 8;
constexpr int kMaxBulkSharedBytes = 200 * 1024;  // of the 227 KiB a Hopper block may have
bool valid_bulk_copy_shape(const BulkCopyShape& s);
// Blocks of the shape one SM holds at once (shared memory decides it); 0 where it cannot launch (more shared
// memory than a block may have, or a binary without sm_90 code, where the kernel is empty), -1 where the
// query failed.
int bulk_copy_resident_blocks_per_sm(const BulkCopyShape& s);
// Launches the copy (the caller checks the device's compute capability: on an older one the kernel has no
// body). A wait for a load that has not landed within 5 s gives up and adds 1 to *stalls (a fault to report,
// instead of a kernel that never ends); *stalls must be zeroed by the caller.
void hbm_copy_bulk(uint4* dst, const uint4* src, std::size_t vectors, const BulkCopyShape& shape, unsigned int* stalls,
                   cudaStream_t stream);

// Verification: counts the words that differ from the expected value into *mismatches (added).
void count_pattern_mismatches(const uint4* buf, std::size_t vectors, std::uint32_t seed,
                              unsigned long long* mismatches, cudaStream_t stream);
void count_triad_mismatches(const float4* a, std::size_t vectors, std::uint32_t seed_b, std::uint32_t seed_c,
                            float scalar, unsigned long long* mismatches, cudaStream_t stream);

}  // namespace ceilings::kernels
