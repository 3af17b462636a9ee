// HBM streaming kernels: 16-byte accesses, a grid sized from the SM count, several accesses in
// flight per thread and cache hints that keep streamed data from displacing anything. Feeds hbm.*.
#include "ceilings/kernels/hbm.cuh"

#include <algorithm>
#include <mutex>
#include <set>

#include "ceilings/kernels/block_sum.cuh"

namespace ceilings::kernels {

namespace {

__host__ __device__ inline std::uint32_t pattern_word(std::size_t word, std::uint32_t seed) {
  return static_cast<std::uint32_t>(word) * kPatternMul + seed +
         static_cast<std::uint32_t>(word >> 32) * kPatternHighMul;
}

__device__ inline uint4 pattern_vector(std::size_t vec, std::uint32_t seed) {
  const std::size_t w = vec * 4;
  return make_uint4(pattern_word(w, seed), pattern_word(w + 1, seed), pattern_word(w + 2, seed),
                    pattern_word(w + 3, seed));
}

__device__ inline float pattern_float(std::uint32_t u) { return 1.0f + static_cast<float>(u >> 9) * 0x1p-23f; }

__device__ inline float4 pattern_float4(std::size_t vec, std::uint32_t seed) {
  const uint4 u = pattern_vector(vec, seed);
  return make_float4(pattern_float(u.x), pattern_float(u.y), pattern_float(u.z), pattern_float(u.w));
}

// Every load is a weak, coherent one: a non-coherent (.nc, LDG.CONSTANT) load cannot alias a store, so
// ptxas is free to move the copy kernel's stores up between its loads (LDG STG LDG LDG ... for unroll 4),
// and each early store then stalls the warp until its load returns: fewer bytes in flight.
template <int Hint, class T>
__device__ inline T load(const T* p) {
  static_assert(sizeof(T) == 16, "16-byte vectors only");
  uint4 r;
  if constexpr (Hint == 1) {
    asm volatile("ld.global.cs.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  } else if constexpr (Hint == 2) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800  // the L2 prefetch size: PTX for sm_80 and newer
    asm volatile("ld.global.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
#else
    asm volatile("ld.global.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
#endif
  } else {
    asm volatile("ld.global.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  }
  return *reinterpret_cast<T*>(&r);
}

template <int Hint, class T>
__device__ inline void store(T* p, const T& v) {
  if constexpr (Hint == 0) {
    *p = v;
  } else {
    __stcs(p, v);
  }
}

__device__ inline std::uint32_t lane_sum(const uint4& v) { return v.x + v.y + v.z + v.w; }

template <int Unroll, int Hint>
__global__ void read_kernel(const uint4* __restrict__ src, std::size_t n, std::uint32_t* __restrict__ sum) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x * Unroll;
  std::uint32_t acc = 0;
  for (std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x * Unroll + threadIdx.x; base < n;
       base += stride) {
    uint4 v[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      const std::size_t i = base + static_cast<std::size_t>(u) * blockDim.x;
      v[u] = i < n ? load<Hint>(src + i) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < Unroll; ++u) acc += lane_sum(v[u]);
  }
  block_sum_add(acc, sum);
}

template <int Unroll, int Hint>
__global__ void write_kernel(uint4* __restrict__ dst, std::size_t n, std::uint32_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x * Unroll;
  for (std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x * Unroll + threadIdx.x; base < n;
       base += stride) {
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      const std::size_t i = base + static_cast<std::size_t>(u) * blockDim.x;
      if (i < n) store<Hint>(dst + i, pattern_vector(i, seed));
    }
  }
}

template <int Unroll, int Hint>
__global__ void copy_kernel(uint4* __restrict__ dst, const uint4* __restrict__ src, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x * Unroll;
  for (std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x * Unroll + threadIdx.x; base < n;
       base += stride) {
    uint4 v[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      const std::size_t i = base + static_cast<std::size_t>(u) * blockDim.x;
      if (i < n) v[u] = load<Hint>(src + i);
    }
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      const std::size_t i = base + static_cast<std::size_t>(u) * blockDim.x;
      if (i < n) store<Hint>(dst + i, v[u]);
    }
  }
}

template <int Unroll, int Hint>
__global__ void triad_kernel(float4* __restrict__ a, const float4* __restrict__ b, const float4* __restrict__ c,
                             float s, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x * Unroll;
  for (std::size_t base = static_cast<std::size_t>(blockIdx.x) * blockDim.x * Unroll + threadIdx.x; base < n;
       base += stride) {
    float4 vb[Unroll], vc[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      const std::size_t i = base + static_cast<std::size_t>(u) * blockDim.x;
      if (i < n) {
        vb[u] = load<Hint>(b + i);
        vc[u] = load<Hint>(c + i);
      }
    }
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      const std::size_t i = base + static_cast<std::size_t>(u) * blockDim.x;
      if (i < n)
        store<Hint>(a + i, make_float4(__fmaf_rn(s, vc[u].x, vb[u].x), __fmaf_rn(s, vc[u].y, vb[u].y),
                                       __fmaf_rn(s, vc[u].z, vb[u].z), __fmaf_rn(s, vc[u].w, vb[u].w)));
    }
  }
}

// The TMA copy (see hbm_copy_bulk). Thread 0 of each block does everything; the block's other threads, if
// any, leave at once. The block's chunks go through the stages in turn; each stage's mbarrier completes once
// per chunk it receives (arrival count 1: the expect_tx arrive, plus the load's bytes), so the parity to wait
// for flips with every use. Stages and offsets advance by counting (no 64-bit division per chunk).
__global__ void copy_bulk_kernel(uint4* __restrict__ dst, const uint4* __restrict__ src, std::size_t total_bytes,
                                 int chunk_bytes, int stages, unsigned int* stalls) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) unsigned char staged[];
  __shared__ __align__(8) unsigned long long barrier[kMaxBulkStages];
  if (threadIdx.x != 0) return;
  const std::size_t chunk = static_cast<std::size_t>(chunk_bytes);
  const std::size_t chunks = (total_bytes + chunk - 1) / chunk;
  const std::size_t first = blockIdx.x, stride = gridDim.x;
  const std::size_t mine = first < chunks ? (chunks - first + stride - 1) / stride : 0;
  if (mine == 0) return;
  const auto smem = [](const void* p) { return static_cast<std::uint32_t>(__cvta_generic_to_shared(p)); };
  for (int s = 0; s < stages; ++s) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&barrier[s])));
  // The inits (generic proxy) before the bulk loads (async proxy) complete transactions on them.
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");

  const std::size_t step = stride * chunk;  // from one of this block's chunks to its next
  const auto size_at = [&](std::size_t off) {
    return static_cast<std::uint32_t>(total_bytes - off < chunk ? total_bytes - off : chunk);
  };
  const auto next_stage = [&](int s) { return s + 1 == stages ? 0 : s + 1; };
  std::size_t load_off = first * chunk, store_off = first * chunk, loaded = 0;
  int load_stage = 0, store_stage = 0;
  std::uint32_t parity = 0;    // bit s: the parity of stage s's next completion
  std::uint32_t inflight = 0;  // bit s: a load into stage s not yet seen to land
  const auto load = [&] {
    const std::uint32_t bar = smem(&barrier[load_stage]), n = size_at(load_off);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(n) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(smem(staged + static_cast<std::size_t>(load_stage) * chunk)),
                 "l"(reinterpret_cast<const unsigned char*>(src) + load_off), "r"(n), "r"(bar)
                 : "memory");
    inflight |= 1u << load_stage;
    load_off += step;
    load_stage = next_stage(load_stage);
    ++loaded;
  };
  // Bounded: a load that never lands (a fault) ends the kernel with a count instead of hanging the process.
  const auto landed = [&](int s) {
    const std::uint32_t bar = smem(&barrier[s]), want = (parity >> s) & 1u;
    unsigned long long t0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (true) {
      std::uint32_t done;
      asm volatile(
          "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
          : "=r"(done)
          : "r"(bar), "r"(want)
          : "memory");
      if (done) {
        parity ^= 1u << s;
        inflight &= ~(1u << s);
        return true;
      }
      unsigned long long t;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
      if (t - t0 > 5000000000ull) return false;
    }
  };

  const std::size_t ahead = static_cast<std::size_t>(stages - 1);
  while (loaded < ahead && loaded < mine) load();
  for (std::size_t j = 0; j < mine; ++j) {
    if (!landed(store_stage)) {
      atomicAdd(stalls, 1u);
      // No block may leave with bulk loads still writing its shared memory and barriers (the next block on
      // this SM would get them): wait for every one in flight, and where one never lands, abort the kernel.
      for (int s = 0; s < stages; ++s)
        if (((inflight >> s) & 1u) && !landed(s)) __trap();
      break;
    }
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(
                     reinterpret_cast<unsigned char*>(dst) + store_off),
                 "r"(smem(staged + static_cast<std::size_t>(store_stage) * chunk)), "r"(size_at(store_off))
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    store_off += step;
    store_stage = next_stage(store_stage);
    // The next load goes to the stage the previous chunk's store read: every store but the newest (this
    // chunk's) must have finished reading its stage first.
    if (loaded < mine) {
      asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
      load();
    }
  }
  // Every store complete (written, not only read) before the kernel ends.
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#else
  (void)dst, (void)src, (void)total_bytes, (void)chunk_bytes, (void)stages, (void)stalls;
