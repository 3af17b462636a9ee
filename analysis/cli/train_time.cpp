// `ceilings train-time`: wall-clock training time F*T/(n*X) from achieved FLOP/s, or from an MFU against
// given/measured/datasheet peaks. F is the FLOPs per trained token: with a model description and --seq,
// the same model FLOPs (with attention) `ceilings mfu` counts, and hardware FLOPs (recomputation too) for
// achieved FLOP/s; with --params alone, k*P (Narayanan et al. 2021 eq. 4: k = 8 with full recompute, 6
// without), which leaves attention out.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>

#include "ceilings/gemm_plan.hpp"
#include "ceilings/table.hpp"
#include "ceilings/units.hpp"
#include "ceilings/utilization.hpp"
#include "subcommand.hpp"
#include "workload_options.hpp"

namespace {

using namespace ceilings;

struct TrainTimeOptions {
  cli::ModelOptions model;
  cli::MtpOption mtp;
  cli::PeakOptions peaks;
  cli::OptNumber seq, tokens, gpus, achieved_tflops, mfu, peak_tflops;
  std::string recompute = "none", dtype = "bf16", attention = "noncausal", mfu_against;
  bool json = false;
  CLI::Option *dtype_opt = nullptr, *attention_opt = nullptr, *recompute_opt = nullptr;  // given: must apply
};

// FLOPs per trained token: `model` (the MFU numerator) and `hardware` (with recomputation), and how.
struct PerToken {
  double model = 0, hardware = 0;
  // What the kernels execute at least, recompute none (executed_flops_per_token: attention causal, the scores a
  // fused attention's backward recomputes): an MFU above 1 by the noncausal convention alone is a reading, as `mfu`
  // has it, while the executed FLOP/s stay within the peak.
  double executed = 0;
  std::optional<double> per_param;  // k of k*P, --params alone
  std::string basis;
  double mtp_model = 0, mtp_hardware = 0;  // the MTP modules' share of `model` and `hardware` (--mtp-layers)
};

// `mtp`: the multi-token-prediction modules trained beside the model (--mtp-layers), counted with it.
PerToken per_token(const TrainTimeOptions& o, Recompute rc, std::int64_t mtp) {
  PerToken f;
  const bool structure = o.model.from_config() || o.model.layers.given() || o.model.hidden.given() ||
                         o.model.heads.given() || o.model.head_dim.given();
  if (o.seq.given()) {
    const FlopShape shape = o.model.shape(mtp);
    const double seq = require_length(o.seq.value, "--seq");
    o.model.require_positions_for(seq, "--seq");
    const AttentionConvention c = parse_attention_convention(o.attention);
    f.model = model_flops_per_token(shape, seq, c);
    f.executed = executed_flops_per_token(shape, seq, Recompute::kNone);
    f.hardware = hardware_flops_per_token(shape, seq, c, rc);
    const auto share = o.model.mtp_share(mtp, seq, c, rc);
    f.mtp_model = share.model;
    f.mtp_hardware = share.hardware;
    f.basis = "FLOPs per token as `ceilings mfu` counts them, attention at --seq " + format_fixed(seq, 0) + ": " +
              convention_name(c, shape, seq);
    return f;
  }
  if (o.attention_opt->count() > 0 && !structure)
    throw InputError("--attention counts attention FLOPs, which need a model description and --seq; --params alone "
                     "does not count attention");
  if (structure)
    throw InputError("--seq is missing: a model's attention FLOPs depend on the sequence length (or give --params "
                     "alone for k*P, attention not counted)");
  if (!o.model.from_params()) throw InputError("--params is missing (or describe the model with --hf-config and --seq)");
  const double p = o.model.params.value;
  require_count(p, "--params");  // 7.5 is a typo for 7.5e9, not 7.5 parameters
  for (const cli::OptNumber* n : {&o.model.ffn, &o.model.vocab, &o.model.kv_heads})
    if (n->given()) throw InputError(n->option->get_name() + " describes a model: use it with --layers/--hidden/--heads and --seq");
  for (const auto& [flag, set] :
       {std::pair<const char*, bool>{"--swiglu", o.model.swiglu}, {"--tied-embeddings", o.model.tied_embeddings}})
    if (set) throw InputError(std::string(flag) + " describes a model: use it with --layers/--hidden/--heads and --seq");
  f.model = f.executed = 6.0 * p;
  // Narayanan et al. 2021 count the recomputed forward in the achieved FLOP/s (Megatron-LM's code now logs model
  // FLOPs with causal attention and no recompute: give that figure without --recompute, see --achieved-tflops).
  f.per_param = rc == Recompute::kFull ? 8.0 : 6.0;
  f.hardware = *f.per_param * p;
  f.basis = "k*P per token (attention not counted; P is the active parameters for a MoE)";
  return f;
}

int run(const TrainTimeOptions& o) {
  if (!o.tokens.given()) throw InputError("--tokens is missing");
  require_count(o.tokens.value, "--tokens");
  if (!o.gpus.given()) throw InputError("--gpus is missing");
  require_count(o.gpus.value, "--gpus");
  const Recompute rc = parse_recompute(o.recompute);
  parse_attention_convention(o.attention);  // a misspelt name is an error wherever it would apply
  require_peak_dtype(o.dtype);
  if (o.achieved_tflops.given() == o.mfu.given())
    throw InputError("give exactly one of --achieved-tflops (hardware FLOP/s per GPU) and --mfu (with a peak)");
  const std::int64_t mtp = o.mtp.modules(o.model);  // refused with --params
  const PerToken f = per_token(o, rc, mtp);
  struct Row {
    std::string source, label;
    double peak;
    TrainTime t;
    std::optional<double> mfu;  // with --mfu-against: the one achieved rate's MFU against this peak
  };
  std::vector<Row> rows;
  std::string basis;
  if (!o.mfu_against.empty() && !o.mfu.given())
    throw InputError("--mfu-against names the peak an --mfu is against: give --mfu");
  if (o.achieved_tflops.given()) {
    if (!o.peaks.profile.empty() || !o.peaks.gpu.empty() || o.peak_tflops.given())
      throw InputError("--achieved-tflops needs no peak: drop --profile/--gpu/--peak-tflops, or use --mfu");
    if (o.dtype_opt->count() > 0)
      throw InputError("--dtype picks the peak an --mfu is against: --achieved-tflops has none");
    rows.push_back(
        {"given", "achieved", 0, training_time(f.hardware, o.tokens.value, o.gpus.value, o.achieved_tflops.value * 1e12),
         std::nullopt});
    basis = "hardware FLOPs*T/(n*X), recompute " + recompute_name(rc) + "; " +
            (f.per_param ? "k = " + format_fixed(*f.per_param, 0) + ", " : std::string()) + f.basis +
            (f.per_param && rc == Recompute::kSelective ? "; the recomputed attention core is not in this estimate" : "");
  } else {
    // Above 1 only where the noncausal convention counts the masked half of causal attention (a long --seq), up to
    // where the executed FLOP/s reach the peak (review 58: an MFU `mfu` printed was refused here).
    // Against the sustained rate, which a job whose GEMMs run cooler may pass, above 1 too: the burst peaks bound it
    // below (review 59: an MFU `mfu` printed against it was refused).
    const double most = o.mfu_against == "measured_sustained" ? std::numeric_limits<double>::infinity()
                                                              : f.model / f.executed;
    if (!(o.mfu.value > 0 && o.mfu.value <= most * (1 + 1e-12))) {
      const bool noncausal_headroom = std::isfinite(most) && most > 1;
      // Below 1 where the model FLOPs count attention causal: the scores the backward recomputes are executed on top
      // (review 110: the message said "(0, 1]" and refused 0.99).
      const bool recompute_short = std::isfinite(most) && most < 1;
      const std::string range = !std::isfinite(most) ? "positive"
                                : noncausal_headroom || recompute_short
                                    ? "a fraction in (0, " + format_fixed(std::floor(most * 1000) / 1000, 3) + "]"
                                    : "a fraction in (0, 1]";
      throw InputError("--mfu must be " + range + ", e.g. 0.45" +
                       (noncausal_headroom ? " (above 1 by the noncausal convention at this --seq, up to where the "
                                             "FLOPs the kernels execute, attention causal and the scores its backward recomputes, reach the peak)"
                        : recompute_short ? " (below 1: the FLOPs the kernels execute add the scores a fused attention's "
                                            "backward recomputes to the model FLOPs, and reach the peak there)"
                                          : ""));
    }
    if (o.recompute_opt->count() > 0 && rc != Recompute::kNone)
      throw InputError("--recompute adds hardware FLOPs, which an MFU does not count: with --mfu it would change "
                       "nothing (drop it, or give --achieved-tflops)");
    if (o.dtype_opt->count() > 0 && o.peaks.profile.empty() && o.peaks.gpu.empty())
      throw InputError("--dtype picks a profile's or a datasheet's peak (gemm.<dtype>): with --peak-tflops alone it "
                       "would change nothing (drop it, or add --profile/--gpu)");
    const auto profile = o.peaks.read();
    std::optional<double> given;
    if (o.peak_tflops.given()) given = o.peak_tflops.value * 1e12;
    const std::vector<Peak> peaks =
        compute_peaks(given, profile ? &*profile : nullptr, o.peaks.profile, o.peaks.gpu_name(), o.dtype);
    if (o.mfu_against.empty()) {
      // An MFU of each peak in turn: what the job takes at that share of each.
      for (const Peak& p : peaks)
        rows.push_back({p.source, p.label, p.value,
                        training_time(f.model, o.tokens.value, o.gpus.value, o.mfu.value * p.value), std::nullopt});
    } else {
      // An MFU against one peak (a plan quoted against the datasheet, a job's MFU against the measured ceiling):
      // one achieved rate, one time, and the MFU that rate is against every other peak beside it.
      const auto against = std::find_if(peaks.begin(), peaks.end(), [&](const Peak& p) { return p.source == o.mfu_against; });
      if (against == peaks.end()) {
        std::string have;
        for (const Peak& p : peaks) have += (have.empty() ? "" : ", ") + p.source;
        throw InputError("--mfu-against " + o.mfu_against + ": no such peak here (peaks: " + have +
                         "; measured needs --profile, datasheet --gpu or a profile of a known GPU, given --peak-tflops)");
      }
      const double achieved = o.mfu.value * against->value;
      if (!std::isfinite(achieved))
        throw InputError("--mfu " + format_fixed(o.mfu.value, 3) + " of the " + o.mfu_against +
                         " peak is not a finite rate: give a fraction, e.g. 0.45");
      // As `mfu` refuses it: an executed rate (attention causal) above a peak the GPU attains is an inconsistent
      // input (the sustained rate excepted, which a job whose GEMMs run cooler may pass).
      const double executed = achieved * f.executed / f.model;
      for (const Peak& p : peaks)
        if (p.source != "measured_sustained" && executed > p.value * (1 + 1e-12))
          throw InputError("--mfu " + format_fixed(o.mfu.value, 3) + " of the " + o.mfu_against + " peak (" +
                           format_quantity(against->value, "FLOP/s") + ") is " + format_quantity(achieved, "FLOP/s") +
                           " of model FLOPs, " + format_quantity(executed, "FLOP/s") + " executed" +
                           (o.seq.given() ? " (attention causal, the scores its backward recomputes), " : ", ") +
                           format_percent(executed / p.value) + " of the " +
                           p.source + " peak " + format_quantity(p.value, "FLOP/s") +
                           ": more than it can attain; check --mfu and the peaks");
      for (const Peak& p : peaks)
        rows.push_back({p.source, p.label, p.value, training_time(f.model, o.tokens.value, o.gpus.value, achieved),
                        achieved / p.value});
    }
    basis = "model FLOPs*T/(n * MFU * peak) (MFU counts model FLOPs, so recomputation does not enter)" +
            (o.mfu_against.empty() ? std::string() : ", MFU against the " + o.mfu_against + " peak") + "; " +
            (f.per_param ? std::string("6*P per token (attention not counted; P is the active parameters for a MoE)")
                         : f.basis);
  }
  // Of the FLOPs per token the rows count (hardware with --achieved-tflops, model with --mfu), the MTP modules'.
  const double mtp_per_token = o.achieved_tflops.given() ? f.mtp_hardware : f.mtp_model;
  if (o.json) {
    json est = json::array();
    for (const Row& r : rows)
      est.push_back({{"source", r.source},
                     {"label", r.label},
                     // --achieved-tflops gives the rate and no peak: none, not a peak of 0
                     {"peak_flops_per_s", r.peak > 0 ? json(r.peak) : json(nullptr)},
                     {"achieved_flops_per_s_per_gpu",
                      r.t.seconds > 0 ? json(r.t.total_flops / (r.t.seconds * o.gpus.value)) : json(nullptr)},
                     {"seconds", r.t.seconds},
                     {"days", r.t.days},
                     {"gpu_hours", r.t.gpu_hours}});
    if (!o.mfu_against.empty())
      for (std::size_t i = 0; i < rows.size(); ++i) est[i]["mfu"] = *rows[i].mfu;
    json out = {{"seconds", rows[0].t.seconds},
                {"days", rows[0].t.days},
                {"gpu_hours", rows[0].t.gpu_hours},
                {"total_flops", rows[0].t.total_flops},
                {"flops_per_token", rows[0].t.flops_per_token},
                // What total_flops counts: the hardware's (recompute included) with --achieved-tflops, else the
                // model's; the model's total beside it either way (review 57: 1.14e24 hardware read as training).
                {"flops_kind", o.achieved_tflops.given() ? "hardware" : "model"},
                {"total_model_flops", f.model * o.tokens.value},
                {"basis", basis},
                {"estimates", est}};
    if (f.per_param) out["flops_per_token_per_param"] = o.achieved_tflops.given() ? *f.per_param : 6.0;
    if (!o.mfu_against.empty()) out["mfu_against"] = o.mfu_against;
    if (mtp > 0) {  // the modules' share of each token's FLOPs, under mfu's names (flops_per_token is one of them)
      out["mtp_layers"] = mtp;
      out["mtp_model_flops_per_token"] = f.mtp_model;
      out["mtp_hardware_flops_per_token"] = f.mtp_hardware;
    }
    if (const auto note = o.model.flop_note(mtp)) out["note"] = *note;
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  char total[32];
  std::snprintf(total, sizeof total, "%.3e", rows[0].t.total_flops);
  char model_total[32];
  std::snprintf(model_total, sizeof model_total, "%.3e", f.model * o.tokens.value);
  const bool hardware = o.achieved_tflops.given() && f.hardware != f.model;
  std::cout << (hardware ? "hardware FLOPs (recompute " + recompute_name(rc) + ") " : std::string("training FLOPs "))
            << total << " (" << format_quantity(rows[0].t.flops_per_token, "FLOP", 4)
            << " per token"
            << (mtp > 0 ? ", " + format_quantity(mtp_per_token, "FLOP", 4) + " of it for " + std::to_string(mtp) +
                              " MTP module(s)"
                        : std::string())
            << (hardware ? "; model FLOPs " + std::string(model_total) : std::string()) << "); " << basis << "\n";
  Table t;
  const bool against = !o.mfu_against.empty();
  t.columns = {"basis", "per-GPU FLOP/s", "days", "GPU-hours"};
  t.right_aligned = {false, true, true, true};
  if (against) {
    t.columns = {"peak", "peak FLOP/s", "MFU against it", "per-GPU FLOP/s", "days", "GPU-hours"};
    t.right_aligned = {false, true, true, true, true, true};
  }
  for (const Row& r : rows) {
    std::vector<std::string> row{r.source == "given" && r.peak == 0 ? "achieved" : r.source + ": " + r.label};
    if (against) {
      row.push_back(format_quantity(r.peak, "FLOP/s"));
      row.push_back(format_percent(*r.mfu) + (r.source == o.mfu_against ? " (given)" : ""));
    }
    for (std::string cell : {format_quantity(r.t.total_flops / (r.t.seconds * o.gpus.value), "FLOP/s"),
                             format_fixed(r.t.days, 1), format_fixed(r.t.gpu_hours, 0)})
      row.push_back(std::move(cell));
    t.add_row(row);
  }
  std::cout << render(t, Format::kTable);
  if (const auto note = o.model.flop_note(mtp)) std::cout << "note: " << *note << "\n";
  return 0;
}

cli::Runner setup(CLI::App& app) {
  auto o = std::make_shared<TrainTimeOptions>();
  o->model.add(app);
  o->mtp.add(app);
  o->peaks.add(app);
  cli::add_number(app, o->seq, "--seq", "Sequence length (with a model description: attention FLOPs counted)");
  cli::add_number(app, o->tokens, "--tokens", "Training tokens T");
  cli::add_number(app, o->gpus, "--gpus", "GPUs n");
  cli::add_number(app, o->achieved_tflops, "--achieved-tflops",
                  "Achieved hardware TFLOP/s per GPU, as Narayanan et al. 2021 count them (the recomputed forward in, "
                  "noncausal attention). Megatron-LM's logged TFLOP/s/GPU are model FLOPs, attention causal from "
                  "core_v0.12.0 and noncausal before: give them with the --attention of that release and no "
                  "--recompute");
  cli::add_number(app, o->mfu, "--mfu",
                  "Model FLOP utilization (fraction) against the peak(s); above 1 as `ceilings mfu` reads it (the "
                  "noncausal count at a long --seq, or against measured_sustained)");
  cli::add_number(app, o->peak_tflops, "--peak-tflops", "A given peak, TFLOP/s per GPU");
  app.add_option("--mfu-against", o->mfu_against,
                 "The peak --mfu is against (given | measured | measured_sustained | datasheet): one estimate, with "
                 "the MFU that rate is against each other peak; without it, the time at that MFU of each peak")
      ->check(CLI::IsMember({"given", "measured", "measured_sustained", "datasheet"}));
  o->dtype_opt = app.add_option("--dtype", o->dtype, "Data type of the peak")->capture_default_str();
  o->recompute_opt = app.add_option("--recompute", o->recompute, "none | selective | full (with --achieved-tflops)")
                         ->capture_default_str();
  o->attention_opt =
      app.add_option("--attention", o->attention, "Attention FLOPs convention: noncausal | causal")->capture_default_str();
  app.add_flag("--json", o->json, "Print JSON");
  return [o] { return run(*o); };
}

CEILINGS_SUBCOMMAND("train-time", "Wall-clock training time from achieved FLOP/s or an MFU", setup);

}  // namespace
