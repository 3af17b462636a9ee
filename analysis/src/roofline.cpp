// Rooflines from measured profiles: compute and memory roofs, point placement, the LLM prefill/decode
// view, and the SVG picture (log-log, measured solid, datasheet dashed).
#include "ceilings/roofline.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "ceilings/ceiling_families.hpp"
#include "ceilings/gemm_plan.hpp"
#include "ceilings/report.hpp"
#include "ceilings/units.hpp"

namespace ceilings {

namespace {

const Roof* find_roof(const std::vector<Roof>& roofs, const std::string& name) {
  for (const Roof& r : roofs)
    if (r.name == name) return &r;
  return nullptr;
}

std::string names(const std::vector<Roof>& roofs) {
  std::string out;
  for (const Roof& r : roofs) out += (out.empty() ? "" : ", ") + r.name;
  return out.empty() ? "none" : out;
}

}  // namespace

const Roof& Roofline::compute_roof() const { return *find_roof(compute, compute_level); }
const Roof& Roofline::memory_roof() const { return *find_roof(memory, memory_level); }

Roofline roofline_from_profile(const Profile& p, const std::string& dtype, const std::optional<std::string>& level,
                               const std::optional<std::string>& compute_level) {
  gemm::parse_dtype(dtype);  // an unknown type is named as such, not as a ceiling the profile lacks
  Roofline r;
  r.title = "Roofline: " + p.device.name + (p.hostname.empty() ? "" : " on " + p.hostname);
  r.note = p.note();
  // Said, not dropped without a word (review 94: no NVLink row, and no reason, on one GPU).
  auto roof_unit = [](const std::string& unit) { return unit == "FLOP/s" || unit == "OP/s" || unit == "B/s"; };
  for (const Skipped& s : p.skipped)
    if (roof_unit(ceiling_unit_for(s.name))) r.not_roofs.push_back({s.name, "not measured: " + s.reason});
  for (const Skipped& e : p.errors)
    if (roof_unit(ceiling_unit_for(e.name))) r.not_roofs.push_back({e.name, "failed: " + e.reason});
  for (const Ceiling& c : p.ceilings) {
    if (!c.verified) {  // a number that failed its check is no roof
      if (roof_unit(c.unit)) r.not_roofs.push_back({c.name, "not verified"});
      continue;
    }
    // By unit, so a newly added family is a roof too: compute roofs are the tensor cores' (gemm.*) and the CUDA
    // cores' own (fma.*, the roof of a kernel that uses no tensor core); memory roofs every bandwidth, from
    // shared memory out to PCIe and NVLink.
    if ((c.unit == "FLOP/s" || c.unit == "OP/s") && c.value > 0)
      r.compute.push_back({c.name, true, c.value, datasheet_for(p, c), c.unit});
    else if (c.unit == "B/s" && c.value > 0)
      r.memory.push_back({c.name, false, c.value, datasheet_for(p, c), c.unit});
  }
  r.dtype = dtype;
  r.compute_level = compute_level ? *compute_level : "gemm." + dtype;
  if (!find_roof(r.compute, r.compute_level)) {
    usable_ceiling(p, r.compute_level, "the profile");  // skipped, failed or unverified: says why (exit 3)
    throw InputError("the profile has no " + r.compute_level + " compute roof (its compute roofs: " +
                     names(r.compute) + "); pick one with --dtype, or --compute for any of them (fma.fp32: a "
                     "kernel without tensor cores)");
  }
  // HBM (or the --memory roof) the profile names but cannot serve (skipped, failed, unverified) says why, exit 3.
  if (r.memory.empty()) {
    if (level) usable_ceiling(p, *level, "the profile");
    explain_unusable_family(p, "hbm", "the profile");
    throw InputError("the profile has no memory bandwidth ceiling (hbm.*, l2.*, smem.*, pcie.*, nvlink.*)");
  }
  if (level) {
    if (!find_roof(r.memory, *level)) {
      usable_ceiling(p, *level, "the profile");  // skipped, failed or unverified: says why (exit 3)
      if (p.find(*level))
        throw InputError("--memory " + *level + " is not a memory bandwidth ceiling (a ceiling in B/s); this "
                         "profile's: " + names(r.memory));
      throw InputError("the profile has no " + *level + " ceiling (its memory roofs: " + names(r.memory) + ")");
    }
    r.memory_level = *level;
  } else {
    // The HBM roof mbu defaults to as well.
    if (const Ceiling* hbm = default_hbm_ceiling(p); hbm && find_roof(r.memory, hbm->name)) r.memory_level = hbm->name;
    if (r.memory_level.empty()) {
      // No HBM at all is the user's to pick: a PCIe roof is no stand-in (decode floors against it read 100x too
      // slow).
      explain_unusable_family(p, "hbm", "the profile");
      throw InputError("the profile has no verified hbm.* bandwidth ceiling: pick the memory roof with --memory (its "
                       "memory roofs: " + names(r.memory) + ")");
    }
  }
  return r;
}

Point parse_point(const std::string& text) {
  // Its name goes to the terminal and into the SVG's text, and errors below echo the argument: a control
  // character or a broken UTF-8 sequence (which made the SVG malformed) is refused first, without echoing it.
  if (const std::string problem = plain_text_problem(text); !problem.empty())
    throw InputError("--point: the argument " + problem);
  const auto a = text.rfind(':');
  const auto b = a == std::string::npos || a == 0 ? std::string::npos : text.rfind(':', a - 1);
  if (b == std::string::npos || b == 0)
    throw InputError("--point '" + text + "': expected NAME:FLOPS:BYTES, e.g. attention:1.2e12:3.4e9");
  Point p;
  p.name = text.substr(0, b);
  // "a:1e12:1e9,b:2e12:1e9" read as one point named "a:1e12:1e9,b": points are one per --point.
  if (p.name.find(',') != std::string::npos)
    throw InputError("--point '" + excerpt(text) + "': a name holds no comma; give each point its own --point");
  // A name may hold colons (attn:fwd), but not end in an empty or numeric field: "a:1e12:1e9:5" (one field
  // too many) was the point "a:1e12" at 1e9 FLOPs and 5 bytes.
  if (const auto c = p.name.rfind(':'); c != std::string::npos) {
    const std::string last = p.name.substr(c + 1);
    if (last.empty() || last.find_first_not_of("0123456789.eE+-") == std::string::npos)
      throw InputError("--point '" + excerpt(text) + "': more than three fields, or a name ending in ':" + last +
                       "'; expected NAME:FLOPS:BYTES, e.g. attention:1.2e12:3.4e9");
  }
  auto number = [&](const std::string& s, const char* what) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    // Decimal only, as every number on the command line (std::stod also reads hex: 0x10, 0x1p3)
    if (s.find_first_not_of("0123456789.eE+-") != std::string::npos) used = 0;
    if (used != s.size() || s.empty() || !std::isfinite(v) || v <= 0)
      throw InputError("--point '" + text + "': " + what + " must be a positive number, found '" + s + "'");
    return v;
  };
  p.flops = number(text.substr(b + 1, a - b - 1), "FLOPS");
  p.bytes = number(text.substr(a + 1), "BYTES");
  const double intensity = p.flops / p.bytes;
  if (!std::isfinite(intensity) || intensity <= 0)
    throw InputError("--point '" + text + "': FLOPS / BYTES is not a finite positive intensity");
  return p;
}

