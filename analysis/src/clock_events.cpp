// Names of NVML's clock-event reason bits.
#include "ceilings/clock_events.hpp"

#include <cmath>
#include <utility>

namespace ceilings::clock_events {

std::string names(std::uint64_t bits) {
  static const std::pair<std::uint64_t, const char*> table[] = {
      {kGpuIdle, "gpu_idle"},
      {kApplicationsClocksSetting, "applications_clocks_setting"},
      {kSwPowerCap, "sw_power_cap"},
      {kHwSlowdown, "hw_slowdown"},
      {kSyncBoost, "sync_boost"},
      {kSwThermalSlowdown, "sw_thermal_slowdown"},
      {kHwThermalSlowdown, "hw_thermal_slowdown"},
      {kHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
      {kDisplayClockSetting, "display_clock_setting"},
  };
  std::string out;
  std::uint64_t known = 0;
  for (const auto& [bit, name] : table) {
    known |= bit;
    if (bits & bit) out += (out.empty() ? "" : ",") + std::string(name);
  }
  if (bits & ~known) out += (out.empty() ? "" : ",") + std::string("other");
  return out.empty() ? "none" : out;
}

std::optional<std::uint64_t> from_number(double recorded) {
  if (!(recorded >= 0) || recorded >= 18446744073709551616.0 || std::floor(recorded) != recorded) return std::nullopt;
  return static_cast<std::uint64_t>(recorded);
}

}  // namespace ceilings::clock_events
