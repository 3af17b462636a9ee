// Rendering a profile's ceilings for people (table, markdown, csv) and programs (json).
#include "ceilings/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "ceilings/ceiling_families.hpp"
#include "ceilings/clock_events.hpp"
#include "ceilings/datasheet.hpp"
#include "ceilings/error.hpp"
#include "ceilings/stats.hpp"
#include "ceilings/transfer.hpp"
#include "ceilings/units.hpp"

namespace ceilings {

std::optional<double> datasheet_for(const Profile& profile, const Ceiling& c) {
  // The datasheet's figures are the whole GPU's: a MIG instance (a slice of its SMs and memory) has none.
  if (profile.device.is_mig()) return std::nullopt;
  // The built-in table decides for a GPU it knows, a figure it leaves out on purpose included (B300's INT8, whose
  // published figure is 30 times off): an older build's stored figure would fail a healthy GPU (review 33).
  if (const GpuSpec* spec = find_gpu(profile.device.name)) return datasheet_value(*spec, c.name, c.detail);
  return c.datasheet;  // a GPU the table does not know: what the build that measured it recorded
}

std::string datasheet_source(const Profile& p) {
  if (p.device.is_mig()) return "";
  if (const GpuSpec* spec = find_gpu(p.device.name)) return "the built-in table's " + spec->name;
  const bool stored = std::any_of(p.ceilings.begin(), p.ceilings.end(), [](const Ceiling& c) { return c.datasheet; });
  return p.device.name + " is not in the built-in datasheet table (`ceilings specs` lists it)" +
         (stored ? std::string(": the datasheet figures shown are those the profile recorded when it was measured")
                 : std::string(": no datasheet figures"));
}

namespace {

// The slowdown reasons a ceiling was measured under, from its detail (0 where none were recorded).
std::uint64_t slowdown_bits(const Ceiling& c) {
  return c.clock_event_reasons() & clock_events::kSlowdownMask;
}

// The table's throttled cell: which slowdown, at a glance (the power cap under load is how a GPU runs; a
// hardware slowdown is not), "yes" where the reasons were not recorded, "n/a" where no telemetry read the GPU.
std::string throttled_cell(const Ceiling& c) {
  if (const std::uint64_t bits = slowdown_bits(c)) return clock_events::names(bits);
  const auto t = c.throttled_known();
  return !t ? "n/a" : *t ? "yes" : "no";
}

// csv and JSON: true, false, or empty / null where not known.
std::string throttled_csv(const Ceiling& c) {
  const auto t = c.throttled_known();
  return !t ? "" : *t ? "true" : "false";
}

}  // namespace

Table ceilings_table(const Profile& p) {
  Table t;
  t.columns = {"ceiling", "value", "datasheet", "% datasheet", "cv", "samples", "SM clock", "throttled"};
  t.right_aligned = {false, true, true, true, true, true, true, false};
  for (const Ceiling& c : p.ceilings) {
    const auto ds = datasheet_for(p, c);
    // A number that failed its own check (no build writes one; a hand-made or foreign profile may hold it) is
    // marked, with no share of the datasheet, as `compare` marks it (review 83).
    t.add_row({c.name, format_quantity(c.value, c.unit) + (c.verified ? "" : " (unverified)"),
               ds ? format_quantity(*ds, c.unit) : "-",
               c.verified && ds && *ds > 0 ? format_percent(c.value / *ds) : "-", format_percent(c.cv, 2),
               std::to_string(c.samples),
               c.telemetry.available ? format_quantity(c.telemetry.sm_clock_hz, "Hz") : "n/a",
               throttled_cell(c)});
  }
  return t;
}

// The cases not measured, under the ceilings: each with its reason in a column of its own (review 94: the reason
// stood under the ceilings' "throttled" header).
Table not_measured_table(const Profile& p) {
  Table t;
  t.columns = {"ceiling", "status", "reason"};
  t.right_aligned = {false, false, false};
  for (const Skipped& s : p.skipped) t.add_row({s.name, "skipped", s.reason});
  for (const Skipped& s : p.errors) t.add_row({s.name, "ERROR", s.reason});
  return t;
}

// Empty where there is no number, or none a reader could take (JSON's dump writes a non-finite one as "null").
std::string csv_number(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? json(*v).dump() : std::string();
}

Table ceilings_csv_table(const Profile& p) {
  Table t;
  t.columns = {"ceiling", "status", "value", "unit", "datasheet", "fraction_of_datasheet", "cv", "samples",
               "sm_clock_hz", "throttled", "verified", "reason"};
  for (const Ceiling& c : p.ceilings) {
    const auto ds = datasheet_for(p, c);
    // An unverified value (a hand-made or foreign profile's) is no measurement to set against the datasheet.
    t.add_row({c.name, c.verified ? "measured" : "unverified", csv_number(c.value), c.unit, csv_number(ds),
               csv_number(c.verified && ds && *ds > 0 ? std::optional<double>(c.value / *ds) : std::nullopt),
               csv_number(c.cv),
               std::to_string(c.samples),
               csv_number(c.telemetry.available ? std::optional<double>(c.telemetry.sm_clock_hz) : std::nullopt),
               throttled_csv(c), c.verified ? "true" : "false", ""});
  }
  for (const Skipped& s : p.skipped) t.add_row({s.name, "skipped", "", "", "", "", "", "", "", "", "", s.reason});
  for (const Skipped& s : p.errors) t.add_row({s.name, "error", "", "", "", "", "", "", "", "", "", s.reason});
  return t;
}

std::string profile_summary(const Profile& p) {
  std::ostringstream os;
  const DeviceInfo& d = p.device;
  // Memory in GiB, as datasheets ("141 GB") and compare count it, with the GB `memory` and `roofline` count in.
  os << "device " << d.index << ": " << d.name << " (sm_" << d.compute_capability << ", " << d.sm_count << " SMs, "
     << format_capacity(static_cast<double>(d.memory_bytes)) << ", L2 "
     << format_quantity(static_cast<double>(d.l2_bytes), "B") << ")  uuid " << d.uuid << "  bus " << d.pci_bus_id
     << "\n";
  if (d.is_mig())
    os << "a MIG instance of " << (d.board_uuid.empty() ? "its board" : d.board_uuid)
       << ": no datasheet figure applies (the datasheet's are the whole GPU's)\n";
  if (d.confidential_computing.value_or(false))
    os << "confidential computing " << confidential_computing_text(true, d.confidential_computing_mode)
       << ": host<->device copies went through the driver's encrypted bounce buffers (not bounded by the link's "
          "rate), and there were no SM copies of host memory"
       << (d.nvlink_encrypted() ? "; peer copies over NVLink were encrypted too" : "") << "\n";
  os << "driver " << (d.driver.empty() ? "?" : d.driver) << ", CUDA runtime " << d.cuda_runtime << ", cuBLAS "
     << (d.cublas.empty() ? "?" : d.cublas) << "; host " << (p.hostname.empty() ? "?" : p.hostname)
     << (p.raw.contains("baseline") ? "; written " : "; measured ") << p.created << " by ceilings " << p.tool_version
     << (p.tool_git.empty() ? "" : " (" + p.tool_git + ")")
     << (p.tool_measurement_code.empty() ? "" : ", measurement code " + p.tool_measurement_code)
     << (p.quick.value_or(false) ? ", a --quick pass" : "") << "\n";
  os << "values: median over samples, bytes counted read + write (HBM) or once per direction (copies); "
        "datasheet % uses the vendor's peak\n";
  if (const std::string source = datasheet_source(p); !source.empty()) os << "datasheet: " << source << "\n";
  // A document that says what it is (a hand-written fixture: "not a measurement") says it here too.
  if (const auto note = p.note()) os << "NOTE: " << *note << "\n";
  // A run cut short (timeout, interrupt, crash) keeps its finished cases; say so before the table.
  if (const auto stopped = p.stopped_early()) {
    const json& m = p.raw["measure"];
    // The reader checked the types of what is there; null or absent reads as unknown.
    auto count = [&](const char* key) -> std::string {
      return m.contains(key) && m[key].is_number() ? std::to_string(m[key].get<std::int64_t>()) : "?";
    };
    os << "INCOMPLETE run: " << count("finished_cases") << " of " << count("cases") << " cases finished; " << *stopped
       << "\n";
  }
  return os.str();
}

std::string render_profile(const Profile& p, Format format) {
  if (format == Format::kJson) {
    // What the table and its header show: the device, host, tool, a document's note and an incomplete run's
    // measure record, and per ceiling the slowdowns by name.
    const json stored = profile_to_json(p);
    json out = {{"device", stored["device"]}, {"created", p.created}, {"ceilings", json::array()}};
    out["hostname"] = p.hostname.empty() ? json(nullptr) : json(p.hostname);
    out["tool"] = {{"version", p.tool_version},
                   {"git", p.tool_git.empty() ? json(nullptr) : json(p.tool_git)},
                   {"measurement_code", p.tool_measurement_code.empty() ? json(nullptr) : json(p.tool_measurement_code)}};
    out["note"] = p.note() ? json(*p.note()) : json(nullptr);
    if (p.raw.contains("measure")) out["measure"] = p.raw["measure"];
    for (const Ceiling& c : p.ceilings) {
      const auto ds = datasheet_for(p, c);
      json row = {{"name", c.name},         {"value", c.value},         {"unit", c.unit}, {"cv", c.cv},
                  {"samples", c.samples},   {"verified", c.verified}};
      const auto throttled = c.throttled_known();
      row["throttled"] = throttled ? json(*throttled) : json(nullptr);
      row["datasheet"] = ds ? json(*ds) : json(nullptr);
      row["fraction_of_datasheet"] = c.verified && ds && *ds > 0 ? json(c.value / *ds) : json(nullptr);
      row["sm_clock_hz"] = c.telemetry.available ? json(c.telemetry.sm_clock_hz) : json(nullptr);
      const std::uint64_t slowdowns = slowdown_bits(c);
      row["slowdowns"] = slowdowns ? json(clock_events::names(slowdowns)) : json(nullptr);
      out["ceilings"].push_back(row);
    }
    out["skipped"] = stored["skipped"];
    out["errors"] = stored["errors"];
    return out.dump(2) + "\n";
  }
  if (format == Format::kCsv) return render(ceilings_csv_table(p), format);
  // No build writes a profile without one case in it; a hand-made or cut one is said so, not shown as a header
  // over an empty table (review 83).
  std::string table = p.ceilings.empty() && p.skipped.empty() && p.errors.empty()
                          ? std::string("no ceiling, skipped case or failed case is recorded in this profile\n")
                          : p.ceilings.empty() ? std::string() : render(ceilings_table(p), format);
  if (!p.skipped.empty() || !p.errors.empty())
    table += (table.empty() ? "" : "\n") + render(not_measured_table(p), format);
  if (format == Format::kMarkdown) {
    std::string summary = profile_summary(p);
    std::string md;
    std::istringstream lines(summary);
    // Two trailing spaces: a line break, so the summary's lines do not run together into one paragraph
    for (std::string line; std::getline(lines, line);) md += "> " + line + "  \n";
    return md + "\n" + table;
  }
  return profile_summary(p) + "\n" + table;
}

namespace {

// A detail number in the unit its name says (ceilings-bench's counter names end in the unit); the
// peer family's per-device and pair summaries (dev_<i>, p2p_min/median/max), the GEMM search's timing of the
// configuration measured (search_rate), the side-by-side re-timing's rates (rerank_rate_<i>, with its slowest
// and fastest round's rerank_min_rate_<i> and rerank_max_rate_<i>) and the sustained window's slowest bin
// (rate_min) are in the ceiling's unit.
std::string detail_value(const std::string& key_as_stored, const json& v, const std::string& ceiling_unit) {
  if (!v.is_number()) return v.is_string() ? v.get<std::string>() : v.dump();
  const double x = v.get<double>();
  // A sample's key ends in its index (sample_sm_clock_hz_4): the unit is in the name before it.
  const auto sample = sample_key(key_as_stored);
  const std::string key = sample ? sample->field : key_as_stored;
  if (key == "sample_clock_reasons")
    if (const auto bits = clock_events::from_number(x)) return clock_events::names(*bits);
  auto ends = [&](const char* suffix) {
    const std::string s(suffix);
    return key.size() >= s.size() && key.compare(key.size() - s.size(), s.size(), s) == 0;
  };
  if (ends("bytes_per_second")) return format_quantity(x, "B/s");
  if (ends("flop_per_second")) return format_quantity(x, "FLOP/s");
  if (ends("_hz")) return format_quantity(x, "Hz");
  if (ends("_seconds") || ends("_s")) return format_quantity(x, "s");
  if (ends("bytes")) return format_quantity(x, "B");
  if (ends("_w")) return format_quantity(x, "W");
  if (ends("_j")) return format_quantity(x, "J");
  if (ends("_share") || ends("_share_of_max")) return format_percent(x, 1);
  if (key == "throttle_reasons")
    if (const auto bits = clock_events::from_number(x)) return clock_events::names(*bits);
  static const std::regex in_ceiling_unit("^(dev_[0-9]+|p2p_(min|median|max)|search_rate|rerank_(min_|max_)?rate_[0-9]+|rate_min)$");
  if (std::regex_match(key, in_ceiling_unit)) return format_quantity(x, ceiling_unit);
  // A count whole (flop 248034361344, not 2.48034e+11), anything else to 6 significant digits
  if (x == std::floor(x) && std::fabs(x) < 1e15) return format_fixed(x, 0);
  std::ostringstream os;
  os << x;
  return os.str();
}

}  // namespace

namespace {

// The power of a measurement as its readings allow. NVML's power reading is a trailing average over up
// to 1 s (Ampere, except GA100, and newer); the instantaneous readings, where recorded, are point samples
// taken in the window itself (say how many), though they too can predate a very short one (see below).
std::string power_text(const Ceiling& c) {
  const std::string reading = format_quantity(c.telemetry.power_w, "W");
  const auto instant = c.detail_number("power_instant_w");
  if (!instant) return reading;
  const auto n = c.detail_number("power_instant_readings");
  return format_quantity(*instant, "W") + " (instantaneous, median of " + (n ? format_fixed(*n, 0) : std::string("?")) +
         " readings; NVML's power reading " + reading + ")";
}

// Over a window shorter than NVML's averaging, its power reading is mostly what ran before: say so. The
// instantaneous readings may lag such a window as well: on the H200 (driver 580, 2026-11-30) GEMM bursts of
// 23 ms (bf16 at 816 TFLOP/s) and of 102-107 ms (bf16, tf32 and fp16 at 8192^3) read 123-225 W, idle power,
// while others of 41-118 ms (HBM copy, 614 W; fp64 GEMM, 789-854 W) read what their load draws.
std::string short_window_note(const Ceiling& c) {
  const auto window = c.detail_number("telemetry_window_s");
  if (!window || *window >= 1.0) return "";
  std::string note = " (NVML's power reading is a trailing average over up to 1 s; the window lasted " +
                     format_quantity(*window, "s");
  if (c.detail_number("power_instant_w")) note += "; instantaneous readings can also predate a window this short";
  return note + ")";
}

// A list of cases in the detail (detail.sweep, detail.variants) as rows: case, value (in the point's own unit
// where it has one), cv. No rows where the detail has no such list.
Table cases_table(const Ceiling& c, const char* key) {
  Table t;
  t.columns = {"case", "value", "cv"};
  t.right_aligned = {false, true, true};
  if (!c.detail.is_object() || !c.detail.contains(key) || !c.detail[key].is_array()) return t;
  for (const json& pt : c.detail[key]) {
    if (!pt.is_object()) continue;
    // A null unit is no unit, as the profile's reader takes it (review 99: json::value threw on it, exit 3).
    auto text = [&](const char* field, const std::string& otherwise) {
      return pt.contains(field) && pt[field].is_string() ? pt[field].get<std::string>() : otherwise;
    };
    const std::string unit = text("unit", c.unit);
    t.add_row({text("benchmark", "?"),
               pt.contains("value") && pt["value"].is_number() ? format_quantity(pt["value"].get<double>(), unit) : "-",
               pt.contains("cv") && pt["cv"].is_number() ? format_percent(pt["cv"].get<double>(), 2) : "-"});
  }
  return t;
}

// detail.timeline as rows: window, rate, SM clock, NVML's power reading, and the instantaneous and the
// energy counter's power where some bin has them. No rows without a timeline.
Table timeline_table(const Ceiling& c) {
  Table tl;
  tl.columns = {"window", "rate", "SM clock", "power (1 s avg)"};
  tl.right_aligned = {false, true, true, true, true, true};
  if (!c.detail.is_object() || !c.detail.contains("timeline") || !c.detail["timeline"].is_array()) return tl;
  const json& bins = c.detail["timeline"];
  auto any = [&](const char* key) {
    return std::any_of(bins.begin(), bins.end(), [&](const json& b) { return b.is_object() && b.contains(key); });
  };
  const bool instant = any("power_instant_w"), by_energy = any("power_mean_w");
  if (instant) tl.columns.push_back("power (instant)");
  if (by_energy) tl.columns.push_back("power (energy)");
  auto quantity = [](const json& bin, const char* key, const std::string& unit) {
    return bin.contains(key) && bin[key].is_number() ? format_quantity(bin[key].get<double>(), unit) : std::string("-");
  };
  auto seconds = [](const json& bin, const char* key) {
    return bin.contains(key) && bin[key].is_number() ? format_fixed(bin[key].get<double>(), 1) : std::string("?");
  };
  for (const json& bin : bins) {
    if (!bin.is_object()) continue;
    std::vector<std::string> row{seconds(bin, "start_s") + "-" + seconds(bin, "end_s") + " s",
                                 quantity(bin, "rate", c.unit), quantity(bin, "sm_clock_hz", "Hz"),
                                 quantity(bin, "power_w", "W")};
    if (instant) row.push_back(quantity(bin, "power_instant_w", "W"));
    if (by_energy) row.push_back(quantity(bin, "power_mean_w", "W"));
    tl.add_row(row);
  }
  return tl;
}

}  // namespace

bool per_watt_applies(const std::string& name, const std::string& unit) {
  const CeilingFamily* f = find_family(name);
  return unit == "FLOP/s" || unit == "OP/s" || (f && f->level == FamilyLevel::kDeviceMemory && unit == "B/s");
}

std::string readings_text(const Ceiling& c, const char* count_key) {
  const auto n = c.detail_number(count_key), of = c.detail_number("reason_readings");
  if (!n || !of || *of <= 0) return "";
  return format_fixed(*n, 0) + " of " + format_fixed(*of, 0) + " telemetry readings";
}

std::string throttle_text(const Ceiling& c) {
  const std::uint64_t slowdowns = slowdown_bits(c);
  if (!c.throttled_known()) return "not known: no telemetry read the GPU (no NVML), so a slowdown could not be seen";
  if (const auto members = c.detail_number("fleet_throttled"))  // a fleet baseline: its members' measurements
    return std::string(*c.throttled_known() ? "yes" : "no") + " (" + format_fixed(*members, 0) + " of " +
           format_fixed(c.detail_number("fleet_profiles").value_or(static_cast<double>(c.samples)), 0) +
           " fleet members' measurements ran throttled)";
  std::string out = c.throttled || slowdowns ? "yes" : "no";
  if (slowdowns) out += ": " + clock_events::names(slowdowns);
  std::vector<std::string> how;
  if (c.detail_number("power_cap_readings").value_or(0) > 0)
    how.push_back("power cap in " + readings_text(c, "power_cap_readings"));
  if (c.detail_number("hw_slowdown_readings").value_or(0) > 0)
    how.push_back("hardware slowdown in " + readings_text(c, "hw_slowdown_readings"));
  const double window = c.detail_number("telemetry_window_s").value_or(0);
  for (const auto& [key, what] : {std::pair<const char*, const char*>{"power_violation_s", "power"},
                                  std::pair<const char*, const char*>{"thermal_violation_s", "thermal"}}) {
    const auto held = c.detail_number(key);
    if (!held || *held <= 0) continue;
    // The counters move in steps: a difference past the window means "all of it", not more.
    how.push_back(std::string("the ") + what + " limit held the clocks " +
                  (window > 0 && *held >= window ? "for all of the " + format_quantity(window, "s")
                                                 : format_quantity(*held, "s") +
                                                       (window > 0 ? " of " + format_quantity(window, "s") : "")));
  }
  if (!how.empty()) {
    out += " (";
    for (std::size_t i = 0; i < how.size(); ++i) out += (i ? "; " : "") + how[i];
    out += ")";
  }
  return out;
}

namespace {

// The samples of a short series in the order taken (detail.sample_unit_s_N, with the SM clock and the clock-event
// reasons read during each, where recorded): how each stood against their median, so a burst that decays under the
// power cap reads apart from one that holds. `shown` gets how many it rendered (sample_unit_s_0 .. shown - 1).
Table samples_table(const Ceiling& c, std::size_t* shown) {
  Table t;
  const bool rate = higher_is_better(c.unit);
  t.columns = {"sample", rate ? "rate vs their median" : "time vs their median", "SM clock", "clock reasons"};
  t.right_aligned = {true, true, true, false};
  std::vector<double> seconds;
  while (const auto s = c.detail_number("sample_unit_s_" + std::to_string(seconds.size()))) seconds.push_back(*s);
  *shown = seconds.size();
  if (seconds.empty()) return t;
  const double mid = median(seconds);
  for (std::size_t k = 0; k < seconds.size(); ++k) {
    const std::string n = std::to_string(k);
    const double apart = rate ? mid / seconds[k] - 1 : seconds[k] / mid - 1;
    const auto hz = c.detail_number("sample_sm_clock_hz_" + n);
    const auto reasons = c.detail_number("sample_clock_reasons_" + n);
    const auto bits = reasons ? clock_events::from_number(*reasons) : std::nullopt;
    t.add_row({std::to_string(k + 1), (apart >= 0 ? "+" : "") + format_percent(apart, 1),
               hz ? format_quantity(*hz, "Hz") : "-", bits ? clock_events::names(*bits) : "-"});
  }
  return t;
}

// Every leaf of a JSON record with its dotted path ("detail.timeline.3.rate"), in the record's order.
std::vector<std::pair<std::string, std::string>> json_leaves(const json& record) {
  std::vector<std::pair<std::string, std::string>> out;
  std::function<void(const std::string&, const json&)> walk = [&](const std::string& path, const json& v) {
    const auto child = [&](const std::string& key) { return path.empty() ? key : path + "." + key; };
    if (v.is_object()) {
      for (const auto& [key, x] : v.items()) walk(child(key), x);
    } else if (v.is_array()) {
      for (std::size_t i = 0; i < v.size(); ++i) walk(child(std::to_string(i)), v[i]);
    } else {
      out.emplace_back(path, v.is_string() ? v.get<std::string>() : v.is_null() ? std::string() : v.dump());
    }
  };
  walk("", record);
  return out;
}

}  // namespace

Table json_fields_table(const json& record) {
  Table t;
  t.columns = {"field", "value"};
  for (auto& [path, value] : json_leaves(record)) t.add_row({path, value});
  return t;
}

Table json_records_table(const std::vector<json>& records, const std::vector<std::string>& leading) {
  Table t;
  t.columns = leading;
  std::vector<std::map<std::string, std::string>> rows;
  for (const json& r : records) {
    rows.emplace_back();
    for (auto& [path, value] : json_leaves(r)) {
      if (std::find(t.columns.begin(), t.columns.end(), path) == t.columns.end()) t.columns.push_back(path);
      rows.back()[path] = value;
    }
  }
  for (const auto& row : rows) {
    std::vector<std::string> cells;
    for (const std::string& column : t.columns) cells.push_back(row.count(column) ? row.at(column) : "");
    t.add_row(std::move(cells));
  }
  return t;
}

std::string render_ceiling_detail(const Profile& p, const std::string& name, Format format) {
  const Ceiling* c = p.find(name);
  if (!c) {
    // One the profile records as failed, cut short or skipped: why, exit 3 (as mbu and roofline say it); it is
    // what an operator asks about a case that failed. (A ceiling's name: an entry the converter could not name,
    // "benchmarks[3]", is no ceiling.)
    for (const Skipped& e : p.errors)
      if (is_ceiling_name(name) && e.name == name)
        throw IncompleteError(name + " was not measured in this profile: " +
                              (cut_short_reason(e.reason) ? "cut short: " : "it failed: ") + e.reason);
    for (const Skipped& s : p.skipped)
      if (is_ceiling_name(name) && s.name == name)
        throw IncompleteError(name + " was not measured in this profile: skipped: " + s.reason);
    std::string known, unmeasured;
    for (const Ceiling& k : p.ceilings) known += (known.empty() ? "" : ", ") + k.name;
    for (const auto* list : {&p.errors, &p.skipped})
      for (const Skipped& s : *list)
        if (is_ceiling_name(s.name)) unmeasured += (unmeasured.empty() ? "" : ", ") + s.name;
    throw InputError("no ceiling '" + name + "' in this profile (it has: " + (known.empty() ? "none" : known) +
                     (unmeasured.empty() ? "" : "; not measured: " + unmeasured) + ")");
  }
  if (format == Format::kJson || format == Format::kCsv) {
    const json doc = profile_to_json(p);  // named: a range-for over a temporary's member would dangle
    for (json j : doc.at("ceilings"))
      if (j.value("name", "") == name) {
        // The datasheet figure the table shows (the built-in table's for a GPU it knows, as `show` and `compare`
        // take it); one an older build recorded otherwise is kept beside it, named as such (review 83).
        const auto ds = datasheet_for(p, *c);
        if (c->datasheet && c->datasheet != ds) j["datasheet_recorded"] = *c->datasheet;
        j["datasheet"] = ds ? json(*ds) : json(nullptr);
        return format == Format::kJson ? j.dump(2) + "\n" : render(json_fields_table(j), format);
      }
  }
  std::string out;
  const bool md = format == Format::kMarkdown;
  auto section = [&](const std::string& title, const Table& t) {
    if (t.rows.empty()) return;
    out += (out.empty() ? "" : "\n") + std::string(md ? "### " : "") + title + (md ? "\n\n" : "\n") + render(t, format);
  };

  Table m;
  m.columns = {"measurement", "value"};
  const auto ds = datasheet_for(p, *c);
  m.add_row({"value", format_quantity(c->value, c->unit, 4)});
  m.add_row({"datasheet", !ds            ? std::string("-")
                          : !c->verified ? format_quantity(*ds, c->unit) + " (not set against an unverified value)"
                                         : format_quantity(*ds, c->unit) + " (" + format_percent(c->value / *ds) + " of it)"});
  std::string spread = format_percent(c->cv, 2) + " over " + std::to_string(c->samples) + " samples";
  if (const auto robust = c->detail_number("robust_cv"))
    spread += " (robust: " + format_percent(*robust, 2) + ", 1.4826 MAD / median)";
  m.add_row({"spread (cv)", spread});
  // Why the samples stopped (profiles from 2026-12-01 on record it; the reader refused any other name).
  if (c->detail.is_object() && c->detail.contains("stopped_by") && c->detail.at("stopped_by").is_string())
    if (const auto stop = sampling_stop_named(c->detail.at("stopped_by").get<std::string>())) {
      const char* how = *stop == SamplingStop::kConverged ? "the cv reached its target (--ceilings_target_cv)"
                        : *stop == SamplingStop::kSampleCap
                            ? "at the sample cap (--ceilings_max_samples, or a GEMM burst's fixed count)"
                        : *stop == SamplingStop::kTimeBudget
                            ? "at the time budget (--ceilings_max_seconds) before the cv reached its target"
                            : "a fixed window run back to back (sustained)";
      m.add_row({"sampling stopped", how});
    }
  m.add_row({"verified", c->verified ? "yes" : "NO"});
  m.add_row({"throttled", throttle_text(*c)});
  if (c->telemetry.available) {
    m.add_row({"SM / memory clock", format_quantity(c->telemetry.sm_clock_hz, "Hz") + " / " +
                                        format_quantity(c->telemetry.mem_clock_hz, "Hz")});
    m.add_row({"power, temperature", power_text(*c) + ", " + format_fixed(c->telemetry.temp_c, 0) + " C" +
                                         short_window_note(*c)});
    // Per watt, for comparing generations (compute and HBM, where the GPU's power is the cost), only from
    // the energy counter over a long back-to-back window (sustained mode): NVML's power reading averages
    // the last second, which a short case's window does not fill.
    if (const auto watts = c->detail_number("power_mean_w"); per_watt_applies(c->name, c->unit) && watts && *watts > 0)
      m.add_row({"per watt", format_quantity(c->value / *watts, c->unit) + " per W (mean power " +
                                 format_quantity(*watts, "W") + " from the energy counter)"});
  } else {
    m.add_row({"telemetry", "not recorded (no NVML)"});
  }
  if (c->detail.is_object() && c->detail.contains("benchmark"))
    m.add_row({"benchmark case", detail_value("benchmark", c->detail["benchmark"], c->unit)});
  // A transfer-size sweep's ceiling is the best point of its large-size plateau; say when there was none.
  if (const auto found = c->detail_number("plateau_found")) {
    const auto points = c->detail_number("plateau_points"), from = c->detail_number("plateau_start_bytes");
    const auto to = c->detail_number("plateau_end_bytes");  // recorded since review 98
    const auto med = c->detail_number("plateau_median_bytes_per_second");
    std::string text = *found != 0 ? "the best of "
                                   : "none: the largest sizes differ by more than the tolerance, or still climb; "
                                     "the best of ";
    text += (points ? format_fixed(*points, 0) : std::string("?")) + " point(s) from " +
            (from ? format_quantity(*from, "B") : std::string("?")) +
            (to && (!from || *to != *from) ? " to " + format_quantity(*to, "B") : "");
    if (med) text += " (their median " + format_quantity(*med, "B/s") + ")";
    m.add_row({"plateau", text});
  }
  section(name + ": " + format_quantity(c->value, c->unit) + " (median)", m);

  Table d;
  d.columns = {"detail", "value"};
  std::map<int, std::map<int, double>> matrix;
  std::set<std::string> pair_keys;  // shown in the grid below, not in the list
  int gpus = 0;
  for (const PeerPairValue& pair : peer_pairs_in_detail(c->detail)) {
    matrix[pair.src][pair.dst] = pair.value;
    pair_keys.insert(pair.key);
    gpus = std::max({gpus, pair.src + 1, pair.dst + 1});
  }
  std::size_t samples_shown = 0;
  const Table samples = samples_table(*c, &samples_shown);
  const auto in_samples_table = [&](const std::string& key) {  // each sample's keys the table renders
    const auto sample = sample_key(key);
    return sample && sample->index && *sample->index < samples_shown;
  };
  if (c->detail.is_object())
    for (const auto& [key, v] : c->detail.items()) {
      if (pair_keys.count(key)) continue;
      if (key == "benchmark" || key == "sweep" || v.is_object() || v.is_array()) continue;
      if (in_samples_table(key)) continue;
      d.add_row({key, detail_value(key, v, c->unit)});
    }
  section("how it was obtained", d);

  section("samples in the order taken", samples);
  section("sweep (points that are not the ceiling)", cases_table(*c, "sweep"));
  // Every configuration that competed for the ceiling, best first (the first is the ceiling).
  section("variants (best first; the first is the ceiling)", cases_table(*c, "variants"));

  // A sustained ceiling's time series: when a drop came, with the clock and power beside it.
  section("over the window", timeline_table(*c));

  if (!matrix.empty()) {
    Table g;
    g.columns = {"src \\ dst"};
    for (int t = 0; t < gpus; ++t) g.columns.push_back("GPU " + std::to_string(t));
    g.right_aligned.assign(g.columns.size(), true);
    g.right_aligned[0] = false;
    for (int s = 0; s < gpus; ++s) {
      std::vector<std::string> row{"GPU " + std::to_string(s)};
      for (int t = 0; t < gpus; ++t) {
        const auto rs = matrix.find(s);
        const bool have = rs != matrix.end() && rs->second.count(t);
        row.push_back(s == t ? "-" : have ? format_quantity(rs->second.at(t), c->unit) : "n/a");
      }
      g.add_row(std::move(row));
    }
    section("GPU pairs (each pair's own figure; the ceiling is the slowest)", g);
  }
  return out;
}

}  // namespace ceilings
