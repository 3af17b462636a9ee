// Pure host side of the GEMM ceilings (gemm.<type>): type table, shape rules and candidates, FLOP counting,
// float64 reference and tolerances. See gemm_plan.hpp; bench/gemm.cpp and bench/harness/gemm_lt.cpp do the
// CUDA side.
#include "ceilings/gemm_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <sstream>

#include "ceilings/error.hpp"
#include "ceilings/stats.hpp"

namespace ceilings::gemm {

namespace {

// Tolerance = out * |reference| + acc * sum |a_i b_i|. The first term covers rounding the result to the
// output type (bf16 keeps 8 bits: 1e-2 is ~2.5 half-ulps); the second covers what scales with the dot
// product's magnitude: accumulation order and split-K partials (tiny in fp32), tf32's 10-bit input
// rounding (about 1e-3), Hopper's reduced-precision fp8 fast accumulation (2e-3: the H200's worst element
// used 0.019 of a 1e-2 allowance, 1.9e-4 of sum |a b|, on 2026-11-30; 1e-2 let a kernel that skipped 1/32 of
// the K loop pass nearly always at K = 8192, 2e-3 fails it in about 4 of 10 elements). Keeping the second term
// small matters: with random signs |C| grows like sqrt(K) while sum |a b| grows like K, so a loose
// S-scaled bound would accept a zero output at large K. fp64/fp32 stay tight enough that a silent TF32
// downgrade of fp32 fails at the small K of the GPU tests; int8 with int32 accumulation is exact.
const std::vector<DTypeInfo> kTypes = {
    {DType::kFp64, "fp64", 8, 8, "fp64", "fp64", "CUBLAS_COMPUTE_64F", false, 1, 1e-14, 1e-13},
    {DType::kFp32, "fp32", 4, 4, "fp32", "fp32", "CUBLAS_COMPUTE_32F", false, 1, 1e-6, 2e-6},
    {DType::kTf32, "tf32", 4, 4, "fp32", "fp32", "CUBLAS_COMPUTE_32F_FAST_TF32", false, 1, 1e-3, 1e-3},
    {DType::kBf16, "bf16", 2, 2, "bf16", "bf16", "CUBLAS_COMPUTE_32F", false, 1, 1e-2, 1e-3},
    {DType::kFp16, "fp16", 2, 2, "fp16", "fp16", "CUBLAS_COMPUTE_32F", false, 1, 1e-2, 1e-3},
    // fp8: every dimension and leading dimension 16-byte aligned (cuBLASLt's fp8 requirements).
    {DType::kFp8E4m3, "fp8_e4m3", 1, 2, "A e4m3, B e4m3", "bf16", "CUBLAS_COMPUTE_32F", false, 16, 1e-2, 2e-3},
    // cuBLASLt has no e5m2 x e5m2 kernel: e5m2 is the gradient format, paired with e4m3 weights.
    {DType::kFp8E5m2, "fp8_e5m2", 1, 2, "A e5m2, B e4m3", "bf16", "CUBLAS_COMPUTE_32F", false, 16, 1e-2, 2e-3},
    // IMMA with the regular (column-major) ordering: TN, leading dimensions (here M and K) multiples of 4.
    {DType::kInt8, "int8", 1, 4, "int8", "int32", "CUBLAS_COMPUTE_32I", true, 4, 0.0, 0.0},
};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream is(s);
  while (std::getline(is, cur, sep)) out.push_back(trim(cur));
  if (!s.empty() && s.back() == sep) out.push_back("");
  return out;
}

constexpr std::int64_t kMaxDim = std::int64_t{1} << 20;

std::int64_t parse_dim(const std::string& text, const std::string& whole) {
  if (text.empty() || text.find_first_not_of("+-0123456789") != std::string::npos)
    throw InputError("GEMM shape '" + whole + "': '" + text + "' is not an integer (expected MxNxK, e.g. 8192x8192x8192)");
  long long v = 0;
  try {
    std::size_t used = 0;
    v = std::stoll(text, &used);
    if (used != text.size()) throw std::invalid_argument(text);
  } catch (const std::out_of_range&) {
    throw InputError("GEMM shape '" + whole + "': '" + text + "' is out of range");
  } catch (const std::invalid_argument&) {
    throw InputError("GEMM shape '" + whole + "': '" + text + "' is not an integer");
  }
  if (v <= 0) throw InputError("GEMM shape '" + whole + "': every dimension must be positive, got " + text);
  if (v > kMaxDim)
    throw InputError("GEMM shape '" + whole + "': " + text + " exceeds the largest supported dimension " +
                     std::to_string(kMaxDim));
  return v;
}

std::uint32_t lcg(std::uint32_t& state) {
  state = state * 1664525u + 1013904223u;
  return state >> 8;
}

std::vector<std::int64_t> pick_indices(std::int64_t extent, int count, std::uint32_t seed) {
  std::vector<std::int64_t> idx;
  if (extent <= count) {
    for (std::int64_t i = 0; i < extent; ++i) idx.push_back(i);
    return idx;
  }
  idx.push_back(0);
  if (count > 1) idx.push_back(extent - 1);
  std::uint32_t st = seed;
  while (static_cast<int>(idx.size()) < count) {
    const std::int64_t v = static_cast<std::int64_t>(lcg(st)) % extent;
    if (std::find(idx.begin(), idx.end(), v) == idx.end()) idx.push_back(v);
  }
  std::sort(idx.begin(), idx.end());
  return idx;
}

}  // namespace

