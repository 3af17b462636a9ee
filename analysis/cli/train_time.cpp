// `ceilings train-time`: wall-clock training time k*T*P/(n*X) (Narayanan et al. 2021 eq. 4: k = 8 with full
// recompute, 6 without) from achieved FLOP/s, or from an MFU against given/measured/datasheet peaks.
#include <cstdio>
#include <iostream>

#include "ceilings/table.hpp"
#include "ceilings/units.hpp"
#include "ceilings/utilization.hpp"
#include "subcommand.hpp"
#include "workload_options.hpp"

namespace {

using namespace ceilings;

struct TrainTimeOptions {
  cli::PeakOptions peaks;
  cli::OptNumber params, tokens, gpus, achieved_tflops, mfu, peak_tflops;
  std::string recompute = "none", dtype = "bf16";
  bool json = false;
};

int run(const TrainTimeOptions& o) {
  if (!o.params.given()) throw InputError("--params is missing");
  if (!o.tokens.given()) throw InputError("--tokens is missing");
  if (!o.gpus.given()) throw InputError("--gpus is missing");
  require_count(o.gpus.value, "--gpus");
  const Recompute rc = parse_recompute(o.recompute);
  struct Row {
    std::string source, label;
    double peak;
    TrainTime t;
  };
  std::vector<Row> rows;
  std::string basis;
  if (o.achieved_tflops.given() == o.mfu.given())
    throw InputError("give exactly one of --achieved-tflops (hardware FLOP/s per GPU) and --mfu (with a peak)");
  if (o.achieved_tflops.given()) {
    if (!o.peaks.profile.empty() || !o.peaks.gpu.empty() || o.peak_tflops.given())
      throw InputError("--achieved-tflops needs no peak: drop --profile/--gpu/--peak-tflops, or use --mfu");
    // Achieved FLOP/s as Megatron reports it counts the recomputed forward: 8 FLOPs per parameter per token.
    const double k = rc == Recompute::kFull ? 8.0 : 6.0;
    rows.push_back({"given", "achieved", 0,
                    training_time(o.params.value, o.tokens.value, o.gpus.value, o.achieved_tflops.value * 1e12, k)});
    basis = "k*T*P/(n*X) with k = " + format_fixed(k, 0) + " (recompute " + recompute_name(rc) +
            (rc == Recompute::kSelective ? "; the recomputed attention core is not in this estimate" : "") + ")";
  } else {
    if (!(o.mfu.value > 0 && o.mfu.value <= 1)) throw InputError("--mfu must be a fraction in (0, 1], e.g. 0.45");
    const auto profile = o.peaks.read();
    std::optional<double> given;
    if (o.peak_tflops.given()) given = o.peak_tflops.value * 1e12;
    for (const Peak& p :
         compute_peaks(given, profile ? &*profile : nullptr, o.peaks.profile, o.peaks.gpu_name(), o.dtype))
      rows.push_back({p.source, p.label, p.value,
                      training_time(o.params.value, o.tokens.value, o.gpus.value, o.mfu.value * p.value, 6.0)});
    basis = "6*T*P/(n * MFU * peak): MFU counts model FLOPs, so recomputation does not enter";
  }
  if (o.json) {
    json est = json::array();
    for (const Row& r : rows)
      est.push_back({{"source", r.source},
                     {"label", r.label},
                     {"peak_flops_per_s", r.peak},
                     {"seconds", r.t.seconds},
                     {"days", r.t.days},
                     {"gpu_hours", r.t.gpu_hours}});
    json out = {{"seconds", rows[0].t.seconds},
                {"days", rows[0].t.days},
                {"gpu_hours", rows[0].t.gpu_hours},
                {"total_flops", rows[0].t.total_flops},
                {"flops_per_token_per_param", rows[0].t.flops_per_token_per_param},
                {"basis", basis},
                {"estimates", est}};
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  char total[32];
  std::snprintf(total, sizeof total, "%.3e", rows[0].t.total_flops);
  std::cout << "training FLOPs " << total << "; " << basis << "\n";
  Table t;
  t.columns = {"basis", "per-GPU FLOP/s", "days", "GPU-hours"};
  t.right_aligned = {false, true, true, true};
  for (const Row& r : rows)
    t.add_row({r.source == "given" && r.peak == 0 ? "achieved" : r.source + ": " + r.label,
               format_quantity(r.t.total_flops / (r.t.seconds * o.gpus.value), "FLOP/s"), format_fixed(r.t.days, 1),
               format_fixed(r.t.gpu_hours, 0)});
  std::cout << render(t, Format::kTable);
  return 0;
}

cli::Runner setup(CLI::App& app) {
  auto o = std::make_shared<TrainTimeOptions>();
  o->peaks.add(app);
  cli::add_number(app, o->params, "--params", "Parameters P");
  cli::add_number(app, o->tokens, "--tokens", "Training tokens T");
  cli::add_number(app, o->gpus, "--gpus", "GPUs n");
  cli::add_number(app, o->achieved_tflops, "--achieved-tflops", "Achieved hardware TFLOP/s per GPU");
  cli::add_number(app, o->mfu, "--mfu", "Model FLOP utilization (fraction) against the peak(s)");
  cli::add_number(app, o->peak_tflops, "--peak-tflops", "A given peak, TFLOP/s per GPU");
  app.add_option("--dtype", o->dtype, "Data type of the peak")->capture_default_str();
  app.add_option("--recompute", o->recompute, "none | selective | full")->capture_default_str();
  app.add_flag("--json", o->json, "Print JSON");
  return [o] { return run(*o); };
}

CEILINGS_SUBCOMMAND("train-time", "Wall-clock training time from achieved FLOP/s or an MFU", setup);

}  // namespace
