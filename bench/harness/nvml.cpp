// NVML run-time loader: resolves the few entry points ceilings uses, tolerating any that an old
// driver lacks (they answer kFunctionNotFound).
#include "nvml.hpp"

#include <dlfcn.h>

#include <algorithm>

#include <cstddef>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace ceilings::nvml {

using Handle = void*;

// nvmlViolationTime_t: a CPU timestamp (us) and the cumulative violation time (ns).
struct ViolationTime {
  unsigned long long reference_time = 0, violation_time = 0;
};
// nvmlEventData_t (the _v2 wait fills all five fields; the v1 wait fills the first three, which
// share this layout, so one struct serves both).
struct EventData {
  Handle device = nullptr;
  unsigned long long event_type = 0;
  unsigned long long event_data = 0;
  unsigned gpu_instance_id = 0;
  unsigned compute_instance_id = 0;
};

// nvmlFieldValue_t (40 bytes): the request's field id and scope, then NVML's timestamp, latency, the
// value's type (nvmlValueType_t), the field's own return code and the value (a union of 8 bytes).
struct FieldValue {
  unsigned field_id = 0, scope_id = 0;
  long long timestamp = 0, latency_us = 0;
  int value_type = 0, nvml_return = 0;
  union {
    double d;
    unsigned ui;
    unsigned long ul;
    unsigned long long ull;
    long long sll;
    int si;
    unsigned short us;
  } value{};
};
static_assert(sizeof(FieldValue) == 40, "nvmlFieldValue_t is 40 bytes");

// nvmlPciInfo_t (68 bytes): the legacy bus id string, domain, bus, device, the PCI device and subsystem
// ids, and the bus id string.
struct PciInfo {
  char bus_id_legacy[16] = {};
  unsigned domain = 0, bus = 0, device = 0, pci_device_id = 0, pci_subsystem_id = 0;
  char bus_id[32] = {};
};
static_assert(sizeof(PciInfo) == 68, "nvmlPciInfo_t is 68 bytes");

// nvmlTemperature_v1_t (R565+): the struct's version, the sensor (nvmlTemperatureSensors_t) and the
// reading in degrees Celsius. NVML_STRUCT_VERSION is the struct's size with the version in bits 24+.
struct TemperatureV1 {
  unsigned version = 0;
  int sensor = 0;
  int celsius = 0;
};
static_assert(sizeof(TemperatureV1) == 12, "nvmlTemperature_v1_t is 12 bytes");
constexpr unsigned kTemperatureV1 = static_cast<unsigned>(sizeof(TemperatureV1)) | (1u << 24);

// nvmlEccSramErrorStatus_v1_t (104 bytes): the struct's version, the SRAM ECC counts (aggregate uncorrectable parity
// and SEC-DED, aggregate corrected, the same three volatile), the aggregate uncorrectable count by unit (L2, SM, PCIe,
// microcontroller, other) and whether the error threshold is exceeded.
struct EccSramErrorStatusV1 {
  unsigned version = 0;
  unsigned long long aggregate_unc_parity = 0, aggregate_unc_sec_ded = 0, aggregate_cor = 0;
  unsigned long long volatile_unc_parity = 0, volatile_unc_sec_ded = 0, volatile_cor = 0;
  unsigned long long bucket_l2 = 0, bucket_sm = 0, bucket_pcie = 0, bucket_mcu = 0, bucket_other = 0;
  unsigned threshold_exceeded = 0;
};
static_assert(sizeof(EccSramErrorStatusV1) == 104, "nvmlEccSramErrorStatus_v1_t is 104 bytes");
constexpr unsigned kEccSramErrorStatusV1 = static_cast<unsigned>(sizeof(EccSramErrorStatusV1)) | (1u << 24);

// nvmlRepairStatus_v1_t (12 bytes): the struct's version, then whether a memory channel repair and a TPC repair are
// pending.
struct RepairStatusV1 {
  unsigned version = 0, channel_pending = 0, tpc_pending = 0;
};
static_assert(sizeof(RepairStatusV1) == 12, "nvmlRepairStatus_v1_t is 12 bytes");
constexpr unsigned kRepairStatusV1 = static_cast<unsigned>(sizeof(RepairStatusV1)) | (1u << 24);

// nvmlUnrepairableMemoryStatus_v1_t: nvml.h (NVML 13.1 and later, as NVIDIA's go-nvml syncs it) declares one unsigned
// int, bUnrepairableMemory, with no version field and no version macro, yet lists ARGUMENT_VERSION_MISMATCH among the
// call's answers; NVIDIA's own Python bindings (nvidia-ml-py 13.590 on) and DCGM (4.5 on) pass 8 bytes, a version
// (NVML_STRUCT_VERSION of that 8-byte struct) and the flag. Neither layout has been checked on a driver here, so the
// call passes 16 bytes: the versioned layout's version, then sentinels. A driver that takes the versioned layout
// writes the second word; one that takes nvml.h's writes the first, over the version, and leaves the sentinel.
constexpr unsigned kUnrepairableMemoryStatusV1Versioned = 8u | (1u << 24);
constexpr unsigned kUnwritten = 0xFFFFFFFFu;