Placement place(const Roofline& r, double flops, double bytes) {
  Placement out;
  out.intensity = flops / bytes;
  const Roof& c = r.compute_roof();
  const Roof& m = r.memory_roof();
  auto side = [&](std::optional<double> cv, std::optional<double> mv) {
    Placement::Side s;
    if (!cv || !mv || *cv <= 0 || *mv <= 0) return s;
    s.available = true;
    s.ridge = *cv / *mv;
    s.memory_bound = out.intensity < s.ridge;
    s.attainable = std::min(*cv, out.intensity * *mv);
    s.bound_by = s.memory_bound ? m.name : c.name;
    s.time_s = std::max(flops / *cv, bytes / *mv);
    return s;
  };
  out.measured = side(c.measured, m.measured);
  out.datasheet = side(c.datasheet, m.datasheet);
  return out;
}

LlmView llm_view(const Roofline& r, const ModelConfig& m, double context, const std::vector<double>& batches,
                 const WeightBytes& wb, double kb, AttentionConvention prefill_attention, double gpus) {
  require_length(context, "--context");
  require_positions(m, context, "--context");
  if (batches.empty()) throw InputError("--batch is missing");
  require_count(gpus, "--gpus");
  if (gpus > 1048576) throw InputError("--gpus is more GPUs than any job runs on (at most 2^20)");
  check_parallel_split(m, gpus, 1, "--gpus");
  // One GPU's share of a step over `tokens` tokens: the K/V (MLA: down-) projections' FLOPs divide over kv.split
  // GPUs, the MoE routers' run whole on each (vLLM's ReplicatedLinear gate, as weight_bytes_per_gpu holds them:
  // review 112), the rest over all; the weights as weight_bytes_per_gpu holds them, the KV cache over kv.split.
  const KvTensorSplit kv = kv_tensor_split(m, gpus);
  const double routers = static_cast<double>(count_params(m).router);
  auto flops_per_gpu = [&](double flops, double tokens) {
    if (gpus == 1) return flops;
    const double copied = tokens * 2.0 * kv.projection_matrices, whole = tokens * 2.0 * routers;
    return (flops - copied - whole) / gpus + copied / kv.split + whole;
  };
  auto weights_per_gpu = [&](double tokens) {
    const double whole = decode_weight_bytes(m, tokens, wb);
    return gpus == 1 ? whole : weight_bytes_per_gpu(m, whole, wb, gpus, decode_replicated_params(m, tokens));
  };
  const FlopShape shape = flop_shape(m);
  const double kv_sequence = kv_cache_bytes_per_sequence(m, context, kb);
  // A decode step: every sequence adds one token that attends to all S cached keys (or the window, or its own
  // chunk's keys), and reads those keys and values (what it holds, kv_sequence, can be more: a chunked layer's
  // cache holds up to a whole chunk).
  const double kv_read = kv_bytes_read_per_decode_step(m, context, kb);
  // MLA decodes from its compressed cache (what kv_bytes_per_token counts): with the up-projections
  // absorbed into the query and the output (their FLOPs are the kv_b parameters' own, per token), each
  // cached key costs a (kv_lora_rank + rope)-wide score and a kv_lora_rank-wide value product per head.
  FlopShape decode_shape = shape;
  if (m.is_mla()) {
    decode_shape.qk_dim = static_cast<double>(m.kv_lora_rank + m.qk_rope_head_dim);
    decode_shape.v_dim = static_cast<double>(m.kv_lora_rank);
  }
  const double decode_flops_per_seq = 2.0 * shape.matmul_params + attention_flops_decode(decode_shape, context);
  auto decode = [&](double b) {
    LlmStep s;
    s.batch = b;
    s.model_flops = b * decode_flops_per_seq;
    s.model_bytes = decode_weight_bytes(m, b, wb) + b * kv_read;
    s.flops = flops_per_gpu(s.model_flops, b);
    s.kv_bytes = b * kv_read / kv.split;
    s.bytes = weights_per_gpu(b) + s.kv_bytes;
    return s;
  };
  LlmView v;
  v.gpus = gpus;
  v.kv_split = kv.split;
  v.has_kv_traffic = kv_sequence > 0;
  v.decode_intensity_limit = v.has_kv_traffic ? flops_per_gpu(decode_flops_per_seq, 1) / (kv_read / kv.split) : INFINITY;
  for (double b : batches) {
    require_count(b, "--batch values");
    LlmStep d = decode(b);
    d.name = "decode b=" + format_fixed(b, 0);
    d.placement = place(r, d.flops, d.bytes);
    v.decode.push_back(d);
    LlmStep p;
    p.name = "prefill b=" + format_fixed(b, 0);
    p.batch = b;
    // Logits only at each prompt's last token, as serving engines compute them (vLLM's LogitsProcessor prunes the
    // hidden states to the sampled positions; Transformers' generate keeps logits_to_keep = 1): the other
    // context - 1 tokens skip the output layer's 2*V*h. Training (mfu, train-time) needs logits at every token.
    p.model_flops = b * (context * forward_flops_per_token(shape, context, prefill_attention) -
                         (context - 1) * 2.0 * shape.logit_params);
    p.model_bytes = decode_weight_bytes(m, b * context, wb) + b * kv_sequence;
    p.flops = flops_per_gpu(p.model_flops, b * context);
    p.kv_bytes = b * kv_sequence / kv.split;  // written once
    p.bytes = weights_per_gpu(b * context) + p.kv_bytes;
    p.placement = place(r, p.flops, p.bytes);
    v.prefill.push_back(p);
  }
  auto crossover = [&](std::optional<double> c, std::optional<double> mem) -> std::optional<double> {
    if (!c || !mem || *c <= 0 || *mem <= 0) return std::nullopt;
    const double ridge = *c / *mem;
    if (v.decode_intensity_limit <= ridge) return std::nullopt;
    auto reached = [&](double b) {
      const LlmStep s = decode(b);
      return s.flops / s.bytes >= ridge;
    };
    double lo = 0, hi = 1;  // lo not reached
    while (!reached(hi)) {
      if (hi >= kCrossoverSearchLimit) return std::nullopt;
      lo = hi;
      hi = std::min(hi * 2, kCrossoverSearchLimit);
    }
    if (hi == 1) return 1.0;
    while (hi - lo > 1) {
      const double mid = std::floor((lo + hi) / 2);
      (reached(mid) ? hi : lo) = mid;
    }
    return hi;
  };
  v.crossover_measured = crossover(r.compute_roof().measured, r.memory_roof().measured);
  v.crossover_datasheet = crossover(r.compute_roof().datasheet, r.memory_roof().datasheet);
  return v;
}