#endif
}

__global__ void fill_kernel(uint4* dst, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    dst[i] = pattern_vector(i, seed);
}

__global__ void poison_strided_kernel(uint4* dst, std::size_t vectors, std::size_t stride, std::uint32_t word) {
  const uint4 v = make_uint4(word, word, word, word);
  const std::size_t strided = (vectors - 1) / stride + 1;  // 0, stride, ... up to the last whole one
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i <= strided;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    dst[i < strided ? i * stride : vectors - 1] = v;  // index `strided`: the last vector
}

__device__ inline unsigned diff_count(const uint4& a, const uint4& b) {
  return (a.x != b.x) + (a.y != b.y) + (a.z != b.z) + (a.w != b.w);
}

__global__ void pattern_check_kernel(const uint4* buf, std::size_t n, std::uint32_t seed, unsigned long long* bad) {
  unsigned long long local = 0;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    local += diff_count(buf[i], pattern_vector(i, seed));
  if (local) atomicAdd(bad, local);
}

__global__ void triad_check_kernel(const float4* a, std::size_t n, std::uint32_t seed_b, std::uint32_t seed_c, float s,
                                   unsigned long long* bad) {
  unsigned long long local = 0;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float4 b = pattern_float4(i, seed_b), c = pattern_float4(i, seed_c), got = a[i];
    const float4 want = make_float4(__fmaf_rn(s, c.x, b.x), __fmaf_rn(s, c.y, b.y), __fmaf_rn(s, c.z, b.z),
                                    __fmaf_rn(s, c.w, b.w));
    local += (__float_as_uint(got.x) != __float_as_uint(want.x)) + (__float_as_uint(got.y) != __float_as_uint(want.y)) +
             (__float_as_uint(got.z) != __float_as_uint(want.z)) + (__float_as_uint(got.w) != __float_as_uint(want.w));
  }
  if (local) atomicAdd(bad, local);
}

