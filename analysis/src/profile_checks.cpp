// Checks of a profile's values beyond their JSON types (profile_from_json reads the types; this says
// whether the values can be true), and ISO 8601 UTC times.
#include <cmath>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>

#include "ceilings/ceiling_families.hpp"
#include "ceilings/clock_events.hpp"
#include "ceilings/json_fields.hpp"
#include "ceilings/profile.hpp"
#include "ceilings/stats.hpp"
#include "ceilings/transfer.hpp"
#include "ceilings/units.hpp"

namespace ceilings {

namespace {

// `n` decimal digits of `text` at `at`, or -1.
int digits_at(const std::string& text, std::size_t at, std::size_t n) {
  if (at + n > text.size()) return -1;
  int v = 0;
  for (std::size_t i = at; i < at + n; ++i) {
    if (text[i] < '0' || text[i] > '9') return -1;
    v = v * 10 + (text[i] - '0');
  }
  return v;
}

bool is_leap_year(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int days_in_month(int y, int m) {
  static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap_year(y) ? 29 : days[m - 1];
}

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t y, int m, int d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;
  const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// The text as an error message shows it: quoted, and cut where it is long.
std::string shown(const std::string& text) {
  return "'" + (text.size() > 40 ? text.substr(0, 40) + "..." : text) + "'";
}

}  // namespace

UtcTime parse_utc_time(const std::string& text, const std::string& what) {
  auto bad = [&](const std::string& problem) -> InputError {
    return InputError(what + ": " + shown(text) + " " + problem);
  };
  const std::string form = "is not an ISO 8601 UTC time of the form YYYY-MM-DDTHH:MM:SSZ (e.g. 2026-11-30T12:00:00Z)";
  const int year = digits_at(text, 0, 4), month = digits_at(text, 5, 2), day = digits_at(text, 8, 2);
  const int hour = digits_at(text, 11, 2), minute = digits_at(text, 14, 2), second = digits_at(text, 17, 2);
  if (year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0 || text[4] != '-' ||
      text[7] != '-' || text[10] != 'T' || text[13] != ':' || text[16] != ':')
    throw bad(form);
  std::size_t at = 19;
  std::int32_t nanoseconds = 0;
  if (at < text.size() && text[at] == '.') {
    const std::size_t first = ++at;
    std::int32_t scale = 100000000;
    for (; at < text.size() && text[at] >= '0' && text[at] <= '9'; ++at, scale /= 10)
      nanoseconds += (text[at] - '0') * scale;  // digits past the ninth (scale 0) add nothing
    if (at == first) throw bad(form + ": a '.' needs digits after it");
  }
  const std::string zone = text.substr(at);
  if (zone.empty()) throw bad("has no time zone: a local time could be any moment; write it in UTC with a final Z");
  if (zone != "Z" && zone != "+00:00") {
    if ((zone[0] == '+' || zone[0] == '-') && zone.size() == 6)
      throw bad("is not in UTC (offset " + zone + "): write it in UTC with a final Z");
    throw bad(form);
  }
  if (month < 1 || month > 12) throw bad("has no month " + std::to_string(month));
  if (day < 1 || day > days_in_month(year, month))
    throw bad("is not a date: month " + std::to_string(month) + " of " + std::to_string(year) + " has " +
              std::to_string(days_in_month(year, month)) + " days");
  if (hour > 23 || minute > 59 || second > 59) throw bad("is not a time of day (00:00:00 to 23:59:59)");
  UtcTime t;
  t.seconds = days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
  t.nanoseconds = nanoseconds;
  return t;
}

bool valid_pcie_width(int lanes) {
  return lanes == 1 || lanes == 2 || lanes == 4 || lanes == 8 || lanes == 12 || lanes == 16 || lanes == 32;
}

bool valid_pcie_gen(int generation) { return generation >= 1 && generation <= 7; }

namespace {

// What a ceiling in each unit can be: above zero and at most `most`, far above any GPU (H200: HBM 4.8e12 B/s,
// shared memory of all SMs about 3e13 B/s, fp8 dense 2e15 FLOP/s; B200 fp4 dense 9e15), and for times at
// least `least` (a GPU's fastest latency ceiling, an L2 hit, is about 200 ns; 1 ns is two clock cycles).
struct Plausible {
  const char* unit;
  double least, most;
  const char* least_text;
  const char* least_why;  // why a value below `least` is no GPU's
  const char* most_text;
};
// The lower bounds sit far below anything a GPU reads (pageable copies run at GB/s, clocks at hundreds of MHz):
// 1e-300 B/s passed and gave every roof an infinite ridge point.
constexpr Plausible kPlausible[] = {
    {"B/s", 1e3, 1e15, "1 kB/s", "no GPU moves data that slowly", "1 PB/s"},
    {"FLOP/s", 1e6, 1e18, "1 MFLOP/s", "no GPU computes that slowly", "1 EFLOP/s"},
    {"OP/s", 1e6, 1e18, "1 MOP/s", "no GPU computes that slowly", "1 EOP/s"},
    {"s", 1e-9, 1e3, "1 ns", "no GPU operation is that fast", "1000 s"},
    {"Hz", 1e6, 1e11, "1 MHz", "no GPU clock runs that slowly", "100 GHz"},
    {"W", 0, 1e5, "", "", "100 kW"},
    {"B", 0, 1e15, "", "", "1 PB"}};

std::string number_text(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

[[noreturn]] void fail(const std::string& field, const std::string& problem) {
  throw InputError("field '" + field + "': " + problem);
}

// A ceiling's value (or its datasheet value) in `unit`, which the reader already knows is finite and >= 0.
// implausible_limit's ranges (a rules file's limits are judged by the same), said of a stored measurement.
void check_quantity(double v, const std::string& unit, const std::string& field) {
  const std::string why = implausible_limit(v, unit);
  if (why.empty()) return;
  if (!(v > 0)) fail(field, why + ": a rate or a time of 0 was not measured");
  fail(field, why + (why.find(" is above ") != std::string::npos ? ": not a measurement" : ""));
}

void check_ceilings(const std::vector<Ceiling>& ceilings) {
  std::map<std::string, std::size_t> first;  // name -> index of its first entry
  for (std::size_t i = 0; i < ceilings.size(); ++i) {
    const Ceiling& c = ceilings[i];
    const std::string at = "ceilings[" + std::to_string(i) + "]";
    const auto [it, fresh] = first.emplace(c.name, i);
    if (!fresh)
      fail(at + ".name", "'" + c.name + "' is also ceilings[" + std::to_string(it->second) + "]" +
                             ": a profile holds one value per ceiling");
    check_ceiling(c, at);
  }
}

void check_pcie(const PcieInfo& pcie) {
  auto check = [](const std::optional<int>& v, const char* key, bool (*valid)(int), const char* what) {
    if (v && !valid(*v)) fail(std::string("device.pcie.") + key, std::to_string(*v) + " is not " + what);
  };
  check(pcie.gen, "gen", valid_pcie_gen, "a PCIe generation (1 to 7)");
  check(pcie.max_gen, "max_gen", valid_pcie_gen, "a PCIe generation (1 to 7)");
  check(pcie.width, "width", valid_pcie_width, "a PCIe link width (1, 2, 4, 8, 12, 16 or 32 lanes)");
  check(pcie.gpu_max_gen, "gpu_max_gen", valid_pcie_gen, "a PCIe generation (1 to 7)");
  check(pcie.max_width, "max_width", valid_pcie_width, "a PCIe link width (1, 2, 4, 8, 12, 16 or 32 lanes)");
}

}  // namespace

std::string implausible_limit(double v, const std::string& unit) {
  for (const Plausible& r : kPlausible) {
    if (unit != r.unit) continue;
    const std::string shown = number_text(v) + " " + unit;
    if (!(v > 0)) return "must be above zero, found " + shown;
    if (v < r.least) return shown + " is below " + r.least_text + ": " + r.least_why;
    if (v > r.most) return shown + " is above " + r.most_text + ", beyond any GPU";
    return "";
  }
  return "";
}

void check_ceiling(const Ceiling& c, const std::string& at) {
  // The spread and the count shown beside the value (a cv of 1e300 printed a 63-digit percentage).
  if (c.cv > 10) fail(at + ".cv", number_text(c.cv) + " is a spread of over 1000%: not a measurement's");
  if (c.samples > (std::int64_t{1} << 40)) fail(at + ".samples", std::to_string(c.samples) + " samples: more than any run takes");
  // A known family has one unit (as ceilings-bench reports it); an unknown one, from a newer writer, any
  // unit the schema knows.
  const std::string unit = ceiling_unit_for(c.name);
  if (!unit.empty() && c.unit != unit)
    fail(at + ".unit", "'" + c.unit + "' is not the unit of " + c.name + ", which is measured in " + unit);
  check_quantity(c.value, c.unit, at + ".value");
  if (c.datasheet) check_quantity(*c.datasheet, c.unit, at + ".datasheet");
  // The telemetry of the window, shown beside the value: NVML's "not available" sentinels (0xFFFFFFFF read as
  // a temperature or a clock) are not readings.
  if (c.telemetry.available) {  // 0 where one reading was missing
    const std::string t = at + ".telemetry.";
    if (c.telemetry.sm_clock_hz > 0) check_quantity(c.telemetry.sm_clock_hz, "Hz", t + "sm_clock_hz");
    if (c.telemetry.mem_clock_hz > 0) check_quantity(c.telemetry.mem_clock_hz, "Hz", t + "mem_clock_hz");
    if (c.telemetry.power_w > 0) check_quantity(c.telemetry.power_w, "W", t + "power_w");
    if (c.telemetry.power_w > 0 && c.telemetry.power_w < 1e-3)  // as detail.power_mean_w (review 48: 1e-300 W)
      fail(t + "power_w", number_text(c.telemetry.power_w) + " W is not a GPU's power (0: not read; else 1 mW or more)");
    if (c.telemetry.temp_c < 0)  // NVML's temperatures are whole degrees from 0
      fail(t + "temp_c", number_text(c.telemetry.temp_c) + " C is below 0 C: not a reading NVML gives");
    if (c.telemetry.temp_c > 200)
      fail(t + "temp_c", number_text(c.telemetry.temp_c) + " C is above 200 C (GPUs shut down near 100 C): a sentinel, "
                                                          "not a reading");
  }
}

namespace {

// The lists of cases in a ceiling's detail: `variants` (every configuration that competed for it, best first)
// and `sweep` (the points that are not the ceiling). The converter writes each entry as the case's `benchmark`
// name, its `value` and `cv` (a sweep point also its `unit` and the case's arguments and counters); show
// --ceiling prints those members as a table. Unchecked, a number for `benchmark` or `unit` passed the reader and
// then threw the JSON library's type error from show (exit 3, no field named): each entry is read here, so every
// command refuses such a profile alike.
void check_detail_cases(const Ceiling& c, const std::string& at, const char* key) {
  if (!c.detail.is_object()) return;
  const auto list = c.detail.find(key);
  if (list == c.detail.end() || list->is_null()) return;  // null: not recorded, as every detail key
  const bool variants = std::string(key) == "variants";
  // A case's own arguments are detail keys too, and ceilings-bench names its sweep cases ".../sweep" (a flag,
  // read as true): a `sweep` that is no array is that argument, which show does not list. `variants` is never
  // an argument (the converter refuses one of that name).
  if (!list->is_array() && !variants) return;
  if (!list->is_array()) fail(at + key, "expected an array of benchmark cases, found " + json_type_name(*list));
  for (std::size_t i = 0; i < list->size(); ++i) {
    const Fields pt((*list)[i], at + key + "[" + std::to_string(i) + "]");
    pt.string("benchmark");
    // Each point is held to what a ceiling is, as show prints its value and cv as a measurement's: a cv of 1e308
    // printed "inf%", one of -0.5 "-50.00%", a value of 1e308 B/s "1.00e+290 EB/s", all with exit 0. (The
    // converter checks each case as a ceiling before it lists it, so what it writes passes.)
    Ceiling point;
    point.name = c.name;
    point.unit = c.unit;
    if (const auto unit = pt.optional_string("unit")) {
      if (!is_known_unit(*unit)) pt.fail("unit", "unknown unit '" + *unit + "'");
      // A variant competed with the ceiling on its number: in another unit it could not have.
      if (variants && *unit != c.unit)
        pt.fail("unit", "'" + *unit + "' is not the unit of " + c.name + " (" + c.unit + "), which its variants share");
      point.unit = *unit;
    }
    point.value = pt.number("value");
    point.cv = pt.number("cv");  // finite and not negative, as a ceiling's
    point.samples = pt.optional_integer("samples", 1).value_or(0);
    check_ceiling(point, pt.path());  // the spread's and the count's bounds, the family's unit, the value's range
  }
}

// detail.timeline, a sustained window's bins (the converter gathers them from timeline_<k>_<field> counters): show
// --ceiling prints each bin's window, rate, SM clock and powers as measurements and qualify's rate-drop note its
// rates, so each is held to what the same reading is held to on a ceiling. Unchecked, a rate of 1e308 printed
// "1.00e+290 EB/s" and a clock of -5 "-5.00 Hz", with exit 0. A clock or power of 0 is a reading NVML did not give
// (as in a ceiling's telemetry), not a measurement to refuse.
void check_timeline(const Ceiling& c, const std::string& at) {
  if (!c.detail.is_object()) return;
  const auto bins = c.detail.find("timeline");
  if (bins == c.detail.end() || bins->is_null()) return;
  if (!bins->is_array()) fail(at + "timeline", "expected an array of bins, found " + json_type_name(*bins));
  for (std::size_t i = 0; i < bins->size(); ++i) {
    const Fields bin((*bins)[i], at + "timeline[" + std::to_string(i) + "]");
    // Each field may be missing (a counter Google Benchmark wrote as NaN is left out of its bin and named).
    const auto start = bin.optional_number("start_s"), end = bin.optional_number("end_s");
    if (start && end && *end < *start)
      bin.fail("end_s", number_text(*end) + " s is before the bin's start, " + number_text(*start) + " s");
    if (const auto rate = bin.optional_number("rate")) check_quantity(*rate, c.unit, bin.path_of("rate"));
    for (const auto& [key, unit] : {std::pair<const char*, const char*>{"sm_clock_hz", "Hz"}, {"power_w", "W"},
                                    {"power_instant_w", "W"}, {"power_mean_w", "W"}})
      if (const auto v = bin.optional_number(key); v && *v > 0) check_quantity(*v, unit, bin.path_of(key));
  }
}

}  // namespace

namespace {

// The detail values show and compare compute with: the per-GPU-pair bandwidths (show draws a grid as wide as
// the highest GPU number: p2p_9999_9999 asked for 10^8 cells) and the mean power a rate is divided by.
constexpr int kMaxPairGpu = 256;  // GPU numbers of one node's peer matrix

}  // namespace

void check_ceiling_detail(const Ceiling& c, const std::string& at, std::optional<int> gpus_visible) {
  const int gpus = gpus_visible.value_or(kMaxPairGpu);
  for (const PeerPairValue& pair : peer_pairs_in_detail(c.detail)) {
    if (pair.src >= gpus || pair.dst >= gpus || pair.src >= kMaxPairGpu || pair.dst >= kMaxPairGpu)
      fail(at + pair.key, "names a GPU beyond the " + std::to_string(std::min(gpus, kMaxPairGpu)) +
                              (gpus_visible ? " the measuring process saw (host.gpus_visible)" : " a node can hold"));
    if (pair.src == pair.dst) fail(at + pair.key, "is a GPU paired with itself: a peer pair has two GPUs");
    check_quantity(pair.value, "B/s", at + pair.key);
  }
  // The detail values the analysis reads as numbers: another type read as "not recorded" turned a recorded
  // thermal slowdown ("64") into none, and a pass.
  if (c.detail.is_object())
    for (const char* key : {"throttle_reasons", "reason_readings", "power_cap_readings", "hw_slowdown_readings",
                            "telemetry_readings", "power_instant_readings", "robust_cv", "power_mean_w",
                            "power_instant_w", "telemetry_window_s", "p2p_median", "pairs_unclassified",
                            "plateau_median_bytes_per_second", "plateau_points", "plateau_start_bytes", "plateau_end_bytes", "plateau_found",
                            "scope_device", "work_readings", "work_read_max_s", "fleet_mad", "fleet_profiles",
                            "fleet_throttled", "fleet_min", "fleet_max"})
      if (const auto it = c.detail.find(key); it != c.detail.end() && !it->is_number() && !it->is_null())
        fail(at + key, "expected a number, found " + json_type_name(*it));
  // Amounts `show` prints in a unit (bytes, a clock, energy, a time, a power) and shares of a link: none is
  // negative (review 48: -1 B, -1 Hz, -5 J and a link share of -100% were printed).
  if (c.detail.is_object())
    for (const auto& [key, v] : c.detail.items()) {
      if (!v.is_number() || v.get<double>() >= 0) continue;
      const auto ends = [&k = key](const char* s) {
        const std::string e = s;
        return k.size() > e.size() && k.compare(k.size() - e.size(), e.size(), e) == 0;
      };
      if (ends("_bytes") || ends("_hz") || ends("_j") || ends("_s") || ends("_w") || key.rfind("link_share", 0) == 0)
        fail(at + key, number_text(v.get<double>()) + " is negative: an amount or a share is 0 or more");
    }
  // A short series' samples (sample_unit_s_N, sample_sm_clock_hz_N, sample_clock_reasons_N): show sets them
  // against their median and names the reasons.
  if (c.detail.is_object())
    for (const auto& [key, v] : c.detail.items()) {
      const auto sample = sample_key(key);
      if (!sample) continue;
      const bool seconds = sample->field == "sample_unit_s", clock = sample->field == "sample_sm_clock_hz",
                 reasons = sample->field == "sample_clock_reasons";
      if (!v.is_number()) fail(at + key, "expected a number, found " + json_type_name(v));
      if (!sample->index || static_cast<std::int64_t>(*sample->index) >= c.samples)
        fail(at + key, "names no sample of the " + std::to_string(c.samples) + " the ceiling holds (0 to " +
                           std::to_string(c.samples - 1) + ")");
      const double x = v.get<double>();
      if (seconds && !(x > 0 && x <= 1e3)) fail(at + key, number_text(x) + " s is not a sample's time per unit (0 to 1000 s)");
      if (clock) check_quantity(x, "Hz", at + key);
      if (reasons && !clock_events::from_number(x))
        fail(at + key, number_text(x) + " is not a clock-event bit mask (a whole number, 0 to 2^64)");
    }
  if (const auto bits = c.detail_number("throttle_reasons"); bits && !clock_events::from_number(*bits))
    fail(at + "throttle_reasons", number_text(*bits) + " is not a clock-event bit mask (a whole number, 0 to 2^64)");
  const auto readings = c.detail_number("reason_readings");
  for (const char* key : {"reason_readings", "power_cap_readings", "hw_slowdown_readings", "telemetry_readings",
                          "power_instant_readings", "work_readings"}) {
    const auto n = c.detail_number(key);
    if (!n) continue;
    if (!(*n >= 0 && *n <= 9007199254740992.0) || std::floor(*n) != *n)
      fail(at + key, number_text(*n) + " is not a count of readings");
    const std::string k = key;
    const bool among_reason_readings = k == "power_cap_readings" || k == "hw_slowdown_readings";
    if (among_reason_readings && readings && *n > *readings)
      fail(at + key, number_text(*n) + " readings of " + number_text(*readings) + " (reason_readings): more than read");
  }
  // Why the samples stopped: `show` says it in words, so a value it cannot name is refused, not shown as text.
  if (c.detail.is_object())
    if (const auto it = c.detail.find("stopped_by"); it != c.detail.end() && !it->is_null()) {
      if (!it->is_string() || !sampling_stop_named(it->get<std::string>()))
        fail(at + "stopped_by", (it->is_string() ? it->dump() : json_type_name(*it)) +
                                    " is not why sampling stopped (cv_converged, sample_cap, time_budget or window)");
    }
  if (const auto r = c.detail_number("robust_cv"); r && !(*r >= 0 && std::isfinite(*r)))
    fail(at + "robust_cv", number_text(*r) + " is not a spread (a finite number, 0 or more)");
  else if (r && *r > 10)  // as the cv: qualify judges by it where recorded (review 48)
    fail(at + "robust_cv", number_text(*r) + " is a spread of over 1000%: not a measurement's");
  // A fleet baseline's medians (fleet --write-baseline): the MAD is the standard error qualify weighs a shortfall
  // against, so a MAD past the value's own scale would call any shortfall noise (review 48).
  if (const auto mad = c.detail_number("fleet_mad"); mad && !(*mad >= 0 && *mad <= 10 * std::fabs(c.value)))
    fail(at + "fleet_mad", number_text(*mad) + " is not a spread of the fleet's values (0 to 10 times the median)");
  const auto profiles = c.detail_number("fleet_profiles");
  if (profiles && !(*profiles >= 1 && *profiles <= 1e9 && std::floor(*profiles) == *profiles))
    fail(at + "fleet_profiles", number_text(*profiles) + " is not a number of profiles (a whole number, 1 or more)");
  if (const auto t = c.detail_number("fleet_throttled");
      t && !(*t >= 0 && std::floor(*t) == *t && *t <= profiles.value_or(1e9)))
    fail(at + "fleet_throttled", number_text(*t) + " is not a count of the fleet_profiles (" +
                                     (profiles ? number_text(*profiles) : std::string("?")) + ")");
  const auto lo = c.detail_number("fleet_min"), hi = c.detail_number("fleet_max");
  const double slack = 1e-9 * std::fabs(c.value);
  if (lo && !(*lo <= c.value + slack)) fail(at + "fleet_min", number_text(*lo) + " is above the median value");
  if (hi && !(*hi >= c.value - slack)) fail(at + "fleet_max", number_text(*hi) + " is below the median value");
  for (const char* key : {"power_mean_w", "power_instant_w"})
    if (const auto w = c.detail_number(key); w && !(*w >= 1e-3 && *w <= 1e5))
      fail(at + key, number_text(*w) + " W is not a GPU's power (1 mW to 100 kW)");
  check_detail_cases(c, at, "variants");
  check_detail_cases(c, at, "sweep");
  check_timeline(c, at);
}

namespace {

void check_detail_values(const Profile& p) {
  for (std::size_t i = 0; i < p.ceilings.size(); ++i)
    check_ceiling_detail(p.ceilings[i], "ceilings[" + std::to_string(i) + "].detail.", p.gpus_visible);
}

}  // namespace

void check_profile_values(const Profile& p) {
  parse_utc_time(p.created, "field 'created'");
  // Qualify scales datasheet figures by the maximum clocks: a clock beyond any GPU's would move its thresholds.
  if (p.device.max_sm_clock_hz) check_quantity(*p.device.max_sm_clock_hz, "Hz", "device.clocks_max_hz.sm");
  if (p.device.max_mem_clock_hz) check_quantity(*p.device.max_mem_clock_hz, "Hz", "device.clocks_max_hz.memory");
  if (p.device.power_limit_w) check_quantity(*p.device.power_limit_w, "W", "device.power_limit_w");
  check_pcie(p.device.pcie);
  check_ceilings(p.ceilings);
  check_detail_values(p);
}

}  // namespace ceilings
