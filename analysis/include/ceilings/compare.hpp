// Side-by-side comparison of devices (measured profiles and datasheet entries): ceilings as rows,
// devices as columns, measured and datasheet values and their ratio. Feeds `ceilings compare`.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ceilings/profile.hpp"
#include "ceilings/table.hpp"

namespace ceilings {

struct CompareDevice {
  std::string label;   // column heading
  std::string origin;  // the file or datasheet name as given
  bool from_profile = false;
  std::optional<Profile> profile;
  std::string gpu;  // datasheet entry name (profile's device when the table knows it)
};

// A file that exists is a profile; anything else must name a datasheet entry (near matches otherwise).
CompareDevice load_compare_device(const std::string& spec);

struct CompareCell {
  std::optional<double> measured, datasheet;
  // The measured value ran under a power cap or a slowdown (Ceiling::throttled_known): nullopt where nothing was
  // measured or no telemetry read the GPU.
  std::optional<bool> throttled;
  // The measured median's relative standard error (Ceiling::median_standard_error), where a profile gives one.
  std::optional<double> standard_error;
  // The hardware slowdowns it was measured under (clock_events::kHardwareSlowdownMask bits: heat, a power brake):
  // not the GPU's normal rate, unlike the power cap every GPU runs into at full load. 0 where none was recorded.
  std::uint64_t hardware_slowdowns = 0;
  // The median SM clock over the measurement, where telemetry read it.
  std::optional<double> sm_clock_hz;
  // Why a profile has no measured value for a ceiling it names: "failed" (its errors), "cut short" (an error a
  // timeout or an interrupt made: cut_short_reason), "skipped" (its skipped list) or "unverified" (measured, its
  // verification failed); empty where it has one or names none.
  std::string status;
  std::optional<double> ratio() const {
    if (!measured || !datasheet || *datasheet <= 0) return std::nullopt;
    return *measured / *datasheet;
  }
};
struct CompareRow {
  std::string ceiling, unit;
  std::vector<CompareCell> cells;  // one per device
};
struct Comparison {
  std::vector<CompareDevice> devices;
  std::vector<CompareRow> rows;
  // Where the profiles were measured under conditions that can move a ratio as much as the hardware does, one
  // sentence each (measurement_condition_notes); empty where nothing of that differs.
  std::vector<std::string> condition_notes;
};

// What a profile was measured under, as (field, value) rows for people: power limit, the GPU's most SM clock,
// ECC, driver, CUDA, cuBLAS, ceilings (and its commit), its measurement code, the host's CPU; "?" where the
// profile does not record it.
std::vector<std::pair<std::string, std::string>> measurement_conditions(const Profile& p);
// Confidential computing as the conditions say it: "on", "on (<mode>)", "off", or "?" where not recorded.
std::string confidential_computing_text(const Profile& p);
// The profiles' differences in what they were measured under, one sentence each:
// - software (driver, CUDA, cuBLAS, and what measured it: the measurement code where both record one, else the
//   release and commit): a GEMM or copy kernel of another release is another measurement, not another GPU;
// - a power limit below the GPU's datasheet TDP (its compute ceilings ran capped lower than the datasheet's GPU),
//   or, for one GPU model compared with itself, another power limit;
// - one GPU model: ceilings measured, neither under the power cap nor a slowdown, at median SM clocks more than 5%
//   apart from the first profile's of that model, at least 3 of them and a quarter of those compared (application
//   clocks or a locked clock set another way move them all);
// - another host CPU: pageable copies, launch and small-copy latency go with the host.
std::vector<std::string> measurement_condition_notes(const Comparison& c);
// The profiles' measurement_conditions side by side: one row per field, one column per profile (its device_key).
Table conditions_table(const Comparison& c);

// Rows: every ceiling any profile measured, plus the datasheet's headline ceilings (gemm per data type,
// hbm, pcie, nvlink) when a datasheet entry is compared, plus memory capacity. After a ceiling that a
// profile measured with its mean power (detail.power_mean_w: the sustained GEMMs), a row "<ceiling> per W"
// (unit "<unit>/W"): the value over that mean power, beside the datasheet peak over the TDP.
Comparison compare_devices(std::vector<CompareDevice> devices);

// Like for like: measured / measured when both devices were measured, else datasheet / datasheet.
std::optional<double> vs_first(const CompareCell& first, const CompareCell& other);
// Which of the two vs_first used: "measured", "datasheet", or nullopt when it has no value.
std::optional<std::string> vs_first_basis(const CompareCell& first, const CompareCell& other);
// Whether a measured vs_first lies within 2 standard errors of the two medians (their relative standard errors
// added in quadrature) of 1: a difference the measurements cannot tell from noise. nullopt where vs_first is not
// measured against measured or a cell has no standard error.
std::optional<bool> vs_first_within_noise(const CompareCell& first, const CompareCell& other);

// The short key a device's columns go by in the tables (A, B, ... Z, then D27, ...), its label said once in a
// legend (review 108: a full label in every header made a table of two devices 289 columns wide).
std::string device_key(std::size_t index);
// "A: NVIDIA H200 (vm)" per device, one per line.
std::string device_legend(const Comparison& c, Format format);

// Columns per device (by its device_key): measured, datasheet, measured/datasheet; then each device relative to the
// first (vs_first; a datasheet-to-datasheet ratio is marked "(ds)"; a latency's "(slower)" or "(faster)").
// A throttled measured value gets " *", one measured under a hardware slowdown " !" (the power cap is how a GPU
// runs; heat or a power brake is not); a ceiling the profile failed, skipped or could not verify says so.
Table comparison_table(const Comparison& c);
// The same for a file (`--format csv`): numbers in SI base units and plain ratios, the unit in a column of its
// own, each device's throttled flag and each ratio's basis beside it.
Table comparison_csv_table(const Comparison& c);
json comparison_json(const Comparison& c);

}  // namespace ceilings