// nvmlGpuFabricInfo_t (28 bytes; nvmlDeviceGetGpuFabricInfo, drivers before R550): the cluster's UUID, the probe's
// status, the clique and the probe state (an unsigned char). nvmlGpuFabricInfo_v2_t (36 bytes) puts the version first
// and the health mask last; v3 (40) adds a health summary after it.
struct GpuFabricInfoV1 {
  unsigned char cluster_uuid[16] = {};
  int status = 0;
  unsigned clique_id = 0;
  unsigned char state = 0;
};
static_assert(sizeof(GpuFabricInfoV1) == 28, "nvmlGpuFabricInfo_t is 28 bytes");
struct GpuFabricInfoV3 {
  unsigned version = 0;
  unsigned char cluster_uuid[16] = {};
  int status = 0;
  unsigned clique_id = 0;
  unsigned char state = 0;
  unsigned health_mask = 0;
  unsigned char health_summary = 0;
};
static_assert(sizeof(GpuFabricInfoV3) == 40, "nvmlGpuFabricInfo_v3_t is 40 bytes");
static_assert(offsetof(GpuFabricInfoV3, health_summary) == 36, "v3 is v2 (36 bytes) and a health summary");
constexpr unsigned kGpuFabricInfoV2 = 36u | (2u << 24);
constexpr unsigned kGpuFabricInfoV3 = static_cast<unsigned>(sizeof(GpuFabricInfoV3)) | (3u << 24);

struct Library::Symbols {
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  const char* (*error_string)(int) = nullptr;
  int (*system_driver_version)(char*, unsigned) = nullptr;
  int (*conf_compute_state)(unsigned*) = nullptr;  // nvmlConfComputeSystemState_t*: environment, ccFeature, devToolsMode
  // nvmlSystemConfComputeSettings_v1_t*: version, environment, ccFeature, devToolsMode, multiGpuMode
  int (*conf_compute_settings)(unsigned*) = nullptr;
  int (*device_count)(unsigned*) = nullptr;
  int (*by_index)(unsigned, Handle*) = nullptr;
  int (*by_pci_bus_id)(const char*, Handle*) = nullptr;
  int (*name)(Handle, char*, unsigned) = nullptr;
  int (*uuid)(Handle, char*, unsigned) = nullptr;
  int (*pci_info)(Handle, PciInfo*) = nullptr;
  int (*clock)(Handle, unsigned, unsigned*) = nullptr;
  int (*max_clock)(Handle, unsigned, unsigned*) = nullptr;
  int (*power_usage)(Handle, unsigned*) = nullptr;
  int (*enforced_power_limit)(Handle, unsigned*) = nullptr;
  int (*power_management_limit)(Handle, unsigned*) = nullptr;
  int (*power_default_limit)(Handle, unsigned*) = nullptr;
  int (*total_energy)(Handle, unsigned long long*) = nullptr;
  int (*temperature_v)(Handle, TemperatureV1*) = nullptr;
  int (*temperature)(Handle, int, unsigned*) = nullptr;
  int (*throttle_reasons)(Handle, unsigned long long*) = nullptr;
  int (*ecc_mode)(Handle, int*, int*) = nullptr;
  int (*pcie_gen)(Handle, unsigned*) = nullptr;
  int (*pcie_width)(Handle, unsigned*) = nullptr;
  int (*pcie_max_gen)(Handle, unsigned*) = nullptr;
  int (*pcie_gpu_max_gen)(Handle, unsigned*) = nullptr;
  int (*pcie_max_width)(Handle, unsigned*) = nullptr;
  int (*total_ecc)(Handle, int, int, unsigned long long*) = nullptr;
  int (*memory_error_counter)(Handle, int, int, int, unsigned long long*) = nullptr;
  int (*remapped_rows)(Handle, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;
  int (*remap_histogram)(Handle, RemapHistogram*) = nullptr;  // nvmlRowRemapperHistogramValues_t: 5 unsigned
  int (*validate_inforom)(Handle) = nullptr;
  int (*mig_mode)(Handle, unsigned*, unsigned*) = nullptr;
  int (*persistence_mode)(Handle, int*) = nullptr;  // nvmlEnableState_t*: an enum, int-sized
  int (*sram_ecc_status)(Handle, EccSramErrorStatusV1*) = nullptr;
  int (*repair_status)(Handle, RepairStatusV1*) = nullptr;
  int (*unrepairable_memory)(Handle, unsigned*) = nullptr;  // nvmlUnrepairableMemoryStatus_v1_t*: see above
  int (*fabric_info_v)(Handle, GpuFabricInfoV3*) = nullptr;  // v2 or v3, by the version set
  int (*fabric_info)(Handle, GpuFabricInfoV1*) = nullptr;
  int (*retired_pages)(Handle, int, unsigned*, unsigned long long*) = nullptr;
  int (*retired_pages_pending)(Handle, int*) = nullptr;
  int (*pcie_replay)(Handle, unsigned*) = nullptr;
  int (*violation_status)(Handle, int, ViolationTime*) = nullptr;
  int (*temperature_threshold)(Handle, int, unsigned*) = nullptr;
  int (*supported_event_types)(Handle, unsigned long long*) = nullptr;
  int (*event_set_create)(void**) = nullptr;
  int (*register_events)(Handle, unsigned long long, void*) = nullptr;
  int (*event_set_wait)(void*, EventData*, unsigned) = nullptr;
  int (*event_set_free)(void*) = nullptr;
  int (*nvlink_state)(Handle, unsigned, int*) = nullptr;
  int (*nvlink_error_counter)(Handle, unsigned, int, unsigned long long*) = nullptr;
  int (*field_values)(Handle, int, FieldValue*) = nullptr;
  int (*p2p_status)(Handle, Handle, int, int*) = nullptr;
  int (*nvlink_remote_type)(Handle, unsigned, int*) = nullptr;
  int (*nvlink_remote_pci)(Handle, unsigned, PciInfo*) = nullptr;
};

namespace {

template <class Fn>
void resolve(void* lib, Fn& fn, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (void* p = dlsym(lib, n)) {
      fn = reinterpret_cast<Fn>(p);
      return;
    }
  }
}

// The calls in flight while watch_calls is on: per thread, the entry point (its address, named by dladdr when
// one hangs) and since when.
struct CallWatch {
  std::mutex mutex;
  std::map<std::thread::id, std::pair<std::uintptr_t, std::chrono::steady_clock::time_point>> in_flight;
  double limit_s = 0;
  std::function<void(const std::string&, double)> on_hang;
  bool thread_started = false;
};
std::atomic<bool> watching{false};
CallWatch& call_watch() {
  static CallWatch* w = new CallWatch();  // never destroyed: the watchdog thread reads it until the process ends
  return *w;
}

// The entry point's name in the library that holds it, or its address.
std::string call_name(std::uintptr_t address) {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(address), &info) != 0 && info.dli_sname) return info.dli_sname;
  char buf[32];
  std::snprintf(buf, sizeof buf, "the NVML call at %#zx", static_cast<std::size_t>(address));
  return buf;
}