// Triad inputs are pattern words read as floats: fill them as floats so the kernel reads floats.
__global__ void fill_float_kernel(float4* dst, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    dst[i] = pattern_float4(i, seed);
}

constexpr int kUtilityBlocks = 1024, kUtilityThreads = 256;

// Dispatch a runtime (unroll, hint) to the template instance. A shape no instance matches is not
// silently dropped: it becomes a launch of an empty grid, which CUDA refuses, so the caller's launch check
// reports it (a dropped launch would time nothing and fail only at verification, or not at all).
template <template <int, int> class Launch, class... Args>
void dispatch(const StreamShape& s, Args&&... args) {
#define CEILINGS_HBM_CASE(U, H) \
  if (s.unroll == U && s.hint == H) return Launch<U, H>::run(s, args...);
#define CEILINGS_HBM_UNROLLS(H) \
  CEILINGS_HBM_CASE(1, H) CEILINGS_HBM_CASE(2, H) CEILINGS_HBM_CASE(4, H) CEILINGS_HBM_CASE(8, H)
  CEILINGS_HBM_UNROLLS(0) CEILINGS_HBM_UNROLLS(1) CEILINGS_HBM_UNROLLS(2)
#undef CEILINGS_HBM_UNROLLS
#undef CEILINGS_HBM_CASE
  Launch<1, 0>::run(StreamShape{0, 0, 1, 0}, args...);  // an empty grid: a launch error (cudaErrorInvalidValue on CUDA 13)
}

