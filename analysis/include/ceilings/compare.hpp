// Side-by-side comparison of devices (measured profiles and datasheet entries): ceilings as rows,
// devices as columns, measured and datasheet values and their ratio. Feeds `ceilings compare`.
#pragma once
#include <optional>
#include <string>
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
};

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

// Columns per device: measured, datasheet, measured/datasheet; then each device relative to the first
// (vs_first; a datasheet-to-datasheet ratio is marked "(ds)").
// A throttled measured value gets " *".
Table comparison_table(const Comparison& c);
// The same for a file (`--format csv`): numbers in SI base units and plain ratios, the unit in a column of its
// own, each device's throttled flag and each ratio's basis beside it.
Table comparison_csv_table(const Comparison& c);
json comparison_json(const Comparison& c);

}  // namespace ceilings
