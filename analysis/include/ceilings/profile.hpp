// The device profile (schema ceilings.profile/1): the contract between ceilings-bench and the
// analysis. Reading validates every field it uses; unknown fields are ignored (kept in `raw`).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ceilings/json_fields.hpp"

namespace ceilings {

inline constexpr const char* kProfileSchema = "ceilings.profile/1";

struct Telemetry {
  bool available = false;  // false: NVML was not there; the numbers below are not data
  double sm_clock_hz = 0, mem_clock_hz = 0, power_w = 0, temp_c = 0;
};

struct Ceiling {
  std::string name;  // stable identifier family.variant, e.g. "hbm.copy"
  double value = 0;  // SI base unit
  std::string unit;  // B/s, FLOP/s, OP/s, s, Hz, W
  double cv = 0;     // coefficient of variation of the samples (stddev / mean)
  std::int64_t samples = 0;
  std::optional<double> datasheet;  // the datasheet value for this ceiling, same unit
  bool verified = false;
  bool throttled = false;
  Telemetry telemetry;
  json detail = json::object();

  // A number in the detail; nullopt when it is absent or not a number (the detail is free-form, so its
  // readers never throw on it).
  std::optional<double> detail_number(const std::string& key) const;
  // The clock-event reasons recorded over its measurement (detail.throttle_reasons, clock_events bits); 0 where
  // none were recorded or the record is no mask.
  std::uint64_t clock_event_reasons() const;
  // Whether it ran under a power cap or a slowdown: true where the flag or a slowdown reason says so, false
  // where telemetry read the GPU (its clocks, or the reasons) and saw none, nullopt where nothing read it (no
  // NVML): not known, never "no".
  std::optional<bool> throttled_known() const;
  // The samples' relative spread: robust_cv where the detail has it (one stalled sample, which does not move the
  // median, cannot inflate it), else the cv.
  double spread() const;
  // The standard error of the median, relative to it: 1.2533 * spread() /
  // sqrt(samples), the spread where the count is unknown; a fleet baseline's, 1.2533 * 1.4826 * fleet_mad / value /
  // sqrt(GPUs). A difference within a few of them is what the measurement itself could not tell apart.
  double median_standard_error() const;
};

struct Skipped {
  std::string name;    // ceiling or benchmark name
  std::string reason;  // why it has no number
};

// How `ceilings measure` words the error of the case a timeout or Ctrl-C cut off ("stopped while this
// case ran: ceilings-bench ran past the 600 s timeout ..."): `qualify` reads such an error as a
// measurement that could not finish (incomplete), a crash after the same prefix as a failure.
inline constexpr const char* kStoppedWhileRunningReason = "stopped while this case ran: ";
inline constexpr const char* kTimedOutReason = "ceilings-bench ran past the ";
inline constexpr const char* kInterruptedReason = "interrupted: ";
// Whether an error's reason says the run was cut short (timeout or interrupt) while the case ran.
bool cut_short_reason(const std::string& reason);

// NVML's readings: the link now (gen, width), the most the GPU and its slot allow together (max_gen,
// max_width: a Gen5 GPU in a Gen4 slot reads 4), and the GPU's own most (gpu_max_gen; NVML has no such
// reading for the width).
struct PcieInfo {
  std::optional<int> gen, width, max_gen, max_width, gpu_max_gen;
};

// Whether a confidential-computing mode (device.confidential_computing_mode) is the NVLink-encryption one, which
// encrypts the peer copies too.
inline bool nvlink_encryption_mode(const std::string& mode) { return mode.rfind("NVLink encryption", 0) == 0; }
// Confidential computing as the reports say it: "on", "on (<mode>)" or "off".
inline std::string confidential_computing_text(bool on, const std::string& mode) {
  return !on ? "off" : mode.empty() ? "on" : "on (" + mode + ")";
}

struct DeviceInfo {
  int index = 0;
  std::string name, uuid, pci_bus_id, compute_capability;
  int sm_count = 0;
  std::uint64_t memory_bytes = 0, l2_bytes = 0;
  std::string driver, cuda_runtime, cublas;
  std::optional<bool> ecc;
  std::optional<double> max_sm_clock_hz, max_mem_clock_hz, power_limit_w;
  PcieInfo pcie;
  // A MIG instance (a slice of the board: its own SMs and memory) rather than the whole GPU; nullopt where the
  // bench could not tell (no NVML). There uuid is the instance's ("MIG-...") and board_uuid the board's, which
  // NVML and the health section name; board_uuid is empty otherwise (the board is uuid).
  std::optional<bool> mig;
  std::string board_uuid;
  // Confidential computing on (NVML's system state): host<->device copies went through the driver's encrypted bounce
  // buffers, and no SM copies of host memory were possible; nullopt where the bench could not tell.
  std::optional<bool> confidential_computing;
  // Its mode, where NVML named one: "single GPU", "protected PCIe" (multi-GPU Hopper), "NVLink encryption" (multi-GPU
  // Blackwell: peer copies encrypted too), ", developer tools" after it where that is on; empty otherwise.
  std::string confidential_computing_mode;
  bool nvlink_encrypted() const { return nvlink_encryption_mode(confidential_computing_mode); }
  const std::string& board() const { return board_uuid.empty() ? uuid : board_uuid; }
  // A MIG instance: as the bench recorded it, or, where it could not tell (no NVML), by the name CUDA gives an
  // instance ("NVIDIA A100-SXM4-40GB MIG 3g.20gb").
  bool is_mig() const;
};

struct Profile {
  std::string schema = kProfileSchema;
  std::string created;  // ISO 8601 UTC
  std::string tool_version, tool_git;
  // The code that measured it (ceilings::measurement_code: a hash of the bench, kernel and measurement sources);
  // "" in a profile of a build that did not record it.
  std::string tool_measurement_code;
  std::string hostname, cpu;
  std::optional<int> numa_node;
  std::optional<int> gpus_visible;  // GPUs the measuring process saw (the node's, unless a launcher hid some)
  // measure.gpus_measured_together: the GPUs the `ceilings measure` run that wrote it measured at the same time
  // (--all-gpus --concurrent: the node's; else 1; what other processes ran is not known to it). Power, heat and
  // the host's links are shared among GPUs measured together. Absent where not recorded.
  std::optional<int> gpus_measured_together;
  // measure.quick: measured with --quick (fewer sizes, shapes and samples: another measurement than a full pass);
  // absent where not recorded (a profile of an earlier build, unless its measure.command holds the bench's
  // --ceilings_quick: bench_command_was_quick).
  std::optional<bool> quick;
  DeviceInfo device;
  std::vector<Ceiling> ceilings;
  std::vector<Skipped> skipped;  // not measured, with the reason (unsupported, no peer, ...)
  std::vector<Skipped> errors;   // measurement attempted and failed (verification, CUDA error)
  json raw = json::object();     // the document as read (sections newer code adds stay reachable)