const std::vector<DTypeInfo>& all_dtypes() { return kTypes; }

const DTypeInfo& dtype_info(DType type) {
  for (const auto& t : kTypes)
    if (t.type == type) return t;
  throw std::logic_error("unknown GEMM dtype");
}

std::string dtype_names() {
  std::string s;
  for (const auto& t : kTypes) s += (s.empty() ? "" : ", ") + std::string(t.name);
  return s;
}

DType parse_dtype(const std::string& name) {
  const std::string n = trim(name);
  for (const auto& t : kTypes)
    if (n == t.name) return t.type;
  throw InputError("unknown GEMM data type '" + n + "' (valid: " + dtype_names() + ")");
}

std::vector<DType> parse_dtype_list(const std::string& list) {
  std::vector<DType> out;
  for (const std::string& part : split(list, ',')) {
    if (part.empty()) throw InputError("empty entry in the GEMM data type list '" + list + "' (valid: " + dtype_names() + ")");
    const DType t = parse_dtype(part);
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  }
  if (out.empty()) throw InputError("the GEMM data type list is empty (valid: " + dtype_names() + ")");
  return out;
}

std::string to_string(const Shape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

Shape parse_shape(const std::string& text) {
  const std::string t = trim(text);
  const auto parts = split(t, 'x');
  if (parts.size() != 3) throw InputError("GEMM shape '" + t + "' is not of the form MxNxK (e.g. 8192x8192x8192)");
  return {parse_dim(parts[0], t), parse_dim(parts[1], t), parse_dim(parts[2], t)};
}

std::vector<Shape> parse_shape_list(const std::string& list) {
  std::vector<Shape> out;
  for (const std::string& part : split(list, ',')) {
    if (part.empty()) throw InputError("empty entry in the GEMM shape list '" + list + "'");
    out.push_back(parse_shape(part));
  }
  if (out.empty()) throw InputError("the GEMM shape list is empty");
  return out;
}

double gemm_flops(const Shape& s) {
  return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
}

std::size_t input_set_bytes(const Shape& s, const DTypeInfo& t) {
  return static_cast<std::size_t>((s.m + s.n) * s.k) * static_cast<std::size_t>(t.input_bytes);
}

std::size_t output_bytes(const Shape& s, const DTypeInfo& t) {
  return static_cast<std::size_t>(s.m * s.n) * static_cast<std::size_t>(t.output_bytes);
}

std::string shape_problem(const Shape& s, const DTypeInfo& t, std::size_t memory_bytes) {
  if (s.m <= 0 || s.n <= 0 || s.k <= 0) return "every dimension of " + to_string(s) + " must be positive";
  if (t.dim_multiple > 1 && (s.m % t.dim_multiple || s.n % t.dim_multiple || s.k % t.dim_multiple))
    return std::string(t.name) + " GEMMs need M, N and K to be multiples of " + std::to_string(t.dim_multiple) +
           " (cuBLASLt layout rules); " + to_string(s) + " is not";
  const double need = static_cast<double>(input_set_bytes(s, t)) + static_cast<double>(output_bytes(s, t));
  if (need > static_cast<double>(memory_bytes)) {
    std::ostringstream os;
    os.precision(3);
    os << to_string(s) << " " << t.name << " needs " << need / (1 << 30) << " GiB for one input set and the output, "
       << "more than the " << static_cast<double>(memory_bytes) / (1 << 30) << " GiB available";
    return os.str();
  }
  return "";
}

int rotation_sets(const Shape& s, const DTypeInfo& t, std::size_t l2_bytes, std::size_t memory_budget) {
  const std::size_t set = input_set_bytes(s, t), out = output_bytes(s, t);
  if (set == 0 || set + out > memory_budget) return 0;
  const std::size_t want = std::clamp<std::size_t>((3 * l2_bytes + set - 1) / set, 2, 256);
  const std::size_t fit = (memory_budget - out) / set;
  return static_cast<int>(std::max<std::size_t>(1, std::min(want, fit)));
}

double wave_efficiency(const Shape& s, int tile_m, int tile_n, int sm_count) {
  if (tile_m <= 0 || tile_n <= 0 || sm_count <= 0 || s.m <= 0 || s.n <= 0) return 0;
  const std::int64_t tiles = ((s.m + tile_m - 1) / tile_m) * ((s.n + tile_n - 1) / tile_n);
  const std::int64_t waves = (tiles + sm_count - 1) / sm_count;
  return static_cast<double>(tiles) / static_cast<double>(waves * sm_count);
}

namespace {

// K values from lo to hi in `step`, coarse to fine: hi, lo, then the midpoints of the intervals between
// already listed values, breadth first (16384, 8192, 12288, 10240, 14336 for 8192..16384 in 2048s), so the
// first few candidates of a budget-cut search already span the range.
std::vector<std::int64_t> k_ladder(std::int64_t lo, std::int64_t hi, std::int64_t step) {
  std::vector<std::int64_t> grid;
  if (lo <= 0 || hi < lo || step <= 0) return grid;
  for (std::int64_t k = lo; k <= hi; k += step) grid.push_back(k);
  std::vector<std::int64_t> out;
  if (grid.empty()) return out;
  out.push_back(grid.back());
  if (grid.size() > 1) out.push_back(grid.front());
  std::vector<std::pair<std::size_t, std::size_t>> intervals{{0, grid.size() - 1}};
  for (std::size_t q = 0; q < intervals.size(); ++q) {
    const auto [a, b] = intervals[q];
    if (b - a < 2) continue;
    const std::size_t mid = a + (b - a) / 2;
    out.push_back(grid[mid]);
    intervals.push_back({a, mid});
    intervals.push_back({mid, b});
  }
  return out;
}

struct Mn {
  std::int64_t m, n;
  int whole;     // likely tile sizes whose tiles fill whole waves
  int waves;     // fewest waves among those
  double score;  // within a family: lower first
};

bool before(const Mn& x, const Mn& y) {
  if (x.score != y.score) return x.score < y.score;
  return x.m != y.m ? x.m < y.m : x.n < y.n;
}

}  // namespace

std::vector<double> search_dim_scales(DType type) {
  if (type == DType::kFp64 || type == DType::kFp32) return {1.0, 0.5};
  return {1.0};
}

std::vector<Shape> shape_candidates(const ShapeSearchParams& p, const DTypeInfo& type) {
  if (p.dim_scales.size() > 1 || (p.dim_scales.size() == 1 && p.dim_scales[0] != 1.0)) {
    for (double s : p.dim_scales)
      if (!(s > 0) || !std::isfinite(s) || s > 1) throw InputError("shape search: a dim scale must be in (0, 1]");
    auto scaled = [](std::int64_t v, double s) {
      const auto x = static_cast<std::int64_t>(std::ceil(static_cast<double>(v) * s));
      return (x + 127) / 128 * 128;
    };
    std::vector<std::vector<Shape>> lists;
    for (double s : p.dim_scales) {
      ShapeSearchParams q = p;
      q.dim_scales = {1.0};
      q.min_dim = scaled(p.min_dim, s);
      q.square_dim = scaled(p.square_dim, s);
      for (std::int64_t& k : q.k_values) k = scaled(k, s);
      q.long_k_min = scaled(p.long_k_min, s);
      q.long_k_max = scaled(p.long_k_max, s);
      q.long_k_step = scaled(p.long_k_step, s);
      lists.push_back(shape_candidates(q, type));
    }
    // The reference shape first (each list starts with it where it fits), then the lists in turn.
    std::vector<Shape> out;
    const Shape reference{8192, 8192, 8192};
    auto add = [&](const Shape& s) {
      if (out.size() < p.max_candidates && std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
    };
    for (const auto& l : lists)
      if (!l.empty() && l.front() == reference) add(reference);
    for (std::size_t i = 0; out.size() < p.max_candidates; ++i) {
      bool any = false;
      for (const auto& l : lists)
        if (i < l.size()) {
          any = true;
          add(l[i]);
        }
      if (!any) break;
    }
    return out;
  }
  auto fits = [&](const Shape& s) {
    return p.memory_bytes == 0 || input_set_bytes(s, type) + output_bytes(s, type) <= p.memory_bytes;
  };
  auto aligned = [&](std::int64_t v) { return v % 128 == 0 && v % type.dim_multiple == 0; };
  auto k_ok = [&](std::int64_t k) { return k > 0 && k % type.dim_multiple == 0; };
  std::vector<Shape> out;
  auto add = [&](const Shape& s) {
    if (out.size() >= p.max_candidates || !k_ok(s.k) || !fits(s)) return;
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  };
  add({8192, 8192, 8192});
  if (p.sm_count <= 0) return out;

  // How an output fills the SMs: for how many of the likely tiles in whole waves, and the fewest waves.
  auto waves_of = [&](std::int64_t m, std::int64_t n) {
    Mn r{m, n, 0, 0, 0};
    for (const Tile& t : p.tiles) {
      if (t.m <= 0 || t.n <= 0 || wave_efficiency({m, n, 1}, t.m, t.n, p.sm_count) != 1.0) continue;
      const std::int64_t tiles = ((m + t.m - 1) / t.m) * ((n + t.n - 1) / t.n);
      const int w = static_cast<int>(tiles / p.sm_count);
      r.waves = r.whole == 0 ? w : std::min(r.waves, w);
      ++r.whole;
    }
    return r;
  };
  auto aspect = [](std::int64_t m, std::int64_t n) {
    return std::fabs(std::log2(static_cast<double>(m) / static_cast<double>(n)));
  };

  // Near-square outputs in whole waves, near square_dim^2 in area (enough work per launch, still fits).
  std::vector<Mn> square;
  const double target = std::log2(static_cast<double>(p.square_dim) * static_cast<double>(p.square_dim));
  for (const Tile& t : p.tiles) {
    if (t.m <= 0 || t.n <= 0) continue;
    for (std::int64_t a = (p.min_dim + t.m - 1) / t.m; a * t.m <= p.max_dim; ++a)
      for (std::int64_t b = (p.min_dim + t.n - 1) / t.n; b * t.n <= p.max_dim; ++b) {
        if ((a * b) % p.sm_count != 0) continue;  // whole waves only
        const std::int64_t m = a * t.m, n = b * t.n;
        if (!aligned(m) || !aligned(n)) continue;
        const double area = std::fabs(std::log2(static_cast<double>(m) * static_cast<double>(n)) - target);
        square.push_back({m, n, 0, 0, area + 0.5 * aspect(m, n)});
      }
  }
  std::sort(square.begin(), square.end(), before);

  // Long-K outputs: the fewest whole waves an output of at least min_dim x min_dim can fill for a tile (and
  // up to long_k_waves - 1 more).
  std::vector<Mn> longk;
  for (const Tile& t : p.tiles) {
    if (t.m <= 0 || t.n <= 0) continue;
    const std::int64_t a0 = (p.min_dim + t.m - 1) / t.m, b0 = (p.min_dim + t.n - 1) / t.n;
    const std::int64_t w0 = std::max<std::int64_t>(1, (a0 * b0 + p.sm_count - 1) / p.sm_count);
    for (std::int64_t w = w0; w < w0 + std::max(1, p.long_k_waves); ++w) {
      const std::int64_t tiles = w * p.sm_count;
      for (std::int64_t a = a0; a * t.m <= p.max_dim; ++a) {
        if (tiles % a != 0) continue;
        const std::int64_t m = a * t.m, n = (tiles / a) * t.n;
        if (n < p.min_dim || n > p.max_dim || !aligned(m) || !aligned(n)) continue;
        Mn mn = waves_of(m, n);
        mn.score = -10.0 * mn.whole + aspect(m, n);
        longk.push_back(mn);
      }
    }
  }
  std::sort(longk.begin(), longk.end(), before);
  longk.erase(std::unique(longk.begin(), longk.end(), [](const Mn& x, const Mn& y) { return x.m == y.m && x.n == y.n; }),
              longk.end());
  {
    // Within each wave count: whole waves for more of the tiles first, then squarer. Across wave counts:
    // in turn (the first of one wave, the first of two, the second of one, ...).
    std::map<int, int> seen;
    for (Mn& mn : longk) mn.score = 1000.0 * seen[mn.waves]++ + mn.waves;
    std::stable_sort(longk.begin(), longk.end(), [](const Mn& x, const Mn& y) { return x.score < y.score; });
  }
  const std::int64_t step = (std::max<std::int64_t>(1, p.long_k_step) + type.dim_multiple - 1) / type.dim_multiple *
                            type.dim_multiple;
  const std::vector<std::int64_t> ks = k_ladder(p.long_k_min, p.long_k_max, step);
  // (output, K) pairs by the sum of their ranks, so early candidates vary both.
  std::vector<Shape> longk_shapes;
  for (std::size_t d = 0; !longk.empty() && !ks.empty() && d < longk.size() + ks.size() - 1; ++d)
    for (std::size_t i = 0; i <= d && i < longk.size(); ++i)
      if (d - i < ks.size()) longk_shapes.push_back({longk[i].m, longk[i].n, ks[d - i]});

  std::vector<Shape> square_shapes;
  for (const Mn& mn : square)
    for (std::int64_t k : p.k_values) square_shapes.push_back({mn.m, mn.n, k});

  // Alternate the two kinds (a long-K shape costs a fraction of a near-square one).
  for (std::size_t i = 0; out.size() < p.max_candidates && (i < longk_shapes.size() || i < square_shapes.size()); ++i) {
    if (i < longk_shapes.size()) add(longk_shapes[i]);
    if (i < square_shapes.size()) add(square_shapes[i]);
  }
  return out;
}

int screening_algos(int algos) { return std::max(1, std::min(algos, std::max(2, algos / 4))); }

std::vector<std::size_t> finalists(const std::vector<double>& rates, std::size_t count) {
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < rates.size(); ++i)
    if (std::isfinite(rates[i]) && rates[i] > 0) idx.push_back(i);
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return rates[a] > rates[b]; });
  if (idx.size() > count) idx.resize(count);
  return idx;
}

