// A fake NVML for fault injection: the entry points ceilings resolves, answering from a JSON script
// named by CEILINGS_FAKE_NVML_SCRIPT (loaded through CEILINGS_NVML_LIBRARY). Feeds the self-test.
//
// Script: {"init": 0, "device_count": 1, "driver": "580.95.05",
//          "device": {"name": "...", "uuid": "...", "pci_bus_id": "..."},
//          "values": {"<key>": number | [first read, second read, ...]},   missing key -> NOT_SUPPORTED
//          "errors": {"<key>": nvml return code},   (also "handle": nvmlDeviceGetHandleByIndex_v2's answer)
//          "xid": [79, ...], "xid_register": 0}
// A top-level key not listed here (script_problem), or one of another type, fails nvmlInit_v2 with the reason on
// stderr; a value under "values" or "errors" it cannot read fails that one call.
// Keys are NVML's native units: ecc.enabled, ecc.{volatile|aggregate}[.{dram|sram}].{corrected|uncorrected},
// remap.{correctable_rows,uncorrectable_rows,pending,failure} (error key "remap"),
// remap.banks_{max,high,partial,low,none} (nvmlDeviceGetRowRemapperHistogram; error key "remap_histogram"),
// inforom.valid (nvmlDeviceValidateInforom: 1 success, 0 CORRUPTED_INFOROM; error key "inforom"),
// persistence_mode (nvmlDeviceGetPersistenceMode: 1 enabled, 0 disabled),
// sram.threshold_exceeded, sram.aggregate_uncorrected_{l2,sm,pcie,mcu,other} (nvmlDeviceGetSramEccErrorStatus, which
// answers NOT_SUPPORTED without sram.threshold_exceeded, the counts 0 where absent, and ARGUMENT_VERSION_MISMATCH
// unless the caller set the struct's version; error key "sram", e.g. 4 NO_PERMISSION as a non-root caller gets),
// repair.{channel_pending,tpc_pending} (nvmlDeviceGetRepairStatus, v1: NOT_SUPPORTED without
// repair.channel_pending, the other 0 where absent; ARGUMENT_VERSION_MISMATCH unless the caller set the version;
// error key "repair"; "repair_silent": true answers success writing nothing), memory.unrepairable
// (nvmlDeviceGetUnrepairableMemoryFlag_v1; error key "unrepairable"), laid out as the script's "unrepairable_layout"
// says: "versioned" (the default: a version word, checked, then the flag, as nvidia-ml-py and DCGM pass it), "header" (nvml.h's one word, the flag, nothing checked), "header_checked" (nvml.h's,
// ARGUMENT_VERSION_MISMATCH unless the word is 0), "reject" (ARGUMENT_VERSION_MISMATCH whatever is passed) or
// "silent" (success, nothing written),
// cc.feature (nvmlSystemGetConfComputeState's and ...Settings' ccFeature: 1 confidential computing on),
// cc.multi_gpu_mode (nvmlSystemGetConfComputeSettings: 1 protected PCIe, 2 NVLink encryption; error key "cc_settings"),
// cc.devtools_mode (its devToolsMode: 1 on),
// fabric.{state,status,health_mask} (nvmlDeviceGetGpuFabricInfoV, v2),
// mig.current, mig.pending (nvmlDeviceGetMigMode: 1 enabled, 0 disabled; pending as current where absent; error key
// "mig"),
// retired_pages.{single_bit,double_bit,pending}, pcie.{gen,width,max_gen,max_width,gpu_max_gen,replays},
// clocks.{sm_mhz,mem_mhz,max_sm_mhz,max_mem_mhz,event_reasons}, throttle.{power,thermal,reliability,board_limit}_ns
// (fields 74-79 and nvmlDeviceGetViolationStatus; error keys violation_fields, violation_status),
// power.{usage_mw,limit_mw,enforced_limit_mw,default_limit_mw,instant_mw (field 186)}, energy.total_mj,
// temperature.{gpu_c,slowdown_c,shutdown_c,memory_c,memory_max_c} (error keys temperature_v, temperature_legacy),
// device_count, p2p.nvlink_status (nvmlDeviceGetP2PStatus with the NVLink index, every pair),
// nvlink.<link>.state (1 up, 0 down), nvlink.<link>.{replay,recovery,crc_flit,crc_data}; "nvlink_links": N
// links answer, links past N answer "nvlink_absent_code" (default INVALID_ARGUMENT); a link without a state
// key answers NOT_SUPPORTED (none at all: a GPU without NVLink); nvlink.<link>.remote_type (0 GPU, 2 NVSwitch)
// and nvlink.<link>.remote_{domain,bus,device} (nvmlDeviceGetNvLinkRemotePciInfo_v2; domain and device 0 where
// absent, the bus required) describe a link's far end.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

