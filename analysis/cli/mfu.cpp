// `ceilings mfu`: model and hardware FLOP utilization of a training run against given, measured
// (gemm.<dtype>) and datasheet peaks side by side.
#include <iostream>

#include "ceilings/gemm_plan.hpp"
#include "ceilings/table.hpp"
#include "ceilings/units.hpp"
#include "ceilings/utilization.hpp"
#include "subcommand.hpp"
#include "workload_options.hpp"

namespace {

using namespace ceilings;

struct MfuOptions {
  cli::ModelOptions model;
  cli::MtpOption mtp;
  cli::PeakOptions peaks;
  cli::OptNumber seq, global_batch, iter_time, tokens_per_sec, gpus, peak_tflops;
  std::string dtype = "bf16", recompute = "none", attention = "noncausal";
  CLI::Option* dtype_opt = nullptr;  // given explicitly: must apply
  bool json = false;
};

json peaks_json(const std::vector<PeakUtilization>& us) {
  json out = json::array();
  for (const auto& u : us)
    out.push_back({{"source", u.peak.source},
                   {"label", u.peak.label},
                   {"flops_per_s", u.peak.value},
                   {"mfu", u.model},
                   {"hfu", u.hardware}});
  return out;
}

// A share with two significant figures below 1% (review 108: a slip read as "0.0%").
std::string small_percent(double v) {
  return v >= 0.01 || v <= 0 ? format_percent(v) : format_percent(v, v >= 0.001 ? 2 : 3);
}

int run(const MfuOptions& o) {
  if (!o.seq.given()) throw InputError("--seq is missing");
  if (!o.gpus.given()) throw InputError("--gpus is missing");
  MfuInput in;
  const std::int64_t mtp = o.mtp.modules(o.model);
  in.shape = o.model.shape(mtp);
  in.seq = require_length(o.seq.value, "--seq");
  o.model.require_positions_for(in.seq, "--seq");
  in.gpus = require_count(o.gpus.value, "--gpus");
  in.attention = parse_attention_convention(o.attention);
  in.recompute = parse_recompute(o.recompute);
  const bool by_batch = o.global_batch.given() || o.iter_time.given();
  if (by_batch && o.tokens_per_sec.given())
    throw InputError("--tokens-per-sec and --global-batch/--iter-time are alternatives: give one throughput");
  if (o.tokens_per_sec.given()) {
    in.tokens_per_s = o.tokens_per_sec.value;
    in.throughput_inputs = "--tokens-per-sec";
  } else if (by_batch) {
    if (!o.global_batch.given()) throw InputError("--global-batch is missing (needed with --iter-time)");
    if (!o.iter_time.given()) throw InputError("--iter-time is missing (needed with --global-batch)");
    require_count(o.global_batch.value, "--global-batch");  // sequences: a whole number
    if (!(o.iter_time.value > 0)) throw InputError("--iter-time must be a positive number");
    in.tokens_per_s = o.global_batch.value * o.seq.value / o.iter_time.value;
    in.throughput_inputs = "--global-batch * --seq / --iter-time";
  } else {
    throw InputError("no throughput given: use --global-batch B --iter-time SECONDS, or --tokens-per-sec X");
  }
  require_peak_dtype(o.dtype);  // a misspelt name is an error wherever it would apply
  if (o.dtype_opt->count() > 0 && o.peaks.profile.empty() && o.peaks.gpu.empty())
    throw InputError("--dtype picks a profile's or a datasheet's peak (gemm.<dtype>): with --peak-tflops alone it would "
                     "change nothing (drop it, or add --profile/--gpu)");
  const auto profile = o.peaks.read();
  std::optional<double> given;
  if (o.peak_tflops.given()) given = o.peak_tflops.value * 1e12;
  const auto peaks = compute_peaks(given, profile ? &*profile : nullptr, o.peaks.profile, o.peaks.gpu_name(), o.dtype);
  const MfuResult r = compute_mfu(in, peaks);
  const auto share = o.model.mtp_share(mtp, in.seq, in.attention, in.recompute);
  const double mtp_model = share.model, mtp_hardware = share.hardware;
  if (o.json) {
    json out = {{"mfu", r.peaks[0].model},
                {"hfu", r.peaks[0].hardware},
                {"achieved_flops_per_gpu", r.achieved_flops_per_gpu},
                {"achieved_hardware_flops_per_gpu", r.achieved_hardware_flops_per_gpu},
                {"model_flops_per_token", r.model_flops_per_token},
                {"hardware_flops_per_token", r.hardware_flops_per_token},
                {"executed_flops_per_token", r.executed_flops_per_token},
                {"achieved_executed_flops_per_gpu", r.achieved_executed_flops_per_gpu},
                {"tokens_per_s", in.tokens_per_s},
                {"gpus", in.gpus},
                {"seq", in.seq},
                {"dtype", o.dtype},
                {"convention", o.attention == "causal" ? "causal" : "noncausal"},
                {"convention_description", convention_name(in.attention, in.shape, in.seq)},
                {"recompute", recompute_name(in.recompute)},
                {"primary_peak", r.peaks[0].peak.source},
                {"peaks", peaks_json(r.peaks)}};
    if (mtp > 0) {
      out["mtp_layers"] = mtp;
      out["mtp_model_flops_per_token"] = mtp_model;
      out["mtp_hardware_flops_per_token"] = mtp_hardware;
    }
    if (const auto note = o.model.flop_note(mtp)) out["note"] = *note;
    if (!r.note.empty()) out["over_peak_note"] = r.note;
    if (!r.low_note.empty()) out["low_note"] = r.low_note;
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::cout << "FLOP convention: " << convention_name(in.attention, in.shape, in.seq) << "; recompute "
            << recompute_name(in.recompute)
            << "\n";
  std::cout << "model FLOPs per token " << format_quantity(r.model_flops_per_token, "FLOP", 4) << ", hardware "
            << format_quantity(r.hardware_flops_per_token, "FLOP", 4)
            << (mtp > 0 ? " (MTP module(s) included: " + format_quantity(mtp_model, "FLOP", 4) + " model, " +
                              format_quantity(mtp_hardware, "FLOP", 4) + " hardware)"
                        : std::string())
            << "; " << format_fixed(in.tokens_per_s, 0)
            << " tokens/s on " << format_fixed(in.gpus, 0) << (in.gpus == 1 ? " GPU\n" : " GPUs\n");
  std::cout << "achieved per GPU: " << format_quantity(r.achieved_flops_per_gpu, "FLOP/s", 4) << " model, "
            << format_quantity(r.achieved_hardware_flops_per_gpu, "FLOP/s", 4) << " hardware\n";
  Table t;
  t.columns = {"peak source", "peak", "what", "MFU", "HFU"};
  t.right_aligned = {false, true, false, true, true};
  for (const auto& u : r.peaks)
    t.add_row({u.peak.source, format_quantity(u.peak.value, o.dtype.rfind("int8", 0) == 0 ? "OP/s" : "FLOP/s"),
               u.peak.label, small_percent(u.model), small_percent(u.hardware)});
  std::cout << render(t, Format::kTable);
  if (const auto note = o.model.flop_note(mtp)) std::cout << "note: " << *note << "\n";
  if (!r.note.empty()) std::cout << "note: " << r.note << "\n";
  if (!r.low_note.empty()) std::cout << "note: " << r.low_note << "\n";
  return 0;
}

cli::Runner setup(CLI::App& app) {
  auto o = std::make_shared<MfuOptions>();
  o->model.add(app);
  o->mtp.add(app);
  o->peaks.add(app);
  cli::add_number(app, o->seq, "--seq", "Sequence length (tokens)");
  cli::add_number(app, o->global_batch, "--global-batch", "Sequences per iteration (all GPUs)");
  cli::add_number(app, o->iter_time, "--iter-time", "Seconds per iteration");
  cli::add_number(app, o->tokens_per_sec, "--tokens-per-sec", "Trained tokens per second (all GPUs)");
  cli::add_number(app, o->gpus, "--gpus", "GPUs the job runs on");
  cli::add_number(app, o->peak_tflops, "--peak-tflops", "A given peak, TFLOP/s per GPU");
  o->dtype_opt = app.add_option("--dtype", o->dtype, "Data type of the peak (gemm.<dtype> in the profile or datasheet; fp4: the datasheet's only, with --gpu)")
                     ->capture_default_str();
  app.add_option("--recompute", o->recompute, "Activation recomputation: none | selective | full")
      ->capture_default_str();
  app.add_option("--attention", o->attention, "FLOP convention: noncausal | causal")->capture_default_str();
  app.add_flag("--json", o->json, "Print JSON");
  return [o] { return run(*o); };
}

CEILINGS_SUBCOMMAND("mfu", "Model and hardware FLOP utilization (MFU/HFU) against measured and datasheet peaks", setup);

}  // namespace