// Blocks of the shape's kernel instance one SM holds at once (registers decide it for the wide
// unrolls: triad with 8 vectors in flight needs ~96 registers a thread), 0 when it cannot launch,
// -1 when the query itself failed (no kernel image for this device, ...): the caller then launches
// anyway, so the failure is reported by the launch instead of the case silently disappearing.
template <class Kernel>
int resident_blocks(Kernel kernel, int threads) {
  int blocks = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, 0) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return blocks;
}

template <int U, int H>
struct ReadLaunch {
  static void run(const StreamShape& s, const uint4* src, std::size_t n, std::uint32_t* sum, cudaStream_t st) {
    read_kernel<U, H><<<s.blocks, s.threads, 0, st>>>(src, n, sum);
  }
  static int resident(const StreamShape& s) { return resident_blocks(read_kernel<U, H>, s.threads); }
};
template <int U, int H>
struct WriteLaunch {
  static void run(const StreamShape& s, uint4* dst, std::size_t n, std::uint32_t seed, cudaStream_t st) {
    write_kernel<U, H><<<s.blocks, s.threads, 0, st>>>(dst, n, seed);
  }
  static int resident(const StreamShape& s) { return resident_blocks(write_kernel<U, H>, s.threads); }
};
template <int U, int H>
struct CopyLaunch {
  static void run(const StreamShape& s, uint4* dst, const uint4* src, std::size_t n, cudaStream_t st) {
    copy_kernel<U, H><<<s.blocks, s.threads, 0, st>>>(dst, src, n);
  }
  static int resident(const StreamShape& s) { return resident_blocks(copy_kernel<U, H>, s.threads); }
};
template <int U, int H>
struct TriadLaunch {
  static void run(const StreamShape& s, float4* a, const float4* b, const float4* c, float k, std::size_t n,
                  cudaStream_t st) {
    triad_kernel<U, H><<<s.blocks, s.threads, 0, st>>>(a, b, c, k, n);
  }
  static int resident(const StreamShape& s) { return resident_blocks(triad_kernel<U, H>, s.threads); }
};

template <template <int, int> class Launch>
int dispatch_resident(const StreamShape& s) {
#define CEILINGS_HBM_CASE(U, H) \
  if (s.unroll == U && s.hint == H) return Launch<U, H>::resident(s);
#define CEILINGS_HBM_UNROLLS(H) \
  CEILINGS_HBM_CASE(1, H) CEILINGS_HBM_CASE(2, H) CEILINGS_HBM_CASE(4, H) CEILINGS_HBM_CASE(8, H)
  CEILINGS_HBM_UNROLLS(0) CEILINGS_HBM_UNROLLS(1) CEILINGS_HBM_UNROLLS(2)
#undef CEILINGS_HBM_UNROLLS
#undef CEILINGS_HBM_CASE
  return 0;
}

}  // namespace

