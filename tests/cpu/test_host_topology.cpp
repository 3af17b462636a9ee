// NUMA and CPU-affinity discovery for the transfer families, from sample sysfs and /proc text.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "ceilings/error.hpp"
#include "ceilings/host_topology.hpp"
#include "cli_runner.hpp"

namespace ceilings {
namespace {

TEST(HostTopology, ParsesCpuLists) {
  EXPECT_EQ(parse_cpulist("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  const auto two_ranges = parse_cpulist("0-15,32-47");
  ASSERT_EQ(two_ranges.size(), 32u);
  EXPECT_EQ(two_ranges[15], 15);
  EXPECT_EQ(two_ranges[16], 32);
  EXPECT_EQ(two_ranges.back(), 47);
  EXPECT_EQ(parse_cpulist(" 5 "), (std::vector<int>{5}));
  EXPECT_EQ(parse_cpulist("3,1,3,2"), (std::vector<int>{1, 2, 3}));
  EXPECT_TRUE(parse_cpulist("\n").empty());
}

TEST(HostTopology, RejectsMalformedCpuLists) {
  EXPECT_THROW(parse_cpulist("0-"), InputError);
  EXPECT_THROW(parse_cpulist("a-b"), InputError);
  EXPECT_THROW(parse_cpulist("7-3"), InputError);
  EXPECT_THROW(parse_cpulist("1,,2"), InputError);
  EXPECT_THROW(parse_cpulist("0-3,"), InputError);
  EXPECT_THROW(parse_cpulist("00000000,0000ffff"), InputError);  // a cpumask, not a cpulist
}

TEST(HostTopology, FormatsCpuListsAsRanges) {
  EXPECT_EQ(format_cpulist({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
  EXPECT_EQ(format_cpulist({}), "");
  EXPECT_EQ(format_cpulist(parse_cpulist("0-15,32-47")), "0-15,32-47");
}

TEST(HostTopology, NormalisesCudaBusIds) {
  EXPECT_EQ(sysfs_bus_id("00000000:19:00.0"), "0000:19:00.0");
  EXPECT_EQ(sysfs_bus_id("0000:9A:00.0"), "0000:9a:00.0");
  EXPECT_EQ(sysfs_bus_id("0001:9A:00.0"), "0001:9a:00.0");
  EXPECT_EQ(sysfs_bus_id("00010000:01:00.0"), "10000:01:00.0");  // an Intel VMD domain, past 0xffff
}

TEST(HostTopology, CpuModelFromCpuinfo) {
  EXPECT_EQ(cpu_model_from_cpuinfo("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) "
                                   "Platinum 8480+\nflags\t\t: fpu\n"),
            "Intel(R) Xeon(R) Platinum 8480+");
  // Grace (arm64 has no "model name"): its Neoverse-V2 cores by implementer and part.
  EXPECT_EQ(cpu_model_from_cpuinfo("processor\t: 0\nBogoMIPS\t: 2000.00\nCPU implementer\t: 0x41\n"
                                   "CPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd4f\n"),
            "ARM Neoverse-V2");
  EXPECT_EQ(cpu_model_from_cpuinfo("CPU implementer\t: 0x61\nCPU part\t: 0x022\n"), "ARM implementer 0x61 part 0x022");
  EXPECT_EQ(cpu_model_from_cpuinfo("processor\t: 0\n"), "");
}

void write_file(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

TEST(HostTopology, ReadsLocalityFromSysfs) {
  const std::filesystem::path root = test::scratch_dir("host_topology_sysfs");
  write_file(root / "bus/pci/devices/0000:9a:00.0/numa_node", "1\n");
  write_file(root / "bus/pci/devices/0000:9a:00.0/local_cpulist", "48-95,144-191\n");
  write_file(root / "bus/pci/devices/0000:19:00.0/numa_node", "-1\n");
  write_file(root / "bus/pci/devices/0000:19:00.0/local_cpulist", "garbage\n");

  const PciLocality gpu = read_pci_locality("00000000:9A:00.0", root.string());
  EXPECT_EQ(gpu.bus_id, "0000:9a:00.0");
  ASSERT_TRUE(gpu.numa_node.has_value());
  EXPECT_EQ(*gpu.numa_node, 1);
  ASSERT_EQ(gpu.local_cpus.size(), 96u);
  EXPECT_EQ(gpu.local_cpus.front(), 48);
  EXPECT_EQ(gpu.local_cpus.back(), 191);

  const PciLocality single = read_pci_locality("0000:19:00.0", root.string());
  EXPECT_FALSE(single.numa_node.has_value());  // -1: the host has one node or does not say
  EXPECT_TRUE(single.local_cpus.empty());      // unreadable list = unknown, not a crash

  const PciLocality missing = read_pci_locality("0000:01:00.0", root.string());
  EXPECT_FALSE(missing.numa_node.has_value());
  EXPECT_TRUE(missing.local_cpus.empty());
}

TEST(HostTopology, ParsesMemAvailable) {
  const std::string meminfo =
      "MemTotal:       263741304 kB\nMemFree:        100000000 kB\nMemAvailable:   200000000 kB\nBuffers: 1 kB\n";
  ASSERT_TRUE(parse_mem_available(meminfo).has_value());
  EXPECT_EQ(*parse_mem_available(meminfo), 200000000ull * 1024);
  EXPECT_FALSE(parse_mem_available("MemTotal: 5 kB\n").has_value());
  EXPECT_FALSE(parse_mem_available("MemAvailable: lots\n").has_value());
#ifdef __linux__
  EXPECT_GT(host_available_bytes(), 0u);
#endif
  EXPECT_EQ(host_available_bytes("/nonexistent/meminfo"), 0u);
}

TEST(HostTopology, HostBudgetIsHalfTheAvailableButNotBelowTheFloor) {
  constexpr std::size_t GiB = static_cast<std::size_t>(1) << 30;
  EXPECT_EQ(host_memory_budget(200 * GiB), 100 * GiB);
  // A microVM that reports 3 GiB available of the 128 GiB it grows into still gets the 4 GiB the
  // default sweeps need (pcie bidir at 1 GiB pins 2 GiB).
  EXPECT_EQ(host_memory_budget(3 * GiB), 4 * GiB);
  EXPECT_EQ(host_memory_budget(0), kHostMemoryFloor);  // unknown
  EXPECT_EQ(kHostMemoryFloor, 4 * GiB);
}

#ifdef __linux__
TEST(HostTopology, PinsAndRestoresTheThread) {
  const std::vector<int> before = current_thread_cpus();
  ASSERT_FALSE(before.empty());
  // With one CPU the thread is already where it would be pinned: nothing here could fail.
  if (before.size() < 2) GTEST_SKIP() << "this process may use one CPU only";
  {
    ThreadAffinityGuard guard;
    const auto pinned = pin_current_thread({before.front()});
    ASSERT_TRUE(pinned.has_value());
    EXPECT_EQ(*pinned, (std::vector<int>{before.front()}));
    // CPUs this process may not use are ignored: the thread stays as it is.
    const auto unchanged = pin_current_thread({100000});
    ASSERT_TRUE(unchanged.has_value());
    EXPECT_EQ(*unchanged, (std::vector<int>{before.front()}));
  }
  EXPECT_EQ(current_thread_cpus(), before);
}

// Threads started before the caller pinned itself (a driver's, made as it initialises) are moved too.
TEST(HostTopology, PinsTheProcessesOtherThreads) {
  const std::vector<int> before = current_thread_cpus();
  ASSERT_FALSE(before.empty());
  // With one CPU the thread is already where it would be pinned: nothing here could fail.
  if (before.size() < 2) GTEST_SKIP() << "this process may use one CPU only";
  std::mutex mutex;
  std::condition_variable cv;
  bool asked = false, done = false;
  std::vector<int> seen;
  std::thread other([&] {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return asked; });
    seen = current_thread_cpus();
    done = true;
    cv.notify_all();
  });
  const auto pinned = pin_other_threads({before.back()});
  {  // the thread released and joined before any assertion can return
    std::unique_lock<std::mutex> lock(mutex);
    asked = true;
    cv.notify_all();
    cv.wait(lock, [&] { return done; });
  }
  other.join();
  ASSERT_TRUE(pinned.has_value());
  EXPECT_GE(*pinned, 1);  // gtest may run threads of its own
  EXPECT_EQ(seen, (std::vector<int>{before.back()}));
  EXPECT_EQ(current_thread_cpus(), before);  // the caller is not moved
  EXPECT_EQ(pin_other_threads({}), 0);
}

// The preferred node holds for the guard's lifetime, then the thread's old policy is back.
TEST(HostTopology, PrefersANumaNodeAndRestoresThePolicy) {
  EXPECT_FALSE(PreferredNumaNode(-1).active());  // unknown node: nothing changes
  const auto before = current_numa_policy();
  if (!before) GTEST_SKIP() << "the kernel does not report the NUMA policy here (get_mempolicy unavailable)";
  {
    PreferredNumaNode prefer(0);
    if (!prefer.active()) GTEST_SKIP() << "set_mempolicy refused here (no NUMA support or no CAP_SYS_NICE)";
    const auto now = current_numa_policy();
    ASSERT_TRUE(now.has_value());
    EXPECT_EQ(now->mode, 1);  // MPOL_PREFERRED
    EXPECT_EQ(now->nodes, (std::vector<int>{0}));
    std::vector<char> buffer(1 << 20, 1);
    if (const auto node = memory_numa_node(buffer.data(), buffer.size())) EXPECT_EQ(*node, 0);
  }
  const auto after = current_numa_policy();
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->mode, before->mode);
  EXPECT_EQ(after->nodes, before->nodes);
}

TEST(HostTopology, FindsTheNodeOfTouchedPages) {
  std::vector<char> buffer(1 << 20, 1);  // touched: its pages exist
  const auto node = memory_numa_node(buffer.data(), buffer.size());
  if (!node) GTEST_SKIP() << "the kernel does not report page placement here (move_pages unavailable)";
  EXPECT_GE(*node, 0);
  // A node this machine has: sysfs lists it (node ids may have gaps, so the directory, not a count).
  if (std::filesystem::exists("/sys/devices/system/node/node0"))
    EXPECT_TRUE(std::filesystem::is_directory("/sys/devices/system/node/node" + std::to_string(*node))) << *node;
  EXPECT_FALSE(memory_numa_node(nullptr, 10).has_value());
}
#endif

}  // namespace
}  // namespace ceilings
