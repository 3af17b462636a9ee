// `ceilings measure`: runs ceilings-bench (found beside this executable), shows progress, turns
// its JSON into a profile, writes profile and raw JSON atomically, and prints the ceilings table.
// `--all-gpus`: one ceilings-bench process per GPU (isolated, each with a watchdog), every profile written
// as soon as its GPU finishes, a node summary rewritten after each change, and the GPUs compared.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include "ceilings/bench_json.hpp"
#include "ceilings/ceiling_families.hpp"
#include "ceilings/fleet.hpp"
#include "ceilings/json_fields.hpp"
#include "ceilings/output_lock.hpp"
#include "ceilings/qualify.hpp"
#include "ceilings/report.hpp"
#include "ceilings/subprocess.hpp"
#include "ceilings/units.hpp"
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
  double family_timeout_s = 0;  // 0: a family may use all that is left of timeout_s
  std::vector<std::string> bench_args;
  bool all_gpus = false, concurrent = false;
  std::string out_dir;
  double margin_pct = 5;
  double kill_grace_s = 10;
  bool one_process = false;  // every family in one ceilings-bench process (no isolation, one start-up)
  int gpus_together = 1;     // the GPUs this run measures at the same time (--all-gpus --concurrent: the node's)
};

std::string default_bench_path() {
  if (const char* env = std::getenv("CEILINGS_BENCH"); env && *env) return env;
  return ceilings::cli::executable_directory() + "/ceilings-bench";
}

// `time`, or `floor` where `time` is before it (two utc_now_iso8601 texts; `time` where either does not parse or
// `floor` is ""): a run's times never go backwards though the wall clock may step back during it (NTP), as fleet
// orders profiles and node summaries by them (reviews 52-54).
std::string not_before(const std::string& time, const std::string& floor) {
  try {
    if (!floor.empty() && ceilings::parse_utc_time(time, "") < ceilings::parse_utc_time(floor, "")) return floor;
  } catch (const ceilings::Error&) {
  }
  return time;
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

// A --bench-arg that sets a flag `measure` gives every ceilings-bench call itself: the last one given wins, so the
// bench would measure another GPU than the one its profile is filed under, or write its results over a user's
// file. Bad input, naming the option that does it instead.
void check_bench_arg(const std::string& arg) {
  if (arg.empty() || arg[0] != '-') return;
  std::string flag = arg.substr(0, arg.find('='));
  flag.erase(0, flag.find_first_not_of('-'));
  static const std::pair<const char*, const char*> kOwned[] = {
      {"ceilings_device", "use --device, or --all-gpus"},
      {"ceilings_list_devices", "measure lists the GPUs itself"},
      {"benchmark_filter", "use --filter"},
      {"benchmark_list_tests", "measure lists the cases itself"},
      {"benchmark_out", "measure writes the raw JSON beside the profile (--out)"},
      {"benchmark_out_format", "measure reads JSON"},
      {"benchmark_format", "measure reads the console format"},
      {"benchmark_color", "measure reads the console format without colours"},
      {"ceilings_checkpoint", "measure keeps a checkpoint of its own"}};
  for (const auto& [owned, instead] : kOwned)
    if (flag == owned)
      throw InputError("--bench-arg '" + ceilings::excerpt(arg, 200) + "': measure sets --" + owned + " itself (" +
                       instead + ")");
}

// An --out-dir that names a file (with or without a trailing slash, which makes "afile/" read as missing): said so,
// not "does not exist" or "cannot create".
void check_out_dir_not_a_file(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) throw InputError("--out-dir '" + dir + "' is not a directory");
}

// The arguments every ceilings-bench call of one GPU gets (the benchmark filter aside).
std::vector<std::string> device_args(const MeasureOptions& o, int device) {
  std::vector<std::string> a{"--ceilings_device=" + std::to_string(device)};
  if (o.quick) a.push_back("--ceilings_quick");
  // One process per GPU: each measures the peer pairs its own GPU is in, not every pair of the node
  // (unless the user chose a scope).
  bool scope_given = false;
  for (const auto& extra : o.bench_args) scope_given = scope_given || extra.rfind("--ceilings_p2p_scope", 0) == 0;
  if (o.all_gpus && !scope_given) a.push_back("--ceilings_p2p_scope=device");
  for (const auto& extra : o.bench_args) a.push_back(extra);
  return a;
}

// Keeps the last kKeptLines lines another program printed (what tail shows): a bench logging a line per launch
// for hours grew measure past a GB (review 89), and an out-of-memory kill would lose the finished families.
constexpr std::size_t kKeptLines = 64;
void keep_line(std::vector<std::string>& lines, const std::string& line) {
  if (lines.size() >= 2 * kKeptLines) lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(kKeptLines - 1));
  lines.push_back(line);
}

std::string tail(const std::vector<std::string>& lines, std::size_t n) {
  std::string out;
  for (std::size_t i = lines.size() > n ? lines.size() - n : 0; i < lines.size(); ++i) out += "\n  " + lines[i];
  return out;
}

// The life of one GPU's measurement, as the node summary reports it.
// kNotStarted: the run was interrupted before this GPU's turn (a summary that still says pending is a run going on).
enum class GpuState { kPending, kRunning, kDone, kFailed, kTimedOut, kInterrupted, kNotStarted };

const char* state_name(GpuState s) {
  switch (s) {
    case GpuState::kPending: return "pending";
    case GpuState::kRunning: return "running";
    case GpuState::kDone: return "done";
    case GpuState::kFailed: return "failed";
    case GpuState::kTimedOut: return "timed_out";
    case GpuState::kInterrupted: return "interrupted";
    case GpuState::kNotStarted: return "not_started";
  }
  return "?";
}

struct GpuRun {
  int device = 0;
  GpuState state = GpuState::kPending;
  int exit_code = 0;   // what `ceilings measure --device N` exits with for this outcome
  std::string reason;  // why it is not done
  std::string profile_path, raw_path;
  std::optional<ceilings::Profile> profile;
  std::size_t cases = 0, failed_cases = 0, cut_short_cases = 0;
  std::string started, finished;
  double seconds = 0;
  // The health checks `ceilings qualify` fails on the health the run recorded ("XID: ..."): measure gives no
  // verdict, but a GPU that fell off the bus is not left to read as "done" alone.
  std::vector<std::string> health_failed;
};

// Where one measurement's progress goes: a prefix ("gpu 3: ") and a lock when several GPUs share stderr.
struct ProgressSink {
  std::string prefix;
  bool live = false;  // one rewritten status line (a tty, one GPU at a time)
  std::mutex* lock = nullptr;
};

// " by SIGTERM" where a signal interrupted ceilings measure (a batch system's time limit sends SIGTERM, a terminal
// SIGINT), else "".
std::string by_signal() {
  const std::string name = ceilings::interrupt_signal_name();
  return name.empty() ? "" : " by " + name;
}

// A time limit as the user gave it: whole seconds as they are ("7200 s"), a fraction with its digits ("2.50 s",
// "1.00 us"), never rounded to "0 s", which means no limit.
std::string limit_text(double s) {
  return s == std::floor(s) && s < 1e15 ? ceilings::format_fixed(s, 0) + " s" : ceilings::format_quantity(s, "s");
}

// `family_limit`: the watchdog that fired was --family-timeout's, not the whole run's --timeout.
void classify_failure(const ceilings::ProcessResult& r, const std::vector<std::string>& err, double timeout_s,
                      GpuRun& g, bool family_limit = false) {
  g.exit_code = ceilings::kExitIncomplete;
  g.state = GpuState::kFailed;
  if (!r.exec_error.empty()) {  // what the user named as --bench is not a program this machine runs
    g.exit_code = ceilings::kExitBadInput;
    g.reason = "--bench cannot be run: " + r.exec_error;
  } else if (!r.wait_error.empty()) {  // stopped and never gone (stuck in the driver), or its status lost
    g.state = r.timed_out ? GpuState::kTimedOut : r.interrupted ? GpuState::kInterrupted : GpuState::kFailed;
    g.reason = std::string(r.timed_out     ? ceilings::kTimedOutReason + limit_text(timeout_s) + " timeout; "
                           : r.interrupted ? ceilings::kInterruptedReason
                                           : "") +
               "ceilings-bench " + r.wait_error + tail(err, 5);
  } else if (r.timed_out) {
    g.state = GpuState::kTimedOut;
    g.reason = ceilings::kTimedOutReason + limit_text(timeout_s) +
               (family_limit ? " family timeout (--family-timeout)" : " timeout") + " and was terminated" +
               (r.signal == SIGKILL ? " (ignored SIGTERM, then killed)" : "") + tail(err, 5);
  } else if (r.interrupted) {
    g.state = GpuState::kInterrupted;
    g.reason = std::string(ceilings::kInterruptedReason) + "ceilings-bench was stopped before it finished" +
               (r.signal && !r.stopped_by_us ? " (" + ceilings::signal_name(r.signal) +
                                                   " from outside: a batch system's time limit or scancel, or a kill)"
                                             : by_signal());
  } else if (r.exit_code == 3) {  // ceilings-bench: no usable GPU
    g.reason = err.empty() ? "no usable GPU" : err.back();
  } else if (r.exit_code == 2) {
    g.exit_code = ceilings::kExitBadInput;
    g.reason = "ceilings-bench rejected its arguments:" + tail(err, 5);
  } else {
    g.reason = "ceilings-bench failed (" + r.describe() + ")" + tail(err, 10);
  }
}

