// NVML -> health snapshots: every counter the health checks use, with sentinel values rejected.
// Of nvmlDeviceGetFieldValues only the memory temperature is read; the per-reason throttle counters
// and the NVLink counters by field id are not (violation times and the per-link NVLink calls stand in).
#include "health_monitor.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "ceilings/error.hpp"
#include "ceilings/json_fields.hpp"
#include "ceilings/profile.hpp"
#include "ceilings/subprocess.hpp"
#include "harness/nvml.hpp"

namespace ceilings::cli {

namespace {

bool lost_code(int code) { return code == nvml::kGpuIsLost || code == nvml::kResetRequired; }

template <class T>
HealthMetric to_metric(const nvml::Library& lib, const std::string& name, const nvml::Result<T>& r, double scale = 1) {
  if (r.ok()) return plausible_metric(name, static_cast<double>(r.value) * scale);
  if (r.unsupported()) return HealthMetric::unsupported();
  return HealthMetric::unreadable(lib.error_string(r.code));
}

// NVLink state and error counters, summed over the links that are up, and kept per link. A link number
// the GPU does not have (or whose link is fused off) answers "not supported", "invalid argument" or
// "not found" and is passed over; a GPU where no link number answers has no NVLink. A counter a link
// does not keep answers the same way and is left out. The counters count since the driver loaded;
// qualify judges their change over the run.
void read_nvlink(const nvml::Library& lib, const nvml::Device& d, HealthSnapshot& snap, bool& lost) {
  auto& m = snap.metrics;
  static const std::pair<const char*, nvml::NvLinkError> counters[] = {
      {"nvlink.replay_errors", nvml::NvLinkError::kReplay},
      {"nvlink.recovery_errors", nvml::NvLinkError::kRecovery},
      {"nvlink.crc_flit_errors", nvml::NvLinkError::kCrcFlit},
      {"nvlink.crc_data_errors", nvml::NvLinkError::kCrcData}};
  auto set_all = [&](const HealthMetric& v) {
    m["nvlink.links_active"] = v;
    m["nvlink.links_present"] = v;
    m["nvlink.links_to_switch"] = v;
    for (const auto& c : counters) m[c.first] = v;
  };
  auto absent = [](int code) {
    return code == nvml::kNotSupported || code == nvml::kFunctionNotFound || code == nvml::kInvalidArgument ||
           code == nvml::kNotFound;
  };
  std::vector<unsigned> up;
  unsigned present = 0;  // links whose state answered: up, or down (DCGM's "Down": a health failure)
  for (unsigned link = 0; link < kMaxNvLinks; ++link) {
    const auto state = d.nvlink_active(link);
    if (state.ok()) {
      ++present;
      if (state.value) up.push_back(link);
    } else if (!absent(state.code)) {
      lost = lost || lost_code(state.code);
      return set_all(HealthMetric::unreadable("NVLink " + std::to_string(link) + " state: " + lib.error_string(state.code)));
    }
  }
  if (present == 0) return set_all(HealthMetric::unsupported());  // no NVLink on this GPU
  m["nvlink.links_active"] = plausible_metric("nvlink.links_active", static_cast<double>(up.size()));
  m["nvlink.links_present"] = plausible_metric("nvlink.links_present", static_cast<double>(present));
  // What the links that are up reach: on a switched baseboard every link of the GPU goes to an NVSwitch, so a
  // link down there is a fault; a bridged card or a direct mesh may leave link indices unused.
  HealthMetric to_switch = HealthMetric::of(0);
  for (unsigned link : up) {
    const auto far = d.nvlink_remote_type(link);
    if (far.ok()) {
      if (far.value == nvml::NvLinkRemote::kSwitch && to_switch.ok()) to_switch.value += 1;
    } else {
      lost = lost || lost_code(far.code);
      to_switch = absent(far.code) ? HealthMetric::unsupported()
                                   : HealthMetric::unreadable("NVLink " + std::to_string(link) + " far end: " +
                                                              lib.error_string(far.code));
      break;
    }
  }
  m["nvlink.links_to_switch"] = to_switch.ok() ? plausible_metric("nvlink.links_to_switch", to_switch.value) : to_switch;
  for (unsigned link : up) snap.nvlinks.push_back({static_cast<int>(link), {}});
  for (const auto& [name, which] : counters) {
    HealthMetric total = HealthMetric::unsupported();  // no link up, or none counts this error
    for (std::size_t i = 0; i < up.size(); ++i) {
      const auto r = d.nvlink_errors(up[i], which);
      if (absent(r.code)) continue;
      lost = lost || lost_code(r.code);
      const HealthMetric one = r.ok() ? plausible_link_errors(name, static_cast<double>(r.value))
                                      : HealthMetric::unreadable(lib.error_string(r.code));
      if (!one.ok()) {
        total = HealthMetric::unreadable("NVLink " + std::to_string(up[i]) + ": " + one.reason);
        break;
      }
      snap.nvlinks[i].errors[std::string(name).substr(7)] = one.value;  // without "nvlink."
      total = HealthMetric::of((total.ok() ? total.value : 0) + one.value);
    }
    m[name] = total;
  }
}

}  // namespace

HealthSnapshot read_health_snapshot(const nvml::Library& lib, const nvml::Device& d, bool* gpu_lost) {
  HealthSnapshot s;
  s.time = utc_now_iso8601();
  auto& m = s.metrics;
  bool lost = false;
  auto put = [&](const std::string& name, const auto& result, double scale = 1) {
    lost = lost || lost_code(result.code);
    m[name] = to_metric(lib, name, result, scale);
  };
  put("ecc.enabled", d.ecc_enabled());
  put("inforom.valid", d.inforom_valid());
  put("persistence_mode.enabled", d.persistence_mode());
  for (bool aggregate : {false, true})
    for (bool uncorrected : {false, true}) {
      const std::string kind = std::string(aggregate ? "aggregate" : "volatile");
      const std::string what = uncorrected ? "uncorrected" : "corrected";
      put("ecc." + kind + "." + what, d.ecc_total(uncorrected, aggregate));
      put("ecc." + kind + ".dram." + what, d.ecc_errors(uncorrected, aggregate, nvml::MemoryLocation::kDram));
      put("ecc." + kind + ".sram." + what, d.ecc_errors(uncorrected, aggregate, nvml::MemoryLocation::kSram));
    }
  // One field of a call that answers several at once, as a Result of its own (the call's code, the field's value).
  auto field = [](const auto& result, auto get) {
    nvml::Result<double> r;
    r.code = result.code;
    r.value = result.ok() ? get(result.value) : 0;
    return r;
  };
  const auto mig = d.mig_mode();  // "unsupported" on a GPU without MIG
  put("mig.enabled", field(mig, [](const nvml::MigMode& v) { return v.current ? 1.0 : 0.0; }));
  put("mig.pending_enabled", field(mig, [](const nvml::MigMode& v) { return v.pending ? 1.0 : 0.0; }));
  // The SRAM's ECC status answers root only: "no permission" otherwise, kept as not there (as before Ampere, where NVML
  // does not support it), with the reason shown in the table, never as a counter that could not be read.
  const auto sram = d.sram_ecc_status();
  auto put_sram = [&](const std::string& name, double (*get)(const nvml::SramEccStatus&)) {
    if (sram.code == nvml::kNoPermission)
      m[name] = HealthMetric{HealthMetric::State::kUnsupported, 0, "NVML: no permission, it answers root only"};
    else if (sram.code == nvml::kArgumentVersionMismatch)  // a driver whose struct is another version: not there
      m[name] = HealthMetric{HealthMetric::State::kUnsupported, 0, "NVML: this driver takes another struct version"};
    else
      put(name, field(sram, get));
  };
  put_sram("ecc.sram.threshold_exceeded", [](const nvml::SramEccStatus& v) { return double(v.threshold_exceeded); });
  put_sram("ecc.aggregate.sram.uncorrected_l2", [](const nvml::SramEccStatus& v) { return double(v.uncorrected_l2); });
  put_sram("ecc.aggregate.sram.uncorrected_sm", [](const nvml::SramEccStatus& v) { return double(v.uncorrected_sm); });
  put_sram("ecc.aggregate.sram.uncorrected_pcie",
           [](const nvml::SramEccStatus& v) { return double(v.uncorrected_pcie); });
  put_sram("ecc.aggregate.sram.uncorrected_mcu", [](const nvml::SramEccStatus& v) { return double(v.uncorrected_mcu); });
  put_sram("ecc.aggregate.sram.uncorrected_other",
           [](const nvml::SramEccStatus& v) { return double(v.uncorrected_other); });
  // The GPU's registration in the NVLink fabric (NVSwitch systems, Hopper+): a GPU outside one answers NOT_SUPPORTED
  // or the state NOT_SUPPORTED (0), kept as not there; a driver whose struct is another version, too.
  const auto fabric = d.fabric_info();
  if ((fabric.ok() && fabric.value.state == 0) || fabric.code == nvml::kArgumentVersionMismatch) {
    for (const char* name : {"fabric.state", "fabric.status", "fabric.health_mask"}) m[name] = HealthMetric::unsupported();
  } else {
    put("fabric.state", field(fabric, [](const nvml::FabricInfo& v) { return double(v.state); }));
    put("fabric.status", field(fabric, [](const nvml::FabricInfo& v) { return double(v.status); }));
    if (fabric.ok() && !fabric.value.has_health_mask)
      m["fabric.health_mask"] = HealthMetric::unsupported();
    else
      put("fabric.health_mask", field(fabric, [](const nvml::FabricInfo& v) { return double(v.health_mask); }));
  }
  const auto rows = d.remapped_rows();
  put("remap.correctable_rows", field(rows, [](const nvml::RemappedRows& v) { return double(v.correctable); }));
  put("remap.uncorrectable_rows", field(rows, [](const nvml::RemappedRows& v) { return double(v.uncorrectable); }));
  put("remap.pending", field(rows, [](const nvml::RemappedRows& v) { return v.pending ? 1.0 : 0.0; }));
  put("remap.failure", field(rows, [](const nvml::RemappedRows& v) { return v.failure ? 1.0 : 0.0; }));
  // Memory repairs pending, and memory the GPU cannot repair: a driver without the call (before R580, R590) or a GPU
  // without the feature answers "not supported", and so does a driver that takes another version of the struct (the
  // readings are the memory-repair row's; neither is an error that would leave a run incomplete).
  auto put_repair = [&](const std::string& name, const auto& result, double (*get)(decltype(result.value))) {
    if (result.code == nvml::kArgumentVersionMismatch)
      m[name] = HealthMetric{HealthMetric::State::kUnsupported, 0, "NVML: this driver takes another struct version"};
    else
      put(name, field(result, get));
  };
  const auto repair = d.repair_status();
  put_repair("repair.channel_pending", repair, [](nvml::RepairStatus v) { return double(v.channel_pending); });
  put_repair("repair.tpc_pending", repair, [](nvml::RepairStatus v) { return double(v.tpc_pending); });
  put_repair("memory.unrepairable", d.unrepairable_memory(), [](unsigned v) { return double(v); });
  const auto banks = d.remap_histogram();
  put("remap.banks_max", field(banks, [](const nvml::RemapHistogram& h) { return double(h.max); }));
  put("remap.banks_high", field(banks, [](const nvml::RemapHistogram& h) { return double(h.high); }));
  put("remap.banks_partial", field(banks, [](const nvml::RemapHistogram& h) { return double(h.partial); }));
  put("remap.banks_low", field(banks, [](const nvml::RemapHistogram& h) { return double(h.low); }));
  put("remap.banks_none", field(banks, [](const nvml::RemapHistogram& h) { return double(h.none); }));
  put("retired_pages.single_bit", d.retired_pages(false));
  put("retired_pages.double_bit", d.retired_pages(true));
  put("retired_pages.pending", d.retired_pages_pending());
  put("pcie.gen", d.pcie_link_gen());
  put("pcie.width", d.pcie_link_width());
  put("pcie.max_gen", d.pcie_max_link_gen());
  put("pcie.max_width", d.pcie_max_link_width());
  put("pcie.gpu_max_gen", d.pcie_gpu_max_link_gen());
  put("pcie.replays", d.pcie_replay_counter());
  put("clocks.sm_hz", d.clock_mhz(nvml::Clock::kSm), 1e6);
  put("clocks.mem_hz", d.clock_mhz(nvml::Clock::kMemory), 1e6);
  put("clocks.max_sm_hz", d.max_clock_mhz(nvml::Clock::kSm), 1e6);
  put("clocks.max_mem_hz", d.max_clock_mhz(nvml::Clock::kMemory), 1e6);
  put("clocks.event_reasons", d.throttle_reasons());
  put("throttle.power_s", d.violation_time_ns(nvml::PerfPolicy::kPower), 1e-9);
  put("throttle.thermal_s", d.violation_time_ns(nvml::PerfPolicy::kThermal), 1e-9);
  put("throttle.reliability_s", d.violation_time_ns(nvml::PerfPolicy::kReliability), 1e-9);
  put("throttle.board_limit_s", d.violation_time_ns(nvml::PerfPolicy::kBoardLimit), 1e-9);
  put("power.usage_w", d.power_mw(), 1e-3);
  put("power.limit_w", d.power_management_limit_mw(), 1e-3);
  put("power.enforced_limit_w", d.enforced_power_limit_mw(), 1e-3);
  put("power.default_limit_w", d.power_default_limit_mw(), 1e-3);
  put("temperature.gpu_c", d.temperature_c());
  put("temperature.slowdown_c", d.temperature_threshold_c(nvml::TemperatureThreshold::kSlowdown));
  put("temperature.shutdown_c", d.temperature_threshold_c(nvml::TemperatureThreshold::kShutdown));
  put("temperature.memory_c", d.field_value(nvml::kFieldMemoryTemperature));
  // Drivers before R565 do not know field 230 and answer that field INVALID_ARGUMENT: not there, as NOT_SUPPORTED.
  if (const auto action = d.field_value(nvml::kFieldGpuRecoveryAction); action.code == nvml::kInvalidArgument)
    m["recovery.action"] = HealthMetric::unsupported();
  else
    put("recovery.action", action);
  put("temperature.memory_max_c", d.temperature_threshold_c(nvml::TemperatureThreshold::kMemoryMax));
  read_nvlink(lib, d, s, lost);
  if (gpu_lost) *gpu_lost = lost;
  return s;
}

std::unique_ptr<HealthMonitor> HealthMonitor::try_open(unsigned index, std::string* why, const std::string& pci_bus_id,
                                                       bool* fault) {
  if (fault) *fault = false;
  try {
    return open(index, pci_bus_id);
  } catch (const Error& e) {
    if (why) *why = e.what();
    if (fault) *fault = e.exit_code() == kExitFailed;
    return nullptr;
  }
}

std::unique_ptr<HealthMonitor> HealthMonitor::open(unsigned index, const std::string& pci_bus_id) {
  std::string why;
  std::shared_ptr<nvml::Library> lib = nvml::Library::open(&why);
  if (!lib) throw IncompleteError("NVML is not available (" + why + "): no NVIDIA driver or GPU on this machine?");
  const auto count = lib->device_count();
  if (!count.ok()) throw IncompleteError("NVML cannot count GPUs: " + lib->error_string(count.code));
  if (count.value == 0) throw IncompleteError("NVML sees no GPU on this machine");
  if (pci_bus_id.empty() && index >= count.value)
    throw InputError("no GPU with NVML index " + std::to_string(index) + " (this machine has " +
                          std::to_string(count.value) + ")");
  auto dev = pci_bus_id.empty() ? lib->device_by_index(index) : lib->device_by_pci_bus_id(pci_bus_id);
  const std::string which = pci_bus_id.empty() ? std::to_string(index) : pci_bus_id;
  auto fell_off = [&](int code) {
    if (lost_code(code))
      throw Error(kExitFailed, "GPU " + which + " is lost (NVML: " + lib->error_string(code) +
                                   "): it fell off the bus or needs a reset, as XID 79 reports; a fault of the node, "
                                   "not a counter that could not be read");
  };
  fell_off(dev.code);
  // nvmlDeviceGetHandleByIndex_v2's own hardware faults (nvml.h): the board's power cables, an interrupt problem.
  // The node's, like a lost GPU: exit 1, not a counter that could not be read (a retry would not help).
  if (dev.code == 8 || dev.code == 11)
    throw Error(kExitFailed, "GPU " + which + " cannot be opened: " + lib->error_string(dev.code) + " (" +
                                 (dev.code == 8 ? "NVML: its external power cables are not properly attached"
                                                : "NVML: an interrupt problem with the GPU") +
                                 "): a fault of the node, not a counter that could not be read");
  if (!dev.ok())
    throw IncompleteError("NVML cannot open GPU " + (pci_bus_id.empty() ? std::to_string(index) : pci_bus_id) + ": " +
                          lib->error_string(dev.code));
  std::unique_ptr<HealthMonitor> m(new HealthMonitor());
  m->lib_ = lib;
  m->device_ = std::make_unique<nvml::Device>(dev.value);
  HealthSection& s = m->section_;
  s.device_index = static_cast<int>(index);
  const auto name = m->device_->name();
  const auto uuid = m->device_->uuid();
  fell_off(name.code);
  fell_off(uuid.code);
  if (!name.ok() || !uuid.ok())
    throw IncompleteError("NVML cannot name GPU " + std::to_string(index) + ": " +
                          lib->error_string(name.ok() ? uuid.code : name.code));
  // NVML's strings as printable text: they are printed and stored, and a control character in one (a terminal
  // escape, a newline in the driver's version) reached the terminal as it was (review 48).
  s.device_name = ceilings::printable_text(name.value);
  s.uuid = ceilings::printable_text(uuid.value);
  if (const auto bus = m->device_->pci_bus_id(); bus.ok()) s.pci_bus_id = ceilings::printable_text(bus.value);
  s.driver = ceilings::printable_text(lib->driver_version().get().value_or(""));
  // Another library than the driver's (the self-test's fake; review 103: a fake health section was recorded as the
  // GPU's without a word): recorded in the section, and said.
  if (const char* other = std::getenv(nvml::Library::kPathVariable); other && *other) {
    s.nvml_library = ceilings::printable_text(other);
    std::fprintf(stderr, "ceilings: warning: NVML read from %s (CEILINGS_NVML_LIBRARY), not the driver's library\n",
                 s.nvml_library.c_str());
  }
  s.xid.state = HealthMetric::State::kUnsupported;
  return m;
}

HealthMonitor::~HealthMonitor() = default;

void HealthMonitor::record_gpu_lost(const std::string& when) {
  section_.xid.state = HealthMetric::State::kValue;  // judged: the fault is known whether or not events are
  for (const XidEvent& e : section_.xid.events)
    if (e.xid == 79) return;
  const double at = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  section_.xid.events.push_back(
      {79, at, "the GPU fell off the bus (NVML: GPU is lost or reset required) " + when + ": recorded as XID 79"});
}

void HealthMonitor::before() {
  started_ = std::chrono::steady_clock::now();
  // XID events are registered for first, then the counters read: the window (xid.window_s, from started_) is then
  // the time events were watched, an XID raised while the snapshot is read queued for the first drain (review 103:
  // a 4 s snapshot read "none in 5 s" after 1 s of watching).
  const auto w = nvml::XidWatch::open(*device_);
  bool lost = false;
  section_.before = read_health_snapshot(*lib_, *device_, &lost);
  if (lost || lost_code(w.code)) {
    xid_.reset();
    record_gpu_lost("when the counters were read before the run");
    return;
  }
  if (w.ok()) {
    xid_ = w.value;
    section_.xid.state = HealthMetric::State::kValue;
  } else if (w.unsupported()) {
    section_.xid.state = HealthMetric::State::kUnsupported;
  } else {
    section_.xid.state = HealthMetric::State::kUnreadable;
    section_.xid.reason = "could not read: " + lib_->error_string(w.code);
  }
}

void HealthMonitor::drain(unsigned timeout_ms, std::chrono::steady_clock::time_point until) {
  if (!xid_) return;
  for (;;) {
    if (section_.xid.events.size() > 1000) return;  // a storm: enough to fail the node, whichever call drains
    const auto now = std::chrono::steady_clock::now();
    unsigned wait = 1;  // XidWatch::next waits at least 1 ms (never NVML's ambiguous 0)
    if (timeout_ms && now < until)  // rounded up: the last fraction of a millisecond is waited for too
      wait = static_cast<unsigned>(std::chrono::ceil<std::chrono::milliseconds>(until - now).count());
    const auto r = xid_->next(wait);
    if (r.code == nvml::kTimeout) {
      if (!timeout_ms || std::chrono::steady_clock::now() >= until) return;
      continue;
    }
    if (lost_code(r.code)) {
      // The GPU fell off the bus: the gravest XID there is, recorded as one (XID 79), with the others kept.
      record_gpu_lost("while XID events were watched");
      xid_.reset();
      return;
    }
    if (!r.ok()) {
      section_.xid.state = HealthMetric::State::kUnreadable;
      section_.xid.reason = "could not read: waiting for XID events failed: " + lib_->error_string(r.code);
      xid_.reset();
      return;
    }
    const double at = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    section_.xid.events.push_back({static_cast<long long>(r.value), at, ""});
    if (section_.xid.events.size() > 1000) return;  // a storm: enough to fail the node
  }
}

void HealthMonitor::watch(double seconds) {
  if (seconds <= 0) return;
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                            std::chrono::duration<double>(seconds));
  // In steps of at most 200 ms, so that an interrupt (the handlers of install_interrupt_handlers, where the caller
  // installed them) ends the watch soon, and the run reads its after snapshot and says what it saw (review 103:
  // Ctrl-C during `health --watch 600` lost it all, without a word).
  // Past 1000 events (a storm) drain stops taking them; so does this loop (review 104: each step drained again).
  for (auto now = std::chrono::steady_clock::now();
       now < until && !interrupted() && section_.xid.events.size() <= 1000; now = std::chrono::steady_clock::now()) {
    const auto step = std::min(until, now + std::chrono::milliseconds(200));
    if (xid_) drain(1, step);
    else std::this_thread::sleep_until(step);
  }
}