std::vector<std::size_t> rerank_order(std::size_t count, std::size_t round) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < count; ++i) order.push_back((round + i) % count);
  return order;
}

std::size_t rerank_rounds(std::size_t count, std::size_t least) {
  if (count == 0) return 0;
  return count * ((std::max<std::size_t>(least, 1) + count - 1) / count);
}

std::size_t rerank_winner(const std::vector<std::vector<double>>& seconds, const std::vector<double>& flops) {
  if (seconds.size() != flops.size())
    throw InputError("rerank: " + std::to_string(seconds.size()) + " timings for " + std::to_string(flops.size()) +
                     " FLOP counts");
  std::size_t best = seconds.size();
  double best_rate = 0;
  for (std::size_t i = 0; i < seconds.size(); ++i) {
    if (!(flops[i] > 0) || !std::isfinite(flops[i])) throw InputError("rerank: a contender's FLOP count is not positive");
    std::vector<double> ok;
    for (double t : seconds[i])
      if (std::isfinite(t) && t > 0) ok.push_back(t);
    // A contender with a failed timing is not ranked on the rest: a configuration that fails is not a ceiling.
    if (ok.empty() || ok.size() != seconds[i].size()) continue;
    const double rate = flops[i] / median(ok);
    if (best == seconds.size() || rate > best_rate) {
      best = i;
      best_rate = rate;
    }
  }
  return best;
}

