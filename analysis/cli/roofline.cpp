// `ceilings roofline`: compute and memory roofs of a measured profile next to the datasheet's, ridge points,
// where workload points (or a model's prefill and decode steps) sit, and an SVG picture.
#include "ceilings/roofline.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "ceilings/ceiling_families.hpp"
#include "ceilings/memory.hpp"
#include "ceilings/report.hpp"
#include "ceilings/table.hpp"
#include "ceilings/units.hpp"
#include "subcommand.hpp"
#include "workload_options.hpp"

namespace {

using namespace ceilings;

struct RooflineOptions {
  std::string profile, dtype = "bf16", memory, compute, svg, hf_config, kv_dtype = "bf16";
  cli::WeightDtypeOption weight_dtype;
  std::string attention = "causal";
  std::vector<std::string> points;
  std::vector<double> batches;
  cli::OptNumber context, gpus;
  bool json = false;
  std::string format = "table";
  bool all_roofs = false;
  CLI::Option *dtype_opt = nullptr, *compute_opt = nullptr;  // given: the user chose the roof
};

// Weights stored in 8 bits (an fp8 checkpoint, --weight-dtype fp8/int8) classified against a 16-bit roof the user did
// not choose: say that the two were chosen apart, and which roof an engine multiplying in 8 bits meets (review 57:
// DeepSeek-V3's fp8 checkpoint against gemm.bf16 doubled prefill's floor, unsaid).
std::string eight_bit_weights_note(const RooflineOptions& o, const cli::WeightDtypeOption::Choice& weights,
                                   const Roofline& r) {
  const std::string& compute_level = r.compute_level;
  const WeightBytes& w = weights.bytes;
  if (o.dtype_opt->count() > 0 || o.compute_opt->count() > 0) return "";
  const double bytes = w.covers == WeightBytes::Covers::kNothing ? w.other : w.quantized;  // of the layer matrices
  const bool eight_bit = bytes > 0.75 && bytes < 1.1;  // a byte, and its block scales
  if (!eight_bit || compute_level.find("fp8") != std::string::npos || compute_level.find("int8") != std::string::npos)
    return "";
  const bool int8 = weights.label.find("int8") != std::string::npos;
  const std::string roof = int8                                              ? "gemm.int8"
                           : weights.label.find("e5m2") != std::string::npos ? "gemm.fp8_e5m2"
                                                                             : "gemm.fp8_e4m3";
  // Named as an option only where this profile measured it (review 58: an H100 fixture without it had sent the
  // user to an exit 2).
  const bool measured = std::any_of(r.compute.begin(), r.compute.end(),
                                    [&](const Roof& x) { return x.name == roof && x.measured; });
  return "the weights are stored in 8 bits, the compute roof is " + compute_level + " (the default): an engine that " +
         (int8 ? "multiplies in int8 (W8A8)" : "multiplies in fp8 (W8A8, as DeepGEMM does)") + " meets " + roof +
         " instead" + (measured ? " (--dtype " + roof.substr(5) + ")" : " (which this profile has not measured)") +
         "; one that dequantizes the weights to 16 bits meets this one";
}

std::string opt(const std::optional<double>& v, const std::string& unit) { return v ? format_quantity(*v, unit) : "-"; }


json side_json(const Placement::Side& s) {
  if (!s.available) return nullptr;
  return {{"attainable_flops_per_s", s.attainable},
          {"bound_by", s.bound_by},
          {"ridge_flop_per_byte", s.ridge},
          {"side", s.memory_bound ? "memory-bound" : "compute-bound"},
          {"time_floor_s", s.time_s}};
}

json placement_json(const std::string& name, double flops, double bytes, const Placement& p) {
  json j = {{"name", name}, {"flops", flops}, {"bytes", bytes}, {"intensity", p.intensity}};
  j["measured"] = side_json(p.measured);
  j["datasheet"] = side_json(p.datasheet);
  // Flattened for the common case: against the measured roofs.
  if (p.measured.available) {
    j["bound_by"] = p.measured.bound_by;
    j["attainable_flops_per_s"] = p.measured.attainable;
    j["side"] = p.measured.memory_bound ? "memory-bound" : "compute-bound";
  }
  return j;
}

// Text of lines and pipe tables as markdown: a blank line between any two lines but a table's own (a line is a
// paragraph; a table needs one before and after it, and two tables printed one after the other, one between them).
std::string as_markdown(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  std::string out;
  auto header = [&](std::size_t i) { return i + 1 < lines.size() && lines[i + 1].rfind("|---", 0) == 0; };
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out += lines[i - 1][0] == '|' && lines[i][0] == '|' && !header(i) ? "\n" : "\n\n";
    out += lines[i][0] == '|' ? lines[i] : markdown_text(lines[i]);  // a table's cells are escaped already
  }
  return out.empty() ? out : out + "\n";
}