int stream_resident_blocks_per_sm(StreamOp op, const StreamShape& s) {
  if (!valid_stream_shape(StreamShape{1, s.threads, s.unroll, s.hint})) return 0;
  switch (op) {
    case StreamOp::kRead: return dispatch_resident<ReadLaunch>(s);
    case StreamOp::kWrite: return dispatch_resident<WriteLaunch>(s);
    case StreamOp::kCopy: return dispatch_resident<CopyLaunch>(s);
    case StreamOp::kTriad: return dispatch_resident<TriadLaunch>(s);
  }
  return 0;
}

bool valid_bulk_copy_shape(const BulkCopyShape& s) {
  return s.blocks > 0 && s.chunk_bytes >= 16 && s.chunk_bytes % 16 == 0 && s.stages >= 2 && s.stages <= kMaxBulkStages &&
         static_cast<long long>(s.chunk_bytes) * s.stages <= kMaxBulkSharedBytes;
}

namespace {
// Dynamic shared memory above 48 KiB must be allowed per kernel, per device context. It is set once per
// device, to the most any valid shape asks for or the device's opt-in limit where that is lower (a launch
// with less is unaffected; a shape past the limit fits no block per SM), not before every launch:
// launches sit between a blocking kernel's start and release, where any call that might wait for the GPU
// would hold the sample until the blocker gives up.
// The carveout asks for the most shared memory (the rest is L1), so the blocks per SM are what the shared
// memory allows, as the occupancy query assumes.
cudaError_t allow_bulk_shared() {
  int device = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e != cudaSuccess) return e;
  static std::mutex mutex;
  static std::set<int> allowed;
  const std::lock_guard<std::mutex> lock(mutex);
  if (allowed.count(device)) return cudaSuccess;
  int optin = 0;  // what a block may have on this device (227 KiB on Hopper; less on some other parts)
  e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
  if (e != cudaSuccess) return e;
  // The dynamic limit plus the kernel's static shared memory (its barriers) may not pass the opt-in.
  cudaFuncAttributes attributes{};
  e = cudaFuncGetAttributes(&attributes, copy_bulk_kernel);
  if (e != cudaSuccess) return e;
  e = cudaFuncSetAttribute(copy_bulk_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           std::min(kMaxBulkSharedBytes, optin - static_cast<int>(attributes.sharedSizeBytes)));
  if (e != cudaSuccess) return e;
  e = cudaFuncSetAttribute(copy_bulk_kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                           cudaSharedmemCarveoutMaxShared);
  if (e == cudaSuccess) allowed.insert(device);
  return e;
}
}  // namespace

