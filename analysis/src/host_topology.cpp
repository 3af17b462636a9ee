// GPU locality on the host (sysfs), thread pinning and page placement; see host_topology.hpp.
#include "ceilings/host_topology.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "ceilings/error.hpp"

#ifdef __linux__
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace ceilings {

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

int parse_cpu_number(const std::string& s, const std::string& whole) {
  if (s.empty() || s.size() > 6 || !std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); }))
    throw InputError("cpu list '" + whole + "': '" + s + "' is not a CPU number");
  return std::stoi(s);
}

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

}  // namespace

std::vector<int> parse_cpulist(const std::string& text) {
  const std::string t = trim(text);
  std::vector<int> cpus;
  if (t.empty()) return cpus;
  if (t.back() == ',') throw InputError("cpu list '" + t + "' ends in a comma");
  std::stringstream ss(t);
  for (std::string part; std::getline(ss, part, ',');) {
    part = trim(part);
    const auto dash = part.find('-');
    if (dash == std::string::npos) {
      cpus.push_back(parse_cpu_number(part, t));
      continue;
    }
    const int lo = parse_cpu_number(trim(part.substr(0, dash)), t);
    const int hi = parse_cpu_number(trim(part.substr(dash + 1)), t);
    if (hi < lo) throw InputError("cpu list '" + t + "': range '" + part + "' runs backwards");
    for (int c = lo; c <= hi; ++c) cpus.push_back(c);
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string format_cpulist(const std::vector<int>& in) {
  std::vector<int> cpus = in;
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  std::ostringstream os;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (i) os << ',';
    os << cpus[i];
    if (j > i) os << '-' << cpus[j];
    i = j + 1;
  }
  return os.str();
}

std::string sysfs_bus_id(const std::string& bus_id) {
  std::string b = trim(bus_id);
  std::transform(b.begin(), b.end(), b.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // NVML writes an 8-digit domain; sysfs at least 4, with no more leading zeros (VMD domains from 0x10000).
  const auto colon = b.find(':');
  if (colon != std::string::npos && colon > 4) {
    const std::size_t zeros = std::min(b.find_first_not_of('0'), colon - 4);
    b = b.substr(zeros);
  }
  return b;
}

PciLocality read_pci_locality(const std::string& bus_id, const std::string& sysfs_root) {
  PciLocality loc;
  loc.bus_id = sysfs_bus_id(bus_id);
  const std::string dir = sysfs_root + "/bus/pci/devices/" + loc.bus_id + "/";
  if (auto text = read_text(dir + "numa_node")) {
    std::istringstream in(*text);
    int node = -1;
    if (in >> node && node >= 0) loc.numa_node = node;
  }
  if (auto text = read_text(dir + "local_cpulist")) {
    try {
      loc.local_cpus = parse_cpulist(*text);
    } catch (const InputError&) {
      loc.local_cpus.clear();  // an unreadable list is "unknown", never a crash of the measurement
    }
  }
  return loc;
}

#ifdef __linux__
namespace {
// A CPU mask of `cpus` bits, allocated: cpu_set_t holds 1024 CPUs, and the kernel refuses a mask smaller than its
// own CPU count (sched_getaffinity: EINVAL) on a larger host.
class CpuMask {
 public:
  explicit CpuMask(int cpus) : cpus_(cpus), set_(CPU_ALLOC(cpus)), bytes_(CPU_ALLOC_SIZE(cpus)) {
    if (set_) CPU_ZERO_S(bytes_, set_);
  }
  ~CpuMask() {
    if (set_) CPU_FREE(set_);
  }
  CpuMask(const CpuMask&) = delete;
  CpuMask& operator=(const CpuMask&) = delete;
  bool ok() const { return set_ != nullptr; }
  void add(int c) {
    if (c >= 0 && c < cpus_) CPU_SET_S(static_cast<std::size_t>(c), bytes_, set_);
  }
  std::vector<int> list() const {
    std::vector<int> out;
    for (int c = 0; c < cpus_; ++c)
      if (CPU_ISSET_S(static_cast<std::size_t>(c), bytes_, set_)) out.push_back(c);
    return out;
  }
  bool get() { return sched_getaffinity(0, bytes_, set_) == 0; }
  bool set(pid_t thread = 0) const { return sched_setaffinity(thread, bytes_, set_) == 0; }

 private:
  int cpus_;
  cpu_set_t* set_;
  std::size_t bytes_;
};

// A mask that holds every CPU in `cpus` (and at least cpu_set_t's 1024).
int mask_size_for(const std::vector<int>& cpus) {
  int most = CPU_SETSIZE;
  for (int c : cpus) most = std::max(most, c + 1);
  return most;
}
}  // namespace
#endif

std::vector<int> current_thread_cpus() {
#ifdef __linux__
  // Doubled from 1024 until the kernel takes the mask (the kernel's CPU count, 4096 or 8192 on the largest hosts).
  for (int n = CPU_SETSIZE; n <= (1 << 20); n *= 2) {
    CpuMask mask(n);
    if (!mask.ok()) return {};
    if (mask.get()) return mask.list();
    if (errno != EINVAL) return {};
  }
#endif
  return {};
}

std::optional<std::vector<int>> pin_current_thread(const std::vector<int>& cpus) {
#ifdef __linux__
  const std::vector<int> allowed = current_thread_cpus();
  CpuMask mask(mask_size_for(allowed));
  if (!mask.ok()) return std::nullopt;
  int count = 0;
  for (int c : cpus)
    if (c >= 0 && std::binary_search(allowed.begin(), allowed.end(), c)) {
      mask.add(c);
      ++count;
    }
  if (count == 0) return allowed;  // nothing of the list is ours to use: leave the thread alone
  if (!mask.set()) return std::nullopt;
  return current_thread_cpus();
#else
  (void)cpus;
  return std::nullopt;
#endif
}

std::optional<int> pin_other_threads(const std::vector<int>& cpus) {
#ifdef __linux__
  if (cpus.empty()) return 0;
  CpuMask mask(mask_size_for(cpus));
  if (!mask.ok()) return std::nullopt;
  for (int c : cpus) mask.add(c);
  const long self = syscall(SYS_gettid);
  std::error_code ec;
  std::filesystem::directory_iterator it("/proc/self/task", ec), end;
  if (ec) return std::nullopt;
  int pinned = 0;
  for (; it != end; it.increment(ec)) {
    if (ec) return std::nullopt;
    const std::string name = it->path().filename().string();
    char* rest = nullptr;
    const long tid = std::strtol(name.c_str(), &rest, 10);
    if (rest == name.c_str() || *rest != '\0' || tid <= 0 || tid == self) continue;
    if (mask.set(static_cast<pid_t>(tid))) ++pinned;  // a thread that ended meanwhile: ESRCH, not counted
  }
  if (ec) return std::nullopt;
  return pinned;
#else
  (void)cpus;
  return std::nullopt;
#endif
}

ThreadAffinityGuard::ThreadAffinityGuard() : saved_(current_thread_cpus()) {}
ThreadAffinityGuard::~ThreadAffinityGuard() {
#ifdef __linux__
  if (saved_.empty()) return;
  CpuMask mask(mask_size_for(saved_));
  if (!mask.ok()) return;
  for (int c : saved_) mask.add(c);
  (void)mask.set();
#endif
}

namespace {
constexpr unsigned long kMaxNumaNodes = 1024;  // bits in the node masks passed to the kernel
constexpr std::size_t kMaskWords = kMaxNumaNodes / (8 * sizeof(unsigned long));
constexpr int kMpolDefault = 0, kMpolPreferred = 1;
}  // namespace

std::optional<NumaPolicy> current_numa_policy() {
#if defined(__linux__) && defined(SYS_get_mempolicy)
  int mode = 0;
  std::vector<unsigned long> mask(kMaskWords, 0);
  if (syscall(SYS_get_mempolicy, &mode, mask.data(), kMaxNumaNodes, nullptr, 0UL) != 0) return std::nullopt;
  NumaPolicy p;
  p.mode = mode;
  for (unsigned long n = 0; n < kMaxNumaNodes; ++n)
    if (mask[n / (8 * sizeof(unsigned long))] >> (n % (8 * sizeof(unsigned long))) & 1UL)
      p.nodes.push_back(static_cast<int>(n));
  return p;
#else
  return std::nullopt;
#endif
}

PreferredNumaNode::PreferredNumaNode(int node) {
#if defined(__linux__) && defined(SYS_get_mempolicy) && defined(SYS_set_mempolicy)
  if (node < 0 || static_cast<unsigned long>(node) >= kMaxNumaNodes) return;
  saved_mask_.assign(kMaskWords, 0);
  if (syscall(SYS_get_mempolicy, &saved_mode_, saved_mask_.data(), kMaxNumaNodes, nullptr, 0UL) != 0) return;
  std::vector<unsigned long> mask(kMaskWords, 0);
  mask[static_cast<std::size_t>(node) / (8 * sizeof(unsigned long))] |= 1UL << (node % (8 * sizeof(unsigned long)));
  active_ = syscall(SYS_set_mempolicy, kMpolPreferred, mask.data(), kMaxNumaNodes) == 0;
#else
  (void)node;
#endif
}

PreferredNumaNode::~PreferredNumaNode() {
#if defined(__linux__) && defined(SYS_set_mempolicy)
  if (!active_) return;
  // The default policy takes no nodes; every other mode gets its nodes back.
  if (saved_mode_ == kMpolDefault)
    syscall(SYS_set_mempolicy, kMpolDefault, nullptr, 0UL);
  else
    syscall(SYS_set_mempolicy, saved_mode_, saved_mask_.data(), kMaxNumaNodes);
#endif
}

std::optional<int> memory_numa_node(const void* ptr, std::size_t bytes, std::size_t samples) {
#if defined(__linux__) && defined(SYS_move_pages)
  if (!ptr || bytes == 0 || samples == 0) return std::nullopt;
  const long page_size = sysconf(_SC_PAGESIZE);
  if (page_size <= 0) return std::nullopt;
  const auto page = static_cast<std::uintptr_t>(page_size);
  const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(ptr) / page * page;
  const std::uintptr_t last = (reinterpret_cast<std::uintptr_t>(ptr) + bytes - 1) / page * page;
  const std::size_t pages = static_cast<std::size_t>((last - first) / page) + 1;
  const std::size_t n = std::min(samples, pages);
  std::vector<void*> addrs(n);
  std::vector<int> status(n, -1);
  for (std::size_t i = 0; i < n; ++i)
    addrs[i] = reinterpret_cast<void*>(first + (n > 1 ? (pages - 1) * i / (n - 1) : 0) * page);
  // move_pages with no target nodes only reports where each page is (no libnuma needed).
  if (syscall(SYS_move_pages, 0, static_cast<unsigned long>(n), addrs.data(), nullptr, status.data(), 0) != 0)
    return std::nullopt;
  std::map<int, std::size_t> votes;
  for (int s : status)
    if (s >= 0) ++votes[s];
  if (votes.empty()) return std::nullopt;
  return std::max_element(votes.begin(), votes.end(), [](const auto& a, const auto& b) { return a.second < b.second; })
      ->first;
#else
  (void)ptr;
  (void)bytes;
  (void)samples;
  return std::nullopt;
#endif
}

std::optional<std::size_t> parse_mem_available(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    unsigned long long kb = 0;
    std::string unit;
    if (!(fields >> kb >> unit) || unit != "kB") return std::nullopt;
    return static_cast<std::size_t>(kb) * 1024;
  }
  return std::nullopt;
}

std::size_t host_available_bytes(const std::string& meminfo_path) {
  auto text = read_text(meminfo_path);
  if (!text) return 0;
  return parse_mem_available(*text).value_or(0);
}

std::size_t host_memory_budget(std::size_t available_bytes) {
  return std::max(available_bytes / 2, kHostMemoryFloor);
}

std::string cpu_model_from_cpuinfo(const std::string& cpuinfo) {
  std::istringstream in(cpuinfo);
  std::string implementer, part;
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
    if (key == "model name" && !value.empty()) return value;
    if (key == "CPU implementer" && implementer.empty()) implementer = value;
    if (key == "CPU part" && part.empty()) part = value;
  }
  if (implementer.empty() || part.empty()) return "";
  // Arm Ltd.'s server cores, by their part numbers (the Arm architecture reference manual's MIDR values).
  static const std::map<std::string, std::string> arm = {{"0xd0c", "Neoverse-N1"}, {"0xd40", "Neoverse-V1"},
                                                         {"0xd49", "Neoverse-N2"}, {"0xd4f", "Neoverse-V2"},
                                                         {"0xd8e", "Neoverse-N3"}, {"0xd84", "Neoverse-V3"}};
  if (implementer == "0x41")
    if (auto it = arm.find(part); it != arm.end()) return "ARM " + it->second;
  return "ARM implementer " + implementer + " part " + part;
}

}  // namespace ceilings
