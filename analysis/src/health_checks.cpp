// The health checks of node qualification, from the profile's health section (NVML snapshots before and
// after the run, the XIDs seen): ECC, row remaps, InfoROM, PCIe link, slot and replays, XIDs, NVLinks,
// thermal and power slowdown, temperatures and unreadable counters, each against DCGM's limits.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "ceilings/clock_events.hpp"
#include "ceilings/datasheet.hpp"
#include "ceilings/qualify.hpp"
#include "ceilings/transfer.hpp"
#include "ceilings/units.hpp"

namespace ceilings {

namespace {

// DCGM's health watch expects at most 8 PCIe replays per minute on a link it does not know (it warns above its
// expected rate; failed here, an acceptance run being stricter than a watch on a node in service).
constexpr double kMaxReplaysPerMinute = 8.0;
// DCGM's NVLink health limits: one replay or recovery error fails; CRC errors fail from 100 per second
// (below that DCGM only warns).
constexpr double kMaxNvLinkCrcPerSecond = 100.0;

std::string fmt_bits(std::uint64_t bits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(bits));
  return buf;
}

// A flag or count judged over every snapshot: fail when any reading is bad, incomplete when none
// could be read, pass when every snapshot had a value.
struct Reading {
  std::vector<double> values;
  std::string missing;  // "unsupported" / "could not read (...)" of the first snapshot without a value
};
Reading gather(const HealthSection& s, const std::string& metric) {
  Reading r;
  for (const HealthSnapshot* snap : s.snapshots()) {
    const HealthMetric* m = snap->find(metric);
    if (m && m->ok()) r.values.push_back(m->value);
    else if (r.missing.empty()) r.missing = m ? metric_display(*m, metric) : "not recorded";
  }
  return r;
}

void check_ecc(const HealthSection& s, std::vector<Check>& out) {
  Check mode = make_check("health", "ECC enabled");
  const Reading enabled = gather(s, "ecc.enabled");
  mode.threshold_text = "on";
  mode.source = "health rule uncorrected_ecc (errors are only counted with ECC on)";
  if (enabled.values.empty()) {
    mode.reason = "ECC mode " + enabled.missing;
    if (enabled.missing == "unsupported")  // a GPU without ECC (GeForce): the rules decide whether that is fine
      mode.reason += " (a GPU without ECC memory: \"health\": {\"uncorrected_ecc\": false, \"row_remap\": false} "
                     "in a rules file qualifies it without)";
  } else {
    const bool on = std::all_of(enabled.values.begin(), enabled.values.end(), [](double v) { return v != 0; });
    mode.measured_text = on ? "on" : "off";
    mode.status = on ? CheckStatus::kPass : CheckStatus::kFail;
    // Workstation boards (RTX A6000, RTX 6000 Ada) ship with ECC off: the rules decide whether that is fine there.
    if (!on)
      mode.reason = "ECC is disabled: uncorrected memory errors would go unseen (enable it: nvidia-smi -e 1 and a "
                    "reboot; where it is off by choice, \"health\": {\"uncorrected_ecc\": false, \"row_remap\": false} "
                    "in a rules file qualifies the GPU without)";
  }
  out.push_back(mode);

  Check c = make_check("health", "uncorrected ECC errors");
  c.threshold = 0;
  c.source = "health rule uncorrected_ecc";
  const Reading total = gather(s, "ecc.volatile.uncorrected");
  if (total.values.empty() || (s.after && total.values.size() < 2)) {
    c.reason = "volatile uncorrected ECC count " + total.missing;
  } else {
    const double since_load = *std::max_element(total.values.begin(), total.values.end());
    const double during = total.values.size() == 2 ? total.values[1] - total.values[0] : 0;
    c.measured = since_load;
    c.status = since_load > 0 ? CheckStatus::kFail : CheckStatus::kPass;
    if (during > 0)
      c.reason = format_fixed(during, 0) + " uncorrected ECC error(s) during the run";
    else if (since_load > 0)
      c.reason = format_fixed(since_load, 0) + " uncorrected ECC error(s) since the driver loaded: reset the GPU";
  }
  // Corrected errors pass (the ECC did its work), but a burst of them during the run is worth a look.
  const Reading corrected = gather(s, "ecc.volatile.corrected");
  if (corrected.values.size() == 2 && corrected.values[1] > corrected.values[0])
    c.reason += std::string(c.reason.empty() ? "" : "; ") + format_fixed(corrected.values[1] - corrected.values[0], 0) +
                " corrected ECC error(s) during the run (noted)";
  out.push_back(c);
}

// NVML's SRAM error threshold (nvmlDeviceGetSramEccErrorStatus's bThresholdExceeded; Ampere and newer, read as root
// only): set, the GPU's SRAM has had more uncorrectable errors than NVIDIA's threshold allows, and the GPU is due for
// the field diagnostic and a return to the vendor. DCGM's diagnostics read the same flag (DCGM_FI_DEV_THRESHOLD_SRM) and
// report DCGM_FR_SRAM_THRESHOLD, a warning in their software test; here it fails (the rules key sram_threshold false
// drops the row). Set in either snapshot fails. Not read (before Ampere, not root, a section recorded before it was
// read): no row; a reading NVML failed to give is the "counters readable" row's. The aggregate uncorrectable SRAM
// errors by unit are named where read.
void check_sram_threshold(const HealthSection& s, std::vector<Check>& out) {
  const Reading flag = gather(s, "ecc.sram.threshold_exceeded");
  if (flag.values.empty()) {
    // Recorded as not answered (a section from before the reading has none: no row). NVML answers root only, so a
    // run as another user would otherwise drop the check without a word; the section keeps no reason, so both
    // causes are named. Not judged, not incomplete: most runs are not root's.
    const HealthMetric* m = s.before.find("ecc.sram.threshold_exceeded");
    if (!m || m->state != HealthMetric::State::kUnsupported) return;
    Check c = make_check("health", "SRAM error threshold");
    c.threshold_text = "not exceeded";
    c.source = "health rule sram_threshold (nvmlDeviceGetSramEccErrorStatus; DCGM's DCGM_FR_SRAM_THRESHOLD)";
    c.measured_text = "not read";
    c.status = CheckStatus::kNotJudged;
    c.reason = "NVML did not answer the SRAM's ECC status (it answers root only, and GPUs before Ampere have none): "
               "not judged (measure as root to judge it)";
    out.push_back(c);
    return;
  }
  static const char* const units[][2] = {
      {"l2", "L2"}, {"sm", "SM"}, {"pcie", "PCIe"}, {"mcu", "microcontroller"}, {"other", "other"}};
  std::string by_unit;
  double total = 0;
  for (const auto& u : units) {
    const Reading r = gather(s, std::string("ecc.aggregate.sram.uncorrected_") + u[0]);
    if (r.values.empty()) continue;
    const double n = *std::max_element(r.values.begin(), r.values.end());  // aggregate: the latest is the most
    total += n;
    by_unit += (by_unit.empty() ? "" : ", ") + std::string(u[1]) + " " + format_fixed(n, 0);
  }
  if (!by_unit.empty()) by_unit = " (aggregate uncorrectable SRAM errors by unit: " + by_unit + ")";
  const bool exceeded = std::any_of(flag.values.begin(), flag.values.end(), [](double v) { return v != 0; });
  const auto before = s.before.value("ecc.sram.threshold_exceeded");
  const auto after = s.after ? s.after->value("ecc.sram.threshold_exceeded") : std::nullopt;
  Check c = make_check("health", "SRAM error threshold");
  c.threshold_text = "not exceeded";
  c.source = "health rule sram_threshold (nvmlDeviceGetSramEccErrorStatus; DCGM's DCGM_FR_SRAM_THRESHOLD)";
  c.measured_text = exceeded ? "exceeded" : "not exceeded";
  c.status = exceeded ? CheckStatus::kFail : CheckStatus::kPass;
  if (exceeded)
    c.reason = std::string("the SRAM uncorrectable-error threshold is exceeded (NVML's field-diagnostic flag") +
               (before && after && *before == 0 && *after != 0 ? ", set during the run" : "") + ")" + by_unit +
               ": run the field diagnostic and contact the vendor (RMA)";
  else if (total > 0)
    c.reason = format_fixed(total, 0) +
               " uncorrectable SRAM error(s) over the GPU's life, below NVML's threshold (noted)" + by_unit;
  out.push_back(c);
}

// DCGM's limits on retired pages (pre-Ampere GPUs; DcgmGPUHardwareLimits.h): 63 in all fails; more than 15 for
// double-bit errors fails there where pages keep being retired (more than one a week), which one reading cannot
// tell: noted here.
constexpr double kMaxRetiredPages = 63, kRetiredDoubleBitNote = 15;

void check_remap(const HealthSection& s, std::vector<Check>& out) {
  Check c = make_check("health", "row remapping");
  c.threshold_text = "none pending, no failure";
  c.source = "health rule row_remap";
  const Reading pending = gather(s, "remap.pending"), failure = gather(s, "remap.failure");
  const bool remap_known = !pending.values.empty() && !failure.values.empty() &&
                           (!s.after || (pending.values.size() == 2 && failure.values.size() == 2));
  if (remap_known) {
    const bool p = std::any_of(pending.values.begin(), pending.values.end(), [](double v) { return v != 0; });
    const bool f = std::any_of(failure.values.begin(), failure.values.end(), [](double v) { return v != 0; });
    c.measured_text = std::string(p ? "remap pending" : "none pending") + (f ? ", remap FAILED" : "");
    c.status = (p || f) ? CheckStatus::kFail : CheckStatus::kPass;
    if (p) c.reason = "a row remap is pending: reset the GPU to apply it";
    if (f) c.reason += std::string(c.reason.empty() ? "" : "; ") + "a row remap failed: the GPU needs service";
    // NVIDIA's RMA policy for row remapping (docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt) counts rows remapped
    // for uncorrectable errors: noted with the count, which the operator sets against it.
    const Reading unc_rows = gather(s, "remap.uncorrectable_rows");
    const double rows = unc_rows.values.empty() ? 0 : *std::max_element(unc_rows.values.begin(), unc_rows.values.end());
    if (rows > 0)
      c.reason += std::string(c.reason.empty() ? "" : "; ") + format_fixed(rows, 0) +
                  " row(s) remapped for uncorrectable errors (count them against NVIDIA's RMA policy for row "
                  "remapping)";
    // The remapper's histogram (where NVML has it): a bank without spare rows cannot remap the next row that
    // fails in it (that would be a remap failure). Noted, not failed: nothing has failed yet.
    const Reading none = gather(s, "remap.banks_none"), low = gather(s, "remap.banks_low");
    const double banks_none = none.values.empty() ? 0 : *std::max_element(none.values.begin(), none.values.end());
    const double banks_low = low.values.empty() ? 0 : *std::max_element(low.values.begin(), low.values.end());
    if (banks_none > 0 || banks_low > 0) {
      std::string spare;
      if (banks_none > 0) spare = format_fixed(banks_none, 0) + " memory bank(s) with no spare rows left";
      if (banks_low > 0)
        spare += std::string(spare.empty() ? "" : ", ") + format_fixed(banks_low, 0) + " with few left";
      c.measured_text += ", " + spare;
      if (banks_none > 0)
        spare += ": the next row that fails in such a bank cannot be remapped (a remap failure)";
      c.reason += std::string(c.reason.empty() ? "" : "; ") + spare;
    }
    out.push_back(c);
    return;
  }
  // GPUs before Ampere retire pages instead of remapping rows: a retirement pending, or as many pages retired as
  // DCGM's limit (63, single- and double-bit together: the GPU is running out of pages to retire), fails.
  const Reading retired = gather(s, "retired_pages.pending");
  if (!retired.values.empty()) {
    const bool p = std::any_of(retired.values.begin(), retired.values.end(), [](double v) { return v != 0; });
    const Reading sbe = gather(s, "retired_pages.single_bit"), dbe = gather(s, "retired_pages.double_bit");
    const double most_sbe = sbe.values.empty() ? 0 : *std::max_element(sbe.values.begin(), sbe.values.end());
    const double most_dbe = dbe.values.empty() ? 0 : *std::max_element(dbe.values.begin(), dbe.values.end());
    const double total = most_sbe + most_dbe;
    const bool counted = !sbe.values.empty() && !dbe.values.empty();
    const bool worn = counted && total >= kMaxRetiredPages;
    c.rule = "page retirement";
    c.threshold_text = "none pending, < " + format_fixed(kMaxRetiredPages, 0) + " retired";
    c.source = "health rule row_remap (DCGM's retired-page limit)";
    c.measured_text = std::string(p ? "retirement pending" : "none pending") +
                      (counted ? ", " + format_fixed(total, 0) + " retired" : "");
    c.status = p || worn ? CheckStatus::kFail : CheckStatus::kPass;
    if (p) c.reason = "a page retirement is pending: reset the GPU to apply it";
    if (worn)
      c.reason += std::string(c.reason.empty() ? "" : "; ") + format_fixed(total, 0) + " pages retired (" +
                  format_fixed(most_sbe, 0) + " single-bit, " + format_fixed(most_dbe, 0) +
                  " double-bit), DCGM's limit is " + format_fixed(kMaxRetiredPages, 0) + ": the GPU needs service";
    else if (counted && most_dbe > kRetiredDoubleBitNote)
      c.reason = std::string(c.reason.empty() ? "" : c.reason + "; ") + format_fixed(most_dbe, 0) +
                 " pages retired for double-bit errors, more than " + format_fixed(kRetiredDoubleBitNote, 0) +
                 " (DCGM fails this where pages keep being retired, more than one a week: noted)";
    else if (!counted)
      c.reason += std::string(c.reason.empty() ? "" : "; ") + "retired page counts " +
                  (sbe.values.empty() ? sbe.missing : dbe.missing) + ": only the pending state judged";
    out.push_back(c);
    return;
  }
  c.reason = "row remap state " + (pending.missing.empty() ? failure.missing : pending.missing) +
             "; page retirement " + retired.missing;
  // NVML answers no row remapping while MIG is enabled (nvmlDeviceGetRemappedRows: NOT_SUPPORTED "if MIG is
  // enabled"): said, with how to judge it, so a MIG node's incomplete verdict names its cause (review 25 #11).
  bool mig = false;
  for (const HealthSnapshot* snap : s.snapshots())
    if (const auto v = snap->value("mig.enabled"); v && *v != 0) mig = true;
  if (mig)
    c.reason += " (NVML does not report row remapping while MIG is enabled: disable MIG to judge it, or read it "
                "with nvidia-smi -q -d ROW_REMAPPER)";
  out.push_back(c);
}

// Memory repairs (NVML, Hopper and newer for the flag, R580+ and R590+ drivers): memory the GPU cannot repair
// (nvmlDeviceGetUnrepairableMemoryFlag_v1) fails, as DCGM's memory health watch and its diagnostic's memory-health
// test fail it (DCGM_FR_FAULTY_MEMORY, severity "GPU should be isolated", next step the field diagnostic); a memory
// channel or TPC repair pending (nvmlDeviceGetRepairStatus) fails, as a pending row remap does, taken to be applied
// at the next GPU reset (NVIDIA documents no more than "pending"; DCGM reads no repair status). Set in either
// snapshot fails.
// Not answered by NVML (a driver or GPU without them, a section recorded before they were read): no row, or only
// what was read, the rest named. A reading NVML failed to give (an error, or a value no flag has: a struct the
// driver left unwritten) leaves the row incomplete, naming it, unless a flag read is set (a fail either way); the
// "counters readable" row names it too, unless the rules switched that row off.
void check_memory_repair(const HealthSection& s, std::vector<Check>& out) {
  struct Flag {
    const char* metric;
    const char* what;
    const char* absent;  // why NVML may not support it
  };
  static const Flag flags[] = {
      {"memory.unrepairable", "unrepairable memory",
       "drivers before R590 and GPUs before Hopper have no unrepairable-memory flag, and a driver may take another "
       "layout of its struct than the two this build passes"},
      {"repair.channel_pending", "memory channel repair pending",
       "drivers before R580 and GPUs before Ampere have no repair status"},
      {"repair.tpc_pending", "TPC repair pending", "drivers before R580 and GPUs before Ampere have no repair status"}};
  auto any_set = [](const Reading& r) { return std::any_of(r.values.begin(), r.values.end(), [](double v) { return v != 0; }); };
  Check c = make_check("health", "memory repair");
  c.threshold_text = "no unrepairable memory, no repair pending";
  c.source = "health rule memory_repair (nvmlDeviceGetUnrepairableMemoryFlag_v1, nvmlDeviceGetRepairStatus; DCGM's "
             "DCGM_FR_FAULTY_MEMORY)";
  std::vector<std::string> set, read, not_read, unreadable;
  std::vector<std::string> absent_why;
  for (const Flag& f : flags) {
    const Reading r = gather(s, f.metric);
    std::string failed;
    for (const HealthSnapshot* snap : s.snapshots())
      if (const HealthMetric* m = snap->find(f.metric); m && m->state == HealthMetric::State::kUnreadable && failed.empty())
        failed = std::string(f.metric) + ": " + metric_display(*m, f.metric);
    if (!failed.empty()) {
      unreadable.push_back(failed);
    } else if (r.values.empty()) {
      not_read.push_back(f.what);
      if (std::find(absent_why.begin(), absent_why.end(), f.absent) == absent_why.end()) absent_why.push_back(f.absent);
    } else {
      read.push_back(f.what);
    }
    if (any_set(r)) set.push_back(f.what);
  }
  if (read.empty() && unreadable.empty() && set.empty()) return;
  c.status = !set.empty() ? CheckStatus::kFail : unreadable.empty() ? CheckStatus::kPass : CheckStatus::kIncomplete;
  for (const std::string& w : set) c.measured_text += (c.measured_text.empty() ? "" : ", ") + w;
  if (set.empty()) c.measured_text = unreadable.empty() ? "none" : "not all read";
  auto add = [&](const std::string& text) { c.reason += (c.reason.empty() ? "" : "; ") + text; };
  const Reading unrepairable = gather(s, "memory.unrepairable");
  if (any_set(unrepairable)) {
    const auto before = s.before.value("memory.unrepairable");
    const auto after = s.after ? s.after->value("memory.unrepairable") : std::nullopt;
    add(std::string("NVML flags memory this GPU cannot repair") +
        (before && after && *before == 0 && *after != 0 ? " (set during the run)" : "") +
        ": isolate the GPU and run NVIDIA's field diagnostic, which decides a return to the vendor (RMA)");
  }
  const bool channel = any_set(gather(s, "repair.channel_pending")), tpc = any_set(gather(s, "repair.tpc_pending"));
  if (channel || tpc)
    add(std::string(channel && tpc ? "a memory channel repair and a TPC repair are" : channel ? "a memory channel repair is"
                                                                                                 : "a TPC repair is") +
        " pending (NVML's repair status): drain the GPU, reset it and qualify it again (taken to be applied at the next "
        "reset, as a pending row remap is; NVIDIA's documentation says no more than pending)");
  for (const std::string& u : unreadable) add(u + ", not judged on it");
  if (!not_read.empty()) {
    std::string names;
    for (const std::string& w : not_read) names += (names.empty() ? "" : ", ") + w;
    std::string why;
    for (const std::string& w : absent_why) why += (why.empty() ? "" : "; ") + w;
    add("not read: " + names + " (NVML does not support the call here: " + why + ")");
  }
  out.push_back(c);
}

// The InfoROM (the board's flash that keeps aggregate ECC counts, retired pages and power settings) failing its
// checksums: what it records can no longer be trusted (DCGM's InfoROM health watch warns of it; failed here, as an
// acceptance run is stricter than a watch on a node in service). Where NVML does not
// offer the check there is no row; where it could not be read, `readable` says so.
void check_inforom(const HealthSection& s, std::vector<Check>& out) {
  const Reading valid = gather(s, "inforom.valid");
  if (valid.values.empty()) return;
  Check c = make_check("health", "InfoROM");
  c.threshold_text = "checksums valid";
  c.source = "health rule inforom (nvmlDeviceValidateInforom; DCGM's InfoROM watch)";
  const bool corrupt = std::any_of(valid.values.begin(), valid.values.end(), [](double v) { return v == 0; });
  c.measured_text = corrupt ? "corrupted" : "valid";
  c.status = corrupt ? CheckStatus::kFail : CheckStatus::kPass;
  if (corrupt)
    c.reason = "the InfoROM failed its checksums: the ECC, retired-page and power records it keeps cannot be trusted; "
               "the board needs service (reflashing the InfoROM)";
  out.push_back(c);
}

// The PCIe link as read in the health snapshots and by ceilings-bench (the profile's device.pcie). The
// generation may train down at idle, so the best generation seen in any reading is the one compared with the
// maximum; the width does not drop to save power, so the narrowest reading counts (a link that lost lanes
// during the run fails). The maxima: the most any reading gave.
struct PcieReadings {
  std::optional<double> gen, width, max_gen, max_width, gpu_max_gen;
};
PcieReadings pcie_readings(const HealthSection* s, const Profile* profile) {
  PcieReadings r;
  auto take_max = [](std::optional<double>& into, std::optional<double> v) {
    if (v) into = into ? std::max(*into, *v) : *v;
  };
  auto take_min = [](std::optional<double>& into, std::optional<double> v) {
    if (v) into = into ? std::min(*into, *v) : *v;
  };
  if (s)
    for (const HealthSnapshot* snap : s->snapshots()) {
      take_max(r.gen, snap->value("pcie.gen"));
      take_min(r.width, snap->value("pcie.width"));
      take_max(r.max_gen, snap->value("pcie.max_gen"));
      take_max(r.max_width, snap->value("pcie.max_width"));
      take_max(r.gpu_max_gen, snap->value("pcie.gpu_max_gen"));
    }
  if (profile) {
    const PcieInfo& p = profile->device.pcie;
    auto opt = [](const std::optional<int>& v) { return v ? std::optional<double>(*v) : std::nullopt; };
    take_max(r.gen, opt(p.gen));
    take_min(r.width, opt(p.width));
    take_max(r.max_gen, opt(p.max_gen));
    take_max(r.max_width, opt(p.max_width));
    take_max(r.gpu_max_gen, opt(p.gpu_max_gen));
  }
  return r;
}

// A Grace superchip's GPU (GH200) reaches its host over NVLink-C2C: its PCIe readings judge no host link.
bool host_link_is_c2c(const HealthSection* s, const Profile* profile) {
  const GpuSpec* spec = find_gpu_board(profile ? profile->device.name : s ? s->device_name : "");
  return spec && spec->nvlink_c2c_bandwidth;
}

void check_pcie_link(const HealthSection* s, const Profile* profile, std::vector<Check>& out) {
  if (host_link_is_c2c(s, profile)) return;
  Check c = make_check("health", "PCIe link");
  c.source = "health rule pcie_link (current link vs the maximum the GPU and slot support)";
  const PcieReadings r = pcie_readings(s, profile);
  const std::optional<double> gen = r.gen, width = r.width, max_gen = r.max_gen, max_width = r.max_width;
  if (!gen || !width || !max_gen || !max_width) {
    c.reason = "PCIe link generation/width or its maximum could not be read";
    out.push_back(c);
    return;
  }
  auto link = [](double g, double w) { return "Gen" + format_fixed(g, 0) + " x" + format_fixed(w, 0); };
  c.measured_text = link(*gen, *width);
  c.threshold_text = link(*max_gen, *max_width);
  if (*gen > *max_gen || *width > *max_width) {  // no link trains above its maximum: a reading is wrong
    c.reason = "the link reads " + c.measured_text + ", above its maximum " + c.threshold_text +
               ": the readings contradict each other, so the link cannot be judged";
    out.push_back(c);
    return;
  }
  if (*width < *max_width) {
    c.status = CheckStatus::kFail;
    c.reason = "link runs at " + c.measured_text + " below its maximum " + c.threshold_text +
               " (reseat the card, check the riser and slot)";
  } else if (*gen >= *max_gen) {
    c.status = CheckStatus::kPass;
  } else {
    // Only the generation is low. Links drop to a lower generation at idle to save power, so a low
    // reading proves nothing unless the GPU was busy; measured PCIe bandwidth above what the generation
    // below the maximum can carry proves the link trained up to its maximum under load. Copies above the
    // reading's rate but not above that show only that it trained up some way: no proof either way.
    double best_copy = 0;
    if (profile)
      for (const char* name : {"pcie.h2d", "pcie.d2h"})
        if (const Ceiling* k = profile->find(name)) best_copy = std::max(best_copy, k->value);
    const double low_capacity = pcie_link_bandwidth(static_cast<int>(*gen), static_cast<int>(*width));
    const double below_max = pcie_link_bandwidth(static_cast<int>(*max_gen) - 1, static_cast<int>(*width));
    if (low_capacity <= 0 || below_max <= 0) {  // a generation the table has no rate for: any copy would "exceed" 0
      c.reason = "no PCIe rate is known for " + (low_capacity <= 0 ? c.measured_text
                                                                   : "Gen" + format_fixed(*max_gen - 1, 0) + " x" +
                                                                         format_fixed(*width, 0)) +
                 ": the measured copies cannot be set against it, so the link cannot be judged";
      out.push_back(c);
      return;
    }
    const std::string part_way =
        best_copy > low_capacity
            ? " (the measured copies, " + format_quantity(best_copy, "B/s") + ", exceed what " + c.measured_text +
                  " carries but not what Gen" + format_fixed(*max_gen - 1, 0) + " x" + format_fixed(*width, 0) + " carries, " +
                  format_quantity(below_max, "B/s") + ": they do not show the link at its maximum)"
            : "";
    // Busy: a low reading whose clock was held by the power cap or a slowdown, which only a load brings.
    bool idle = false, busy = false;
    if (s)
      for (const HealthSnapshot* snap : s->snapshots()) {
        const auto g = snap->value("pcie.gen");
        const auto reasons = snap->value("clocks.event_reasons");
        if (!g || *g >= *max_gen || !reasons) continue;
        const auto bits = static_cast<std::uint64_t>(*reasons);
        if (bits & clock_events::kGpuIdle) idle = true;
        else if (bits & clock_events::kSlowdownMask) busy = true;
      }
    const std::string seen = c.measured_text;
    if (best_copy > below_max) {
      c.status = CheckStatus::kPass;
      c.measured_text += " when read, trained up under load";
      c.reason = "measured PCIe copies (" + format_quantity(best_copy, "B/s") + ") exceed what Gen" +
                 format_fixed(*max_gen - 1, 0) + " x" + format_fixed(*width, 0) + " carries (" +
                 format_quantity(below_max, "B/s") + "): the link ran at " + c.threshold_text + " under load";
    } else if (!profile && !busy) {
      // `ceilings health` runs no load: a lower generation at full width is the power saving working, not a
      // fault, whether or not NVML set the idle bit (a healthy idle H200 reads reasons 0). Not judged, not
      // incomplete: health cannot judge the generation, qualify judges it from a profile measured under load.
      c.status = CheckStatus::kNotJudged;
      c.measured_text += idle ? " (idle)" : " (no load)";
      c.reason = "only the generation is below " + c.threshold_text + ", read with no load running (" +
                 (idle ? "NVML: GPU idle" : "health runs none") + "), when links downshift to save power: not judged "
                 "(the width is at its maximum; qualify a profile to judge the generation under load)";
    } else if (!busy && profile && profile->device.confidential_computing.value_or(false)) {
      // Under confidential computing the copies are the driver's encrypted bounce-buffer copies, far below any
      // link's rate: they can neither show the link trained up nor load it as plain copies do.
      c.reason = "measured with confidential computing on: the copies went through encrypted bounce buffers and "
                 "cannot show the link at its maximum, and no snapshot read the generation with the GPU busy: not "
                 "judged from this profile (nvidia-smi -q -d PCIE under a plain load tells)";
    } else if (idle && !busy) {  // a low reading under load (another snapshot) is judged as one: it fails below
      c.measured_text += " (idle)";
      c.reason = "the generation was read only while the GPU was idle, when links downshift to save power: "
                 "judge it from a profile measured under load" + part_way;
    } else {
      c.status = CheckStatus::kFail;
      c.reason = part_way.empty() ? "link runs at " + c.measured_text + " below its maximum " + c.threshold_text +
                                        " under load"
                                  : "link read " + c.measured_text + " under load, below its maximum " +
                                        c.threshold_text + part_way;
    }
  }
  out.push_back(c);
}

// The slot: the most the GPU and its slot allow together (NVML's max generation and width) against the most
// the GPU supports on its own (NVML's GPU generation where the driver answers, else the datasheet's; the width
// only from the datasheet: NVML reads no GPU-only width). A Gen5 x16 GPU in a Gen4 or x8 slot trains its
// link to the slot's maximum, so the link check passes it; this check does not.
void check_pcie_slot(const HealthSection* s, const Profile* profile, std::vector<Check>& out) {
  if (host_link_is_c2c(s, profile)) return;
  Check c = make_check("health", "PCIe slot");
  const PcieReadings r = pcie_readings(s, profile);
  const std::optional<double> slot_gen = r.max_gen, slot_width = r.max_width, gen = r.gen, width = r.width;
  std::optional<double> gpu_gen = r.gpu_max_gen;
  auto opt = [](const std::optional<int>& v) { return v ? std::optional<double>(*v) : std::nullopt; };
  const std::string name = profile ? profile->device.name : s ? s->device_name : "";
  const GpuSpec* spec = find_gpu_board(name);
  std::string gen_from = "NVML";
  if (!gpu_gen && spec && spec->pcie_gen) {
    gpu_gen = *spec->pcie_gen;
    gen_from = "datasheet " + spec->name;
  }
  const std::optional<double> gpu_width = spec && spec->pcie_width ? opt(spec->pcie_width) : std::nullopt;
  const std::string width_from = gpu_width ? "datasheet " + spec->name : "";
  const std::string from =
      gen_from == width_from ? gen_from : "generation from " + gen_from + (gpu_width ? ", width from " + width_from : "");
  c.source = "health rule pcie_slot (the most the slot allows vs the GPU's own most: " + from + ")";
  // What cannot be judged is said on the link's row, which reads the same maximum: no second row for one cause.
  auto note_on_link = [&](const std::string& why) {
    for (auto it = out.rbegin(); it != out.rend(); ++it)
      if (it->subject == "health" && it->rule == "PCIe link") {
        it->reason += std::string(it->reason.empty() ? "" : "; ") + "the slot is not judged against the GPU: " + why;
        return;
      }
  };
  if (!slot_gen || !slot_width) {
    note_on_link("NVML's maximum for the GPU and its slot could not be read");
    return;
  }
  if ((gen && *gen > *slot_gen) || (width && *width > *slot_width)) {
    note_on_link("the link reads above that maximum, so the readings contradict each other");
    return;
  }
  auto gen_text = [](double g) { return "Gen" + format_fixed(g, 0); };
  auto width_text = [](double w) { return "x" + format_fixed(w, 0); };
  c.measured_text = gen_text(*slot_gen) + " " + width_text(*slot_width);
  if (!gpu_gen) {
    note_on_link("the most the GPU supports is unknown (the driver does not report it and the datasheet table has "
                 "no PCIe link for '" + name + "')");
    return;
  }
  c.threshold_text = gen_text(*gpu_gen) + (gpu_width ? " " + width_text(*gpu_width) : "");
  if (*slot_gen > *gpu_gen || (gpu_width && *slot_width > *gpu_width)) {  // the slot's maximum includes the GPU's
    c.reason = "the slot allows " + c.measured_text + ", above the most the GPU supports (" + c.threshold_text +
               "): the readings contradict each other, so the slot cannot be judged";
    out.push_back(c);
    return;
  }
  std::vector<std::string> short_of;
  if (*slot_gen < *gpu_gen) short_of.push_back("generation");
  if (gpu_width && *slot_width < *gpu_width) short_of.push_back("width");
  if (short_of.empty()) {
    c.status = CheckStatus::kPass;
    if (!gpu_width) c.reason = "only the generation is judged: no datasheet width for '" + name + "'";
    out.push_back(c);
    return;
  }
  c.status = CheckStatus::kFail;
  const double slot_rate = pcie_link_bandwidth(static_cast<int>(*slot_gen), static_cast<int>(*slot_width));
  const double gpu_rate = pcie_link_bandwidth(static_cast<int>(*gpu_gen),
                                              static_cast<int>(gpu_width ? *gpu_width : *slot_width));
  c.reason = "the slot or platform caps the link's " + (short_of.size() == 2 ? "generation and width" : short_of[0]) +
             ": " + c.measured_text + " carries " + format_quantity(slot_rate, "B/s") + " a direction, the GPU's " +
             c.threshold_text + " " + format_quantity(gpu_rate, "B/s") +
             " (move it to a slot that supports the GPU's link, check the BIOS's PCIe speed and bifurcation "
             "settings; where the platform has no faster slot by design, set \"health\": {\"pcie_slot\": false})";
  out.push_back(c);
}

// Seconds between the two snapshots (at least 1: the times have whole-second resolution). Their times were
// checked when the section was read. The rates of discrete errors (PCIe replays, NVLink CRC errors) divide by
// this floored window: a few errors over a sub-second `health --watch` are noise, not a rate worth failing on.
double snapshot_seconds(const HealthSection& s) {
  if (!s.after) return 1.0;
  // The monitor's own steady-clock window where recorded: the snapshots' times are whole seconds, so a 1 s
  // watch that crossed two clock seconds would read as 2 s and halve every rate.
  if (s.xid.window_s > 0) return std::max(1.0, s.xid.window_s);
  const UtcTime t0 = parse_utc_time(s.before.time, "health before.time"),
                t1 = parse_utc_time(s.after->time, "health after.time");
  return std::max(1.0, static_cast<double>(t1.seconds - t0.seconds) + (t1.nanoseconds - t0.nanoseconds) * 1e-9);
}

// DCGM's expected replay rate: a bit error rate of 1e-12 at the link's transfer rate, per lane, times its lanes,
// per minute (Gen3 x16: 7.7, so 8/min as DCGM's old fixed limit; Gen5 x16: 31/min). Unknown link: 8/min.
double replay_limit_per_minute(const HealthSection& s, std::string& link) {
  std::optional<double> gen, width;
  for (const HealthSnapshot* snap : s.snapshots()) {
    if (!gen) gen = snap->value("pcie.max_gen") ? snap->value("pcie.max_gen") : snap->value("pcie.gen");
    if (!width) width = snap->value("pcie.max_width") ? snap->value("pcie.max_width") : snap->value("pcie.width");
  }
  if (!gen || !width || *gen < 1 || *gen > 7 || *width < 1) return kMaxReplaysPerMinute;
  link = "Gen" + format_fixed(*gen, 0) + " x" + format_fixed(*width, 0);
  return std::ceil(pcie_lane_transfers_per_second(static_cast<int>(*gen)) * 1e-12 * 60.0 * *width);
}

void check_replays(const HealthSection& s, std::vector<Check>& out) {
  Check c = make_check("health", "PCIe replay rate");
  std::string link;
  const double limit = replay_limit_per_minute(s, link);
  // In SI (per second) with its unit, as every check's number; the texts say it per minute, as DCGM does.
  c.threshold = limit / 60.0;
  c.unit = "1/s";
  c.threshold_text = "<= " + format_fixed(limit, 0) + "/min";  // also where the rate cannot be judged
  c.source = link.empty() ? "health rule pcie_replays (DCGM's limit for an unknown link: 8 replays per minute)"
                          : "health rule pcie_replays (DCGM's expected rate for " + link +
                                ": a 1e-12 bit error rate per lane)";
  const Reading r = gather(s, "pcie.replays");
  if (!s.after) {
    c.reason = "one snapshot only: a rate needs a before and an after reading";
  } else if (r.values.size() < 2) {
    c.reason = "PCIe replay counter " + r.missing;
  } else if (r.values[1] < r.values[0]) {
    // A count that went back was reset between the snapshots (the driver reloaded, the GPU was reset): the
    // replays of the run are unknown, not negative.
    c.reason = "the PCIe replay counter went back (" + format_fixed(r.values[0], 0) + " before, " +
               format_fixed(r.values[1], 0) + " after: reset between the snapshots), so the run's replays are unknown";
  } else {
    const double minutes = std::max(1.0, snapshot_seconds(s) / 60.0);
    const double rate = (r.values[1] - r.values[0]) / minutes;
    c.measured = rate / 60.0;
    c.measured_text = format_fixed(rate, 1) + "/min";
    c.status = rate > limit ? CheckStatus::kFail : CheckStatus::kPass;
    if (rate > limit)
      c.reason = format_fixed(r.values[1] - r.values[0], 0) + " PCIe replays during the run: a marginal link";
  }
  out.push_back(c);
}

// The driver's GPU recovery action in the last snapshot that read it (NVML field 230; nullopt for a driver or GPU
// without the field, or a section recorded before it was read).
std::optional<int> recovery_action(const HealthSection& s) {
  std::optional<int> last;
  for (const HealthSnapshot* snap : s.snapshots())
    if (const auto v = snap->value("recovery.action")) last = static_cast<int>(*v);
  return last;
}

std::string recovery_action_name(int action) {
  switch (action) {
    case 0: return "none";
    case 1: return "GPU reset";
    case 2: return "node reboot";
    case 3: return "drain P2P";
    case 4: return "drain and reset";
    case 5: return "recover IMEX domain";
    case 6: return "PCIe bus reset";
    case 7: return "system reboot";
  }
  return "action " + std::to_string(action);
}

// How an NVML XID event reads once more is known: XID 154 announces a change of the driver's recovery action, so with
// the action read live (and its row on) it is that row's to judge (a 154 asking for a reset that was done reads "none"
// now); 144-150 carry no text, so they take the kernel log's word where every record of that XID there is the
// driver's "Nonfatal" one, from /dev/kmsg read after the run only (a log saved before it, CEILINGS_KERNEL_LOG, may
// hold only older records of that XID).
XidClass classify_event_xid(const HealthSection& s, const HealthRules& rules, long long xid) {
  if (xid == 154 && rules.recovery_action && recovery_action(s))
    return {XidKind::kNote, "the driver's recovery action changed: judged by the GPU recovery action row"};
  if (xid >= 144 && xid <= 150 && s.kernel_log.state == HealthMetric::State::kValue &&
      s.kernel_log.source == kKernelLogPath) {
    bool seen = false, all_nonfatal = true;
    for (const KernelXid& x : s.kernel_log.xids)
      if (x.xid == xid) {
        seen = true;
        all_nonfatal = all_nonfatal && classify_xid(x.xid, x.text).kind == XidKind::kNvlinkNonfatal;
      }
    if (seen && all_nonfatal)
      return {XidKind::kNote, "a non-fatal NVLink event, as the driver's kernel-log record of it says: the link "
                              "recovered"};
  }
  return classify_xid(xid);
}

// Why the kernel log's XIDs are not there to judge: it could not be read, or (older profiles) was not read.
std::string kernel_log_missing(const KernelXidLog& log) {
  if (log.state == HealthMetric::State::kUnsupported)
    return "the health section has no kernel log: recorded by a ceilings that did not read it";
  std::string why = log.reason;
  if (why.rfind("could not read: ", 0) == 0) why = why.substr(16);
  return why;
}

void check_xid(const HealthSection& s, const HealthRules& rules, std::vector<Check>& out) {
  Check c = make_check("health", "XID critical errors");
  c.threshold = 0;
  c.source = "health rule xid";
  if (s.xid.state == HealthMetric::State::kUnsupported) {
    c.reason = "XID events are not supported here: not monitored";
  } else if (s.xid.state == HealthMetric::State::kUnreadable) {
    c.reason = "XID events " + (s.xid.reason.empty() ? std::string("could not be monitored") : s.xid.reason);
  } else {
    std::string hardware, program, noted;
    std::size_t faults = 0;
    for (const XidEvent& e : s.xid.events) {
      const XidClass k = classify_event_xid(s, rules, e.xid);
      const std::string one = " " + std::to_string(e.xid) + (e.note.empty() ? "" : " (" + e.note + ")");
      if (k.kind == XidKind::kApplication) {
        program += one;
      } else if (k.kind == XidKind::kNote) {
        noted += (noted.empty() ? "XID" : ";") + one + " (" + k.why + ")";
      } else {
        hardware += one;
        ++faults;
      }
    }
    c.measured = static_cast<double>(faults);
    c.status = hardware.empty() ? CheckStatus::kPass : CheckStatus::kFail;
    const std::string window = " during " + format_quantity(s.xid.window_s, "s") + " of monitoring";
    if (!hardware.empty()) c.reason = "XID" + hardware + window;
    if (!program.empty())
      c.reason += (c.reason.empty() ? "" : "; ") + ("application XID" + program + " (a program's fault or a killed " +
                                                    "process, not the hardware's)" + (hardware.empty() ? window : ""));
    if (!noted.empty()) c.reason += (c.reason.empty() ? "" : "; ") + noted + ", not counted";
  }
  out.push_back(c);
}

// XIDs of this GPU in the kernel log since boot: a fault raised before the run (a GPU that fell off the bus and
// came back, a double-bit error an hour ago) that NVML's event watch, listening only during the run, never saw.
// The log keeps them until a reboot (a GPU reset or a driver reload does not clear it).
void check_kernel_xids(const HealthSection& s, const HealthRules& rules, std::vector<Check>& out) {
  Check c = make_check("health", "XIDs since boot");
  c.threshold = 0;
  c.source = "health rule xid_log (the kernel log" +
             (s.kernel_log.source.empty() ? "" : ", " + s.kernel_log.source) + ")";
  if (s.kernel_log.state != HealthMetric::State::kValue) {
    // A row of its own either way, so a table or csv reader sees it: not judged where the XID row watched the run
    // (no verdict held back: a non-root run cannot read /dev/kmsg), incomplete where nothing judges XIDs at all.
    c.reason = "XIDs before monitoring not judged (" + kernel_log_missing(s.kernel_log) + ")";
    if (rules.xid) c.status = CheckStatus::kNotJudged;
    out.push_back(c);
    return;
  }
  // Each XID once, with how often and when first (a flood of one kind is one entry).
  struct Seen {
    std::size_t count = 0;
    const KernelXid* first = nullptr;
  };
  std::vector<std::pair<long long, Seen>> hardware, program, noted, nvlink_nonfatal;
  auto add = [](std::vector<std::pair<long long, Seen>>& into, const KernelXid& x) {
    for (auto& [xid, seen] : into)
      if (xid == x.xid) {
        ++seen.count;
        return;
      }
    into.push_back({x.xid, Seen{1, &x}});
  };
  std::size_t hardware_count = 0, cleared = 0;
  const bool action_read = rules.recovery_action && recovery_action(s).has_value();
  for (const KernelXid& x : s.kernel_log.xids) {
    if (x.xid == 154 && action_read) {  // the recovery action as read now judges it (its own row)
      add(noted, x);
      continue;
    }
    switch (classify_xid(x.xid, x.text).kind) {
      case XidKind::kRecoveryCleared: ++cleared; break;
      case XidKind::kNvlinkNonfatal: add(nvlink_nonfatal, x); break;
      case XidKind::kApplication: add(program, x); break;
      case XidKind::kNote: add(noted, x); break;
      case XidKind::kFault:
        add(hardware, x);
        ++hardware_count;
        break;
    }
  }
  c.measured = static_cast<double>(hardware_count);
  c.measured_text = hardware_count == 0 ? "none" : std::to_string(hardware_count);
  // An old XID the ring buffer dropped is not seen: said, not failed (a long-running node's log always wraps).
  if (s.kernel_log.since_s) c.reason = "the log covers " + kernel_log_span(s.kernel_log);
  c.status = hardware_count == 0 ? CheckStatus::kPass : CheckStatus::kFail;
  auto times = [](std::size_t n) { return n > 1 ? " x" + std::to_string(n) : std::string(); };
  for (std::size_t i = 0; i < hardware.size() && i < 3; ++i) {
    const auto& [xid, seen] = hardware[i];
    const KernelXid& x = *seen.first;
    c.reason += std::string(c.reason.empty() ? "" : "; ") + "XID " + std::to_string(xid) + times(seen.count) +
                (x.uptime_s >= 0 ? ", first at " + format_fixed(x.uptime_s, 1) + " s after boot" : "") + " (" +
                x.text + ")";
  }
  if (hardware.size() > 3) c.reason += "; and " + std::to_string(hardware.size() - 3) + " other XID(s)";
  if (hardware_count > 0)
    c.reason += " (the log keeps them until a reboot, also after the GPU reset that clears most: fix the cause, then "
                "reboot, or set \"health\": {\"xid_log\": false} to accept XIDs from before the run)";
  std::string apps;
  for (const auto& [xid, seen] : program) apps += (apps.empty() ? "" : ", ") + std::to_string(xid) + times(seen.count);
  if (!apps.empty())
    c.reason += std::string(c.reason.empty() ? "" : "; ") + "application XID " + apps +
                (s.kernel_log.since_s ? " in the log" : " since boot") +
                " (a program's fault or a killed process, not the hardware's)";
  for (const auto& [xid, seen] : noted)
    c.reason += std::string(c.reason.empty() ? "" : "; ") + "XID " + std::to_string(xid) + times(seen.count) + " (" +
                (xid == 154 ? "the driver's recovery action changed: judged by the GPU recovery action row, as read "
                              "now"
                            : classify_xid(xid).why) +
                "), not counted";
  std::string links;
  for (const auto& [xid, seen] : nvlink_nonfatal)
    links += (links.empty() ? "" : ", ") + std::to_string(xid) + times(seen.count);
  if (!links.empty())
    c.reason += std::string(c.reason.empty() ? "" : "; ") + "non-fatal NVLink XID " + links +
                " (the link recovered; not counted)";
  if (cleared > 0)
    c.reason += std::string(c.reason.empty() ? "" : "; ") + "XID 154" + times(cleared) +
                " setting the GPU's recovery action back to None (no action needed), not counted";
  if (s.kernel_log.total > s.kernel_log.xids.size())
    c.reason += std::string(c.reason.empty() ? "" : "; ") + std::to_string(s.kernel_log.total) + " XIDs in the log, " +
                std::to_string(s.kernel_log.xids.size()) + " kept";
  out.push_back(c);
}

// The node's NVSwitch errors in the kernel log since boot (rule sxid_log). A fatal SXid stalls the NVLink traffic
// through the switch port it names until the GPUs and switches are reset (Fabric Manager user guide); which GPU
// that port serves the log does not say, so it fails every GPU of the node. Non-fatal ones are named, not failed.
// A row only where the GPU has NVLinks to a switch or the log holds SXids (a PCIe card's node has no switch).
void check_kernel_sxids(const HealthSection& s, std::vector<Check>& out) {
  const KernelXidLog& log = s.kernel_log;
  if (log.state != HealthMetric::State::kValue || !log.sxids_recorded) return;
  const Reading to_switch = gather(s, "nvlink.links_to_switch");
  const bool switched = std::any_of(to_switch.values.begin(), to_switch.values.end(), [](double v) { return v > 0; });
  if (!switched && log.sxid_total == 0) return;
  Check c = make_check("health", "NVSwitch fatal errors since boot");
  c.threshold = 0;
  c.source = "health rule sxid_log (the kernel log" + (log.source.empty() ? "" : ", " + log.source) + ")";
  const auto fatal = static_cast<std::size_t>(
      std::count_if(log.sxids.begin(), log.sxids.end(), [](const KernelSxid& x) { return x.fatal; }));
  c.measured = static_cast<double>(fatal);
  c.measured_text = fatal == 0 ? "none" : std::to_string(fatal);
  c.status = fatal == 0 ? CheckStatus::kPass : CheckStatus::kFail;
  c.reason = sxid_summary(log);
  const auto first = std::find_if(log.sxids.begin(), log.sxids.end(), [](const KernelSxid& x) { return x.fatal; });
  if (first != log.sxids.end())
    c.reason += "; first fatal: " + first->text +
                (first->uptime_s >= 0 ? " at " + format_fixed(first->uptime_s, 1) + " s after boot" : "") +
                " (the NVLink traffic through that switch port stalls until the node's GPUs and switches are reset; "
                "the log keeps it until a reboot: fix the cause and reboot; set \"health\": {\"sxid_log\": false} "
                "to accept SXids from before the run)";
  out.push_back(c);
}

// NVLinks up: at least the rule's count when one is set, none down of the links the GPU has (where the snapshot
// counts them: nvlink.links_present), and none lost during the run.
void check_nvlink_links(const HealthSection& s, const HealthRules& rules, std::vector<Check>& out) {
  const Reading links = gather(s, "nvlink.links_active");
  const Reading present = gather(s, "nvlink.links_present");
  const bool any_up = std::any_of(links.values.begin(), links.values.end(), [](double v) { return v > 0; });
  // No link up and none expected: no NVLink in use (a GPU without it, or a one-GPU VM whose links are all down,
  // which the README leaves unjudged). Some up and some down is another matter (below).
  if (!rules.nvlink_links && !any_up) return;
  Check c = make_check("health", "NVLinks up");
  c.source = rules.nvlink_links ? "health rule nvlink_links"
                                : "health snapshots (none of the GPU's links down, none lost during the run)";
  const double expected = rules.nvlink_links ? *rules.nvlink_links : links.values.front();
  c.threshold = expected;
  c.threshold_text = ">= " + format_fixed(expected, 0);
  if (links.values.empty() || (s.after && links.values.size() < 2)) {
    c.reason = "NVLink state " + links.missing;
    out.push_back(c);
    return;
  }
  const double fewest = *std::min_element(links.values.begin(), links.values.end());
  c.measured = fewest;
  c.measured_text = format_fixed(fewest, 0) + " up";
  const bool lost = links.values.size() == 2 && links.values[1] < links.values[0];
  // Links the GPU has that are down while others are up (DCGM fails a link in state Down), where its links go to
  // NVSwitches: a switched baseboard wires every link, while a bridged card or a direct mesh may leave link
  // indices unused (an H100 NVL's bridges use 12 of its 18), and those answer "down" too.
  const double has = present.values.empty() ? 0 : *std::max_element(present.values.begin(), present.values.end());
  const Reading to_switch = gather(s, "nvlink.links_to_switch");
  const bool switched = std::any_of(to_switch.values.begin(), to_switch.values.end(), [](double v) { return v > 0; });
  const bool down = switched && has > fewest;
  if (has > fewest) c.measured_text = format_fixed(fewest, 0) + " of " + format_fixed(has, 0) + " up";
  c.status = (fewest < expected || lost || down) ? CheckStatus::kFail : CheckStatus::kPass;
  if (lost)
    c.reason = format_fixed(links.values[0] - links.values[1], 0) + " NVLink(s) went down during the run (" +
               format_fixed(links.values[0], 0) + " before, " + format_fixed(links.values[1], 0) + " after)";
  else if (fewest < expected)
    c.reason = "only " + format_fixed(fewest, 0) + " of " + format_fixed(expected, 0) +
               " NVLinks are up: a link is down or did not train";
  else if (down)
    c.reason = format_fixed(has - fewest, 0) + " of the GPU's " + format_fixed(has, 0) +
               " NVLinks are down while the others (to NVSwitches) are up: a link did not train or was taken down";
  if (!down && has > fewest)
    c.reason += std::string(c.reason.empty() ? "" : "; ") + format_fixed(has - fewest, 0) + " of the GPU's " +
                format_fixed(has, 0) + " NVLink indices are down, not judged: " +
                (to_switch.values.empty() ? "NVML did not say what its links reach (" + to_switch.missing + ")"
                                          : std::string("its links reach GPUs, not NVSwitches")) +
                ", and a bridge or a direct mesh may leave indices unused (set \"nvlink_links\" to the count "
                "this system wires)";
  out.push_back(c);
}

// NVLink data-link errors during the run, judged by DCGM's limits, where any link is up.
void check_nvlink_errors(const HealthSection& s, std::vector<Check>& out) {
  const Reading links = gather(s, "nvlink.links_active");
  if (std::none_of(links.values.begin(), links.values.end(), [](double v) { return v > 0; })) return;
  Check c = make_check("health", "NVLink errors");
  c.threshold_text = "no replay/recovery, CRC < 100/s";
  c.source = "health rule nvlink_errors (DCGM's limits: any replay or recovery error fails, CRC errors from 100/s)";
  if (!s.after) {
    c.reason = "one snapshot only: errors during the run need a before and an after reading";
    out.push_back(c);
    return;
  }
  // A counter this driver does not offer for this GPU is left out (DCGM skips fields without data);
  // one that could not be read, or no counter at all, leaves the check incomplete.
  // With per-link counts in both snapshots, the change is summed over the links up in both (a link that
  // came up brings counts from before the run); older sections have the sums only.
  const bool per_link = !s.before.nvlinks.empty() && !s.after->nvlinks.empty();
  const std::vector<NvLinkCounts> increases = nvlink_increases(s);
  std::map<std::string, double> during;
  std::vector<std::string> unsupported;
  for (const char* name : {"nvlink.replay_errors", "nvlink.recovery_errors", "nvlink.crc_flit_errors",
                           "nvlink.crc_data_errors"}) {
    const Reading r = gather(s, name);
    if (r.values.size() == 2) {
      double rose = 0;
      for (const NvLinkCounts& l : increases)
        if (auto it = l.errors.find(std::string(name).substr(7)); it != l.errors.end()) rose += it->second;
      during[name] = per_link ? rose : std::max(0.0, r.values[1] - r.values[0]);
    } else if (r.values.empty() && r.missing == "unsupported") {
      unsupported.push_back(name);
    } else {
      c.reason = std::string(name) + " " + r.missing;
      out.push_back(c);
      return;
    }
  }
  if (during.empty()) {
    c.reason = "no NVLink error counter is supported by this driver for this GPU (set \"health\": "
               "{\"nvlink_errors\": false} to accept that)";
    out.push_back(c);
    return;
  }
  // A counter that went back between the snapshots was reset: what happened during the run is unknown.
  std::string went_back;
  if (per_link) {
    for (const NvLinkCounts& a : s.after->nvlinks)
      for (const NvLinkCounts& b : s.before.nvlinks)
        if (a.link == b.link)
          for (const auto& [k, v] : a.errors)
            if (auto it = b.errors.find(k); it != b.errors.end() && v < it->second && went_back.empty())
              went_back = "NVLink " + std::to_string(a.link) + " " + k + " went from " + format_fixed(it->second, 0) +
                          " to " + format_fixed(v, 0);
  }
  const double seconds = snapshot_seconds(s);
  const double replay = during["nvlink.replay_errors"], recovery = during["nvlink.recovery_errors"];
  const double crc = during["nvlink.crc_flit_errors"] + during["nvlink.crc_data_errors"];
  // DCGM judges each CRC counter on its own against 100/s; the larger rate decides.
  const double crc_rate = std::max(during["nvlink.crc_flit_errors"], during["nvlink.crc_data_errors"]) / seconds;
  c.measured = replay + recovery + crc;
  c.measured_text = "replay " + format_fixed(replay, 0) + ", recovery " + format_fixed(recovery, 0) + ", CRC " +
                    format_fixed(crc, 0) + " (" + format_fixed(crc_rate, 1) + "/s, the larger counter)";
  std::vector<std::string> faults;
  if (replay > 0) faults.push_back(format_fixed(replay, 0) + " replay error(s)");
  if (recovery > 0) faults.push_back(format_fixed(recovery, 0) + " recovery error(s): a link retrained");
  if (crc_rate >= kMaxNvLinkCrcPerSecond)
    faults.push_back(format_fixed(crc, 0) + " CRC errors, " + format_fixed(crc_rate, 1) + "/s: a marginal link");
  c.status = faults.empty() ? (went_back.empty() ? CheckStatus::kPass : CheckStatus::kIncomplete) : CheckStatus::kFail;
  for (const std::string& f : faults) c.reason += (c.reason.empty() ? "" : "; ") + f;
  if (faults.empty() && !went_back.empty()) {
    c.reason = went_back + " during the run: the counters were reset, so the run's errors cannot be counted";
    out.push_back(c);
    return;
  }
  if (faults.empty() && crc > 0)
    c.reason = format_fixed(crc, 0) + " CRC error(s) during the run, below DCGM's failure rate of 100/s (DCGM warns)";
  if (!faults.empty()) {
    c.reason += " during the run";
    if (!increases.empty()) c.reason += " (" + nvlink_increases_text(increases) + ")";
  }
  if (!unsupported.empty()) {
    std::string list;
    for (const std::string& u : unsupported) list += (list.empty() ? "" : ", ") + u;
    c.reason += (c.reason.empty() ? "" : "; ") + ("not counted by this driver: " + list);
  }
  out.push_back(c);
}

void check_health_slowdown(const HealthSection& s, std::vector<Check>& out) {
  Check c = make_check("health", "HW/thermal slowdown");
  c.threshold_text = "none";
  c.source = "health rule slowdown (clock-event reasons and NVML thermal violation time)";
  std::uint64_t bits = 0;
  bool any_reading = false;
  for (const HealthSnapshot* snap : s.snapshots())
    if (auto v = snap->value("clocks.event_reasons")) {
      any_reading = true;
      auto read = static_cast<std::uint64_t>(*v);
      // An idle GPU changing clocks may report HW_SLOWDOWN alone for a moment (nvml.h): not a slowdown.
      if ((read & clock_events::kGpuIdle) &&
          (read & clock_events::kHardwareSlowdownMask) == clock_events::kHwSlowdown)
        read &= ~clock_events::kHwSlowdown;
      bits |= read;
    }
  std::optional<double> thermal_delta;
  std::string thermal_reset;  // the violation counter went back (reset between the snapshots): time unknown
  if (s.after) {
    const auto b = s.before.value("throttle.thermal_s"), a = s.after->value("throttle.thermal_s");
    if (a && b && *a < *b)
      thermal_reset = "the thermal violation counter went back (" + format_quantity(*b, "s") + " before, " +
                      format_quantity(*a, "s") + " after: reset between the snapshots), so the run's thermal "
                      "slowdown is unknown";
    else if (a && b)
      thermal_delta = *a - *b;
  }
  if (!any_reading && !thermal_delta) {
    c.reason = "clock-event reasons " + gather(s, "clocks.event_reasons").missing;
    out.push_back(c);
    return;
  }
  const std::uint64_t hw = bits & clock_events::kHardwareSlowdownMask;
  c.measured_text = "reasons " + fmt_bits(bits) + " (" + clock_events::names(bits) + ")" + (thermal_delta ? ", thermal " + format_quantity(*thermal_delta, "s") : "");
  c.status = CheckStatus::kPass;
  if (hw) {
    c.status = CheckStatus::kFail;
    c.reason = "clock held down by " + clock_events::names(hw);
  }
  if (thermal_delta && *thermal_delta > 0) {
    c.status = CheckStatus::kFail;
    c.reason += (c.reason.empty() ? "" : "; ") + std::string("thermal slowdown for ") +
                format_quantity(*thermal_delta, "s") + " during the run";
  }
  if (!thermal_reset.empty()) {
    if (c.status == CheckStatus::kPass) c.status = CheckStatus::kIncomplete;
    c.reason += (c.reason.empty() ? "" : "; ") + thermal_reset;
  }
  out.push_back(c);
}

// A power limit set below the board's default (nvidia-smi -pl) caps every ceiling under load, and nothing else
// names it where the whole fleet is set alike. The limit the driver enforces, else the one set, else the
// profile's; the default as NVML reports it, else the datasheet's TDP where that is the GPU's own (not a module's).
constexpr double kMinPowerLimitFraction = 0.95;

void check_power_limit(const HealthSection* s, const Profile* profile, std::vector<Check>& out) {
  std::optional<double> limit, fallback, default_w;
  if (s)
    for (const HealthSnapshot* snap : s->snapshots()) {
      if (auto v = snap->value("power.enforced_limit_w")) limit = std::min(limit.value_or(*v), *v);
      if (auto v = snap->value("power.limit_w")) fallback = std::min(fallback.value_or(*v), *v);
      if (auto v = snap->value("power.default_limit_w")) default_w = std::max(default_w.value_or(*v), *v);
    }
  if (!limit) limit = fallback;
  if (!limit && profile) limit = profile->device.power_limit_w;
  // A check that cannot run is a row that says why, never a row that is not there (review 36: a health section
  // without a limit passed with no word of the power limit).
  auto not_judged = [&](const std::string& why) {
    Check c = make_check("health", "power limit");
    if (limit) c.measured = *limit;
    c.measured_text = limit ? format_quantity(*limit, "W") : "not read";
    c.unit = "W";
    c.threshold_text = "n/a";
    c.source = "health rule power_limit";
    c.status = CheckStatus::kNotJudged;
    c.reason = why;
    out.push_back(c);
  };
  std::string from = "NVML's default power limit";
  if (!default_w) {
    const GpuSpec* spec = find_gpu_board(profile ? profile->device.name : s ? s->device_name : "");
    if (!spec || spec->tdp_w <= 0 || spec->tdp_whole_module)
      return not_judged(std::string("no default limit to compare with: NVML's is not recorded, and ") +
                        (!spec ? "the datasheet table does not know this GPU"
                               : "the datasheet's TDP is " + std::string(spec->tdp_w > 0 ? "the whole module's" : "not published")));
    // A range the datasheet calls configurable: any limit in it is the board's as sold (review 97: an H100 PCIe at
    // its 300 W failed against 350).
    default_w = spec->tdp_min_w > 0 ? spec->tdp_min_w : spec->tdp_w;
    from = "datasheet " + spec->name + (spec->tdp_min_w > 0 ? " TDP range's lowest" : " TDP") +
           " (the board's default limit is not recorded)";
  }
  if (!limit) return not_judged("the power limit was not read (neither NVML's readings nor the profile's device record it)");
  Check c = make_check("health", "power limit");
  c.measured = *limit;
  c.threshold = kMinPowerLimitFraction * *default_w;
  c.unit = "W";
  c.threshold_text = ">= " + format_quantity(*c.threshold, "W");
  c.source = "health rule power_limit (" + format_percent(kMinPowerLimitFraction, 0) + " of " + from + " " +
             format_quantity(*default_w, "W") + ")";
  c.status = *limit < *c.threshold ? CheckStatus::kFail : CheckStatus::kPass;
  if (c.status == CheckStatus::kFail)
    c.reason = "power limit " + format_quantity(*limit, "W") + " is below the default " +
               format_quantity(*default_w, "W") + ": every ceiling under load is capped (raise it with nvidia-smi -pl; "
               "where the cap is intended, set \"health\": {\"power_limit\": false})";
  out.push_back(c);
}

// Time the board-limit and reliability policies held the clocks down during the run (NVML's violation counters,
// read before and after it), each counter on its own as a share of the run's window. A clock held down for a
// share f of the run can take at most f off a ceiling averaged over it, so below 5% the loss stays inside
// qualify's 5% baseline tolerance even had the clock stopped, and is noted; from 5% it can be what a ceiling
// misses by, and fails: neither policy holds the clocks of a healthy board at its default settings (the stored
// H200: 0 s of each over its 191 s run). The power cap's violation time is not judged: a board at its limit under
// load is expected (the same H200: 107 s, 56% of the run); the thermal one is the slowdown row's.
constexpr double kMaxViolationShare = 0.05;
constexpr double kMinViolationWindowS = 1.0;

void check_violation_time(const HealthSection& s, std::vector<Check>& out) {
  if (!s.after) return;  // one snapshot: nothing accumulated to judge
  struct Policy {
    const char* metric;
    const char* name;
  };
  static const Policy policies[] = {{"throttle.board_limit_s", "board limit"},
                                     {"throttle.reliability_s", "reliability limit"}};
  // The share is of the monitor's own steady-clock window, not floored, where recorded (`health --watch 0.05`: 30 ms
  // of 52 ms is 58%, not 3% of 1 s); else of the snapshots' times, floored at 1 s (whole seconds). A window under
  // 1 s is shown but not judged: there a share rests on a counter step or two (a 2 ms step is all of a 1.25 ms
  // `--watch 0`), and a run a profile records lasts minutes.
  const double seconds = s.xid.window_s > 0 ? s.xid.window_s : snapshot_seconds(s);
  const bool too_short = seconds < kMinViolationWindowS;
  // The counters are read a moment before and after the window's edges: a share never exceeds the whole run.
  auto share = [&](double during) { return std::min(1.0, during / seconds); };
  std::vector<std::string> parts, held, went_back;
  double worst = 0;
  for (const Policy& p : policies) {
    const auto b = s.before.value(p.metric), a = s.after->value(p.metric);
    if (!a || !b) continue;  // unsupported, not recorded (older sections), or unreadable (the readable row says)
    if (*a < *b) {
      went_back.push_back(std::string(p.name) + " went from " + format_quantity(*b, "s") + " to " +
                          format_quantity(*a, "s"));
      continue;
    }
    const double during = *a - *b;
    worst = std::max(worst, share(during));
    parts.push_back(std::string(p.name) + " " + format_quantity(during, "s"));
    if (during > 0)
      held.push_back(std::string(p.name) + " for " + format_quantity(during, "s") + " (" +
                     format_percent(share(during), 1) + ")");
  }
  if (parts.empty() && went_back.empty()) return;
  Check c = make_check("health", "violation time");
  c.measured = worst;
  c.threshold = kMaxViolationShare;
  c.threshold_text = "< " + format_percent(kMaxViolationShare, 0) + " of the run, each";
  c.source = "health rule violation_time (NVML's board-limit and reliability violation time during the run, over "
             "its " + format_quantity(seconds, "s") + "; the power cap's is not judged)";
  std::string list;
  for (const std::string& part : parts) list += (list.empty() ? "" : ", ") + part;
  c.measured_text = list.empty() ? "unknown" : list + " (" + format_percent(worst, 1) + " of the run, the larger)";
  std::string why;
  for (const std::string& h : held) why += (why.empty() ? "" : ", ") + h;
  if (worst >= kMaxViolationShare && !too_short) {
    c.status = CheckStatus::kFail;
    c.reason = "clocks held down by the " + why + " of the run: enough to take a ceiling below its limit (a "
               "board or power-delivery fault, or a setting; check `nvidia-smi -q -d PERFORMANCE`)";
  } else if (too_short) {
    c.status = went_back.empty() ? CheckStatus::kNotJudged : CheckStatus::kIncomplete;
    c.reason = (why.empty() ? std::string("no clock held down") : "clocks held down by the " + why) + " of a " +
               format_quantity(seconds, "s") + " window: not judged, a share of less than " +
               format_quantity(kMinViolationWindowS, "s") + " rests on a counter step or two (watch longer)";
  } else {
    c.status = went_back.empty() ? CheckStatus::kPass : CheckStatus::kIncomplete;
    if (!why.empty())
      c.reason = "clocks held down by the " + why + " of the run (noted, below " +
                 format_percent(kMaxViolationShare, 0) + ")";
  }
  if (!went_back.empty()) {
    std::string wb;
    for (const std::string& w : went_back) wb += (wb.empty() ? "" : ", ") + w;
    c.reason += (c.reason.empty() ? "" : "; ") + ("the " + wb + ": reset between the snapshots, so the run's time "
                                                  "under that limit is unknown");
  }
  out.push_back(c);
}

// The GPU as `nvidia-smi -i` takes it in a fix a row suggests: its PCI bus id, else its index.
std::string smi_target(const HealthSection& s) {
  return s.pci_bus_id.empty() ? std::to_string(s.device_index) : s.pci_bus_id;
}

// A MIG mode change waiting for a GPU reset (nvmlDeviceGetMigMode's pending mode differs from the current one): the
// reset is outstanding, so the GPU is read (and measured) in a state it will not run in after it. Pending is judged on
// the last reading (a change pending before the run but set back by its end is noted). A current mode that differs
// between the snapshots fails: the GPU was reset or reconfigured during the run, so its ceilings are not of one
// configuration. MIG enabled as such is judged where the profile says what was measured (qualify's SM count row,
// is_mig), not here.
void check_mig_mode(const HealthSection& s, std::vector<Check>& out) {
  struct Mode {
    bool current, pending;
  };
  std::vector<Mode> read;  // the snapshots that read both, before first
  for (const HealthSnapshot* snap : s.snapshots()) {
    const auto c = snap->value("mig.enabled"), p = snap->value("mig.pending_enabled");
    if (c && p) read.push_back({*c != 0, *p != 0});
  }
  if (read.empty()) return;  // a GPU without MIG, or a section recorded before the mode was read
  auto mode = [](bool on) { return std::string(on ? "enabled" : "disabled"); };
  const Mode first = read.front(), last = read.back();
  Check c = make_check("health", "MIG mode");
  c.threshold_text = "no change pending";
  c.source = "health rule mig_mode (nvmlDeviceGetMigMode: the current and the pending mode)";
  c.measured_text = "MIG " + mode(last.current) + ", no change pending";
  c.status = CheckStatus::kPass;
  const std::string gpu = smi_target(s);
  if (first.current != last.current) {
    c.status = CheckStatus::kFail;
    c.threshold_text = "one mode during the run, no change pending";
    c.measured_text = "MIG " + mode(first.current) + " before the run, " + mode(last.current) + " after it";
    c.reason = "the MIG mode changed during the run (" + mode(first.current) + " before, " + mode(last.current) +
               " after): the GPU was reset or reconfigured mid-run, so the run's ceilings are not of one "
               "configuration (measure again with the mode settled)";
    if (last.pending != last.current)
      c.reason += "; and " + mode(last.pending) + " is pending for the next reset";
  } else if (last.pending != last.current) {
    c.status = CheckStatus::kFail;
    c.measured_text = "MIG " + mode(last.current) + ", " + mode(last.pending) + " after the next reset";
    c.reason = "a GPU reset is pending: MIG mode is " + mode(last.current) + " and set to be " + mode(last.pending) +
               " after the next reset, so the GPU is not in the state it will run in (reset it: nvidia-smi "
               "-i " + gpu + " -r, or set the mode back: nvidia-smi -i " + gpu + " -mig " + (last.pending ? "0" : "1") +
               ")";
  } else if (first.pending != first.current) {
    c.reason = "a change to MIG " + mode(first.pending) + " was pending before the run and was set back by its end "
               "(noted: nothing is pending now)";
  }
  out.push_back(c);
}

// Persistence mode, as DCGM's diagnostics treat it: disabled is a warning there (DCGM_FR_PERSISTENCE_MODE, "Persistence
// mode for GPU N is disabled", fixed with `nvidia-smi -i N -pm 1`), so a note that passes here unless the rules
// require it (require_persistence_mode). Without it the driver tears the GPU's state down whenever its last client
// exits and sets it up again for the next one. Not read (a section recorded before it was, or NVML without it): no
// row, unless required.
Check persistence_mode_check(bool required) {
  Check c = make_check("health", "persistence mode");
  c.threshold_text = required ? "enabled" : "enabled (noted, not required)";
  c.source = required ? "health rule require_persistence_mode"
                      : "health rule persistence_mode (DCGM's diagnostics warn where it is disabled)";
  return c;
}

// Required, where the profile has no health section to read it from: incomplete, never dropped without a word.
void persistence_mode_not_read(const HealthRules& rules, const std::string& why, std::vector<Check>& out) {
  if (!rules.require_persistence_mode) return;
  Check c = persistence_mode_check(true);
  c.reason = "persistence mode not read: " + why + "; required by the rules (require_persistence_mode)";
  out.push_back(c);
}

void check_persistence_mode(const HealthSection& s, const HealthRules& rules, std::vector<Check>& out) {
  const Reading r = gather(s, "persistence_mode.enabled");
  const bool required = rules.require_persistence_mode;
  if (r.values.empty() && !required) return;
  Check c = persistence_mode_check(required);
  if (r.values.empty()) {
    c.reason = "persistence mode " + r.missing + ": required by the rules (require_persistence_mode)";
    out.push_back(c);
    return;
  }
  const bool off = std::any_of(r.values.begin(), r.values.end(), [](double v) { return v == 0; });
  c.measured_text = off ? "disabled" : "enabled";
  c.status = off && required ? CheckStatus::kFail : CheckStatus::kPass;
  if (off) {
    const std::string gpu = smi_target(s);
    c.reason = "persistence mode is disabled: the driver tears the GPU's state down when its last client exits and "
               "sets it up again for the next (enable it as root: nvidia-smi -i " + gpu + " -pm 1, or run "
               "nvidia-persistenced)";
    if (!required)
      c.reason += "; noted, not failed (DCGM warns; \"health\": {\"require_persistence_mode\": true} fails it)";
  }
  out.push_back(c);
}

// A temperature at or above its limit (the hottest reading of the snapshots against the lowest limit), judged only
// where the driver reports both: HBM against the temperature where the memory slows down (GDDR boards and older
// drivers report neither), the GPU die against its slowdown threshold (the clocks come down, or are about to,
// whatever the clock event reasons said when they were read).
// `every_gpu`: every GPU reports this reading (its die's), so a section without it says so in a row not judged; the
// memory's is only an HBM GPU's, absent elsewhere.
void check_temperature_limit(const HealthSection& s, const char* metric, const char* limit_metric, const char* rule,
                             const std::string& what, const std::string& limit_name, const std::string& after,
                             bool every_gpu, std::vector<Check>& out) {
  std::optional<double> hottest, limit;
  for (const HealthSnapshot* snap : s.snapshots()) {
    const auto t = snap->value(metric), m = snap->value(limit_metric);
    if (!t || !m) continue;
    hottest = std::max(hottest.value_or(*t), *t);
    limit = std::min(limit.value_or(*m), *m);
  }
  if (!hottest && !every_gpu) return;
  if (!hottest) {  // said, not left out: a section without the readings passed with no word of the temperature
    Check c = make_check("health", rule);
    c.measured_text = "not read";
    c.threshold_text = "n/a";
    c.source = "health rule slowdown (NVML " + std::string(metric) + " and its " + limit_name + ", " + limit_metric + ")";
    c.status = CheckStatus::kNotJudged;
    c.reason = "not judged: no snapshot holds both " + std::string(metric) + " and " + limit_metric;
    out.push_back(c);
    return;
  }
  Check c = make_check("health", rule);
  c.measured = *hottest;
  c.threshold = *limit;
  c.unit = "°C";  // as NVML reports it (the one number of a check not in an SI base unit)
  c.measured_text = format_fixed(*hottest, 0) + " C";
  c.threshold_text = "< " + format_fixed(*limit, 0) + " C";
  c.source = "health rule slowdown (NVML " + std::string(metric) + " and its " + limit_name + ", " + limit_metric + ")";
  c.status = *hottest >= *limit ? CheckStatus::kFail : CheckStatus::kPass;
  if (*hottest >= *limit)
    c.reason = what + " reached " + format_fixed(*hottest, 0) + " C, at or above its " + limit_name + " of " +
               format_fixed(*limit, 0) + " C" + after;
  out.push_back(c);
}

void check_memory_temperature(const HealthSection& s, std::vector<Check>& out) {
  check_temperature_limit(s, "temperature.memory_c", "temperature.memory_max_c", "HBM temperature", "the memory",
                          "limit", ": its bandwidth is throttled (check the cooling)", false, out);
}

void check_gpu_temperature(const HealthSection& s, std::vector<Check>& out) {
  check_temperature_limit(s, "temperature.gpu_c", "temperature.slowdown_c", "GPU temperature", "the GPU",
                          "slowdown threshold", " (check the cooling)", true, out);
}

void check_readable(const HealthSection& s, std::vector<Check>& out) {
  Check c = make_check("health", "counters readable");
  c.threshold_text = "all read";
  c.source = "health rule readable";
  std::vector<std::string> bad;
  std::set<std::string> seen;
  for (const HealthSnapshot* snap : s.snapshots())
    for (const auto& [name, m] : snap->metrics)
      if (m.state == HealthMetric::State::kUnreadable && seen.insert(name).second)
        bad.push_back(name + " (" + m.reason + ")");
  c.measured = static_cast<double>(bad.size());
  c.measured_text = bad.empty() ? "all read" : std::to_string(bad.size()) + " could not be read";
  c.status = bad.empty() ? CheckStatus::kPass : CheckStatus::kIncomplete;
  for (const auto& b : bad) c.reason += (c.reason.empty() ? "could not read: " : ", ") + b;
  out.push_back(c);
}

// The driver's GPU recovery action (NVML field 230): what it asks before the GPU runs work again, judged on the last
// reading. Anything but none fails: DCGM fails a reset, a reboot and a drain-and-reset, and warns of a P2P drain,
// which fails here too (a node in acceptance is not handed to work the driver asks to keep off it). A driver or GPU
// without the field gives no row; the kernel log's XID 154 records the same action's changes.
void check_recovery_action(const HealthSection& s, std::vector<Check>& out) {
  std::optional<int> first;
  for (const HealthSnapshot* snap : s.snapshots())
    if (const auto v = snap->value("recovery.action"); v && !first) first = static_cast<int>(*v);
  const auto last = recovery_action(s);
  if (!last) return;
  Check c = make_check("health", "GPU recovery action");
  c.threshold_text = "none";
  c.source = "health rule recovery_action (NVML field 230: the driver's GPU recovery action)";
  c.measured_text = recovery_action_name(*last);
  c.status = *last == 0 ? CheckStatus::kPass : CheckStatus::kFail;
  const std::string reset = "nvidia-smi -i " + smi_target(s) + " -r, with no process on the GPU";
  switch (*last) {
    case 0:
      if (first && *first != 0)
        c.reason = "the recovery action was " + recovery_action_name(*first) + " before the run and none after it "
                   "(noted)";
      break;
    case 1: c.reason = "the driver asks for a GPU reset before the GPU runs work again (" + reset + ")"; break;
    case 2: c.reason = "the driver asks for a node reboot before the GPU runs work again"; break;
    case 3:
      c.reason = "the driver asks that peer-to-peer traffic to the GPU be drained (DCGM warns of this; failed here: "
                 "the node is not ready for work until the action is none)";
      break;
    case 4: c.reason = "the driver asks for the GPU to be drained of work and reset (" + reset + ")"; break;
    case 5:
      c.reason = "the driver asks for the GPU's IMEX domain to be recovered (the multi-node NVLink memory export "
                 "service: restart nvidia-imex on the domain's nodes)";
      break;
    case 6: c.reason = "the driver asks for the GPU's PCIe bus to be reset before the GPU runs work again"; break;
    case 7: c.reason = "the driver asks for a system reboot before the GPU runs work again"; break;
    default:
      c.reason = "the driver asks for recovery action " + std::to_string(*last) +
                 " (one this build has no name for: see the driver's nvmlDeviceGpuRecoveryAction_t)";
      break;
  }
  out.push_back(c);
}

// The GPU's registration in the NVLink fabric (NVSwitch systems; nvmlDeviceGetGpuFabricInfoV), judged on the last
// reading: a probe not completed (the Fabric Manager not running, or not done), a completed one that failed, or a
// health mask that reports degraded bandwidth, a route unhealthy or in recovery, an access-timeout recovery or an
// incorrect configuration fails, as DCGM's fabric watch fails them. A GPU outside an NVSwitch system gives no row.
void check_nvlink_fabric(const HealthSection& s, std::vector<Check>& out) {
  const HealthSnapshot* last = nullptr;
  for (const HealthSnapshot* snap : s.snapshots())
    if (snap->value("fabric.state")) last = snap;
  if (!last) return;
  Check c = make_check("health", "NVLink fabric");
  c.threshold_text = "registered, healthy";
  c.source = "health rule nvlink_fabric (nvmlDeviceGetGpuFabricInfoV: the Fabric Manager's probe and health mask)";
  const int state = static_cast<int>(*last->value("fabric.state"));
  const auto status = last->value("fabric.status");
  const auto mask = last->value("fabric.health_mask");
  std::vector<std::string> faults;
  if (state == 1)
    faults.push_back("the Fabric Manager has not started registering the GPU in the NVLink fabric (is "
                     "nvidia-fabricmanager running? systemctl status nvidia-fabricmanager)");
  else if (state == 2)
    faults.push_back("the GPU's registration in the NVLink fabric is still in progress (wait for the Fabric Manager, "
                     "then measure again)");
  else if (status && *status != 0)
    faults.push_back("the Fabric Manager's registration of the GPU failed (NVML return code " +
                     format_fixed(*status, 0) + ")");
  if (mask) {  // nvml.h's NVML_GPU_FABRIC_HEALTH_MASK_* fields: 1 is TRUE for each two-bit one
    const auto m = static_cast<unsigned long long>(*mask);
    const auto get = [&](int shift, unsigned width) { return static_cast<unsigned>((m >> shift) & width); };
    if (get(0, 0x3) == 1) faults.push_back("its NVLink bandwidth is degraded");
    if (get(2, 0x3) == 1) faults.push_back("a route is in recovery");
    if (get(4, 0x3) == 1) faults.push_back("a route is unhealthy");
    if (get(6, 0x3) == 1) faults.push_back("an access-timeout recovery is in progress");
    static const char* const kConfig[] = {"the system GUID", "the chassis serial number", "no partition",
                                          "insufficient NVLinks", "incompatible GPU firmware", "an invalid location",
                                          "an invalid GPU state"};
    if (const unsigned conf = get(8, 0xf); conf >= 2)
      faults.push_back(std::string("its fabric configuration is incorrect (") +
                       (conf - 2 < std::size(kConfig) ? kConfig[conf - 2] : "code " + std::to_string(conf)) + ")");
  }
  c.measured_text = state == 1 ? "not started" : state == 2 ? "in progress" : faults.empty() ? "registered, healthy"
                                                                                              : "registered";
  c.status = faults.empty() ? CheckStatus::kPass : CheckStatus::kFail;
  for (const std::string& f : faults) c.reason += (c.reason.empty() ? "" : "; ") + f;
  // A GPU that shows no NVLink (a VM given one GPU of an HGX board, its links hidden) has no fabric to be in: what
  // the probe says is shown, not judged.
  const auto present = last->value("nvlink.links_present");
  if (!faults.empty() && (!present || *present == 0)) {
    c.status = CheckStatus::kNotJudged;
    c.reason += " (not judged: the GPU shows no NVLink here, as in a VM given one GPU of a board, so it has no fabric "
                "to be in)";
  }
  out.push_back(c);
}

}  // namespace

