// NVML, loaded at run time with dlopen: clocks, power, temperature, throttle reasons and the
// device facts for telemetry, the fingerprint and health. Own minimal declarations, because nvml.h
// is not on every build machine; no NVML means "unavailable", never a crash.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "error.hpp"

namespace ceilings::nvml {

// Return codes we act on (values from the NVML API; stable across versions).
enum Code : int {
  kSuccess = 0,
  kUninitialized = 1,
  kInvalidArgument = 2,
  kNotSupported = 3,
  kNoPermission = 4,
  kNotFound = 6,
  kInsufficientSize = 7,
  kDriverNotLoaded = 9,
  kTimeout = 10,
  kGpuIsLost = 15,
  kResetRequired = 16,  // the GPU needs a reset before it can be used again
  kFunctionNotFound = 13,
  kCorruptedInforom = 14,
  kArgumentVersionMismatch = 25,  // a versioned struct this driver does not take
  kDeprecated = 26,  // what the calls NVML deprecated with CUDA 13 return once removed
  kUnknown = 999,
};

// One NVML answer: the code and, when it is kSuccess, the value.
template <class T>
struct Result {
  int code = kUnknown;
  T value{};
  bool ok() const { return code == kSuccess; }
  bool unsupported() const { return code == kNotSupported || code == kFunctionNotFound || code == kDeprecated; }
  std::optional<T> get() const { return ok() ? std::optional<T>(value) : std::nullopt; }
};

enum class Clock : unsigned { kGraphics = 0, kSm = 1, kMemory = 2 };

struct PcieLink {
  unsigned gen = 0, width = 0;
};

// Where NVML counts memory errors (nvmlMemoryLocation_t values).
enum class MemoryLocation : int { kL1 = 0, kL2 = 1, kDram = 2, kRegisterFile = 3, kSram = 7 };
// NVML's nvmlPerfPolicyType_t: whose clock limit the violation time counts.
enum class PerfPolicy : int { kPower = 0, kThermal = 1, kSyncBoost = 2, kBoardLimit = 3, kLowUtilization = 4,
                              kReliability = 5 };
// nvmlTemperatureThresholds_t.
enum class TemperatureThreshold : int { kShutdown = 0, kSlowdown = 1, kMemoryMax = 2, kGpuMax = 3 };

// nvmlDeviceGetMigMode's two modes (NVML_DEVICE_MIG_ENABLE: true): the one in force and the one the next GPU
// reset applies. They differ while a change waits for that reset.
struct MigMode {
  bool current = false, pending = false;
};

// nvmlDeviceGetSramEccErrorStatus (Ampere+, root only): the SRAM's ECC error status, of which ceilings keeps the
// threshold flag and the aggregate uncorrectable count by the unit it arose in (the totals come from
// nvmlDeviceGetMemoryErrorCounter). threshold_exceeded: NVML's bThresholdExceeded as answered (1: the SRAM's
// uncorrectable errors passed NVIDIA's threshold, 0: not), kept raw so that any other value is caught as implausible.
struct SramEccStatus {
  std::uint64_t uncorrected_l2 = 0, uncorrected_sm = 0, uncorrected_pcie = 0, uncorrected_mcu = 0,
                uncorrected_other = 0;
  unsigned threshold_exceeded = 0;
};

// nvmlDeviceGetRepairStatus (R580+, Ampere+): whether a TPC or a memory channel repair is pending (NVIDIA documents no
// more; taken to be applied at a GPU reset, as a pending row remap is).
// Kept raw as answered (1: pending, 0: not) so that any other value is caught as implausible.
struct RepairStatus {
  unsigned channel_pending = 0, tpc_pending = 0;
};

// nvmlDeviceGetGpuFabricInfoV (Hopper+): the GPU's registration in the NVLink fabric (Fabric Manager's probe).
// state: NVML_GPU_FABRIC_STATE_* (0 not supported, 1 not started, 2 in progress, 3 completed); status: the probe's
// nvmlReturn_t (meaningful once completed); health_mask: NVML_GPU_FABRIC_HEALTH_MASK_* fields.
struct FabricInfo {
  unsigned state = 0;
  int status = 0;
  unsigned health_mask = 0;
  bool has_health_mask = false;  // not in nvmlGpuFabricInfo_t (drivers before R550)
};

struct RemappedRows {
  unsigned correctable = 0, uncorrectable = 0;
  bool pending = false, failure = false;
};
// nvmlRowRemapperHistogramValues_t: how many memory banks have all, most, some, few or none of their spare
// rows left for remapping.
struct RemapHistogram {
  unsigned max = 0, high = 0, partial = 0, low = 0, none = 0;
};

// nvmlNvLinkErrorCounter_t: the data-link error counters of one NVLink.
enum class NvLinkError : int { kReplay = 0, kRecovery = 1, kCrcFlit = 2, kCrcData = 3 };

// nvmlIntNvLinkDeviceType_t: what the far end of an NVLink is.
enum class NvLinkRemote : int { kGpu = 0, kIbmNpu = 1, kSwitch = 2, kUnknown = 0xFF };
// The PCI location of a device (nvmlPciInfo_t's domain, bus and device numbers).
struct PciLocation {
  unsigned domain = 0, bus = 0, device = 0;
};

// nvmlFieldValues ids read through Device::field_value (nvml.h's NVML_FI_DEV_*).
constexpr unsigned kFieldMemoryTemperature = 82;  // NVML_FI_DEV_MEMORY_TEMP: HBM/memory temperature, C
// NVML_FI_DEV_GET_GPU_RECOVERY_ACTION: what the driver asks before the GPU runs work again (nvml.h's
// nvmlDeviceGpuRecoveryAction_t: 0 none, 1 GPU reset, 2 node reboot, 3 drain P2P, 4 drain and reset, 5 recover
// the IMEX domain).
constexpr unsigned kFieldGpuRecoveryAction = 230;
// NVML_FI_DEV_POWER_INSTANT: the power draw now, mW, asked for at kPowerScopeGpu (NVML_POWER_SCOPE_GPU);
// nvmlDeviceGetPowerUsage gives a trailing 1 s average on Ampere (except GA100) and newer.
constexpr unsigned kFieldPowerInstant = 186;
constexpr unsigned kPowerScopeGpu = 0;

// nvmlEventTypeXidCriticalError.
constexpr unsigned long long kEventXidCriticalError = 0x8ULL;

class Library;

// A watchdog on this process's NVML calls (review 103: a driver call that never returns, as on a GPU that fell off the
// bus, hung `ceilings health` for good). From this call on, an NVML call that has not returned after `seconds` makes
// `on_hang` run on the watchdog's own thread with the call's name ("nvmlDeviceGetClockInfo") and the seconds; it
// should end the process, as a call in the driver cannot be cancelled. Off until called; calling it again changes
// the limit and the handler.
void watch_calls(double seconds, std::function<void(const std::string& call, double seconds)> on_hang);

// A device handle bound to the loaded library.
class Device {
 public:
  Result<std::string> name() const;
  Result<std::string> uuid() const;
  Result<std::string> pci_bus_id() const;  // "00000000:19:00.0", from nvmlPciInfo_t's domain, bus and device
  Result<unsigned> clock_mhz(Clock which) const;      // current clock, MHz
  Result<unsigned> max_clock_mhz(Clock which) const;     // maximum clock, MHz
  Result<unsigned> power_mw() const;                      // board power draw, mW
  Result<unsigned> enforced_power_limit_mw() const;
  Result<unsigned> power_management_limit_mw() const;
  Result<unsigned> power_default_limit_mw() const;  // the board's limit as shipped (nvidia-smi "Default Power Limit")
  Result<std::uint64_t> energy_mj() const;                // energy used since the driver loaded, mJ (Volta+)
  Result<unsigned> temperature_c() const;                 // GPU die sensor
  Result<std::uint64_t> throttle_reasons() const;         // clock_events bits (ceilings/clock_events.hpp)
  Result<bool> ecc_enabled() const;                       // current ECC mode
  // nvmlDeviceValidateInforom: reads the InfoROM from flash and checks its checksums; false where they fail
  // (NVML_ERROR_CORRUPTED_INFOROM, an answer here, not an error).
  Result<bool> inforom_valid() const;
  // nvmlDeviceGetMigMode's current mode: true where the board is split into MIG instances (CUDA then sees
  // instances, never the whole board); false where it is not, or the GPU has no MIG.
  Result<bool> mig_enabled() const;
  // nvmlDeviceGetMigMode as NVML answers it: kNotSupported on a GPU without MIG.
  Result<MigMode> mig_mode() const;
  // nvmlDeviceGetPersistenceMode (Linux only): true for NVML_FEATURE_ENABLED, the driver's state kept while no
  // client is attached.
  Result<bool> persistence_mode() const;
  // nvmlDeviceGetSramEccErrorStatus: kNoPermission unless run as root, kNotSupported before Ampere.
  Result<SramEccStatus> sram_ecc_status() const;
  // nvmlDeviceGetRepairStatus with nvmlRepairStatus_v1_t: kFunctionNotFound before R580, kNotSupported before Ampere.
  Result<RepairStatus> repair_status() const;
  // nvmlDeviceGetUnrepairableMemoryFlag_v1 (R590+, Hopper+): NVML's flag that the GPU has memory it cannot repair,
  // raw as answered (1: it has, 0: not; anything else, or a struct the driver left unwritten, is implausible).
  // The struct's layout is not settled (see nvml.cpp): the call tells the two apart.
  Result<unsigned> unrepairable_memory() const;
  // nvmlDeviceGetGpuFabricInfoV with nvmlGpuFabricInfo_v2_t (or v3), else (drivers before R550)
  // nvmlDeviceGetGpuFabricInfo, which has no health mask: kNotSupported off NVSwitch systems.
  Result<FabricInfo> fabric_info() const;
  Result<unsigned> pcie_link_gen() const;
  Result<unsigned> pcie_link_width() const;
  // The most the GPU and its slot allow together (a Gen5 GPU in a Gen4 slot: 4), and the GPU's own most.
  Result<unsigned> pcie_max_link_gen() const;
  Result<unsigned> pcie_gpu_max_link_gen() const;
  Result<unsigned> pcie_max_link_width() const;
  // Health counters (see `ceilings health`).
  Result<std::uint64_t> ecc_total(bool uncorrected, bool aggregate) const;
  Result<std::uint64_t> ecc_errors(bool uncorrected, bool aggregate, MemoryLocation where) const;
  Result<RemappedRows> remapped_rows() const;
  Result<RemapHistogram> remap_histogram() const;  // nvmlDeviceGetRowRemapperHistogram
  Result<unsigned> retired_pages(bool double_bit) const;   // pages retired for that cause
  Result<bool> retired_pages_pending() const;
  Result<unsigned> pcie_replay_counter() const;
  Result<std::uint64_t> violation_time_ns(PerfPolicy policy) const;  // cumulative time clocks were held down
  Result<unsigned> temperature_threshold_c(TemperatureThreshold which) const;
  Result<std::uint64_t> supported_event_types() const;
  Result<bool> nvlink_active(unsigned link) const;  // nvmlDeviceGetNvLinkState: link trained and up
  // nvmlDeviceGetP2PStatus(NVML_P2P_CAPS_INDEX_NVLINK): whether this GPU reaches `peer` over NVLink (true)
  // or not (PCIe, or no peer path at all).
  Result<bool> nvlink_peer(const Device& peer) const;
  Result<std::uint64_t> nvlink_errors(unsigned link, NvLinkError which) const;  // since the driver loaded
  // The far end of one NVLink: its kind (nvmlDeviceGetNvLinkRemoteDeviceType) and PCI location
  // (nvmlDeviceGetNvLinkRemotePciInfo_v2, for a GPU the peer's own location).
  Result<NvLinkRemote> nvlink_remote_type(unsigned link) const;
  Result<PciLocation> nvlink_remote_pci(unsigned link) const;
  // One value of nvmlDeviceGetFieldValues, whatever its value type; the field's own return code counts.
  // scope_id: the field's scope where it has one (a power field's nvmlPowerScopeType_t, an NVLink's link).
  Result<double> field_value(unsigned field_id, unsigned scope_id = 0) const;