#include <nlohmann/json.hpp>

namespace {

using json = nlohmann::json;
constexpr int kSuccess = 0, kUninitialized = 1, kInvalidArgument = 2, kNotSupported = 3, kTimeout = 10,
              kUnknown = 999;

std::mutex mutex;
json script;
bool initialised = false;
std::map<std::string, std::size_t> reads;  // per key: how often it was read
std::size_t next_xid = 0;

int code_for(const std::string& key) {
  if (script.contains("errors") && script["errors"].contains(key))
    return script["errors"][key].is_number_integer() ? script["errors"][key].get<int>() : kUnknown;
  return kSuccess;
}

// The scripted value of `key` (the k-th element of an array on the k-th read), or NOT_SUPPORTED.
template <class T>
int answer(const std::string& key, T* out, const char* error_key = nullptr) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!initialised) return kUninitialized;
  if (!out) return kInvalidArgument;
  if (int rc = code_for(error_key ? error_key : key.c_str()); rc != kSuccess) return rc;
  if (!script.contains("values") || !script["values"].contains(key)) return kNotSupported;
  const json& v = script["values"][key];
  const std::size_t k = reads[key]++;
  // A script this fake cannot read (an empty array, a string, a negative count read as unsigned) is an NVML error,
  // never a crash of the process that loaded it (review 103: an empty array was a segfault in `ceilings health`).
  if (v.is_array() && v.empty()) return kUnknown;
  const json& pick = v.is_array() ? v[std::min(k, v.size() - 1)] : v;
  if (!pick.is_number()) return kUnknown;
  if (std::is_unsigned<T>::value && pick.is_number_integer() && !pick.is_number_unsigned()) return kUnknown;
  *out = pick.is_number_unsigned() ? static_cast<T>(pick.get<unsigned long long>()) : static_cast<T>(pick.get<double>());
  return kSuccess;
}

int copy_string(const std::string& s, char* out, unsigned length) {
  if (!out || s.size() + 1 > length) return 7;  // NVML_ERROR_INSUFFICIENT_SIZE
  std::memcpy(out, s.c_str(), s.size() + 1);
  return kSuccess;
}

// Why the script's top level is not one the fake reads ("" where it is): a key it does not know (a misspelling that
// would silently answer as the default) or a value of another type than the one read (review 104: a string where a
// number is read threw out of the library, which aborts the caller). "values" and "errors" are read per key, and
// device_count is the count call's to answer (a bad one fails that call, not the init).
std::string script_problem(const json& s) {
  if (!s.is_object()) return "the script is not a JSON object";
  using Check = bool (*)(const json&);
  const auto integer = [](const json& v) { return v.is_number_integer(); };
  const auto count = [](const json& v) { return v.is_number_unsigned(); };
  const auto text = [](const json& v) { return v.is_string(); };
  const auto object = [](const json& v) { return v.is_object(); };
  const std::map<std::string, std::pair<Check, const char*>> known{
      {"init", {integer, "an integer (nvmlInit_v2's return code)"}},
      {"driver", {text, "a string"}},
      {"device_count", {[](const json&) { return true; }, ""}},
      {"device", {[](const json& v) {
                    return v.is_object() && std::all_of(v.begin(), v.end(), [](const json& f) { return f.is_string(); });
                  },
                  "an object of strings (name, uuid, pci_bus_id)"}},
      {"values", {object, "an object"}},
      {"errors", {object, "an object"}},
      {"xid", {[](const json& v) {
                 return v.is_array() && std::all_of(v.begin(), v.end(), [](const json& x) { return x.is_number_unsigned(); });
               },
               "an array of XID numbers"}},
      {"xid_register", {integer, "an integer (a return code)"}},
      {"sm_clock_delay_ms", {count, "a whole number of milliseconds"}},
      {"repair_silent", {[](const json& v) { return v.is_boolean(); }, "true or false"}},
      {"unrepairable_layout", {text, "a string"}},
      {"nvlink_links", {count, "a whole number"}},
      {"nvlink_absent_code", {integer, "an integer (a return code)"}},
      {"field_value_type", {integer, "an integer (nvmlValueType_t)"}},
      {"kernel_log", {text, "a string (read by the self-test, not by this library)"}}};
  for (const auto& [key, value] : s.items()) {
    const auto k = known.find(key);
    if (k == known.end()) return "unknown key \"" + key + "\" (misspelt?)";
    if (!k->second.first(value)) return "\"" + key + "\" must be " + k->second.second;
  }
  return "";
}