void HealthMonitor::after() {
  drain(0, std::chrono::steady_clock::now());
  section_.xid.window_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  bool lost = false;
  section_.after = read_health_snapshot(*lib_, *device_, &lost);
  // The wall clock stepped back during the run (NTP, chrony): the after snapshot is timed by the before one plus the
  // run's steady time, so the section stays one its readers accept (review 51: they refuse an after before the before).
  try {
    const ceilings::UtcTime from = ceilings::parse_utc_time(section_.before.time, "");
    if (ceilings::parse_utc_time(section_.after->time, "") < from)
      section_.after->time = ceilings::utc_iso8601(from.seconds + static_cast<std::int64_t>(section_.xid.window_s));
  } catch (const ceilings::Error&) {  // a time utc_now_iso8601 wrote always parses; nothing to mend otherwise
  }
  if (lost) record_gpu_lost("when the counters were read after the run");
  read_kernel_xids();
}

void HealthMonitor::read_kernel_xids() {
  // The GPU's XIDs since boot, those before monitoring began included: the driver logs every XID it raises.
  KernelXidLog& k = section_.kernel_log;
  k.source = kernel_log_path();
  if (section_.pci_bus_id.empty()) {
    k.state = HealthMetric::State::kUnreadable;
    k.reason = "could not read: NVML did not give the GPU's PCI address, which its XIDs in the kernel log name";
    return;
  }
  try {
    const std::string text = read_kernel_log(k.source);
    // Kept as they are read, in bounded memory (review 93: a log of 1.8 million XIDs took 634 MB held whole).
    KernelXidKeeper keeper(kMaxKernelXids);
    for_each_kernel_xid(text, section_.pci_bus_id, [&](KernelXid&& x) { keeper.add(std::move(x)); });
    k.since_s = kernel_log_whole_since(text);
    k.total = keeper.total();
    k.xids = std::move(keeper).kept();
    // The node's NVSwitches (every GPU's fabric): the first fatal ones and the first others, as keep_kernel_sxids
    // keeps them.
    std::vector<KernelSxid> fatal, other;
    k.sxid_total = 0;
    for_each_kernel_sxid(text, [&](KernelSxid&& x) {
      ++k.sxid_total;
      auto& to = x.fatal ? fatal : other;
      if (to.size() < kMaxKernelXids) to.push_back(std::move(x));
    });
    fatal.insert(fatal.end(), std::make_move_iterator(other.begin()), std::make_move_iterator(other.end()));
    k.sxids = keep_kernel_sxids(std::move(fatal), kMaxKernelXids);
    k.sxids_recorded = true;
    k.state = HealthMetric::State::kValue;
  } catch (const Error& e) {
    k.state = HealthMetric::State::kUnreadable;
    k.reason = std::string("could not read: ") + e.what();
  }
}

}  // namespace ceilings::cli