namespace {

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string intensity_label(double v) {
  if (v >= 1e12) return format_fixed(v / 1e12, 0) + "T";
  if (v >= 1e9) return format_fixed(v / 1e9, 0) + "G";
  if (v >= 1e6) return format_fixed(v / 1e6, 0) + "M";
  if (v >= 1000) return format_fixed(v / 1000, 0) + "k";
  if (v >= 1) return format_fixed(v, 0);
  return format_fixed(v, static_cast<int>(std::ceil(-std::log10(v))));
}

}  // namespace

namespace {
// Whether a roof is drawn where the picture shows the main roofs only (roofline_svg's all_roofs false).
bool main_roof(const Roof& roof, const std::vector<Roof>& level_roofs) {
  const std::string& n = roof.name;
  if (roof.compute) {  // a GEMM type's plain ceiling, not its _ref8192 or _sustained; fma.* and newer names drawn
    const int rank = gemm::gemm_ceiling_rank(n);
    return rank < 0 || rank % 3 == 0;
  }
  static const char* primary[] = {"hbm.read", "l2.read", "smem.read", "pcie.h2d", "nvlink.p2p_uni"};
  const std::string family = family_of(n);
  for (const char* p : primary)
    if (family_of(p) == family) {
      const bool held = std::any_of(level_roofs.begin(), level_roofs.end(), [&](const Roof& x) { return x.name == p; });
      if (held) return n == p;
    }
  // A level without its usual main roof: its first.
  for (const Roof& x : level_roofs)
    if (family_of(x.name) == family) return x.name == n;
  return false;
}
}  // namespace