std::vector<DType> measurement_order(std::vector<DType> types) {
  static const DType kOrder[] = {DType::kBf16, DType::kFp8E4m3, DType::kInt8, DType::kFp16,
                                 DType::kTf32, DType::kFp64,    DType::kFp32, DType::kFp8E5m2};
  auto rank = [](DType t) {
    return static_cast<int>(std::find(std::begin(kOrder), std::end(kOrder), t) - std::begin(kOrder));
  };
  std::stable_sort(types.begin(), types.end(), [&](DType a, DType b) { return rank(a) < rank(b); });
  return types;
}

int gemm_ceiling_rank(const std::string& name) {
  static const std::string kPrefix = "gemm.";
  static const char* const kVariants[] = {"", "_ref8192", "_sustained"};
  if (name.compare(0, kPrefix.size(), kPrefix) != 0) return -1;
  const std::string rest = name.substr(kPrefix.size());
  for (std::size_t t = 0; t < kTypes.size(); ++t)
    for (int v = 0; v < 3; ++v)
      if (rest == std::string(kTypes[t].name) + kVariants[v]) return static_cast<int>(t) * 3 + v;
  return -1;
}

bool search_should_try(double elapsed_s, double budget_s, double seconds_per_flop, double flops, int tried) {
  if (tried == 0) return true;
  if (!(elapsed_s < budget_s)) return false;
  return !(seconds_per_flop > 0 && elapsed_s + seconds_per_flop * flops > budget_s);
}

