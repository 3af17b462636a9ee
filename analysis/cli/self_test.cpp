// `ceilings self-test`: fault injection. Runs `ceilings health` against the scripted fake NVML and
// `ceilings qualify` on a synthetic profile, injecting one fault per case, and reports faults
// injected, detected, false passes (must be 0) and time to verdict. Exit 0 only if all are caught.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>

#include "ceilings/error.hpp"
#include "ceilings/json_fields.hpp"
#include "ceilings/kernel_log.hpp"
#include "ceilings/profile.hpp"
#include "ceilings/subprocess.hpp"
#include "ceilings/units.hpp"
#include "subcommand.hpp"

namespace {

namespace fs = std::filesystem;
using ceilings::json;

constexpr const char* kUuid = "GPU-5e1f7e57-0000-4000-8000-000000000001";

// The answers of a healthy H200 (NVML's native units); each case edits a copy.
json healthy_script() {
  return {{"init", 0},
          {"device_count", 1},
          {"driver", "580.95.05"},
          {"device", {{"name", "NVIDIA H200"}, {"uuid", kUuid}, {"pci_bus_id", "00000000:19:00.0"}}},
          {"values",
           {{"ecc.enabled", 1},
            {"inforom.valid", 1},
            {"persistence_mode", 1},
            {"sram.threshold_exceeded", 0},
            {"mig.current", 0},
            {"recovery.action", 0},
            {"ecc.volatile.corrected", 0},
            {"ecc.volatile.uncorrected", 0},
            {"ecc.aggregate.corrected", 0},
            {"ecc.aggregate.uncorrected", 0},
            {"ecc.volatile.dram.corrected", 0},
            {"ecc.volatile.dram.uncorrected", 0},
            {"ecc.volatile.sram.corrected", 0},
            {"ecc.volatile.sram.uncorrected", 0},
            {"ecc.aggregate.dram.corrected", 0},
            {"ecc.aggregate.dram.uncorrected", 0},
            {"ecc.aggregate.sram.corrected", 0},
            {"ecc.aggregate.sram.uncorrected", 0},
            {"remap.correctable_rows", 0},
            {"remap.uncorrectable_rows", 0},
            {"remap.pending", 0},
            {"remap.failure", 0},
            {"repair.channel_pending", 0},
            {"repair.tpc_pending", 0},
            {"pcie.gen", 5},
            {"pcie.width", 16},
            {"pcie.max_gen", 5},
            {"pcie.max_width", 16},
            {"pcie.gpu_max_gen", 5},
            {"pcie.replays", 0},
            {"clocks.sm_mhz", 1980},
            {"clocks.mem_mhz", 3201},
            {"clocks.max_sm_mhz", 1980},
            {"clocks.max_mem_mhz", 3201},
            {"clocks.event_reasons", 0},
            {"throttle.power_ns", 0},
            {"throttle.thermal_ns", 0},
            {"throttle.reliability_ns", 0},
            {"throttle.board_limit_ns", 0},
            {"power.usage_mw", 118000},
            {"power.limit_mw", 700000},
            {"power.enforced_limit_mw", 700000},
            {"temperature.gpu_c", 34},
            {"temperature.slowdown_c", 87},
            {"temperature.shutdown_c", 92},
            {"temperature.memory_c", 48},
            {"temperature.memory_max_c", 95}}},
          {"xid", json::array()}};
}

json ceiling(const std::string& name, double value, const std::string& unit, double datasheet, double sm_hz) {
  return {{"name", name},
          {"value", value},
          {"unit", unit},
          {"cv", 0.004},
          {"samples", 20},
          {"datasheet", datasheet},
          {"verified", true},
          {"throttled", false},
          {"telemetry", {{"sm_clock_hz", sm_hz}, {"mem_clock_hz", 3.201e9}, {"power_w", 600}, {"temp_c", 55}}},
          {"detail", {{"throttle_reasons", 0}}}};
}

// A synthetic healthy H200 profile (plausible numbers, not a measurement) whose health section
// comes from `ceilings health --json` against the fake.
json healthy_profile() {
  return {{"schema", ceilings::kProfileSchema},
          {"note", "synthetic self-test profile, not a measurement"},
          {"created", "2026-11-30T12:00:00Z"},
          {"tool", {{"version", "self-test"}, {"git", ""}}},
          {"host", {{"hostname", "self-test"}, {"cpu", ""}, {"numa_node", 0}}},
          {"device",
           {{"index", 0}, {"name", "NVIDIA H200"}, {"uuid", kUuid}, {"pci_bus_id", "00000000:19:00.0"},
            {"compute_capability", "9.0"}, {"sm_count", 132}, {"memory_bytes", 150754820096LL},
            {"l2_bytes", 62914560}, {"ecc", true}, {"clocks_max_hz", {{"sm", 1.98e9}, {"memory", 3.201e9}}},
            {"power_limit_w", 700}, {"pcie", {{"gen", 5}, {"width", 16}, {"max_gen", 5}, {"max_width", 16}}}}},
          {"ceilings",
           {ceiling("hbm.copy", 4.35e12, "B/s", 4.8e12, 1.98e9), ceiling("gemm.bf16", 7.6e14, "FLOP/s", 9.89e14, 1.83e9),
            ceiling("pcie.h2d", 5.5e10, "B/s", 6.3e10, 1.98e9)}},
          {"skipped", json::array()},
          {"errors", json::array()}};
}

// An HGX-style GPU: 18 NVLinks, all up, with a few old errors from before the run (not faults).
void with_nvlinks(json& script) {
  script["nvlink_links"] = 18;
  for (int link = 0; link < 18; ++link) {
    const std::string k = "nvlink." + std::to_string(link) + ".";
    script["values"][k + "state"] = 1;
    script["values"][k + "remote_type"] = 2;  // an HGX baseboard: every link goes to an NVSwitch
    script["values"][k + "replay"] = 2;
    script["values"][k + "recovery"] = 0;
    script["values"][k + "crc_flit"] = 40;
    script["values"][k + "crc_data"] = 3;
  }
}

struct Case {
  std::string name;
  std::string fault;                       // what was injected
  std::function<void(json& script)> nvml;  // edits the fake's script
  std::function<void(json& profile)> profile;
  std::function<std::string(const std::string& profile_text)> corrupt;  // replaces the file's text
  std::string rules;                       // a rules file's text ("" = defaults)
  std::string no_library;                  // CEILINGS_NVML_LIBRARY points here instead
  int expect_health = 0;                   // exit code of `ceilings health` (when the fault stops it there)
  int expect_exit = 0;                     // exit code of the verdict
  std::string expect_text;                 // the reason the verdict must name
  bool control = false;                    // a healthy case: must pass
  std::string expect_row{};                // the verdict's row (its rule) that must fail naming expect_text
};

std::vector<Case> matrix() {
  std::vector<Case> m;
  // `row`: the verdict's row the fault is for, which must fail with the case's text (review 104: the text in any
  // failing row had counted, so a fault caught by another check's row hid the check of its own that broke).
  auto add = [&](Case c, const char* row = "") {
    c.expect_row = row;
    m.push_back(std::move(c));
  };
  add({"healthy node", "nothing (control)", nullptr, nullptr, nullptr, "", "", 0, 0, "", true});
  add({"healthy node, custom rules", "nothing (control, rules file)", nullptr, nullptr, nullptr,
       R"({"schema":"ceilings.rules/1","ceilings":{"hbm.copy":{"min":"4.2 TB/s"}},"baseline_tolerance":"5%"})", "", 0, 0,
       "", true});
  add({"NVML library missing", "CEILINGS_NVML_LIBRARY names no library", nullptr, nullptr, nullptr, "",
       "/nonexistent/libnvidia-ml.so.1", 3, 3, "NVML is not available"});
  add({"nvmlInit fails", "nvmlInit returns DRIVER_NOT_LOADED", [](json& s) { s["init"] = 9; }, nullptr, nullptr, "", "",
       3, 3, "nvmlInit failed"});
  add({"no GPU", "device count 0", [](json& s) { s["device_count"] = 0; }, nullptr, nullptr, "", "", 3, 3,
       "sees no GPU"});
  add({"NVML call error", "nvmlDeviceGetRemappedRows returns UNKNOWN",
       [](json& s) { s["errors"]["remap"] = 999; }, nullptr, nullptr, "", "", 3, 3, "remap.pending (Unknown Error"});
  add({"sentinel temperature", "temperature 0xFFFFFFFF", [](json& s) { s["values"]["temperature.gpu_c"] = 4294967295LL; },
       nullptr, nullptr, "", "", 3, 3, "temperature.gpu_c (sentinel"});
  add({"zero clock", "SM clock 0 MHz", [](json& s) { s["values"]["clocks.sm_mhz"] = 0; }, nullptr, nullptr, "", "", 3,
       3, "clocks.sm_hz (impossible clock"});
  add({"uncorrected ECC", "volatile uncorrected ECC 0 -> 2 during the run",
       [](json& s) { s["values"]["ecc.volatile.uncorrected"] = {0, 2}; }, nullptr, nullptr, "", "", 1, 1,
       "uncorrected ECC error(s) during the run"}, "uncorrected ECC errors");
  add({"ECC disabled", "ECC mode off", [](json& s) { s["values"]["ecc.enabled"] = 0; }, nullptr, nullptr, "", "", 1, 1,
       "ECC is disabled"}, "ECC enabled");
  add({"pending row remap", "remap pending", [](json& s) { s["values"]["remap.pending"] = 1; }, nullptr, nullptr, "", "",
       1, 1, "row remap is pending"}, "row remapping");
  add({"failed row remap", "remap failure", [](json& s) { s["values"]["remap.failure"] = 1; }, nullptr, nullptr, "", "",
       1, 1, "row remap failed"}, "row remapping");
  add({"corrupted InfoROM", "nvmlDeviceValidateInforom returns CORRUPTED_INFOROM",
       [](json& s) { s["values"]["inforom.valid"] = 0; }, nullptr, nullptr, "", "", 1, 1, "InfoROM failed its checksums"}, "InfoROM");
  add({"SRAM error threshold", "nvmlDeviceGetSramEccErrorStatus: SRAM uncorrectable-error threshold exceeded, 2 in L2",
       [](json& s) {
         s["values"]["sram.threshold_exceeded"] = 1;
         s["values"]["sram.aggregate_uncorrected_l2"] = 2;
       },
       nullptr, nullptr, "", "", 1, 1, "SRAM uncorrectable-error threshold is exceeded"}, "SRAM error threshold");
  add({"unrepairable memory", "nvmlDeviceGetUnrepairableMemoryFlag_v1: memory the GPU cannot repair",
       [](json& s) { s["values"]["memory.unrepairable"] = 1; }, nullptr, nullptr, "", "", 1, 1,
       "NVML flags memory this GPU cannot repair"}, "memory repair");
  add({"pending channel repair", "nvmlDeviceGetRepairStatus: a memory channel repair pending",
       [](json& s) { s["values"]["repair.channel_pending"] = 1; }, nullptr, nullptr, "", "", 1, 1,
       "a memory channel repair is pending"}, "memory repair");
  add({"pending MIG mode change", "MIG disabled, set to enabled at the next GPU reset, not yet reset",
       [](json& s) { s["values"]["mig.pending"] = 1; }, nullptr, nullptr, "", "", 1, 1, "a GPU reset is pending"}, "MIG mode");
  add({"MIG mode changed mid-run", "MIG disabled before the run, enabled after it (the GPU reset mid-run)",
       [](json& s) { s["values"]["mig.current"] = {0, 1}; }, nullptr, nullptr, "", "", 1, 1,
       "the MIG mode changed during the run"}, "MIG mode");
  add({"PCIe Gen3 x8", "link Gen3 x8 on a Gen5 x16 part",
       [](json& s) {
         s["values"]["pcie.gen"] = 3;
         s["values"]["pcie.width"] = 8;
       },
       [](json& p) {
         p["device"]["pcie"]["gen"] = 3;
         p["device"]["pcie"]["width"] = 8;
       },
       nullptr, "", "", 1, 1, "below its maximum Gen5 x16"}, "PCIe link");
  add({"PCIe replays", "500 replays during the run", [](json& s) { s["values"]["pcie.replays"] = {0, 500}; }, nullptr,
       nullptr, "", "", 1, 1, "PCIe replays during the run"}, "PCIe replay rate");
  // Each of the slowdown row's two signals on its own (review 103: together, either half of the check could break
  // unseen).
  add({"thermal slowdown", "HW thermal slowdown reason in the clock event reasons",
       [](json& s) { s["values"]["clocks.event_reasons"] = 0x40; }, nullptr, nullptr, "", "", 1, 1,
       "hw_thermal_slowdown"}, "HW/thermal slowdown");
  add({"thermal violation time", "3 s of thermal violation time during the run, no reason bit",
       [](json& s) { s["values"]["throttle.thermal_ns"] = {0, 3000000000LL}; }, nullptr, nullptr, "", "", 1, 1,
       "thermal 3.00 s"}, "HW/thermal slowdown");
  add({"low power limit", "power limit 500 W against the board's default 700 W",
       [](json& s) {
         s["values"]["power.enforced_limit_mw"] = 500000;
         s["values"]["power.limit_mw"] = 500000;
         s["values"]["power.default_limit_mw"] = 700000;
       },
       nullptr, nullptr, "", "", 1, 1, "power limit 500 W is below the default 700 W"}, "power limit");
  add({"hot GPU", "GPU at 90 C, its slowdown threshold 87 C", [](json& s) { s["values"]["temperature.gpu_c"] = 90; },
       nullptr, nullptr, "", "", 1, 1, "reached 90 C, at or above its"}, "GPU temperature");
  add({"lost GPU", "nvmlDeviceGetHandleByIndex returns GPU_IS_LOST", [](json& s) { s["errors"]["handle"] = 15; },
       nullptr, nullptr, "", "", 1, 1, "GPU 0 is lost"});
  add({"healthy NVLink node", "nothing (control: 18 NVLinks up, old errors only, rules expect 18)", with_nvlinks,
       nullptr, nullptr, R"({"schema":"ceilings.rules/1","health":{"nvlink_links":18}})", "", 0, 0, "", true});
  add({"NVLink recovery", "a recovery error on NVLink 5 during the run",
       [](json& s) {
         with_nvlinks(s);
         s["values"]["nvlink.5.recovery"] = {0, 1};
       },
       nullptr, nullptr, "", "", 1, 1, "a link retrained"}, "NVLink errors");
  add({"NVLink replays", "3 replay errors on NVLink 3 during the run",
       [](json& s) {
         with_nvlinks(s);
         s["values"]["nvlink.3.replay"] = {2, 5};
       },
       nullptr, nullptr, "", "", 1, 1, "3 replay error(s)"}, "NVLink errors");
  add({"NVLink down", "NVLink 7 not up, rules expect 18",
       [](json& s) {
         with_nvlinks(s);
         s["values"]["nvlink.7.state"] = 0;
       },
       nullptr, nullptr, R"({"schema":"ceilings.rules/1","health":{"nvlink_links":18}})", "", 1, 1,
       "only 17 of 18 NVLinks are up"}, "NVLinks up");  // health alone sees it too: a link down beside links up
  add({"hot HBM", "memory at 97 C, its limit 95 C", [](json& s) { s["values"]["temperature.memory_c"] = 97; },
       nullptr, nullptr, "", "", 1, 1, "at or above its limit of 95 C"}, "HBM temperature");
  add({"Fabric Manager down", "an NVSwitch system's GPU not registered in the NVLink fabric (its probe not started)",
       [](json& s) {
         with_nvlinks(s);
         s["values"]["fabric.state"] = 1;
       },
       nullptr, nullptr, "", "", 1, 1,
       "the Fabric Manager has not started registering the GPU"}, "NVLink fabric");
  add({"recovery action", "the driver asks for a GPU reset (its recovery action; no kernel log read)",
       [](json& s) { s["values"]["recovery.action"] = 1; }, nullptr, nullptr, "", "", 1, 1,
       "the driver asks for a GPU reset"}, "GPU recovery action");
  add({"XID event", "XID 79 (GPU fallen off the bus) during the run", [](json& s) { s["xid"] = {79}; }, nullptr, nullptr,
       "", "", 1, 1, "XID 79"}, "XID critical errors");
  add({"XID before the run", "XID 48 (double-bit error) in the kernel log an hour before the run",
       [](json& s) {
         s["kernel_log"] = "4,9,3600000000,-;NVRM: Xid (PCI:0000:19:00): 48, pid=7, name=x, An uncorrectable "
                           "double bit error\n";
       },
       nullptr, nullptr, "", "", 1, 1, "XID 48, first at 3600.0 s after boot"}, "XIDs since boot");
  add({"NVSwitch fatal error", "a fatal SXid of one of the node's NVSwitches in the kernel log",
       [](json& s) {
         s["kernel_log"] = "3,5,91000000,-;nvidia-nvswitch1: SXid (PCI:0000:84:00.0): 24007, Fatal, Link 30 "
                           "sourcetrack timeout error (First)\n";
       },
       nullptr, nullptr, "", "", 1, 1, "SXid 24007 (fatal)"}, "NVSwitch fatal errors since boot");
  add({"healthy node, busy kernel log",
       "nothing (control): another GPU's XID 79, this GPU's application XIDs 13 and 45, its recovery action back to "
       "None, a non-fatal SXid",
       [](json& s) {
         s["kernel_log"] =
             "4,0,1000000,-;NVRM: Xid (PCI:0000:1a:00): 79, pid=0, name=x, GPU has fallen off the bus.\n"
             "4,1,2000000,-;NVRM: Xid (PCI:0000:19:00): 13, pid=7, name=x, Graphics SM Warp Exception\n"
             "4,2,3000000,-;NVRM: Xid (PCI:0000:19:00): 45, pid=7, name=x, Ch 00000010\n"
             "4,3,4000000,-;NVRM: Xid (PCI:0000:19:00): 154, GPU recovery action changed from 0x1 (GPU Reset "
             "Required) to 0x0 (None)\n"
             "3,4,5000000,-;nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 22013, Non-fatal, Link 44 Minion Link DLREQ "
             "interrupt\n";
       },
       nullptr, nullptr, "", "", 0, 0, "", true});
  add({"PCIe Gen4 slot", "a Gen5 x16 GPU in a Gen4 slot (link at the slot's maximum)",
       [](json& s) {
         s["values"]["pcie.gen"] = 4;
         s["values"]["pcie.max_gen"] = 4;
       },
       [](json& p) {
         p["device"]["pcie"]["gen"] = 4;
         p["device"]["pcie"]["max_gen"] = 4;
       },
       nullptr, "", "", 1, 1, "the slot or platform caps the link's generation"}, "PCIe slot");
  add({"throttled measurement", "gemm.bf16 measured under HW thermal slowdown", nullptr,
       [](json& p) {
         p["ceilings"][1]["throttled"] = true;
         p["ceilings"][1]["detail"]["throttle_reasons"] = 0x44;
       },
       nullptr, "", "", 0, 1, "measured under hw_thermal_slowdown"}, "HW/thermal slowdown");
  add({"failed verification", "pcie.d2h verification error in the profile", nullptr,
       [](json& p) { p["errors"].push_back({{"name", "pcie.d2h"}, {"reason", "verification failed: 12 bytes differ"}}); },
       nullptr, "", "", 0, 1, "verification failed"}, "measurement error");
  add({"unverified ceiling", "hbm.copy not verified", nullptr, [](json& p) { p["ceilings"][0]["verified"] = false; },
       nullptr, "", "", 0, 1, "was not verified"}, "verified");
  add({"slow HBM", "hbm.copy at 3.0 TB/s", nullptr, [](json& p) { p["ceilings"][0]["value"] = 3.0e12; }, nullptr, "", "",
       0, 1, "below 85%"}, "datasheet fraction");
  add({"missing ceiling", "pcie.h2d not measured", nullptr, [](json& p) { p["ceilings"].erase(2); }, nullptr, "", "", 0,
       3, "not in the profile"});
  add({"health of another GPU", "health section from a different UUID", nullptr,
       [](json& p) { p["device"]["uuid"] = "GPU-00000000-dead-beef-0000-000000000000"; }, nullptr, "", "", 0, 3,
       "recorded on another GPU"});
  add({"truncated profile", "profile cut in half", nullptr, nullptr,
       [](const std::string& t) { return t.substr(0, t.size() / 2); }, "", "", 0, 2, "not valid JSON"});
  add({"corrupt profile", "a ceiling value that is a string", nullptr,
       [](json& p) { p["ceilings"][0]["value"] = "fast"; }, nullptr, "", "", 0, 2, "ceilings[0].value"});
  add({"bare-number rule", "rules file with \"min\": 2333 (no unit)", nullptr, nullptr, nullptr,
       R"({"schema":"ceilings.rules/1","ceilings":{"pcie.h2d":{"min":2333}}})", "", 0, 2, "has no unit"});
  add({"wrong-unit rule", "rules file with a FLOP/s minimum for HBM", nullptr, nullptr, nullptr,
       R"({"schema":"ceilings.rules/1","ceilings":{"hbm.copy":{"min":"700 TFLOP/s"}}})", "", 0, 2, "does not match"});
  return m;
}

// The cases' files: a directory made afresh under the temporary-files directory (mkdtemp: a name no one could
// have planted, a link or a directory of theirs, mode 0700), removed with all in it however the run ends.
struct TempDir {
  fs::path path;
  TempDir() {
    std::error_code ec;
    const char* env = std::getenv("TMPDIR");
    const bool named = env && *env;  // an empty TMPDIR is none, as mktemp(1) and glibc take it
    const fs::path tmp = env && !named ? fs::path("/tmp") : fs::temp_directory_path(ec);
    const std::string where = named ? std::string("TMPDIR '") + env + "'" : "the directory for temporary files";
    if (ec) throw ceilings::InputError(where + " cannot be used: " + ec.message());
    std::string name = (tmp / "ceilings-self-test-XXXXXX").string();
    if (!::mkdtemp(name.data()))
      throw ceilings::InputError("cannot make a directory in " + where + " (" + tmp.string() + "): " +
                                 std::strerror(errno));
    path = name;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

struct Outcome {
  bool detected = false, false_pass = false;
  int exit_code = -1;
  double seconds = 0;
  std::string note;
};

ceilings::ProcessResult run(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env,
                            std::string& out) {
  ceilings::ProcessSpec spec{argv, env, 60, 2};
  out.clear();
  return ceilings::run_process(spec, [&](const std::string& l) { out += l + "\n"; },
                               [&](const std::string& l) { out += l + "\n"; });
}

void write(const fs::path& path, const std::string& text) { ceilings::write_file_atomic(path.string(), text); }

// The pretty-printed JSON document in a child's stdout and stderr, read as one text: from the line that opens it to
// the line that closes it (a "{" within a stderr line, a path that holds one, is not its start: review 104).
std::string json_document(const std::string& text) {
  const std::size_t open = text.rfind("{\n", 0) == 0 ? 0 : text.find("\n{\n");
  const std::size_t close = text.rfind("\n}");
  if (open == std::string::npos || close == std::string::npos || close < open) throw std::runtime_error("no document");
  const std::size_t from = open == 0 ? 0 : open + 1;
  return text.substr(from, close + 2 - from);
}

Outcome run_case(const Case& c, const std::string& self, const std::string& fake, const fs::path& dir) {
  Outcome o;
  const auto start = std::chrono::steady_clock::now();
  json script = healthy_script();
  if (c.nvml) c.nvml(script);
  // The kernel log health reads is the case's ("kernel_log" in its script), never this machine's.
  write(dir / "kernel.log", script.value("kernel_log", std::string(ceilings::kQuietKernelLog)));
  script.erase("kernel_log");
  const fs::path script_path = dir / "script.json";
  write(script_path, script.dump(2));
  const std::vector<std::pair<std::string, std::string>> env{
      {"CEILINGS_NVML_LIBRARY", c.no_library.empty() ? fake : c.no_library},
      {"CEILINGS_FAKE_NVML_SCRIPT", script_path.string()},
      {"CEILINGS_KERNEL_LOG", (dir / "kernel.log").string()}};
  std::string out, all;
  // 1. Health, live through the (fake) NVML, as `ceilings measure` records it.
  auto r = run({self, "health", "--json", "--watch", "0.05"}, env, out);
  all += out;
  json profile = healthy_profile();
  int code = r.exit_code;
  if (!r.ok() && r.exit_code == 0) code = -1;
  bool have_section = false;
  if (code == 0 || code == 1 || code == 3) {
    try {
      // stdout's section, whatever stderr said beside it (the fake library's warning: the two come back as one text)
      profile["health"] = json::parse(json_document(out));
      have_section = true;
    } catch (const std::exception&) {
      // no GPU, no NVML: an error message instead of a section, and the verdict is reached here
    }
  }
  if (code != c.expect_health) {
    o.exit_code = code;
    o.note = "health exited " + std::to_string(code) + ", expected " + std::to_string(c.expect_health);
  } else if (!have_section) {
    o.exit_code = code;
    // A health run that passed must have written a section to judge: a control "passed" without one (review 104)
    if (code == 0) o.note = "health exited 0 but printed no section to judge";
  } else {
    // 2. The verdict on a profile carrying that health section.
    if (c.profile) c.profile(profile);
    std::string text = profile.dump(2) + "\n";
    if (c.corrupt) text = c.corrupt(text);
    const fs::path profile_path = dir / "node.profile.json";
    write(profile_path, text);
    std::vector<std::string> argv{self, "qualify", profile_path.string(), "--format", "table"};
    if (!c.rules.empty()) {
      write(dir / "rules.json", c.rules);
      argv.push_back("--rules");
      argv.push_back((dir / "rules.json").string());
    }
    r = run(argv, env, out);
    all += out;
    o.exit_code = r.exit_code;
    // A failing verdict counts only where the row the case is for fails, its reason in that row (review 103: the
    // text anywhere in the output, beside any failing row, let half of a check break unseen).
    if (c.expect_exit == 1 && o.exit_code == 1 && !c.expect_text.empty()) {
      argv[4] = "json";
      std::string verdict;
      run(argv, env, verdict);
      bool row = false;
      try {
        const json doc = json::parse(json_document(verdict));  // named: a temporary's member dangles
        for (const json& k : doc.at("checks"))
          row = row || (k.value("result", "") == "fail" && k.value("rule", "") == c.expect_row &&
                        k.dump().find(c.expect_text) != std::string::npos);
      } catch (const std::exception&) {
        // no verdict to read: the row is not found
      }
      if (c.expect_row.empty()) o.note = "the case names no verdict row to fail (a defect of the self-test)";
      else if (!row) o.note = "no failing '" + c.expect_row + "' row names '" + c.expect_text + "'";
    }
  }
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const bool text_ok = c.expect_text.empty() || all.find(c.expect_text) != std::string::npos;
  o.detected = o.exit_code == c.expect_exit && text_ok && o.note.empty();
  o.false_pass = !c.control && o.exit_code == 0;
  if (!o.detected && o.note.empty())
    o.note = o.exit_code != c.expect_exit ? "exit " + std::to_string(o.exit_code) + ", expected " + std::to_string(c.expect_exit)
                                          : "reason '" + c.expect_text + "' not in the output";
  if (!o.detected && std::getenv("CEILINGS_SELF_TEST_VERBOSE")) std::fprintf(stderr, "%s\n", all.c_str());
  return o;
}

struct SelfTestOptions {
  std::string fake;
  bool verbose = false;
};

int run_self_test(const SelfTestOptions& opt) {
  std::string fake = opt.fake;
  const char* env = std::getenv("CEILINGS_FAKE_NVML");
  const bool from_env = fake.empty() && env && *env;
  if (fake.empty()) fake = from_env ? env : ceilings::cli::executable_directory() + "/libceilings_fake_nvml.so";
  // A path the user gave (the flag or the variable): bad input, as any other missing file.
  if (!opt.fake.empty() && !fs::exists(fake)) throw ceilings::InputError("--fake-nvml " + fake + " does not exist");
  if (from_env && !fs::exists(fake)) throw ceilings::InputError("CEILINGS_FAKE_NVML " + fake + " does not exist");
  if (!fs::exists(fake))
    throw ceilings::IncompleteError("the fake NVML library is not at " + fake +
                                    " (every build makes it beside ceilings: a ceilings copied elsewhere without it "
                                    "needs --fake-nvml or CEILINGS_FAKE_NVML)");
  // A bare file name is a file here, not a name for dlopen to look up in the library path.
  fake = fs::absolute(fake).string();
  // Something that is not an NVML at all would have every case "missed": say what it is instead.
  if (void* h = dlopen(fake.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    const bool nvml = dlsym(h, "nvmlInit_v2") != nullptr;
    dlclose(h);
    if (!nvml) throw ceilings::InputError(fake + " is a library without nvmlInit_v2: not the fake NVML");
  } else {
    const char* why = dlerror();
    throw ceilings::InputError("cannot load the fake NVML " + fake + ": " + (why ? why : "dlopen failed"));
  }
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  // A Ctrl-C or a batch system's SIGTERM stops the case's process and ends the run here, so the directory is
  // removed (the default action would end the process with its files left behind).
  ceilings::install_interrupt_handlers();
  const TempDir scratch;
  const fs::path& root = scratch.path;

  int faults = 0, detected = 0, false_passes = 0, controls = 0, controls_ok = 0;
  double total = 0, worst = 0;
  std::printf("%-28s %-12s %5s %8s  %s\n", "case", "result", "exit", "time", "fault injected");
  const auto cases = matrix();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const fs::path dir = root / std::to_string(i);
    fs::create_directories(dir);
    const Outcome o = run_case(c, self, fake, dir);
    if (ceilings::interrupted()) {  // that case's verdict is the interruption's, not its own
      std::fprintf(stderr, "ceilings self-test: interrupted by %s during case %zu of %zu (%s): no verdict\n",
                   ceilings::interrupt_signal_name().c_str(), i + 1, cases.size(), c.name.c_str());
      return ceilings::kExitIncomplete;
    }
    total += o.seconds;
    worst = std::max(worst, o.seconds);
    std::string result;
    if (c.control) {
      ++controls;
      controls_ok += o.detected ? 1 : 0;
      result = o.detected ? "pass (ok)" : "WRONG";
    } else {
      ++faults;
      detected += o.detected ? 1 : 0;
      false_passes += o.false_pass ? 1 : 0;
      result = o.false_pass ? "FALSE PASS" : o.detected ? "detected" : "MISSED";
    }
    std::printf("%-28s %-12s %5d %8s  %s%s\n", c.name.c_str(), result.c_str(), o.exit_code,
                ceilings::format_quantity(o.seconds, "s").c_str(), c.fault.c_str(),
                o.note.empty() || o.detected ? "" : ("  [" + o.note + "]").c_str());
  }
  std::printf("\nfaults injected: %d\nfaults detected: %d\nfalse passes: %d\ncontrols passing: %d/%d\n"
              "time to verdict: mean %s, max %s\n",
              faults, detected, false_passes, controls_ok, controls,
              ceilings::format_quantity(total / static_cast<double>(cases.size()), "s").c_str(),
              ceilings::format_quantity(worst, "s").c_str());
  const bool ok = detected == faults && false_passes == 0 && controls_ok == controls;
  std::printf("self-test: %s\n", ok ? "PASS" : "FAIL");
  return ok ? ceilings::kExitOk : ceilings::kExitFailed;
}

CEILINGS_SUBCOMMAND("self-test", "Fault injection: check that health and qualify catch every injected fault",
                    [](CLI::App& app) -> ceilings::cli::Runner {
  auto o = std::make_shared<SelfTestOptions>();
  app.add_option("--fake-nvml", o->fake,
                 "The fake NVML library (default: $CEILINGS_FAKE_NVML, else libceilings_fake_nvml.so beside ceilings)");
  return [o] { return run_self_test(*o); };
});

}  // namespace