// The prefix of a run's per-family files beside the raw JSON: the process id and a random token, so neither a
// run in another PID namespace (a container's process is often 1 every time) nor one an earlier killed run
// left behind can be read as this run's output.
constexpr std::size_t kPartialSuffixMax = 48;  // ".partial.<pid>-<8 hex>.<k>.json.checkpoint", with room
std::string partial_base(const std::string& raw_path) {
  char token[16];
  std::snprintf(token, sizeof token, "%08x", static_cast<unsigned>(std::random_device{}()));
  return raw_path + ".partial." + std::to_string(getpid()) + "-" + token;
}

// Removes `path`, every file beside it whose name starts with its name (its checkpoint), and the temporary
// files write_file_atomic writes beside any of them (left behind when ceilings-bench is killed while it
// rewrites its checkpoint).
std::size_t remove_with_prefix(const std::string& path) {
  const fs::path p(path);
  const std::string stem = p.filename().string();
  const std::string temp = ceilings::atomic_temp_prefix(stem);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  std::error_code ec;
  std::vector<fs::path> doomed;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    // ".<stem>...": the temporary of the output or of its checkpoint (whose name starts with the output's).
    if (name.rfind(stem, 0) == 0 || name.rfind(temp.substr(0, temp.size() - 5), 0) == 0) doomed.push_back(it->path());
  }
  std::size_t removed = 0;
  for (const auto& d : doomed) removed += fs::remove(d, ec) ? 1 : 0;
  return removed;
}

// The locks of one profile's files for the run: its raw JSON's (--out foo.profile.json, foo.json and foo all write
// foo.bench.json and its per-family files) and the profile's own (two symlinks, or a link and its target, write one
// profile beside two raw JSONs), taken in that order.
struct OutputClaim {
  std::unique_ptr<ceilings::OutputLock> raw, profile;
};

// Holds `out` for the run (a second run into it is exit 2) and removes the per-family files a killed earlier
// run into it left beside its raw JSON: with the lock held, no live run is writing them.
OutputClaim claim_output(const std::string& out, const std::string& option) {
  OutputClaim claim;
  claim.raw = std::make_unique<ceilings::OutputLock>(raw_path_for(out), option, out);
  // A profile that is a link to its own raw JSON has one lock: taken once (a second would be refused by the first).
  if (ceilings::output_lock_path(out) != ceilings::output_lock_path(raw_path_for(out)))
    claim.profile = std::make_unique<ceilings::OutputLock>(out, option, out);
  if (!claim.raw->held()) return claim;
  const std::string partial = raw_path_for(out) + ".partial.";
  if (const std::size_t n = remove_with_prefix(partial))
    std::fprintf(stderr, "ceilings measure: removed %zu file(s) an earlier run that was killed left (%s*)\n", n,
                 partial.c_str());
  return claim;
}

// Benchmark names grouped by family (the part before the first '/'), in the order they run.
std::vector<std::pair<std::string, std::vector<std::string>>> group_by_family(const std::vector<std::string>& names) {
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  for (const std::string& n : names) {
    const std::string family = n.substr(0, n.find('/'));
    if (groups.empty() || groups.back().first != family) groups.push_back({family, {}});
    groups.back().second.push_back(n);
  }
  return groups;
}

