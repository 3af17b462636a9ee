// Node qualification: rules (built-in defaults or a checked ceilings.rules/1 file) applied to a
// profile, an optional baseline profile and the profile's health section -> one verdict per check.
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ceilings/health.hpp"
#include "ceilings/profile.hpp"
#include "ceilings/table.hpp"

namespace ceilings {

// Rules file (JSON), schema ceilings.rules/1. Every key is optional except "schema"; unknown keys,
// wrong types, bare numbers, unknown units, units that do not fit the ceiling and out-of-range values
// are rejected with the key path. Quantities are strings with a unit, parsed by parse_quantity.
//   {"schema": "ceilings.rules/1",
//    "note": "free text",
//    "extends_defaults": true,                  // false: no default ceiling rules and nothing required; the
//                                               // health checks, floor and tolerance keep their defaults
//    "required": ["hbm.copy", "gemm.bf16"],     // replaces the default list; missing -> incomplete
//    "baseline_tolerance": "5%",                // 0% .. 99%
//    "clock_scaling_floor": "60%",              // (0%, 100%]: a power-capped threshold never scales below it
//    "power_cap_scaling_floor": "85%",          // (0%, 100%]: ... nor below this (the larger of the two applies)
//    "max_cv": "10%",                           // (0%, 100%]: a ceiling judged with a larger cv is incomplete
//    "ceilings": {"hbm.copy": {"min": "4.2 TB/s", "min_fraction_of_datasheet": "85%", "baseline_tolerance": "3%"},
//                 "latency.launch": {"max": "4 us"},                // latencies take max, rates take min
//                 "gemm.int8": {"min_fraction_of_datasheet": false}}, // false switches a default off
//    "health": {"require_section": true, "uncorrected_ecc": true, "row_remap": true, "inforom": true,
//               "pcie_link": true,
//               "pcie_slot": true, "pcie_replays": true, "xid": true, "xid_log": true, "sxid_log": true,
//               "nvlink_errors": true, "nvlink_fabric": true,
//               "slowdown": true, "power_limit": true, "violation_time": true, "mig_mode": true,
//               "recovery_action": true,
//               "persistence_mode": true, "require_persistence_mode": false,
//               "verification": true, "peer_access": true, "readable": true, "sram_threshold": true,
//               "memory_repair": true,
//               "nvlink_links": 18}}  // links that must be up; default: not checked
// Units per family: hbm/l2/smem/pcie/nvlink B/s, gemm/fma FLOP/s (gemm.int8 OP/s), latency s.
inline constexpr const char* kRulesSchema = "ceilings.rules/1";

struct CeilingRule {
  std::optional<double> min, max;                    // absolute thresholds, SI (min: rates, max: latencies)
  std::string unit;                                  // the unit min/max were given in (with either)
  std::optional<double> min_fraction_of_datasheet;   // of the clock-scaled datasheet value (PCIe: of the link)
  bool fraction_is_default = false;                  // the built-in one (the host link's is lower on PCIe Gen4
                                                     // and older, and on NVLink-C2C)
  std::optional<double> baseline_tolerance;          // overrides the global tolerance for this ceiling
};

struct HealthRules {
  bool require_section = true;  // no health section -> incomplete
  bool uncorrected_ecc = true;  // an uncorrected ECC error (since driver load or during the run) -> fail
  bool sram_threshold = true;   // NVML's SRAM uncorrectable-error threshold exceeded -> fail (field diagnostic, RMA)
  bool row_remap = true;        // a pending or failed row remap (or pending page retirement) -> fail
  bool memory_repair = true;    // memory NVML flags as unrepairable, or a channel or TPC repair pending -> fail
  bool inforom = true;          // an InfoROM that fails its checksums -> fail (DCGM's InfoROM watch warns)
  bool pcie_link = true;        // link generation or width below the most the slot allows -> fail
  bool pcie_slot = true;        // the most the slot allows below the most the GPU supports -> fail
  bool pcie_replays = true;     // replay rate above DCGM's expected rate for the link (8 per minute where unknown) -> fail
  bool xid = true;              // any XID critical error while monitoring -> fail
  bool xid_log = true;          // a hardware XID of this GPU in the kernel log since boot -> fail
  bool sxid_log = true;         // a fatal NVSwitch SXid of the node in the kernel log since boot -> fail
  bool nvlink_errors = true;    // where NVLinks are up: a replay or recovery error, or CRC errors at
                                // 100/s or more, during the run -> fail (DCGM's NVLink health limits)
  bool nvlink_fabric = true;    // an NVSwitch system's GPU not registered in the NVLink fabric, or its fabric health
                                // reporting a fault (degraded bandwidth, a route unhealthy, a bad configuration) -> fail
  std::optional<int> nvlink_links;  // NVLinks that must be up (18 on an HGX H100/H200); fewer -> fail
  bool slowdown = true;         // HW/thermal slowdown during measurement -> fail
  bool power_limit = true;      // a power limit below 95% of the board's default (or the datasheet's TDP) -> fail
  bool violation_time = true;   // clocks held by the board limit or reliability policy for 5% or more of the run
                                // -> fail; less is noted (the power cap's violation time is never judged)
  bool mig_mode = true;         // a MIG mode change pending (pending != current: a GPU reset outstanding) -> fail
  bool recovery_action = true;  // the driver asks for a GPU reset, a node reboot or a drain (its recovery action) -> fail
  bool persistence_mode = true;           // the row: persistence mode disabled is noted (DCGM warns), passes
  bool require_persistence_mode = false;  // ... and fails instead
  bool verification = true;     // a ceiling not verified, or an entry in the profile's errors -> fail
  bool peer_access = true;      // GPU pairs left out of a peer ceiling for lack of peer access, or none
                                // with access while NVLinks are up -> fail
  bool readable = true;         // a health counter that could not be read -> incomplete