std::vector<Check> health_checks(const HealthSection& s, const HealthRules& rules, const Profile* profile) {
  std::vector<Check> out;
  // The health section names the board (NVML's UUID), also where the profile was measured on a MIG instance.
  if (profile && !profile->device.board().empty() && s.uuid != profile->device.board()) {
    Check c = make_check("health", "same GPU");
    c.measured_text = s.uuid;
    c.threshold_text = profile->device.board();
    c.source = "the profile's device";
    c.reason = "the health section was recorded on another GPU (" + s.uuid + ")";
    out.push_back(c);
    return out;
  }
  if (rules.uncorrected_ecc) check_ecc(s, out);
  if (rules.sram_threshold) check_sram_threshold(s, out);
  if (rules.row_remap) check_remap(s, out);
  if (rules.memory_repair) check_memory_repair(s, out);
  if (rules.inforom) check_inforom(s, out);
  if (rules.pcie_link) check_pcie_link(&s, profile, out);
  if (rules.pcie_slot) check_pcie_slot(&s, profile, out);
  if (rules.pcie_replays) check_replays(s, out);
  if (rules.xid) check_xid(s, rules, out);
  if (rules.xid_log) check_kernel_xids(s, rules, out);
  if (rules.sxid_log) check_kernel_sxids(s, out);
  check_nvlink_links(s, rules, out);
  if (rules.nvlink_fabric) check_nvlink_fabric(s, out);
  if (rules.nvlink_errors) check_nvlink_errors(s, out);
  if (rules.power_limit) check_power_limit(&s, profile, out);
  if (rules.violation_time) check_violation_time(s, out);
  if (rules.mig_mode) check_mig_mode(s, out);
  if (rules.recovery_action) check_recovery_action(s, out);
  if (rules.persistence_mode || rules.require_persistence_mode) check_persistence_mode(s, rules, out);
  if (rules.slowdown) {
    check_health_slowdown(s, out);
    check_memory_temperature(s, out);
    check_gpu_temperature(s, out);
  }
  if (rules.readable) check_readable(s, out);
  return out;
}