RefElement reference_dot(const double* a_row, const double* b_col, std::int64_t k) {
  RefElement r;
  for (std::int64_t l = 0; l < k; ++l) {
    const double p = a_row[l] * b_col[l];
    r.value += p;
    r.magnitude += std::fabs(p);
  }
  return r;
}

std::vector<double> reference_gemm(const Shape& s, const std::vector<double>& a_rows,
                                   const std::vector<double>& b_cols) {
  if (a_rows.size() != static_cast<std::size_t>(s.m * s.k) || b_cols.size() != static_cast<std::size_t>(s.n * s.k))
    throw InputError("reference_gemm: operand sizes do not match " + to_string(s));
  std::vector<double> c(static_cast<std::size_t>(s.m * s.n));
  for (std::int64_t j = 0; j < s.n; ++j)
    for (std::int64_t i = 0; i < s.m; ++i)
      c[static_cast<std::size_t>(i + j * s.m)] = reference_dot(&a_rows[i * s.k], &b_cols[j * s.k], s.k).value;
  return c;
}

double tolerance(const DTypeInfo& t, double want, double magnitude, double scale) {
  return t.out_tolerance * std::fabs(want * scale) + t.acc_tolerance * std::fabs(magnitude * scale);
}

bool within_tolerance(const DTypeInfo& t, double got, const RefElement& want, double scale) {
  if (!std::isfinite(got)) return false;
  return std::fabs(got - want.value * scale) <= tolerance(t, want.value, want.magnitude, scale);
}