  const Ceiling* find(const std::string& name) const;
  // The document's own top-level "note", where it says what it is (a hand-written fixture: "not a measurement").
  std::optional<std::string> note() const;
  // Where `ceilings measure` recorded the run as not complete (measure.complete false: stopped before its end, or
  // a family failed): why, the first line of measure.stopped ("stopped early" where it says none).
  std::optional<std::string> stopped_early() const;
  // Whether the run itself was stopped, leaving cases unmeasured that no failure explains: a family never started
  // (measure.families: "not run: ..."; a timeout, an interrupt, a bench that could not run) or a case a timeout or
  // an interrupt cut (cut_short_reason). Not where a family failed (a crash) and the families after it ran: its
  // errors say what failed. A record without measure.families counts as stopped (it cannot tell).
  bool run_was_stopped() const;
};

// Ceiling names, checked by a plain scan (std::regex recurses once per character and overflows the stack
// on long input). An identifier is [a-z0-9_]+; a ceiling name is two or more identifiers joined by dots
// ("hbm.copy", "gemm.bf16.sustained"); family.variant is exactly two ("hbm.copy").
bool is_identifier(const std::string& s);
bool is_ceiling_name(const std::string& name);
bool is_family_variant(const std::string& name);
// A key of a short series' samples in a ceiling's detail (sample_unit_s_N, sample_sm_clock_hz_N,
// sample_clock_reasons_N): its field ("sample_unit_s") and N, which is nullopt where the key's end is not a plain
// number below 1000 without a leading zero. nullopt for any other key.
struct SampleKey {
  std::string field;
  std::optional<std::size_t> index;
};
std::optional<SampleKey> sample_key(const std::string& key);

// The ceiling `name` of `p` as a measured peak to compute with (MFU, MBU, roofline): nullptr where the profile
// does not have it and says nothing of it (the caller names what it has, exit 2). Where it cannot serve, an
// IncompleteError (exit 3) that says why: recorded as skipped or failed (with the profile's reason), or measured
// but not verified (its number cannot be trusted). `origin` names the profile in the message.
const Ceiling* usable_ceiling(const Profile& p, const std::string& name, const std::string& origin);
// Where none of a family's ceilings can serve: the IncompleteError of the first the profile names (measured but
// unverified, or recorded as failed or skipped); returns where it names none.
void explain_unusable_family(const Profile& p, const std::string& family, const std::string& origin);
// The memory roof a profile's HBM ceilings give where the user names none (mbu and roofline alike): the first
// verified of hbm.read, hbm.copy, hbm.triad and hbm.write, else any other verified hbm.* in B/s; nullptr where
// there is none.
const Ceiling* default_hbm_ceiling(const Profile& p);

// Validates and reads a profile document. `origin` names it in errors (a path or "profile").
Profile profile_from_json(const json& document, const std::string& origin = "profile");
// The largest file read_profile parses: a full H200 profile is 0.3 MB; parsing takes about 20 times a file's size.
inline constexpr std::size_t kMaxProfileBytes = std::size_t{32} << 20;
// Whether a bench command line (measure.command) ran a --quick pass: its --ceilings_quick flag, or the flag's last
// value as CLI11 reads one ("--ceilings_quick=false" is a full pass).
bool bench_command_was_quick(const std::string& command);
Profile read_profile(const std::string& path);
json profile_to_json(const Profile& profile);

// Writes text to path through a temporary file in the same directory and a rename, so a reader
// never sees a half-written file and an existing file is replaced only by a complete one. A symlink's
// target is written (the link stays); errors name `path`.
void write_file_atomic(const std::string& path, const std::string& text);
// Several files that belong together (a profile and its raw JSON): each is written in full to its temporary
// before any replaces its target, so a write that fails (a full disk) leaves every old file as it was.
void write_files_atomic(const std::vector<std::pair<std::string, std::string>>& files);
// The start of the temporary file's name write_file_atomic writes beside `file_name` (a kill mid-write leaves
// it behind: callers that clean up after a killed writer look for it).
std::string atomic_temp_prefix(const std::string& file_name);
// A measured profile and its raw ceilings-bench JSON, written together only where the profile reads back (a profile
// no command could read would replace a good one: review 89); where it would not, the raw JSON alone is written
// (what was measured is kept) and an Error, exit 3, says why, the file at `path` left as it was.
void write_profile_with_raw(const Profile& profile, const std::string& path, const std::string& raw_path,
                            const std::string& raw_text);

// Checks an output path before any work is done: not empty, not a directory or a device, in a directory
// that exists, and not the same file as any of `inputs` (writing it would destroy what the user gave).
// InputError naming `option` otherwise.
void check_output_path(const std::string& path, const std::string& option, const std::vector<std::string>& inputs = {});

// An output path that already holds a file is replaced only when that file is what the command writes there:
// `kind` names it ("a ceilings profile"), `is_kind` tells it from the file's text. Anything else the user keeps
// at that path (a document, another program's output, a measured profile where an SVG was asked for) is an
// InputError naming `option`, and the file is left as it was. A file that cannot be read is refused too; an
// empty one is replaced.
void check_replaceable_output(const std::string& path, const std::string& option, const std::string& kind,
                              bool (*is_kind)(const std::string& text));
// A profile output path (`measure --out`) holding a file: replaced only where it is an earlier run's profile. A
// fleet baseline (a ceilings.profile with a top-level "baseline" section) is an InputError that names it, as is
// anything else (check_replaceable_output's).
void check_replaceable_profile(const std::string& path, const std::string& option);
bool is_profile_text(const std::string& text);           // a ceilings.profile/N document
bool is_measured_profile_text(const std::string& text);  // ... that is no fleet baseline
bool is_fleet_baseline_text(const std::string& text);    // a JSON object with a top-level "baseline" section
bool is_bench_json_text(const std::string& text);    // Google Benchmark JSON output (a context, named benchmarks)
bool is_node_summary_text(const std::string& text);  // a ceilings.node/N document
bool is_svg_text(const std::string& text);           // an SVG document (its prolog, then the <svg root element)

// The current time as ISO 8601 UTC ("2026-11-30T12:00:00Z"), and a given time so.
std::string utc_now_iso8601();
std::string utc_iso8601(std::int64_t seconds_since_epoch);

// A moment read from ISO 8601 UTC text, ordered by time (text orders wrongly once fractional seconds or
// "+00:00" appear: "12:00:00.5Z" sorts before "12:00:00Z").
struct UtcTime {
  std::int64_t seconds = 0;  // since 1970-01-01T00:00:00Z
  std::int32_t nanoseconds = 0;
};
inline bool operator<(const UtcTime& a, const UtcTime& b) {
  return a.seconds != b.seconds ? a.seconds < b.seconds : a.nanoseconds < b.nanoseconds;
}
inline bool operator>=(const UtcTime& a, const UtcTime& b) { return !(a < b); }
// "YYYY-MM-DDTHH:MM:SSZ" as utc_now_iso8601 writes it; also fractional seconds ("...:00.25Z") and
// "+00:00" for "Z", which say the same thing. Anything else throws InputError naming `what` and the problem:
// no zone (a local time of unknown offset), another offset, lower-case letters, a day the calendar lacks.
UtcTime parse_utc_time(const std::string& text, const std::string& what);

// The link widths and generations a PCIe device can report (x1 ... x32; Gen 1 to 7).
bool valid_pcie_width(int lanes);
bool valid_pcie_gen(int generation);

// Checks of a profile's values beyond their JSON types, called by profile_from_json: `created` is ISO 8601
// UTC; a PCIe link has a width and generation that exist; no ceiling name appears twice; a ceiling of a known
// family is in its unit (B/s for hbm, l2, smem, pcie, nvlink; FLOP/s for gemm and fma, OP/s for gemm.int8*;
// s for latency) and its value (and datasheet value) is above zero and below what no GPU reaches (1 PB/s,
// 1 EFLOP/s or EOP/s; a time from 1 ns to 1000 s). Throws InputError naming the field.
void check_profile_values(const Profile& profile);
// The checks of one ceiling (its unit, value and datasheet value); `at` names it ("ceilings[3]").
void check_ceiling(const Ceiling& ceiling, const std::string& at);
// The detail values show, qualify and compare compute with (peer pairs, throttle reasons, reading counts,
// power), as the profile reader checks them; `at` ends in "detail.". An InputError naming the field.
void check_ceiling_detail(const Ceiling& ceiling, const std::string& at, std::optional<int> gpus_visible);
// Why a limit of `v` in `unit` (a rules file's min or max) could never be told apart by a profile: empty when
// it can, else the problem ("1e+20 B/s is above 1 PB/s, beyond any GPU"), from the same bounds as the values.
std::string implausible_limit(double v, const std::string& unit);

}  // namespace ceilings