int run(const RooflineOptions& o) {
  if (o.profile.empty()) throw InputError("--profile is missing");
  if (o.format == "csv")
    throw InputError("--format csv: roofline prints several tables (the roofs, the points, a model's prefill and decode "
                     "steps), which one CSV cannot hold: use --format json, or markdown");
  if (o.format != "table" && o.format != "markdown" && o.format != "md" && o.format != "json")
    throw InputError("unknown format '" + excerpt(o.format) + "' (known: table, markdown, json)");
  const Format format = o.json ? Format::kJson : parse_format(o.format);
  if (!o.svg.empty()) {
    check_output_path(o.svg, "--svg", {o.profile, o.hf_config});
    check_replaceable_output(o.svg, "--svg", "an SVG picture", is_svg_text);  // a profile there was replaced
  }
  const Profile profile = read_profile(o.profile);
  const Roofline r =
      roofline_from_profile(profile, o.dtype, o.memory.empty() ? std::nullopt : std::optional<std::string>(o.memory),
                            o.compute.empty() ? std::nullopt : std::optional<std::string>(o.compute));
  std::vector<Point> points;
  for (const auto& t : o.points) {
    points.push_back(parse_point(t));
    for (std::size_t i = 0; i + 1 < points.size(); ++i)
      if (points[i].name == points.back().name)
        throw InputError("--point: the name '" + excerpt(points.back().name) + "' is given twice (the table and the "
                         "SVG label points by name)");
  }
  std::optional<LlmView> llm;
  InferMemoryInput serving;  // the LLM view's workload on one GPU, as `ceilings memory --mode infer` takes it
  cli::WeightDtypeOption::Choice weights;
  if (!o.hf_config.empty()) {
    if (!o.context.given()) throw InputError("--context is missing (needed with --hf-config)");
    std::vector<double> batches = o.batches.empty() ? std::vector<double>{1, 8, 32, 128} : o.batches;
    for (std::size_t i = 0; i < batches.size(); ++i)  // a row per batch: one given twice would print twice
      for (std::size_t k = 0; k < i; ++k)
        if (batches[k] == batches[i])
          throw InputError("--batch: " + cli::detail::number_text(batches[i]) + " is given twice (a row per batch size)");
    // A step reads its weights from where they are stored (HBM, or a host or peer link for offloaded weights), never
    // from the L2 or shared memory: a model's steps against an on-chip roof would show impossible floors (mbu refuses
    // it too; --point keeps any roof).
    if (!holds_weights(r.memory_level))
      throw InputError("--memory " + r.memory_level + " is not where a model's weights are read from: with --hf-config "
                       "the memory roof is device memory (hbm.*) or, for offloaded weights, a host or peer link "
                       "(pcie.* / nvlink.*)");
    serving.model = read_hf_config(o.hf_config);
    serving.context = o.context.value;
    weights = o.weight_dtype.choose(&serving.model);
    serving.weight_bytes = weights.bytes;
    serving.kv_bytes = dtype_bytes(o.kv_dtype);
    llm = llm_view(r, serving.model, serving.context, batches, serving.weight_bytes, serving.kv_bytes,
                   parse_attention_convention(o.attention), o.gpus.given() ? o.gpus.value : 1.0);
    serving.tp = static_cast<int>(llm->gpus);  // what each GPU holds, as `ceilings memory --mode infer --tp` counts it
    for (const Point& pt : points)  // the table and the SVG label points and steps by name
      for (const auto* steps : {&llm->prefill, &llm->decode})
        for (const LlmStep& s : *steps)
          if (s.name == pt.name)
            throw InputError("--point: the name '" + excerpt(pt.name) + "' is a model step's (--hf-config): name "
                             "the point otherwise");
  } else if (o.context.given() || !o.batches.empty() || o.gpus.given()) {
    throw InputError("--context, --batch and --gpus place a model's steps: they need --hf-config");
  }
  // What a batch holds on one GPU, as `ceilings memory --mode infer` counts it: every weight and each sequence's KV
  // cache as held (over --gpus, each GPU's share), which in a windowed or chunked layer can be more than a decode step
  // reads. A step that does not fit cannot run so: its floors are what the roofs allow, not a time this GPU attains.
  const double memory = static_cast<double>(profile.device.memory_bytes);
  const double tp = llm ? llm->gpus : 1;
  // "one GPU's 139.8 GiB = 150.1 GB", or over tensor-parallel GPUs "each of the 8 GPUs' 139.8 GiB = 150.1 GB"
  const std::string whose = tp == 1 ? "one GPU's " : "each of the " + format_fixed(tp, 0) + " GPUs' ";
  auto held_at = [&](double batch) {
    InferMemoryInput in = serving;
    in.batch = batch;
    return infer_memory(in).total();
  };
  auto fits = [&](const LlmStep& s) { return held_at(s.batch) <= memory; };
  std::vector<std::pair<std::string, Placement>> placed;
  for (const Point& p : points) placed.emplace_back(p.name, place(r, p.flops, p.bytes));
  if (llm)
    for (const auto* steps : {&llm->prefill, &llm->decode})
      for (const LlmStep& s : *steps) placed.emplace_back(s.name, s.placement);
  if (!o.svg.empty()) write_file_atomic(o.svg, roofline_svg(r, placed, o.all_roofs));

  const Roof& pc = r.compute_roof();
  const Roof& pm = r.memory_roof();
  auto ridge = [](std::optional<double> c, std::optional<double> m) -> std::optional<double> {
    if (!c || !m) return std::nullopt;
    return *c / *m;
  };
  if (format == Format::kJson) {
    json out = {{"device", profile.device.name},
                {"dtype", o.dtype},
                {"compute_level", r.compute_level},
                {"memory_level", r.memory_level}};
    out["note"] = r.note ? json(*r.note) : json(nullptr);  // a fixture or a baseline: not one GPU's measurement
    out["not_roofs"] = json::array();
    for (const auto& [name, why] : r.not_roofs) out["not_roofs"].push_back({{"name", name}, {"reason", why}});
    out["roofs"] = json::array();
    for (const auto* roofs : {&r.compute, &r.memory})
      for (const Roof& x : *roofs) {
        json j = {{"name", x.name}, {"kind", x.compute ? "compute" : "memory"}, {"unit", x.unit}};
        j["measured"] = x.measured ? json(*x.measured) : json(nullptr);
        j["datasheet"] = x.datasheet ? json(*x.datasheet) : json(nullptr);
        const auto rm = x.compute ? ridge(x.measured, pm.measured) : ridge(pc.measured, x.measured);
        const auto rd = x.compute ? ridge(x.datasheet, pm.datasheet) : ridge(pc.datasheet, x.datasheet);
        j["ridge_measured"] = rm ? json(*rm) : json(nullptr);
        j["ridge_datasheet"] = rd ? json(*rd) : json(nullptr);
        out["roofs"].push_back(j);
      }
    out["points"] = json::array();
    for (std::size_t i = 0; i < points.size(); ++i)
      out["points"].push_back(placement_json(points[i].name, points[i].flops, points[i].bytes, placed[i].second));
    if (llm) {
      // Over --gpus, a step's flops, bytes, kv_bytes, memory_bytes_needed and fits_one_gpu are one GPU's share;
      // model_flops and model_bytes the whole step's.
      json l = {{"context", o.context.value},
                {"gpus", llm->gpus},
                {"kv_split_gpus", llm->kv_split},
                {"weight_dtype", weights.label},
                {"kv_dtype", o.kv_dtype},
                {"decode_intensity_limit", llm->decode_intensity_limit},
                {"counts_kv_traffic", llm->has_kv_traffic}};
      if (!weights.note.empty()) l["weight_note"] = weights.note;
      if (const auto mtp = cli::mtp_serving_note(serving.model)) l["mtp_note"] = *mtp;
      if (const auto uncounted = cli::not_counted_note(serving.model)) l["not_counted_note"] = *uncounted;
      if (const std::string n = eight_bit_weights_note(o, weights, r); !n.empty())
        l["compute_note"] = n;
      for (const char* key : {"prefill", "decode"}) {
        l[key] = json::array();
        for (const LlmStep& s : std::string(key) == "prefill" ? llm->prefill : llm->decode) {
          json j = placement_json(s.name, s.flops, s.bytes, s.placement);
          j["batch"] = s.batch;
          j["model_flops"] = s.model_flops;
          j["model_bytes"] = s.model_bytes;
          j["kv_bytes"] = s.kv_bytes;
          j["memory_bytes_needed"] = held_at(s.batch);
          j["fits_one_gpu"] = fits(s);
          if (std::string(key) == "decode") {
            j["tpot_floor_s"] = s.placement.measured.available ? json(s.placement.measured.time_s) : json(nullptr);
            j["tpot_floor_datasheet_s"] =
                s.placement.datasheet.available ? json(s.placement.datasheet.time_s) : json(nullptr);
          }
          l[key].push_back(j);
        }
      }
      l["compute_bound_from_batch"] = llm->crossover_measured ? json(*llm->crossover_measured) : json(nullptr);
      l["compute_bound_from_batch_datasheet"] =
          llm->crossover_datasheet ? json(*llm->crossover_datasheet) : json(nullptr);
      for (const auto& [key, b] : {std::pair<std::string, std::optional<double>>{"compute_bound_from_batch",
                                                                                 llm->crossover_measured},
                                   {"compute_bound_from_batch_datasheet", llm->crossover_datasheet}}) {
        l[key + "_bytes_held"] = b ? json(held_at(*b)) : json(nullptr);
        l[key + "_fits_one_gpu"] = b ? json(held_at(*b) <= memory) : json(nullptr);
      }
      out["llm"] = l;
    }
    if (!o.svg.empty()) out["svg"] = o.svg;
    std::cout << out.dump(2) << "\n";
    return 0;
  }

  // The text: tables and the lines between them; as markdown, each line a paragraph and each table a pipe table.
  const Format tables = format == Format::kMarkdown ? Format::kMarkdown : Format::kTable;
  std::ostringstream os;
  os << r.title << "; classification against " << pc.name << " and " << pm.name << "\n";
  if (const auto note = profile.note()) os << "NOTE: " << *note << "\n";  // a fixture: not a measurement
  // Where the datasheet column comes from, or why it is empty (a MIG instance), as `show` says (review 94).
  if (profile.device.is_mig())
    os << "a MIG instance: no datasheet figure applies (the datasheet's are the whole GPU's)\n";
  else if (const std::string source = datasheet_source(profile); !source.empty())
    os << "datasheet: " << source << "\n";
  Table roofs;
  roofs.columns = {"roof", "kind", "measured", "datasheet", "measured/datasheet", "ridge measured", "ridge datasheet"};
  roofs.right_aligned = {false, false, true, true, true, true, true};
  for (const auto* list : {&r.compute, &r.memory})
    for (const Roof& x : *list) {
      const auto rm = x.compute ? ridge(x.measured, pm.measured) : ridge(pc.measured, x.measured);
      const auto rd = x.compute ? ridge(x.datasheet, pm.datasheet) : ridge(pc.datasheet, x.datasheet);
      roofs.add_row({x.name, x.compute ? "compute" : "memory", opt(x.measured, x.unit),
                     opt(x.datasheet, x.unit),
                     x.measured && x.datasheet ? format_percent(*x.measured / *x.datasheet) : "-",
                     rm ? format_fixed(*rm, 1) + " " + (x.compute ? x : pc).intensity_unit() : "-",
                     rd ? format_fixed(*rd, 1) + " " + (x.compute ? x : pc).intensity_unit() : "-"});
    }
  os << render(roofs, tables);
  for (const auto& [name, why] : r.not_roofs) os << "no roof: " << name << " (" << why << ")\n";
  auto point_table = [&](const std::string& what, bool tpot, bool per_gpu = false) {
    Table t;
    const std::string each = per_gpu ? " a GPU" : "";
    t.columns = {what,
                 (pc.unit == "OP/s" ? "OPs" : "FLOPs") + each,
                 "bytes" + each,
                 pc.intensity_unit(),
                 "bound by (measured)",
                 "attainable",
                 "side",
                 tpot ? "TPOT floor" : "time floor",
                 tpot ? "TPOT floor (datasheet)" : "time floor (datasheet)"};
    t.right_aligned = {false, true, true, true, false, true, false, true, true};
    return t;
  };
  // An intensity with two decimals where that shows it (0.01 to a million), else three significant digits: 1e-3
  // FLOP/B was "0.00", 1e13 "10000000000000.00".
  auto intensity_text = [](double x) {
    if (x == 0 || (std::fabs(x) >= 0.01 && std::fabs(x) < 1e6)) return format_fixed(x, 2);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", x);
    return std::string(buf);
  };
  auto add = [&](Table& t, const std::string& name, double flops, double bytes, const Placement& p) {
    const auto& m = p.measured;
    t.add_row({name, format_quantity(flops, pc.unit == "OP/s" ? "OP" : "FLOP"), format_quantity(bytes, "B"), intensity_text(p.intensity),
               m.available ? m.bound_by : "-", m.available ? format_quantity(m.attainable, pc.unit) : "-",
               m.available ? (m.memory_bound ? "memory-bound" : "compute-bound") : "-",
               m.available ? format_quantity(m.time_s, "s") : "-",
               p.datasheet.available ? format_quantity(p.datasheet.time_s, "s") : "-"});
  };
  if (!points.empty()) {
    Table t = point_table("point", false);
    for (std::size_t i = 0; i < points.size(); ++i)
      add(t, points[i].name, points[i].flops, points[i].bytes, placed[i].second);
    os << "\n" << render(t, tables);
  }
  if (llm) {
    // Prefill's floor is the time of the whole prompt; a decode step's is the time per output token.
    Table prefill = point_table("prefill", false, tp > 1), decode = point_table("decode step", true, tp > 1);
    for (const LlmStep& s : llm->prefill) add(prefill, s.name, s.flops, s.bytes, s.placement);
    for (const LlmStep& s : llm->decode) add(decode, s.name, s.flops, s.bytes, s.placement);
    os << "\nLLM view, context " << format_fixed(o.context.value, 0) << ", weights " << weights.label << ", KV cache "
              << o.kv_dtype << " (bytes: the weights and the KV cache, not the activations, so a prefill's intensity is "
              << "an upper bound; decode bytes count the KV cache read every step; prefill uses the " << o.attention
              << " FLOP convention, with logits at each prompt's last token only)\n";
    if (tp > 1) {
      os << "tensor parallel over " << format_fixed(tp, 0) << " GPUs: each step as one GPU runs its share (its "
                << "weight shard and the weights every GPU holds whole, ";
      if (llm->kv_split < tp)
        os << (serving.model.is_mla() ? "the whole latent KV cache, as MLA keeps it on each, "
                                             : "the KV cache of its K/V heads, copied past one a GPU (" +
                                                   std::to_string(serving.model.kv_heads) + " KV heads), ");
      else
        os << "a 1/" << format_fixed(tp, 0) << " share of the KV cache, ";
      os << "its share of the FLOPs); the all-reduces between the GPUs are not counted, so the floors are the "
                   "roofs' alone\n";
    }
    if (!weights.note.empty()) os << "note: " << weights.note << "\n";
    if (const auto mtp = cli::mtp_serving_note(serving.model)) os << "note: " << *mtp << "\n";
    if (const auto uncounted = cli::not_counted_note(serving.model)) os << "note: " << *uncounted << "\n";
    if (const std::string n = eight_bit_weights_note(o, weights, r); !n.empty())
      os << "note: " << n << "\n";
    if (!llm->prefill.empty()) os << render(prefill, tables);
    if (!llm->decode.empty()) os << render(decode, tables);
    std::string too_big;
    for (const auto* steps : {&llm->prefill, &llm->decode})
      for (const LlmStep& s : *steps)
        if (!fits(s))
          too_big += (too_big.empty() ? "" : ", ") + s.name + " (" + format_quantity(held_at(s.batch), "B") + ")";
    if (!too_big.empty())
      os << "does not fit " << whose << format_capacity(memory) << " (weights " << weights.label << " "
                << format_quantity(infer_memory(serving).weights, "B") << " + KV cache held): " << too_big
                << "; their floors are what the roofs allow, not a time " << (tp == 1 ? "this GPU runs" : "these GPUs run")
                << " (`ceilings memory` says what fits)\n";
    // Where a batch does not fit: what would run it. More tensor-parallel GPUs divide the KV cache only while they
    // are fewer than the KV heads (MLA's latent cache is whole on each): past that, a KV cache that alone passes a
    // GPU needs the sequences split over GPUs (reviews 112, 113).
    auto split_advice = [&](double b) -> std::string {
      if (tp == 1) return "split over several GPUs";
      const ModelConfig& m = serving.model;
      if (!m.is_mla() && static_cast<double>(m.kv_heads) > tp) return "split over more GPUs";
      const std::string why = m.is_mla() ? "MLA keeps the latent cache whole on every GPU"
                                         : "its " + std::to_string(m.kv_heads) + " KV heads, one or more a GPU already";
      InferMemoryInput in = serving;
      in.batch = b;
      if (infer_memory(in).kv_cache > memory)
        return "with its sequences split over GPUs (data-parallel attention): its KV cache alone is more than a GPU "
               "holds, and more tensor-parallel GPUs would not shrink it (" + why + ")";
      return "split over more GPUs, for their smaller weight shards: the KV cache each holds stays as it is (" + why +
             ")";
    };
    auto say = [&](const char* which, const std::optional<double>& b, const std::optional<double>& ridge_at) {
      os << "decode becomes compute-bound (" << which << " roofs): ";
      if (b && held_at(*b) > memory)
        os << "from batch " << format_fixed(*b, 0) << ", which holds " << format_quantity(held_at(*b), "B")
                  << " of weights and KV cache" << (tp == 1 ? "" : " a GPU") << ": more than " << whose
                  << format_capacity(memory) << ", so that batch runs only " << split_advice(*b) << "\n";
      else if (b)
        os << "from batch " << format_fixed(*b, 0) << "\n";
      else if (ridge_at && llm->decode_intensity_limit > *ridge_at)  // above the ridge, but only just
        os << "not by batch " << format_fixed(kCrossoverSearchLimit, 0) << ": intensity approaches " << format_fixed(llm->decode_intensity_limit, 1)
                  << " " << pc.intensity_unit() << " as the batch grows, a hair above the ridge of "
                  << format_fixed(*ridge_at, 1) << " " << pc.intensity_unit() << "\n";
      else
        os << "never: KV-cache reads grow with the batch, so intensity tops out at "
                  << format_fixed(llm->decode_intensity_limit, 1) << " " << pc.intensity_unit() << ", below the ridge\n";
    };
    say("measured", llm->crossover_measured, ridge(pc.measured, pm.measured));
    if (pc.datasheet && pm.datasheet) say("datasheet", llm->crossover_datasheet, ridge(pc.datasheet, pm.datasheet));
  }
  if (!o.svg.empty()) os << "wrote " << o.svg << "\n";
  std::cout << (format == Format::kMarkdown ? as_markdown(os.str()) : os.str());
  return 0;
}