// Marks the calling thread in an NVML call for its lifetime, where the watchdog is on.
class InFlight {
 public:
  explicit InFlight(std::uintptr_t fn) : on_(watching.load(std::memory_order_acquire)) {
    if (!on_) return;
    CallWatch& w = call_watch();
    std::lock_guard<std::mutex> lock(w.mutex);
    w.in_flight[std::this_thread::get_id()] = {fn, std::chrono::steady_clock::now()};
  }
  ~InFlight() {
    if (!on_) return;
    CallWatch& w = call_watch();
    std::lock_guard<std::mutex> lock(w.mutex);
    w.in_flight.erase(std::this_thread::get_id());
  }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;

 private:
  bool on_;
};

template <class Fn, class... Args>
int call(Fn fn, Args... args) {
  if (!fn) return kFunctionNotFound;
  const InFlight mark(reinterpret_cast<std::uintptr_t>(fn));
  return fn(args...);
}

Result<std::string> read_string(int (*fn)(Handle, char*, unsigned), Handle h) {
  char buf[256] = {};
  Result<std::string> r;
  r.code = call(fn, h, buf, static_cast<unsigned>(sizeof buf));
  if (r.ok()) r.value = buf;
  return r;
}

template <class Fn, class... Args>
Result<unsigned> read_unsigned(Fn fn, Args... args) {
  Result<unsigned> r;
  r.code = call(fn, args..., &r.value);
  return r;
}

}  // namespace

void watch_calls(double seconds, std::function<void(const std::string& call, double seconds)> on_hang) {
  CallWatch& w = call_watch();
  std::lock_guard<std::mutex> lock(w.mutex);
  w.limit_s = seconds;
  w.on_hang = std::move(on_hang);
  watching.store(true, std::memory_order_release);
  if (w.thread_started) return;
  w.thread_started = true;
  std::thread([&w] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      std::string hung;
      double limit = 0;
      std::function<void(const std::string&, double)> handler;
      {
        std::lock_guard<std::mutex> guard(w.mutex);
        const auto now = std::chrono::steady_clock::now();
        for (const auto& [thread, call] : w.in_flight)
          if (std::chrono::duration<double>(now - call.second).count() > w.limit_s) {
            hung = call_name(call.first);
            limit = w.limit_s;
            handler = w.on_hang;
            break;
          }
      }
      if (!hung.empty() && handler) handler(hung, limit);
    }
  }).detach();
}

