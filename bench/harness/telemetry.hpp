// Telemetry around a measurement: a thread polls NVML (SM and memory clock, power, temperature,
// clock-event reasons) while the samples run, and the measuring thread reads it once more while a sample's work
// is known to run (read_during_work); a slowdown reason seen at any point flags the result,
// and the readings under each kind of slowdown and NVML's violation time say how much of the time.
// For a long back-to-back window (sustained mode) it also follows the energy counter.
// Host code only (no CUDA), so the CPU tests drive it with the fake NVML.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
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
  // The readings summarised below: those taken while the samples ran. The two at the window's edges (start() and
  // stop(), each with the stream drained) are left out where any other was taken, and are all a window has only
  // when nothing read it during its work.
  int readings = 0;
  // The readings the measuring thread took during a sample's work (read_during_work; a short series' clock-only
  // ones too, which are among the `readings` summarised where the work still ran), and the longest time one of its
  // calls kept that thread, a wait for the polling thread's reading included (a call that took no reading too): the
  // next sample waits for it, so a call longer than the rest of a short sample's work lengthens the idle gap.
  int work_readings = 0;
  double work_read_max_s = 0;
  double sm_clock_hz_median = 0, sm_clock_hz_min = 0;
  double mem_clock_hz_median = 0;
  // NVML's power reading (on Ampere, except GA100, and newer an average over the last second, so a window
  // much shorter than that reads mostly what ran before it).
  double power_w_median = 0, power_w_max = 0;
  // NVML's instantaneous power (field NVML_FI_DEV_POWER_INSTANT), median and maximum of the readings
  // summarised, where the driver answers the field: point samples of this window's draw (a short case has
  // only a few of them).
  int power_instant_readings = 0;
  std::optional<double> power_instant_w_median, power_instant_w_max;
  double temp_c_max = 0;
  std::uint64_t throttle_reasons = 0;  // OR of every reading's reasons (ceilings/clock_events.hpp)
  bool throttled = false;              // a slowdown reason (clock_events::kSlowdownMask) was seen
  // How much of the time, not only whether: of the reason_readings readings whose reasons NVML answered,
  // how many were under the software power cap, and how many under a hardware slowdown
  // (clock_events::kHardwareSlowdownMask). Counts, not shares: 1 of 750 is not "0%", and 1 of 2 not "50%".
  int reason_readings = 0, power_cap_readings = 0, hw_slowdown_readings = 0;
  // Host wall time from the first reading to the last.
  double window_s = 0;
  // How much of the window NVML's cumulative violation counters say the power or the thermal policy held
  // the clocks below their maximum, at most the window. Only for windows of kMinCounterWindowS or more
  // (the counters move in steps, so a shorter window's difference is mostly step), and unset where the
  // driver does not count it or a counter went backwards (a driver reload).
  static constexpr double kMinCounterWindowS = 1.0;
  std::optional<double> power_violation_s, thermal_violation_s;
  // With Energy::kFollow: the energy counter between its first and its last change in the window (NVML
  // refreshes it periodically, so whole refresh intervals are measured, timed by the 20 ms polling), and
  // the mean power it gives. Unset with fewer than 3 changes, over an interval under
  // kMinEnergyIntervalS, or where the counter is not answered or went backwards.
  static constexpr double kMinEnergyIntervalS = 2.0;
  std::optional<double> energy_j, energy_interval_s, power_mean_w;
};

// What a reading the measuring thread took during a sample's work saw (read_during_work): that sample's own clock,
// its SM clock and clock-event reasons read while the work still ran.
struct WorkReading {
  std::optional<double> sm_hz;           // where NVML answered
  std::optional<std::uint64_t> reasons;  // its clock-event reasons (ceilings/clock_events.hpp), where answered
};

class TelemetrySampler {
 public:
  // kFollow: poll the energy counter too, for the mean power of a long back-to-back window (sustained
  // mode); ordinary cases' windows hold host gaps between samples, which would read low.
  enum class Energy { kIgnore, kFollow };
  explicit TelemetrySampler(std::shared_ptr<nvml::Device> device, double period_s = 0.02,
                            Energy energy = Energy::kIgnore);
  ~TelemetrySampler();
  TelemetrySampler(const TelemetrySampler&) = delete;
  TelemetrySampler& operator=(const TelemetrySampler&) = delete;

