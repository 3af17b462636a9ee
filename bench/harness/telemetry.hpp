// Telemetry around a measurement: a thread polls NVML (SM and memory clock, power, temperature,
// clock-event reasons) while the samples run; a slowdown reason seen at any point flags the result,
// and the share of readings under each kind of slowdown and NVML's violation time say how much.
// Host code only (no CUDA), so the CPU tests drive it with the fake NVML.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "ceilings/timeline.hpp"

namespace ceilings::nvml {
class Device;
}

namespace ceilings::bench {

struct TelemetrySummary {
  bool available = false;  // false: no NVML, every number below is meaningless
  int readings = 0;
  double sm_clock_hz_median = 0, sm_clock_hz_min = 0;
  double mem_clock_hz_median = 0;
  double power_w_median = 0, power_w_max = 0;
  double temp_c_max = 0;
  std::uint64_t throttle_reasons = 0;  // OR of every reading's reasons (ceilings/clock_events.hpp)
  bool throttled = false;              // a slowdown reason (clock_events::kSlowdownMask) was seen
  // How much of the time, not only whether: of the reason_readings readings whose reasons NVML answered,
  // the share under the software power cap and the share under a hardware slowdown
  // (clock_events::kHardwareSlowdownMask).
  int reason_readings = 0;
  double power_cap_share = 0, hw_slowdown_share = 0;
  // Host wall time from the first reading to the last, and how much of it NVML's cumulative violation
  // counters say the power or the thermal policy held the clocks below their maximum (unset where the
  // driver does not count it, or the counter went backwards). NVML may advance these counters in steps,
  // so over a window of a few hundred ms they are coarse; the shares above are the finer view.
  double window_s = 0;
  std::optional<double> power_violation_s, thermal_violation_s;
  // The energy the board used over the window (NVML's cumulative counter) and the mean power it gives.
  // Unset where the driver does not count it, and for windows under kMinEnergyWindowS: NVML refreshes the
  // counter periodically rather than on each call, so a short window's difference is off by a refresh.
  static constexpr double kMinEnergyWindowS = 1.0;
  std::optional<double> energy_j, power_mean_w;
};

class TelemetrySampler {
 public:
  explicit TelemetrySampler(std::shared_ptr<nvml::Device> device, double period_s = 0.02);
  ~TelemetrySampler();
  TelemetrySampler(const TelemetrySampler&) = delete;
  TelemetrySampler& operator=(const TelemetrySampler&) = delete;

  void start();
  TelemetrySummary stop();
  // After stop(): every reading with its time since start(), for a time series (ceilings/timeline.hpp).
  std::vector<TimedReading> timed_readings() const;

 private:
  struct Reading {
    double t_s = 0;  // since start()
    double sm_hz = 0, mem_hz = 0, power_w = 0, temp_c = 0;
    std::uint64_t reasons = 0;
    bool sm_ok = false, mem_ok = false, power_ok = false, temp_ok = false, reasons_ok = false;
  };
  // NVML's cumulative counters, read at the start and the end of the window; unset where not answered.
  struct Counters {
    std::optional<std::uint64_t> power_violation_ns, thermal_violation_ns, energy_mj;
  };
  Reading read() const;
  Counters read_counters() const;
  void loop();

  std::shared_ptr<nvml::Device> device_;
  double period_s_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_requested_ = false;
  std::vector<Reading> readings_;
  Counters counters_at_start_;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace ceilings::bench
