// Device UUIDs as a profile writes them (CUDA's bytes, NVML's board, MIG instances): host C++ over the NVML
// loader, so the CPU tests drive it with the fake NVML.
#include "device_uuid.hpp"

#include <cstdio>

#include "nvml.hpp"

namespace ceilings::bench {

std::string format_uuid(const unsigned char b[16], const char* prefix) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", prefix, b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return buf;
}

DeviceUuids device_uuids(const unsigned char cuda_uuid[16], const nvml::Device* dev) {
  DeviceUuids ids;
  ids.uuid = format_uuid(cuda_uuid);
  if (!dev) return ids;
  const std::optional<std::string> board = dev->uuid().get();
  ids.mig = dev->mig_enabled().get();
  if (board && board->size() > 4 && board->substr(4) == ids.uuid.substr(4)) {
    ids.uuid = *board;  // CUDA sees the whole board
    return ids;
  }
  // CUDA's bytes are not the board's: an instance of a split board (NVML says so, or cannot say). Its own UUID,
  // and the board's beside it where NVML gives it.
  if ((ids.mig && *ids.mig) || (!ids.mig && board)) {
    ids.mig = true;
    ids.uuid = format_uuid(cuda_uuid, "MIG");
    if (board) ids.board_uuid = *board;
  }
  return ids;
}

}  // namespace ceilings::bench