std::string device_field(const char* key, const char* fallback) {
  if (script.contains("device") && script["device"].contains(key)) return script["device"][key].get<std::string>();
  return fallback;
}

const char* kind(int counter) { return counter ? "aggregate" : "volatile"; }
const char* what(int type) { return type ? "uncorrected" : "corrected"; }

}  // namespace

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

FAKE_EXPORT int nvmlInit_v2() {
  std::lock_guard<std::mutex> lock(mutex);
  const char* path = std::getenv("CEILINGS_FAKE_NVML_SCRIPT");
  if (!path) {
    std::fprintf(stderr, "fake NVML: CEILINGS_FAKE_NVML_SCRIPT is not set\n");
    return kUnknown;
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  try {
    script = json::parse(text.str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake NVML: cannot read script %s: %s\n", path, e.what());
    return kUnknown;
  }
  if (const std::string why = script_problem(script); !why.empty()) {
    std::fprintf(stderr, "fake NVML: cannot use script %s: %s\n", path, why.c_str());
    script = json::object();
    return kUnknown;
  }
  const int rc = script.value("init", 0);
  initialised = rc == kSuccess;
  reads.clear();
  next_xid = 0;
  return rc;
}

FAKE_EXPORT int nvmlShutdown() {
  std::lock_guard<std::mutex> lock(mutex);
  initialised = false;
  return kSuccess;
}

FAKE_EXPORT const char* nvmlErrorString(int code) {
  switch (code) {
    case 0: return "Success";
    case 1: return "Uninitialized";
    case 2: return "Invalid Argument";
    case 3: return "Not Supported";
    case 4: return "Insufficient Permissions";
    case 6: return "Not Found";
    case 8: return "Insufficient External Power";
    case 9: return "Driver Not Loaded";
    case 10: return "Timeout";
    case 11: return "Interrupt request issue";
    case 15: return "GPU is lost";
    default: return "Unknown Error";
  }
}

FAKE_EXPORT int nvmlSystemGetDriverVersion(char* out, unsigned length) {
  return copy_string(script.value("driver", std::string("580.00.00-fake")), out, length);
}

// nvmlConfComputeSystemState_t: environment, ccFeature (key cc.feature: 1 on, 0 off; NOT_SUPPORTED where absent),
// devToolsMode.
FAKE_EXPORT int nvmlSystemGetConfComputeState(unsigned* state) {
  if (!state) return kInvalidArgument;
  state[0] = state[2] = 0;
  return answer("cc.feature", &state[1], "cc");
}
// nvmlSystemConfComputeSettings_v1_t: version (checked), environment, ccFeature (cc.feature), devToolsMode
// (cc.devtools_mode, 0 where absent), multiGpuMode (cc.multi_gpu_mode: 1 protected PCIe, 2 NVLink encryption; 0 where
// absent); error key "cc_settings".
FAKE_EXPORT int nvmlSystemGetConfComputeSettings(unsigned* s) {
  if (!s) return kInvalidArgument;
  if (s[0] != (20u | (1u << 24))) return 25;
  s[1] = s[3] = s[4] = 0;
  const int rc = answer("cc.feature", &s[2], "cc_settings");
  if (rc == kSuccess) answer("cc.multi_gpu_mode", &s[4], "cc_settings");
  if (rc == kSuccess) answer("cc.devtools_mode", &s[3], "cc_settings");
  return rc;
}

FAKE_EXPORT int nvmlDeviceGetCount_v2(unsigned* count) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!initialised) return kUninitialized;
  if (int rc = code_for("device_count"); rc != kSuccess) return rc;
  if (script.contains("device_count") && !script["device_count"].is_number_unsigned()) return kUnknown;  // -1, "2"
  *count = script.value("device_count", 1u);
  return kSuccess;
}

