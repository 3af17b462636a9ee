// The health section: metric catalogue, plausibility rules for raw NVML readings, JSON in/out,
// deltas and the display table (feeds `ceilings health` and the health checks of `qualify`).
#include "ceilings/health.hpp"

#include <algorithm>
#include <iterator>
#include <cmath>
#include <cstdio>

#include "ceilings/clock_events.hpp"
#include "ceilings/profile.hpp"
#include "ceilings/units.hpp"

namespace ceilings {

namespace {

using State = HealthMetric::State;
constexpr const char* kUnsupportedText = "unsupported";
constexpr const char* kUnreadableText = "could not read";

}  // namespace

const std::vector<MetricInfo>& health_metric_catalog() {
  static const std::vector<MetricInfo> all = {
      {"ecc.enabled", MetricKind::kFlag, ""},
      {"inforom.valid", MetricKind::kFlag, ""},  // the InfoROM's checksums (nvmlDeviceValidateInforom)
      {"persistence_mode.enabled", MetricKind::kFlag, ""},  // nvmlDeviceGetPersistenceMode (Linux only)
      // nvmlDeviceGetMigMode: the mode in force and the one the next GPU reset applies (1: MIG enabled).
      {"mig.enabled", MetricKind::kFlag, ""},
      {"mig.pending_enabled", MetricKind::kFlag, ""},
      // The driver's GPU recovery action (field NVML_FI_DEV_GET_GPU_RECOVERY_ACTION, nvmlDeviceGpuRecoveryAction_t):
      // 0 none, 1 GPU reset, 2 node reboot, 3 drain P2P, 4 drain and reset, 5 recover the IMEX domain, 6 PCIe bus
      // reset, 7 system reboot (newer drivers; a value past them is still an action, named by its number).
      {"recovery.action", MetricKind::kGauge, ""},
      // The GPU in the NVLink fabric (nvmlDeviceGetGpuFabricInfoV, NVSwitch systems): the Fabric Manager probe's state
      // (1 not started, 2 in progress, 3 completed), its status (an nvmlReturn_t) and the health mask.
      {"fabric.state", MetricKind::kGauge, ""},
      {"fabric.status", MetricKind::kGauge, ""},
      {"fabric.health_mask", MetricKind::kGauge, ""},
      {"ecc.volatile.corrected", MetricKind::kCounter, ""},
      {"ecc.volatile.uncorrected", MetricKind::kCounter, ""},
      {"ecc.aggregate.corrected", MetricKind::kCounter, ""},
      {"ecc.aggregate.uncorrected", MetricKind::kCounter, ""},
      {"ecc.volatile.dram.corrected", MetricKind::kCounter, ""},
      {"ecc.volatile.dram.uncorrected", MetricKind::kCounter, ""},
      {"ecc.volatile.sram.corrected", MetricKind::kCounter, ""},
      {"ecc.volatile.sram.uncorrected", MetricKind::kCounter, ""},
      {"ecc.aggregate.dram.corrected", MetricKind::kCounter, ""},
      {"ecc.aggregate.dram.uncorrected", MetricKind::kCounter, ""},
      {"ecc.aggregate.sram.corrected", MetricKind::kCounter, ""},
      {"ecc.aggregate.sram.uncorrected", MetricKind::kCounter, ""},
      // nvmlDeviceGetSramEccErrorStatus (Ampere+, root only): NVML's flag that the SRAM's uncorrectable errors passed
      // NVIDIA's threshold, and the aggregate uncorrectable SRAM errors by the unit they arose in.
      {"ecc.sram.threshold_exceeded", MetricKind::kFlag, ""},
      {"ecc.aggregate.sram.uncorrected_l2", MetricKind::kCounter, ""},
      {"ecc.aggregate.sram.uncorrected_sm", MetricKind::kCounter, ""},
      {"ecc.aggregate.sram.uncorrected_pcie", MetricKind::kCounter, ""},
      {"ecc.aggregate.sram.uncorrected_mcu", MetricKind::kCounter, ""},  // the microcontrollers
      {"ecc.aggregate.sram.uncorrected_other", MetricKind::kCounter, ""},
      {"remap.correctable_rows", MetricKind::kCounter, ""},
      {"remap.uncorrectable_rows", MetricKind::kCounter, ""},
      {"remap.pending", MetricKind::kFlag, ""},
      {"remap.failure", MetricKind::kFlag, ""},
      // Memory banks by the spare rows they have left (nvmlDeviceGetRowRemapperHistogram).
      {"remap.banks_max", MetricKind::kGauge, ""},
      {"remap.banks_high", MetricKind::kGauge, ""},
      {"remap.banks_partial", MetricKind::kGauge, ""},
      {"remap.banks_low", MetricKind::kGauge, ""},
      {"remap.banks_none", MetricKind::kGauge, ""},
      // nvmlDeviceGetRepairStatus (R580+, Ampere+): a memory channel or TPC repair pending.
      {"repair.channel_pending", MetricKind::kFlag, ""},
      {"repair.tpc_pending", MetricKind::kFlag, ""},
      // nvmlDeviceGetUnrepairableMemoryFlag_v1 (R590+, Hopper+): memory the GPU cannot repair.
      {"memory.unrepairable", MetricKind::kFlag, ""},
      {"retired_pages.single_bit", MetricKind::kCounter, ""},
      {"retired_pages.double_bit", MetricKind::kCounter, ""},
      {"retired_pages.pending", MetricKind::kFlag, ""},
      {"pcie.gen", MetricKind::kGauge, ""},
      {"pcie.width", MetricKind::kGauge, ""},
      {"pcie.max_gen", MetricKind::kGauge, ""},
      {"pcie.max_width", MetricKind::kGauge, ""},
      {"pcie.gpu_max_gen", MetricKind::kGauge, ""},  // the GPU's own; max_gen/max_width: the GPU's and slot's
      {"pcie.replays", MetricKind::kCounter, ""},
      {"clocks.sm_hz", MetricKind::kGauge, "Hz"},
      {"clocks.mem_hz", MetricKind::kGauge, "Hz"},
      {"clocks.max_sm_hz", MetricKind::kGauge, "Hz"},
      {"clocks.max_mem_hz", MetricKind::kGauge, "Hz"},
      {"clocks.event_reasons", MetricKind::kGauge, ""},
      {"throttle.power_s", MetricKind::kCounter, "s"},
      {"throttle.thermal_s", MetricKind::kCounter, "s"},
      {"throttle.reliability_s", MetricKind::kCounter, "s"},
      {"throttle.board_limit_s", MetricKind::kCounter, "s"},
      {"power.usage_w", MetricKind::kGauge, "W"},
      {"power.limit_w", MetricKind::kGauge, "W"},
      {"power.enforced_limit_w", MetricKind::kGauge, "W"},
      {"power.default_limit_w", MetricKind::kGauge, "W"},  // the board's as shipped (nvmlDeviceGetPowerManagementDefaultLimit)
      {"temperature.gpu_c", MetricKind::kGauge, ""},
      {"temperature.slowdown_c", MetricKind::kGauge, ""},
      {"temperature.shutdown_c", MetricKind::kGauge, ""},
      {"temperature.memory_c", MetricKind::kGauge, ""},      // HBM (field NVML_FI_DEV_MEMORY_TEMP)
      {"temperature.memory_max_c", MetricKind::kGauge, ""},  // where the memory starts to slow down
      // NVLink: links up, and data-link error counts summed over the links that are up.
      {"nvlink.links_active", MetricKind::kGauge, ""},
      {"nvlink.links_present", MetricKind::kGauge, ""},  // links whose state answered, up or down
      {"nvlink.links_to_switch", MetricKind::kGauge, ""},  // links up whose far end is an NVSwitch
      {"nvlink.replay_errors", MetricKind::kCounter, ""},
      {"nvlink.recovery_errors", MetricKind::kCounter, ""},
      {"nvlink.crc_flit_errors", MetricKind::kCounter, ""},
      {"nvlink.crc_data_errors", MetricKind::kCounter, ""},
  };
  return all;
}

XidClass classify_xid(long long xid, const std::string& text) {
  struct Entry {
    long long xid;
    XidClass c;
  };
  // NVIDIA's XID catalog for Ampere and newer (docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html), by
  // its immediate action: RESTART_APP, a program's fault or a killed process, named and passed; IGNORE, none,
  // named and passed; every other (RESET_GPU, RESTART_BM, CONTACT_SUPPORT, a code the catalog does not list) a
  // fault. 43 and 137 (IGNORE, "a user application error", "typically application-level bugs") are named as a
  // program's, and 45 (WORKFLOW_XID_45: a process torn down, by Ctrl-C, SIGKILL or a GPU reset; whatever caused it is
  // its own XID) too. Stricter than the catalog, as a node's acceptance should be: 32 (RESTART_APP, but "primarily quality
  // issues on PCI ... not caused by user application actions"), 92 (a high single-bit ECC error rate) and 157 (no
  // spare resources left to retire) fail. 109 (a context-switch timeout) is RESET_GPU there, a fault here too
  // (NVIDIA's Kubernetes device plugin ignores it, so as not to evict the pods: a scheduler's choice).
  static const Entry table[] = {
      {8, {XidKind::kApplication, "GPU stopped processing: a channel idle timeout"}},
      {11, {XidKind::kApplication, "invalid or corrupted push buffer stream"}},
      {13, {XidKind::kApplication, "graphics engine exception"}},
      {25, {XidKind::kApplication, "invalid or illegal push buffer stream"}},
      {31, {XidKind::kApplication, "memory page fault"}},
      {39, {XidKind::kApplication, "copy engine exception"}},
      {40, {XidKind::kApplication, "copy engine exception"}},
      {41, {XidKind::kApplication, "copy engine exception"}},
      {43, {XidKind::kApplication, "GPU stopped processing: a faulting kernel"}},
      {45, {XidKind::kApplication, "preemptive cleanup: a process killed mid-kernel"}},
      {60, {XidKind::kApplication, "video processor exception"}},
      {68, {XidKind::kApplication, "video decoder exception"}},
      {69, {XidKind::kApplication, "graphics engine class error"}},
      {70, {XidKind::kApplication, "copy engine error"}},
      {71, {XidKind::kApplication, "copy engine error"}},
      {72, {XidKind::kApplication, "copy engine error"}},
      {75, {XidKind::kApplication, "copy engine error"}},
      {76, {XidKind::kApplication, "copy engine error"}},
      {77, {XidKind::kApplication, "copy engine error"}},
      {80, {XidKind::kApplication, "corrupted push buffer data sent to the GPU"}},
      {82, {XidKind::kApplication, "JPEG decoder error"}},
      {83, {XidKind::kApplication, "video decoder error"}},
      {84, {XidKind::kApplication, "video decoder error"}},
      {85, {XidKind::kApplication, "copy engine error"}},
      {86, {XidKind::kApplication, "optical flow accelerator exception"}},
      {88, {XidKind::kApplication, "video decoder error"}},
      {89, {XidKind::kApplication, "video decoder error"}},
      {96, {XidKind::kApplication, "video decoder error"}},
      {97, {XidKind::kApplication, "video decoder error"}},
      {98, {XidKind::kApplication, "video decoder error"}},
      {99, {XidKind::kApplication, "JPEG decoder error"}},
      {100, {XidKind::kApplication, "JPEG decoder error"}},
      {101, {XidKind::kApplication, "JPEG decoder error"}},
      {102, {XidKind::kApplication, "JPEG decoder error"}},
      {103, {XidKind::kApplication, "JPEG decoder error"}},
      {104, {XidKind::kApplication, "JPEG decoder error"}},
      {105, {XidKind::kApplication, "JPEG decoder error"}},
      {126, {XidKind::kApplication, "copy engine error"}},
      {127, {XidKind::kApplication, "copy engine error"}},
      {128, {XidKind::kApplication, "copy engine error"}},
      {129, {XidKind::kApplication, "copy engine error"}},
      {130, {XidKind::kApplication, "copy engine error"}},
      {131, {XidKind::kApplication, "copy engine error"}},
      {132, {XidKind::kApplication, "copy engine error"}},
      {133, {XidKind::kApplication, "copy engine error"}},
      {134, {XidKind::kApplication, "copy engine error"}},
      {135, {XidKind::kApplication, "copy engine error"}},
      {137, {XidKind::kApplication, "NVLink privilege error: an illegal peer access, typically a program's"}},
      {139, {XidKind::kApplication, "optical flow accelerator error"}},
      // IGNORE in the catalog, and the power-smoothing events it says need no reset.
      {14, {XidKind::kNote, "a fake or injected error"}},
      {37, {XidKind::kNote, "a driver firmware error the catalog says to ignore"}},
      {38, {XidKind::kNote, "a driver firmware error the catalog says to ignore"}},
      {44, {XidKind::kNote, "a graphics engine fault during a context switch, which the catalog says to ignore"}},
      {66, {XidKind::kNote, "an illegal access by the driver, which the catalog says to ignore"}},
      {67, {XidKind::kNote, "an illegal access by the driver, which the catalog says to ignore"}},
      {93, {XidKind::kNote, "the InfoROM wear limit NVFlash provisioned, reached: not a fault of the GPU"}},
      {106, {XidKind::kNote, "an SMBPBI test message"}},
      {107, {XidKind::kNote, "an SMBPBI test message"}},
      {108, {XidKind::kNote, "an NVLink remote translation error, which the catalog says to ignore"}},
      {121, {XidKind::kNote, "corrected errors on the C2C link to the Grace CPU: no operational impact"}},
      {141, {XidKind::kNote, "a CUDA fast-path error, which the catalog says to ignore"}},
      {152, {XidKind::kNote, "a DLA error, which the catalog says to ignore"}},
      {153, {XidKind::kNote, "a DLA timeout, which the catalog says to ignore"}},
      {160, {XidKind::kNote, "a channel retirement event, which the catalog says to ignore"}},
      {161, {XidKind::kNote, "a channel retirement failure, which the catalog says to ignore"}},
      {162, {XidKind::kNote, "power-smoothing circuitry re-engaged"}},
      {163, {XidKind::kNote, "power-smoothing circuitry disengaged: no GPU reset required"}},
      // NVIDIA's GPU memory error management (docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt): 63 records a remap,
      // 94 is contained (95, uncontained, needs a reset).
      {63, {XidKind::kNote, "a row remap (page retirement) recorded: the reset it needs is judged by row remapping"}},
      {94, {XidKind::kNote, "a contained ECC error: the program using the row was stopped and the GPU runs on (NVIDIA "
                            "recommends a reset when convenient; a pending remap is judged by row remapping)"}},
  };
  if (xid == 154 && text.find("to 0x0 (None)") != std::string::npos) return {XidKind::kRecoveryCleared, ""};
  if (xid >= 144 && xid <= 150 && text.find(" Nonfatal ") != std::string::npos) return {XidKind::kNvlinkNonfatal, ""};
  for (const Entry& e : table)
    if (e.xid == xid) return e.c;
  return {};
}

std::string sxid_summary(const KernelXidLog& log) {
  if (log.sxids.empty()) return "none " + kernel_log_span(log);
  struct Kind {
    long long sxid;
    bool fatal;
    std::size_t count;
  };
  std::vector<Kind> kinds;  // each SXid and severity once, in the order kept (fatal first)
  for (const KernelSxid& x : log.sxids) {
    auto it = std::find_if(kinds.begin(), kinds.end(), [&](const Kind& k) { return k.sxid == x.sxid && k.fatal == x.fatal; });
    if (it == kinds.end()) kinds.push_back({x.sxid, x.fatal, 1});
    else ++it->count;
  }
  std::string out;
  for (const Kind& k : kinds)
    out += (out.empty() ? "" : ", ") + std::string("SXid ") + std::to_string(k.sxid) +
           (k.count > 1 ? " x" + std::to_string(k.count) : "") + (k.fatal ? " (fatal)" : " (non-fatal)");
  if (log.sxid_total > log.sxids.size()) out += " and " + std::to_string(log.sxid_total - log.sxids.size()) + " more";
  return out + " " + kernel_log_span(log);
}

std::vector<KernelSxid> keep_kernel_sxids(std::vector<KernelSxid> sxids, std::size_t limit) {
  std::stable_partition(sxids.begin(), sxids.end(), [](const KernelSxid& x) { return x.fatal; });
  if (sxids.size() > limit) sxids.resize(limit);
  return sxids;
}

std::vector<KernelXid> keep_kernel_xids(std::vector<KernelXid> xids, std::size_t limit) {
  KernelXidKeeper keeper(limit);
  for (KernelXid& x : xids) keeper.add(std::move(x));
  return std::move(keeper).kept();
}

void KernelXidKeeper::add(KernelXid x) {
  auto& to = classify_xid(x.xid, x.text).kind == XidKind::kFault ? faults_ : others_;
  if (to.size() < limit_) to.emplace_back(total_, std::move(x));
  ++total_;
}

std::vector<KernelXid> KernelXidKeeper::kept() && {
  // The faults first, the others to fill up to the limit, then all in log order.
  if (faults_.size() + others_.size() > limit_) others_.resize(limit_ - faults_.size());
  std::vector<std::pair<std::size_t, KernelXid>> all = std::move(faults_);
  all.insert(all.end(), std::make_move_iterator(others_.begin()), std::make_move_iterator(others_.end()));
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<KernelXid> out;
  out.reserve(all.size());
  for (auto& [place, x] : all) out.push_back(std::move(x));
  return out;
}

const MetricInfo* find_metric_info(const std::string& name) {
  for (const MetricInfo& m : health_metric_catalog())
    if (name == m.name) return &m;
  return nullptr;
}

HealthMetric plausible_metric(const std::string& name, double raw) {
  auto bad = [&](const std::string& why) { return HealthMetric::unreadable(why); };
  if (!std::isfinite(raw) || raw < 0) return bad("impossible value " + format_fixed(raw, 0));
  // NVML's "no value" sentinels are all-ones in 32 or 64 bits.
  if (raw == 4294967295.0 || raw >= 1.8446744073709e19) {
    char exact[32];  // the sentinel as NVML returned it (0xFFFFFFFF, 2^64 - 1 read as a double): every digit
    std::snprintf(exact, sizeof exact, "%.0f", raw);
    return bad("sentinel value " + (raw < 1e20 ? std::string(exact) : format_fixed(raw, 0)));
  }
  const MetricInfo* info = find_metric_info(name);
  if (!info) return bad("unknown metric");
  const auto prefix = [&](const char* p) { return name.rfind(p, 0) == 0; };
  if (info->kind == MetricKind::kFlag) {
    if (raw != 0 && raw != 1) return bad("flag is neither 0 nor 1: " + format_fixed(raw, 0));
  } else if (name == "pcie.gen" || name == "pcie.max_gen" || name == "pcie.gpu_max_gen") {
    // The profile's bounds: a reading the profile would refuse is not a link's.
    if (raw != std::floor(raw) || raw > 64 || !valid_pcie_gen(static_cast<int>(raw)))
      return bad("no PCIe generation " + format_fixed(raw, 0));
  } else if (name == "pcie.width" || name == "pcie.max_width") {
    if (raw != std::floor(raw) || raw > 64 || !valid_pcie_width(static_cast<int>(raw)))
      return bad("no PCIe link width x" + format_fixed(raw, 0));
  } else if (prefix("clocks.") && name != "clocks.event_reasons") {
    // The profile's bound, 100 GHz: GDDR6X and GDDR7 memory clocks read above 10 GHz (an RTX 4090's 10501 MHz, an
    // RTX 5090's 14001), and a 10 GHz bound made every such card's health incomplete (review 38).
    if (raw <= 0 || raw > 1e11) return bad("impossible clock " + format_fixed(raw, 0) + " Hz");
  } else if (prefix("temperature.")) {
    if (raw <= 0 || raw > 150) return bad("impossible temperature " + format_fixed(raw, 0) + " C");
  } else if (prefix("power.")) {
    if (raw <= 0 || raw > 5000) return bad("impossible power " + format_fixed(raw, 1) + " W");
    // A draw may read a few watts; a limit under 1 W is no board's (the smallest data-center cards set 40 W).
    if (name != "power.usage_w" && raw < 1) return bad("impossible power limit " + format_fixed(raw, 3) + " W");
  } else if (name == "fabric.state") {
    if (raw != std::floor(raw) || raw < 1 || raw > 3) return bad("no fabric probe state " + format_fixed(raw, 0));
  } else if (name == "fabric.status") {
    if (raw != std::floor(raw) || raw > 999) return bad("no NVML return code " + format_fixed(raw, 0));
  } else if (name == "fabric.health_mask") {
    if (raw != std::floor(raw) || raw > 4294967295.0) return bad("no fabric health mask " + format_fixed(raw, 0));
  } else if (name == "recovery.action") {
    // Newer drivers add actions (6 and 7 came after 5): any whole number up to 255 is a reading, one this build
    // has no name for failed by its number, never "could not read" (review 91: 6 and 7 read as unreadable).
    if (raw != std::floor(raw) || raw > 255) return bad("no recovery action " + format_fixed(raw, 0));
  } else if (prefix("remap.") || prefix("retired_pages.")) {
    if (raw > 1e6) return bad("impossible count " + format_fixed(raw, 0));
  } else if (name == "nvlink.links_active" || name == "nvlink.links_present" || name == "nvlink.links_to_switch") {
    if (raw > kMaxNvLinks) return bad("no GPU has " + format_fixed(raw, 0) + " NVLinks");
  } else if (prefix("nvlink.")) {
    // The metric sums the links that are up; each link's own count is bounded by plausible_link_errors.
    if (raw > kMaxNvLinkErrorsPerLink * kMaxNvLinks) return bad("impossible count " + format_fixed(raw, 0));
  } else if (prefix("throttle.")) {
    if (raw > 1e9) return bad("impossible duration " + format_fixed(raw, 0) + " s");  // 30 years
  }
  return HealthMetric::of(raw);
}

HealthMetric plausible_link_errors(const std::string& name, double raw) {
  HealthMetric m = plausible_metric(name, raw);
  if (m.ok() && raw > kMaxNvLinkErrorsPerLink)
    return HealthMetric::unreadable("impossible count " + format_fixed(raw, 0) + " on one link");
  return m;
}

const HealthMetric* HealthSnapshot::find(const std::string& name) const {
  auto it = metrics.find(name);
  return it == metrics.end() ? nullptr : &it->second;
}

std::optional<double> HealthSnapshot::value(const std::string& name) const {
  const HealthMetric* m = find(name);
  if (!m || !m->ok()) return std::nullopt;
  return m->value;
}

std::map<std::string, double> health_deltas(const HealthSection& s) {
  std::map<std::string, double> out;
  if (!s.after) return out;
  for (const MetricInfo& info : health_metric_catalog()) {
    if (info.kind != MetricKind::kCounter) continue;
    const auto b = s.before.value(info.name), a = s.after->value(info.name);
    if (a && b && *a >= *b) out[info.name] = *a - *b;
  }
  return out;
}

std::vector<NvLinkCounts> nvlink_increases(const HealthSection& s) {
  std::vector<NvLinkCounts> out;
  if (!s.after) return out;
  for (const NvLinkCounts& a : s.after->nvlinks)
    for (const NvLinkCounts& b : s.before.nvlinks) {
      if (a.link != b.link) continue;
      NvLinkCounts rose{a.link, {}};
      for (const auto& [k, v] : a.errors) {
        const auto it = b.errors.find(k);
        if (it != b.errors.end() && v > it->second) rose.errors[k] = v - it->second;
      }
      if (!rose.errors.empty()) out.push_back(std::move(rose));
    }
  return out;
}

std::string nvlink_increases_text(const std::vector<NvLinkCounts>& increases) {
  std::string out;
  for (const NvLinkCounts& l : increases) {
    std::string line;
    for (const auto& [k, v] : l.errors) line += (line.empty() ? "" : ", ") + k + " +" + format_fixed(v, 0);
    out += (out.empty() ? "" : "; ") + ("NVLink " + std::to_string(l.link) + ": " + line);
  }
  return out;
}

namespace {

HealthSnapshot snapshot_from_json(const Fields& f) {
  HealthSnapshot s;
  s.time = f.string("time");
  parse_utc_time(s.time, "field '" + f.path_of("time") + "'");
  const Fields m = f.object("metrics");
  for (const auto& [key, v] : m.raw().items()) {
    // A metric a newer version reads is skipped, as readers skip every unknown field: a profile written by a
    // newer `ceilings` (with more counters, one schema) stays readable here.
    const MetricInfo* info = find_metric_info(key);
    if (!info) continue;
    if (v.is_string()) {
      const std::string text = v.get<std::string>();
      if (text == kUnsupportedText) {
        s.metrics[key] = HealthMetric::unsupported();
      } else if (text.rfind(kUnreadableText, 0) == 0) {
        std::string why = text.substr(std::string(kUnreadableText).size());
        if (why.rfind(": ", 0) == 0) why = why.substr(2);
        s.metrics[key] = HealthMetric::unreadable(why);
      } else {
        m.fail(key, "expected a value, \"unsupported\" or \"could not read: ...\", found '" + text + "'");
      }
    } else if (v.is_boolean()) {
      if (info->kind != MetricKind::kFlag) m.fail(key, "expected a number, found a boolean");
      s.metrics[key] = HealthMetric::of(v.get<bool>() ? 1 : 0);
    } else if (v.is_number()) {
      if (info->kind == MetricKind::kFlag) m.fail(key, "expected true or false, found a number");
      // The live reader's bounds: a value it would have recorded as "could not read" (a power of 0 W, PCIe
      // Gen9) is no reading, and the checks would judge it as one.
      const HealthMetric checked = plausible_metric(key, m.number(key));
      if (!checked.ok()) m.fail(key, checked.reason + " (read live, such a value is recorded as \"could not read\")");
      s.metrics[key] = checked;
    } else {
      m.fail(key, "expected a value, found " + json_type_name(v));
    }
  }
  // Why a metric is unsupported, where NVML's answer said more than that (no permission: it answers root only).
  if (f.has("unsupported_why")) {
    const Fields why = f.object("unsupported_why");
    for (const auto& [key, v] : why.raw().items()) {
      (void)v;
      const std::string text = why.name_string(key);
      auto it = s.metrics.find(key);
      if (it != s.metrics.end() && it->second.state == State::kUnsupported) it->second.reason = text;
    }
  }
  if (f.has("nvlinks")) {
    const json& links = f.array("nvlinks");
    for (std::size_t i = 0; i < links.size(); ++i) {
      const Fields l(links[i], f.path_of("nvlinks") + "[" + std::to_string(i) + "]");
      NvLinkCounts c;
      // Bounded before the cast: 2^32 would have wrapped to link 0.
      const std::int64_t link = l.integer("link");
      if (link >= static_cast<std::int64_t>(kMaxNvLinks)) l.fail("link", "no GPU has NVLink " + std::to_string(link));
      c.link = static_cast<int>(link);
      for (const auto& [key, v] : l.raw().items()) {
        if (key == "link") continue;
        const MetricInfo* info = find_metric_info("nvlink." + key);
        if (!info || info->kind != MetricKind::kCounter) l.fail(key, "not an NVLink error counter");
        const HealthMetric checked = plausible_link_errors("nvlink." + key, l.number(key));
        if (!checked.ok()) l.fail(key, checked.reason + " (read live, such a value is recorded as \"could not read\")");
        c.errors[key] = checked.value;
      }
      s.nvlinks.push_back(std::move(c));
    }
  }
  return s;
}

json metric_to_json(const std::string& name, const HealthMetric& m) {
  switch (m.state) {
    case State::kUnsupported: return kUnsupportedText;
    case State::kUnreadable: return std::string(kUnreadableText) + (m.reason.empty() ? "" : ": " + m.reason);
    case State::kValue: break;
  }
  const MetricInfo* info = find_metric_info(name);
  if (info && info->kind == MetricKind::kFlag) return m.value != 0;
  if (m.value == std::floor(m.value) && std::fabs(m.value) < 9e15) return static_cast<long long>(m.value);
  return m.value;
}

json snapshot_to_json(const HealthSnapshot& s) {
  json metrics = json::object();
  for (const auto& [k, m] : s.metrics) metrics[k] = metric_to_json(k, m);
  json doc = {{"time", s.time}, {"metrics", metrics}};
  // The cause beside the bare "unsupported" (which older readers know): the table's "no permission, it answers root
  // only" was dropped from the JSON and the profile (review 91).
  json why = json::object();
  for (const auto& [k, m] : s.metrics)
    if (m.state == State::kUnsupported && !m.reason.empty()) why[k] = m.reason;
  if (!why.empty()) doc["unsupported_why"] = why;
  if (!s.nvlinks.empty()) {
    json links = json::array();
    for (const NvLinkCounts& c : s.nvlinks) {
      json l = {{"link", c.link}};
      for (const auto& [k, v] : c.errors) l[k] = v;
      links.push_back(l);
    }
    doc["nvlinks"] = links;
  }
  return doc;
}

// The entries of the kernel log's array `key` (at most kMaxKernelXids), each read by `read` at its own path.
template <typename Read>
void read_kernel_entries(const Fields& log, const std::string& key, Read read) {
  const json& entries = log.array(key);
  if (entries.size() > kMaxKernelXids)
    log.fail(key, std::to_string(entries.size()) + " entries: at most " + std::to_string(kMaxKernelXids) + " are kept");
  for (std::size_t i = 0; i < entries.size(); ++i) read(Fields(entries[i], log.path_of(key) + "[" + std::to_string(i) + "]"));
}
}  // namespace

HealthSection health_from_json(const json& document, const std::string& path) {
  const Fields f(document, path);
  HealthSection s;
  s.schema = f.string("schema");
  if (s.schema != kHealthSchema)
    f.fail("schema", "'" + s.schema + "' is not a schema this version reads (expected " + kHealthSchema + ")");
  const Fields d = f.object("device");
  // Bounded before the cast, as the profile's device.index: 2^32 would have wrapped to GPU 0.
  const std::int64_t index = d.integer("index");
  if (index > 4095) d.fail("index", std::to_string(index) + " is more than a node's GPU count (4096)");
  s.device_index = static_cast<int>(index);
  s.device_name = d.string("name");
  s.uuid = d.string("uuid");
  s.pci_bus_id = d.optional_string("pci_bus_id").value_or("");
  s.driver = f.optional_string("driver").value_or("");
  s.nvml_library = printable_text(f.optional_string("nvml_library").value_or(""));  // shown as it is read
  s.before = snapshot_from_json(f.object("before"));
  if (auto a = f.optional_object("after")) {
    s.after = snapshot_from_json(*a);
    // Rates (PCIe replays per minute, NVLink CRC errors per second) divide by the time between the two.
    if (parse_utc_time(s.after->time, "") < parse_utc_time(s.before.time, ""))
      f.fail("after", "its time " + s.after->time + " is before the before snapshot's " + s.before.time);
  }
  if (!f.has("xid")) f.fail("xid", "required but missing (an object, \"unsupported\" or \"could not read: ...\")");
  const json& x = document.at("xid");
  if (x.is_string()) {
    const std::string text = x.get<std::string>();
    if (text == kUnsupportedText) {
      s.xid.state = State::kUnsupported;
    } else if (text.rfind(kUnreadableText, 0) == 0) {
      s.xid.state = State::kUnreadable;
      s.xid.reason = text;
    } else {
      f.fail("xid", "expected an object, \"unsupported\" or \"could not read: ...\"");
    }
  } else {
    const Fields xf = f.object("xid");
    s.xid.state = State::kValue;
    s.xid.window_s = xf.number("window_s");
    const json& events = xf.array("events");
    for (std::size_t i = 0; i < events.size(); ++i) {
      const Fields e(events[i], xf.path_of("events") + "[" + std::to_string(i) + "]");
      s.xid.events.push_back({e.integer("xid"), e.number("after_s"), e.optional_name_string("note").value_or("")});
    }
  }
  if (f.has("kernel_log")) {  // absent: not recorded (written before the kernel log was read)
    const json& k = document.at("kernel_log");
    if (k.is_string()) {
      const std::string text = k.get<std::string>();
      if (text.rfind(kUnreadableText, 0) != 0)
        f.fail("kernel_log", "expected an object or \"could not read: ...\"");
      s.kernel_log.state = State::kUnreadable;
      s.kernel_log.reason = text;
    } else {
      const Fields kf = f.object("kernel_log");
      s.kernel_log.state = State::kValue;
      s.kernel_log.source = kf.name_string("source");
      const json& xids = kf.array("xids");
      read_kernel_entries(kf, "xids", [&](const Fields& e) {
        KernelXid entry;
        entry.xid = e.integer("xid");
        if (entry.xid > 999999) e.fail("xid", std::to_string(entry.xid) + " is no XID");
        entry.uptime_s = e.optional_number("uptime_s").value_or(-1);
        entry.text = e.name_string("text");
        s.kernel_log.xids.push_back(std::move(entry));
      });
      s.kernel_log.since_s = kf.optional_number("whole_since_s");
      if (s.kernel_log.since_s && !(*s.kernel_log.since_s >= 0 && *s.kernel_log.since_s < 1e12))
        kf.fail("whole_since_s", "is not a time after boot");
      s.kernel_log.total = static_cast<std::size_t>(kf.integer("total"));
      if (s.kernel_log.total < xids.size())
        kf.fail("total", std::to_string(s.kernel_log.total) + " is fewer than the " + std::to_string(xids.size()) +
                             " XIDs listed");
      if (kf.has("sxids")) {  // absent: written before NVSwitch errors were read
        const json& sxids = kf.array("sxids");
        read_kernel_entries(kf, "sxids", [&](const Fields& e) {
          KernelSxid entry;
          entry.sxid = e.integer("sxid");
          if (entry.sxid > 999999) e.fail("sxid", std::to_string(entry.sxid) + " is no SXid");
          entry.fatal = e.boolean("fatal");
          entry.uptime_s = e.optional_number("uptime_s").value_or(-1);
          entry.text = e.name_string("text");
          s.kernel_log.sxids.push_back(std::move(entry));
        });
        s.kernel_log.sxids_recorded = true;
        s.kernel_log.sxid_total = static_cast<std::size_t>(kf.integer("sxid_total"));
        if (s.kernel_log.sxid_total < sxids.size())
          kf.fail("sxid_total", std::to_string(s.kernel_log.sxid_total) + " is fewer than the " +
                                    std::to_string(sxids.size()) + " SXids listed");
      }
    }
  }
  return s;
}

std::string kernel_log_span(const KernelXidLog& log) {
  if (!log.since_s) return "since boot";
  return "since " + format_fixed(*log.since_s, 1) +
         " s after boot (the log holds no earlier record: the kernel's ring buffer had overwritten them, or they were "
         "not saved)";
}

json health_to_json(const HealthSection& s) {
  json doc = {{"schema", s.schema},
              {"device", {{"index", s.device_index}, {"name", s.device_name}, {"uuid", s.uuid},
                          {"pci_bus_id", s.pci_bus_id}}},
              {"driver", s.driver},
              {"before", snapshot_to_json(s.before)}};
  if (!s.nvml_library.empty()) doc["nvml_library"] = s.nvml_library;
  if (s.after) doc["after"] = snapshot_to_json(*s.after);
  switch (s.xid.state) {
    case State::kUnsupported: doc["xid"] = kUnsupportedText; break;
    case State::kUnreadable:
      doc["xid"] = s.xid.reason.rfind(kUnreadableText, 0) == 0 ? s.xid.reason
                                                                : std::string(kUnreadableText) + ": " + s.xid.reason;
      break;
    case State::kValue: {
      json events = json::array();
      for (const XidEvent& e : s.xid.events) {
        events.push_back({{"xid", e.xid}, {"after_s", e.after_s}});
        if (!e.note.empty()) events.back()["note"] = e.note;
      }
      doc["xid"] = {{"window_s", s.xid.window_s}, {"events", events}};
      break;
    }
  }
  switch (s.kernel_log.state) {
    case State::kUnsupported: break;  // not recorded
    case State::kUnreadable:
      doc["kernel_log"] = s.kernel_log.reason.rfind(kUnreadableText, 0) == 0
                              ? s.kernel_log.reason
                              : std::string(kUnreadableText) + ": " + s.kernel_log.reason;
      break;
    case State::kValue: {
      json xids = json::array();
      for (const KernelXid& x : s.kernel_log.xids)
        xids.push_back({{"xid", x.xid},
                        {"uptime_s", x.uptime_s >= 0 ? json(x.uptime_s) : json(nullptr)},
                        {"text", x.text}});
      doc["kernel_log"] = {{"source", s.kernel_log.source}, {"xids", xids}, {"total", s.kernel_log.total}};
      if (s.kernel_log.since_s) doc["kernel_log"]["whole_since_s"] = *s.kernel_log.since_s;
      if (s.kernel_log.sxids_recorded) {
        json sxids = json::array();
        for (const KernelSxid& x : s.kernel_log.sxids)
          sxids.push_back({{"sxid", x.sxid},
                           {"fatal", x.fatal},
                           {"uptime_s", x.uptime_s >= 0 ? json(x.uptime_s) : json(nullptr)},
                           {"text", x.text}});
        doc["kernel_log"]["sxids"] = sxids;
        doc["kernel_log"]["sxid_total"] = s.kernel_log.sxid_total;
      }
      break;
    }
  }
  json deltas = json::object();
  for (const auto& [k, v] : health_deltas(s)) deltas[k] = v;
  doc["deltas"] = deltas;
  return doc;
}

std::string metric_display(const HealthMetric& m, const std::string& name) {
  if (m.state == State::kUnsupported) return std::string(kUnsupportedText) + (m.reason.empty() ? "" : " (" + m.reason + ")");
  if (m.state == State::kUnreadable) return std::string(kUnreadableText) + (m.reason.empty() ? "" : " (" + m.reason + ")");
  const MetricInfo* info = find_metric_info(name);
  if (info && info->kind == MetricKind::kFlag) return m.value != 0 ? "yes" : "no";
  if (name == "clocks.event_reasons") {
    const auto bits = static_cast<std::uint64_t>(m.value);
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(bits));
    return std::string(buf) + " (" + clock_events::names(bits) + ")";
  }
  if (info && std::string(info->unit) == "s") return format_fixed(m.value, 3) + " s";  // cumulative, often 0
  if (info && *info->unit) return format_quantity(m.value, info->unit);
  if (name.rfind("temperature.", 0) == 0) return format_fixed(m.value, 0) + " C";
  return format_fixed(m.value, 0);
}

