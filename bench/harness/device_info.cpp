// Device fingerprint and host facts.
#include "device_info.hpp"

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "ceilings/host_topology.hpp"
#include "ceilings/profile.hpp"
#include "check.hpp"
#include "nvml.hpp"

namespace ceilings::bench {

using nlohmann::json;

std::string format_cuda_version(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

std::string format_cublas_version(std::size_t v) {
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
}

json device_fingerprint(int device, const nvml::Library* lib, const nvml::Device* dev) {
  cudaDeviceProp prop{};
  CEILINGS_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  char bus[32] = {};
  CEILINGS_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device));
  int runtime = 0, driver_api = 0;
  CEILINGS_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  CEILINGS_CUDA_CHECK(cudaDriverGetVersion(&driver_api));
  int clock_khz = 0, mem_clock_khz = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device);
  cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, device);
  cudaGetLastError();

  json j = {{"index", device},
            {"name", prop.name},
            {"uuid", format_uuid(reinterpret_cast<const unsigned char*>(prop.uuid.bytes))},
            {"pci_bus_id", bus},
            {"compute_capability", std::to_string(prop.major) + "." + std::to_string(prop.minor)},
            {"sm_count", prop.multiProcessorCount},
            {"memory_bytes", static_cast<std::uint64_t>(prop.totalGlobalMem)},
            {"l2_bytes", prop.l2CacheSize},
            {"memory_bus_width_bits", prop.memoryBusWidth},
            {"cuda_runtime", format_cuda_version(runtime)},
            {"cuda_driver_api", format_cuda_version(driver_api)},
            {"cublas", format_cublas_version(cublasLtGetVersion())},
            {"ecc", prop.ECCEnabled != 0},
            {"driver", nullptr}};  // NVML's driver version below; without NVML unknown (the driver's CUDA
                                     // version is cuda_driver_api, not a driver version)
  // Without NVML, the CUDA attributes give the maximum clocks (kHz).
  json clocks = {{"sm", clock_khz > 0 ? json(clock_khz * 1e3) : json(nullptr)},
                 {"memory", mem_clock_khz > 0 ? json(mem_clock_khz * 1e3) : json(nullptr)}};
  json pcie = {{"gen", nullptr}, {"width", nullptr}, {"max_gen", nullptr}, {"max_width", nullptr}};
  j["power_limit_w"] = nullptr;
  j["telemetry_source"] = "unavailable";
  if (lib && dev) {
    j["telemetry_source"] = "nvml";
    if (auto v = lib->driver_version().get()) j["driver"] = *v;
    if (auto v = lib->confidential_computing_settings().get()) {
      j["confidential_computing"] = v->on;
      if (!v->mode.empty()) j["confidential_computing_mode"] = v->mode;
    }
    const DeviceUuids ids = device_uuids(reinterpret_cast<const unsigned char*>(prop.uuid.bytes), dev);
    j["uuid"] = ids.uuid;
    if (!ids.board_uuid.empty()) j["board_uuid"] = ids.board_uuid;
    if (ids.mig) j["mig"] = *ids.mig;
    if (auto v = dev->ecc_enabled().get()) j["ecc"] = *v;
    if (auto v = dev->max_clock_mhz(nvml::Clock::kSm).get(); v && *v > 0) clocks["sm"] = *v * 1e6;
    if (auto v = dev->max_clock_mhz(nvml::Clock::kMemory).get(); v && *v > 0) clocks["memory"] = *v * 1e6;
    if (auto v = dev->enforced_power_limit_mw().get(); v && *v > 0) j["power_limit_w"] = *v / 1000.0;
    // Only readings a link can have (the profile reader refuses others).
    if (auto v = dev->pcie_link_gen().get(); v && ceilings::valid_pcie_gen(static_cast<int>(*v))) pcie["gen"] = *v;
    if (auto v = dev->pcie_link_width().get(); v && ceilings::valid_pcie_width(static_cast<int>(*v))) pcie["width"] = *v;
    if (auto v = dev->pcie_max_link_gen().get(); v && ceilings::valid_pcie_gen(static_cast<int>(*v))) pcie["max_gen"] = *v;
    if (auto v = dev->pcie_max_link_width().get(); v && ceilings::valid_pcie_width(static_cast<int>(*v)))
      pcie["max_width"] = *v;
    if (auto v = dev->pcie_gpu_max_link_gen().get(); v && ceilings::valid_pcie_gen(static_cast<int>(*v)))
      pcie["gpu_max_gen"] = *v;
  }
  j["clocks_max_hz"] = clocks;
  j["pcie"] = pcie;
  return j;
}

json host_facts(const std::string& pci_bus_id) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::ostringstream cpuinfo;
  cpuinfo << std::ifstream("/proc/cpuinfo").rdbuf();
  const std::string cpu = ceilings::cpu_model_from_cpuinfo(cpuinfo.str());
  // The same sysfs reading the pcie family pins by (either spelling of the PCI domain is accepted).
  const PciLocality loc = read_pci_locality(pci_bus_id);
  json numa = nullptr;
  if (loc.numa_node) numa = *loc.numa_node;
  // How many GPUs this process sees: the node's peer ceilings are the slowest pair among them, so fleet
  // compares them only between nodes of one size.
  json gpus = nullptr;
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess)
    gpus = count;
  else
    cudaGetLastError();
  return {{"hostname", host}, {"cpu", cpu}, {"numa_node", numa}, {"gpus_visible", gpus}};
}

}  // namespace ceilings::bench