FAKE_EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** handle) {
  if (index >= script.value("device_count", 1u)) return kInvalidArgument;
  if (int rc = code_for("handle"); rc != kSuccess) return rc;  // error key "handle": e.g. 15, a GPU that is lost
  *handle = reinterpret_cast<void*>(static_cast<std::uintptr_t>(index + 1));
  return kSuccess;
}

FAKE_EXPORT int nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, void** handle) {
  if (device_field("pci_bus_id", "00000000:19:00.0") != bus_id) return 6;
  if (int rc = code_for("handle"); rc != kSuccess) return rc;  // as by index: the GPU at that bus id is lost
  *handle = reinterpret_cast<void*>(std::uintptr_t{1});
  return kSuccess;
}

FAKE_EXPORT int nvmlDeviceGetName(void*, char* out, unsigned length) {
  return copy_string(device_field("name", "NVIDIA H200"), out, length);
}
FAKE_EXPORT int nvmlDeviceGetUUID(void*, char* out, unsigned length) {
  if (int rc = code_for("uuid"); rc != kSuccess) return rc;
  return copy_string(device_field("uuid", "GPU-fake"), out, length);
}
// nvmlPciInfo_t
struct PciInfo {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};
FAKE_EXPORT int nvmlDeviceGetPciInfo_v3(void*, PciInfo* pci) {
  if (!pci) return kInvalidArgument;
  std::memset(pci, 0, sizeof *pci);
  const std::string id = device_field("pci_bus_id", "00000000:19:00.0");
  std::snprintf(pci->bus_id, sizeof pci->bus_id, "%s", id.c_str());
  std::sscanf(id.c_str(), "%x:%x:%x", &pci->domain, &pci->bus, &pci->device);
  return kSuccess;
}