// Measures one GPU and writes its profile (and raw JSON) atomically. Each benchmark family runs in a
// ceilings-bench process of its own, so a crash, a hang cut by --timeout or a sticky CUDA error costs
// that family, not the run: within a family the checkpoint keeps every finished case, the case that
// was running becomes an error with the reason, and the ones after it are skipped as not run.
// Never throws for a failure of the measurement: the outcome says what happened.
// `start_floor`: a time the run's start is not before (the node summary's stamp of its turn; "" for none), so that
// its finish and its profile's creation, never before its start, are not before what the summary says either.
GpuRun measure_gpu(const MeasureOptions& o, const std::string& bench, int device, const std::string& pci_bus_id,
                   const std::string& listed_uuid, const std::string& out, const ProgressSink& sink,
                   const std::string& start_floor = "") {
  GpuRun g;
  g.device = device;
  g.profile_path = out;
  g.raw_path = raw_path_for(out);
  g.started = not_before(ceilings::utc_now_iso8601(), start_floor);
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  // A time of this GPU's run never before its start: fleet orders a profile against its node summary's start to
  // tell this run's file from an earlier one's.
  auto finish = [&](GpuRun& run) -> GpuRun& {
    run.finished = not_before(ceilings::utc_now_iso8601(), g.started);
    run.seconds = elapsed();
    return run;
  };

  // 1. The list of cases (this is also where "no GPU" shows up, before anything is written).
  std::vector<std::string> names, err;
  const double list_timeout = o.timeout_s > 0 ? std::min(120.0, o.timeout_s) : 120.0;
  ceilings::ProcessSpec list{{bench, "--benchmark_list_tests=true"}, {}, list_timeout, std::min(5.0, o.kill_grace_s)};
  for (auto& a : device_args(o, device)) list.argv.push_back(a);
  if (!o.filter.empty()) list.argv.push_back("--benchmark_filter=" + o.filter);
  // No ceilings-bench lists anywhere near this many cases: a program printing without end is not one.
  constexpr std::size_t kMaxCases = 100000;
  bool too_many = false;
  auto r = ceilings::run_process(list,
                                 [&](const std::string& l) {
                                   if (l.empty() || too_many) return;
                                   if (names.size() == kMaxCases) too_many = true;
                                   else names.push_back(l);
                                 },
                                 [&](const std::string& l) { keep_line(err, l); });
  if (!r.ok()) {
    classify_failure(r, err, list_timeout, g);
    return finish(g);
  }
  if (too_many) {
    g.state = GpuState::kFailed;
    g.exit_code = ceilings::kExitBadInput;
    g.reason = bench + " listed more than " + std::to_string(kMaxCases) +
               " benchmarks (--benchmark_list_tests): is it ceilings-bench?";
    return finish(g);
  }
  if (names.empty()) {
    g.state = GpuState::kFailed;
    g.exit_code = ceilings::kExitBadInput;
    // ceilings-bench's last stderr lines say why: Google Benchmark's "Failed to match any benchmarks" or,
    // for a --filter that is not a POSIX extended regex, "Could not compile benchmark re".
    g.reason = o.filter.empty() ? bench + " listed no benchmarks (--benchmark_list_tests printed nothing: is it "
                                          "ceilings-bench?)" + tail(err, 3)
                                : "no benchmark matches --filter '" + o.filter + "'" + tail(err, 3);
    return finish(g);
  }
  // --all-gpus --concurrent: a peer case reaches into the other GPUs (buffers, copies, kernels on them)
  // while their own processes measure them, so both sets of numbers would be wrong. Held back, with the
  // reason, unless nothing else was asked for.
  std::vector<std::string> held_back;
  if (o.all_gpus && o.concurrent) {
    std::vector<std::string> rest;
    for (auto& n : names) (ceilings::reaches_other_gpus(n.substr(0, n.find('/'))) ? held_back : rest).push_back(n);
    if (rest.empty())
      held_back.clear();
    else
      names = std::move(rest);
  }
  g.cases = names.size();

  // 2. The runs, with progress on stderr: one console line per finished case.
  std::size_t done = 0;
  auto say = [&](const std::string& text, bool status_line) {
    std::unique_lock<std::mutex> hold;
    if (sink.lock) hold = std::unique_lock<std::mutex>(*sink.lock);
    if (sink.live && status_line)
      std::fprintf(stderr, "\r\033[K%s%s", sink.prefix.c_str(), text.c_str());
    else  // a line of its own; on a tty it replaces the status line, which the next progress redraws
      std::fprintf(stderr, "%s%s%s\n", sink.live ? "\r\033[K" : "", sink.prefix.c_str(), text.c_str());
    std::fflush(stderr);
  };
  auto progress = [&](const std::string& current) {
    const long secs = static_cast<long>(elapsed());
    char head[64];
    std::snprintf(head, sizeof head, "[%zu/%zu %02ld:%02ld] ", done, names.size(), secs / 60, secs % 60);
    say(head + current, true);
  };
  // Health counters before and after the run (the profile's `health` section; `ceilings qualify` judges it).
  // NVML is opened by PCI bus id where known: NVML's and CUDA's device orders can differ.
  std::string health_why;
  bool health_fault = false;  // NVML says the GPU is lost or faulty: recorded as a fault, which qualify fails
  auto health =
      ceilings::cli::HealthMonitor::try_open(static_cast<unsigned>(device), &health_why, pci_bus_id, &health_fault);
  if (health) health->before();

  const std::set<std::string> known(names.begin(), names.end());
  std::set<std::string> seen;  // cases whose console line has been counted
  const auto groups = o.one_process ? std::vector<std::pair<std::string, std::vector<std::string>>>{{"all", names}}
                                    : group_by_family(names);
  ceilings::json merged;                     // context of the first usable output, every family's cases
  std::vector<ceilings::Skipped> lost, not_run;  // cases a failed run did not finish, and cases never started
  // A case's entry under the ceiling it feeds, its run name after the reason (as the converter names its own).
  auto entry = [](const std::string& benchmark, const std::string& reason) {
    const ceilings::CaseName c = ceilings::case_name(benchmark);
    // The reason quotes ceilings-bench's stderr: kept printable, as the converter keeps the bench's own text.
    return ceilings::Skipped{ceilings::printable_text(c.ceiling),
                             ceilings::printable_text(c.run_name.empty() ? reason : reason + " [" + c.run_name + "]")};
  };
  for (const auto& n : held_back)
    not_run.push_back(entry(n, "not run: --concurrent measures every GPU at once, and peer copies would load the "
                               "GPUs the other processes are measuring; --all-gpus without --concurrent measures them"));
  ceilings::json families = ceilings::json::array();
  std::string stopped;  // why the run stopped before its last family (timeout, interrupt, bad input, no GPU)
  std::string first_failure;
  std::string command;
  const std::string tmp_base = partial_base(g.raw_path);
  progress("running " + names.front());
  std::size_t family_offset = 0;  // names[] index of this family's first case (groups keep the listing's order)
  for (std::size_t k = 0; k < groups.size(); ++k) {
    const auto& [family, cases] = groups[k];
    family_offset += cases.size();
    // A family that never started has its entry too (each family's outcome is in measure.families).
    auto never_started = [&, family = family, cases = cases] {
      for (const auto& n : cases) not_run.push_back(entry(n, "not run: " + stopped));
      families.push_back({{"family", family}, {"cases", cases.size()}, {"finished_cases", 0}, {"seconds", 0},
                          {"failure", "not run: " + stopped}});
    };
    if (!stopped.empty()) {
      never_started();
      continue;
    }
    if (ceilings::interrupted()) {  // Ctrl-C between two families: start no other
      stopped = "interrupted: ceilings measure was stopped" + by_signal() + " before this family started";
      g.state = GpuState::kInterrupted;
      g.exit_code = ceilings::kExitIncomplete;
      never_started();
      continue;
    }
    double budget = 0;
    if (o.timeout_s > 0) {
      budget = o.timeout_s - elapsed();
      if (budget <= 0) {
        stopped = "the --timeout of " + ceilings::format_quantity(o.timeout_s, "s") + " was used up";
        g.state = GpuState::kTimedOut;
        g.exit_code = ceilings::kExitIncomplete;
        never_started();  // in measure.families too
        continue;
      }
    }
    // --family-timeout keeps a hung or overlong family from starving the ones after it; the last family
    // gets all that is left.
    const bool family_capped =
        o.family_timeout_s > 0 && k + 1 < groups.size() && (budget == 0 || o.family_timeout_s < budget);
    const double limit = family_capped ? o.family_timeout_s : budget;
    const std::string tmp_json = tmp_base + "." + std::to_string(k) + ".json";  // a prefix of no other family's files
    // After every case ceilings-bench rewrites this with the cases finished so far.
    const std::string checkpoint = tmp_json + ".checkpoint";
    ceilings::ProcessSpec run{{bench, "--benchmark_out=" + tmp_json, "--benchmark_out_format=json",
                               "--benchmark_format=console", "--benchmark_color=false",
                               "--ceilings_checkpoint=" + checkpoint},
                              {},
                              limit,
                              o.kill_grace_s};
    for (auto& a : device_args(o, device)) run.argv.push_back(a);
    // One process runs what --filter matched, less the peer cases --concurrent holds back (review 89: it ran them
    // while the other GPUs' processes measured those GPUs).
    run.argv.push_back("--benchmark_filter=" + (o.one_process && held_back.empty()
                                                    ? o.filter
                                                    : ceilings::exact_benchmark_filter(cases)));
    if (command.empty())
      for (const auto& a : run.argv) command += (command.empty() ? "" : " ") + a;
    err.clear();
    const double family_start = elapsed();
    r = ceilings::run_process(
        run,
        [&](const std::string& line) {
          const auto space = line.find(' ');
          const std::string first = line.substr(0, space);
          // Once per case: repetitions (--benchmark_repetitions) print a case's name more than once.
          if (!known.count(first) || !seen.insert(first).second) return;
          ++done;
          const bool error = line.find("ERROR OCCURRED") != std::string::npos;
          g.failed_cases += error ? 1 : 0;
          if (!sink.live && error) say("  " + line, false);
          progress(done < names.size() ? "running " + names[done] : "done");
        },
        [&](const std::string& l) { keep_line(err, l); });

    // What this family left: its complete output, or (stopped early) its checkpoint.
    ceilings::json doc;
    std::string failure;
    GpuRun outcome;
    if (r.ok()) {
      try {
        std::error_code ec;
        if (!fs::exists(tmp_json, ec))  // named by its own words, not by the scratch file it did not write
          throw ceilings::InputError("it wrote no results file (--benchmark_out)");
        doc = ceilings::read_benchmark_json_file(tmp_json);
        // Readable, but holding no list of results: the family's cases must not vanish without a word.
        if (!doc.is_object() || !doc.contains("benchmarks") || !doc["benchmarks"].is_array())
          failure = "ceilings-bench exited 0 without a usable result: its output has no benchmarks array";
      } catch (const ceilings::Error& e) {
        failure = std::string("ceilings-bench exited 0 without a usable result: ") + e.what();
      }
    } else {
      // A timeout names the limit that fired: the user's --timeout, or --family-timeout.
      classify_failure(r, err, family_capped ? o.family_timeout_s : o.timeout_s, outcome, family_capped);
      failure = outcome.reason;
    }
    if (!failure.empty()) {
      try {
        doc = ceilings::read_benchmark_json_file(checkpoint);
      } catch (const ceilings::Error&) {
        doc = nullptr;  // nothing finished, or nothing readable
      }
    }
    remove_with_prefix(tmp_json);  // the output, the checkpoint, and a checkpoint temp a kill mid-write left

    // Every family must have measured the GPU the first one did: were one GPU to fall off the bus between
    // families, --ceilings_device would name another, and its numbers must not be filed under this one.
    // Nor another than the one listed at this index, whose health the run reads by its bus id.
    bool other_gpu = false, unlisted_gpu = false;
    std::string which_gpu;
    if (const std::string other = ceilings::other_device(merged, doc); !other.empty())
      which_gpu = "ceilings-bench measured another GPU than the run's first family: " + other;
    else if (const std::string unlisted = ceilings::unlisted_device(doc, pci_bus_id, listed_uuid);
             !unlisted.empty()) {
      which_gpu = "ceilings-bench measured " + unlisted;
      unlisted_gpu = true;
    }
    if (!which_gpu.empty()) {
      // What else went wrong (a crash, a timeout) stays first: it decides whether the run goes on.
      const std::size_t line_end = std::min(failure.size(), failure.find('\n'));
      failure = failure.empty() ? which_gpu : failure.insert(line_end, "; and " + which_gpu);
      doc = nullptr;
      other_gpu = true;
    }
    std::size_t finished = 0;
    if (doc.is_object() && doc.contains("benchmarks") && doc["benchmarks"].is_array()) {
      std::set<std::string> have;
      for (const auto& b : doc["benchmarks"])
        if (b.is_object() && b.contains("name") && b["name"].is_string()) have.insert(b["name"].get<std::string>());
      std::size_t missing = 0;
      for (const auto& n : cases) missing += have.count(n) ? 0 : 1;
      finished = cases.size() - missing;
      if (r.ok() && failure.empty() && missing > 0)  // exited 0 yet some listed case never reported
        failure = "ceilings-bench exited 0 without reporting " + std::to_string(missing) + " of the family's " +
                  std::to_string(cases.size()) + " case(s) (a name that differs from the listing's, or a filter "
                  "that did not select it)";
      if (merged.is_null()) {
        merged = doc;
      } else {
        for (auto& b : doc["benchmarks"]) merged["benchmarks"].push_back(std::move(b));
        // The device and host as the first family that recorded them (one that wrote none, or nothing, went first)
        if (!ceilings::has_device_context(merged) && ceilings::has_device_context(doc)) merged["context"] = doc["context"];
      }
      if (!failure.empty()) {
        bool first = true;
        for (const auto& n : cases) {
          if (have.count(n)) continue;
          const std::string why = failure.substr(0, failure.find('\n'));
          if (r.ok())  // nothing was cut short: each missing case is an error of its own
            lost.push_back(entry(n, "not reported: " + why));
          else if (first)
            lost.push_back(entry(n, ceilings::kStoppedWhileRunningReason + why));
          else
            not_run.push_back(entry(n, "not run: " + why));
          first = false;
        }
      }
    } else if (!failure.empty()) {
      const std::string why = failure.substr(0, failure.find('\n'));
      if (r.ok() || other_gpu) {  // exited 0 without a usable output, or measured another GPU: all errors
        for (const auto& n : cases) lost.push_back(entry(n, "not reported: " + why));
      } else {
        lost.push_back(entry(cases.front(), ceilings::kStoppedWhileRunningReason + why));
        for (std::size_t i = 1; i < cases.size(); ++i) not_run.push_back(entry(cases[i], "not run: " + why));
      }
    }
    if (!failure.empty() && finished == cases.size())  // it finished every case and failed afterwards
      lost.push_back({family, "ceilings-bench failed after its last case: " + failure.substr(0, failure.find('\n'))});
    ceilings::json fam = {{"family", family}, {"cases", cases.size()}, {"finished_cases", finished},
                          {"seconds", elapsed() - family_start}};
    if (!failure.empty()) fam["failure"] = failure;
    families.push_back(fam);
    if (!failure.empty() && first_failure.empty()) first_failure = failure;
    if (!failure.empty())  // said now, with ceilings-bench's last stderr lines: the log shows what went wrong where
      say("ceilings measure: family " + family + ": " + std::to_string(finished) + " of " +
              std::to_string(cases.size()) + " case(s) finished; " + failure,
          false);

    // Stop here when the rest cannot run either: out of time, asked to stop, bad arguments, no GPU. A family
    // cut by its own --family-timeout is not the run running out of time: the next family starts.
    if (!r.ok() && ((r.timed_out && !family_capped) || r.interrupted || r.exit_code == 2 || r.exit_code == 3 ||
                    !r.exec_error.empty())) {
      stopped = failure.substr(0, failure.find('\n'));
      g.state = outcome.state;
      g.exit_code = outcome.exit_code;
    } else if (unlisted_gpu) {  // every later family would measure that GPU too (review 24 #7): not run
      stopped = which_gpu;
      g.state = GpuState::kFailed;
      g.exit_code = ceilings::kExitIncomplete;
    }
    if (done != family_offset) {  // the cases this family lost or never printed are behind us too
      done = family_offset;
      if (stopped.empty() && k + 1 < groups.size()) progress("running " + names[done]);
    }
  }
  if (sink.live) {
    std::unique_lock<std::mutex> hold;
    if (sink.lock) hold = std::unique_lock<std::mutex>(*sink.lock);
    std::fprintf(stderr, "\n");
  }
  if (health) health->after();

  // 3. Profile: convert, then write both files atomically.
  if (merged.is_null()) {  // no family left anything
    if (g.state == GpuState::kDone || g.state == GpuState::kPending || g.state == GpuState::kRunning) {
      g.state = GpuState::kFailed;
      g.exit_code = g.exit_code == ceilings::kExitBadInput ? g.exit_code : ceilings::kExitIncomplete;
    }
    g.reason = first_failure.empty() ? "ceilings-bench wrote nothing" : first_failure;
    return finish(g);
  }
  ceilings::Profile profile;
  try {
    profile = ceilings::profile_from_benchmark_json(merged);
    profile.created = not_before(profile.created, g.started);
  } catch (const ceilings::Error& e) {
    g.state = GpuState::kFailed;
    g.exit_code = ceilings::kExitIncomplete;  // a broken bench output is a measurement that failed, not bad input
    g.reason = std::string("ceilings-bench output is not a usable result: ") + e.what();
    return finish(g);
  }
  // A ceiling whose case was cut or never ran is said so by that entry: not also "sweep only" (what the
  // converter says of a sweep family with no ceiling case in the output).
  auto cut_or_not_run = [&](const std::string& name) {
    auto named = [&](const ceilings::Skipped& x) { return x.name == name; };
    return std::any_of(lost.begin(), lost.end(), named) || std::any_of(not_run.begin(), not_run.end(), named);
  };
  profile.skipped.erase(std::remove_if(profile.skipped.begin(), profile.skipped.end(),
                                       [&](const ceilings::Skipped& x) {
                                         return x.reason.rfind("sweep only:", 0) == 0 && cut_or_not_run(x.name);
                                       }),
                        profile.skipped.end());
  for (auto& e : lost) profile.errors.push_back(std::move(e));
  // Every error of the profile, not only the console's ERROR lines: a case a crash cut off, or one ceilings-bench
  // never reported, has failed too (the node summary shows this count); one a timeout or an interrupt cut short
  // failed nothing, counted apart (review 113).
  g.cut_short_cases = static_cast<std::size_t>(std::count_if(
      profile.errors.begin(), profile.errors.end(),
      [](const ceilings::Skipped& e) { return ceilings::cut_short_reason(e.reason); }));
  g.failed_cases = profile.errors.size() - g.cut_short_cases;
  for (auto& s : not_run) profile.skipped.push_back(std::move(s));
  std::size_t finished_cases = 0;
  for (const auto& f : families) finished_cases += f.at("finished_cases").get<std::size_t>();
  const bool complete = stopped.empty() && first_failure.empty();
  // Stopped or failed before any case finished: there is nothing to keep, and writing would replace what an
  // earlier run left at the same path (the default name is the same every run) with an empty profile.
  if (!complete && finished_cases == 0) {
    if (g.state == GpuState::kDone || g.state == GpuState::kPending || g.state == GpuState::kRunning) {
      g.state = GpuState::kFailed;
      g.exit_code = g.exit_code == ceilings::kExitBadInput ? g.exit_code : ceilings::kExitIncomplete;
    }
    const std::string why = stopped.empty() ? first_failure.substr(0, first_failure.find('\n')) : stopped;
    std::error_code ec;
    g.reason = why + "; no case finished: nothing written" + (fs::exists(out, ec) ? " (" + out + " was left as it was)" : "");
    return finish(g);
  }
  profile.raw["measure"] = {{"invocation", ceilings::cli::invocation()},
                            {"command", command + (o.one_process ? "" : " (one process per family)")},
                            {"cases", names.size()},
                            {"finished_cases", finished_cases},
                            {"failed_cases", g.failed_cases},
                            {"cut_short_cases", g.cut_short_cases},
                            {"complete", complete},
                            {"timeout_s", o.timeout_s},  // the run's limit (0: none), given or the default
                            {"families", families}};
  if (!complete) profile.raw["measure"]["stopped"] = stopped.empty() ? first_failure : stopped;
  profile.gpus_measured_together = o.gpus_together;  // written into measure by profile_to_json
  // NVML's GPU at this index may be another than the one measured (no bus id to find it by: CUDA_VISIBLE_DEVICES
  // renumbers CUDA's GPUs, not NVML's). Its health is no health of this GPU: said now, not first by qualify.
  if (health && !profile.device.board().empty() && !health->section().uuid.empty() &&
      health->section().uuid != profile.device.board()) {
    health_why = "NVML's GPU " + std::to_string(device) + " is another GPU (" + health->section().uuid +
                 ") than the one measured (" + profile.device.board() + "): its health is not this GPU's";
    say("health: " + health_why, false);
    health.reset();
  }
  profile.raw["health"] =
      health         ? ceilings::health_to_json(health->section())
      : health_fault ? ceilings::json(std::string(ceilings::kHealthFaultPrefix) + health_why)
                     : ceilings::json("unavailable: " + health_why);
  try {
    // Read back before it is written; the raw output is kept whatever (review 92: the families' files are gone by now).
    ceilings::write_profile_with_raw(profile, out, g.raw_path, merged.dump(2) + "\n");
  } catch (const ceilings::Error& e) {
    g.state = GpuState::kFailed;
    g.exit_code = e.exit_code();
    g.reason = e.what();
    return finish(g);
  }
  // The health checks qualify would fail (its default health rules), said now (review 46: a run that recorded XID 79
  // read "done", exit 0): no verdict and no exit code of measure's own, which stay qualify's.
  // A section the checks cannot read (none should be: the monitor writes what they read) is said, never a crash
  // that would take the node's other GPUs with it (review 51).
  try {
    for (const ceilings::Check& k : ceilings::profile_health_checks(profile, ceilings::default_rules().health))
      if (k.status == ceilings::CheckStatus::kFail) g.health_failed.push_back(k.rule + ": " + k.reason);
  } catch (const ceilings::Error& e) {
    say(std::string("health: the recorded health cannot be judged: ") + e.what(), false);
  }
  for (const std::string& f : g.health_failed)
    say("health fault: " + f + " (qualify's default health rules fail this GPU)", false);
  g.profile = std::move(profile);
  if (!stopped.empty()) {  // timed out, interrupted, ...: the finished cases are kept
    g.reason = stopped + "\n  kept the " + std::to_string(finished_cases) + " finished case(s) of " +
               std::to_string(names.size()) + " in " + out + " (" + std::to_string(not_run.size()) + " not run)";
    return finish(g);
  }
  g.state = GpuState::kDone;
  g.exit_code = g.profile->errors.empty() ? ceilings::kExitOk : ceilings::kExitIncomplete;
  return finish(g);
}