Table health_table(const HealthSection& s) {
  Table t;
  t.columns = {"metric", "before"};
  if (s.after) {
    t.columns.push_back("after");
    t.columns.push_back("delta");
  }
  t.right_aligned = {false, true, true, true};
  const auto deltas = health_deltas(s);
  for (const MetricInfo& info : health_metric_catalog()) {
    const HealthMetric* b = s.before.find(info.name);
    const HealthMetric* a = s.after ? s.after->find(info.name) : nullptr;
    if (!b && !a) continue;
    std::vector<std::string> row{info.name, b ? metric_display(*b, info.name) : "-"};
    if (s.after) {
      row.push_back(a ? metric_display(*a, info.name) : "-");
      auto it = deltas.find(info.name);
      row.push_back(it == deltas.end() ? "" : metric_display(HealthMetric::of(it->second), info.name));
    }
    t.add_row(std::move(row));
  }
  std::string xid;
  switch (s.xid.state) {
    case State::kUnsupported: xid = kUnsupportedText; break;
    case State::kUnreadable: xid = s.xid.reason.empty() ? kUnreadableText : s.xid.reason; break;
    case State::kValue:
      if (s.xid.events.empty()) {
        xid = "none in " + format_quantity(s.xid.window_s, "s");
      } else {
        for (const XidEvent& e : s.xid.events)
          xid += (xid.empty() ? "" : ", ") + std::string("XID ") + std::to_string(e.xid);
      }
      break;
  }
  std::vector<std::string> row{"xid.events", xid};
  if (s.after) {
    row.push_back("");
    row.push_back("");
  }
  t.add_row(std::move(row));
  if (s.kernel_log.state != State::kUnsupported) {
    std::string log;
    if (s.kernel_log.state == State::kUnreadable) {
      log = s.kernel_log.reason;
    } else if (s.kernel_log.xids.empty()) {
      log = "none " + kernel_log_span(s.kernel_log);
    } else {
      std::vector<std::pair<long long, std::size_t>> counts;  // each XID once, with how often, in log order
      for (const KernelXid& x : s.kernel_log.xids) {
        auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == x.xid; });
        if (it == counts.end()) counts.push_back({x.xid, 1});
        else ++it->second;
      }
      for (const auto& [code, n] : counts)
        log += (log.empty() ? "" : ", ") + std::string("XID ") + std::to_string(code) +
               (n > 1 ? " x" + std::to_string(n) : "");
      if (s.kernel_log.total > s.kernel_log.xids.size())
        log += " and " + std::to_string(s.kernel_log.total - s.kernel_log.xids.size()) + " more";
      log += " " + kernel_log_span(s.kernel_log);
    }
    std::vector<std::string> r{"xid.kernel_log", log};
    if (s.after) {
      r.push_back("");
      r.push_back("");
    }
    t.add_row(std::move(r));
    if (s.kernel_log.state == State::kValue && s.kernel_log.sxids_recorded) {
      std::vector<std::string> sx{"nvswitch.sxids", sxid_summary(s.kernel_log)};
      if (s.after) {
        sx.push_back("");
        sx.push_back("");
      }
      t.add_row(std::move(sx));
    }
  }
  if (!s.nvml_library.empty()) {  // not the driver's library: every reading above is that library's
    std::vector<std::string> library{"nvml.library", s.nvml_library + " (CEILINGS_NVML_LIBRARY, not the driver's)"};
    if (s.after) library.insert(library.end(), {"", ""});
    t.add_row(std::move(library));
  }
  return t;
}

}  // namespace ceilings