std::vector<Check> profile_health_checks(const Profile& p, const HealthRules& rules) {
  std::vector<Check> out;
  const auto it = p.raw.find("health");
  if (it == p.raw.end() || it->is_null()) {
    if (rules.require_section) {
      Check c = make_check("health", "health recorded");
      c.threshold_text = "before/after snapshots";
      c.source = "health rule require_section";
      c.reason = "the profile has no health section (measure with a ceilings that records it, or run "
                 "`ceilings health` and set \"health\": {\"require_section\": false} to accept that)";
      out.push_back(c);
    }
    if (rules.pcie_link) check_pcie_link(nullptr, &p, out);
    if (rules.pcie_slot) check_pcie_slot(nullptr, &p, out);
    if (rules.power_limit) check_power_limit(nullptr, &p, out);
    persistence_mode_not_read(rules, "the profile has no health section", out);
    return out;
  }
  if (it->is_string()) {  // `ceilings measure` could not read health: it says why
    const std::string& text = it->get_ref<const std::string&>();
    if (text.rfind(kHealthFaultPrefix, 0) == 0) {  // NVML reported a fault of the node: failed, whatever the rules
      Check c = make_check("health", "GPU opened");
      c.measured_text = "fault";
      c.threshold_text = "opened by NVML";
      c.source = "the profile's health section (ceilings measure)";
      c.status = CheckStatus::kFail;
      c.reason = text.substr(std::char_traits<char>::length(kHealthFaultPrefix));
      out.push_back(c);
    } else if (rules.require_section) {
      Check c = make_check("health", "health recorded");
      c.threshold_text = "before/after snapshots";
      c.source = "health rule require_section";
      c.reason = "health was not recorded: " + it->get<std::string>();
      out.push_back(c);
    }
    if (rules.pcie_link) check_pcie_link(nullptr, &p, out);
    if (rules.pcie_slot) check_pcie_slot(nullptr, &p, out);
    if (rules.power_limit) check_power_limit(nullptr, &p, out);
    persistence_mode_not_read(rules, "health was not recorded (" + it->get<std::string>() + ")", out);
    return out;
  }
  const HealthSection s = health_from_json(*it, "health");
  return health_checks(s, rules, &p);
}

}  // namespace ceilings
