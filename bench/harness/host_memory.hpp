// Host buffers for the transfer families (pcie.*, nvlink.*, latency.h2d_small/d2h_small): pinned or
// pageable, with clear errors when the host cannot provide them; the GPU's NUMA placement; and the
// host side of the pattern check (the same pattern kernels/hbm.cuh writes and checks on the device).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ceilings/host_topology.hpp"
#include "ceilings/kernels/hbm.cuh"
#include "check.hpp"
#include "measure.hpp"
#include "nvml.hpp"

namespace ceilings::bench {

inline std::string host_gib(std::size_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

// Pinned (cudaHostAlloc, mapped so kernels can reach it; optionally write-combined) or pageable (malloc) host
// memory. A failed allocation throws a CheckError that says which kind, how much, and what the host had available.
// Write-combined pages are uncached for the host CPU (its writes are combined, its reads are slow: a source, never a
// destination the host reads back) and, as CUDA's programming guide says, not snooped when the GPU reads them over
// PCIe, which may make those reads faster on some systems.
class HostBuffer {
 public:
  enum class Kind { kPinned, kPinnedWriteCombined, kPageable };
  HostBuffer() = default;
  HostBuffer(std::size_t bytes, Kind kind) : bytes_(bytes), kind_(kind) {
    if (bytes == 0) return;
    if (kind != Kind::kPageable) {
      const bool wc = kind == Kind::kPinnedWriteCombined;
      const cudaError_t rc = cudaHostAlloc(
          &ptr_, bytes, cudaHostAllocPortable | cudaHostAllocMapped | (wc ? cudaHostAllocWriteCombined : 0u));
      if (rc != cudaSuccess) {
        cudaGetLastError();
        ptr_ = nullptr;
        throw CheckError(std::string(wc ? "pinned write-combined" : "pinned") + " host allocation (cudaHostAlloc) of " +
                             host_gib(bytes),
                         std::string(cudaGetErrorName(rc)) + "; " + host_gib(host_available_bytes()) +
                             " of host memory available (locked-memory limits may be lower: ulimit -l)",
                         __FILE__, __LINE__);
      }
    } else {
      ptr_ = std::malloc(bytes);
      if (!ptr_)
        throw CheckError("pageable host allocation (malloc) of " + host_gib(bytes),
                         "out of memory; " + host_gib(host_available_bytes()) + " available", __FILE__, __LINE__);
    }
  }
  ~HostBuffer() { release(); }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  HostBuffer(HostBuffer&& o) noexcept { *this = std::move(o); }
  HostBuffer& operator=(HostBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = o.ptr_;
      bytes_ = o.bytes_;
      kind_ = o.kind_;
      o.ptr_ = nullptr;
      o.bytes_ = 0;
    }
    return *this;
  }
  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  Kind kind() const { return kind_; }
  // The address a kernel uses for this pinned buffer.
  void* device_pointer() const {
    if (kind_ == Kind::kPageable) throw CheckError("device pointer", "pageable memory is not mapped", __FILE__, __LINE__);
    void* d = nullptr;
    CEILINGS_CUDA_CHECK(cudaHostGetDevicePointer(&d, ptr_, 0));
    return d;
  }

 private:
  void release() {
    if (!ptr_) return;
    if (kind_ != Kind::kPageable)
      cudaFreeHost(ptr_);
    else
      std::free(ptr_);
    ptr_ = nullptr;
  }
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  Kind kind_ = Kind::kPinned;
};

// Host memory a case may take now: half of what the OS reports available, never less than
// kHostMemoryFloor (see ceilings::host_memory_budget: MemAvailable understates a microVM's memory).
inline std::size_t host_memory_budget() { return ceilings::host_memory_budget(host_available_bytes()); }

// Throws "unsupported: ..." when `host_bytes` of host memory or `device_bytes` of device memory
// are more than the case may take now. The device is the current one, or GPU `device` (named in the
// reason) when given.
inline void require_memory(std::size_t host_bytes, std::size_t device_bytes, int device = -1) {
  const std::size_t host_budget = host_memory_budget();
  if (host_bytes > host_budget)
    unsupported("needs " + host_gib(host_bytes) + " of host memory, more than the case may take (" +
                host_gib(host_budget) + ": half of the " + host_gib(host_available_bytes()) + " available)");
  std::size_t free_b = 0, total_b = 0;
  if (device >= 0) {
    int saved = 0;
    CEILINGS_CUDA_CHECK(cudaGetDevice(&saved));
    CEILINGS_CUDA_CHECK(cudaSetDevice(device));
    const cudaError_t rc = cudaMemGetInfo(&free_b, &total_b);
    cudaSetDevice(saved);
    CEILINGS_CUDA_CHECK(rc);
  } else {
    CEILINGS_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  }
  if (device_bytes > static_cast<std::size_t>(0.9 * static_cast<double>(free_b)))
    unsupported("needs " + host_gib(device_bytes) + " of device memory" +
                (device >= 0 ? " on GPU " + std::to_string(device) : std::string()) + ", " + host_gib(free_b) + " free");
}

// Host side of the pattern (kernels/hbm.cuh): 32-bit word w holds w * kPatternMul + seed, plus
// floor(w / 2^32) * kPatternHighMul.
inline std::uint32_t host_pattern_word(std::size_t i, std::uint32_t seed) {
  return static_cast<std::uint32_t>(i) * kernels::kPatternMul + seed +
         static_cast<std::uint32_t>(i >> 32) * kernels::kPatternHighMul;
}
inline void fill_host_pattern(void* dst, std::size_t bytes, std::uint32_t seed) {
  auto* w = static_cast<std::uint32_t*>(dst);
  const std::size_t n = bytes / 4;
  for (std::size_t i = 0; i < n; ++i) w[i] = host_pattern_word(i, seed);
}
inline std::size_t count_host_mismatches(const void* src, std::size_t bytes, std::uint32_t seed) {
  const auto* w = static_cast<const std::uint32_t*>(src);
  const std::size_t n = bytes / 4;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) bad += w[i] != host_pattern_word(i, seed);
  return bad;
}