cli::Runner setup(CLI::App& app) {
  auto o = std::make_shared<RooflineOptions>();
  app.add_option("--profile", o->profile, "Measured profile")->required();
  auto* dtype = app.add_option("--dtype", o->dtype, "Compute roof used to classify (gemm.<dtype>)")->capture_default_str();
  o->dtype_opt = dtype;
  o->compute_opt = app.add_option("--compute", o->compute,
                                  "Compute roof used to classify, by name (fma.fp32 for a kernel without tensor cores; "
                                  "instead of --dtype)")
                       ->excludes(dtype);
  app.add_option("--memory", o->memory,
                 "Memory roof used to classify (default: the first verified of hbm.read, hbm.copy, hbm.triad, "
                 "hbm.write)");
  app.add_option("--point", o->points, "NAME:FLOPS:BYTES, repeatable");
  auto* svg = app.add_option("--svg", o->svg, "Write the roofline picture here");
  app.add_flag("--all-roofs", o->all_roofs,
               "Draw every roof in the SVG, not only each data type's and memory level's main one (and the two the "
               "classification uses)")
      ->needs(svg);
  auto* hf = app.add_option("--hf-config", o->hf_config, "LLM view: Hugging Face config.json");
  cli::add_number(app, o->context, "--context", "LLM view: tokens per sequence");
  app.add_option("--batch", o->batches, "LLM view: batch sizes (default 1 8 32 128)");
  cli::add_number(app, o->gpus, "--gpus",
                  "LLM view: tensor-parallel GPUs sharing each step (default 1): each runs its share of the FLOPs and "
                  "reads its weight shard and its KV heads' cache, as `mbu --gpus` and `memory --tp` split them");
  // The LLM view's options mean nothing without its model: refused, not ignored.
  o->weight_dtype.add(app, "LLM view: weight storage")->needs(hf);
  app.add_option("--kv-dtype", o->kv_dtype, std::string("LLM view: KV-cache storage: ") + kStorageTypes)->capture_default_str()->needs(hf);
  app.add_option("--attention", o->attention, "LLM view, prefill FLOP convention: causal | noncausal")
      ->capture_default_str()
      ->needs(hf);
  auto* json_flag = app.add_flag("--json", o->json, "Print JSON (as --format json)");
  app.add_option("--format", o->format, "table | markdown | json")->capture_default_str()->excludes(json_flag);
  return [o] { return run(*o); };
}

CEILINGS_SUBCOMMAND("roofline", "Roofline of a profile: roofs, ridge points, points and an LLM's prefill/decode steps",
                    setup);

}  // namespace