std::string resolve_bench(const MeasureOptions& o) {
  const std::string bench = o.bench.empty() ? default_bench_path() : o.bench;
  // A --bench or CEILINGS_BENCH that is not a program is bad input; the default one missing means this build has
  // no CUDA benchmarks: incomplete.
  const char* env = std::getenv("CEILINGS_BENCH");
  const std::string given = !o.bench.empty() ? "--bench " + bench
                            : env && *env    ? "$CEILINGS_BENCH (" + bench + ")"
                                             : "";
  std::error_code ec;
  if (!given.empty() && (access(bench.c_str(), X_OK) != 0 || fs::is_directory(bench, ec)))
    throw InputError(given + " is not an executable file");
  if (access(bench.c_str(), X_OK) != 0)
    throw IncompleteError("cannot run " + bench +
                          ": ceilings-bench is missing (built without CUDA?); set CEILINGS_BENCH or --bench");
  return bench;
}

std::string default_profile_name(const std::string& dir, int device) {
  const std::string name = hostname() + "-gpu" + std::to_string(device) + ".profile.json";
  return dir.empty() ? name : (fs::path(dir) / name).string();
}

// A default name holds the GPU's CUDA index, which CUDA_VISIBLE_DEVICES renumbers (every one-GPU Slurm job is
// "gpu0"): an earlier run's profile there of another GPU is not replaced unasked. `uuid`: the GPU this run measures,
// as listed (empty: not known, nothing to check).
void check_default_name_is_this_gpu(const std::string& path, const std::string& named, int device,
                                    const std::string& uuid, bool all_gpus) {
  std::error_code ec;
  if (uuid.empty() || !fs::exists(path, ec)) return;
  std::string earlier_uuid, created;
  try {
    const std::string text = ceilings::read_text_file(path);
    if (!ceilings::is_measured_profile_text(text)) return;
    const ceilings::json doc = ceilings::parse_json_text(text, path);
    earlier_uuid = doc.at("device").at("uuid").get<std::string>();
    if (doc.contains("created") && doc["created"].is_string()) created = doc["created"].get<std::string>();
  } catch (const std::exception&) {
    return;  // check_replaceable_profile said what is wrong with it
  }
  if (earlier_uuid.empty() || earlier_uuid == uuid) return;
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  throw InputError(
      named + " '" + path + "' holds the profile of another GPU (" + ceilings::printable_text(earlier_uuid) +
      (created.empty() ? "" : ", measured " + ceilings::printable_text(created)) + ") than GPU " +
      std::to_string(device) + " this run measures (" + ceilings::printable_text(uuid) + ")" +
      (visible && *visible ? ": CUDA_VISIBLE_DEVICES=" + ceilings::printable_text(visible) +
                                 " numbers the GPUs a job sees from 0, so one default name stands for different GPUs "
                                 "in different jobs"
                           : ": the GPUs were renumbered or replaced") +
      (all_gpus ? "; it was left as it was: give this run its own --out-dir, or remove the earlier profiles"
                : "; it was left as it was: name this run's profile with --out, give each job its own --out-dir, or "
                  "remove the earlier one"));
}