FAKE_EXPORT int nvmlDeviceGetClockInfo(void*, unsigned type, unsigned* mhz) {
  // "sm_clock_delay_ms": an SM clock query as slow as a loaded driver's, so a test can catch a reading in flight.
  if (type != 2 && script.contains("sm_clock_delay_ms"))
    std::this_thread::sleep_for(std::chrono::milliseconds(script.at("sm_clock_delay_ms").get<int>()));
  return answer(type == 2 ? "clocks.mem_mhz" : "clocks.sm_mhz", mhz);
}
FAKE_EXPORT int nvmlDeviceGetMaxClockInfo(void*, unsigned type, unsigned* mhz) {
  return answer(type == 2 ? "clocks.max_mem_mhz" : "clocks.max_sm_mhz", mhz);
}
FAKE_EXPORT int nvmlDeviceGetPowerUsage(void*, unsigned* mw) { return answer("power.usage_mw", mw); }
FAKE_EXPORT int nvmlDeviceGetTotalEnergyConsumption(void*, unsigned long long* mj) {
  return answer("energy.total_mj", mj);
}
FAKE_EXPORT int nvmlDeviceGetEnforcedPowerLimit(void*, unsigned* mw) { return answer("power.enforced_limit_mw", mw); }
FAKE_EXPORT int nvmlDeviceGetPowerManagementLimit(void*, unsigned* mw) { return answer("power.limit_mw", mw); }
FAKE_EXPORT int nvmlDeviceGetPowerManagementDefaultLimit(void*, unsigned* mw) {
  return answer("power.default_limit_mw", mw);
}
// Both temperature calls answer "temperature.gpu_c"; each fails alone through its own error key
// ("temperature_v", "temperature_legacy"). The versioned one checks the struct's version as NVML does.
FAKE_EXPORT int nvmlDeviceGetTemperature(void*, int, unsigned* c) {
  return answer("temperature.gpu_c", c, "temperature_legacy");
}
struct FakeTemperatureV1 {
  unsigned version;
  int sensor;
  int celsius;
};
FAKE_EXPORT int nvmlDeviceGetTemperatureV(void*, FakeTemperatureV1* t) {
  if (!t) return kInvalidArgument;
  if (t->version != (sizeof(FakeTemperatureV1) | (1u << 24))) return 25;  // NVML_ERROR_ARGUMENT_VERSION_MISMATCH
  if (t->sensor != 0) return kInvalidArgument;                            // only NVML_TEMPERATURE_GPU exists
  return answer("temperature.gpu_c", &t->celsius, "temperature_v");
}
FAKE_EXPORT int nvmlDeviceGetTemperatureThreshold(void*, int type, unsigned* c) {
  return answer(type == 0   ? "temperature.shutdown_c"
                : type == 1 ? "temperature.slowdown_c"
                : type == 2 ? "temperature.memory_max_c"
                            : "temperature.other_c",
                c);
}
FAKE_EXPORT int nvmlDeviceGetCurrentClocksEventReasons(void*, unsigned long long* bits) {
  return answer("clocks.event_reasons", bits);
}
FAKE_EXPORT int nvmlDeviceGetEccMode(void*, int* current, int* pending) {
  const int rc = answer("ecc.enabled", current);
  if (rc == kSuccess && pending) *pending = *current;
  return rc;
}
FAKE_EXPORT int nvmlDeviceValidateInforom(void*) {
  unsigned valid = 0;
  const int rc = answer("inforom.valid", &valid, "inforom");
  return rc != kSuccess ? rc : valid ? kSuccess : 14;  // NVML_ERROR_CORRUPTED_INFOROM
}
FAKE_EXPORT int nvmlDeviceGetMigMode(void*, unsigned* current, unsigned* pending) {
  if (!pending) return kInvalidArgument;
  const int rc = answer("mig.current", current, "mig");
  if (rc == kSuccess && answer("mig.pending", pending, "mig") == kNotSupported) *pending = *current;
  return rc;
}
FAKE_EXPORT int nvmlDeviceGetPersistenceMode(void*, int* mode) { return answer("persistence_mode", mode); }
// nvmlEccSramErrorStatus_v1_t, laid out as nvml.h declares it (104 bytes).
struct FakeEccSramErrorStatusV1 {
  unsigned version;
  unsigned long long aggregate_unc_parity, aggregate_unc_sec_ded, aggregate_cor;
  unsigned long long volatile_unc_parity, volatile_unc_sec_ded, volatile_cor;
  unsigned long long bucket_l2, bucket_sm, bucket_pcie, bucket_mcu, bucket_other;
  unsigned threshold_exceeded;
};
static_assert(sizeof(FakeEccSramErrorStatusV1) == 104, "nvmlEccSramErrorStatus_v1_t is 104 bytes");
FAKE_EXPORT int nvmlDeviceGetSramEccErrorStatus(void*, FakeEccSramErrorStatusV1* st) {
  if (!st) return kInvalidArgument;
  if (st->version != (sizeof(FakeEccSramErrorStatusV1) | (1u << 24))) return 25;  // NVML_ERROR_ARGUMENT_VERSION_MISMATCH
  const unsigned version = st->version;
  std::memset(st, 0, sizeof *st);
  st->version = version;
  const int rc = answer("sram.threshold_exceeded", &st->threshold_exceeded, "sram");
  if (rc != kSuccess) return rc;
  std::pair<const char*, unsigned long long*> buckets[] = {
      {"sram.aggregate_uncorrected_l2", &st->bucket_l2},     {"sram.aggregate_uncorrected_sm", &st->bucket_sm},
      {"sram.aggregate_uncorrected_pcie", &st->bucket_pcie}, {"sram.aggregate_uncorrected_mcu", &st->bucket_mcu},
      {"sram.aggregate_uncorrected_other", &st->bucket_other}};
  for (auto& [key, into] : buckets) answer(key, into, "sram");  // a count the script leaves out stays 0
  return kSuccess;
}
// nvmlRepairStatus_v1_t (12 bytes): the version, then the channel and TPC repairs pending.
FAKE_EXPORT int nvmlDeviceGetRepairStatus(void*, unsigned* st) {
  if (!st) return kInvalidArgument;
  if (st[0] != (12u | (1u << 24))) return 25;  // NVML_ERROR_ARGUMENT_VERSION_MISMATCH
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (initialised && script.value("repair_silent", false)) return kSuccess;  // success, nothing written
  }
  st[1] = st[2] = 0;
  const int rc = answer("repair.channel_pending", &st[1], "repair");
  if (rc != kSuccess) return rc;
  answer("repair.tpc_pending", &st[2], "repair");  // 0 where the script leaves it out
  return kSuccess;
}
FAKE_EXPORT int nvmlDeviceGetUnrepairableMemoryFlag_v1(void*, unsigned* st) {
  if (!st) return kInvalidArgument;
  std::string layout;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!initialised) return kUninitialized;
    layout = script.value("unrepairable_layout", std::string("versioned"));
  }
  if (layout == "silent") return kSuccess;
  if (layout == "versioned" && st[0] != (8u | (1u << 24))) return 25;
  if ((layout == "header_checked" && st[0] != 0) || layout == "reject") return 25;
  unsigned flag = 0;
  const int rc = answer("memory.unrepairable", &flag, "unrepairable");
  if (rc != kSuccess) return rc;
  st[layout == "versioned" ? 1 : 0] = flag;
  return kSuccess;
}
// nvmlGpuFabricInfo_v2_t, laid out as nvml.h declares it (36 bytes): keys fabric.state (NOT_SUPPORTED where absent),
// fabric.status and fabric.health_mask (0 where absent); error key "fabric"; ARGUMENT_VERSION_MISMATCH unless the caller
// set version 2.
struct FakeGpuFabricInfoV2 {
  unsigned version;
  unsigned char cluster_uuid[16];
  int status;
  unsigned clique_id;
  unsigned char state;
  unsigned health_mask;
};
static_assert(sizeof(FakeGpuFabricInfoV2) == 36, "nvmlGpuFabricInfo_v2_t is 36 bytes");
FAKE_EXPORT int nvmlDeviceGetGpuFabricInfoV(void*, FakeGpuFabricInfoV2* info) {
  if (!info) return kInvalidArgument;
  if (info->version != (sizeof(FakeGpuFabricInfoV2) | (2u << 24))) return 25;  // NVML_ERROR_ARGUMENT_VERSION_MISMATCH
  const unsigned version = info->version;
  std::memset(info, 0, sizeof *info);
  info->version = version;
  unsigned state = 0;
  if (const int rc = answer("fabric.state", &state, "fabric"); rc != kSuccess) return rc;
  info->state = static_cast<unsigned char>(state);
  answer("fabric.status", &info->status, "fabric");
  answer("fabric.health_mask", &info->health_mask, "fabric");
  return kSuccess;
}
FAKE_EXPORT int nvmlDeviceGetCurrPcieLinkGeneration(void*, unsigned* v) { return answer("pcie.gen", v); }
FAKE_EXPORT int nvmlDeviceGetCurrPcieLinkWidth(void*, unsigned* v) { return answer("pcie.width", v); }
FAKE_EXPORT int nvmlDeviceGetMaxPcieLinkGeneration(void*, unsigned* v) { return answer("pcie.max_gen", v); }
FAKE_EXPORT int nvmlDeviceGetGpuMaxPcieLinkGeneration(void*, unsigned* v) { return answer("pcie.gpu_max_gen", v); }
FAKE_EXPORT int nvmlDeviceGetMaxPcieLinkWidth(void*, unsigned* v) { return answer("pcie.max_width", v); }
FAKE_EXPORT int nvmlDeviceGetPcieReplayCounter(void*, unsigned* v) { return answer("pcie.replays", v); }