  // Every check above off (a caller that judges ceilings alone); kept beside the members so a new one is not
  // left on by mistake.
  static HealthRules none() {
    HealthRules r;
    r.require_section = r.uncorrected_ecc = r.row_remap = r.inforom = r.pcie_link = r.pcie_slot = r.pcie_replays =
        r.xid = r.xid_log = r.sxid_log = r.nvlink_errors = r.slowdown = r.power_limit = r.violation_time = r.mig_mode =
            r.recovery_action = r.nvlink_fabric =
            r.persistence_mode = r.require_persistence_mode = r.verification = r.peer_access = r.readable = false;
    r.sram_threshold = r.memory_repair = false;
    r.nvlink_links.reset();
    return r;
  }
};

// A ceiling beyond the baseline tolerance but within this many standard errors of the two medians (each
// Ceiling::median_standard_error, combined in quadrature) is incomplete, not failed: the measurements cannot tell
// it from the baseline (fleet's outlier rule asks the same of a GPU's own median).
inline constexpr double kBaselineNoiseStandardErrors = 2.0;

struct Rules {
  std::string origin = "built-in defaults";
  std::vector<std::string> required;         // ceilings that must be measured
  double baseline_tolerance = 0.05;          // a ceiling may be this much worse than the baseline
  // A compute threshold follows the SM clock only where the GPU's own power cap held it down, and never below
  // the larger of these two fractions (clock_scaling_floor is the older key, kept so existing files load).
  double clock_scaling_floor = 0.60;
  double power_cap_scaling_floor = 0.85;
  // A ceiling whose samples spread more than this (coefficient of variation) passes no limit: incomplete,
  // measure again (a low number still fails).
  double max_cv = 0.10;
  std::map<std::string, CeilingRule> ceilings;
  // The ceilings a rules file sets a limit for: each is judged even where the profile lacks it (a
  // misspelt or unmeasured name is incomplete, not silently ignored). The built-in defaults name none:
  // `required` says which of their ceilings must be measured.
  std::set<std::string> named;
  HealthRules health;
};

// The defaults for GPUs in the datasheet table (fractions justified in qualify.cpp).
Rules default_rules();
// Validates a rules document (every key, type, unit and range) and applies it over the defaults
// (unless "extends_defaults": false). Errors name the key path; they are InputErrors (exit 2).
Rules parse_rules(const json& document, const std::string& origin);
Rules read_rules(const std::string& path);

// kNotJudged: a row shown for what was read, which the rule could not judge and which does not hold the verdict back
// (the SRAM status NVML answers root only, a PCIe generation read with no load, violation time over a window too
// short for its counters): never a pass for what was not judged, nor incomplete where no run could judge it.
enum class CheckStatus { kPass, kFail, kIncomplete, kNotJudged };
const char* status_name(CheckStatus s);  // "pass" | "fail" | "incomplete" | "not judged"

struct Check {
  std::string subject;  // a ceiling name, "health", "profile"
  std::string rule;     // "datasheet fraction", "baseline", "uncorrected ECC", ...
  CheckStatus status = CheckStatus::kIncomplete;
  std::optional<double> measured, threshold;
  std::string unit;                            // of measured and threshold, when they are quantities
  std::string measured_text, threshold_text;   // when they are not (flags, link widths)
  std::string source;                          // where the threshold came from
  std::string reason;                          // why it failed or is incomplete
};

inline Check make_check(std::string subject, std::string rule) {
  Check c;
  c.subject = std::move(subject);
  c.rule = std::move(rule);
  return c;
}

struct QualifyResult {
  std::string device;  // "NVIDIA H200 (GPU-..., 0000:19:00.0)"
  std::optional<std::string> note;  // the profile's note: a fixture or a fleet baseline, not one GPU's run
  std::vector<Check> checks;
  // Ceilings a default rule would judge on this GPU (its datasheet, or its link, has their figure) that the
  // profile does not hold at all: neither measured, skipped nor failed (a family left out of the run). No
  // verdict rests on them; the report names them, so a pass is not read as covering them.
  std::vector<std::string> not_measured;
  CheckStatus verdict() const;  // any fail -> fail; else any incomplete (or no checks) -> incomplete
  int exit_code() const;        // 0 pass, 1 fail, 3 incomplete
};

// The health checks on a health section; `profile` (optional) adds the link seen in device.pcie.
std::vector<Check> health_checks(const HealthSection& section, const HealthRules& rules,
                                 const Profile* profile = nullptr);
// A profile's health section checks (parses profile.raw["health"]; missing -> incomplete row).
std::vector<Check> profile_health_checks(const Profile& profile, const HealthRules& rules);
// The NVML library a profile's health section was read through where it is not the driver's (CEILINGS_NVML_LIBRARY:
// the self-test's fake), shown as it is read; "" where the driver's was used or there is no section.
std::string health_nvml_library(const Profile& profile);

QualifyResult qualify(const Profile& profile, const Profile* baseline, const Rules& rules);

// Whether a rule may name ceiling `name` for `profile`: its family is one this build knows, or one the profile holds
// (measured, failed or skipped: a family added since this build). Else qualify refuses the rules with
// unknown_rule_family's error (`where` names the rule: "ceilings.hmb.copy"), naming the near matches (`fleet`: of
// many profiles, none of which holds it; the near matches are `profile`'s and the default rules').
bool rule_family_known(const std::string& name, const Profile& profile);
InputError unknown_rule_family(const std::string& name, const std::string& where, const Profile& profile,
                               bool fleet = false);
// Whether `profile` holds ceiling `name` (measured, failed or skipped).
bool holds_ceiling(const Profile& profile, const std::string& name);
// What fleet says of a limit on a ceiling of a known family that none of its profiles holds ("hbm.cpy"): measured by
// none of the runs, or misspelt; the near matches are `profile`'s and the default rules'.
std::string rule_on_no_profile(const std::string& name, const std::string& where, const Profile& profile);

Table checks_table(const std::vector<Check>& checks);
std::string render_qualify(const QualifyResult& result, Format format);
json checks_to_json(const std::vector<Check>& checks);

}  // namespace ceilings
