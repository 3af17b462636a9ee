// A sustained window as a time series (gemm.<type>_sustained): the rate, SM clock and power per bin of
// about a second, so a drop under the power cap or heat shows when it came, not only that it did; and the
// energy it used, from NVML's counter polled through it.
// Built by ceilings-bench from its timed chunks and telemetry readings, carried as counters
// timeline_<k>_<field>, gathered by the converter into the ceiling's detail.timeline.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ceilings {

// One timed stretch of back-to-back work: when the host saw it finish (s since the window began), the
// GPU time it took by its events, and the work it did (FLOP, OP or B).
struct TimedChunk {
  double end_s = 0, seconds = 0, amount = 0;
};
// One telemetry reading: when it was taken (s since the window began) and what NVML answered (the energy
// counter, mJ, where the sampler follows it).
struct TimedReading {
  double t_s = 0;
  std::optional<double> sm_clock_hz, power_w, power_instant_w;
  std::optional<std::uint64_t> energy_mj;
};
struct TimelineBin {
  double start_s = 0, end_s = 0;
  double rate = 0;  // work / GPU time of the chunks that ended in the bin
  int chunks = 0;
  // Medians of the bin's readings: power_w is NVML's trailing 1 s average, power_instant_w its instantaneous
  // reading (field NVML_FI_DEV_POWER_INSTANT, where the driver answers it).
  std::optional<double> sm_clock_hz, power_w, power_instant_w;
  // The mean power by the energy counter's changes within the bin (energy_between_changes over at least
  // half the bin): what the bin itself drew, where NVML's power reading lags by its averaging.
  std::optional<double> power_mean_w;
};

// Bins of max(min_bin_s, window_s / max_bins) from 0, as many as fit when rounded, the last one ending at
// window_s (it takes the remainder and whatever falls past the end); a chunk belongs to the bin its end
// falls in, a reading to the bin of its time. Bins without a chunk are left out. A window that is not
// positive or finite, or a min_bin_s that is not positive, gives no bins.
std::vector<TimelineBin> build_timeline(const std::vector<TimedChunk>& chunks, const std::vector<TimedReading>& readings,
                                        double window_s, double min_bin_s = 1.0, int max_bins = 30);

// NVML's energy counter polled through a window: when (s since the window began) and what it answered
// (mJ since the driver loaded; unset: not answered).
struct EnergyReading {
  double t_s = 0;
  std::optional<std::uint64_t> mj;
};
struct EnergyFigure {
  double joules = 0, interval_s = 0, mean_w = 0;
};
// The energy between the counter's first and its last change, and the mean power it gives. NVML refreshes
// the counter periodically, so this measures whole refresh intervals, timed as finely as it was polled.
// nullopt with fewer than min_changes changes, over an interval under min_interval_s, or where a reading
// went unanswered or the counter went backwards (a driver reload).
std::optional<EnergyFigure> energy_between_changes(const std::vector<EnergyReading>& readings, double min_interval_s,
                                                   int min_changes = 3);

// The bins as benchmark counters: timeline_<k>_start_s, _end_s, _rate, _sm_clock_hz, _power_w,
// _power_instant_w, _power_mean_w (a field NVML did not answer is left out).
std::vector<std::pair<std::string, double>> timeline_counters(const std::vector<TimelineBin>& bins);
// "timeline_3_rate" -> {3, "rate"}; anything else (another counter, a malformed index) -> nullopt.
std::optional<std::pair<int, std::string>> parse_timeline_counter(const std::string& key);

}  // namespace ceilings
