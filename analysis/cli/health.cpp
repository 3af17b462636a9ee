// `ceilings health [--device N] [--json] [--watch S]`: the GPU's health counters read live through
// NVML (no benchmark runs), judged by the health rules. Exit 0 healthy, 1 a fault, 3 could not read.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "ceilings/qualify.hpp"
#include "ceilings/subprocess.hpp"
#include "harness/nvml.hpp"
#include "health_monitor.hpp"
#include "subcommand.hpp"

namespace {

struct HealthOptions {
  unsigned device = 0;
  bool json = false;
  double watch_s = 1.0;
  double nvml_timeout_s = 60;
  std::string format = "table";
};

// Watches `seconds`, an interrupt ending the watch early (what it saw is still read and said); returns whether one
// did. The handlers hold during the watch only: before and after it a signal acts as it did (review 104: a second
// Ctrl-C did nothing during a slow NVML read).
bool watch_interruptibly(ceilings::cli::HealthMonitor& monitor, double seconds) {
  if (seconds <= 0) return false;
  const int signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  struct sigaction saved[4] {};
  for (int i = 0; i < 4; ++i) sigaction(signals[i], nullptr, &saved[i]);
  ceilings::install_interrupt_handlers();
  monitor.watch(seconds);
  for (int i = 0; i < 4; ++i) sigaction(signals[i], &saved[i], nullptr);
  return ceilings::interrupted();
}

CEILINGS_SUBCOMMAND("health", "Read the GPU's health counters (ECC, remaps, PCIe, throttling, XID) via NVML",
                    [](CLI::App& app) -> ceilings::cli::Runner {
  auto o = std::make_shared<HealthOptions>();
  app.add_option("--device", o->device, "NVML device index (PCI bus order, as nvidia-smi numbers the GPUs; CUDA_VISIBLE_DEVICES does not apply)")->capture_default_str();
  auto* json_flag = app.add_flag("--json", o->json, "Print the health section as JSON (the profile's `health` format)");
  app.add_option("--watch", o->watch_s, "Seconds between the two snapshots, listening for XID events")
      ->check(ceilings::cli::number_in(0, 86400))
      ->capture_default_str();
  app.add_option("--nvml-timeout", o->nvml_timeout_s,
                 "Seconds one NVML call may take: one that has not returned by then (a hung driver or GPU) ends the "
                 "run, exit 1")
      ->check(ceilings::cli::number_in(1, 86400))
      ->capture_default_str();
  auto* format_option = app.add_option("--format", o->format,
                                "table | markdown | csv | json (json: same as --json; csv: the checks table only)")
                     ->capture_default_str();
  json_flag->excludes(format_option);  // `--json --format csv` would have to drop one of them
  return [o] {
    const ceilings::Format format = ceilings::parse_format(o->format);
    ceilings::check_kernel_log_variable();
    // A driver call that never returns (a GPU fallen off the bus, a wedged driver) is a fault of the node, said and
    // ended here: it cannot be cancelled, and a health check that hangs stalls whatever runs it (review 103 #6).
    // What was printed before (a teardown call that hangs after the report) reaches its reader first: the thread that
    // would write more is the one blocked in the driver (review 110).
    ceilings::nvml::watch_calls(o->nvml_timeout_s, [](const std::string& call, double seconds) {
      std::cout.flush();
      std::fflush(stdout);
      std::fprintf(stderr,
                   "ceilings health: NVML's %s did not return within %g s: the driver or the GPU is hung, a fault of "
                   "the node (the call cannot be cancelled: the run ends here)\n",
                   call.c_str(), seconds);
      std::fflush(stderr);
      std::_Exit(ceilings::kExitFailed);
    });
    auto monitor = ceilings::cli::HealthMonitor::open(o->device);
    monitor->before();
    // An interrupt during the watch ends it early: what it saw is still read and said. Only there: before and after
    // it a signal acts as it did (review 104: a second Ctrl-C did nothing during a slow NVML read).
    const bool cut = watch_interruptibly(*monitor, o->watch_s);
    monitor->after();
    const ceilings::HealthSection& s = monitor->section();
    ceilings::QualifyResult result;
    result.device = s.device_name + " (" + s.uuid + ")";
    result.checks = ceilings::health_checks(s, ceilings::HealthRules{});
    if (o->json || format == ceilings::Format::kJson) {
      std::cout << ceilings::health_to_json(s).dump(2) << "\n";
    } else if (format == ceilings::Format::kCsv) {  // one table, the checks: the counters are in --json
      std::cout << ceilings::render_qualify(result, format);
    } else {
      // The verdict and its failures first, the counters they rest on after (review 108: the verdict came after 82
      // lines of counters, past what `| head` shows).
      std::cout << "GPU " << s.device_index << ": " << s.device_name << " (" << s.uuid << "), driver " << s.driver
                << "\n\n"
                << ceilings::render_qualify(result, format) << "\n"
                << ceilings::render(ceilings::health_table(s), format);
    }
    if (cut) {
      std::fprintf(stderr,
                   "ceilings health: interrupted by %s after %.1f s of the %g s watch: the section covers that much "
                   "(incomplete)\n",
                   ceilings::interrupt_signal_name().c_str(), s.xid.window_s, o->watch_s);
      return static_cast<int>(result.exit_code() == ceilings::kExitFailed ? ceilings::kExitFailed
                                                                           : ceilings::kExitIncomplete);
    }
    return result.exit_code();
  };
});

}  // namespace
