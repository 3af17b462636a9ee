// A stand-in for ceilings-bench in CPU tests of `ceilings measure --all-gpus`: it pretends to be a node
// of N GPUs and, per device, behaves well or badly. Its numbers are plausible FAKES, never measurements.
//
// Behaviour (environment, or --standin_* flags which win):
//   CEILINGS_STANDIN_DEVICES=N        devices it pretends to have (default 1; 0: exits 3, "no GPU")
//   CEILINGS_STANDIN_MODE=M           mode of every device (default valid)
//   CEILINGS_STANDIN_MODE_<i>=M       mode of device i
//   CEILINGS_STANDIN_SCALE_<i>=F      multiplies device i's fake rates (F < 1: a slow GPU)
//   CEILINGS_STANDIN_NAME_<i>=NAME    device i's name (default "ceilings stand-in (fake device, not a GPU)"):
//                                     another GPU model in the node
//   CEILINGS_STANDIN_CV_<i>=C         the cv of device i's samples (default 0.004, converged; above it the
//                                     sampling stopped at its cap): C 0.3 is a GPU too noisy to judge
//   CEILINGS_STANDIN_SLEEP=S          seconds the slow and sleep modes wait (default 2)
//   CEILINGS_STANDIN_PEER=1           also list a peer case (nvlink/p2p_uni/...)
//   CEILINGS_STANDIN_PIDFILE=PATH     hang mode appends its own pid and its child's pid, one a line
//   CEILINGS_STANDIN_NODE=K           which pretend node (0-9999, default 0): part of every UUID, so the
//                                     GPUs of several pretend nodes are distinct GPUs to `ceilings fleet`
// --benchmark_filter (a regex) selects cases as in Google Benchmark: `ceilings measure` runs one process
// per family. Modes (they act on the measuring run only; --benchmark_list_tests always answers; slow,
// crash, stall and hang only in the process that runs the first case, hbm/copy, as a fault in one
// family would):
//   valid    writes a valid Google Benchmark JSON with the ceilings_device context
//   slow     sleeps, then as valid
//   sleep    sleeps, then exits 0 without writing anything
//   crash    prints one case (and checkpoints it), leaves a half-written checkpoint temporary file (as a
//            kill in the middle of a rewrite would), then abort()s
//   crash_early  abort()s before its first case, having written nothing (a crash at start-up)
//   crash_after  prints and checkpoints every case of its family, then abort()s before the complete output
//   unlisted reports its first case under another name than the listing's and exits 0 (as a case name
//            that depends on free memory could)
//   stall    prints and checkpoints the first case, then waits for a signal without finishing
//   terminated  prints and checkpoints the first case, then dies of SIGTERM it sends itself (as a batch
//            system's time limit or scancel, which signals every process of the job step, can end the bench
//            before ceilings measure)
//   stall_early  checkpoints its context and no case (as ceilings-bench does at start-up), then waits for a
//            signal in every family
//   hang     ignores SIGTERM, starts a child that ignores it too, and never returns
//   garbage  writes text that is not JSON and exits 0
//   nobench  writes JSON with no benchmarks array and exits 0
//   othergpu every family but the first reports another device (the next index: its UUID and bus), as a
//            --ceilings_device that named another GPU after one fell off the bus would
//   othergpu_crash  as othergpu, and those families crash after their first case
//   shifted  every family reports the next index's device, not the one the listing gave for its index (as a
//            --ceilings_device given again through --bench-arg did)
//   sibling  every family reports the listed GPU's bus with another UUID (as a MIG instance's sibling would)
//   nodevice the first family's device record is an empty object (the others are whole)
//   nogpu    exits 3 like ceilings-bench without a device
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <regex>

#include <nlohmann/json.hpp>