// Words of a device buffer that differ from the pattern (a kernel on `stream`; synchronises).
inline unsigned long long count_device_mismatches(const void* dev, std::size_t bytes, std::uint32_t seed,
                                                  cudaStream_t stream) {
  DeviceBuffer<unsigned long long> bad(1);
  CEILINGS_CUDA_CHECK(cudaMemsetAsync(bad.get(), 0, sizeof(unsigned long long), stream));
  kernels::count_pattern_mismatches(static_cast<const uint4*>(dev), bytes / sizeof(uint4), seed, bad.get(), stream);
  CEILINGS_LAUNCH_CHECK();
  unsigned long long n = 0;
  CEILINGS_CUDA_CHECK(cudaMemcpyAsync(&n, bad.get(), sizeof n, cudaMemcpyDeviceToHost, stream));
  CEILINGS_CUDA_CHECK(cudaStreamSynchronize(stream));
  return n;
}

// The GPU's place on the host, read once per device from sysfs.
struct GpuLocality {
  std::string bus_id;
  int numa_node = -1;          // -1: unknown or a single-node host
  std::vector<int> local_cpus;  // empty: unknown
};
inline GpuLocality gpu_locality(int device) {
  char bus[32] = {};
  CEILINGS_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device));
  const PciLocality loc = read_pci_locality(bus);
  return {loc.bus_id, loc.numa_node.value_or(-1), loc.local_cpus};
}

// Pins the calling thread to the GPU's local CPUs and makes the GPU's NUMA node its preferred one for new
// pages, for its lifetime (then restores both), so host buffers allocated and first touched meanwhile
// land on the GPU's node.
class NumaPlacement {
 public:
  explicit NumaPlacement(int device) : locality_(gpu_locality(device)), policy_(locality_.numa_node) {
    if (!locality_.local_cpus.empty()) {
      if (auto now = pin_current_thread(locality_.local_cpus)) {
        cpus_ = *now;
        // Pinned only where the GPU has a node: with none (numa_node -1) the kernel lists every CPU as local,
        // and a thread "pinned" to all of them may still run on either socket.
        pinned_ = locality_.numa_node >= 0 && !cpus_.empty() && std::all_of(cpus_.begin(), cpus_.end(), [&](int c) {
          return std::binary_search(locality_.local_cpus.begin(), locality_.local_cpus.end(), c);
        });
      }
    }
    if (cpus_.empty()) cpus_ = current_thread_cpus();
    // A launcher that bound the process away from the GPU's CPUs is kept (never pinned outside what it
    // allows), but said once: host-side figures then cross sockets.
    static bool told = false;
    if (locality_.numa_node >= 0 && !locality_.local_cpus.empty() && !pinned_ && !told) {
      told = true;
      std::fprintf(stderr,
                   "ceilings-bench: GPU %d's local CPUs (NUMA node %d) are not among those this process may use: "
                   "host<->device figures are measured from other CPUs\n",
                   device, locality_.numa_node);
    }
  }
  const GpuLocality& locality() const { return locality_; }
  bool pinned() const { return pinned_; }
  const std::vector<int>& cpus() const { return cpus_; }  // what the thread may run on now
  // Counters for the detail: numa_node, numa_pinned, cpus (how many the thread may use), and where a
  // host buffer's pages are (host_numa_node, -1 unknown).
  std::map<std::string, double> counters(const void* host_buffer = nullptr, std::size_t bytes = 0) const {
    std::map<std::string, double> c{{"numa_node", locality_.numa_node},
                                    {"numa_pinned", pinned_ ? 1 : 0},
                                    {"numa_memory_preferred", policy_.active() ? 1 : 0},
                                    {"cpus", static_cast<double>(cpus_.size())}};
    if (host_buffer) c["host_numa_node"] = memory_numa_node(host_buffer, bytes).value_or(-1);
    return c;
  }
 private:
  ThreadAffinityGuard restore_;
  GpuLocality locality_;
  PreferredNumaNode policy_;  // new pages on the GPU's node, whatever the launcher's policy
  std::vector<int> cpus_;
  bool pinned_ = false;
};

// The PCIe link as NVML reports it while a transfer runs (links train down when idle, so reading it
// idle would understate it): the highest generation and width seen by a polling thread.
class LinkProbe {
 public:
  explicit LinkProbe(std::shared_ptr<nvml::Device> dev, double period_s = 0.005) : dev_(std::move(dev)) {
    if (!dev_) return;
    thread_ = std::thread([this, period_s] {
      while (!stop_.load()) {
        if (auto g = dev_->pcie_link_gen().get()) gen_ = std::max(gen_.load(), *g);
        if (auto w = dev_->pcie_link_width().get()) width_ = std::max(width_.load(), *w);
        std::this_thread::sleep_for(std::chrono::duration<double>(period_s));
      }
    });
  }
  ~LinkProbe() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  unsigned gen() const { return gen_; }
  unsigned width() const { return width_; }
  std::optional<unsigned> max_gen() const { return dev_ ? dev_->pcie_max_link_gen().get() : std::nullopt; }
  std::optional<unsigned> max_width() const { return dev_ ? dev_->pcie_max_link_width().get() : std::nullopt; }

 private:
  std::shared_ptr<nvml::Device> dev_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<unsigned> gen_{0}, width_{0};
};

}  // namespace ceilings::bench
