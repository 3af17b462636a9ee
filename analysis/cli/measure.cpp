// `ceilings measure`: runs ceilings-bench (found beside this executable), shows progress, turns
// its JSON into a profile, writes profile and raw JSON atomically, and prints the ceilings table.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>

#include "ceilings/bench_json.hpp"
#include "ceilings/report.hpp"
#include "ceilings/subprocess.hpp"
#include "health_monitor.hpp"
#include "subcommand.hpp"

namespace {

namespace fs = std::filesystem;
using ceilings::IncompleteError;
using ceilings::InputError;

struct MeasureOptions {
  int device = 0;
  bool quick = false;
  std::string out;
  std::string filter;
  std::string bench;
  double timeout_s = 0;
  std::vector<std::string> bench_args;
};

std::string default_bench_path() {
  if (const char* env = std::getenv("CEILINGS_BENCH"); env && *env) return env;
  return ceilings::cli::executable_directory() + "/ceilings-bench";
}

std::string hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf[0] ? buf : "host";
}

// "x.profile.json" -> "x.bench.json"; "x.json" -> "x.bench.json"; "x" -> "x.bench.json".
std::string raw_path_for(const std::string& out) {
  std::string stem = out;
  for (const char* ext : {".profile.json", ".json"}) {
    const std::string e = ext;
    if (stem.size() > e.size() && stem.compare(stem.size() - e.size(), e.size(), e) == 0) {
      stem.erase(stem.size() - e.size());
      break;
    }
  }
  return stem + ".bench.json";
}

std::vector<std::string> common_args(const MeasureOptions& o) {
  std::vector<std::string> a{"--ceilings_device=" + std::to_string(o.device)};
  if (o.quick) a.push_back("--ceilings_quick");
  if (!o.filter.empty()) a.push_back("--benchmark_filter=" + o.filter);
  for (const auto& extra : o.bench_args) a.push_back(extra);
  return a;
}

std::string tail(const std::vector<std::string>& lines, std::size_t n) {
  std::string out;
  for (std::size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) out += "\n  " + lines[i];
  return out;
}

[[noreturn]] void bench_failed(const ceilings::ProcessResult& r, const std::vector<std::string>& err) {
  if (r.exit_code == 3)  // ceilings-bench: no usable GPU
    throw IncompleteError(err.empty() ? "no usable GPU" : err.back());
  if (r.exit_code == 2) throw InputError("ceilings-bench rejected its arguments:" + tail(err, 5));
  throw IncompleteError("ceilings-bench failed (" + r.describe() + ")" + tail(err, 10));
}

