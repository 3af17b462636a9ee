// Device UUIDs as a profile writes them: CUDA's 16 bytes in nvidia-smi's spelling, and a MIG instance named
// apart from its board.
#pragma once
#include <optional>
#include <string>

namespace ceilings::nvml {
class Device;
}  // namespace ceilings::nvml

namespace ceilings::bench {

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" from CUDA's 16-byte uuid, as nvidia-smi prints it ("MIG-..." for
// a MIG instance's).
std::string format_uuid(const unsigned char bytes[16], const char* prefix = "GPU");
// The UUID a profile names a CUDA device by, and the board's where that differs. NVML (by bus id) finds the
// board; in MIG mode CUDA sees one instance of it, and cudaDeviceProp::uuid is the instance's own: written
// "MIG-..." as CUDA_VISIBLE_DEVICES and nvidia-smi -L take it, with the board's UUID beside it (empty where
// NVML could not give it). Without NVML, or where NVML cannot say whether the board is split, CUDA's "GPU-...".
struct DeviceUuids {
  std::string uuid, board_uuid;
  std::optional<bool> mig;
};
DeviceUuids device_uuids(const unsigned char cuda_uuid[16], const nvml::Device* nvml_dev);

}  // namespace ceilings::bench
