// NVML polling thread and its summary.
#include "telemetry.hpp"

#include <algorithm>
#include <chrono>

#include "ceilings/clock_events.hpp"
#include "ceilings/stats.hpp"
#include "nvml.hpp"

namespace ceilings::bench {

TelemetrySampler::TelemetrySampler(std::shared_ptr<nvml::Device> device, double period_s, Energy energy)
    : device_(std::move(device)), period_s_(period_s), energy_(energy) {}

TelemetrySampler::~TelemetrySampler() {
  if (thread_.joinable()) stop();
}

TelemetrySampler::Reading TelemetrySampler::read(bool clock_only, const std::function<bool()>* still_working) const {
  Reading r;
  r.t_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  // Values NVML returns that cannot be physical (a zero clock under load, a 1e9 degree die) are
  // dropped as "could not read", never averaged in.
  if (auto v = device_->clock_mhz(nvml::Clock::kSm).get(); v && *v > 0 && *v < 10000) {
    r.sm_hz = *v * 1e6;
    r.sm_ok = true;
  }
  // The reasons next to the clock: read last of six (about 4 ms), they came after a short sample's work had ended
  // (review 55).
  if (auto v = device_->throttle_reasons().get()) {
    r.reasons = *v;
    r.reasons_ok = true;
  }
  if (still_working && *still_working) r.clock_during_work = (*still_working)();
  r.clock_only = clock_only;
  if (clock_only) return r;
  if (auto v = device_->clock_mhz(nvml::Clock::kMemory).get(); v && *v > 0 && *v < 100000) {
    r.mem_hz = *v * 1e6;
    r.mem_ok = true;
  }
  if (auto v = device_->power_mw().get(); v && *v < 10'000'000) {
    r.power_w = *v / 1000.0;
    r.power_ok = true;
  }
  if (!instant_absent_) {
    const auto v = device_->field_value(nvml::kFieldPowerInstant, nvml::kPowerScopeGpu);
    if (v.ok() && v.value > 0 && v.value < 10'000'000) r.power_instant_w = v.value / 1000.0;
    instant_absent_ = v.unsupported() || v.code == nvml::kInvalidArgument || v.code == nvml::kNotFound;
  }
  if (auto v = device_->temperature_c().get(); v && *v < 200) {
    r.temp_c = *v;
    r.temp_ok = true;
  }
  if (energy_ == Energy::kFollow) r.energy_mj = device_->energy_mj().get();
  return r;
}

TelemetrySampler::Reading TelemetrySampler::locked_read(bool clock_only,
                                                       const std::function<bool()>* still_working) const {
  std::lock_guard<std::mutex> lock(read_mutex_);
  return read(clock_only, still_working);
}

TelemetrySampler::Violations TelemetrySampler::read_violations() const {
  Violations v;
  v.power_ns = device_->violation_time_ns(nvml::PerfPolicy::kPower).get();
  v.thermal_ns = device_->violation_time_ns(nvml::PerfPolicy::kThermal).get();
  return v;
}

void TelemetrySampler::start() {
  started_ = std::chrono::steady_clock::now();
  if (!device_) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    readings_.clear();
    work_readings_ = 0;
    work_read_max_s_ = 0;
    stop_requested_ = false;
    violations_at_start_ = read_violations();
    readings_.push_back(locked_read());
    readings_.back().edge = true;
    running_ = true;
  }
  thread_ = std::thread([this] { loop(); });
}

std::optional<double> TelemetrySampler::last_full_reading_s() const {
  for (auto r = readings_.rbegin(); r != readings_.rend(); ++r)
    if (!r->edge && !r->clock_only) return r->t_s;
  return std::nullopt;
}

std::optional<WorkReading> TelemetrySampler::read_during_work(bool each_sample,
                                                              const std::function<bool()>& still_working) {
  // What this call keeps the measuring thread from the next sample, a wait for the polling thread included.
  const auto from = std::chrono::steady_clock::now();
  const auto kept_s = [&from] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count();
  };
  std::unique_lock<std::mutex> lock(mutex_);
  if (!device_ || !running_) return std::nullopt;
  if (reading_in_flight_) {
    // The polling thread is reading now: its reading is of this moment already. A short series that keeps each
    // sample's own clock waits for it (a query is a few ms; a sample had been left without one, review 52), and
    // reads: the polling thread's reading may have begun before the sample's work did. Unless the work ended
    // while it waited: a reading then is not the sample's and only lengthens the gap before the next (review 58).
    if (!each_sample) return std::nullopt;
    read_done_.wait_for(lock, std::chrono::milliseconds(kMaxWaitForReadingMs),
                        [this] { return !reading_in_flight_ || !running_; });
    // A wait that ran out, or one the work ended during: no reading, and the time it kept the thread is counted.
    if (reading_in_flight_ || !running_ || (still_working && !still_working())) {
      work_read_max_s_ = std::max(work_read_max_s_, kept_s());
      return std::nullopt;
    }
  }
  // A full reading where the period has none of the work's due; else, for a short series, the clock alone.
  const double now_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  const std::optional<double> last = last_full_reading_s();
  const bool due = !last || now_s - *last >= period_s_;
  if (!due && !each_sample) return std::nullopt;
  reading_in_flight_ = true;
  lock.unlock();
  const Reading r = locked_read(/*clock_only=*/!due, still_working ? &still_working : nullptr);
  lock.lock();
  reading_in_flight_ = false;
  read_done_.notify_all();
  ++work_readings_;
  work_read_max_s_ = std::max(work_read_max_s_, kept_s());
  // The window's summary and time series: a full reading, and a clock-only one taken while the work ran (its clock
  // and reasons, the burst's own; review 58: a burst's hardware slowdown had been seen by its samples alone).
  if (due || r.clock_during_work) insert_in_time_order(r);
  if (!r.clock_during_work) return std::nullopt;
  WorkReading w;
  if (r.sm_ok) w.sm_hz = r.sm_hz;
  if (r.reasons_ok) w.reasons = r.reasons;
  return w;
}