std::vector<Sample> sample_elements(const Shape& s, int rows, int cols, std::uint32_t seed) {
  std::vector<Sample> out;
  if (s.m <= 0 || s.n <= 0 || rows <= 0 || cols <= 0) return out;
  const auto r = pick_indices(s.m, rows, seed ^ 0x5bd1e995u);
  const auto c = pick_indices(s.n, cols, seed ^ 0x27d4eb2fu);
  for (std::int64_t j : c)
    for (std::int64_t i : r) out.push_back({i, j});
  return out;
}

double half_to_double(std::uint16_t bits) {
  const int sign = bits >> 15, exp = (bits >> 10) & 0x1f, mant = bits & 0x3ff;
  double v;
  if (exp == 0)
    v = std::ldexp(mant, -24);
  else if (exp == 31)
    v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else
    v = std::ldexp(1024 + mant, exp - 25);
  return sign ? -v : v;
}

double bf16_to_double(std::uint16_t bits) {
  const std::uint32_t w = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &w, sizeof f);
  return f;
}

double fp8_e4m3_to_double(std::uint8_t bits) {
  const int sign = bits >> 7, exp = (bits >> 3) & 0xf, mant = bits & 0x7;
  double v;
  if (exp == 15 && mant == 7)
    v = std::numeric_limits<double>::quiet_NaN();  // E4M3 (OCP "fn") has no infinities
  else if (exp == 0)
    v = std::ldexp(mant, -9);
  else
    v = std::ldexp(8 + mant, exp - 10);
  return sign ? -v : v;
}

double fp8_e5m2_to_double(std::uint8_t bits) {
  const int sign = bits >> 7, exp = (bits >> 2) & 0x1f, mant = bits & 0x3;
  double v;
  if (exp == 0)
    v = std::ldexp(mant, -16);
  else if (exp == 31)
    v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else
    v = std::ldexp(4 + mant, exp - 17);
  return sign ? -v : v;
}

}  // namespace ceilings::gemm
