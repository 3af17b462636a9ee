// Where a GPU sits on the host: its NUMA node and local CPUs from sysfs, pinning the measuring
// thread there and checking which node a host buffer's pages landed on. Feeds the pcie.* detail
// (numa_node, cpus) and the host facts. Linux only; elsewhere every answer is "unknown".
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace ceilings {

// "0-15,32-47" -> {0..15, 32..47}, sorted and unique. Accepts surrounding whitespace and a trailing
// newline as sysfs writes it; an empty list is valid (no CPUs). Throws InputError on anything else.
std::vector<int> parse_cpulist(const std::string& text);
// The inverse, compressed into ranges: {0,1,2,5} -> "0-2,5".
std::string format_cpulist(const std::vector<int>& cpus);

// What sysfs says about one PCI device. numa_node is nullopt where the file is missing or says -1
// (single-node hosts, some VMs); local_cpus is empty where local_cpulist is missing.
struct PciLocality {
  std::string bus_id;  // lower-cased "0000:19:00.0"
  std::optional<int> numa_node;
  std::vector<int> local_cpus;
};
// Reads <sysfs_root>/bus/pci/devices/<bus_id>/{numa_node,local_cpulist}; sysfs_root is "/sys" on a
// real host, a test directory in tests. CUDA writes bus ids with upper-case hex ("0000:19:00.0",
// cudaDeviceGetPCIBusId's 12 characters), NVML with an 8-digit domain ("00000000:19:00.0"); both
// spellings are accepted.
PciLocality read_pci_locality(const std::string& bus_id, const std::string& sysfs_root = "/sys");
// "00000000:19:00.0" -> "0000:19:00.0" (the sysfs spelling: the domain in at least 4 hex digits, as many as it
// needs, so NVML's "00010000:01:00.0" under an Intel VMD domain is sysfs's "10000:01:00.0"); lower-cases the hex.
std::string sysfs_bus_id(const std::string& bus_id);

// The CPU model /proc/cpuinfo's text names: x86's "model name"; on ARM, which has none, the core its
// "CPU implementer" and "CPU part" identify ("ARM Neoverse-V2" on Grace), else those two numbers; "" where
// neither is there.
std::string cpu_model_from_cpuinfo(const std::string& cpuinfo);

// Restricts the calling thread to `cpus` (those this process may use; an empty intersection leaves
// the thread as it was). Returns the CPUs the thread runs on afterwards; nullopt if the OS refused.
std::optional<std::vector<int>> pin_current_thread(const std::vector<int>& cpus);
// The CPUs the calling thread may run on now (empty if unknown).
std::vector<int> current_thread_cpus();
// Restricts every other thread of this process to `cpus` (as they are, not intersected: give what the caller
// may use), e.g. the threads a library started before the caller pinned itself. Returns how many were
// restricted; nullopt where the process's threads cannot be listed (no /proc).
std::optional<int> pin_other_threads(const std::vector<int>& cpus);

// Restores the calling thread's CPU set when it goes out of scope.
class ThreadAffinityGuard {
 public:
  ThreadAffinityGuard();
  ~ThreadAffinityGuard();
  ThreadAffinityGuard(const ThreadAffinityGuard&) = delete;
  ThreadAffinityGuard& operator=(const ThreadAffinityGuard&) = delete;

 private:
  std::vector<int> saved_;
};

// Makes `node` the preferred NUMA node of the pages the calling thread allocates from now on
// (set_mempolicy MPOL_PREFERRED, no libnuma needed), whatever policy a launcher (numactl, Slurm's
// --mem-bind) gave the process, and restores the thread's old policy when it goes out of scope.
// Inactive (active() false) for a negative node or where the kernel refuses (a container without
// CAP_SYS_NICE, no NUMA support): first touch by a thread on the node's CPUs is then what places pages.
class PreferredNumaNode {
 public:
  explicit PreferredNumaNode(int node);
  ~PreferredNumaNode();
  PreferredNumaNode(const PreferredNumaNode&) = delete;
  PreferredNumaNode& operator=(const PreferredNumaNode&) = delete;
  bool active() const { return active_; }

 private:
  bool active_ = false;
  int saved_mode_ = 0;
  std::vector<unsigned long> saved_mask_;
};
// The calling thread's NUMA policy mode (MPOL_DEFAULT 0, MPOL_PREFERRED 1, MPOL_BIND 2, ...) and its
// nodes; nullopt where the kernel does not say.
struct NumaPolicy {
  int mode = 0;
  std::vector<int> nodes;
};
std::optional<NumaPolicy> current_numa_policy();

// The NUMA node holding most of the pages of [ptr, ptr + bytes) (sampled, at most `samples` pages,
// which must have been touched); nullopt when the kernel cannot tell.
std::optional<int> memory_numa_node(const void* ptr, std::size_t bytes, std::size_t samples = 64);

// Host memory the OS reports as available now (MemAvailable from /proc/meminfo), bytes; 0 if unknown.
std::size_t host_available_bytes(const std::string& meminfo_path = "/proc/meminfo");
// Parses /proc/meminfo text for MemAvailable (kB) -> bytes; nullopt if absent or malformed.
std::optional<std::size_t> parse_mem_available(const std::string& meminfo_text);

// Host memory one transfer case may take: half of what the OS reports available (pinned memory
// cannot be swapped out), but never less than kHostMemoryFloor. MemAvailable understates what a
// host can give where RAM is added on demand (a microVM whose memory "starts small and grows as it
// is used" reports a few GiB of a 128 GiB machine), and a GPU host always has the few GiB the
// default sweeps need (the largest, pcie bidir at 1 GiB, pins 2 GiB). A pinned allocation the host
// really cannot give fails as a clear per-case error, never a crash. available = 0 (unknown): the floor.
constexpr std::size_t kHostMemoryFloor = static_cast<std::size_t>(4) << 30;
std::size_t host_memory_budget(std::size_t available_bytes);

}  // namespace ceilings