  void start();
  TelemetrySummary stop();  // without a start, or a second time: an empty summary
  // Called by the measuring thread once a sample's work is queued and running (the blocking kernel released,
  // the stream not yet waited for): takes a reading unless one was taken during the work less than a polling
  // period ago. A window shorter than the period (a GEMM burst of a few ms samples) has no polled reading; this
  // one is its reading of the GPU at work. Nothing before start() or after stop().
  // `each_sample` (a short series that keeps each sample's clock: a GEMM burst's samples come every few ms, and
  // the period would leave most of them without one): where the period has no reading due, the SM clock and the
  // clock-event reasons alone (two queries; a full reading's six outlast a tensor-core burst's 3-4 ms sample),
  // summarised with the window's readings where the work still ran; it waits up to kMaxWaitForReadingMs for a
  // reading the polling thread has in flight, then, unless `still_working` says the work ended meanwhile, takes its
  // own.
  // Returns the sample's SM clock and reasons, read first, where `still_working` (asked right after them; unset:
  // true) says the work had not ended by then; nullopt where it took no reading or the work was over (one partly
  // of the GPU at rest is not the sample's; a full reading still counts in the window's summary).
  std::optional<WorkReading> read_during_work(bool each_sample = false,
                                              const std::function<bool()>& still_working = {});
  static constexpr int kMaxWaitForReadingMs = 100;
  // The zero of the readings' times (set by start(), with or without NVML), for timing work against them.
  std::chrono::steady_clock::time_point started() const { return started_; }
  // After stop(): every reading with its time since start(), for a time series (ceilings/timeline.hpp).
  std::vector<TimedReading> timed_readings() const;

 private:
  struct Reading {
    double t_s = 0;  // since start()
    double sm_hz = 0, mem_hz = 0, power_w = 0, temp_c = 0;
    std::optional<double> power_instant_w;
    std::uint64_t reasons = 0;
    std::optional<std::uint64_t> energy_mj;
    bool sm_ok = false, mem_ok = false, power_ok = false, temp_ok = false, reasons_ok = false;
    bool edge = false;  // taken by start() or stop(), with the stream drained
    bool clock_during_work = true;  // read(): `still_working` said yes once the SM clock and reasons were read
    bool clock_only = false;        // the SM clock and reasons alone (a short series' sample)
  };
  // NVML's cumulative violation times, read at the start and the end of the window.
  struct Violations {
    std::optional<std::uint64_t> power_ns, thermal_ns;
  };
  // The SM clock and the clock-event reasons first; then, where `clock_only` is false, the rest. `still_working`
  // is asked right after the first two: whether the work was still running when they had been read.
  Reading read(bool clock_only = false, const std::function<bool()>* still_working = nullptr) const;
  Violations read_violations() const;
  void loop();
  void summarise_energy(TelemetrySummary& s) const;

  std::shared_ptr<nvml::Device> device_;
  double period_s_;
  Energy energy_;
  // Set when the driver says it has no instantaneous power field: not asked again 50 times a second.
  // Only read() touches it, under read_mutex_ (the polling thread and the measuring thread both read).
  mutable bool instant_absent_ = false;
  mutable std::mutex read_mutex_;
  // read() under read_mutex_
  Reading locked_read(bool clock_only = false, const std::function<bool()>* still_working = nullptr) const;
  void insert_in_time_order(const Reading& r);  // into readings_, under mutex_
  // The time of the last full reading taken within the window (not an edge's, not a clock-only one), under mutex_.
  std::optional<double> last_full_reading_s() const;
  bool running_ = false;        // between start() and stop(), under mutex_
  // One thread is reading (mutex_ released): the other skips that moment, but a short series' sample waits for it
  // (read_done_) and takes its own reading.
  bool reading_in_flight_ = false;
  std::condition_variable read_done_;
  int work_readings_ = 0;           // read_during_work's readings since start(), under mutex_
  double work_read_max_s_ = 0;      // and the longest of them, host seconds
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_requested_ = false;
  std::vector<Reading> readings_;
  Violations violations_at_start_;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace ceilings::bench
