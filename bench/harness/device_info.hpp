// The device fingerprint and host facts written into every profile (profile schema "device" and
// "host" objects), read from the CUDA runtime, cuBLAS, NVML (when present) and sysfs.
#pragma once
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "device_uuid.hpp"

namespace ceilings::nvml {
class Device;
class Library;
}  // namespace ceilings::nvml

namespace ceilings::bench {

nlohmann::json device_fingerprint(int device, const nvml::Library* nvml_lib, const nvml::Device* nvml_dev);
nlohmann::json host_facts(const std::string& pci_bus_id);
// CUDA's packed versions: 13000 -> "13.0"; cuBLAS 130100 -> "13.1.0".
std::string format_cuda_version(int packed);
std::string format_cublas_version(std::size_t packed);

}  // namespace ceilings::bench