int run_measure(const MeasureOptions& o) {
  const std::string out = o.out.empty() ? hostname() + "-gpu" + std::to_string(o.device) + ".profile.json" : o.out;
  const fs::path out_dir = fs::absolute(out).parent_path();
  if (!fs::is_directory(out_dir)) throw InputError("the directory of --out does not exist: " + out_dir.string());
  const std::string bench = o.bench.empty() ? default_bench_path() : o.bench;
  if (access(bench.c_str(), X_OK) != 0)
    throw IncompleteError("cannot run " + bench +
                          ": ceilings-bench is missing (built without CUDA?); set CEILINGS_BENCH or --bench");
  const std::string raw_out = raw_path_for(out);
  ceilings::install_interrupt_handlers();

  // 1. The list of cases (this is also where "no GPU" shows up, before anything is written).
  std::vector<std::string> names, err;
  ceilings::ProcessSpec list{{bench, "--benchmark_list_tests=true"}, {}, 120, 5};
  for (auto& a : common_args(o)) list.argv.push_back(a);
  auto r = ceilings::run_process(list, [&](const std::string& l) { if (!l.empty()) names.push_back(l); },
                                 [&](const std::string& l) { err.push_back(l); });
  if (!r.ok()) bench_failed(r, err);
  if (names.empty()) throw InputError("no benchmark matches" + (o.filter.empty() ? "" : " --filter '" + o.filter + "'"));

  // 2. The run, with progress on stderr: one console line per finished case.
  const std::string tmp_json = raw_out + ".partial." + std::to_string(getpid());
  ceilings::ProcessSpec run{{bench, "--benchmark_out=" + tmp_json, "--benchmark_out_format=json",
                             "--benchmark_format=console", "--benchmark_color=false"},
                            {},
                            o.timeout_s,
                            10};
  for (auto& a : common_args(o)) run.argv.push_back(a);
  const std::set<std::string> known(names.begin(), names.end());
  const bool tty = isatty(STDERR_FILENO);
  const auto start = std::chrono::steady_clock::now();
  std::size_t done = 0, failed = 0;
  auto progress = [&](const std::string& current) {
    const long secs = static_cast<long>(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    char head[64];
    std::snprintf(head, sizeof head, "[%zu/%zu %02ld:%02ld] ", done, names.size(), secs / 60, secs % 60);
    if (tty)
      std::fprintf(stderr, "\r\033[K%s%s", head, current.c_str());
    else
      std::fprintf(stderr, "%s%s\n", head, current.c_str());
    std::fflush(stderr);
  };
  // Health counters before and after the run (the profile's `health` section; `ceilings qualify` judges it).
  std::string health_why;
  auto health = ceilings::cli::HealthMonitor::try_open(static_cast<unsigned>(o.device), &health_why);
  if (health) health->before();
  err.clear();
  progress("running " + names.front());
  r = ceilings::run_process(
      run,
      [&](const std::string& line) {
        const auto space = line.find(' ');
        const std::string first = line.substr(0, space);
        if (!known.count(first)) return;
        ++done;
        const bool error = line.find("ERROR OCCURRED") != std::string::npos;
        failed += error ? 1 : 0;
        if (!tty && error) std::fprintf(stderr, "  %s\n", line.c_str());
        progress(done < names.size() ? "running " + names[done] : "done");
      },
      [&](const std::string& l) { err.push_back(l); });
  if (tty) std::fprintf(stderr, "\n");
  if (health) health->after();
  if (!r.ok()) {
    std::remove(tmp_json.c_str());
    bench_failed(r, err);
  }

  // 3. Profile: convert, then write both files atomically (the raw JSON by rename of its own temp).
  ceilings::Profile profile;
  try {
    profile = ceilings::profile_from_benchmark_json(ceilings::read_json_file(tmp_json));
  } catch (...) {
    std::remove(tmp_json.c_str());
    throw;
  }
  std::string command;
  for (const auto& a : run.argv) command += (command.empty() ? "" : " ") + a;
  profile.raw["measure"] = {{"command", command}, {"cases", names.size()}, {"failed_cases", failed}};
  profile.raw["health"] = health ? ceilings::health_to_json(health->section()) : ceilings::json("unavailable: " + health_why);
  const std::string text = ceilings::profile_to_json(profile).dump(2) + "\n";
  if (std::rename(tmp_json.c_str(), raw_out.c_str()) != 0) {
    std::remove(tmp_json.c_str());
    throw InputError("cannot write " + raw_out);
  }
  ceilings::write_file_atomic(out, text);
  std::cout << ceilings::render_profile(profile, ceilings::Format::kTable);
  std::cout << "\nprofile: " << out << "\nraw ceilings-bench JSON: " << raw_out << "\n";
  if (!profile.errors.empty()) {
    std::fprintf(stderr, "ceilings measure: %zu case(s) failed; see the ERROR rows\n", profile.errors.size());
    return ceilings::kExitIncomplete;
  }
  return 0;
}

CEILINGS_SUBCOMMAND("measure", "Measure this GPU's ceilings and write a profile", [](CLI::App& app) -> ceilings::cli::Runner {
  auto o = std::make_shared<MeasureOptions>();
  app.add_option("--device", o->device, "CUDA device index")->check(CLI::NonNegativeNumber);
  app.add_flag("--quick", o->quick, "A short pass (under a minute on an H200): fewer variants and samples");
  app.add_option("--out", o->out, "Profile file to write (default: <hostname>-gpu<N>.profile.json)");
  app.add_option("--filter", o->filter, "Only benchmarks matching this regex (Google Benchmark filter)");
  app.add_option("--timeout", o->timeout_s, "Stop ceilings-bench after this many seconds (0: no limit)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--bench", o->bench, "Path of ceilings-bench (default: beside ceilings, or $CEILINGS_BENCH)");
  app.add_option("--bench-arg", o->bench_args, "Extra argument for ceilings-bench (repeatable)");
  return [o] { return run_measure(*o); };
});

}  // namespace