  void* raw() const { return handle_; }
  const Library& library() const { return *lib_; }

 private:
  friend class Library;
  Device(std::shared_ptr<const Library> lib, void* handle) : lib_(std::move(lib)), handle_(handle) {}
  std::shared_ptr<const Library> lib_;
  void* handle_ = nullptr;
};

// XID critical-error events of one device, collected from an NVML event set opened at creation.
class XidWatch {
 public:
  // Registers for XID events; on failure the code says why (kNotSupported, kNoPermission, ...).
  static Result<std::shared_ptr<XidWatch>> open(const Device& device);
  ~XidWatch();
  XidWatch(const XidWatch&) = delete;
  XidWatch& operator=(const XidWatch&) = delete;
  // The next event's XID, waiting at most timeout_ms; code kTimeout when none arrived.
  Result<unsigned long long> next(unsigned timeout_ms);

 private:
  XidWatch() = default;
  std::shared_ptr<const Library> lib_;
  void* set_ = nullptr;
};

class Library : public std::enable_shared_from_this<Library> {
 public:
  // Environment variable naming the library to load instead of libnvidia-ml.so.1 (tests use it).
  static constexpr const char* kPathVariable = "CEILINGS_NVML_LIBRARY";

  // Loads and initialises NVML. On failure returns nullptr and says why in *why.
  static std::shared_ptr<Library> open(std::string* why);
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  Result<std::string> driver_version() const;
  // nvmlSystemGetConfComputeSettings (else nvmlSystemGetConfComputeState, R535+): whether confidential computing
  // is on, single-GPU, protected PCIe (multi-GPU Hopper) or NVLink encryption (multi-GPU Blackwell), the GPUs in a
  // confidential VM whose host<->device copies the driver encrypts through bounce buffers; and which mode.
  struct ConfidentialComputing {
    bool on = false;
    // "single GPU", "protected PCIe", "NVLink encryption" (peer copies encrypted too) or "multi-GPU mode N" for a
    // value this build does not know, with ", developer tools" where that mode is on; empty where off, or where
    // only the older state call answered (it names no mode).
    std::string mode;
    bool nvlink_encrypted = false;  // the NVLink-encryption mode: peer copies encrypted too
  };
  Result<ConfidentialComputing> confidential_computing_settings() const;
  Result<bool> confidential_computing() const {
    const Result<ConfidentialComputing> r = confidential_computing_settings();
    return {r.code, r.value.on};
  }
  Result<unsigned> device_count() const;
  Result<Device> device_by_index(unsigned index) const;
  // PCI bus id as CUDA prints it ("0000:19:00.0"); the reliable way to match a CUDA device.
  Result<Device> device_by_pci_bus_id(const std::string& bus_id) const;
  std::string error_string(int code) const;

  struct Symbols;
  const Symbols& symbols() const { return *symbols_; }

 private:
  Library() = default;
  void* handle_ = nullptr;
  std::unique_ptr<Symbols> symbols_;
};

// Throws CheckError naming the expression when an NVML call does not succeed.
void check(int code, const Library& lib, const char* expr, const char* file, int line);

}  // namespace ceilings::nvml

#define CEILINGS_NVML_CHECK(lib, expr) ::ceilings::nvml::check((expr), (lib), #expr, __FILE__, __LINE__)
