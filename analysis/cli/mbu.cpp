// `ceilings mbu`: memory bandwidth utilization of a decode loop (bytes read per step / TPOT) against
// given, measured (hbm.*) and datasheet bandwidth side by side.
#include <cmath>
#include <iostream>

#include "ceilings/table.hpp"
#include "ceilings/units.hpp"
#include "ceilings/utilization.hpp"
#include "subcommand.hpp"
#include "workload_options.hpp"

namespace {

using namespace ceilings;

struct MbuOptions {
  cli::ModelOptions model;
  cli::PeakOptions peaks;
  cli::OptNumber batch, context, tpot_ms, gpus, peak_bw_gbps, kv_bytes_per_token;
  cli::WeightDtypeOption weight_dtype;
  std::string kv_dtype = "bf16", ceiling;
  CLI::Option* kv_dtype_opt = nullptr;  // given explicitly: must apply
  bool json = false;
};

int run(const MbuOptions& o) {
  if (!o.tpot_ms.given()) throw InputError("--tpot-ms is missing");
  const double batch = o.batch.given() ? o.batch.value : 1.0;
  const double gpus = o.gpus.given() ? o.gpus.value : 1.0;
  require_count(batch, "--batch");
  require_count(gpus, "--gpus");
  const double kb = dtype_bytes(o.kv_dtype);
  cli::WeightDtypeOption::Choice weights = o.weight_dtype.choose(nullptr);
  MbuInput in;
  in.tpot_s = o.tpot_ms.value * 1e-3;
  in.gpus = gpus;
  std::string kv_note, weights_basis;  // weights_basis: which weights a decode step is counted as reading
  bool kv_counted = true;
  bool less_embedding = false;         // a model shape: the input embedding table is not read whole
  double context = 0;
  if (o.context.given()) {
    context = o.context.value;
    require_length(context, "--context");
  }
  if (!o.ceiling.empty() && o.peaks.profile.empty())
    throw InputError("--ceiling names a ceiling of a measured profile: it needs --profile");
  if (o.model.from_params() && !o.model.from_config()) {
    // --params counts the weights as given; the KV cache comes from --kv-bytes-per-token: a layer shape
    // would change neither.
    o.model.refuse_shape_beside_params(
        "mbu --params takes the weights as given and the KV cache from --kv-bytes-per-token", "would change neither");
    require_count(o.model.params.value, "--params");  // 7.5 is a typo for 7.5e9, not 7.5 parameters
    in.weight_bytes = o.model.params.value * weights.bytes.other;
    weights_basis = "every --params weight";
    if (o.kv_bytes_per_token.given()) {
      if (!(o.kv_bytes_per_token.value >= 0) || !std::isfinite(o.kv_bytes_per_token.value))
        throw InputError("--kv-bytes-per-token must be a finite number, not negative");
      if (!o.context.given()) throw InputError("--context is missing (needed with --kv-bytes-per-token)");
      if (o.kv_dtype_opt->count() > 0)
        throw InputError("--kv-dtype has no effect with --kv-bytes-per-token, which gives the bytes already (drop one)");
      in.kv_bytes = batch * context * o.kv_bytes_per_token.value;
    } else {
      kv_note = "KV cache not counted: --params gives no attention shape (add --kv-bytes-per-token and --context)";
      kv_counted = false;
    }
  } else {
    if (o.kv_bytes_per_token.given())
      throw InputError("--kv-bytes-per-token goes with --params; a model config has its own");
    const ModelConfig m = *o.model.model();
    weights = o.weight_dtype.choose(&m);
    check_parallel_split(m, gpus, 1, "--gpus");
    if (!o.context.given()) throw InputError("--context is missing (tokens in the KV cache per sequence)");
    require_positions(m, context, "--context");
    in.weight_bytes = decode_weight_bytes(m, batch, weights.bytes);
    // A model by flags without --vocab has no embedding table to leave out (its note says so).
    less_embedding = m.vocab > 0;
    weights_basis = less_embedding ? "all but the input embedding table, of which a step reads only its tokens' rows"
                                   : "every weight of the decoder layers (no embedding table or output layer)";
    in.kv_bytes = batch * kv_bytes_read_per_decode_step(m, context, kb);
    // Tensor parallelism splits attention by heads: MLA's latent cache and down-projections are whole on every
    // GPU, and GQA's KV heads (their cache and their k/v projections) are copied once there are more GPUs than
    // heads (as `memory --mode infer` counts it). The norms, routers and row-parallel biases a step reads are whole
    // on every GPU too.
    in.kv_split = kv_tensor_split(m, gpus).split;
    in.weight_bytes_per_gpu =
        weight_bytes_per_gpu(m, in.weight_bytes, weights.bytes, gpus, decode_replicated_params(m, batch));
    kv_note = weights.note;
    if (const auto mtp = cli::mtp_serving_note(m)) kv_note += std::string(kv_note.empty() ? "" : "; ") + *mtp;
    if (const auto shape = o.model.shape_note(cli::ModelOptions::Counted::kWeights))
      kv_note += std::string(kv_note.empty() ? "" : "; ") + *shape;
    if (in.kv_split < gpus)
      kv_note += std::string(kv_note.empty() ? "" : "; ") +
                 (m.is_mla() ? std::string("KV cache and the attention down-projections whole on every GPU (MLA: "
                                           "each reads the whole latent cache)")
                             : "KV cache and k/v projections split over " + format_fixed(in.kv_split, 0) + " of the " +
                                   format_fixed(gpus, 0) + " GPUs (" + std::to_string(m.kv_heads) +
                                   " KV heads: the others hold copies)");
    if (m.sliding_window && context > static_cast<double>(*m.sliding_window))
      kv_note += std::string(kv_note.empty() ? "" : "; ") + "KV cache capped at the sliding window of " +
                 std::to_string(*m.sliding_window) + " tokens" +
                 (m.window_layers < m.layers ? " in the " + std::to_string(m.window_layers) + " of " +
                                                   std::to_string(m.layers) + " layers that slide"
                                             : std::string());
    if (m.attention_chunk && context > static_cast<double>(*m.attention_chunk))
      kv_note += std::string(kv_note.empty() ? "" : "; ") + "KV read of the token's own chunk of at most " +
                 std::to_string(*m.attention_chunk) + " tokens" +
                 (m.chunk_layers < m.layers ? " in the " + std::to_string(m.chunk_layers) + " of " +
                                                  std::to_string(m.layers) + " layers that attend in chunks"
                                            : std::string()) +
                 " (what an engine that attends by chunk reads; one that reads the whole cached chunk and masks "
                 "reads up to a chunk a step)";
    bool any_moe_layer = false;
    for (std::int64_t l = 0; l < m.layers && !any_moe_layer; ++l) any_moe_layer = m.is_moe_layer(l);
    if (any_moe_layer) {  // a config whose every layer is dense (first_k_dense_replace = layers) reads no expert
      const double e = static_cast<double>(m.routed_experts), k = static_cast<double>(m.experts_per_token);
      kv_note += std::string(kv_note.empty() ? "" : "; ") + "MoE weights: " +
                 format_fixed(e * (1 - std::pow(1 - k / e, batch)), 2) + " of " + std::to_string(m.routed_experts) +
                 " routed experts per MoE layer read at batch " + format_fixed(batch, 0) +
                 " (the expected distinct experts under uniform routing, E(1-(1-k/E)^B))";
    }
  }
  const auto profile = o.peaks.read();
  std::optional<double> given;
  if (o.peak_bw_gbps.given()) given = o.peak_bw_gbps.value * 1e9;
  const auto peaks =
      bandwidth_peaks(given, profile ? &*profile : nullptr, o.peaks.profile,
                      o.ceiling.empty() ? std::nullopt : std::optional<std::string>(o.ceiling), o.peaks.gpu_name());
  const MbuResult r = compute_mbu(in, peaks);
  if (o.json) {
    json ps = json::array();
    for (const auto& u : r.peaks)
      ps.push_back({{"source", u.peak.source},
                    {"label", u.peak.label},
                    {"bytes_per_s", u.peak.value},
                    {"mbu", u.model},
                    {"tpot_floor_s", r.bytes_per_step_per_gpu / u.peak.value}});
    json out = {{"mbu", r.peaks[0].model},
                {"bytes_per_step", r.bytes_per_step},
                {"weight_bytes_per_step", in.weight_bytes},
                {"weights_counted", weights_basis},
                {"kv_bytes_per_step", in.kv_bytes},
                {"bytes_per_step_per_gpu", r.bytes_per_step_per_gpu},
                {"weight_bytes_per_gpu", r.weight_bytes_per_gpu},
                {"kv_split_gpus", in.kv_split > 0 ? in.kv_split : gpus},
                {"achieved_bytes_per_s", r.achieved_bytes_per_s_per_gpu},
                {"achieved_bytes_per_s_total", r.achieved_bytes_per_s},
                {"tpot_s", in.tpot_s},
                {"batch", batch},
                {"context", context},
                {"gpus", gpus},
                {"weight_dtype", weights.label},
                {"kv_dtype", o.kv_bytes_per_token.given() ? json(nullptr) : json(o.kv_dtype)},
                {"primary_peak", r.peaks[0].peak.source},
                {"peaks", ps}};
    if (!kv_note.empty()) out["note"] = kv_note;
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  std::cout << "bytes read per decode step: " << format_quantity(r.bytes_per_step, "B", 4) << " = weights ("
            << weights.label << (less_embedding ? ", less the input embedding" : "") << ") "
            << format_quantity(in.weight_bytes, "B", 4);
  if (kv_counted)  // where it is not, the note below says so instead of a "+ 0 B"
    std::cout << " + KV cache ("
              << (o.kv_bytes_per_token.given() ? format_quantity(o.kv_bytes_per_token.value, "B", 4) + " a token"
                                                : o.kv_dtype)
              << ", batch " << format_fixed(batch, 0) << ", context " << format_fixed(context, 0) << ") "
              << format_quantity(in.kv_bytes, "B", 4);
  std::cout << "\n";
  if (less_embedding) std::cout << "weights read: " << weights_basis << "\n";
  if (!kv_note.empty()) std::cout << kv_note << "\n";
  std::cout << "per GPU: " << format_quantity(r.bytes_per_step_per_gpu, "B", 4)
            << " per step (its weight shard and its share of the KV cache)\n";
  std::cout << "achieved: " << format_quantity(r.achieved_bytes_per_s_per_gpu, "B/s", 4) << " per GPU ("
            << format_fixed(gpus, 0)
            << (gpus == 1 ? " GPU" : " GPUs") << ", TPOT " << format_quantity(in.tpot_s, "s") << ")\n";
  Table t;
  // The floor: the step's bytes per GPU at the peak, the TPOT no kernel beats (review 108: the MBU without it).
  t.columns = {"peak source", "peak", "what", "MBU", "TPOT floor"};
  t.right_aligned = {false, true, false, true, true};
  for (const auto& u : r.peaks)
    t.add_row({u.peak.source, format_quantity(u.peak.value, "B/s"), u.peak.label, format_percent(u.model),
               format_quantity(r.bytes_per_step_per_gpu / u.peak.value, "s")});
  std::cout << render(t, Format::kTable);
  return 0;
}

cli::Runner setup(CLI::App& app) {
  auto o = std::make_shared<MbuOptions>();
  o->model.add(app, "Parameters N whose weights one decode step reads (N x --weight-dtype bytes; every weight a "
                    "token meets, the output head included)");
  o->peaks.add(app);
  cli::add_number(app, o->batch, "--batch", "Sequences decoded together (default 1)");
  cli::add_number(app, o->context, "--context", "Tokens in each sequence's KV cache");
  cli::add_number(app, o->tpot_ms, "--tpot-ms", "Time per output token (one decode step), ms");
  cli::add_number(app, o->gpus, "--gpus",
                  "Tensor-parallel GPUs sharing the step (default 1): each reads its share of the weights and of the "
                  "KV heads (with --params and --kv-bytes-per-token the KV cache is taken to split over all of them)");
  cli::add_number(app, o->peak_bw_gbps, "--peak-bw-gbps", "A given bandwidth peak, GB/s per GPU");
  cli::add_number(app, o->kv_bytes_per_token, "--kv-bytes-per-token", "KV bytes per token (with --params)");
  o->weight_dtype.add(app, "Weight storage");
  o->kv_dtype_opt = app.add_option("--kv-dtype", o->kv_dtype,
                                   std::string("KV-cache storage (not with --kv-bytes-per-token): ") + kStorageTypes)
                       ->capture_default_str();
  app.add_option("--ceiling", o->ceiling,
                 "Profile ceiling to use (default: the first verified of hbm.read, hbm.copy, hbm.triad, hbm.write, "
                 "else of any hbm.*)");
  app.add_flag("--json", o->json, "Print JSON");
  return [o] { return run(*o); };
}

CEILINGS_SUBCOMMAND("mbu", "Memory bandwidth utilization (MBU) of decoding against measured and datasheet bandwidth",
                    setup);

}  // namespace