FAKE_EXPORT int nvmlDeviceGetTotalEccErrors(void*, int type, int counter, unsigned long long* n) {
  return answer(std::string("ecc.") + kind(counter) + "." + what(type), n);
}
FAKE_EXPORT int nvmlDeviceGetMemoryErrorCounter(void*, int type, int counter, int location, unsigned long long* n) {
  const char* where = location == 2 ? "dram" : location == 7 ? "sram" : "other";
  return answer(std::string("ecc.") + kind(counter) + "." + where + "." + what(type), n);
}
FAKE_EXPORT int nvmlDeviceGetRemappedRows(void*, unsigned* corr, unsigned* unc, unsigned* pending, unsigned* failure) {
  int rc = answer("remap.correctable_rows", corr, "remap");
  if (rc == kSuccess) rc = answer("remap.uncorrectable_rows", unc, "remap");
  if (rc == kSuccess) rc = answer("remap.pending", pending, "remap");
  if (rc == kSuccess) rc = answer("remap.failure", failure, "remap");
  return rc;
}
FAKE_EXPORT int nvmlDeviceGetRowRemapperHistogram(void*, unsigned* v) {  // max, high, partial, low, none
  int rc = kSuccess;
  for (const char* key : {"max", "high", "partial", "low", "none"})
    if (rc == kSuccess) rc = answer(std::string("remap.banks_") + key, v++, "remap_histogram");
  return rc;
}
FAKE_EXPORT int nvmlDeviceGetRetiredPages(void*, int cause, unsigned* count, unsigned long long*) {
  return answer(cause ? "retired_pages.double_bit" : "retired_pages.single_bit", count);
}
FAKE_EXPORT int nvmlDeviceGetRetiredPagesPendingStatus(void*, int* state) {
  return answer("retired_pages.pending", state);
}

