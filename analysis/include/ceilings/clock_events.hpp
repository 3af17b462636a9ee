// NVML's clock-event ("throttle") reason bits (nvmlClocksEventReasons), their names, and which of them
// mean that something other than the workload held the clock down. One table for bench and analysis.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace ceilings::clock_events {

constexpr std::uint64_t kGpuIdle = 0x1;
constexpr std::uint64_t kApplicationsClocksSetting = 0x2;
constexpr std::uint64_t kSwPowerCap = 0x4;
constexpr std::uint64_t kHwSlowdown = 0x8;
constexpr std::uint64_t kSyncBoost = 0x10;
constexpr std::uint64_t kSwThermalSlowdown = 0x20;
constexpr std::uint64_t kHwThermalSlowdown = 0x40;
constexpr std::uint64_t kHwPowerBrakeSlowdown = 0x80;
constexpr std::uint64_t kDisplayClockSetting = 0x100;

// The hardware (heat, a power brake, a failing supply) held the clock down: never how a GPU is meant to run.
constexpr std::uint64_t kHardwareSlowdownMask = kHwSlowdown | kSwThermalSlowdown | kHwThermalSlowdown | kHwPowerBrakeSlowdown;
// Any reason that lowers the clock below what the workload asked for (idle, application clocks and sync
// boost are not slowdowns); the software power cap is how a GPU runs at full load, but it is one.
constexpr std::uint64_t kSlowdownMask = kSwPowerCap | kHardwareSlowdownMask;

// "sw_power_cap,hw_thermal_slowdown"; "none" for 0; bits NVML may add later: "other".
std::string names(std::uint64_t bits);

// A mask as a profile records it (a JSON number, so a double): its bits; nullopt for a negative, fractional,
// too large or non-finite number, which no mask is.
std::optional<std::uint64_t> from_number(double recorded);

}  // namespace ceilings::clock_events