namespace {

using nlohmann::json;

std::string env_or(const std::string& name, const std::string& fallback) {
  const char* v = std::getenv(name.c_str());
  return v && *v ? v : fallback;
}

// Device i's name: another model where CEILINGS_STANDIN_NAME_<i> says so.
std::string device_name(int i) {
  return env_or("CEILINGS_STANDIN_NAME_" + std::to_string(i), "ceilings stand-in (fake device, not a GPU)");
}

struct Args {
  int device = 0;
  bool list_tests = false, list_devices = false;
  std::string out, checkpoint, filter;  // --benchmark_out, --ceilings_checkpoint, --benchmark_filter
  std::string out_format = "json";       // --benchmark_out_format (the last one given, as Google Benchmark reads it)
  std::string mode, devices;  // from flags; empty: from the environment
};

bool starts(const std::string& s, const std::string& prefix, std::string* rest) {
  if (s.rfind(prefix, 0) != 0) return false;
  *rest = s.substr(prefix.size());
  return true;
}

// The fake cases and their plausible values (H200-class magnitudes), all tagged as fakes.
struct FakeCase {
  const char* name;
  const char* counter;
  double value;
};
const std::vector<FakeCase>& cases() {
  static const std::vector<FakeCase> all{{"hbm/copy/manual_time", "bytes_per_second", 4.3e12},
                                         {"hbm/read/manual_time", "bytes_per_second", 4.5e12},
                                         {"gemm/bf16/m:8192/manual_time", "flop_per_second", 7.9e14},
                                         {"latency/launch/manual_time", "latency_s", 2.2e-6}};
  // CEILINGS_STANDIN_PEER=1: a peer case too, as a multi-GPU node lists one.
  static const std::vector<FakeCase> with_peer = [] {
    auto v = all;
    v.push_back({"nvlink/p2p_uni/engine:ce/op:write/manual_time", "bytes_per_second", 3.9e11});
    return v;
  }();
  return env_or("CEILINGS_STANDIN_PEER", "0") == "1" ? with_peer : all;
}

// The cases --benchmark_filter selects (all without one).
std::vector<FakeCase> selected(const std::string& filter) {
  std::vector<FakeCase> out;
  // Google Benchmark's grammar: POSIX extended (std::regex `extended`, or regcomp with REG_EXTENDED). One that does
  // not compile selects nothing, said on stderr as Google Benchmark says it (review 99: the stand-in aborted).
  std::regex re;
  try {
    re = std::regex(filter.empty() ? std::string(".") : filter, std::regex_constants::extended);
  } catch (const std::regex_error& e) {
    std::fprintf(stderr, "Could not compile benchmark re: %s\n", e.what());
    return out;
  }
  for (const FakeCase& c : cases())
    if (std::regex_search(c.name, re)) out.push_back(c);
  return out;
}

// GPU-57a4d100-0000-0000-<node>-<index>: unique per pretend node and device.
std::string fake_uuid(int device) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-57a4d100-0000-0000-%04d-%012d",
                std::atoi(env_or("CEILINGS_STANDIN_NODE", "0").c_str()) % 10000, device);
  return buf;
}

void sleep_s(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

// Writes `text` to `path` through a temporary file and a rename, as ceilings-bench's checkpoint does.
void write_atomic(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp);
    f << text;
  }
  std::rename(tmp.c_str(), path.c_str());
}

// Prints the first `count` cases (console lines drive `ceilings measure`'s progress) and checkpoints
// after each; `finish`: then writes the complete document to --benchmark_out (or stdout).
bool g_empty_device = false;  // nodevice: the device record is {}
bool g_sibling = false;       // sibling: another UUID on the listed bus