struct ViolationTime {
  unsigned long long reference_time, violation_time;
};
const char* violation_key(int policy) {
  return policy == 0   ? "throttle.power_ns"
         : policy == 1 ? "throttle.thermal_ns"
         : policy == 3 ? "throttle.board_limit_ns"
         : policy == 5 ? "throttle.reliability_ns"
                       : "throttle.other_ns";
}
// The deprecated call (error key "violation_status"); fields 74-79 answer the same keys (see below).
FAKE_EXPORT int nvmlDeviceGetViolationStatus(void*, int policy, ViolationTime* t) {
  if (!t) return kInvalidArgument;
  t->reference_time = 0;
  return answer(violation_key(policy), &t->violation_time, "violation_status");
}

FAKE_EXPORT int nvmlDeviceGetNvLinkState(void*, unsigned link, int* state) {
  if (link >= script.value("nvlink_links", 18u)) return script.value("nvlink_absent_code", kInvalidArgument);
  return answer("nvlink." + std::to_string(link) + ".state", state);
}
FAKE_EXPORT int nvmlDeviceGetNvLinkErrorCounter(void*, unsigned link, int counter, unsigned long long* n) {
  static const char* names[] = {"replay", "recovery", "crc_flit", "crc_data"};
  if (link >= script.value("nvlink_links", 18u) || counter < 0 || counter > 3) return kInvalidArgument;
  return answer("nvlink." + std::to_string(link) + "." + names[counter], n);
}

