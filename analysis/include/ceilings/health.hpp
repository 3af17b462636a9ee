// The health model (schema ceilings.health/1): NVML health counters read before and after a
// measurement pass (ECC, row remaps, PCIe link, NVLink errors, throttle counters, XID events) and their deltas.
// This is the profile's `health` section and the output of `ceilings health --json`; pure C++.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ceilings/json_fields.hpp"
#include "ceilings/kernel_log.hpp"
#include "ceilings/table.hpp"

namespace ceilings {

// A profile's health section as a string: "unavailable: <why>" (NVML or the GPU's counters could not be read: no
// verdict), or this prefix and why where NVML reported a fault of the node as the GPU was opened (lost, needing a
// reset, its power cables, an interrupt problem): qualify fails it, as `ceilings health` exits 1 for it.
inline constexpr const char* kHealthFaultPrefix = "fault: ";

inline constexpr const char* kHealthSchema = "ceilings.health/1";
// NVML_NVLINK_MAX_LINKS: the most NVLinks NVML numbers on one GPU (36 in nvml.h since CUDA 13; 18 are used on Hopper
// and Blackwell). Every one is asked; those NVML calls an invalid argument or unsupported are not there (review 25
// #12: 18 here left links 18-35 unread and a section holding them refused).
inline constexpr unsigned kMaxNvLinks = 36;
// A bound no link's error counter reaches (1e15 replays is 30 years at a million a second).
inline constexpr double kMaxNvLinkErrorsPerLink = 1e15;

// One reading. NVML saying "not supported" is kUnsupported; an NVML error or a sentinel/impossible
// value is kUnreadable ("could not read"): neither is ever treated as data.
struct HealthMetric {
  enum class State { kValue, kUnsupported, kUnreadable };
  State state = State::kUnreadable;
  double value = 0;    // SI units (Hz, W, s), counts, or 0/1 for flags
  std::string reason;  // why it could not be read

  bool ok() const { return state == State::kValue; }
  static HealthMetric of(double v) { return {State::kValue, v, ""}; }
  static HealthMetric unsupported() { return {State::kUnsupported, 0, ""}; }
  static HealthMetric unreadable(std::string why) { return {State::kUnreadable, 0, std::move(why)}; }
};

// One NVLink that was up, with the error counts behind the nvlink.* sums (the counters it answered;
// names without the "nvlink." prefix: replay_errors, recovery_errors, crc_flit_errors, crc_data_errors).
struct NvLinkCounts {
  int link = 0;
  std::map<std::string, double> errors;
};

struct HealthSnapshot {
  std::string time;  // ISO 8601 UTC
  std::map<std::string, HealthMetric> metrics;
  std::vector<NvLinkCounts> nvlinks;  // per link, so that a fault names its link (JSON "nvlinks")

  const HealthMetric* find(const std::string& name) const;
  std::optional<double> value(const std::string& name) const;  // nullopt unless a value
};

// How the health checks count an XID, while monitoring and in the kernel log alike: one table (health.cpp).
enum class XidKind {
  kFault,            // the hardware or the driver's: fails
  kApplication,      // a program's fault or a killed process: named, passes
  kNote,             // recorded for information, what it needs judged by another check: named, passes
  kNvlinkNonfatal,   // Blackwell's NVLink XIDs (144-150) the driver calls "Nonfatal": the link recovered
  kRecoveryCleared,  // XID 154 setting the recovery action back to None: none is needed any more
};
struct XidClass {
  XidKind kind = XidKind::kFault;
  const char* why = "";  // what it is, for kApplication and kNote ("" otherwise)
};
// `text`: the driver's message where known (the kernel log); NVML's events carry the number only.
XidClass classify_xid(long long xid, const std::string& text = "");
// At most `limit` of `xids`, the faults kept first (a flood of application or non-fatal XIDs never hides one), in
// log order.
std::vector<KernelXid> keep_kernel_xids(std::vector<KernelXid> xids, std::size_t limit);
// The same of XIDs added one at a time (for_each_kernel_xid), holding at most twice `limit` (the first faults and the
// first others): review 93's log of 1.8 million XIDs had taken 634 MB held whole.
class KernelXidKeeper {
 public:
  explicit KernelXidKeeper(std::size_t limit) : limit_(limit) {}
  void add(KernelXid x);
  std::size_t total() const { return total_; }
  std::vector<KernelXid> kept() &&;