std::shared_ptr<Library> Library::open(std::string* why) {
  const char* override_path = std::getenv(kPathVariable);
  const std::string path = (override_path && *override_path) ? override_path : "libnvidia-ml.so.1";
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    if (why) {
      const char* err = dlerror();  // never null right after a failed dlopen in glibc; not relied on
      *why = "cannot load " + path + ": " + (err ? err : "dlopen failed");
    }
    return nullptr;
  }
  std::shared_ptr<Library> lib(new Library());
  lib->handle_ = h;
  lib->symbols_ = std::make_unique<Symbols>();
  Symbols& s = *lib->symbols_;
  resolve(h, s.init, {"nvmlInit_v2", "nvmlInit"});
  resolve(h, s.shutdown, {"nvmlShutdown"});
  resolve(h, s.error_string, {"nvmlErrorString"});
  resolve(h, s.system_driver_version, {"nvmlSystemGetDriverVersion"});
  resolve(h, s.conf_compute_state, {"nvmlSystemGetConfComputeState"});
  resolve(h, s.conf_compute_settings, {"nvmlSystemGetConfComputeSettings"});
  resolve(h, s.device_count, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
  resolve(h, s.by_index, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
  resolve(h, s.by_pci_bus_id, {"nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetHandleByPciBusId"});
  resolve(h, s.name, {"nvmlDeviceGetName"});
  resolve(h, s.uuid, {"nvmlDeviceGetUUID"});
  resolve(h, s.pci_info, {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2"});
  resolve(h, s.clock, {"nvmlDeviceGetClockInfo"});
  resolve(h, s.max_clock, {"nvmlDeviceGetMaxClockInfo"});
  resolve(h, s.power_usage, {"nvmlDeviceGetPowerUsage"});
  resolve(h, s.enforced_power_limit, {"nvmlDeviceGetEnforcedPowerLimit"});
  resolve(h, s.power_management_limit, {"nvmlDeviceGetPowerManagementLimit"});
  resolve(h, s.power_default_limit, {"nvmlDeviceGetPowerManagementDefaultLimit"});
  resolve(h, s.temperature_v, {"nvmlDeviceGetTemperatureV"});
  resolve(h, s.temperature, {"nvmlDeviceGetTemperature"});
  resolve(h, s.throttle_reasons,
          {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
  resolve(h, s.ecc_mode, {"nvmlDeviceGetEccMode"});
  resolve(h, s.pcie_gen, {"nvmlDeviceGetCurrPcieLinkGeneration"});
  resolve(h, s.pcie_width, {"nvmlDeviceGetCurrPcieLinkWidth"});
  resolve(h, s.pcie_max_gen, {"nvmlDeviceGetMaxPcieLinkGeneration"});
  resolve(h, s.pcie_gpu_max_gen, {"nvmlDeviceGetGpuMaxPcieLinkGeneration"});
  resolve(h, s.pcie_max_width, {"nvmlDeviceGetMaxPcieLinkWidth"});
  resolve(h, s.total_ecc, {"nvmlDeviceGetTotalEccErrors"});
  resolve(h, s.memory_error_counter, {"nvmlDeviceGetMemoryErrorCounter"});
  resolve(h, s.remapped_rows, {"nvmlDeviceGetRemappedRows"});
  resolve(h, s.remap_histogram, {"nvmlDeviceGetRowRemapperHistogram"});
  resolve(h, s.validate_inforom, {"nvmlDeviceValidateInforom"});
  resolve(h, s.mig_mode, {"nvmlDeviceGetMigMode"});
  resolve(h, s.persistence_mode, {"nvmlDeviceGetPersistenceMode"});
  resolve(h, s.sram_ecc_status, {"nvmlDeviceGetSramEccErrorStatus"});
  resolve(h, s.repair_status, {"nvmlDeviceGetRepairStatus"});
  // DCGM resolves the name without "_v1"; nvml.h declares the one with it.
  resolve(h, s.unrepairable_memory, {"nvmlDeviceGetUnrepairableMemoryFlag_v1", "nvmlDeviceGetUnrepairableMemoryFlag"});
  resolve(h, s.fabric_info_v, {"nvmlDeviceGetGpuFabricInfoV"});
  resolve(h, s.fabric_info, {"nvmlDeviceGetGpuFabricInfo"});
  resolve(h, s.retired_pages, {"nvmlDeviceGetRetiredPages"});
  resolve(h, s.retired_pages_pending, {"nvmlDeviceGetRetiredPagesPendingStatus"});
  resolve(h, s.pcie_replay, {"nvmlDeviceGetPcieReplayCounter"});
  resolve(h, s.total_energy, {"nvmlDeviceGetTotalEnergyConsumption"});
  resolve(h, s.violation_status, {"nvmlDeviceGetViolationStatus"});
  resolve(h, s.temperature_threshold, {"nvmlDeviceGetTemperatureThreshold"});
  resolve(h, s.supported_event_types, {"nvmlDeviceGetSupportedEventTypes"});
  resolve(h, s.event_set_create, {"nvmlEventSetCreate"});
  resolve(h, s.register_events, {"nvmlDeviceRegisterEvents"});
  resolve(h, s.event_set_wait, {"nvmlEventSetWait_v2", "nvmlEventSetWait"});
  resolve(h, s.event_set_free, {"nvmlEventSetFree"});
  resolve(h, s.nvlink_state, {"nvmlDeviceGetNvLinkState"});
  resolve(h, s.nvlink_error_counter, {"nvmlDeviceGetNvLinkErrorCounter"});
  resolve(h, s.field_values, {"nvmlDeviceGetFieldValues"});
  resolve(h, s.p2p_status, {"nvmlDeviceGetP2PStatus"});
  resolve(h, s.nvlink_remote_type, {"nvmlDeviceGetNvLinkRemoteDeviceType"});
  resolve(h, s.nvlink_remote_pci, {"nvmlDeviceGetNvLinkRemotePciInfo_v2", "nvmlDeviceGetNvLinkRemotePciInfo"});
  if (!s.init || !s.shutdown) {
    if (why) *why = path + " lacks nvmlInit_v2/nvmlShutdown: not an NVML library";
    dlclose(h);
    lib->handle_ = nullptr;
    return nullptr;
  }
  const int rc = call(s.init);
  if (rc != kSuccess) {
    if (why) *why = "nvmlInit failed: " + lib->error_string(rc);
    s.shutdown = nullptr;  // nothing to shut down
    return nullptr;
  }
  return lib;
}

Library::~Library() {
  if (symbols_ && symbols_->shutdown) call(symbols_->shutdown);  // watched too (review 110)
  if (handle_) dlclose(handle_);
}

std::string Library::error_string(int code) const {
  const char* s = (symbols_ && symbols_->error_string) ? symbols_->error_string(code) : nullptr;
  return (s ? std::string(s) : std::string("NVML error")) + " (" + std::to_string(code) + ")";
}

Result<std::string> Library::driver_version() const {
  char buf[96] = {};
  Result<std::string> r;
  r.code = call(symbols_->system_driver_version, buf, static_cast<unsigned>(sizeof buf));
  if (r.ok()) r.value = buf;
  return r;
}

Result<Library::ConfidentialComputing> Library::confidential_computing_settings() const {
  // The settings first: a multi-GPU Hopper node in protected-PCIe mode reports ccFeature off (the driver does not
  // advertise CC there) and multiGpuMode NVML_CC_SYSTEM_MULTIGPU_PROTECTED_PCIE (1), its copies going through the
  // same bounce buffers; NVML_CC_SYSTEM_MULTIGPU_NVLE (2) is Blackwell's multi-GPU mode, NVLink encrypted. A driver
  // without the call (or another struct version) answers the older state call.
  ConfidentialComputing cc;
  // version (NVML_STRUCT_VERSION(SystemConfComputeSettings, 1)), environment, ccFeature, devToolsMode, multiGpuMode
  unsigned settings[5] = {20u | (1u << 24), 0, 0, 0, 0};
  if (call(symbols_->conf_compute_settings, settings) == kSuccess) {
    const unsigned multi = settings[4];
    cc.on = settings[2] == 1 || multi != 0;  // NVML_CC_SYSTEM_FEATURE_ENABLED, or a multi-GPU CC mode
    if (cc.on) {
      cc.mode = multi == 0   ? "single GPU"
                : multi == 1 ? "protected PCIe"
                : multi == 2 ? "NVLink encryption"
                             : "multi-GPU mode " + std::to_string(multi);
      if (settings[3] == 1) cc.mode += ", developer tools";  // NVML_CC_SYSTEM_DEVTOOLS_MODE_ON
      cc.nvlink_encrypted = multi == 2;
    }
    return {kSuccess, cc};
  }
  unsigned state[3] = {0, 0, 0};  // environment, ccFeature (NVML_CC_SYSTEM_FEATURE_ENABLED 1), devToolsMode
  const int rc = call(symbols_->conf_compute_state, state);
  cc.on = state[1] == 1;
  return {rc, cc};
}

Result<unsigned> Library::device_count() const { return read_unsigned(symbols_->device_count); }

Result<Device> Library::device_by_index(unsigned index) const {
  Handle h = nullptr;
  const int rc = call(symbols_->by_index, index, &h);
  return {rc, Device(shared_from_this(), h)};
}

Result<Device> Library::device_by_pci_bus_id(const std::string& bus_id) const {
  Handle h = nullptr;
  const int rc = call(symbols_->by_pci_bus_id, bus_id.c_str(), &h);
  return {rc, Device(shared_from_this(), h)};
}

void check(int code, const Library& lib, const char* expr, const char* file, int line) {
  if (code != kSuccess) throw CheckError(expr, lib.error_string(code), file, line);
}

#define SYMS (lib_->symbols())

Result<std::string> Device::name() const { return read_string(SYMS.name, handle_); }
Result<std::string> Device::uuid() const { return read_string(SYMS.uuid, handle_); }
Result<std::string> Device::pci_bus_id() const {
  PciInfo info;
  const int rc = call(SYMS.pci_info, handle_, &info);
  if (rc != kSuccess) return {rc, ""};
  // From the numbers, not the busId string: the older nvmlPciInfo_t behind nvmlDeviceGetPciInfo_v2 lays it out
  // elsewhere. NVML's own spelling, "%08X:%02X:%02X.0".
  char id[32];
  std::snprintf(id, sizeof id, "%08X:%02X:%02X.0", info.domain, info.bus, info.device);
  return {rc, id};
}
Result<unsigned> Device::clock_mhz(Clock which) const {
  return read_unsigned(SYMS.clock, handle_, static_cast<unsigned>(which));
}
Result<unsigned> Device::max_clock_mhz(Clock which) const {
  return read_unsigned(SYMS.max_clock, handle_, static_cast<unsigned>(which));
}
Result<unsigned> Device::power_mw() const { return read_unsigned(SYMS.power_usage, handle_); }
Result<unsigned> Device::enforced_power_limit_mw() const {
  return read_unsigned(SYMS.enforced_power_limit, handle_);
}
Result<unsigned> Device::power_management_limit_mw() const {
  return read_unsigned(SYMS.power_management_limit, handle_);
}
Result<unsigned> Device::power_default_limit_mw() const { return read_unsigned(SYMS.power_default_limit, handle_); }
Result<std::uint64_t> Device::energy_mj() const {
  unsigned long long mj = 0;
  const int rc = call(SYMS.total_energy, handle_, &mj);
  return {rc, static_cast<std::uint64_t>(mj)};
}
// nvmlDeviceGetTemperature is deprecated; its replacement exists from R565 on. The replacement is
// asked first, the old call answers where it is missing or fails (and its error is the one kept
// when both fail and the old one is absent).
Result<unsigned> Device::temperature_c() const {
  TemperatureV1 t;
  t.version = kTemperatureV1;
  t.sensor = 0;  // NVML_TEMPERATURE_GPU
  const int rc = call(SYMS.temperature_v, handle_, &t);
  if (rc == kSuccess && t.celsius >= 0) return {rc, static_cast<unsigned>(t.celsius)};
  Result<unsigned> old = read_unsigned(SYMS.temperature, handle_, 0);
  if (old.code == kFunctionNotFound && rc != kFunctionNotFound) old.code = rc == kSuccess ? kUnknown : rc;
  return old;
}
Result<std::uint64_t> Device::throttle_reasons() const {
  unsigned long long bits = 0;
  const int rc = call(SYMS.throttle_reasons, handle_, &bits);
  return {rc, static_cast<std::uint64_t>(bits)};
}
Result<bool> Device::ecc_enabled() const {
  int current = 0, pending = 0;
  const int rc = call(SYMS.ecc_mode, handle_, &current, &pending);
  // nvml.h has 0 and 1 only: another value is no reading (review 99: 2 read as "on"), never data.
  if (rc == kSuccess && (current < 0 || current > 1)) return {kUnknown, false};
  return {rc, current != 0};
}
Result<bool> Device::inforom_valid() const {
  const int rc = call(SYMS.validate_inforom, handle_);
  if (rc == kCorruptedInforom) return {kSuccess, false};
  return {rc, rc == kSuccess};
}
Result<bool> Device::mig_enabled() const {
  const Result<MigMode> m = mig_mode();
  if (m.code == kNotSupported) return {kSuccess, false};  // a GPU without MIG is always whole
  return {m.code, m.value.current};
}
Result<MigMode> Device::mig_mode() const {
  unsigned current = 0, pending = 0;
  const int rc = call(SYMS.mig_mode, handle_, &current, &pending);
  if (rc == kSuccess && (current > 1 || pending > 1)) return {kUnknown, MigMode{}};  // 0 and 1 only, as for ECC
  return {rc, MigMode{current == 1, pending == 1}};  // NVML_DEVICE_MIG_ENABLE
}
Result<bool> Device::persistence_mode() const {
  int mode = 0;
  const int rc = call(SYMS.persistence_mode, handle_, &mode);
  if (rc == kSuccess && (mode < 0 || mode > 1)) return {kUnknown, false};  // 0 and 1 only, as for ECC
  return {rc, mode == 1};  // NVML_FEATURE_ENABLED
}
Result<SramEccStatus> Device::sram_ecc_status() const {
  EccSramErrorStatusV1 st;
  st.version = kEccSramErrorStatusV1;
  const int rc = call(SYMS.sram_ecc_status, handle_, &st);
  return {rc, SramEccStatus{st.bucket_l2, st.bucket_sm, st.bucket_pcie, st.bucket_mcu, st.bucket_other,
                            st.threshold_exceeded}};
}
Result<RepairStatus> Device::repair_status() const {
  RepairStatusV1 st;
  st.version = kRepairStatusV1;
  st.channel_pending = st.tpc_pending = kUnwritten;  // a field the driver leaves unwritten: implausible, not clear
  const int rc = call(SYMS.repair_status, handle_, &st);
  return {rc, RepairStatus{st.channel_pending, st.tpc_pending}};
}
Result<unsigned> Device::unrepairable_memory() const {
  unsigned words[4] = {kUnrepairableMemoryStatusV1Versioned, kUnwritten, kUnwritten, kUnwritten};
  int rc = call(SYMS.unrepairable_memory, handle_, words);
  // A driver that checks the first word against nvml.h's layout (no version) is asked again with it 0. (One that
  // then answered success and wrote nothing would read as a clear flag: nvml.h's layout leaves no word to tell.)
  if (rc == kArgumentVersionMismatch) {
    words[0] = 0;
    rc = call(SYMS.unrepairable_memory, handle_, words);
  }
  // The versioned layout's flag where the driver wrote it; else nvml.h's, in the first word (still the version where
  // the driver wrote nothing: implausible, caught as such).
  return {rc, words[1] != kUnwritten ? words[1] : words[0]};
}
Result<FabricInfo> Device::fabric_info() const {
  if (SYMS.fabric_info_v) {
    // v2 (R550 on), else v3 where a driver takes only that: the v3 struct holds v2's fields at v2's places.
    for (const unsigned version : {kGpuFabricInfoV2, kGpuFabricInfoV3}) {
      GpuFabricInfoV3 info;
      info.version = version;
      const int rc = call(SYMS.fabric_info_v, handle_, &info);
      if (rc != kArgumentVersionMismatch) return {rc, FabricInfo{info.state, info.status, info.health_mask, true}};
    }
    return {kArgumentVersionMismatch, {}};
  }
  GpuFabricInfoV1 info;  // drivers before R550: no health mask
  const int rc = call(SYMS.fabric_info, handle_, &info);
  return {rc, FabricInfo{info.state, info.status, 0, false}};
}
Result<unsigned> Device::pcie_link_gen() const { return read_unsigned(SYMS.pcie_gen, handle_); }
Result<unsigned> Device::pcie_link_width() const { return read_unsigned(SYMS.pcie_width, handle_); }
Result<unsigned> Device::pcie_max_link_gen() const { return read_unsigned(SYMS.pcie_max_gen, handle_); }
Result<unsigned> Device::pcie_gpu_max_link_gen() const { return read_unsigned(SYMS.pcie_gpu_max_gen, handle_); }
Result<unsigned> Device::pcie_max_link_width() const { return read_unsigned(SYMS.pcie_max_width, handle_); }

Result<std::uint64_t> Device::ecc_total(bool uncorrected, bool aggregate) const {
  unsigned long long n = 0;
  const int rc = call(SYMS.total_ecc, handle_, uncorrected ? 1 : 0, aggregate ? 1 : 0, &n);
  return {rc, static_cast<std::uint64_t>(n)};
}
Result<std::uint64_t> Device::ecc_errors(bool uncorrected, bool aggregate, MemoryLocation where) const {
  unsigned long long n = 0;
  const int rc = call(SYMS.memory_error_counter, handle_, uncorrected ? 1 : 0, aggregate ? 1 : 0,
                      static_cast<int>(where), &n);
  return {rc, static_cast<std::uint64_t>(n)};
}
Result<RemappedRows> Device::remapped_rows() const {
  unsigned corr = 0, unc = 0, pending = 0, failure = 0;
  const int rc = call(SYMS.remapped_rows, handle_, &corr, &unc, &pending, &failure);
  return {rc, RemappedRows{corr, unc, pending != 0, failure != 0}};
}
Result<RemapHistogram> Device::remap_histogram() const {
  static_assert(sizeof(RemapHistogram) == 5 * sizeof(unsigned), "nvmlRowRemapperHistogramValues_t is 5 unsigned");
  RemapHistogram h;
  const int rc = call(SYMS.remap_histogram, handle_, &h);
  return {rc, h};
}
Result<unsigned> Device::retired_pages(bool double_bit) const {
  unsigned count = 0;  // 0 with no buffer: NVML answers the count only
  int rc = call(SYMS.retired_pages, handle_, double_bit ? 1 : 0, &count, static_cast<unsigned long long*>(nullptr));
  if (rc == kInsufficientSize) rc = kSuccess;
  return {rc, count};
}
Result<bool> Device::retired_pages_pending() const {
  int state = 0;
  const int rc = call(SYMS.retired_pages_pending, handle_, &state);
  return {rc, state != 0};
}
Result<unsigned> Device::pcie_replay_counter() const { return read_unsigned(SYMS.pcie_replay, handle_); }
// nvmlDeviceGetViolationStatus is deprecated from CUDA 13.0 (to be removed in 14.0) in favour of field values.
// NVML_FI_DEV_PERF_POLICY_* are 74 + the policy (the same cumulative nanoseconds) in every header checked.
// nvml.h 13.3's migration table names NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN for the thermal
// policy, but that id differs between published headers (251 in one, 269 in another), so the thermal counter
// is read as NVML_FI_DEV_PERF_POLICY_THERMAL (75), the older id of the same counter. The field is asked first;
// the old call answers where it is missing, and the field's error is the one kept when both fail and the old
// call is gone (so a driver that drops field 75 and the old call loses the thermal time: it is reported absent).
Result<std::uint64_t> Device::violation_time_ns(PerfPolicy policy) const {
  constexpr unsigned kPerfPolicyField = 74;  // NVML_FI_DEV_PERF_POLICY_POWER; THERMAL 75 ... RELIABILITY 79
  FieldValue v;
  v.field_id = kPerfPolicyField + static_cast<unsigned>(policy);
  int rc = call(SYMS.field_values, handle_, 1, &v);
  if (rc == kSuccess) rc = v.nvml_return;
  if (rc == kSuccess) {
    switch (v.value_type) {  // nvmlValueType_t: a counter of nanoseconds, unsigned in every driver seen
      case 1: return {rc, static_cast<std::uint64_t>(v.value.ui)};
      case 2: return {rc, static_cast<std::uint64_t>(v.value.ul)};
      case 3: return {rc, static_cast<std::uint64_t>(v.value.ull)};
      default: rc = kUnknown;  // a type this reader does not know: never guessed, ask the old call
    }
  }
  ViolationTime t;
  const int old = call(SYMS.violation_status, handle_, static_cast<int>(policy), &t);
  if (old == kFunctionNotFound) return {rc, 0};
  return {old, static_cast<std::uint64_t>(t.violation_time)};
}
Result<unsigned> Device::temperature_threshold_c(TemperatureThreshold which) const {
  return read_unsigned(SYMS.temperature_threshold, handle_, static_cast<int>(which));
}
Result<std::uint64_t> Device::supported_event_types() const {
  unsigned long long bits = 0;
  const int rc = call(SYMS.supported_event_types, handle_, &bits);
  return {rc, static_cast<std::uint64_t>(bits)};
}

Result<bool> Device::nvlink_active(unsigned link) const {
  int state = 0;  // nvmlEnableState_t: 1 = NVML_FEATURE_ENABLED
  const int rc = call(SYMS.nvlink_state, handle_, link, &state);
  return {rc, state == 1};
}
Result<bool> Device::nvlink_peer(const Device& peer) const {
  constexpr int kP2pCapsIndexNvlink = 2, kP2pStatusOk = 0;  // nvmlGpuP2PCapsIndex_t, nvmlGpuP2PStatus_t
  int status = -1;
  const int rc = call(SYMS.p2p_status, handle_, peer.handle_, kP2pCapsIndexNvlink, &status);
  return {rc, status == kP2pStatusOk};
}

Result<std::uint64_t> Device::nvlink_errors(unsigned link, NvLinkError which) const {
  unsigned long long n = 0;
  const int rc = call(SYMS.nvlink_error_counter, handle_, link, static_cast<int>(which), &n);
  return {rc, static_cast<std::uint64_t>(n)};
}

Result<NvLinkRemote> Device::nvlink_remote_type(unsigned link) const {
  int type = static_cast<int>(NvLinkRemote::kUnknown);
  const int rc = call(SYMS.nvlink_remote_type, handle_, link, &type);
  switch (type) {
    case 0: return {rc, NvLinkRemote::kGpu};
    case 1: return {rc, NvLinkRemote::kIbmNpu};
    case 2: return {rc, NvLinkRemote::kSwitch};
    default: return {rc, NvLinkRemote::kUnknown};
  }
}
Result<PciLocation> Device::nvlink_remote_pci(unsigned link) const {
  PciInfo info;
  const int rc = call(SYMS.nvlink_remote_pci, handle_, link, &info);
  return {rc, PciLocation{info.domain, info.bus, info.device}};
}

Result<double> Device::field_value(unsigned field_id, unsigned scope_id) const {
  FieldValue v;
  v.field_id = field_id;
  v.scope_id = scope_id;
  int rc = call(SYMS.field_values, handle_, 1, &v);
  if (rc == kSuccess) rc = v.nvml_return;
  if (rc != kSuccess) return {rc, 0.0};
  switch (v.value_type) {  // nvmlValueType_t
    case 0: return {rc, v.value.d};
    case 1: return {rc, static_cast<double>(v.value.ui)};
    case 2: return {rc, static_cast<double>(v.value.ul)};
    case 3: return {rc, static_cast<double>(v.value.ull)};
    case 4: return {rc, static_cast<double>(v.value.sll)};
    case 5: return {rc, static_cast<double>(v.value.si)};
    case 6: return {rc, static_cast<double>(v.value.us)};
    default: return {kUnknown, 0.0};  // a value type this reader does not know: never guessed
  }
}

Result<std::shared_ptr<XidWatch>> XidWatch::open(const Device& device) {
  const auto& s = device.library().symbols();
  std::shared_ptr<XidWatch> w(new XidWatch());
  w->lib_ = device.library().shared_from_this();
  int rc = call(s.event_set_create, &w->set_);
  if (rc != kSuccess) {
    w->set_ = nullptr;
    return {rc, nullptr};
  }
  rc = call(s.register_events, device.raw(), kEventXidCriticalError, w->set_);
  if (rc != kSuccess) return {rc, nullptr};  // the destructor frees the set
  return {kSuccess, w};
}

XidWatch::~XidWatch() {
  if (set_ && lib_) call(lib_->symbols().event_set_free, set_);
}

Result<unsigned long long> XidWatch::next(unsigned timeout_ms) {
  EventData data;
  // At least 1 ms: NVML does not say what a timeout of 0 means, and wrappers of it read 0 as "forever".
  const int rc = call(lib_->symbols().event_set_wait, set_, &data, std::max(1u, timeout_ms));
  if (rc == kSuccess && !(data.event_type & kEventXidCriticalError)) return {kTimeout, 0};  // not ours
  return {rc, data.event_data};
}

#undef SYMS

}  // namespace ceilings::nvml
