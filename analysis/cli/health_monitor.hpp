// Reads the health counters of one GPU through NVML (the run-time loader) into the analysis
// health model: a snapshot before, XID events while watching, a snapshot after. `ceilings health`
// and `ceilings measure` (the profile's `health` section) both use it.
#pragma once
#include <chrono>
#include <memory>
#include <string>

#include "ceilings/health.hpp"

namespace ceilings::nvml {
class Library;
class Device;
class XidWatch;
}  // namespace ceilings::nvml

namespace ceilings::cli {

// One snapshot of every metric in health_metric_catalog(); NVML "not supported" -> unsupported,
// an NVML error or an implausible value -> could not read.
// *gpu_lost (where given) is set when a call answered "GPU is lost" or "reset required": the GPU fell off the
// bus (what XID 79 reports), a fault rather than a counter that could not be read.
HealthSnapshot read_health_snapshot(const nvml::Library& lib, const nvml::Device& device, bool* gpu_lost = nullptr);

class HealthMonitor {
 public:
  // NVML device index. Throws IncompleteError (exit 3) naming the cause when NVML cannot be
  // loaded or initialised, there is no GPU, or the index does not exist.
  // With a PCI bus id ("0000:19:00.0") the GPU is opened by it (NVML's order can differ from CUDA's);
  // `index` is then only recorded.
  static std::unique_ptr<HealthMonitor> open(unsigned index, const std::string& pci_bus_id = "");
  // Same, but returns nullptr and says why instead of throwing (for `ceilings measure`).
  // `fault`, where given, says whether the GPU could not be opened for a fault of the node (lost, needing a reset,
  // its power cables, an interrupt problem: open's kExitFailed errors), not for NVML or a counter being unavailable.
  static std::unique_ptr<HealthMonitor> try_open(unsigned index, std::string* why, const std::string& pci_bus_id = "",
                                                 bool* fault = nullptr);
  ~HealthMonitor();

  void before();                // first snapshot; starts collecting XID events
  void watch(double seconds);   // waits for XID events for this long
  void after();                 // collects pending XID events, second snapshot
  const HealthSection& section() const { return section_; }

 private:
  HealthMonitor() = default;
  void drain(unsigned timeout_ms, std::chrono::steady_clock::time_point until);
  void record_gpu_lost(const std::string& when);  // an XID 79 in the section, once
  void read_kernel_xids();                        // the section's kernel_log
  std::shared_ptr<nvml::Library> lib_;
  std::unique_ptr<nvml::Device> device_;
  std::shared_ptr<nvml::XidWatch> xid_;
  std::chrono::steady_clock::time_point started_;
  HealthSection section_;
};

}  // namespace ceilings::cli