int bulk_copy_resident_blocks_per_sm(const BulkCopyShape& s) {
  if (!valid_bulk_copy_shape(BulkCopyShape{1, s.chunk_bytes, s.stages})) return 0;
  // Built without sm_90 code (a Hopper GPU running an older architecture's PTX through the JIT), the kernel's
  // body is compiled out: it would time an empty kernel and fail its check instead of being skipped.
  cudaFuncAttributes attributes{};
  if (cudaFuncGetAttributes(&attributes, copy_bulk_kernel) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  if (attributes.ptxVersion < 90) return 0;
  const int shared = s.chunk_bytes * s.stages;
  int blocks = 0;
  if (allow_bulk_shared() != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, copy_bulk_kernel, 32, shared) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return blocks;
}

void hbm_copy_bulk(uint4* dst, const uint4* src, std::size_t vectors, const BulkCopyShape& shape, unsigned int* stalls,
                   cudaStream_t stream) {
  // An invalid shape becomes an empty-grid launch, which CUDA refuses: the caller's launch check reports it.
  const bool ok = valid_bulk_copy_shape(shape);
  const int shared = ok ? shape.chunk_bytes * shape.stages : 0;
  if (ok && allow_bulk_shared() != cudaSuccess) return;  // the error stays for the caller's check
  copy_bulk_kernel<<<ok ? shape.blocks : 0, 32, shared, stream>>>(dst, src, vectors * sizeof(uint4),
                                                                   ok ? shape.chunk_bytes : 16, ok ? shape.stages : 2,
                                                                   stalls);
}

bool valid_stream_shape(const StreamShape& s) {
  const bool unroll_ok = s.unroll == 1 || s.unroll == 2 || s.unroll == 4 || s.unroll == 8;
  return s.blocks > 0 && s.threads >= 32 && s.threads <= 1024 && s.threads % 32 == 0 && unroll_ok && s.hint >= 0 &&
         s.hint <= 2;
}

std::uint32_t pattern_sum(std::size_t words, std::uint32_t seed) {
  // sum_{w<N} (w * M + seed) = M * N(N-1)/2 + seed * N, all mod 2^32 (unsigned arithmetic wraps); plus the
  // high part's sum_{w<N} floor(w / 2^32) * H: for N = q * 2^32 + r that is (2^32 q(q-1)/2 + q r) H = q r H.
  const unsigned long long n = words;
  const unsigned long long half = (n % 2 == 0) ? (n / 2) * (n - 1) : n * ((n - 1) / 2);
  const unsigned long long q = n >> 32, r = n & 0xFFFFFFFFull;
  return static_cast<std::uint32_t>(half * kPatternMul + static_cast<unsigned long long>(seed) * n +
                                    q * r * kPatternHighMul);
}

void fill_pattern(uint4* dst, std::size_t vectors, std::uint32_t seed, cudaStream_t stream) {
  fill_kernel<<<kUtilityBlocks, kUtilityThreads, 0, stream>>>(dst, vectors, seed);
}

void poison_strided(uint4* dst, std::size_t vectors, std::size_t stride_vectors, std::uint32_t word,
                    cudaStream_t stream) {
  if (vectors == 0 || stride_vectors == 0) return;
  const std::size_t threads = (vectors - 1) / stride_vectors + 2;
  const auto blocks = static_cast<unsigned>(std::min<std::size_t>(kUtilityBlocks, (threads + kUtilityThreads - 1) / kUtilityThreads));
  poison_strided_kernel<<<blocks, kUtilityThreads, 0, stream>>>(dst, vectors, stride_vectors, word);
}

void hbm_read(const uint4* src, std::size_t n, std::uint32_t* sum, const StreamShape& s, cudaStream_t st) {
  dispatch<ReadLaunch>(s, src, n, sum, st);
}
void hbm_write(uint4* dst, std::size_t n, std::uint32_t seed, const StreamShape& s, cudaStream_t st) {
  dispatch<WriteLaunch>(s, dst, n, seed, st);
}
void hbm_copy(uint4* dst, const uint4* src, std::size_t n, const StreamShape& s, cudaStream_t st) {
  dispatch<CopyLaunch>(s, dst, src, n, st);
}
void hbm_triad(float4* a, const float4* b, const float4* c, float k, std::size_t n, const StreamShape& s,
               cudaStream_t st) {
  dispatch<TriadLaunch>(s, a, b, c, k, n, st);
}

void count_pattern_mismatches(const uint4* buf, std::size_t n, std::uint32_t seed, unsigned long long* bad,
                              cudaStream_t st) {
  pattern_check_kernel<<<kUtilityBlocks, kUtilityThreads, 0, st>>>(buf, n, seed, bad);
}

void count_triad_mismatches(const float4* a, std::size_t n, std::uint32_t seed_b, std::uint32_t seed_c, float k,
                            unsigned long long* bad, cudaStream_t st) {
  triad_check_kernel<<<kUtilityBlocks, kUtilityThreads, 0, st>>>(a, n, seed_b, seed_c, k, bad);
}

void fill_pattern_floats(float4* dst, std::size_t vectors, std::uint32_t seed, cudaStream_t stream) {
  fill_float_kernel<<<kUtilityBlocks, kUtilityThreads, 0, stream>>>(dst, vectors, seed);
}

}  // namespace ceilings::kernels