std::string roofline_svg(const Roofline& all, const std::vector<std::pair<std::string, Placement>>& points,
                         bool all_roofs) {
  Roofline r = all;
  std::size_t variants = 0;  // roofs not drawn
  if (!all_roofs) {
    for (std::vector<Roof>* list : {&r.compute, &r.memory}) {
      const std::vector<Roof> level = *list;
      list->erase(std::remove_if(list->begin(), list->end(),
                                 [&](const Roof& x) {
                                   const bool keep = x.name == all.compute_level || x.name == all.memory_level ||
                                                     main_roof(x, level);
                                   variants += keep ? 0 : 1;
                                   return !keep;
                                 }),
                  list->end());
    }
  }
  // A note (a fixture's, a fleet baseline's) in lines of at most 90 characters under the title, the plot below them
  // (review 94: a long note ran off the left edge, "NOTE" cut, and into the legend).
  std::vector<std::string> note_lines;
  if (r.note) {
    std::istringstream words("NOTE: " + *r.note);
    for (std::string w; words >> w;) {
      if (note_lines.empty() || note_lines.back().size() + 1 + w.size() > 90) note_lines.push_back(w);
      else note_lines.back() += " " + w;
    }
  }
  const double extra = 14.0 * static_cast<double>(note_lines.size() > 1 ? note_lines.size() - 1 : 0);
  // left: room for a tick label ("100 TFLOP/s", ~77 px) right of the rotated axis title (review 94: they overlapped).
  const double width = 960, height = 600 + extra, left = 112, right = 260, top = 60 + extra, bottom = 70;
  const double pw = width - left - right, ph = height - top - bottom;
  // The axes are decades around the roofs: a roof of 1e308 FLOP/s would put the top of the axis at
  // infinity (and the tick loops would never end). Roofs far outside anything measurable are refused.
  constexpr double kRoofLo = 1e-30, kRoofHi = 1e30;
  for (const auto* roofs : {&r.compute, &r.memory})
    for (const Roof& roof : *roofs)
      for (int ds = 0; ds < 2; ++ds) {
        const auto v = ds ? roof.datasheet : roof.measured;
        if (v && !(*v >= kRoofLo && *v <= kRoofHi)) {
          std::ostringstream what;
          what << "cannot draw the roofline: " << roof.name << (ds ? " (datasheet) is " : " (measured) is ") << *v
               << " " << roof.unit << ", outside the 1e-30 to 1e30 the picture's axes can span";
          throw InputError(what.str());
        }
      }
  // The y axis counts floating-point operations, or integer ones where every compute roof is int8 (OP/s);
  // a picture with both says so on its axes, and each roof's legend entry carries its own unit.
  bool any_op = false, any_flop = false;
  for (const Roof& c : r.compute) (c.unit == "OP/s" ? any_op : any_flop) = true;
  const std::string rate_unit = any_op && !any_flop ? "OP/s" : "FLOP/s";
  const std::string rate_axis = any_op && any_flop ? "FLOP/s; OP/s for int8" : rate_unit;
  const std::string intensity_axis =
      any_op && any_flop ? "FLOP/byte; OP/byte for int8" : (any_op ? "OP/byte" : "FLOP/byte");
  double cmax = 0, cmin = INFINITY, mmin = INFINITY;
  for (const Roof& c : r.compute)
    for (auto v : {c.measured, c.datasheet})
      if (v) cmax = std::max(cmax, *v), cmin = std::min(cmin, *v);
  for (const Roof& m : r.memory)
    for (auto v : {m.measured, m.datasheet})
      if (v) mmin = std::min(mmin, *v);
  double ai_lo = INFINITY, ai_hi = 0;
  for (const Roof& m : r.memory)
    for (auto v : {m.measured, m.datasheet})
      if (v) ai_lo = std::min(ai_lo, cmin / *v), ai_hi = std::max(ai_hi, cmax / *v);
  // The axis spans the roofs and the points, within 1e-6 to 1e12 FLOP/byte (a point outside is not drawn, but
  // named under the legend).
  constexpr double kAxisLo = 1e-6, kAxisHi = 1e12;
  auto drawable = [&](double ai) { return std::isfinite(ai) && ai >= kAxisLo && ai <= kAxisHi; };
  for (const auto& [name, p] : points)
    if (drawable(p.intensity)) ai_lo = std::min(ai_lo, p.intensity), ai_hi = std::max(ai_hi, p.intensity);
  const double x0 = std::pow(10.0, std::floor(std::log10(std::clamp(ai_lo, kAxisLo, kAxisHi) / 3)));
  const double x1 = std::pow(10.0, std::ceil(std::log10(std::clamp(ai_hi, kAxisLo, kAxisHi) * 3)));
  const double y1 = std::pow(10.0, std::ceil(std::log10(cmax * 1.2)));
  double y0 = std::pow(10.0, std::floor(std::log10(x0 * mmin)));
  for (const auto& [name, p] : points)  // a point off the x axis is not drawn: it does not stretch the y axis either
    if (p.measured.available && drawable(p.intensity))
      y0 = std::min(y0, std::pow(10.0, std::floor(std::log10(p.measured.attainable))));
  y0 = std::max(y0, y1 / 1e8);
  // Decades on each axis; bounded whatever the numbers (at most 20 on x, 9 on y).
  const long x_decades = std::lround(std::log10(x1 / x0)), y_decades = std::lround(std::log10(y1 / y0));
  if (!(x_decades >= 0 && x_decades <= 64 && y_decades >= 0 && y_decades <= 64))
    throw InputError("cannot draw the roofline: its axes would span " + format_fixed(std::log10(x1 / x0), 0) + " and " +
                     format_fixed(std::log10(y1 / y0), 0) + " decades");
  auto decades = [](double from, long n) {
    std::vector<double> ticks;
    for (long i = 0; i <= n; ++i, from *= 10) ticks.push_back(from);
    return ticks;
  };
  const std::vector<double> x_ticks = decades(x0, x_decades), y_ticks = decades(y0, y_decades);
  auto X = [&](double ai) { return left + pw * (std::log10(ai) - std::log10(x0)) / (std::log10(x1) - std::log10(x0)); };
  auto Y = [&](double f) {
    return top + ph * (1 - (std::log10(f) - std::log10(y0)) / (std::log10(y1) - std::log10(y0)));
  };
  static const char* palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
                                  "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#393b79", "#637939",
                                  "#8c6d31", "#843c39", "#7b4173", "#3182bd"};
  constexpr int kColors = sizeof palette / sizeof palette[0];
  // The body first: the document grows past width x height where the legend needs it (a profile with every
  // GEMM ceiling has some 70 entries), and its header says how large it became.
  std::ostringstream os;
  os << "<text x=\"" << num(left + pw / 2)
     << "\" y=\"30\" text-anchor=\"middle\" font-size=\"20\" font-weight=\"bold\">" << xml_escape(r.title)
     << "</text>\n";
  // A fixture's or a fleet baseline's roofs are not one GPU's measurement: the picture says so.
  for (std::size_t i = 0; i < note_lines.size(); ++i)
    os << "<text x=\"" << num(left + pw / 2) << "\" y=\"" << num(48 + 14.0 * static_cast<double>(i))
       << "\" text-anchor=\"middle\" font-size=\"12\" fill=\"#b00000\">" << xml_escape(note_lines[i]) << "</text>\n";
  // Grid and ticks, one per decade.
  os << "<g stroke=\"#dddddd\" stroke-width=\"1\">\n";
  for (double x : x_ticks)
    os << "<line x1=\"" << num(X(x)) << "\" y1=\"" << num(top) << "\" x2=\"" << num(X(x)) << "\" y2=\"" << num(top + ph)
       << "\"/>\n";
  for (double y : y_ticks)
    os << "<line x1=\"" << num(left) << "\" y1=\"" << num(Y(y)) << "\" x2=\"" << num(left + pw) << "\" y2=\""
       << num(Y(y)) << "\"/>\n";
  os << "</g>\n<g font-size=\"12\" fill=\"#333333\">\n";
  // Past 10 decades every second one is labelled: their labels ran into each other (review 94).
  const std::size_t x_label_step = x_ticks.size() > 11 ? 2 : 1;
  for (std::size_t i = 0; i < x_ticks.size(); i += x_label_step)
    os << "<text x=\"" << num(X(x_ticks[i])) << "\" y=\"" << num(top + ph + 18) << "\" text-anchor=\"middle\">"
       << intensity_label(x_ticks[i]) << "</text>\n";
  for (double y : y_ticks)
    os << "<text x=\"" << num(left - 8) << "\" y=\"" << num(Y(y) + 4) << "\" text-anchor=\"end\">"
       << xml_escape(format_quantity(y, rate_unit, 1)) << "</text>\n";
  os << "</g>\n"
     << "<rect x=\"" << num(left) << "\" y=\"" << num(top) << "\" width=\"" << num(pw) << "\" height=\"" << num(ph)
     << "\" fill=\"none\" stroke=\"black\"/>\n"
     << "<text x=\"" << num(left + pw / 2) << "\" y=\"" << num(height - 20)
     << "\" text-anchor=\"middle\" font-size=\"14\">Arithmetic intensity ("
     << intensity_axis << ", log scale)</text>\n"
     << "<text x=\"18\" y=\"" << num(top + ph / 2)
     << "\" text-anchor=\"middle\" font-size=\"14\" transform=\"rotate(-90 18 " << num(top + ph / 2)
     << ")\">Attainable performance (" << rate_axis << ", log scale)</text>\n";
  // Roofs: memory diagonals up to the highest compute roof, compute horizontals from the primary ridge.
  std::ostringstream legend;
  int color = 0;
  double ly = top + 10;
  std::size_t legend_chars = 0;  // the longest legend text, for the document's width
  auto legend_entry = [&](const std::string& c, bool dashed, const std::string& text) {
    legend_chars = std::max(legend_chars, text.size());
    legend << "<line x1=\"" << num(left + pw + 15) << "\" y1=\"" << num(ly) << "\" x2=\"" << num(left + pw + 45)
           << "\" y2=\"" << num(ly) << "\" stroke=\"" << c << "\" stroke-width=\"2.5\""
           << (dashed ? " stroke-dasharray=\"6 4\"" : "") << "/>\n<text x=\"" << num(left + pw + 52) << "\" y=\""
           << num(ly + 4) << "\" font-size=\"12\">" << xml_escape(text) << "</text>\n";
    ly += 18;
  };
  const std::optional<double> primary_bw =
      r.memory_roof().measured ? r.memory_roof().measured : r.memory_roof().datasheet;
  // Each measured roof's name on the plot, in its colour: compute roofs at the right edge above their line, memory
  // roofs where they enter the plot; a label is moved off one it would overlap (11 px apart).
  struct OnPlot {
    double x, y;
    std::string text, color;
    bool end;  // anchored at its end (right edge)
  };
  std::vector<OnPlot> labels;
  // The classification's roofs are drawn thicker: what a point is judged against.
  auto width_of = [&](const Roof& roof) { return roof.name == r.compute_level || roof.name == r.memory_level ? 4.0 : 2.0; };
  // Roofs the axes cannot hold (the y axis spans at most 8 decades below the top roof): named under the legend, as
  // points are (review 94: a compute roof 1e8 below the top was drawn under the picture, its legend entry kept).
  std::string off_roofs;
  auto off_roof = [&](const Roof& roof, bool datasheet) {
    off_roofs += (off_roofs.empty() ? "" : ", ") + roof.name + (datasheet ? " (datasheet)" : "");
  };
  os << "<g fill=\"none\">\n";
  for (const Roof& m : r.memory) {
    const std::string c = palette[color++ % kColors];
    for (int ds = 0; ds < 2; ++ds) {
      const auto v = ds ? m.datasheet : m.measured;
      if (!v) continue;
      const double xa = std::max(x0, y0 / *v), xb = std::min(x1, cmax / *v);
      if (xb <= xa) {
        off_roof(m, ds);
        continue;
      }
      os << "<line x1=\"" << num(X(xa)) << "\" y1=\"" << num(Y(xa * *v)) << "\" x2=\"" << num(X(xb)) << "\" y2=\""
         << num(Y(xb * *v)) << "\" stroke=\"" << c << "\" stroke-width=\"" << num(width_of(m)) << "\""
         << (ds ? " stroke-dasharray=\"6 4\"" : "") << "/>\n";
      legend_entry(c, ds, m.name + (ds ? " datasheet " : " measured ") + format_quantity(*v, "B/s"));
      if (!ds) labels.push_back({X(xa) + 4, Y(xa * *v) - 6, m.name, c, false});
    }
  }
  for (const Roof& k : r.compute) {
    const std::string c = palette[color++ % kColors];
    for (int ds = 0; ds < 2; ++ds) {
      const auto v = ds ? k.datasheet : k.measured;
      if (!v) continue;
      // A dashed (datasheet) roof starts at the datasheet ridge, on the datasheet memory roof, where there is one.
      const std::optional<double> bw = ds && r.memory_roof().datasheet ? r.memory_roof().datasheet : primary_bw;
      const double xa = std::max(x0, *v / *bw);
      if (*v < y0 || xa >= x1) {
        off_roof(k, ds);
        continue;
      }
      os << "<line x1=\"" << num(X(xa)) << "\" y1=\"" << num(Y(*v)) << "\" x2=\"" << num(X(x1)) << "\" y2=\""
         << num(Y(*v)) << "\" stroke=\"" << c << "\" stroke-width=\"" << num(width_of(k)) << "\""
         << (ds ? " stroke-dasharray=\"6 4\"" : "") << "/>\n";
      legend_entry(c, ds, k.name + (ds ? " datasheet " : " measured ") + format_quantity(*v, k.unit));
      if (!ds) labels.push_back({left + pw - 4, Y(*v) - 4, k.name, c, true});
    }
  }
  os << "</g>\n";
  // Each group of labels (right edge, left entries) top to bottom, none closer than 11 px to the one above; a run of
  // labels pushed together is then centred on where its roofs are, so that none drifts far below its own (review 95:
  // pushed down only, a label sat 18 px below its roof, on another's).
  for (const bool end : {true, false}) {
    std::vector<OnPlot*> group;
    for (OnPlot& l : labels)
      if (l.end == end) group.push_back(&l);
    std::sort(group.begin(), group.end(), [](const OnPlot* a, const OnPlot* b) { return a->y < b->y; });
    std::vector<double> wanted;
    for (const OnPlot* l : group) wanted.push_back(l->y);
    for (std::size_t i = 1; i < group.size(); ++i) group[i]->y = std::max(group[i]->y, group[i - 1]->y + 11);
    for (std::size_t from = 0; from < group.size();) {
      std::size_t to = from + 1;  // [from, to): labels 11 px apart, pushed together
      while (to < group.size() && group[to]->y - group[to - 1]->y < 11.5) ++to;
      double shift = 0;
      for (std::size_t i = from; i < to; ++i) shift += (group[i]->y - wanted[i]) / static_cast<double>(to - from);
      // Up by the mean drift, but not into the run above.
      if (from > 0) shift = std::min(shift, group[from]->y - group[from - 1]->y - 11);
      for (std::size_t i = from; i < to; ++i) group[i]->y -= shift;
      from = to;
    }
  }
  os << "<g font-size=\"10\">\n";
  for (const OnPlot& l : labels)
    if (l.y > top && l.y < top + ph)  // one pushed off the plot is left to the legend
      os << "<text x=\"" << num(l.x) << "\" y=\"" << num(l.y) << "\"" << (l.end ? " text-anchor=\"end\"" : "")
         << " fill=\"" << l.color << "\">" << xml_escape(l.text) << "</text>\n";
  os << "</g>\n";
  // Each list widens the document as a legend entry does: a long one ran past the picture's right edge.
  auto not_drawn = [&](const std::string& where, const std::string& names) {
    if (names.empty()) return;
    const std::string text = where + ", not drawn: " + names;
    legend_chars = std::max(legend_chars, text.size() - 4);  // it starts 28 px (4 characters) left of an entry's
    legend << "<text x=\"" << num(left + pw + 24) << "\" y=\"" << num(ly + 4) << "\" font-size=\"12\">"
           << xml_escape(text) << "</text>\n";
    ly += 18;
  };
  not_drawn("roofs off the axes", off_roofs);
  if (!points.empty()) {
    os << "<g font-size=\"11\">\n";
    std::string off_scale;  // points the y axis (at most 8 decades below the top roof) cannot hold
    std::string off_axis;   // points outside the x axis's clamp: left out as well, and named as those are
    std::vector<std::array<double, 4>> point_labels;  // x0, x1, y0, y1 of each label placed
    for (const auto& [name, p] : points) {
      const auto& side = p.measured.available ? p.measured : p.datasheet;
      if (!side.available) continue;
      if (!drawable(p.intensity)) {
        off_axis += (off_axis.empty() ? "" : ", ") + name;
        continue;
      }
      if (!std::isfinite(side.attainable) || side.attainable <= 0) continue;
      if (side.attainable < y0) {
        off_scale += (off_scale.empty() ? "" : ", ") + name;
        continue;
      }
      const double x = X(p.intensity), y = Y(side.attainable);
      // The label right of the point, or left of it where it would run past the plot into the legend, and moved
      // off labels placed before it (review 94: "prefill b=32" and "prefill b=128" ran into one string). About
      // 6.2 px a character at 11 px.
      const double w = 6.2 * static_cast<double>(name.size());
      const bool flip = x + 7 + w > left + pw;
      const double lx = flip ? x - 7 - w : x + 7;
      double ly_label = y + 14;
      for (const double dy : {14.0, -8.0, 28.0, -22.0, 42.0, -36.0}) {
        const double cand = y + dy;
        const bool clear = std::none_of(point_labels.begin(), point_labels.end(), [&](const std::array<double, 4>& b) {
          return lx < b[1] && b[0] < lx + w && cand - 10 < b[3] && b[2] < cand + 2;
        });
        if (clear) {
          ly_label = cand;
          break;
        }
      }
      point_labels.push_back({lx, lx + w, ly_label - 10, ly_label + 2});
      os << "<circle cx=\"" << num(x) << "\" cy=\"" << num(y) << "\" r=\"5\" fill=\"black\"/>\n"
         << "<text x=\"" << num(lx) << "\" y=\"" << num(ly_label) << "\">" << xml_escape(name) << "</text>\n";
    }
    os << "</g>\n";
    legend << "<circle cx=\"" << num(left + pw + 30) << "\" cy=\"" << num(ly)
           << "\" r=\"5\" fill=\"black\"/>\n<text x=\"" << num(left + pw + 52) << "\" y=\"" << num(ly + 4)
           << "\" font-size=\"12\">point at its attainable " << r.compute_roof().unit << "</text>\n";
    ly += 18;
    not_drawn("below the axis", off_scale);
    not_drawn("outside the intensity axis (1e-6 to 1e12)", off_axis);
  }
  if (variants > 0) {
    const std::string text = std::to_string(variants) + " more roof(s): --all-roofs";
    legend_chars = std::max(legend_chars, text.size() - 4);
    legend << "<text x=\"" << num(left + pw + 24) << "\" y=\"" << num(ly + 4) << "\" font-size=\"12\">"
           << xml_escape(text) << "</text>\n";
    ly += 18;
  }
  os << "<g>\n<text x=\"" << num(left + pw + 15) << "\" y=\"" << num(top - 6)
     << "\" font-size=\"13\" font-weight=\"bold\">Legend (solid measured, dashed datasheet)</text>\n"
     << legend.str() << "</g>\n</svg>\n";
  // At 12 px a character of Helvetica is at most about 7 px wide (capitals, digits and "/" less).
  // The legend's title too (about 8 px a character, 13 px bold): with short entries it was clipped (review 94).
  const double doc_width = std::max({width, left + pw + 52 + 7.0 * static_cast<double>(legend_chars) + 10,
                                     left + pw + 15 + 8.0 * 41 + 10});
  const double doc_height = std::max(height, ly + 10);
  std::ostringstream doc;
  doc << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(doc_width) << "\" height=\"" << num(doc_height)
      << "\" viewBox=\"0 0 " << num(doc_width) << " " << num(doc_height)
      << "\" font-family=\"Helvetica, Arial, sans-serif\">\n"
      << "<rect x=\"0\" y=\"0\" width=\"" << num(doc_width) << "\" height=\"" << num(doc_height)
      << "\" fill=\"white\"/>\n"
      << os.str();
  return doc.str();
}

}  // namespace ceilings