// The GPUs ceilings-bench sees; the listing may take 120 s (a CUDA start-up on a sick GPU can hang), or the
// run's --timeout where that is shorter.
std::vector<ceilings::json> list_devices(const std::string& bench, double kill_grace_s, double timeout_s,
                                         bool* stopped = nullptr);

int run_measure(const MeasureOptions& o) {
  const std::string out = o.out.empty() ? default_profile_name(o.out_dir, o.device) : o.out;
  // The error_code forms throughout: a path the user may not even look at (a directory without search
  // permission) is bad input, exit 2, not a filesystem_error's exit 3.
  std::error_code ec;
  const fs::path out_dir = fs::absolute(out, ec).parent_path();
  if (!o.out.empty() && !fs::is_directory(out_dir, ec))
    throw InputError("the directory of --out does not exist or cannot be read: " + out_dir.string() +
                     (ec ? " (" + ec.message() + ")" : ""));
  const std::string bench = resolve_bench(o);
  // As --all-gpus does, --out-dir is made where it is missing, once the bench is known to be there; a run that
  // writes nothing into it removes it again (no GPU leaves no empty directory behind).
  struct MadeDirs {
    std::vector<fs::path> paths;  // the directories made, deepest first
    ~MadeDirs() {
      std::error_code ec;
      for (const fs::path& p : paths)
        if (fs::is_empty(p, ec) && !ec) fs::remove(p, ec);
    }
  } made;
  if (o.out.empty() && !o.out_dir.empty()) check_out_dir_not_a_file(o.out_dir);
  if (o.out.empty() && !o.out_dir.empty() && !fs::exists(o.out_dir, ec)) {
    for (fs::path p = fs::absolute(o.out_dir, ec).lexically_normal(); !p.empty() && !fs::exists(p, ec);
         p = p.parent_path()) {
      made.paths.push_back(p);
      if (p == p.parent_path()) break;
    }
    fs::create_directories(o.out_dir, ec);
    std::error_code is_dir_ec;  // not over ec: its reason (EROFS, EACCES) is the one to report
    if (!fs::is_directory(o.out_dir, is_dir_ec))
      throw InputError("cannot create --out-dir " + o.out_dir + (ec ? ": " + ec.message() : ""));
  }
  // Messages name the option the path came from: --out, --out-dir's default name, or the default name alone.
  const std::string named = !o.out.empty() ? "--out" : !o.out_dir.empty() ? "--out-dir (the profile)" : "the profile";
  const std::string raw_named = named == "--out" ? "--out (the raw JSON beside it)"
                                : named == "the profile" ? "the raw JSON beside the profile"
                                                         : "--out-dir (the raw JSON beside the profile)";
  ceilings::check_output_path(out, named, {bench});
  ceilings::check_output_path(raw_path_for(out), raw_named, {bench});
  // An earlier run's files are replaced; anything else kept at those paths is not.
  ceilings::check_replaceable_profile(out, named);
  ceilings::check_replaceable_output(raw_path_for(out), raw_named,
                                     "a ceilings-bench JSON output", ceilings::is_bench_json_text);
  // The files each family writes beside the raw JSON add to its name; past the file system's 255 bytes every
  // family would fail with no word of why.
  if (const std::string raw_name = fs::path(raw_path_for(out)).filename().string();
      raw_name.size() + kPartialSuffixMax > 255)
    throw InputError(named + " '" + out + "' has a name too long for the files written beside it while measuring ('" +
                     raw_name.substr(0, 40) + "...' and up to " + std::to_string(kPartialSuffixMax) +
                     " more characters, past 255): shorten it");
  const auto lock = claim_output(out, named);
  ceilings::install_interrupt_handlers();
  std::string bus_id, uuid;  // best effort: health falls back to the NVML index without the bus id
  bool stopped = false;
  try {
    for (const auto& d : list_devices(bench, o.kill_grace_s, o.timeout_s, &stopped))
      if (d.at("index") == o.device) {
        bus_id = d.at("pci_bus_id").get<std::string>();
        uuid = d.at("uuid").get<std::string>();
      }
  } catch (const ceilings::Error&) {
    // A listing that hung (CUDA's start-up) would hang the cases' listing too, under a limit of its own: the run's
    // --timeout twice over (review 89). Stopped, it ends the run here.
    if (stopped) throw;
  }
  if (o.out.empty()) check_default_name_is_this_gpu(out, named, o.device, uuid, false);
  const GpuRun g = measure_gpu(o, bench, o.device, bus_id, uuid, out, {"", isatty(STDERR_FILENO) != 0, nullptr});
  if (g.state != GpuState::kDone && !g.profile) throw ceilings::Error(g.exit_code, g.reason);
  const ceilings::Profile& profile = *g.profile;
  std::cout << ceilings::render_profile(profile, ceilings::Format::kTable);
  std::cout << "\nprofile: " << out << "\nraw ceilings-bench JSON: " << g.raw_path << "\n";
  if (g.state != GpuState::kDone) throw ceilings::Error(g.exit_code, g.reason);  // a partial profile
  if (!profile.errors.empty()) {
    std::fprintf(stderr, "ceilings measure: %zu case(s) failed; see the ERROR rows\n", profile.errors.size());
    return ceilings::kExitIncomplete;
  }
  return 0;
}

