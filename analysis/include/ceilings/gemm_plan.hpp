// Pure host side of the GEMM ceilings (gemm.<type>, gemm.<type>_ref8192, gemm.<type>_sustained): data-type
// table and name parsing, shape parsing and checks, wave-quantized shape candidates, FLOP counting, the
// float64 reference GEMM and the per-type tolerance rules, plus bit-exact decoders of the narrow types.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ceilings::gemm {

enum class DType { kFp64, kFp32, kTf32, kBf16, kFp16, kFp8E4m3, kFp8E5m2, kInt8 };

struct DTypeInfo {
  DType type;
  const char* name;          // flag and ceiling spelling: gemm.<name>
  int input_bytes;           // bytes per A/B element
  int output_bytes;          // bytes per C/D element
  const char* inputs;        // what A and B hold, in words
  const char* output;        // what D holds
  const char* compute;       // the cuBLASLt compute type, recorded in the detail
  bool integer;              // counts integer ops (op_per_second), not FLOPs
  int dim_multiple;          // m, n and k must be multiples of this (cuBLASLt layout rules)
  double out_tolerance;      // allowed error as a fraction of |reference| (rounding of the output)
  double acc_tolerance;      // plus this fraction of sum |a_i b_i| (input rounding, accumulation); 0, 0: exact
};

// Every type, in table order (how profiles list them; measurement_order() is the order they run in).
const std::vector<DTypeInfo>& all_dtypes();
const DTypeInfo& dtype_info(DType type);
// "bf16" -> DType; an unknown name throws InputError naming the valid ones.
DType parse_dtype(const std::string& name);
// "bf16,fp8_e4m3" -> types (duplicates removed, order kept); empty or unknown entries throw InputError.
std::vector<DType> parse_dtype_list(const std::string& list);
std::string dtype_names();  // "fp64, fp32, ..." for messages

struct Shape {
  std::int64_t m = 0, n = 0, k = 0;
  bool operator==(const Shape& o) const { return m == o.m && n == o.n && k == o.k; }
  bool operator!=(const Shape& o) const { return !(*this == o); }
};
std::string to_string(const Shape& s);  // "8192x8192x8192"

// "MxNxK" (also "M,N,K" is not accepted: the list separator is ','); zero, negative, malformed or
// absurdly large (> 2^20 per dimension) throws InputError.
Shape parse_shape(const std::string& text);
// "MxNxK,MxNxK" -> shapes.
std::vector<Shape> parse_shape_list(const std::string& list);

// 2*M*N*K (one multiply and one add per inner-product term).
double gemm_flops(const Shape& s);

// Bytes of one A+B input set and of the output.
std::size_t input_set_bytes(const Shape& s, const DTypeInfo& t);
std::size_t output_bytes(const Shape& s, const DTypeInfo& t);

// Why this shape cannot run for this type ("" when it can): dimension multiples the layout requires,
// and whether one input set plus the output fits in `memory_bytes`.
std::string shape_problem(const Shape& s, const DTypeInfo& t, std::size_t memory_bytes);

// How many A/B input sets to rotate through so that the sets together exceed `l2_bytes` several times
// over (at least 2 sets when they fit, at most 256: enough for a 1 MiB set to exceed a 50 MiB L2 three
// times, so a small user shape's inputs are not served from the L2), within `memory_budget` bytes (which
// must also hold the output). Returns 0 when not even one set and the output fit.
int rotation_sets(const Shape& s, const DTypeInfo& t, std::size_t l2_bytes, std::size_t memory_budget);

// Fraction of the SMs busy across the waves of output tiles: tiles / (waves * sm_count).
double wave_efficiency(const Shape& s, int tile_m, int tile_n, int sm_count);

struct Tile {
  int m, n;
};
struct ShapeSearchParams {
  int sm_count = 132;
  std::vector<Tile> tiles{{128, 128}, {128, 256}, {256, 128}};
  std::int64_t min_dim = 1024, max_dim = 16384;
  // Near-square shapes near square_dim^2 in output area, each with these K values.
  std::int64_t square_dim = 8192;
  std::vector<std::int64_t> k_values{8192, 4096, 16384};
  // Long-K shapes: an output of the fewest whole waves a shape of at least min_dim can fill (and up to
  // long_k_waves - 1 more), with K from long_k_min to long_k_max in steps of long_k_step (rounded up to the
  // type's dim_multiple). Few output tiles and a long K keep every SM in its main loop and amortize the
  // prologue and epilogue: where mamf-style searches find their best FLOP/s.
  int long_k_waves = 2;
  std::int64_t long_k_min = 8192, long_k_max = 16384, long_k_step = 2048;
  std::size_t memory_bytes = 0;  // 0: no limit; else one input set + output must fit
  std::size_t max_candidates = 48;
  // The shape families above are generated once per scale, every length in them (min_dim, square_dim, the K
  // values and the long-K range; not max_dim) times the scale, rounded up to a multiple of 128, and the
  // families' lists interleaved (the first scale's first). {1}: the shapes above only. See search_dim_scales.
  std::vector<double> dim_scales{1.0};
};
// The scales a type's shape search covers. {1, 0.5} for fp64 and fp32, whose GEMMs run at about 1/15 of bf16's
// rate on tensor-core GPUs: an 8192-class shape lasts 10-20 ms a GEMM, so a burst of them (warm-up and five
// samples of two GEMMs) lasts 0.1-0.2 s, long enough for a 700 W power cap to pull the clock down (fp64 on the
// H200, 2026-11-30: 1.74 GHz and sw_power_cap within its burst, while the tensor-core types' bursts of 1-3 ms
// GEMMs held 1.98 GHz). At half the lengths a near-square shape is an eighth to a quarter of the work; a
// long-K one (its output set by the SM count and the tile) halves K: shorter bursts. {1} for the rest.
std::vector<double> search_dim_scales(DType type);
// Shapes worth measuring, best guesses first: 8192^3 (the reference) first, then, alternating, long-K shapes
// (output tiles fill one or two whole waves, K 8192..16384) and near-square shapes near 8192^2 in area (with
// K 8192, 4096, 16384); with more than one of `dim_scales`, those families at each scale, in turn. Both kinds fill the SMs in whole waves for at least one of the likely tile sizes;
// shapes that do so for more of them come first. Every dimension is a multiple of `type.dim_multiple` (and
// M, N of 128); no duplicates; every shape fits `memory_bytes`; deterministic.
std::vector<Shape> shape_candidates(const ShapeSearchParams& p, const DTypeInfo& type);