 private:
  std::size_t limit_, total_ = 0;
  std::vector<std::pair<std::size_t, KernelXid>> faults_, others_;  // with their place in the log
};

struct XidEvent {
  long long xid = 0;
  double after_s = 0;  // seconds after monitoring started
  std::string note;    // how it was known where not from an XID event (NVML: the GPU is lost); JSON "note"
};

// XID critical-error events received while the section was being recorded.
struct XidLog {
  HealthMetric::State state = HealthMetric::State::kUnsupported;  // kValue: monitored
  std::string reason;
  double window_s = 0;  // how long events were listened for
  std::vector<XidEvent> events;
};

// The GPU's XIDs in the kernel log since boot, read after the run (JSON "kernel_log": {"source", "xids"} or
// "could not read: ..."). kUnsupported: not recorded (a section written before this was read, or by hand).
inline constexpr std::size_t kMaxKernelXids = 100;  // the first ones kept: enough to fail the node and say why
struct KernelXidLog {
  HealthMetric::State state = HealthMetric::State::kUnsupported;
  std::string source, reason;
  std::vector<KernelXid> xids;
  std::size_t total = 0;  // all found, those past kMaxKernelXids included
  // Seconds after boot from which the log is whole, where the kernel's ring buffer had overwritten what came
  // before or a saved log starts late (kernel_log_whole_since); nullopt: whole since boot, as far as the log tells.
  std::optional<double> since_s;
  // The node's NVSwitch errors in the same log (JSON "sxids", "sxid_total"): the fatal ones kept first. Not
  // recorded (false) in a section written before they were read.
  bool sxids_recorded = false;
  std::vector<KernelSxid> sxids;
  std::size_t sxid_total = 0;
};
// What the log covers, for "none ..." or "XID 48 ...": "since boot", or "since 86400.0 s after boot (the log holds
// no earlier record: ...)".
std::string kernel_log_span(const KernelXidLog& log);
// The SXids kept, each once with how often and its severity, and the span of the log: "SXid 24007 (fatal),
// SXid 22013 x3 (non-fatal) since boot"; "none since boot".
std::string sxid_summary(const KernelXidLog& log);
// At most `limit` of `sxids`, the fatal ones first (each kind in log order).
std::vector<KernelSxid> keep_kernel_sxids(std::vector<KernelSxid> sxids, std::size_t limit);

struct HealthSection {
  std::string schema = kHealthSchema;
  int device_index = 0;
  std::string device_name, uuid, pci_bus_id, driver;
  // The NVML library read where CEILINGS_NVML_LIBRARY named one instead of the driver's ("" for the driver's): a
  // section read through another (the self-test's fake) says so wherever it goes (JSON "nvml_library").
  std::string nvml_library;
  HealthSnapshot before;
  std::optional<HealthSnapshot> after;
  XidLog xid;
  KernelXidLog kernel_log;
  // The snapshots, before first.
  std::vector<const HealthSnapshot*> snapshots() const {
    std::vector<const HealthSnapshot*> v{&before};
    if (after) v.push_back(&*after);
    return v;
  }
};

// The metrics a reader records, in display order, with their kind.
enum class MetricKind { kFlag, kCounter, kGauge };
struct MetricInfo {
  const char* name;
  MetricKind kind;
  const char* unit;  // display unit ("" for counts and flags)
};
const std::vector<MetricInfo>& health_metric_catalog();
const MetricInfo* find_metric_info(const std::string& name);

// Turns a raw successful NVML reading into a metric, rejecting sentinels and impossible values
// (all-ones, a 0 Hz clock, a temperature of 1e19, PCIe Gen 9, ...) as "could not read".
HealthMetric plausible_metric(const std::string& name, double raw);
// The same for one link's NVLink error count (`name` "nvlink.<counter>"): plausible_metric bounds the sum over
// the links, this each link's own count.
HealthMetric plausible_link_errors(const std::string& name, double raw);

// Counter deltas (after - before) where both snapshots have a value and the counter did not go back (a driver
// reload or a GPU reset between them restarts it: the run's count is then not known, never negative).
std::map<std::string, double> health_deltas(const HealthSection& section);
// NVLink error counts that rose between the snapshots, for each link in both snapshots' per-link lists
// (a link that came up or went down in between is left out: its counts since the driver loaded are not
// the run's). Each entry holds only the counters that rose, by how much.
std::vector<NvLinkCounts> nvlink_increases(const HealthSection& section);
std::string nvlink_increases_text(const std::vector<NvLinkCounts>& increases);  // "NVLink 5: recovery_errors +1; ..."


HealthSection health_from_json(const json& document, const std::string& path = "health");
json health_to_json(const HealthSection& section);  // includes "deltas" (ignored when read back)

// One row per metric: before, after, delta (display strings).
Table health_table(const HealthSection& section);
std::string metric_display(const HealthMetric& m, const std::string& name);

}  // namespace ceilings