// --- All GPUs of the node ---------------------------------------------------------------------------

// The GPUs ceilings-bench sees (one JSON line each), without CUDA headers in the analysis.
// `stopped`, where given, says whether the listing was stopped (its time limit, an interrupt).
std::vector<ceilings::json> list_devices(const std::string& bench, double kill_grace_s, double timeout_s,
                                         bool* stopped) {
  std::vector<std::string> out, err;
  const double limit = timeout_s > 0 ? std::min(120.0, timeout_s) : 120.0;
  ceilings::ProcessSpec spec{{bench, "--ceilings_list_devices"}, {}, limit, std::min(5.0, kill_grace_s)};
  const auto r = ceilings::run_process(spec,
                                       [&](const std::string& l) {
                                         if (!l.empty() && out.size() < 4096) out.push_back(l);  // GPUs, not a flood
                                       },
                                       [&](const std::string& l) { keep_line(err, l); });
  if (stopped) *stopped = r.timed_out || r.interrupted;
  if (r.interrupted) throw IncompleteError("interrupted while listing the GPUs");
  if (!r.exec_error.empty())  // a file that is not a program (exec format error, ...): what the user gave
    throw InputError("--bench cannot be run: " + r.exec_error);
  if (r.exit_code == 3) throw IncompleteError(err.empty() ? "no usable GPU" : err.back());
  if (!r.ok()) throw IncompleteError("cannot list the GPUs: ceilings-bench " + r.describe() + tail(err, 5));
  std::vector<ceilings::json> devices;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::string what = "ceilings-bench --ceilings_list_devices line " + std::to_string(i + 1);
    try {
      ceilings::json d = ceilings::parse_json_text(out[i], what);
      const ceilings::Fields f(d, what);
      f.integer("index");
      for (const char* key : {"name", "uuid", "pci_bus_id"}) f.string(key);
      devices.push_back(std::move(d));
    } catch (const ceilings::InputError& e) {
      throw IncompleteError(std::string("cannot list the GPUs: ") + e.what());
    }
  }
  if (devices.empty()) throw IncompleteError("ceilings-bench lists no GPU");
  return devices;
}

class NodeRun {
 public:
  NodeRun(const MeasureOptions& o, std::string summary_path, std::vector<ceilings::json> devices)
      : o_(o), path_(std::move(summary_path)), devices_(std::move(devices)), created_(ceilings::utc_now_iso8601()) {
    for (const auto& d : devices_) {
      GpuRun g;
      g.device = static_cast<int>(d.at("index").get<std::int64_t>());
      g.profile_path = default_profile_name(o.out_dir.empty() ? "." : o.out_dir, g.device);
      g.raw_path = raw_path_for(g.profile_path);
      gpus_.push_back(std::move(g));
    }
  }

  std::size_t size() const { return gpus_.size(); }
  const ceilings::json& listed(std::size_t i) const { return devices_[i]; }
  const GpuRun& gpu(std::size_t i) const { return gpus_[i]; }

  // Each change of state is written at once (atomically), so a reader or a killed run sees the truth.
  void set(std::size_t i, GpuRun g) {
    std::lock_guard<std::mutex> hold(mu_);
    gpus_[i] = std::move(g);
    write_locked();
  }
  void set_state(std::size_t i, GpuState s, const std::string& reason = "") {
    std::lock_guard<std::mutex> hold(mu_);
    gpus_[i].state = s;
    if (!reason.empty()) gpus_[i].reason = reason;
    if (s == GpuState::kRunning) gpus_[i].started = stamp_locked();
    write_locked();
  }

  // Each finished GPU against the others of its model (ceilings::compare_node). `unstable` gets the GPUs the rules
  // would name but for their own measurement's spread: not judged.
  std::vector<ceilings::Outlier> compare(std::vector<std::size_t>* members, std::vector<ceilings::Outlier>* unstable) {
    std::lock_guard<std::mutex> hold(mu_);
    std::vector<const ceilings::Profile*> finished;
    members->clear();
    for (std::size_t i = 0; i < gpus_.size(); ++i)
      if (gpus_[i].state == GpuState::kDone && gpus_[i].profile) {
        finished.push_back(&*gpus_[i].profile);
        members->push_back(i);
      }
    ceilings::NodeComparison node = ceilings::compare_node(finished, o_.margin_pct / 100.0);
    const std::size_t min_members = ceilings::OutlierRule{}.min_members;
    *unstable = node.unstable;
    const std::size_t gpus_compared = node.gpus_compared;
    gpus_compared_ = gpus_compared;
    const auto listed = [&](const std::vector<ceilings::Outlier>& list) {
      ceilings::json gpus = ceilings::json::array();
      for (const auto& out : list) {
        const GpuRun& g = gpus_[(*members)[out.member]];
        ceilings::json cs = ceilings::json::array();
        for (const auto& d : out.ceilings)
          cs.push_back({{"ceiling", d.ceiling}, {"unit", d.unit}, {"value", d.value}, {"node_median", d.median},
                        {"below_median", d.deficit}, {"own_noise", d.own_noise},
                        {"own_spread_standard_errors", d.own_spread},
                        {"reference", d.majority_split ? "the faster GPUs' median (the node splits in two, the slower "
                                                         "GPUs the majority: not judged)"
                                      : d.by_split   ? "the faster GPUs' median (the node splits in two)"
                                                     : "the node median"}});
        gpus.push_back({{"index", g.device}, {"uuid", g.profile->device.uuid},
                        {"pci_bus_id", g.profile->device.pci_bus_id}, {"ceilings", cs}});
      }
      return gpus;
    };
    comparison_ = {{"margin", o_.margin_pct / 100.0},
                   {"own_spread_standard_errors", node.own_spread},  // the largest model's; each deviation has its own
                   {"gpus_compared", gpus_compared},
                   {"compared", gpus_compared > 0},
                   {"below_peers", listed(node.below_peers)},
                   {"unstable", listed(node.unstable)}};
    std::string left_out;
    for (const std::string& m : node.too_few) left_out += (left_out.empty() ? "" : "; ") + m;
    if (gpus_compared == 0)
      comparison_["note"] = "fewer than " + std::to_string(min_members) + " finished GPUs of one model: no comparison";
    else if (!left_out.empty())
      comparison_["note"] = "not compared (fewer than " + std::to_string(min_members) +
                            " finished GPUs of their model): " + left_out;
    write_locked();
    return node.below_peers;
  }

  const std::string& path() const { return path_; }
  // The finished GPUs compare() set against peers of their model (after it ran).
  std::size_t gpus_compared() const { return gpus_compared_; }
  // Read once every GPU's run has ended (no writer left).
  const std::string& summary_problem() const { return summary_problem_; }