void TelemetrySampler::insert_in_time_order(const Reading& r) {
  // The other thread may have added one while this was read.
  readings_.insert(std::upper_bound(readings_.begin(), readings_.end(), r,
                                    [](const Reading& a, const Reading& b) { return a.t_s < b.t_s; }),
                   r);
}

void TelemetrySampler::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_requested_) {
    if (cv_.wait_for(lock, std::chrono::duration<double>(period_s_), [this] { return stop_requested_; })) break;
    // The measuring thread read less than half a period ago (read_during_work): not the same moment twice.
    const double now_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    const std::optional<double> last = last_full_reading_s();
    if (reading_in_flight_ || (last && now_s - *last < period_s_ / 2)) continue;
    reading_in_flight_ = true;
    lock.unlock();
    const Reading r = locked_read();
    lock.lock();
    reading_in_flight_ = false;
    read_done_.notify_all();
    insert_in_time_order(r);
  }
}

TelemetrySummary TelemetrySampler::stop() {
  TelemetrySummary s;
  if (!device_ || !thread_.joinable()) return s;  // never started, or stopped already
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_requested_ = true;
    running_ = false;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  readings_.push_back(locked_read());
  readings_.back().edge = true;
  s.window_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  s.work_readings = work_readings_;
  s.work_read_max_s = work_read_max_s_;
  if (s.window_s >= TelemetrySummary::kMinCounterWindowS) {
    const Violations end = read_violations();
    // A counter that went backwards was reset (a driver reload): no difference, rather than a wrong one.
    // One that moved more than the window (its steps straddle the ends) held the clocks all of it.
    const double window = s.window_s;
    auto held_s = [window](const std::optional<std::uint64_t>& from, const std::optional<std::uint64_t>& to) {
      if (!from || !to || *to < *from) return std::optional<double>();
      return std::optional<double>(std::min(static_cast<double>(*to - *from) * 1e-9, window));
    };
    s.power_violation_s = held_s(violations_at_start_.power_ns, end.power_ns);
    s.thermal_violation_s = held_s(violations_at_start_.thermal_ns, end.thermal_ns);
  }
  summarise_energy(s);

  std::vector<double> sm, mem, power, instant;
  double temp_max = 0;
  bool any = false;
  // The edges count only where no reading from within the window has the SM clock (the summary's key reading).
  const bool inner = std::any_of(readings_.begin(), readings_.end(), [](const Reading& r) { return !r.edge && r.sm_ok; });
  int summarised = 0;
  for (const Reading& r : readings_) {
    if (inner && r.edge) continue;
    ++summarised;
    if (r.sm_ok) sm.push_back(r.sm_hz);
    if (r.mem_ok) mem.push_back(r.mem_hz);
    if (r.power_ok) power.push_back(r.power_w);
    if (r.power_instant_w) instant.push_back(*r.power_instant_w);
    if (r.temp_ok) temp_max = std::max(temp_max, r.temp_c);
    if (r.reasons_ok) {
      s.throttle_reasons |= r.reasons;
      s.reason_readings += 1;
      s.power_cap_readings += (r.reasons & clock_events::kSwPowerCap) ? 1 : 0;
      s.hw_slowdown_readings += (r.reasons & clock_events::kHardwareSlowdownMask) ? 1 : 0;
    }
    any = any || r.sm_ok || r.mem_ok || r.power_ok || r.temp_ok;
  }
  s.available = any && !sm.empty();
  s.readings = summarised;
  if (!sm.empty()) {
    s.sm_clock_hz_median = median(sm);
    s.sm_clock_hz_min = *std::min_element(sm.begin(), sm.end());
  }
  if (!mem.empty()) s.mem_clock_hz_median = median(mem);
  if (!power.empty()) {
    s.power_w_median = median(power);
    s.power_w_max = *std::max_element(power.begin(), power.end());
  }
  s.power_instant_readings = static_cast<int>(instant.size());
  if (!instant.empty()) {
    s.power_instant_w_median = median(instant);
    s.power_instant_w_max = *std::max_element(instant.begin(), instant.end());
  }
  s.temp_c_max = temp_max;
  s.throttled = (s.throttle_reasons & clock_events::kSlowdownMask) != 0;
  return s;
}

void TelemetrySampler::summarise_energy(TelemetrySummary& s) const {
  if (energy_ != Energy::kFollow) return;
  std::vector<EnergyReading> energy;
  for (const Reading& r : readings_) energy.push_back({r.t_s, r.energy_mj});
  if (const auto f = energy_between_changes(energy, TelemetrySummary::kMinEnergyIntervalS)) {
    s.energy_j = f->joules;
    s.energy_interval_s = f->interval_s;
    s.power_mean_w = f->mean_w;
  }
}

std::vector<TimedReading> TelemetrySampler::timed_readings() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<TimedReading> out;
  for (const Reading& r : readings_) {
    TimedReading t;
    t.t_s = r.t_s;
    if (r.sm_ok) t.sm_clock_hz = r.sm_hz;
    if (r.power_ok) t.power_w = r.power_w;
    t.power_instant_w = r.power_instant_w;
    t.energy_mj = r.energy_mj;
    out.push_back(t);
  }
  return out;
}

}  // namespace ceilings::bench
