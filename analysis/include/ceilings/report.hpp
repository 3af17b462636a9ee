// The ceilings table of a profile, as `ceilings measure` and `ceilings show` print it.
#pragma once
#include <string>

#include "ceilings/profile.hpp"
#include "ceilings/table.hpp"

namespace ceilings {

// The datasheet value for a ceiling: the embedded table's for a GPU it knows (none where the table leaves that
// figure out), else the one the profile recorded (written from the table of the version that measured it). A
// profile's own figure never replaces the table's, nor stands in for one it leaves out: a hand-edited 3.2 TB/s
// "datasheet" had let a slow H200 pass qualify, and B300's INT8 figure an older build stored failed a healthy
// GPU. None for a MIG instance (the figures are the whole GPU's).
std::optional<double> datasheet_for(const Profile& profile, const Ceiling& ceiling);
// Where datasheet_for's figures come from, for people: "the built-in table's H200", or that the table does not
// know the GPU (and whether the profile's own recorded figures are shown); "" for a MIG instance (none apply).
std::string datasheet_source(const Profile& profile);

// Rows: ceiling, value, datasheet, % of datasheet, cv, samples, SM clock, throttled (the slowdown reasons
// recorded, e.g. "sw_power_cap", else yes or no): the measured ceilings.
Table ceilings_table(const Profile& profile);
// Rows: ceiling, status (skipped, ERROR), reason: the cases not measured, shown under ceilings_table.
Table not_measured_table(const Profile& profile);
// The same rows for a file (`--format csv`): numbers in SI base units as they are stored (value, datasheet, the
// fraction of it, cv as a fraction, sm_clock_hz), the unit in a column of its own, and the skipped and failed
// ceilings with their reasons.
Table ceilings_csv_table(const Profile& profile);
// A JSON record as a file reads it (`--format csv` of show --ceiling and specs NAME): one (field, value) row per
// leaf, a dotted path per field ("detail.timeline.3.rate"), numbers in full and in the record's own (SI) units.
Table json_fields_table(const json& record);
// Records as rows, one column per leaf path any of them has (`leading` first, then in first-seen order), empty
// where one lacks it.
Table json_records_table(const std::vector<json>& records, const std::vector<std::string>& leading = {});
// A number as a csv cell: the shortest text that reads back as the same double; "" where there is none.
std::string csv_number(const std::optional<double>& v);
// The header lines above the table: device, host, when, which tool.
std::string profile_summary(const Profile& profile);
// The whole `show` output in one format (json: the ceilings with numbers, not display strings).
std::string render_profile(const Profile& profile, Format format);

// Whether a ceiling was measured throttled, why, and how much of the time: "no", or "yes: sw_power_cap
// (power cap in 12 of 15 telemetry readings; the power limit held the clocks 1.20 s of 1.50 s)", from
// the throttled flag and the telemetry counters in its detail (throttle_reasons, *_readings,
// *_violation_s, telemetry_window_s).
std::string throttle_text(const Ceiling& ceiling);
// Whether a ceiling per watt of GPU power means something: compute (FLOP/s, OP/s) and HBM, where the GPU's
// power is the cost; not a PCIe or peer copy, nor a latency.
bool per_watt_applies(const std::string& ceiling_name, const std::string& unit);
// "12 of 15 telemetry readings" from the detail's count_key and reason_readings; "" where not recorded.
std::string readings_text(const Ceiling& ceiling, const char* count_key);

// `show --ceiling NAME`: one ceiling in full -- its measurement (value, spread, clocks, power), how it
// was obtained (benchmark case and detail), the size or working-set sweep behind it and, for a peer
// ceiling, the GPU pair matrix. json: the ceiling as the profile stores it. An unknown name is an
// InputError that lists the ceilings there are.
std::string render_ceiling_detail(const Profile& profile, const std::string& name, Format format);

}  // namespace ceilings