int write_cases(const Args& a, double scale, std::size_t count, bool finish, const std::string& rename_first = "") {
  const std::string index = std::to_string(a.device);
  json device = {{"index", a.device},
                 {"name", device_name(a.device)},
                 {"uuid", fake_uuid(g_sibling ? a.device + 100 : a.device)},
                 {"pci_bus_id", "00000000:" + std::string(a.device < 10 ? "0" : "") + index + ":00.0"},
                 {"compute_capability", "9.0"},
                 {"sm_count", 132},
                 {"memory_bytes", 150754820096ULL},
                 {"l2_bytes", 62914560},
                 {"driver", "standin"},
                 {"cuda_runtime", "13.0"},
                 {"cublas", "standin"},
                 {"power_limit_w", 700}};
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  json doc = {{"context",
               {{"date", "2026-11-30T00:00:00+00:00"},
                {"ceilings_device", g_empty_device ? std::string("{}") : device.dump()},
                {"ceilings_host", json{{"hostname", host}, {"cpu", "stand-in"}}.dump()},
                {"ceilings_version", "standin (fake values for tests, not a measurement)"},
                {"ceilings_git", "standin"}}},
              {"benchmarks", json::array()}};
  const std::vector<FakeCase> chosen = selected(a.filter);
  const double cv = std::atof(env_or("CEILINGS_STANDIN_CV_" + index, "0.004").c_str());
  // As ceilings-bench does, the checkpoint holds the context before the first case.
  if (!a.checkpoint.empty()) write_atomic(a.checkpoint, doc.dump(2) + "\n");
  for (std::size_t i = 0; i < count && i < chosen.size(); ++i) {
    const FakeCase& c = chosen[i];
    const bool rate = std::string(c.counter) != "latency_s";
    const std::string name = i == 0 && !rename_first.empty() ? rename_first : c.name;
    json b = {{"name", name},  {"run_name", name}, {"run_type", "iteration"}, {"iterations", 10},
              {"real_time", 1.0}, {"cpu_time", 1.0},    {"time_unit", "ms"},        {"cv", cv},
              {"samples", 10},    {"verified", 1},      {"throttled", 0},           {"telemetry", 0},
              {"stopped_by", cv > 0.004 ? 2 : 1}};  // a cv of 0.4% is under the default target: converged
    b[c.counter] = rate ? c.value * scale : c.value / scale;
    if (std::string(c.name).rfind("nvlink/", 0) == 0) {
      // A peer ceiling is the GPU's slowest pair: with one slow GPU on the node, every GPU's slowest pair is
      // the pair with it; the median of its own pairs (p2p_median) is low on the slow GPU only.
      const int devices =
          std::atoi((a.devices.empty() ? env_or("CEILINGS_STANDIN_DEVICES", "1") : a.devices).c_str());
      double slowest = 1;
      for (int d = 0; d < devices; ++d)
        slowest = std::min(slowest, std::atof(env_or("CEILINGS_STANDIN_SCALE_" + std::to_string(d), "1").c_str()));
      b[c.counter] = c.value * slowest;
      b["p2p_median"] = c.value * scale;
    }
    doc["benchmarks"].push_back(b);
    if (!a.checkpoint.empty()) write_atomic(a.checkpoint, doc.dump(2) + "\n");
    std::printf("%-40s %10.3f ms %10.3f ms %10d\n", name.c_str(), 1.0, 1.0, 10);
    std::fflush(stdout);
  }
  if (!finish) return 0;
  if (a.out.empty()) {
    std::printf("%s\n", doc.dump(2).c_str());
    return 0;
  }
  std::ofstream f(a.out);
  f << doc.dump(2) << "\n";
  return f ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    std::string v;
    if (starts(s, "--ceilings_device=", &v))
      a.device = std::atoi(v.c_str());
    else if (s == "--benchmark_list_tests" || s == "--benchmark_list_tests=true")
      a.list_tests = true;
    else if (s == "--ceilings_list_devices")
      a.list_devices = true;
    else if (starts(s, "--benchmark_out=", &v))
      a.out = v;
    else if (starts(s, "--benchmark_out_format=", &v))
      a.out_format = v;
    else if (starts(s, "--benchmark_filter=", &v))
      a.filter = v;
    else if (starts(s, "--ceilings_checkpoint=", &v))
      a.checkpoint = v;
    else if (starts(s, "--standin_mode=", &v))
      a.mode = v;
    else if (starts(s, "--standin_devices=", &v))
      a.devices = v;
    else if (s.rfind("--benchmark_", 0) == 0 || s.rfind("--ceilings_", 0) == 0)
      continue;  // accepted and ignored, as ceilings-bench would take them
    else {
      std::fprintf(stderr, "standin_bench: unknown argument '%s'\n", s.c_str());
      return 2;
    }
  }
  if (!a.checkpoint.empty() && a.out_format != "json") {  // as ceilings-bench's checkpoint_flags_problem
    std::fprintf(stderr, "ceilings-bench: --ceilings_checkpoint writes JSON: --benchmark_out_format must be json\n");
    return 2;
  }
  const int devices = std::atoi((a.devices.empty() ? env_or("CEILINGS_STANDIN_DEVICES", "1") : a.devices).c_str());
  if (devices <= 0) {
    std::fprintf(stderr, "ceilings-bench: no usable GPU: the stand-in pretends there is none\n");
    return 3;
  }
  if (a.list_devices) {
    for (int i = 0; i < devices; ++i)
      std::printf("%s\n", json{{"index", i},
                               {"name", device_name(i)},
                               {"uuid", fake_uuid(i)},
                               {"pci_bus_id", "00000000:0" + std::to_string(i) + ":00.0"}}
                              .dump()
                              .c_str());
    return 0;
  }
  if (a.device >= devices) {
    std::fprintf(stderr, "ceilings-bench: no usable GPU: device index %d is out of range\n", a.device);
    return 3;
  }
  const std::string idx = std::to_string(a.device);
  const std::string mode =
      !a.mode.empty() ? a.mode : env_or("CEILINGS_STANDIN_MODE_" + idx, env_or("CEILINGS_STANDIN_MODE", "valid"));
  if (mode == "nogpu") {
    std::fprintf(stderr, "ceilings-bench: no usable GPU: stand-in mode nogpu\n");
    return 3;
  }
  if (a.list_tests) {
    const auto chosen = selected(a.filter);
    if (chosen.empty()) std::fprintf(stderr, "Failed to match any benchmarks against regex: %s\n", a.filter.c_str());
    for (const FakeCase& c : chosen) std::printf("%s\n", c.name);
    return 0;
  }
  const double pause = std::atof(env_or("CEILINGS_STANDIN_SLEEP", "2").c_str());
  const double scale = std::atof(env_or("CEILINGS_STANDIN_SCALE_" + idx, "1").c_str());
  const double factor = scale > 0 ? scale : 1;
  const std::size_t all = cases().size();
  const std::vector<FakeCase> chosen = selected(a.filter);
  const bool faulty_family = !chosen.empty() && std::string(chosen.front().name) == cases().front().name;
  if (mode == "valid" ||
      (!faulty_family && (mode == "slow" || mode == "crash" || mode == "stall" || mode == "hang" || mode == "terminated")))
    return write_cases(a, factor, all, true);
  if (mode == "slow") {
    sleep_s(pause);
    return write_cases(a, factor, all, true);
  }
  if (mode == "stall_early") {
    write_cases(a, factor, 0, false);
    while (true) sleep(1000);
  }
  if (mode == "stall") {
    write_cases(a, factor, 1, false);
    while (true) sleep(1000);  // SIGTERM's default action ends it
  }
  if (mode == "terminated") {
    write_cases(a, factor, 1, false);
    std::fflush(stdout);
    raise(SIGTERM);  // its default action: killed by SIGTERM
    return 1;
  }
  if (mode == "crash_early") {
    if (!faulty_family) return write_cases(a, factor, all, true);
    std::fprintf(stderr, "standin: crashing at start-up\n");
    std::abort();
  }
  if (mode == "crash_after") {
    if (!faulty_family) return write_cases(a, factor, all, true);
    write_cases(a, factor, all, false);
    std::abort();
  }
  if (mode == "unlisted") {
    if (!faulty_family) return write_cases(a, factor, all, true);
    return write_cases(a, factor, all, true, "hbm/copy/renamed:1/manual_time");
  }
  if (mode == "sleep") {
    sleep_s(pause);
    return 0;
  }
  if (mode == "crash") {
    write_cases(a, factor, 1, false);
    if (!a.checkpoint.empty()) {  // ceilings-bench's checkpoint temporary (write_file_atomic's), half written
      const std::filesystem::path cp(a.checkpoint);
      std::ofstream f(cp.parent_path() / ("." + cp.filename().string() + ".tmp.Ab12Cd"));
      f << "{\"context\": {";
    }
    std::abort();
  }
  if (mode == "nobench") {
    if (!faulty_family) return write_cases(a, factor, all, true);
    std::ofstream f(a.out.empty() ? "/dev/stdout" : a.out);
    f << "{\"context\": {}, \"benchmarks\": null}";
    return 0;
  }
  if (mode == "othergpu" || mode == "othergpu_crash") {
    if (faulty_family) return write_cases(a, factor, all, true);
    Args other = a;
    ++other.device;
    if (mode == "othergpu") return write_cases(other, factor, all, true);
    write_cases(other, factor, 1, false);
    std::abort();
  }
  if (mode == "shifted") {
    Args other = a;
    ++other.device;
    return write_cases(other, factor, all, true);
  }
  if (mode == "sibling") {
    g_sibling = true;
    return write_cases(a, factor, all, true);
  }
  if (mode == "nodevice") {
    g_empty_device = faulty_family;
    return write_cases(a, factor, all, true);
  }
  if (mode == "garbage") {
    std::ofstream f(a.out.empty() ? "/dev/stdout" : a.out);
    f << "{\"context\": {\"ceilings_device\": tru";  // truncated, not JSON
    return 0;
  }
  if (mode == "hang") {
    signal(SIGTERM, SIG_IGN);  // inherited by the child: only SIGKILL to the process group ends both
    const pid_t child = fork();
    if (child == 0) {
      while (true) sleep(1000);
    }
    const std::string pidfile = env_or("CEILINGS_STANDIN_PIDFILE", "");
    if (!pidfile.empty()) {
      std::ofstream f(pidfile, std::ios::app);
      f << getpid() << "\n" << child << "\n";
    }
    while (true) sleep(1000);
  }
  std::fprintf(stderr, "standin_bench: unknown mode '%s'\n", mode.c_str());
  return 2;
}