// The search screens every shape with a few heuristic algorithms, then re-times its best few shapes with all
// of them: how many to screen with, out of `algos` (max(2, algos / 4), never more than `algos`).
int screening_algos(int algos);
// The shapes the search re-times with every algorithm: the indices of the `count` highest finite positive
// `rates`, highest first (ties: the earlier index first).
std::vector<std::size_t> finalists(const std::vector<double>& rates, std::size_t count);

// The search's fastest few verified configurations are timed again side by side before gemm.<type> measures
// one: its timings ran at whatever clock the power cap left, the first shapes cooler than the last, so its
// ranking favours the order it ran in. Round `round` (0, 1, ...) times the `count` contenders starting
// from contender round % count and wrapping, so each takes every slot in turn.
std::vector<std::size_t> rerank_order(std::size_t count, std::size_t round);
// How many rounds time `count` contenders at least `least` times each with every contender in every slot equally
// often: the least multiple of count that is at least `least` (3 for 3, 4 for 2, 6 for 6; 0 for none).
std::size_t rerank_rounds(std::size_t count, std::size_t least);
// The contender with the highest rate: flops[i] (one GEMM's) over the median of seconds[i] (its seconds per
// GEMM; contenders are different shapes). Ties, and contenders with a timing that is not finite and
// positive, lose to the earlier index (the search's ranking); the contender count when none has one.
// InputError when the two lists differ in length or a FLOP count is not positive.
std::size_t rerank_winner(const std::vector<std::vector<double>>& seconds, const std::vector<double>& flops);

// The order ceilings-bench measures the types in, most wanted first (a run cut short keeps these):
// bf16, fp8_e4m3, int8, fp16, tf32, fp64, fp32, fp8_e5m2. `types` reordered so; unknown order kept otherwise.
std::vector<DType> measurement_order(std::vector<DType> types);

// Where a GEMM ceiling name ("gemm.bf16", "gemm.int8_sustained") sorts among the GEMM ceilings: by the type
// table (all_dtypes()), then plain, _ref8192, _sustained. -1 for a name that is not a GEMM ceiling. Lets the
// profile list GEMM ceilings in one order whatever order they were measured in.
int gemm_ceiling_rank(const std::string& name);

// The time-budgeted search: whether a candidate of `flops` should still be tried after `elapsed_s` of a
// `budget_s` budget, given the seconds per FLOP the candidates so far took (setup and algorithm timing
// together; 0 when none has been measured). The first candidate always runs; a later one is skipped when
// it would end past the budget, so the search overshoots by at most its first candidate, not by its largest.
bool search_should_try(double elapsed_s, double budget_s, double seconds_per_flop, double flops, int tried);

// One element of the float64 reference: C(i,j) = sum_l A(i,l) B(l,j), and sum_l |A(i,l) B(l,j)|.
struct RefElement {
  double value = 0, magnitude = 0;
};
// a_row: K values of row i of op(A); b_col: K values of column j of op(B).
RefElement reference_dot(const double* a_row, const double* b_col, std::int64_t k);
// Whole reference GEMM: A row-major M x K (each row contiguous, as the "T" operand is stored), B
// column-major K x N (each column contiguous), C column-major M x N. For tests and small checks.
std::vector<double> reference_gemm(const Shape& s, const std::vector<double>& a_rows,
                                   const std::vector<double>& b_cols);

// Largest allowed |got - want * scale| for one element of this type: out_tolerance * |want * scale| +
// acc_tolerance * magnitude * |scale|, where magnitude is sum |a_i b_i|.
double tolerance(const DTypeInfo& t, double want, double magnitude, double scale = 1.0);
bool within_tolerance(const DTypeInfo& t, double got, const RefElement& want, double scale = 1.0);

// Sampled elements to verify: `count` (row, col) pairs spread over the output, corners included,
// deterministic for a seed. Rows and columns come from small sets (so few rows/columns are copied back).
struct Sample {
  std::int64_t row, col;
};
std::vector<Sample> sample_elements(const Shape& s, int rows, int cols, std::uint32_t seed);

// Bit-exact decoders of the stored narrow types (IEEE half, bfloat16, OCP fp8 E4M3 and E5M2).
double half_to_double(std::uint16_t bits);
double bf16_to_double(std::uint16_t bits);
double fp8_e4m3_to_double(std::uint8_t bits);
double fp8_e5m2_to_double(std::uint8_t bits);

}  // namespace ceilings::gemm
