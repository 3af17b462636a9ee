// Telemetry around a measurement: a thread polls NVML (SM and memory clock, power, temperature,
// clock-event reasons) while the samples run; a slowdown reason seen at any point flags the result.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

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
  std::uint64_t throttle_reasons = 0;  // OR of every reading's reasons
  bool throttled = false;              // a slowdown reason (nvml::kSlowdownMask) was seen
};

class TelemetrySampler {
 public:
  explicit TelemetrySampler(std::shared_ptr<nvml::Device> device, double period_s = 0.02);
  ~TelemetrySampler();
  TelemetrySampler(const TelemetrySampler&) = delete;
  TelemetrySampler& operator=(const TelemetrySampler&) = delete;

  void start();
  TelemetrySummary stop();

 private:
  struct Reading {
    double sm_hz = 0, mem_hz = 0, power_w = 0, temp_c = 0;
    std::uint64_t reasons = 0;
    bool sm_ok = false, mem_ok = false, power_ok = false, temp_ok = false, reasons_ok = false;
  };
  Reading read() const;
  void loop();

  std::shared_ptr<nvml::Device> device_;
  double period_s_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_requested_ = false;
  std::vector<Reading> readings_;
};

}  // namespace ceilings::bench