 private:
  void write_locked() {
    ceilings::json gpus = ceilings::json::array();
    bool complete = true;
    for (std::size_t i = 0; i < gpus_.size(); ++i) {
      const GpuRun& g = gpus_[i];
      const auto& d = devices_[i];
      complete = complete && g.state == GpuState::kDone && g.profile && g.profile->errors.empty();
      ceilings::json j = {{"index", g.device},
                          {"name", d.value("name", "")},
                          {"uuid", d.value("uuid", "")},
                          {"pci_bus_id", d.value("pci_bus_id", "")},
                          {"state", state_name(g.state)}};
      if (!g.reason.empty()) j["reason"] = g.reason;
      if (g.profile) {  // file names beside the summary: the directory may be moved or shared
        j["profile"] = fs::path(g.profile_path).filename().string();
        j["raw"] = fs::path(g.raw_path).filename().string();
        j["failed_cases"] = g.failed_cases;
        j["cut_short_cases"] = g.cut_short_cases;
        if (g.state != GpuState::kDone) j["partial"] = true;  // the cases finished before it stopped
      }
      if (!g.health_failed.empty()) j["health_faults"] = g.health_failed;  // as qualify would fail them
      if (!g.started.empty()) j["started"] = g.started;
      if (!g.finished.empty()) {
        j["finished"] = g.finished;
        j["seconds"] = g.seconds;
      }
      gpus.push_back(std::move(j));
    }
    ceilings::json doc = {{"schema", "ceilings.node/1"},
                          {"host", hostname()},
                          {"created", created_},
                          {"updated", stamp_locked()},
                          {"mode", o_.concurrent ? "concurrent" : "sequential"},
                          {"timeout_s", o_.timeout_s},
                          {"complete", complete},
                          {"gpus", gpus},
                          {"comparison", comparison_}};
    // What stopped the run, where a signal did: a batch system's time limit (SIGTERM) or a terminal's Ctrl-C
    // (SIGINT) read apart (review 34).
    if (const std::string sig = ceilings::interrupt_signal_name(); !sig.empty()) doc["interrupted_by"] = sig;
    try {
      ceilings::write_file_atomic(path_, doc.dump(2) + "\n");
      summary_problem_.clear();  // the last write decides: the file on disk is that one
    } catch (const ceilings::Error& e) {
      summary_problem_ = e.what();
      std::fprintf(stderr, "ceilings measure: cannot update the node summary: %s\n", e.what());
    }
  }
  std::string summary_problem_;  // why the last write of the summary failed, "" when it was written
  std::size_t gpus_compared_ = 0;

  const MeasureOptions& o_;
  std::string path_;
  std::vector<ceilings::json> devices_;
  // Now, or the summary's latest time where the wall clock stepped back since (review 53).
  std::string stamp_locked() {
    last_stamp_ = not_before(ceilings::utc_now_iso8601(), last_stamp_);
    return last_stamp_;
  }
  std::string created_;
  std::string last_stamp_ = created_;
  std::vector<GpuRun> gpus_;
  ceilings::json comparison_ = nullptr;
  std::mutex mu_;
};

// Exit code: 2 when ceilings-bench rejected the arguments (--filter matching nothing, a bad --bench-arg: the
// same for every GPU), else 1 when a GPU is below its peers (a finding about the hardware outranks a missing
// piece), else 3 when anything is incomplete (a GPU failed, timed out, was interrupted or never ran, or a
// case failed) or a GPU is below its peers by less than its own spread (unstable, not judged), else 0.
int run_all_gpus(const MeasureOptions& o) {
  const std::string bench = resolve_bench(o);
  const std::string dir = o.out_dir.empty() ? "." : o.out_dir;
  ceilings::install_interrupt_handlers();  // before the listing child: Ctrl-C during it stops it too
  auto devices = list_devices(bench, o.kill_grace_s, o.timeout_s);  // first: no GPU leaves no empty --out-dir behind
  std::error_code ec;
  check_out_dir_not_a_file(dir);
  fs::create_directories(dir, ec);
  std::error_code is_dir_ec;  // not over ec: its reason is the one to report
  if (!fs::is_directory(dir, is_dir_ec)) throw InputError("cannot create --out-dir " + dir + (ec ? ": " + ec.message() : ""));
  if (::access(dir.c_str(), W_OK | X_OK) != 0)  // now, not when the first profile is written
    throw InputError("cannot write in --out-dir " + dir + ": " + std::strerror(errno));
  NodeRun node(o, (fs::path(dir) / (hostname() + ".node-summary.json")).string(), std::move(devices));
  // Every file the run will write, checked now (a directory in the way, a file that is the bench itself), not
  // found after a GPU's whole measurement.
  ceilings::check_output_path(node.path(), "--out-dir (the node summary)", {bench});
  ceilings::check_replaceable_output(node.path(), "--out-dir (the node summary)", "a ceilings node summary",
                                     ceilings::is_node_summary_text);
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string gpu = "--out-dir (GPU " + std::to_string(node.gpu(i).device) + "'s ";
    ceilings::check_output_path(node.gpu(i).profile_path, gpu + "profile)", {bench});
    ceilings::check_output_path(raw_path_for(node.gpu(i).profile_path), gpu + "raw JSON)", {bench});
    ceilings::check_replaceable_profile(node.gpu(i).profile_path, gpu + "profile)");
    check_default_name_is_this_gpu(node.gpu(i).profile_path, gpu + "profile)", node.gpu(i).device,
                                   node.listed(i).at("uuid").get<std::string>(), true);
    ceilings::check_replaceable_output(raw_path_for(node.gpu(i).profile_path), gpu + "raw JSON)",
                                       "a ceilings-bench JSON output", ceilings::is_bench_json_text);
  }
  std::vector<OutputClaim> locks;  // every GPU's profile, before the summary is written
  for (std::size_t i = 0; i < node.size(); ++i)
    locks.push_back(claim_output(node.gpu(i).profile_path, "--out-dir"));
  node.set_state(0, GpuState::kPending);  // the summary exists before the first GPU starts
  std::fprintf(stderr, "ceilings measure: %zu GPU(s), %s, timeout %s per GPU; summary %s\n", node.size(),
               o.concurrent ? "concurrently" : "one at a time",
               o.timeout_s > 0 ? limit_text(o.timeout_s).c_str() : "none", node.path().c_str());

  std::mutex print_lock;
  MeasureOptions per_gpu = o;  // each profile records how many GPUs were measured at the same time
  per_gpu.gpus_together = o.concurrent ? static_cast<int>(node.size()) : 1;
  auto one = [&](std::size_t i) {
    const int device = node.gpu(i).device;
    const std::string out = node.gpu(i).profile_path;
    node.set_state(i, GpuState::kRunning);
    const bool live = !o.concurrent && isatty(STDERR_FILENO);
    const std::string bus_id = node.listed(i).at("pci_bus_id").get<std::string>();
    const std::string uuid = node.listed(i).at("uuid").get<std::string>();
    GpuRun g;
    // What escapes one GPU's run fails that GPU, not the node: in a thread of its own it would end the process, and
    // one at a time it would leave the rest of the node unmeasured (review 51).
    try {
      g = measure_gpu(per_gpu, bench, device, bus_id, uuid, out, {"gpu " + std::to_string(device) + ": ", live, &print_lock},
                      node.gpu(i).started);
    } catch (const std::exception& e) {
      g.device = device;
      g.profile_path = out;
      g.raw_path = raw_path_for(out);
      g.started = node.gpu(i).started;  // as the summary has it since the GPU's turn came
      g.finished = not_before(ceilings::utc_now_iso8601(), g.started);
      g.state = GpuState::kFailed;
      const auto* known = dynamic_cast<const ceilings::Error*>(&e);
      g.exit_code = known ? known->exit_code() : ceilings::kExitIncomplete;
      g.reason = e.what();
    }
    const std::string line = std::string("gpu ") + std::to_string(device) + ": " + state_name(g.state) +
                             (g.state == GpuState::kDone ? " -> " + g.profile_path : " (" + g.reason + ")");
    node.set(i, std::move(g));
    std::lock_guard<std::mutex> hold(print_lock);
    std::fprintf(stderr, "%s\n", line.c_str());
  };
  if (o.concurrent) {
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < node.size(); ++i) threads.emplace_back(one, i);
    for (auto& t : threads) t.join();
  } else {
    for (std::size_t i = 0; i < node.size() && !ceilings::interrupted(); ++i) one(i);
  }
  if (ceilings::interrupted())
    for (std::size_t i = 0; i < node.size(); ++i)
      if (node.gpu(i).state == GpuState::kPending)
        node.set_state(i, GpuState::kNotStarted, "ceilings measure was interrupted" + by_signal() + " before this GPU's turn");

  std::vector<std::size_t> members;
  std::vector<ceilings::Outlier> unstable;
  const auto outliers = node.compare(&members, &unstable);
  // GPUs unstable and not below their peers on another ceiling (those are counted there; all are listed).
  const auto unstable_only = static_cast<std::size_t>(
      std::count_if(unstable.begin(), unstable.end(), [&](const ceilings::Outlier& u) {
        return std::none_of(outliers.begin(), outliers.end(),
                            [&](const ceilings::Outlier& out) { return out.member == u.member; });
      }));

  ceilings::Table t;
  t.columns = {"gpu", "name", "uuid", "pci bus id", "state", "result"};
  bool incomplete = false, bad_input = false;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const GpuRun& g = node.gpu(i);
    bad_input = bad_input || (g.state == GpuState::kFailed && g.exit_code == ceilings::kExitBadInput);
    incomplete = incomplete || g.state != GpuState::kDone || (g.profile && !g.profile->errors.empty());
    std::string result = g.state == GpuState::kDone ? g.profile_path : g.reason.substr(0, g.reason.find('\n'));
    if (g.state != GpuState::kDone && g.profile) result += " (finished cases kept in " + g.profile_path + ")";
    // Which cases failed, by name (review 108: "done ... (1 error(s))" read as a finished GPU), apart from those a
    // timeout or an interrupt cut short, which failed nothing: not measured (review 111).
    if (g.profile && !g.profile->errors.empty()) {
      std::vector<std::string> failed, cut;
      for (const ceilings::Skipped& e : g.profile->errors)
        (ceilings::cut_short_reason(e.reason) ? cut : failed).push_back(e.name);
      auto named = [](const std::vector<std::string>& names) {
        std::string out;
        for (std::size_t k = 0; k < names.size() && k < 3; ++k) out += (k ? ", " : "") + names[k];
        if (names.size() > 3) out += " and " + std::to_string(names.size() - 3) + " more";
        return out;
      };
      if (!failed.empty())
        result += " (" + std::to_string(failed.size()) + " failed case(s): " + named(failed) + ")";
      if (!cut.empty())
        result += " (" + std::to_string(cut.size()) + " case(s) cut short, not measured: " + named(cut) + ")";
    }
    if (!g.health_failed.empty())
      result += " (" + std::to_string(g.health_failed.size()) + " health fault(s) that qualify's default rules fail)";
    const ceilings::json& d = node.listed(i);
    t.add_row({std::to_string(g.device), d.value("name", ""), d.value("uuid", ""), d.value("pci_bus_id", ""),
               state_name(g.state), result});
  }
  std::cout << ceilings::render(t, ceilings::Format::kTable);
  if (const std::size_t compared = node.gpus_compared(); compared == 0) {
    std::cout << "\nnode comparison: needs at least 3 finished GPUs of one model (" << members.size() << " finished)\n";
  } else {
    if (compared < members.size())
      std::cout << "\nnode comparison: " << compared << " of " << members.size()
                << " finished GPUs compared (each model within itself; fewer than 3 of a model are not compared)\n";
    if (outliers.empty())
      std::cout << "\nnode comparison: no GPU " << (unstable.empty() ? "" : "judged ") << "more than "
                << ceilings::format_percent(o.margin_pct / 100.0) << " below the node median"
                << (unstable.empty() ? "" : ", " + std::to_string(unstable.size()) + " GPU(s) unstable (not judged)")
                << "\n";
    else if (unstable_only > 0)
      std::cout << "\nnode comparison: " << outliers.size() << " GPU(s) below their peers, " << unstable_only
                << " GPU(s) unstable (not judged)\n";
  }
  // `heading` after the GPU; each ceiling against its median, and `within` (the GPU's own spread) where given.
  const auto show = [&](const ceilings::Outlier& out, const std::string& heading, bool within) {
    const GpuRun& g = node.gpu(members[out.member]);
    std::cout << "\nGPU " << g.device << " (" << g.profile->device.uuid << ", " << g.profile->device.pci_bus_id
              << ") " << heading << ":\n";
    for (const auto& d : out.ceilings)
      std::cout << "  " << d.ceiling << ": " << ceilings::format_quantity(d.value, d.unit) << ", "
                << ceilings::format_percent(d.deficit)
                << (d.by_split ? " worse than the faster GPUs' median (the node splits in two) "
                               : " worse than the node median ")
                << ceilings::format_quantity(d.median, d.unit)
                << (d.majority_split ? ", but the slower GPUs are the node's majority: whether the few read high or "
                                       "the many low, qualify against a baseline or the datasheet says"
                    : within ? ", within its own measurement's spread (" + ceilings::format_percent(d.own_noise) + ")"
                             : "")
                << "\n";
  };
  for (const auto& out : outliers) show(out, "is below its peers", false);
  for (const auto& out : unstable)
    show(out,
         "is unstable, not judged (below its peers by less than its own measurement's spread: measure again; or on "
         "the slower side of a node split in two, where that side is the majority)",
         true);
  // The summary is part of the output: one that could not be written (a full disk) leaves the run incomplete.
  if (node.summary_problem().empty()) {
    std::cout << "\nnode summary: " << node.path() << "\n";
  } else {
    std::cout << "\nnode summary: NOT written: " << node.summary_problem() << "\n";
    incomplete = true;
  }
  if (bad_input) return ceilings::kExitBadInput;
  if (!outliers.empty()) return ceilings::kExitFailed;
  return incomplete || !unstable.empty() ? ceilings::kExitIncomplete : ceilings::kExitOk;
}

