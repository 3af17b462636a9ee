// Verdicts for node qualification: default and file rules, the per-ceiling checks (datasheet
// fraction at the observed clock, absolute limits, baseline tolerance, verification, slowdown), and the
// verdict over them and the health checks (health_checks.cpp).
#include "ceilings/qualify.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "ceilings/ceiling_families.hpp"
#include "ceilings/clock_events.hpp"
#include "ceilings/datasheet.hpp"
#include "ceilings/fleet.hpp"
#include "ceilings/report.hpp"
#include "ceilings/specs.hpp"
#include "ceilings/transfer.hpp"
#include "ceilings/units.hpp"

namespace ceilings {

namespace {

bool is_rate_unit(const std::string& unit) { return unit == "B/s" || unit == "FLOP/s" || unit == "OP/s"; }

// Whether some entry of the datasheet table has a figure for the ceiling: datasheet_value's rule, by which the
// fraction is then judged (a list of its own had taken fma.fp16, for which no entry has one, and every GPU's row
// was incomplete; review 23 #4).
bool has_datasheet_figure(const std::string& name) {
  const auto& table = datasheet();
  return std::any_of(table.begin(), table.end(), [&](const GpuSpec& s) { return datasheet_value(s, name).has_value(); });
}

}  // namespace

const char* status_name(CheckStatus s) {
  switch (s) {
    case CheckStatus::kPass: return "pass";
    case CheckStatus::kFail: return "fail";
    case CheckStatus::kIncomplete: return "incomplete";
    case CheckStatus::kNotJudged: return "not judged";
  }
  return "?";
}

// Fractions of the datasheet (or link) value, chosen from what the best peers reach on an H200
// (results/PUBLISHED.md, the peer tools' figures side by side) and published figures, leaving room for node-to-node
// spread: HBM copy/triad/read peers reach 0.89/0.91/0.92 of 4.8 TB/s -> 0.85 (write has no peer: 0.80);
// bf16 GEMM 745 TFLOP/s (0.75) and published MAMF 794.5 (0.80) -> 0.70; fp16 685 (0.69) -> 0.65;
// fp8 1303 (0.66), MAMF 1453 (0.73) -> 0.60 (e4m3 and e5m2 share the figure); tf32 381 (0.77) -> 0.70;
// fp32 GEMM 50.6 (0.76) -> 0.70;
// fp64 DGEMM 61.2 (0.91) -> 0.80; int8 has no trustworthy peer (126 TOP/s is a poor kernel) -> 0.50;
// FMA fp32 58.5 (0.87) -> 0.80, fp64 31.2 (0.92 of 33.5) -> 0.85; PCIe H2D/D2H 55.3 GB/s of 63.0
// (0.88) -> 0.80, bidirectional 99 of 126 (0.79) -> 0.70; NVLink CE 396 of 450 (0.88) -> 0.80. A Gen4 or older
// link carries less of its theoretical rate (larger protocol overhead per payload; published A100 and RTX 4090
// copy-engine figures: 24-26 GB/s of 31.5, 0.76-0.84; one A100 bidirectional 11 + 25 of 63): there the defaults
// are 0.70 one way and 0.50 both ways (kPcieGen4Fraction). A GH200's NVLink-C2C host link reads less again
// (nvbandwidth's published copy-engine figures: host to device about 346 GB/s of 450, 0.77, device to host
// about 15% less, 0.65, both ways about half of 900): 0.60 and 0.40 (kC2cFraction), until one is measured here.
// A GEMM's _sustained ceiling is held to its burst type's fraction: it runs at the GPU's power cap, where the
// threshold follows the clock down to power_cap_scaling_floor (a healthy H200's bf16: 716 TFLOP/s against
// 0.70 x 989 x 0.85 = 588).
Rules default_rules() {
  Rules r;
  r.required = {"hbm.copy", "gemm.bf16", "pcie.h2d"};
  const std::pair<const char*, double> fractions[] = {
      {"hbm.copy", 0.85},      {"hbm.triad", 0.85},      {"hbm.read", 0.85},     {"hbm.write", 0.80},
      {"gemm.bf16", 0.70},     {"gemm.fp16", 0.65},      {"gemm.fp8_e4m3", 0.60}, {"gemm.fp8_e5m2", 0.60},
      {"gemm.tf32", 0.70},     {"gemm.fp32", 0.70},      {"gemm.fp64", 0.80},    {"gemm.int8", 0.50},
      {"fma.fp32", 0.80},
      {"fma.fp64", 0.85},      {"pcie.h2d", 0.80},       {"pcie.d2h", 0.80},     {"pcie.bidir", 0.70},
      {"nvlink.p2p_uni", 0.80}, {"nvlink.p2p_bidir", 0.80}};
  auto set = [&](const std::string& name, double f) {
    r.ceilings[name].min_fraction_of_datasheet = f;
    r.ceilings[name].fraction_is_default = true;
  };
  for (const auto& [name, f] : fractions) {
    set(name, f);
    if (family_of(name) == "gemm") set(name + std::string("_sustained"), f);
  }
  return r;
}

namespace {

// The ceiling names a profile holds (measured, failed or skipped).
std::set<std::string> profile_ceiling_names(const Profile& p) {
  std::set<std::string> names;
  for (const Ceiling& c : p.ceilings) names.insert(c.name);
  for (const Skipped& e : p.errors) names.insert(e.name);
  for (const Skipped& s : p.skipped) names.insert(s.name);
  return names;
}

// " (did you mean hbm.copy?)" for a misspelt ceiling name: the profile's names and the default rules' within
// two edits of it; "" where there are none.
std::string did_you_mean(const Profile& p, const std::string& name) {
  std::set<std::string> names = profile_ceiling_names(p);
  for (const auto& [n, rule] : default_rules().ceilings) names.insert(n);
  std::string near;
  for (const std::string& n : names)
    if (n != name && edit_distance(n, name) <= 2) near += (near.empty() ? "" : ", ") + n;
  return near.empty() ? "" : " (did you mean " + near + "?)";
}

}  // namespace

bool rule_family_known(const std::string& name, const Profile& p) {
  if (!ceiling_unit_for(name).empty()) return true;
  const std::string family = family_of(name);
  for (const std::string& n : profile_ceiling_names(p))
    if (family_of(n) == family) return true;
  return false;
}

bool holds_ceiling(const Profile& p, const std::string& name) { return profile_ceiling_names(p).count(name) > 0; }

std::string rule_on_no_profile(const std::string& name, const std::string& where, const Profile& p) {
  return "rules: '" + where + "': no profile read has " + name +
         " (measured, failed or skipped): measured by none of these runs, or misspelt, so the limit judged no GPU" +
         did_you_mean(p, name);
}

InputError unknown_rule_family(const std::string& name, const std::string& where, const Profile& p, bool fleet) {
  const std::string family = family_of(name);
  return InputError("rules: '" + where + "': unknown ceiling family '" + family +
                    "': not one this build knows (hbm, l2, smem, gemm, fma, pcie, nvlink, latency), and " +
                    (fleet ? "no profile read has a " : "the profile has no ") + family +
                    ".* ceiling: misspelt, or a family of a newer ceilings than the one that measured " +
                    (fleet ? "these profiles" : "this profile") + did_you_mean(p, name));
}

namespace {

void reject(const std::string& path, const std::string& problem) {
  throw InputError("rules: '" + path + "': " + problem);
}

void check_keys(const json& obj, const std::string& path, const std::set<std::string>& known) {
  for (const auto& [k, v] : obj.items()) {
    (void)v;
    if (!known.count(k)) {
      std::string list;
      for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
      reject(path.empty() ? k : path + "." + k, "unknown key (known: " + list + ")");
    }
  }
}

const json& object_at(const json& obj, const std::string& key, const std::string& path) {
  const json& v = obj.at(key);
  if (!v.is_object()) reject(path, "expected an object, found " + json_type_name(v));
  return v;
}

// A quantity written as a string with a unit; a bare number is rejected, because its unit would be a guess.
Quantity quantity_at(const json& v, const std::string& path) {
  if (v.is_number())
    reject(path, "a bare number (" + v.dump() + ") has no unit: write it as a string with one, e.g. \"4.2 TB/s\", "
                 "\"55 GB/s\", \"700 TFLOP/s\", \"2 us\" or \"5%\"");
  if (!v.is_string()) reject(path, "expected a quantity string such as \"4.2 TB/s\", found " + json_type_name(v));
  try {
    return parse_quantity(v.get<std::string>(), "rules: '" + path + "'");
  } catch (const InputError& e) {
    throw InputError(e.what());
  }
}

double fraction_at(const json& v, const std::string& path, double lo, double hi, bool lo_inclusive) {
  const Quantity q = quantity_at(v, path);
  if (q.unit != "%") reject(path, "expected a percentage such as \"85%\", found a quantity in " + q.unit);
  if (q.value > hi || q.value < lo || (!lo_inclusive && q.value == lo))
    reject(path, format_percent(q.value) + " is out of range (" + (lo_inclusive ? "" : "above ") + format_percent(lo, 0) +
                     " to " + format_percent(hi, 0) + ")");
  return q.value;
}

bool bool_at(const json& v, const std::string& path) {
  if (!v.is_boolean()) reject(path, "expected true or false, found " + json_type_name(v));
  return v.get<bool>();
}

void parse_ceiling_rule(const std::string& name, const json& v, const std::string& path, CeilingRule& rule) {
  if (!is_family_variant(name))
    reject("ceilings." + excerpt(name), "not a ceiling name of the form family.variant");
  // A family this build knows has one unit; a new one's rule is in the unit its limit is written in, and is
  // compared with the unit the profile records when it is judged.
  const std::string known_unit = ceiling_unit_for(name);
  if (!v.is_object()) reject(path, "expected an object, found " + json_type_name(v));
  check_keys(v, path, {"min", "max", "min_fraction_of_datasheet", "baseline_tolerance"});
  if (v.empty())
    reject(path, "sets nothing: give \"min\" or \"max\", \"min_fraction_of_datasheet\" or \"baseline_tolerance\" "
                 "(list the ceiling under \"required\" to only require it)");
  for (const auto& [key, value] : v.items()) {
    const std::string p = path + "." + key;
    if (key == "min" || key == "max") {
      const Quantity q = quantity_at(value, p);
      const std::string unit = known_unit.empty() ? q.unit : known_unit;
      if (!is_rate_unit(unit) && unit != "s")
        reject(p, "a limit in " + q.unit + " is neither a rate (B/s, FLOP/s, OP/s) nor a latency (s)");
      const bool rate = is_rate_unit(unit);
      if (key == "min" && !rate) reject(p, name + " is a latency (lower is better): use \"max\"");
      if (key == "max" && rate) reject(p, name + " is a rate (higher is better): use \"min\"");
      if (q.unit != unit)
        reject(p, "unit " + q.unit + " does not match " + name + ", which is measured in " + unit);
      if (!rule.unit.empty() && rule.unit != unit)
        reject(p, "unit " + q.unit + " does not match the other limit's, " + rule.unit);
      rule.unit = unit;
      if (!(q.value > 0)) reject(p, "must be above zero");
      // A limit outside what a profile may hold decides nothing: a min of 1e20 B/s fails every GPU, a max of
      // 1e30 s passes every one.
      if (const std::string why = implausible_limit(q.value, unit); !why.empty())
        reject(p, why + ": a limit no measurement can be compared with");
      (key == "min" ? rule.min : rule.max) = q.value;
    } else if (key == "min_fraction_of_datasheet") {
      if (value.is_boolean() && !value.get<bool>()) {
        rule.min_fraction_of_datasheet.reset();  // false: switch the default off (parse_rules: there is one)
        continue;
      }
      if (!has_datasheet_figure(name)) reject(p, "the datasheet has no figure for " + name);
      rule.min_fraction_of_datasheet = fraction_at(value, p, 0.0, 1.0, false);
      rule.fraction_is_default = false;
    } else {
      rule.baseline_tolerance = fraction_at(value, p, 0.0, 0.99, true);
    }
  }
}

}  // namespace

Rules parse_rules(const json& doc, const std::string& origin) {
  if (!doc.is_object()) reject("(document)", "expected an object, found " + json_type_name(doc));
  check_keys(doc, "", {"schema", "note", "extends_defaults", "required", "baseline_tolerance", "clock_scaling_floor",
                       "power_cap_scaling_floor", "max_cv", "ceilings", "health"});
  if (!doc.contains("schema")) reject("schema", "required but missing (\"" + std::string(kRulesSchema) + "\")");
  if (!doc["schema"].is_string() || doc["schema"].get<std::string>() != kRulesSchema)
    reject("schema", "expected \"" + std::string(kRulesSchema) + "\", found " + doc["schema"].dump());
  if (doc.contains("note") && !doc["note"].is_string()) reject("note", "expected a string");
  const bool extend = doc.contains("extends_defaults") ? bool_at(doc["extends_defaults"], "extends_defaults") : true;
  Rules r = extend ? default_rules() : Rules{};
  if (!extend) r.required.clear();
  r.origin = origin;
  if (doc.contains("required")) {
    const json& req = doc["required"];
    if (!req.is_array()) reject("required", "expected an array of ceiling names, found " + json_type_name(req));
    r.required.clear();
    for (std::size_t i = 0; i < req.size(); ++i) {
      const std::string p = "required[" + std::to_string(i) + "]";
      if (!req[i].is_string()) reject(p, "expected a ceiling name, found " + json_type_name(req[i]));
      const std::string name = req[i].get<std::string>();
      // family.variant, as every ceiling is named ("hbm." and "hbm..read" were taken and never found).
      if (!is_family_variant(name))
        reject(p, "'" + excerpt(name) + "' is not a ceiling name (ceilings are named family.variant)");
      if (std::find(r.required.begin(), r.required.end(), name) != r.required.end())
        reject(p, "'" + name + "' is required twice");
      r.required.push_back(name);
    }
  }
  if (doc.contains("baseline_tolerance"))
    r.baseline_tolerance = fraction_at(doc["baseline_tolerance"], "baseline_tolerance", 0.0, 0.99, true);
  if (doc.contains("clock_scaling_floor"))
    r.clock_scaling_floor = fraction_at(doc["clock_scaling_floor"], "clock_scaling_floor", 0.0, 1.0, false);
  if (doc.contains("power_cap_scaling_floor"))
    r.power_cap_scaling_floor =
        fraction_at(doc["power_cap_scaling_floor"], "power_cap_scaling_floor", 0.0, 1.0, false);
  if (doc.contains("max_cv")) r.max_cv = fraction_at(doc["max_cv"], "max_cv", 0.0, 1.0, false);
  if (doc.contains("ceilings")) {
    const json& c = object_at(doc, "ceilings", "ceilings");
    for (const auto& [name, v] : c.items()) {
      // false switches a default fraction off; where there is none (a misspelt name, or extends_defaults false) it
      // would switch nothing off without a word (review 90).
      if (v.is_object() && v.contains("min_fraction_of_datasheet") && v["min_fraction_of_datasheet"] == false &&
          !(r.ceilings.count(name) && r.ceilings[name].min_fraction_of_datasheet)) {
        std::string defaults;
        for (const auto& [n, rule] : default_rules().ceilings)
          if (rule.min_fraction_of_datasheet && n.find("_sustained") == std::string::npos)
            defaults += (defaults.empty() ? "" : ", ") + n;
        reject("ceilings." + name + ".min_fraction_of_datasheet",
               "no datasheet fraction is set for " + name + " to switch off (" +
                   (extend ? "the defaults set one for " + defaults + " and their _sustained twins"
                           : std::string("extends_defaults is false: no default is in force")) +
                   ")");
      }
      parse_ceiling_rule(name, v, "ceilings." + name, r.ceilings[name]);
      // A rule that only switches the default fraction off, or only sets the tolerance a baseline is judged with,
      // asks for nothing to be measured.
      bool sets_limit = false;
      for (const auto& [key, value] : v.items())
        if ((key != "min_fraction_of_datasheet" || !value.is_boolean()) && key != "baseline_tolerance")
          sets_limit = true;
      if (sets_limit) r.named.insert(name);
    }
    // A GEMM's _sustained twin is held to its burst type's fraction: a file that sets or switches off the burst
    // type's sets the twin's alike, unless it sets the twin's fraction itself ("gemm.int8": false had left
    // gemm.int8_sustained failing at 50%, review 90; a twin named for a min only still follows, review 92).
    for (const auto& [name, v] : c.items()) {
      const std::string twin = name + "_sustained";
      const bool sustained = name.size() > 10 && name.compare(name.size() - 10, 10, "_sustained") == 0;
      if (family_of(name) != "gemm" || sustained || !v.contains("min_fraction_of_datasheet") ||
          (c.contains(twin) && c[twin].is_object() && c[twin].contains("min_fraction_of_datasheet")))
        continue;
      CeilingRule& t = r.ceilings[twin];
      t.min_fraction_of_datasheet = r.ceilings[name].min_fraction_of_datasheet;
      t.fraction_is_default = r.ceilings[name].fraction_is_default;
    }
  }
  if (doc.contains("health")) {
    const json& h = object_at(doc, "health", "health");
    struct Flag {
      const char* key;
      bool HealthRules::*member;
    };
    static const Flag flags[] = {{"require_section", &HealthRules::require_section},
                                 {"uncorrected_ecc", &HealthRules::uncorrected_ecc},
                                 {"sram_threshold", &HealthRules::sram_threshold},
                                 {"row_remap", &HealthRules::row_remap},
                                 {"memory_repair", &HealthRules::memory_repair},
                                 {"inforom", &HealthRules::inforom},
                                 {"pcie_link", &HealthRules::pcie_link},
                                 {"pcie_slot", &HealthRules::pcie_slot},
                                 {"pcie_replays", &HealthRules::pcie_replays},
                                 {"xid", &HealthRules::xid},
                                 {"xid_log", &HealthRules::xid_log},
                                 {"sxid_log", &HealthRules::sxid_log},
                                 {"nvlink_errors", &HealthRules::nvlink_errors},
                                 {"nvlink_fabric", &HealthRules::nvlink_fabric},
                                 {"slowdown", &HealthRules::slowdown},
                                 {"power_limit", &HealthRules::power_limit},
                                 {"violation_time", &HealthRules::violation_time},
                                 {"mig_mode", &HealthRules::mig_mode},
                                 {"recovery_action", &HealthRules::recovery_action},
                                 {"persistence_mode", &HealthRules::persistence_mode},
                                 {"require_persistence_mode", &HealthRules::require_persistence_mode},
                                 {"verification", &HealthRules::verification},
                                 {"peer_access", &HealthRules::peer_access},
                                 {"readable", &HealthRules::readable}};
    std::set<std::string> known{"nvlink_links"};
    for (const Flag& f : flags) known.insert(f.key);
    check_keys(h, "health", known);
    for (const Flag& f : flags)
      if (h.contains(f.key)) r.health.*f.member = bool_at(h[f.key], std::string("health.") + f.key);
    if (h.contains("nvlink_links")) {
      const json& v = h["nvlink_links"];
      if (!v.is_number_integer())
        reject("health.nvlink_links", "expected a whole number of links, found " + json_type_name(v) + " " + v.dump());
      const long long n = v.get<long long>();
      if (n < 1 || n > static_cast<long long>(kMaxNvLinks))
        reject("health.nvlink_links", std::to_string(n) + " is out of range (1 to " + std::to_string(kMaxNvLinks) + ")");
      r.health.nvlink_links = static_cast<int>(n);
    }
  }
  return r;
}

Rules read_rules(const std::string& path) {
  const json doc = read_json_file(path);
  return parse_rules(doc, path);
}

namespace {

// The default host-link fractions on a PCIe Gen4 or older link, and on NVLink-C2C (see default_rules).
struct LinkFractions {
  double one_way, bidir;
};
constexpr LinkFractions kPcieGen4Fraction{0.70, 0.50}, kC2cFraction{0.60, 0.40};

const GpuSpec* spec_for(const Profile& p) { return find_gpu(p.device.name); }
// The board's entry, a MIG instance's too: for its host link, PCIe and TDP.
const GpuSpec* board_for(const Profile& p) { return find_gpu_board(p.device.name); }

// The datasheet threshold base for a ceiling and where it came from; PCIe uses the link's maximum.
struct Base {
  double value = 0;
  std::string source;
  // A host link whose copies reach a smaller share of its theoretical rate than Gen5's: PCIe Gen4 and older,
  // or NVLink-C2C.
  enum class Link { kOther, kPcieGen4OrOlder, kC2c } link = Link::kOther;
};
std::optional<Base> datasheet_base(const Profile& p, const Ceiling& c) {
  const std::string f = family_of(c.name);
  if (f == "pcie" && c.name.find("pageable") == std::string::npos) {
    const PcieInfo& l = p.device.pcie;
    std::optional<int> gen = l.max_gen, width = l.max_width;
    const GpuSpec* spec = board_for(p);
    const bool bidir = c.name.rfind("pcie.bidir", 0) == 0;  // bidir, bidir_sm: both directions summed
    if (spec && spec->nvlink_c2c_bandwidth)  // a Grace superchip: its host link is NVLink-C2C, whatever PCIe reads
      return Base{bidir ? *spec->nvlink_c2c_bandwidth : *spec->nvlink_c2c_bandwidth / 2,
                  "NVLink-C2C (datasheet " + spec->name + ", the superchip's host link)" +
                      std::string(bidir ? " (both directions)" : ""),
                  Base::Link::kC2c};
    if ((!gen || !width) && spec) {
      gen = spec->pcie_gen;
      width = spec->pcie_width;
    }
    if (!gen || !width) return std::nullopt;
    const double one_way = pcie_link_bandwidth(*gen, *width);
    return Base{bidir ? 2 * one_way : one_way,
                "PCIe Gen" + std::to_string(*gen) + " x" + std::to_string(*width) + " theoretical" +
                    (bidir ? " (both directions)" : ""),
                *gen <= 4 ? Base::Link::kPcieGen4OrOlder : Base::Link::kOther};
  }
  const auto ds = datasheet_for(p, c);
  if (!ds) return std::nullopt;
  const GpuSpec* spec = spec_for(p);
  if (spec && datasheet_value(*spec, c.name, c.detail)) return Base{*ds, "datasheet " + spec->name};
  return Base{*ds, "datasheet figure recorded in the profile (the built-in table has none for " + p.device.name + ")"};
}

// Decimals a limit needs to be printed exactly (to two): "5%", "2.6%", "90.35%" (a rounded limit would
// contradict its own verdict: "2.7% below the baseline (tolerance 3%)", failed).
int limit_decimals(double fraction) {
  for (int d = 0; d < 2; ++d) {
    const double scaled = fraction * 100.0 * std::pow(10.0, d);
    if (std::fabs(scaled - std::round(scaled)) < 1e-6) return d;
  }
  return 2;
}
std::string limit_percent(double fraction) { return format_percent(fraction, limit_decimals(fraction)); }

// A share printed beside the limit it missed, with the decimals that tell them apart ("84.9996%", never "85.0%
// of the peak, below 85%").
std::string percent_apart(double fraction, double limit, int decimals) {
  while (decimals < 6 && format_percent(fraction, decimals) == format_percent(limit, decimals)) ++decimals;
  return format_percent(fraction, decimals);
}

bool is_compute(const std::string& name) {
  const CeilingFamily* f = find_family(name);
  return f && f->level == FamilyLevel::kCompute;
}

// The SM clock a compute figure is quoted at: the boost clock, or for a tensor-core GEMM the datasheet's
// tensor_clock_hz where it has one (fp64 (DMMA) and fp32 GEMMs are quoted at the boost clock); 0 where unknown.
struct QuotedClock {
  double hz = 0;
  std::string reference;  // ", the clock the datasheet's tensor-core figures imply" for the tensor clock
};
QuotedClock quoted_clock(const Profile& p, const Ceiling& c) {
  const GpuSpec* spec = spec_for(p);
  const bool tensor = family_of(c.name) == "gemm" && c.name.rfind("gemm.fp64", 0) != 0 && c.name.rfind("gemm.fp32", 0) != 0;
  if (tensor && spec && spec->tensor_clock_hz > 0)
    return {spec->tensor_clock_hz, ", the clock the datasheet's tensor-core figures imply"};
  return {spec && spec->boost_clock_hz > 0 ? spec->boost_clock_hz : p.device.max_sm_clock_hz.value_or(0), ""};
}

// What scales a compute threshold: the factor, the note its source carries, and for a low clock nothing
// excused, why it was not scaled (the failure's reason repeats it).
struct ClockScale {
  double scale = 1.0;
  std::string note, unexcused;
};

// The threshold follows the SM clock only where the GPU's own power cap held it down, and by no more than the
// larger of power_cap_scaling_floor and clock_scaling_floor: a healthy H200 capped at 700 W under back-to-back
// GEMMs runs at 77-82% of the tensor clock and still clears the default fractions at 85% of them (its sustained
// ceilings, 2026-11-30), while a board that draws its cap at 60% of the clock (a leaky or badly cooled part)
// must not pass by it (a site that caps power on purpose lowers both floors). A clock held low by anything else
// (application clocks, sync boost, a clock that did not boost) is the fault being looked for: unscaled. Memory
// bandwidth is not scaled: HBM's clock does not move under load, so a lower one is a fault, not an operating point.
ClockScale clock_scale(const Profile& p, const Ceiling& c, const Rules& rules) {
  if (!is_compute(c.name)) return {};
  if (!c.telemetry.available) return {1.0, ", clock not recorded: unscaled", ""};
  const double observed = c.telemetry.sm_clock_hz;
  const QuotedClock quoted = quoted_clock(p, c);
  if (observed <= 0 || quoted.hz <= 0 || observed >= quoted.hz) return {};
  const std::string clocks = format_quantity(observed, "Hz") + " / " + format_quantity(quoted.hz, "Hz") + quoted.reference;
  const auto reasons = c.detail_number("throttle_reasons");
  const auto bits = reasons ? clock_events::from_number(*reasons) : std::nullopt;
  if (!bits || !(*bits & clock_events::kSwPowerCap)) {
    const std::string why = "the SM clock was " + format_quantity(observed, "Hz") + " of the quoted " +
                            format_quantity(quoted.hz, "Hz") +
                            " with no power cap (an application-clock or sync-boost limit, or a clock that did not boost)";
    return {1.0, ", unscaled: " + why, why};
  }
  const double least = std::max(rules.clock_scaling_floor, rules.power_cap_scaling_floor);
  const double raw = observed / quoted.hz;
  // A power limit set below the datasheet's TDP is the likeliest cause of a capped clock: say so.
  std::string limit;
  const GpuSpec* board = board_for(p);
  if (board && board->tdp_w > 0 && !board->tdp_whole_module && p.device.power_limit_w &&
      *p.device.power_limit_w < 0.95 * board->tdp_w)
    limit = "; its power limit is " + format_quantity(*p.device.power_limit_w, "W") +
            // A board whose TDP is a range (H100 PCIe 300-350 W) may be set anywhere in it: set so, it is configured,
            // not wrong, though its peaks are quoted at the top (review 100).
            (board->tdp_min_w > 0 && *p.device.power_limit_w >= board->tdp_min_w - 1  // 1 W for rounding
                 ? ", within the datasheet's configurable " + format_quantity(board->tdp_min_w, "W") + " to " +
                       format_quantity(board->tdp_w, "W") + ", whose top its peaks are quoted at"
                 : ", the datasheet's TDP " + format_quantity(board->tdp_w, "W"));
  return {std::max(raw, least),
          ", scaled to the SM clock " + clocks +
              (raw < least ? " (floored at " + limit_percent(least) + ": the GPU's own power cap held it down" + limit + ")"
                           : ""),
          ""};
}

// A peer ceiling is its slowest pair: name that pair (detail p2p_<src>_<dst>) and the median pair, so a
// failing node says which link to look at. "" for other ceilings.
std::string slowest_pair_note(const Ceiling& c) {
  if (family_of(c.name) != "nvlink" || !c.detail.is_object()) return "";
  std::string slowest;
  double low = 0;
  for (const PeerPairValue& pair : peer_pairs_in_detail(c.detail))
    if (slowest.empty() || pair.value < low) {
      low = pair.value;
      slowest = "GPU " + std::to_string(pair.src) + " -> GPU " + std::to_string(pair.dst);
    }
  if (slowest.empty()) return "";
  const auto median = c.detail.find("p2p_median");
  return " (slowest pair " + slowest + " at " + format_quantity(low, c.unit) +
         (median != c.detail.end() && median->is_number() ? "; median pair " + format_quantity(median->get<double>(), c.unit)
                                                           : std::string()) +
         ")";
}

// A sustained ceiling whose rate fell during its window: when, from what to what, and the SM clock beside
// it (detail.timeline), so a failing node says whether it started slow or slowed down. "" otherwise, or
// where the lowest bin is within 3% of the first.
std::string timeline_drop_note(const Ceiling& c) {
  if (!c.detail.is_object() || !c.detail.contains("timeline") || !c.detail["timeline"].is_array()) return "";
  const json* first = nullptr;
  const json* lowest = nullptr;
  for (const json& bin : c.detail["timeline"]) {
    if (!bin.is_object() || !bin.contains("rate") || !bin["rate"].is_number()) continue;
    if (!first) first = &bin;
    if (!lowest || bin["rate"].get<double>() < (*lowest)["rate"].get<double>()) lowest = &bin;
  }
  if (!first || first == lowest || (*lowest)["rate"].get<double>() >= 0.97 * (*first)["rate"].get<double>()) return "";
  auto when = [](const json& bin) {
    auto at = [&](const char* key) {
      return bin.contains(key) && bin[key].is_number() ? format_fixed(bin[key].get<double>(), 1) : std::string("?");
    };
    return at("start_s") + "-" + at("end_s") + " s";  // one decimal, as show prints the bins
  };
  auto clock = [](const json& bin) {
    return bin.contains("sm_clock_hz") && bin["sm_clock_hz"].is_number()
               ? " at " + format_quantity(bin["sm_clock_hz"].get<double>(), "Hz")
               : std::string();
  };
  return " (it fell from " + format_quantity((*first)["rate"].get<double>(), c.unit) + " in " + when(*first) +
         clock(*first) + " to " + format_quantity((*lowest)["rate"].get<double>(), c.unit) + " in " + when(*lowest) +
         clock(*lowest) + ")";
}

// What a failing ceiling's reason adds: the slowest peer pair, or the drop over a sustained window.
std::string failure_note(const Ceiling& c) { return slowest_pair_note(c) + timeline_drop_note(c); }

// The most a ceiling with a datasheet (or link) figure can read; above it the rate is not a fast GPU but a timing
// or counting fault. HBM, PCIe and NVLink figures are the physical limits themselves (bus width x clock, lanes x
// rate): 5% over is already a fault (a CLI probe had hbm.read pass at 123% of 4.8 TB/s). A compute figure is
// quoted at a clock the SMs may exceed (H100/H200 bf16: 989 TFLOP/s at 1.83 GHz, 1.98 GHz reachable): the limit
// follows the highest SM clock the device runs (device.clocks_max_hz.sm, else the boost clock), with the same 5%
// for the median's timing noise and the figure's rounding (bf16 on an H200: 989 x 1.98 / 1.83 x 1.05 = 1124).
constexpr double kPlausibleMargin = 1.05;
struct PlausibleLimit {
  double value = 0, share = 0;  // the limit, and its share of the figure
  std::string clocks;           // " at its highest SM clock, 1.98 GHz over the quoted 1.83 GHz," where it scales
};
PlausibleLimit plausible_limit(const Profile& p, const Ceiling& c, double figure) {
  double scale = 1.0;
  std::string clocks;
  if (is_compute(c.name)) {
    const GpuSpec* spec = spec_for(p);
    const double top = p.device.max_sm_clock_hz.value_or(spec ? spec->boost_clock_hz : 0);
    const double quoted = quoted_clock(p, c).hz;
    if (top > quoted && quoted > 0) {
      scale = top / quoted;
      clocks = " at its highest SM clock, " + format_quantity(top, "Hz") + " over the quoted " +
               format_quantity(quoted, "Hz") + ",";
    }
  }
  return {kPlausibleMargin * scale * figure, kPlausibleMargin * scale, clocks};
}

// Why a rate above what the device can attain is a fault; "" for one within it.
std::string implausible_reason(const Ceiling& c, const Base& base, const PlausibleLimit& most) {
  if (!is_rate_unit(c.unit) || c.value <= most.value) return "";
  return c.name + " reads " + format_percent(c.value / base.value) + " of " + base.source + " " +
         format_quantity(base.value, c.unit) + ", above the " +
         (most.clocks.empty() ? limit_percent(most.share) + " no GPU attains"
                              : format_percent(most.share) + " it can reach" + most.clocks + " with a 5% margin") +
         ": a timing or counting fault, not a fast GPU";
}

bool is_mig(const Profile& p) { return p.device.is_mig(); }

// The datasheet's figures are the whole GPU's. A MIG instance (a slice of its SMs and memory) cannot be judged
// against them: incomplete, not failed. A whole GPU that shows another SM count than its datasheet entry is not
// the GPU its name says (another SKU under the name, or SMs disabled): failed.
void sm_count_check(const Profile& p, std::vector<Check>& out) {
  const GpuSpec* spec = spec_for(p);
  const bool known = spec && spec->sm_count > 0;
  if (!known && !is_mig(p)) return;
  Check k = make_check("device", "SM count");
  k.measured = p.device.sm_count;
  k.measured_text = std::to_string(p.device.sm_count) + " SMs" + (is_mig(p) ? " (a MIG instance)" : "");
  k.threshold_text = known ? std::to_string(spec->sm_count) + " SMs" : "the whole GPU";
  if (known) k.threshold = spec->sm_count;
  k.source = known ? "datasheet " + spec->name : "the datasheet (whole GPUs)";
  if (is_mig(p)) {
    k.status = CheckStatus::kIncomplete;
    k.reason = "measured on a MIG instance of " + (p.device.board_uuid.empty() ? "its board" : p.device.board_uuid) +
               ": the datasheet's figures are the whole GPU's, so its ceilings cannot be judged against them "
               "(qualify the GPU with MIG mode disabled; rules' minimums and a baseline of the same instance size "
               "still apply)";
  } else if (p.device.sm_count == spec->sm_count) {
    k.status = CheckStatus::kPass;
  } else {
    k.status = CheckStatus::kFail;
    k.reason = "the GPU shows " + std::to_string(p.device.sm_count) + " SMs, the datasheet's " + spec->name + " has " +
               std::to_string(spec->sm_count) + ": another SKU under this name, or SMs disabled";
  }
  out.push_back(k);
}

// A pass against a limit by a number whose samples spread more than max_cv is no pass: incomplete, measure again
// (a number below its limit still fails).
void judge_spread(Check& k, const Ceiling& c, const Rules& rules) {
  if (k.status != CheckStatus::kPass || !(c.spread() > rules.max_cv)) return;
  k.status = CheckStatus::kIncomplete;
  k.reason = "measured with cv " + format_percent(c.spread(), 1) + " (above " + limit_percent(rules.max_cv) +
             "): the number is not stable enough to judge; rerun";
}

void ceiling_checks(const Profile& p, const Ceiling& c, const Rules& rules, std::vector<Check>& out) {
  const auto rule_it = rules.ceilings.find(c.name);
  const CeilingRule* rule = rule_it == rules.ceilings.end() ? nullptr : &rule_it->second;
  const std::string origin = rules.origin;
  // A GPU the table knows, whose datasheet publishes no figure for this ceiling (an L40S's FP64): nothing to
  // judge it against, and nothing missing that adding the GPU to the table would give.
  const bool no_published_figure = rule && rule->fraction_is_default && !is_mig(p) && spec_for(p) &&
                                   family_of(c.name) != "pcie" && !datasheet_base(p, c);
  if (rule && rule->min_fraction_of_datasheet && !no_published_figure) {
    Check k = make_check(c.name, "datasheet fraction");
    k.unit = c.unit;
    k.measured = c.value;
    const auto base = datasheet_base(p, c);
    if (is_mig(p)) {
      k.reason = "measured on a MIG instance (" + std::to_string(p.device.sm_count) +
                 " SMs): the datasheet's figures are the whole GPU's";
    } else if (family_of(c.name) == "pcie" && p.device.confidential_computing.value_or(false)) {
      // Nothing held back: the copies were measured, there is no link rate to hold them to.
      k.status = CheckStatus::kNotJudged;
      k.reason = "measured with confidential computing on: the driver encrypts every copy through bounce buffers, "
                 "so the link's rate does not bound it";
    } else if (family_of(c.name) == "nvlink" && p.device.nvlink_encrypted()) {
      k.status = CheckStatus::kNotJudged;
      k.reason = "measured with confidential computing's NVLink encryption: the peer copies were encrypted, so the "
                 "datasheet's NVLink rate is not theirs to reach";
    } else if (!base) {
      k.reason = family_of(c.name) == "pcie"
                     ? "no PCIe link reading in the profile (device.pcie) and no PCIe generation and width for " +
                           p.device.name + " in the datasheet table"
                     : "no datasheet figure for " + c.name + " on " + p.device.name +
                           (spec_for(p) ? " (its datasheet publishes none)" : " (add the GPU to the datasheet table)");
    } else {
      const ClockScale clock = clock_scale(p, c, rules);
      double fraction = *rule->min_fraction_of_datasheet;
      if (rule->fraction_is_default && base->link != Base::Link::kOther) {
        const LinkFractions& f = base->link == Base::Link::kC2c ? kC2cFraction : kPcieGen4Fraction;
        fraction = std::min(fraction, c.name.rfind("pcie.bidir", 0) == 0 ? f.bidir : f.one_way);
      }
      k.threshold = fraction * base->value * clock.scale;
      k.source = limit_percent(fraction) + " of " + base->source + " " +
                 format_quantity(base->value, c.unit) + clock.note + " (" + origin + ")";
      k.reason = implausible_reason(c, *base, plausible_limit(p, c, base->value));
      const bool ok = c.value >= *k.threshold && k.reason.empty();
      k.status = ok ? CheckStatus::kPass : CheckStatus::kFail;
      if (!ok && k.reason.empty())
        k.reason = c.name + " reaches " +
                   percent_apart(c.value / (base->value * clock.scale), fraction,
                                 std::max(1, limit_decimals(fraction))) +
                   " of the " + (clock.scale < 1 ? "clock-scaled " : "") + "peak, below " + limit_percent(fraction) +
                   (clock.unexcused.empty() ? "" : ": " + clock.unexcused) + failure_note(c);
      judge_spread(k, c, rules);
    }
    out.push_back(k);
  } else if (const auto base = datasheet_base(p, c); base && is_rate_unit(c.unit)) {
    // A rate no fraction rule judges (a _ref8192, a ceiling whose default a rules file switched off) is still a
    // fault past what the device can attain.
    const PlausibleLimit most = plausible_limit(p, c, base->value);
    Check k = make_check(c.name, "plausible");
    k.unit = c.unit;
    k.measured = c.value;
    k.threshold = most.value;
    k.source = format_percent(most.share) + " of " + base->source + " " + format_quantity(base->value, c.unit) +
               (most.clocks.empty() ? ", the most a GPU attains" : ", what it can reach" + most.clocks + " with a 5% margin");
    k.reason = implausible_reason(c, *base, most);
    k.status = k.reason.empty() ? CheckStatus::kPass : CheckStatus::kFail;
    out.push_back(k);
  }
  if (rule && (rule->min || rule->max)) {
    Check k = make_check(c.name, rule->min ? "minimum" : "maximum");
    k.unit = c.unit;
    k.measured = c.value;
    k.threshold = rule->min ? *rule->min : *rule->max;
    k.source = "rules file " + origin;
    // The unit the limit was written in (a rule built in code without one: its family's)
    const std::string rule_unit = rule->unit.empty() ? ceiling_unit_for(c.name) : rule->unit;
    if (c.unit != rule_unit) {
      k.threshold.reset();
      k.reason = c.name + " is recorded in " + c.unit + ", the rule is in " + (rule_unit.empty() ? "no unit" : rule_unit);
      out.push_back(k);
      return;
    }
    const bool ok = rule->min ? c.value >= *rule->min : c.value <= *rule->max;
    k.status = ok ? CheckStatus::kPass : CheckStatus::kFail;
    if (!ok) k.reason = rule->min ? c.name + " below the minimum" + failure_note(c) : c.name + " above the maximum";
    // A limit is a plain comparison (a site's acceptance line), but a miss within the median's own noise is said:
    // a rerun may pass (review 36: the stored H200's pcie.d2h missed 55.3 GB/s by 0.05%, its standard error 0.09%).
    if (!ok && c.samples > 1) {
      const double se = c.median_standard_error();
      const double apart = std::fabs(c.value / *k.threshold - 1);
      if (apart <= kBaselineNoiseStandardErrors * se)
        k.reason += " (by " + format_percent(apart, apart < 0.01 ? 2 : 1) + ", within " +
                    format_fixed(kBaselineNoiseStandardErrors, 0) + " standard errors of its median, " +
                    format_percent(se, 2) + ": a rerun may pass)";
    }
    judge_spread(k, c, rules);
    out.push_back(k);
  }
  if (rules.health.verification) {
    Check k = make_check(c.name, "verified");
    k.measured_text = c.verified ? "yes" : "no";
    k.threshold_text = "yes";
    k.source = "health rule verification";
    k.status = c.verified ? CheckStatus::kPass : CheckStatus::kFail;
    if (!c.verified) k.reason = "the result was not verified: its number cannot be trusted";
    out.push_back(k);
  }
  if (rules.health.slowdown) {
    Check k = make_check(c.name, "HW/thermal slowdown");
    k.threshold_text = "none";
    k.source = "health rule slowdown (throttled flag, detail.throttle_reasons)";
    const auto recorded = c.detail_number("throttle_reasons");
    const auto reasons = recorded ? clock_events::from_number(*recorded) : std::nullopt;
    const bool have_bits = reasons.has_value();
    std::uint64_t bits = reasons.value_or(0);
    // How much of the measurement a reason covered, where the telemetry counted it.
    auto in_readings = [&](const char* key) {
      const std::string n = readings_text(c, key);
      return n.empty() ? n : " in " + n;
    };
    // NVML also raises HW_SLOWDOWN (alone) for a moment during a P-state or clock change (nvml.h): in one
    // reading of several it is that, not the hardware holding the clock down; from two readings on it counts.
    const auto hw_readings = c.detail_number("hw_slowdown_readings");
    const auto all_readings = c.detail_number("reason_readings");
    std::string transient;
    if ((bits & clock_events::kHardwareSlowdownMask) == clock_events::kHwSlowdown && hw_readings &&
        *hw_readings <= 1 && all_readings && *all_readings >= 3) {
      transient = "hw_slowdown" + in_readings("hw_slowdown_readings") + " (a lone reading: a clock change)";
      bits &= ~clock_events::kHwSlowdown;
    }
    if (!c.telemetry.available && !c.throttled && !have_bits) {
      // No NVML readings: "none" would be a guess.
      k.measured_text = "no telemetry";
      k.reason = "no telemetry was recorded for " + c.name + " (NVML unavailable): a slowdown could not be seen "
                 "(set \"health\": {\"slowdown\": false} to accept that)";
    } else if ((!c.throttled || !transient.empty()) && !(bits & clock_events::kHardwareSlowdownMask)) {
      k.status = CheckStatus::kPass;
      // The table keeps the measured column short: the readings behind it are the reason.
      k.measured_text = have_bits && bits ? clock_events::names(bits) : "none";
      k.reason = transient;
    } else if (!have_bits || bits == 0) {
      k.status = CheckStatus::kFail;
      k.measured_text = "throttled";
      k.reason = have_bits ? "measured while throttled, and no reason was recorded for it"
                           : "measured while throttled and the reasons were not recorded";
    } else if (bits & clock_events::kHardwareSlowdownMask) {
      k.status = CheckStatus::kFail;
      k.measured_text = clock_events::names(bits);
      k.reason = "measured under " + clock_events::names(bits & clock_events::kHardwareSlowdownMask) +
                 in_readings("hw_slowdown_readings") + ": the hardware held the clock down";
    } else {
      // The software power cap under full load is how the GPU is meant to run; the clock it left is
      // what the datasheet check scales by.
      k.status = CheckStatus::kPass;
      const std::uint64_t shown = bits & clock_events::kSlowdownMask ? bits & clock_events::kSlowdownMask : bits;
      k.measured_text = clock_events::names(shown);
      k.reason = clock_events::names(shown) + in_readings("power_cap_readings") + " (expected under load)" +
                 (transient.empty() ? "" : "; " + transient);
    }
    out.push_back(k);
  }
}

// A rules file limit on a ceiling the profile lacks: failed where its measurement failed, otherwise
// incomplete (skipped, cut short, never measured, or a misspelt name: near matches are named).
Check absent_ceiling_check(const Profile& p, const std::string& name, const Rules& rules) {
  Check k = make_check(name, "rule applies");
  k.threshold_text = "measured";
  k.source = "rules file " + rules.origin;
  auto in = [&](const std::vector<Skipped>& v) -> const Skipped* {
    for (const Skipped& s : v)
      if (s.name == name) return &s;
    return nullptr;
  };
  if (const Skipped* e = in(p.errors)) {
    const bool cut = cut_short_reason(e->reason);
    k.status = cut ? CheckStatus::kIncomplete : CheckStatus::kFail;
    k.measured_text = cut ? "cut short" : "error";
    k.reason = "rule set for " + name + ", but its measurement " + (cut ? "was " : "failed: ") + e->reason;
  } else if (const Skipped* s = in(p.skipped)) {
    k.measured_text = "skipped";
    k.reason = "rule set for " + name + ", but it was not measured: " + s->reason;
  } else {
    k.measured_text = "missing";
    k.reason = "rule set for " + name + ", but the profile has no " + name + ": not measured, or a misspelt name?" +
               did_you_mean(p, name);
  }
  return k;
}

// Whether the profile's health section saw NVLinks up (an unreadable or absent section: no).
bool nvlinks_up(const Profile& p) {
  const auto it = p.raw.find("health");
  if (it == p.raw.end() || !it->is_object()) return false;
  try {
    const HealthSection s = health_from_json(*it, "health");
    for (const HealthSnapshot* snap : s.snapshots())
      if (snap->value("nvlink.links_active").value_or(0) > 0) return true;
  } catch (const InputError&) {
    // judged, with its reason, by the health checks
  }
  return false;
}

// Peer ceilings claim what every GPU pair attains. Where NVLinks are up every pair should reach every
// other, so pairs left out for lack of peer access fail (a fabric manager or ACS/IOMMU problem), and so
// does a family skipped because no pair could. Without NVLink, GPUs under different sockets or root
// complexes may lack P2P by design: the left-out pairs are noted, not failed.
void peer_access_checks(const Profile& p, std::vector<Check>& out) {
  const bool links_up = nvlinks_up(p);
  const std::string hint = ": NCCL would route those pairs through host memory (check the fabric manager on "
                           "NVSwitch systems, ACS/IOMMU settings on PCIe; \"health\": {\"peer_access\": false} "
                           "accepts it)";
  for (const Ceiling& c : p.ceilings) {
    if (family_of(c.name) != "nvlink" || !c.detail.is_object()) continue;
    const auto it = c.detail.find("pairs_without_access");
    if (it == c.detail.end() || !it->is_number()) continue;
    const double missing = it->get<double>();
    Check k = make_check(c.name, "peer access");
    k.threshold = 0;
    k.measured = missing;
    k.measured_text = missing > 0 ? format_fixed(missing, 0) + " pair(s) without" : "every pair";
    k.threshold_text = "every pair";
    k.source = "health rule peer_access (cudaDeviceCanAccessPeer; a fault where NVLinks are up)";
    k.status = missing > 0 && links_up ? CheckStatus::kFail : CheckStatus::kPass;
    if (missing > 0 && links_up)
      k.reason = format_fixed(missing, 0) + " GPU pair(s) had no peer access and are not in " + c.name + hint;
    else if (missing > 0)
      k.reason = format_fixed(missing, 0) + " GPU pair(s) without peer access are not in " + c.name +
                 " (no NVLink up: GPUs under different sockets or PCIe root complexes may lack P2P)";
    // Pairs NVML could not classify are not in the ceiling either (they may be PCIe pairs): where NVLinks
    // are up, NVML failing for a GPU is a fault of its own (a GPU it has lost), and the ceiling misses them.
    if (const auto unknown = c.detail_number("pairs_unclassified"); unknown && *unknown > 0) {
      if (links_up) k.status = CheckStatus::kFail;
      k.reason += std::string(k.reason.empty() ? "" : "; ") + format_fixed(*unknown, 0) +
                  " GPU pair(s) NVML could not classify as NVLink or not are not in " + c.name +
                  (links_up ? " while NVLinks are up (a GPU NVML cannot answer for)" : "");
    }
    out.push_back(k);
  }
  if (!links_up) return;
  for (const Skipped& s : p.skipped) {
    if (family_of(s.name) != "nvlink" ||
        (s.reason.rfind(kNoPeerAccessReason, 0) != 0 && s.reason.rfind(kNoNvlinkPairReason, 0) != 0 &&
         s.reason.rfind(kUnclassifiedPairsReason, 0) != 0))
      continue;
    Check k = make_check(s.name, "peer access");
    k.threshold_text = "every pair";
    k.measured_text = "no pair";
    k.source = "health rule peer_access (cudaDeviceCanAccessPeer, NVLinks up in the health section)";
    k.status = CheckStatus::kFail;
    k.reason = "NVLinks are up but " + s.reason + hint;
    out.push_back(k);
  }
}

}  // namespace

std::string health_nvml_library(const Profile& p) {
  const auto h = p.raw.find("health");
  if (h == p.raw.end() || !h->is_object()) return "";
  const auto l = h->find("nvml_library");
  return l != h->end() && l->is_string() ? printable_text(l->get<std::string>()) : "";
}

QualifyResult qualify(const Profile& p, const Profile* baseline, const Rules& rules) {
  QualifyResult r;
  r.note = p.note();
  // Health read through another NVML than the driver's (CEILINGS_NVML_LIBRARY: the self-test's fake) is said with the
  // verdict (review 104: recorded, but a profile holding it passed without a word).
  if (const std::string library = health_nvml_library(p); !library.empty())
    r.note = (r.note ? *r.note + "; " : std::string()) + "its health was read through " + library +
             " (CEILINGS_NVML_LIBRARY), not the driver's NVML";
  r.device = p.device.name + " (" + p.device.uuid + ", bus " + p.device.pci_bus_id + ")" +
             (p.hostname.empty() ? "" : " on " + p.hostname);
  // One model: the same name, or two names of one datasheet entry ("NVIDIA H200" and "NVIDIA H200 141GB").
  const GpuSpec* this_model = find_gpu(p.device.name);
  if (baseline && normalize_gpu_name(baseline->device.name) != normalize_gpu_name(p.device.name) &&
      !(this_model && this_model == find_gpu(baseline->device.name)))
    throw InputError("the baseline is a profile of a " + baseline->device.name + ", this one of a " + p.device.name +
                     ": compare like with like");
  // A MIG instance against the whole GPU (or another instance size) is not like with like either.
  if (baseline && baseline->device.sm_count != p.device.sm_count)
    throw InputError("the baseline's GPU has " + std::to_string(baseline->device.sm_count) + " SMs" +
                     (is_mig(*baseline) ? " (a MIG instance)" : "") + ", this one " +
                     std::to_string(p.device.sm_count) + (is_mig(p) ? " (a MIG instance)" : "") +
                     ": compare like with like");
  // The same SM count, one a MIG instance and the other the whole GPU: that is what differs (review 48).
  if (baseline && is_mig(*baseline) != is_mig(p))
    throw InputError(std::string("the baseline was measured on ") +
                     (is_mig(*baseline) ? "a MIG instance" : "the whole GPU") + " and this profile on " +
                     (is_mig(p) ? "a MIG instance" : "the whole GPU") + " (" + std::to_string(p.device.sm_count) +
                     " SMs each): compare like with like");
  // A baseline that judges nothing would let any node pass against it.
  if (baseline && baseline->ceilings.empty())
    throw InputError("the baseline has no ceilings (" +
                     (baseline->hostname.empty() ? baseline->created : baseline->hostname + ", " + baseline->created) +
                     "): there is nothing to compare this profile against");

  // A rule may name a family this build does not know (one added since), but only one the profile measured or
  // tried: otherwise it is a misspelt family ("hmb.copy"), bad input, with the near matches named.
  auto known_family = [&](const std::string& name, const std::string& where) {
    if (!rule_family_known(name, p)) throw unknown_rule_family(name, where, p);
  };
  for (const std::string& name : rules.required) known_family(name, "required: " + name);
  for (const auto& [name, rule] : rules.ceilings) {
    known_family(name, "ceilings." + name);
    // A new family's limit is in the unit it was written in: the profile's record says whether that is its unit
    // (a known family's was checked as the file was read).
    if (const Ceiling* c = p.find(name); c && ceiling_unit_for(name).empty() && !rule.unit.empty() && c->unit != rule.unit)
      throw InputError("rules: 'ceilings." + name + "': the limit is in " + rule.unit + ", and the profile records " +
                       name + " in " + c->unit);
  }

  // A run stopped between families holds the finished ones only: what came after was never measured. A family that
  // failed (a crash) while the families after it ran is a failed measurement, as its errors say; where the rules
  // do not judge errors (verification off), the run is still not one to pass.
  if (const auto stopped = p.stopped_early()) {
    Check k = make_check("profile", "run complete");
    k.threshold_text = "complete";
    k.source = "the profile's measure record (measure.complete)";
    if (p.run_was_stopped()) {
      k.measured_text = "stopped early";
      k.reason = "the run was stopped before its end (" + *stopped +
                 "): the ceilings after that point were not measured; measure again";
    } else {
      k.measured_text = "a family failed";
      k.status = rules.health.verification ? CheckStatus::kFail : CheckStatus::kIncomplete;
      k.reason = "a family failed (" + *stopped + ") and the families after it ran: its unfinished cases are under "
                 "errors and skipped" + (rules.health.verification ? std::string()
                                                                   : " (not judged by these rules: verification off)");
    }
    r.checks.push_back(k);
  }

  for (const std::string& name : rules.required) {
    Check k = make_check(name, "required");
    k.threshold_text = "measured";
    k.source = "required ceilings (" + rules.origin + ")";
    if (p.find(name)) {
      k.status = CheckStatus::kPass;
      k.measured_text = "measured";
    } else {
      auto in = [&](const std::vector<Skipped>& v) -> const Skipped* {
        for (const Skipped& s : v)
          if (s.name == name) return &s;
        return nullptr;
      };
      if (const Skipped* e = in(p.errors)) {
        const bool cut = cut_short_reason(e->reason);  // a timeout or Ctrl-C: not measured, not failed
        k.status = cut ? CheckStatus::kIncomplete : CheckStatus::kFail;
        k.measured_text = cut ? "cut short" : "error";
        k.reason = (cut ? "not measured, the run was " : "measurement failed: ") + e->reason;
      } else if (const Skipped* s = in(p.skipped)) {
        k.measured_text = "skipped";
        k.reason = "not measured: " + s->reason;
      } else {
        k.measured_text = "missing";
        k.reason = "not in the profile";
      }
    }
    r.checks.push_back(k);
  }

  // Only where the datasheet judges: the SM count is what makes its figures this GPU's.
  const bool datasheet_judges = std::any_of(rules.ceilings.begin(), rules.ceilings.end(), [](const auto& kv) {
    return kv.second.min_fraction_of_datasheet.has_value();
  });
  if (datasheet_judges) sm_count_check(p, r.checks);
  for (const Ceiling& c : p.ceilings) ceiling_checks(p, c, rules, r.checks);
  for (const std::string& name : rules.named)
    if (!p.find(name)) r.checks.push_back(absent_ceiling_check(p, name, rules));
  if (rules.health.peer_access) peer_access_checks(p, r.checks);

  if (baseline) {
    // What the baseline was measured with, beside this profile's, as fleet and compare set them apart: another
    // cuBLAS or ceilings build (its measurement code) is another measurement, so a shortfall against it is not
    // this GPU's to fail for; another driver, power limit or host is said, for the reader to weigh (review 46).
    const Fingerprint mine = fingerprint_of(p), theirs = fingerprint_of(*baseline);
    std::vector<std::string> unlike = mine.differences(theirs);
    for (std::string& d : unlike) {
      if (const auto at = d.find("(peers: "); at != std::string::npos) d.replace(at, 8, "(baseline: ");
      // Confidential computing a profile does not record (one from before the field) is taken for off, and said
      // to be not recorded (review 84).
      if (d.rfind("confidential computing ", 0) == 0) {
        const std::string off_theirs = "(baseline: off)";
        if (!baseline->device.confidential_computing)
          if (const auto at = d.find(off_theirs); at != std::string::npos) d.replace(at, off_theirs.size(), "(baseline: not recorded)");
        if (!p.device.confidential_computing && d.rfind("confidential computing off ", 0) == 0)
          d.replace(0, std::string("confidential computing off").size(), "confidential computing not recorded");
      }
    }
    // Another measurement of every ceiling: another measurement code (a release bumped with the same code measures
    // alike; where either has none, the releases decide); of the GEMMs: another cuBLAS.
    const bool other_code = (mine.measurement_code.empty() || theirs.measurement_code.empty()
                                 ? mine.tool != theirs.tool
                                 : mine.measurement_code != theirs.measurement_code) ||
                            mine.quick != theirs.quick;  // a --quick pass against a full one (review 98)
    const bool other_cublas = mine.cublas != theirs.cublas;
    // Confidential computing on one side only: the host<->device copies and launches of one went through encrypted
    // bounce buffers, another measurement of those ceilings.
    const bool other_cc = mine.confidential_computing_text() != theirs.confidential_computing_text();
    const bool nvlink_encrypted = mine.nvlink_encrypted() || theirs.nvlink_encrypted();
    // Measured with more GPUs at once than the baseline: they shared the node's power, cooling and host links,
    // which can only lower a ceiling, so a shortfall is not this GPU's to fail for; with fewer it is (review 51).
    const bool more_together = mine.measured_together && theirs.measured_together &&
                               *mine.measured_together > *theirs.measured_together;
    std::string unlike_text;
    for (const std::string& d : unlike) unlike_text += (unlike_text.empty() ? "" : "; ") + d;
    if (!unlike.empty()) {
      Check k = make_check("baseline", "measured alike");
      k.status = CheckStatus::kNotJudged;
      k.measured_text = "no";
      // Which shortfalls go unjudged: every one, or those of the GEMMs and/or of the copies and launches.
      std::string unjudged;
      if (other_code || more_together) {
        unjudged = " (another measurement: a shortfall against the baseline is not judged)";
      } else if (other_cublas || other_cc) {
        unjudged = std::string(" (another measurement: a shortfall against the baseline is not judged for ") +
                   (other_cublas ? "the GEMMs cuBLAS runs" : "") + (other_cublas && other_cc ? " nor for " : "") +
                   (other_cc ? std::string("the host<->device copies and launches") +
                                   (nvlink_encrypted ? " and the peer copies" : "")
                             : std::string()) +
                   ")";
      }
      k.reason = "this profile was measured unlike the baseline: " + unlike_text + unjudged;
      r.checks.push_back(k);
    }
    // A baseline from a run that did not finish, or with cases that failed, judges fewer ceilings than it seems to.
    if (const auto stopped = baseline->stopped_early(); stopped || !baseline->errors.empty()) {
      Check k = make_check("baseline", "complete");
      k.status = CheckStatus::kNotJudged;
      k.measured_text = "no";
      k.reason = std::string("the baseline ") +
                 (stopped ? "is of a run that did not complete (" + *stopped + ")" : std::string("records failed cases")) +
                 ": the ceilings it lacks are not judged against it";
      r.checks.push_back(k);
    }
    for (const Ceiling& b : baseline->ceilings) {
      Check k = make_check(b.name, "baseline");
      const auto rule_it = rules.ceilings.find(b.name);
      const double tol = rule_it != rules.ceilings.end() && rule_it->second.baseline_tolerance
                             ? *rule_it->second.baseline_tolerance
                             : rules.baseline_tolerance;
      const bool higher = higher_is_better(b.unit);
      k.unit = b.unit;
      k.threshold = higher ? b.value * (1 - tol) : b.value * (1 + tol);
      k.source = "baseline " + format_quantity(b.value, b.unit) + (higher ? " - " : " + ") + limit_percent(tol) +
                 " (" + (baseline->hostname.empty() ? baseline->created : baseline->hostname + ", " + baseline->created) +
                 ")";
      const Ceiling* c = p.find(b.name);
      if (!b.verified) {  // a number that failed its own check is no reference (incomplete, never a verdict)
        if (c) k.measured = c->value;
        k.reason = "the baseline's " + b.name + " was not verified: its number cannot serve as a reference";
      } else if (!c) {
        k.measured_text = "missing";
        k.reason = "in the baseline but not measured here";
      } else if (c->unit != b.unit) {
        throw InputError("ceiling " + b.name + " is in " + c->unit + " here and in " + b.unit + " in the baseline");
      } else {
        k.measured = c->value;
        const bool ok = higher ? c->value >= *k.threshold : c->value <= *k.threshold;
        k.status = ok ? CheckStatus::kPass : CheckStatus::kFail;
        judge_spread(k, *c, rules);
        if (!ok) {
          const double apart = std::fabs(c->value / b.value - 1);
          k.reason = b.name + " is " + percent_apart(apart, tol, std::max(1, limit_decimals(tol))) +
                     (higher ? " below" : " above") + " the baseline (tolerance " + limit_percent(tol) + ")" +
                     failure_note(*c);
          // A peer ceiling is the slowest pair: one GPU with slow links makes it fail on every GPU that pairs with
          // it. Where this GPU's median pair is within the tolerance, the slow link may be the other GPU's.
          if (family_of(b.name) == "nvlink")
            if (const auto med = c->detail_number("p2p_median"), ref = b.detail_number("p2p_median"); med && ref) {
              // Median against median: a baseline without one (a fleet's holds slowest pairs) gives no hint.
              if (higher ? *med >= *ref * (1 - tol) : *med <= *ref * (1 + tol))
                k.reason += "; its median pair is within the baseline's tolerance: the slowest pair's other GPU may "
                            "be the slow one (`ceilings fleet` names the GPU whose pairs are slow)";
            }
          // Beyond the tolerance but not beyond the two medians' own noise (a cv of 10% over 10 samples is a
          // standard error of 4%): the measurements cannot tell this GPU from the baseline, so no verdict.
          const double noise = std::hypot(c->median_standard_error(), b.median_standard_error());
          if (other_code || (other_cublas && family_of(b.name) == "gemm") || (other_cc && confidential_computing_bound_ceiling(b.name, nvlink_encrypted))) {
            k.status = CheckStatus::kIncomplete;
            k.reason += "; measured otherwise than the baseline (" + unlike_text +
                        "): not told apart from that difference; " +
                        (other_code || (other_cublas && family_of(b.name) == "gemm")
                             ? std::string("measure the baseline with this build")
                             : p.device.confidential_computing
                                   ? "measure the baseline with confidential computing " +
                                         mine.confidential_computing_text() + ", as this GPU was"
                                   // Not recorded here: an older build's profile, or no NVML (or a driver before
                                   // R535) to read it from.
                                   : std::string("measure this GPU again with this build, which records it where "
                                                 "NVML can read it (a driver from R535 on)"));
          } else if (more_together) {
            k.status = CheckStatus::kIncomplete;
            k.reason += "; measured with " + std::to_string(*mine.measured_together) + " GPUs at once, the baseline with " +
                        std::to_string(*theirs.measured_together) +
                        ": not told apart from the shared power, cooling and host links; measure as the baseline was";
          } else if (apart <= kBaselineNoiseStandardErrors * noise) {
            k.status = CheckStatus::kIncomplete;
            k.reason += ", but within " + format_fixed(kBaselineNoiseStandardErrors, 0) +
                        " standard errors of the two medians (" + format_percent(noise, 1) +
                        ": cv " + format_percent(c->cv, 1) + " over " + std::to_string(c->samples) +
                        " samples here, " + format_percent(b.cv, 1) + " over " + std::to_string(b.samples) +
                        " in the baseline): not told apart from noise; measure again";
          }
        }
      }
      r.checks.push_back(k);
    }
    // A ceiling this profile measured that the baseline lacks is judged by no baseline row: said, not passed over.
    for (const Ceiling& c : p.ceilings)
      if (c.verified && !baseline->find(c.name)) {
        Check k = make_check(c.name, "baseline");
        k.status = CheckStatus::kNotJudged;
        k.unit = c.unit;
        k.measured = c.value;
        k.threshold_text = "none";
        k.reason = "not in the baseline: not judged against it";
        r.checks.push_back(k);
      }
    // A tolerance for a ceiling neither side has (a misspelt name) would leave the wider one in force without a
    // word (review 90); a named rule's absence has its row already.
    const std::set<std::string> held = profile_ceiling_names(p);
    for (const auto& [name, rule] : rules.ceilings)
      if (rule.baseline_tolerance && !rules.named.count(name) && !held.count(name) && !baseline->find(name)) {
        Check k = make_check(name, "rule applies");
        k.threshold_text = "in the profile or the baseline";
        k.source = "rules file " + rules.origin;
        k.measured_text = "missing";
        k.reason = "baseline_tolerance set for " + name + ", but neither the profile nor the baseline has " + name +
                   ": a misspelt name?" + did_you_mean(p, name);
        r.checks.push_back(k);
      }
  }

  if (rules.health.verification) {
    for (const Skipped& e : p.errors) {
      Check k = make_check(e.name, "measurement error");
      k.measured_text = "error";
      k.threshold_text = "no errors";
      k.source = "health rule verification (profile errors)";
      k.status = CheckStatus::kFail;
      k.reason = e.reason;
      if (cut_short_reason(e.reason)) {  // the run was stopped (timeout, Ctrl-C): exit 3, could not measure
        k.status = CheckStatus::kIncomplete;
        k.measured_text = "cut short";
        k.reason = "the run was " + e.reason + " (measure again without the limit)";
      }
      r.checks.push_back(k);
    }
  }

  for (Check& k : profile_health_checks(p, rules.health)) r.checks.push_back(std::move(k));

  // What the default rules would have judged, had the run measured it (required and named ones have rows).
  if (const GpuSpec* spec = spec_for(p); spec && !is_mig(p)) {
    const std::set<std::string> held = profile_ceiling_names(p);
    for (const auto& [name, rule] : rules.ceilings) {
      // (A fraction the file set is a named rule, with a row of its own; a twin that follows it is not.)
      if (!rule.min_fraction_of_datasheet || held.count(name) || rules.named.count(name) ||
          std::find(rules.required.begin(), rules.required.end(), name) != rules.required.end())
        continue;
      const std::string f = family_of(name);
      const bool figure = f == "pcie" ? datasheet_value(*spec, name) || (p.device.pcie.max_gen && p.device.pcie.max_width)
                          : f == "nvlink" ? datasheet_value(*spec, name) && p.gpus_visible && *p.gpus_visible > 1
                                          : datasheet_value(*spec, name).has_value();
      if (figure) r.not_measured.push_back(name);
    }
  }

  // Health checks alone are no qualification: a profile with no ceiling judged against a limit (none measured,
  // all skipped, or rules that set none) could otherwise pass without a number behind it. A row "not judged" (a
  // PCIe fraction under confidential computing, a ceiling the baseline lacks) judged nothing either (review 90).
  const bool judged = std::any_of(r.checks.begin(), r.checks.end(), [](const Check& k) {
    return (k.rule == "datasheet fraction" || k.rule == "minimum" || k.rule == "maximum" || k.rule == "baseline") &&
           (k.status == CheckStatus::kPass || k.status == CheckStatus::kFail);
  });
  if (!judged && !r.checks.empty() && !(is_mig(p) && datasheet_judges)) {  // then its SM count check says why
    Check k = make_check("profile", "ceilings judged");
    k.measured_text = std::to_string(p.ceilings.size()) + " ceiling(s), none judged";
    k.threshold_text = "at least one";
    k.source = "rules " + rules.origin;
    // Limits there were, none that could judge (a baseline measured otherwise, spreads past max_cv): said so, not
    // "no limit" (review 52).
    const std::size_t limited = static_cast<std::size_t>(std::count_if(r.checks.begin(), r.checks.end(), [](const Check& c) {
      // with a threshold: a datasheet fraction without the datasheet's figure sets no limit (review 53)
      return (c.rule == "datasheet fraction" || c.rule == "minimum" || c.rule == "maximum" || c.rule == "baseline") &&
             ((c.status == CheckStatus::kIncomplete && c.threshold.has_value()) || c.status == CheckStatus::kNotJudged);
    }));
    k.reason = p.ceilings.empty()
                   ? "the profile holds no ceiling (" + std::to_string(p.skipped.size()) + " skipped, " +
                         std::to_string(p.errors.size()) + " failed): a pass would say nothing of its performance"
               : limited > 0
                   ? std::to_string(limited) + " limit(s) of these rules apply to the profile's ceilings and none could "
                     "judge (see their rows): a pass would say nothing of its performance"
                   : "no ceiling of the profile has a limit in these rules (datasheet fraction, minimum, maximum or "
                     "baseline): a pass would say nothing of its performance";
    r.checks.push_back(k);
  }
  return r;
}

CheckStatus QualifyResult::verdict() const {
  if (checks.empty()) return CheckStatus::kIncomplete;
  bool incomplete = false;
  for (const Check& c : checks) {
    if (c.status == CheckStatus::kFail) return CheckStatus::kFail;
    if (c.status == CheckStatus::kIncomplete) incomplete = true;
  }
  return incomplete ? CheckStatus::kIncomplete : CheckStatus::kPass;
}

int QualifyResult::exit_code() const {
  switch (verdict()) {
    case CheckStatus::kPass: return kExitOk;
    case CheckStatus::kFail: return kExitFailed;
    case CheckStatus::kIncomplete: return kExitIncomplete;
    case CheckStatus::kNotJudged: break;  // never a verdict
  }
  return kExitIncomplete;
}

namespace {

// The significant digits that tell a value from its threshold apart (a fail at 4.0799 TB/s against 4.08 TB/s
// printed "4.08 TB/s >= 4.08 TB/s"): 3, or more where 3 print them alike.
int digits_apart(const Check& c) {
  int digits = 3;
  if (c.measured && c.threshold && !c.unit.empty() && *c.measured != *c.threshold)
    while (digits < 8 &&
           format_quantity(*c.measured, c.unit, digits) == format_quantity(*c.threshold, c.unit, digits))
      ++digits;
  return digits;
}

std::string measured_display(const Check& c) {
  if (!c.measured_text.empty()) return c.measured_text;
  if (!c.measured) return "-";
  return c.unit.empty() ? format_fixed(*c.measured, 0) : format_quantity(*c.measured, c.unit, digits_apart(c));
}

std::string threshold_display(const Check& c) {
  if (!c.threshold_text.empty()) return c.threshold_text;
  if (!c.threshold) return "-";
  const bool higher = c.unit.empty() ? false : higher_is_better(c.unit);
  const std::string op = c.rule == "baseline" || c.rule == "datasheet fraction" || c.rule == "minimum"
                             ? (higher ? ">= " : "<= ")
                             : (c.rule == "maximum" || c.rule == "plausible" ? "<= " : (c.unit.empty() ? "<= " : ">= "));
  return op + (c.unit.empty() ? format_fixed(*c.threshold, 0) : format_quantity(*c.threshold, c.unit, digits_apart(c)));
}

}  // namespace

Table checks_table(const std::vector<Check>& checks) {
  Table t;
  // The reason before where the threshold came from, whose long texts would push it past any terminal (review 108).
  t.columns = {"check", "rule", "result", "measured", "threshold", "reason", "threshold from"};
  t.right_aligned = {false, false, false, true, true, false, false};
  for (const Check& c : checks)
    t.add_row({c.subject, c.rule, status_name(c.status), measured_display(c), threshold_display(c), c.reason,
               c.source});
  return t;
}

json checks_to_json(const std::vector<Check>& checks) {
  json arr = json::array();
  for (const Check& c : checks) {
    json j = {{"check", c.subject},      {"rule", c.rule},          {"result", status_name(c.status)},
              {"measured_text", measured_display(c)}, {"threshold_text", threshold_display(c)},
              {"source", c.source},      {"reason", c.reason},      {"unit", c.unit}};
    j["measured"] = c.measured ? json(*c.measured) : json(nullptr);
    j["threshold"] = c.threshold ? json(*c.threshold) : json(nullptr);
    arr.push_back(j);
  }
  return arr;
}

std::string render_qualify(const QualifyResult& r, Format format) {
  std::size_t n[4] = {0, 0, 0, 0};
  for (const Check& c : r.checks) ++n[static_cast<int>(c.status)];
  if (format == Format::kJson) {
    json out = {{"verdict", status_name(r.verdict())}, {"exit_code", r.exit_code()}, {"device", r.device},
                {"counts", {{"pass", n[0]}, {"fail", n[1]}, {"incomplete", n[2]}, {"not_judged", n[3]}}},
                {"checks", checks_to_json(r.checks)}, {"not_measured", r.not_measured}};
    if (r.note) out["note"] = *r.note;
    return out.dump(2) + "\n";
  }
  // CSV is one table and nothing else, so a CSV reader can take it: the exit code carries the verdict. Numbers as
  // stored (SI base units, the unit in a column of its own), the displayed texts beside them, as show's and
  // compare's csv.
  if (format == Format::kCsv) {
    Table t;
    t.columns = {"check",          "rule",           "result", "measured",       "threshold",
                 "unit",           "measured_text",  "threshold_text", "threshold_from", "reason"};
    for (const Check& c : r.checks)
      t.add_row({c.subject, c.rule, status_name(c.status), csv_number(c.measured), csv_number(c.threshold), c.unit,
                 measured_display(c), threshold_display(c), c.source, c.reason});
    return render(t, format);
  }
  std::ostringstream os;
  std::string verdict = status_name(r.verdict());
  std::transform(verdict.begin(), verdict.end(), verdict.begin(), ::toupper);
  const std::string line =
      "verdict: " + verdict + " for " + r.device + " (" + std::to_string(n[0]) + " pass, " + std::to_string(n[1]) +
      " fail, " + std::to_string(n[2]) + " incomplete" +
      (n[3] > 0 ? ", " + std::to_string(n[3]) + " not judged" : std::string()) +
      (r.not_measured.empty() ? std::string() : ", " + std::to_string(r.not_measured.size()) + " not measured") + ")";
  const bool md = format == Format::kMarkdown;
  os << (md ? "**" + line + "**\n" : line + "\n");
  // What failed or could not be judged, with why, under the verdict: the table below holds every row, in an order
  // that buried four failures among 150 passes (review 108).
  constexpr std::size_t kListed = 20;
  std::size_t listed = 0, unlisted = 0;
  for (CheckStatus s : {CheckStatus::kFail, CheckStatus::kIncomplete})
    for (const Check& c : r.checks) {
      if (c.status != s) continue;
      if (listed == kListed) {
        ++unlisted;
        continue;
      }
      ++listed;
      const std::string measured = measured_display(c), threshold = threshold_display(c);
      os << (md ? "- " : "  ") << status_name(s) << ": " << c.subject << " (" << c.rule << ")"
         << (measured.empty() || threshold.empty() ? "" : ", " + measured + " against " + threshold)
         << (c.reason.empty() ? "" : ": " + c.reason) << "\n";
    }
  if (unlisted > 0) os << (md ? "- " : "  ") << "... and " << unlisted << " more in the table below\n";
  os << "\n";
  if (r.note) os << "NOTE: " << *r.note << (md ? "\n\n" : "\n");
  os << render(checks_table(r.checks), format);
  if (!r.not_measured.empty()) {
    std::string names;
    for (const std::string& name : r.not_measured) names += (names.empty() ? "" : ", ") + name;
    os << "\nnot measured, so not judged: " << names
       << " (the default rules judge them where a profile holds them; measure their families, or list them under "
          "\"required\" in a rules file to make their absence incomplete)\n";
  }
  return os.str();
}

}  // namespace ceilings