// Field values: field 82 (memory temperature) answers "temperature.memory_c", 186 "power.instant_mw" and 230 (the GPU
// recovery action) "recovery.action" as the
// value type the script's "field_value_type" names (nvmlValueType_t; default 1, unsigned int); fields 74-79
// (NVML_FI_DEV_PERF_POLICY_*) the throttle.*_ns keys as unsigned long long, unless the error key
// "violation_fields" gives their return code; others NOT_SUPPORTED.
struct FieldValue {
  unsigned field_id, scope_id;
  long long timestamp, latency_us;
  int value_type, nvml_return;
  union {
    double d;
    unsigned ui;
    unsigned long long ull;
    long long sll;
    int si;
  } value;
};
FAKE_EXPORT int nvmlDeviceGetFieldValues(void*, int count, FieldValue* values) {
  if (count < 0 || (count > 0 && !values)) return kInvalidArgument;
  if (int rc = code_for("field_values"); rc != kSuccess) return rc;
  for (int i = 0; i < count; ++i) {
    FieldValue& v = values[i];
    if (v.field_id >= 74 && v.field_id <= 79) {
      v.value_type = 3;
      v.nvml_return = code_for("violation_fields");
      if (v.nvml_return == kSuccess) v.nvml_return = answer(violation_key(static_cast<int>(v.field_id) - 74), &v.value.ull);
      continue;
    }
    const char* key = v.field_id == 82    ? "temperature.memory_c"
                      : v.field_id == 186 ? "power.instant_mw"
                      : v.field_id == 230 ? "recovery.action"
                                          : nullptr;
    if (!key) {
      v.nvml_return = kNotSupported;
      continue;
    }
    double t = 0;
    v.nvml_return = answer(key, &t);
    v.value_type = script.value("field_value_type", 1);
    switch (v.value_type) {
      case 0: v.value.d = t; break;
      case 4: v.value.sll = static_cast<long long>(t); break;
      case 5: v.value.si = static_cast<int>(t); break;
      default: v.value.ui = static_cast<unsigned>(t); break;
    }
  }
  return kSuccess;
}

// Events: one fake set; each wait hands out the next scripted XID, then times out.
struct EventData {
  void* device;
  unsigned long long event_type, event_data;
  unsigned gpu_instance_id, compute_instance_id;
};
static int fake_set;
FAKE_EXPORT int nvmlEventSetCreate(void** set) {
  if (int rc = code_for("xid_create"); rc != kSuccess) return rc;
  *set = &fake_set;
  return kSuccess;
}
FAKE_EXPORT int nvmlDeviceRegisterEvents(void*, unsigned long long, void*) {
  return script.value("xid_register", code_for("xid_register"));
}
FAKE_EXPORT int nvmlEventSetWait_v2(void*, EventData* data, unsigned timeout_ms) {
  if (timeout_ms == 0) {  // what 0 means is not documented (wrappers read it as "forever"): never ask for it
    std::fprintf(stderr, "fake NVML: nvmlEventSetWait_v2 called with a timeout of 0\n");
    return kUnknown;
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (int rc = code_for("xid_wait"); rc != kSuccess) return rc;
    if (script.contains("xid") && next_xid < script["xid"].size()) {
      *data = EventData{reinterpret_cast<void*>(std::uintptr_t{1}), 0x8ULL,
                        script["xid"][next_xid++].get<unsigned long long>(), 0, 0};
      return kSuccess;
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(std::min(timeout_ms, 20u)));
  return kTimeout;
}
FAKE_EXPORT int nvmlEventSetFree(void*) { return kSuccess; }
// NVLink between two GPUs: "p2p.nvlink_status" (nvmlGpuP2PStatus_t: 0 connected, 5 not), for every pair.
FAKE_EXPORT int nvmlDeviceGetNvLinkRemoteDeviceType(void*, unsigned link, int* type) {
  if (link >= script.value("nvlink_links", 18u)) return script.value("nvlink_absent_code", kInvalidArgument);
  return answer("nvlink." + std::to_string(link) + ".remote_type", type);
}
FAKE_EXPORT int nvmlDeviceGetNvLinkRemotePciInfo_v2(void*, unsigned link, PciInfo* pci) {
  if (link >= script.value("nvlink_links", 18u)) return script.value("nvlink_absent_code", kInvalidArgument);
  if (!pci) return kInvalidArgument;
  std::memset(pci, 0, sizeof *pci);
  const std::string at = "nvlink." + std::to_string(link) + ".remote_";
  if (int rc = answer(at + "bus", &pci->bus); rc != kSuccess) return rc;
  (void)answer(at + "domain", &pci->domain);  // 0 where the script leaves them out
  (void)answer(at + "device", &pci->device);
  std::snprintf(pci->bus_id, sizeof pci->bus_id, "%08X:%02X:%02X.0", pci->domain, pci->bus, pci->device);
  return kSuccess;
}

FAKE_EXPORT int nvmlDeviceGetP2PStatus(void*, void*, int index, int* status) {
  if (index != 2) return kNotSupported;  // only NVML_P2P_CAPS_INDEX_NVLINK is asked
  return answer("p2p.nvlink_status", status);
}