CEILINGS_SUBCOMMAND("measure", "Measure this GPU's ceilings (or every GPU's) and write profiles",
                    ([](CLI::App& app) -> ceilings::cli::Runner {
  auto o = std::make_shared<MeasureOptions>();
  auto* device = app.add_option("--device", o->device, "CUDA device index")->check(ceilings::cli::non_negative_number());
  app.add_flag("--quick", o->quick, "A short pass (meant to take under a minute on an H200): fewer variants and samples");
  auto* out = app.add_option("--out", o->out, "Profile file to write (default: <hostname>-gpu<N>.profile.json)");
  app.add_option("--filter", o->filter, "Only benchmarks matching this regex (Google Benchmark filter)");
  auto* timeout = app.add_option("--timeout", o->timeout_s,
                                 "Seconds for the whole measurement of a GPU: the family running then is stopped "
                                 "(its finished cases kept), later ones are not run (default 7200, per GPU with "
                                 "--all-gpus; 0: no limit)")
                      ->check(ceilings::cli::non_negative_number());
  auto* family_timeout = app.add_option("--family-timeout", o->family_timeout_s,
                 "Seconds one benchmark family may run while others wait after it: past it the family is stopped "
                 "(its finished cases kept) and the next one starts; the last family gets what --timeout leaves "
                 "(0: no limit of its own)")
      ->check(ceilings::cli::non_negative_number());
  app.add_option("--bench", o->bench, "Path of ceilings-bench (default: $CEILINGS_BENCH where set, else the one beside ceilings)");
  app.add_option("--bench-arg", o->bench_args, "Extra argument for ceilings-bench (repeatable)");
  auto* all = app.add_flag("--all-gpus", o->all_gpus,
                           "Every GPU, one ceilings-bench process each; profiles and a node summary in --out-dir");
  auto* out_dir = app.add_option("--out-dir", o->out_dir,
                                 "Directory for the profile (its default name) or, with --all-gpus, the profiles and "
                                 "node summary; made if missing (default: .)");
  auto* concurrent = app.add_flag("--concurrent", o->concurrent,
                                  "With --all-gpus: all GPUs at once (as in training: shared power and cooling)");
  auto* margin = app.add_option("--margin", o->margin_pct,
                                "With --all-gpus: name a GPU more than this many percent below the node median")
                     ->capture_default_str()
                     ->check(ceilings::cli::number_in(0, 100));
  auto* one_process = app.add_flag("--one-process", o->one_process,
               "Run every benchmark family in one ceilings-bench process (default: a process per family, so a "
               "crash or a sticky CUDA error costs only its family)");
  app.add_option("--kill-grace", o->kill_grace_s, "Seconds between SIGTERM and SIGKILL when a timeout hits (0 to 3600)")
      ->capture_default_str()
      ->check(ceilings::cli::number_in(0, 3600));
  all->excludes(device)->excludes(out);
  out->excludes(out_dir);  // --out names the file, directory included
  concurrent->needs(all);
  family_timeout->excludes(one_process);  // one process is one "family": nothing would ever be cut by it
  margin->needs(all);
  return [o, timeout] {
    // A hung family must not hold the run forever: two hours is many times a healthy run (minutes on an H200).
    if (timeout->count() == 0) o->timeout_s = 7200;
    for (const std::string& arg : o->bench_args) check_bench_arg(arg);
    ceilings::check_kernel_log_variable();  // a typo found now, not after the run
    return o->all_gpus ? run_all_gpus(*o) : run_measure(*o);
  };
}));

}  // namespace
