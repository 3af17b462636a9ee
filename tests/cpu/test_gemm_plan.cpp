// Tests of the GEMM ceilings' host side (analysis/gemm_plan): type parsing, shapes, wave-quantized
// candidates, FLOP counting, float64 reference, tolerances, narrow-type decoders, ceilings-bench flags.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "ceilings/error.hpp"
#include "ceilings/gemm_plan.hpp"
#include "cli_runner.hpp"

namespace ceilings::gemm {
namespace {

TEST(GemmPlan, ParsesEveryTypeNameAndRejectsUnknownOnes) {
  EXPECT_EQ(parse_dtype("bf16"), DType::kBf16);
  EXPECT_EQ(parse_dtype(" fp8_e4m3 "), DType::kFp8E4m3);
  EXPECT_EQ(parse_dtype("int8"), DType::kInt8);
  EXPECT_EQ(all_dtypes().size(), 8u);
  for (const auto& t : all_dtypes()) EXPECT_EQ(parse_dtype(t.name), t.type);
  try {
    parse_dtype("bfloat16");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bfloat16"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("fp8_e4m3"), std::string::npos) << "lists the valid names";
    EXPECT_EQ(e.exit_code(), kExitBadInput);
  }
  EXPECT_THROW(parse_dtype("FP16"), InputError);
}

TEST(GemmPlan, ParsesTypeListsKeepingOrderAndDroppingDuplicates) {
  const auto types = parse_dtype_list("fp8_e4m3,bf16,fp8_e4m3");
  ASSERT_EQ(types.size(), 2u);
  EXPECT_EQ(types[0], DType::kFp8E4m3);
  EXPECT_EQ(types[1], DType::kBf16);
  EXPECT_THROW(parse_dtype_list(""), InputError);
  EXPECT_THROW(parse_dtype_list("bf16,,fp16"), InputError);
  EXPECT_THROW(parse_dtype_list("bf16,"), InputError);
  EXPECT_THROW(parse_dtype_list("bf16,fp12"), InputError);
}

TEST(GemmPlan, ParsesShapesAndRejectsImpossibleOnes) {
  EXPECT_EQ(parse_shape("8192x4096x1024"), (Shape{8192, 4096, 1024}));
  EXPECT_EQ(to_string(Shape{1, 2, 3}), "1x2x3");
  const auto list = parse_shape_list("128x256x64,8192x8192x8192");
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[1], (Shape{8192, 8192, 8192}));
  for (const char* bad : {"0x8192x8192", "8192x-1x8192", "8192x8192", "8192x8192x8192x1", "axbxc", "8192x8192x",
                          "2000000x8x8", "99999999999999999999x1x1", "8.5x8x8", ""})
    EXPECT_THROW(parse_shape(bad), InputError) << bad;
  try {
    parse_shape("8192x0x8192");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("positive"), std::string::npos) << e.what();
  }
}

TEST(GemmPlan, CountsTwoFlopsPerMultiplyAdd) {
  EXPECT_DOUBLE_EQ(gemm_flops({8192, 8192, 8192}), 2.0 * 8192.0 * 8192.0 * 8192.0);
  EXPECT_DOUBLE_EQ(gemm_flops({3, 5, 7}), 210.0);
  EXPECT_DOUBLE_EQ(gemm_flops({16384, 16384, 16384}), 8796093022208.0);
}

TEST(GemmPlan, ShapeProblemsNameTheRule) {
  const auto& fp8 = dtype_info(DType::kFp8E4m3);
  const auto& bf16 = dtype_info(DType::kBf16);
  EXPECT_EQ(shape_problem({8192, 8192, 8192}, fp8, std::size_t{80} << 30), "");
  EXPECT_NE(shape_problem({8192, 8192, 8200}, fp8, std::size_t{80} << 30).find("multiples of 16"), std::string::npos);
  EXPECT_EQ(shape_problem({100, 36, 20}, bf16, std::size_t{1} << 30), "") << "bf16 allows any size";
  // 3 x 2^16 square bf16: inputs 2*(65536^2)*2 B = 16 GiB, output 8 GiB.
  const std::string too_big = shape_problem({65536, 65536, 65536}, bf16, std::size_t{16} << 30);
  EXPECT_NE(too_big.find("needs 24 GiB"), std::string::npos) << too_big;
  EXPECT_EQ(shape_problem({65536, 65536, 65536}, bf16, std::size_t{24} << 30), "");
}

TEST(GemmPlan, RotationSetsExceedTheL2) {
  const auto& bf16 = dtype_info(DType::kBf16);
  const std::size_t l2 = std::size_t{60} << 20;
  // 8192^3 bf16: one set is 256 MiB (> 3x L2): two sets, the minimum that still rotates.
  EXPECT_EQ(rotation_sets({8192, 8192, 8192}, bf16, l2, std::size_t{100} << 30), 2);
  // 1024^3 bf16: one set is 4 MiB, 45 sets for 3x L2 (16, the old cap, fit in 1.3x the L2 and read high).
  EXPECT_EQ(rotation_sets({1024, 1024, 1024}, bf16, l2, std::size_t{100} << 30), 45);
  // 256^3 bf16: 256 KiB a set, capped at 256 sets, 64 MiB: still more than the L2.
  EXPECT_EQ(rotation_sets({256, 256, 256}, bf16, l2, std::size_t{100} << 30), 256);
  // 2048x2048x4096: 32 MiB per set -> ceil(180/32) = 6 sets.
  EXPECT_EQ(rotation_sets({2048, 2048, 4096}, bf16, l2, std::size_t{100} << 30), 6);
  // Memory for the output and one set only: one set; not even that: 0.
  EXPECT_EQ(rotation_sets({8192, 8192, 8192}, bf16, l2, (std::size_t{256} + 128) << 20), 1);
  EXPECT_EQ(rotation_sets({8192, 8192, 8192}, bf16, l2, std::size_t{300} << 20), 0);
}

TEST(GemmPlan, WaveEfficiencyCountsPartialWaves) {
  // 8448/128 * 8192/128 = 66*64 = 4224 = 32 waves of 132: whole waves.
  EXPECT_DOUBLE_EQ(wave_efficiency({8448, 8192, 1}, 128, 128, 132), 1.0);
  // 8192^2 in 128x128 tiles: 4096 tiles -> 32 waves (the last holds 4 tiles): 4096/4224.
  EXPECT_DOUBLE_EQ(wave_efficiency({8192, 8192, 1}, 128, 128, 132), 4096.0 / 4224.0);
  // 133 tiles on 132 SMs: two waves, the second almost empty.
  EXPECT_DOUBLE_EQ(wave_efficiency({133 * 128, 128, 1}, 128, 128, 132), 133.0 / 264.0);
  // Ragged edges count as whole tiles.
  EXPECT_DOUBLE_EQ(wave_efficiency({129, 1, 1}, 128, 128, 2), 1.0);
  EXPECT_EQ(wave_efficiency({128, 128, 1}, 0, 128, 132), 0.0);
}

TEST(GemmPlan, ShapeCandidatesFillWholeWaves) {
  ShapeSearchParams p;
  p.sm_count = 132;
  p.memory_bytes = std::size_t{40} << 30;
  const auto& fp8 = dtype_info(DType::kFp8E4m3);
  const auto shapes = shape_candidates(p, fp8);
  ASSERT_EQ(shapes.size(), p.max_candidates);
  EXPECT_EQ(shapes[0], (Shape{8192, 8192, 8192})) << "the reference shape comes first";
  std::set<std::string> seen;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const Shape& s = shapes[i];
    EXPECT_TRUE(seen.insert(to_string(s)).second) << "duplicate " << to_string(s);
    EXPECT_EQ(shape_problem(s, fp8, p.memory_bytes), "");
    EXPECT_GE(s.m, p.min_dim);
    EXPECT_LE(s.n, p.max_dim);
    if (i == 0) continue;
    bool whole = false;
    for (const Tile& t : p.tiles) whole = whole || wave_efficiency(s, t.m, t.n, p.sm_count) == 1.0;
    EXPECT_TRUE(whole) << to_string(s) << " leaves a partial wave for every tile size";
  }
  // Deterministic, and a different SM count changes the shapes.
  EXPECT_EQ(shape_candidates(p, fp8), shapes);
  p.sm_count = 108;
  EXPECT_NE(shape_candidates(p, fp8), shapes);
}

TEST(GemmPlan, ShapeCandidatesIncludeOneWaveLongKShapes) {
  // mamf-style winners on 132-SM Hoppers are small outputs with a long K (2048x2048x13312 bf16,
  // 1280x4096x12032 fp8): the search must reach such shapes, early enough for a budget-cut search.
  ShapeSearchParams p;
  p.sm_count = 132;
  p.memory_bytes = std::size_t{100} << 30;
  for (DType type : {DType::kBf16, DType::kFp8E4m3, DType::kInt8, DType::kFp64}) {
    const DTypeInfo& t = dtype_info(type);
    SCOPED_TRACE(t.name);
    const auto shapes = shape_candidates(p, t);
    ASSERT_GE(shapes.size(), 8u);
    int long_k = 0, long_k_early = 0, near_square_early = 0;
    std::set<std::int64_t> long_ks;
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      const Shape& s = shapes[i];
      EXPECT_EQ(s.k % t.dim_multiple, 0) << to_string(s);
      if (std::min(s.m, s.n) <= 2048 && s.k >= 8192) {
        ++long_k;
        long_ks.insert(s.k);
        if (i < 8) ++long_k_early;
        // Its output tiles fill one or two whole waves of 132 SMs for a likely tile.
        bool few_waves = false;
        for (const Tile& tile : p.tiles) {
          const std::int64_t tiles = (s.m / tile.m) * (s.n / tile.n);
          few_waves = few_waves || (s.m % tile.m == 0 && s.n % tile.n == 0 && tiles % 132 == 0 && tiles <= 2 * 132);
        }
        EXPECT_TRUE(few_waves) << to_string(s);
      }
      if (i < 8 && i > 0 && s.m * s.n >= std::int64_t{7000} * 7000) ++near_square_early;
    }
    EXPECT_GE(long_k, 8) << "small outputs with K >= 8192";
    EXPECT_GE(long_k_early, 2) << "among the first 8 candidates";
    EXPECT_GE(near_square_early, 2) << "the near-8192^2 shapes are still tried early";
    EXPECT_GE(long_ks.size(), 4u) << "K varies beyond the three near-square values";
    EXPECT_TRUE(long_ks.count(16384) && long_ks.count(8192)) << "K spans 8192..16384";
  }
  // One wave of 128x256 tiles on 132 SMs: 12 x 11 tiles = 1536 x 2816.
  const auto bf16 = shape_candidates(p, dtype_info(DType::kBf16));
  EXPECT_NE(std::find(bf16.begin(), bf16.end(), Shape{1536, 2816, 16384}), bf16.end());
  // Another SM count gets its own whole waves: 108 SMs (A100) one wave of 128x128 tiles is 12 x 9.
  p.sm_count = 108;
  bool found = false;
  for (const Shape& s : shape_candidates(p, dtype_info(DType::kBf16)))
    found = found || (std::min(s.m, s.n) <= 2048 && s.k >= 8192 && wave_efficiency(s, 128, 128, 108) == 1.0 &&
                      (s.m / 128) * (s.n / 128) <= 2 * 108);
  EXPECT_TRUE(found);
  // A small GPU (16 SMs) whose fewest whole waves at 1024 x 1024 are 4 still gets long-K shapes.
  p.sm_count = 16;
  found = false;
  for (const Shape& s : shape_candidates(p, dtype_info(DType::kBf16)))
    found = found || (std::min(s.m, s.n) <= 2048 && s.k >= 8192);
  EXPECT_TRUE(found);
}

TEST(GemmPlan, LongKStepsRespectTheTypesMultiple) {
  // A step that is no multiple of 16 is rounded up for fp8: K stays a multiple of 16, still within range.
  ShapeSearchParams p;
  p.long_k_min = 8192;
  p.long_k_max = 8192 + 3 * 1000;
  p.long_k_step = 1000;
  p.k_values = {};
  const auto& fp8 = dtype_info(DType::kFp8E4m3);
  std::set<std::int64_t> ks;
  for (const Shape& s : shape_candidates(p, fp8)) {
    EXPECT_EQ(s.k % 16, 0) << to_string(s);
    if (s != Shape{8192, 8192, 8192}) ks.insert(s.k);
  }
  EXPECT_EQ(ks, (std::set<std::int64_t>{8192, 9200, 10208})) << "steps of 1008";
}

TEST(GemmPlan, ScreeningUsesAFewAlgorithmsAndKeepsTheBestShapes) {
  EXPECT_EQ(screening_algos(16), 4);
  EXPECT_EQ(screening_algos(4), 2);
  EXPECT_EQ(screening_algos(2), 2);
  EXPECT_EQ(screening_algos(1), 1) << "never more than asked for";
  EXPECT_EQ(screening_algos(64), 16);
  const std::vector<double> rates{5.0, 0.0, 9.0, std::nan(""), 7.0, 9.0, 1.0};
  EXPECT_EQ(finalists(rates, 3), (std::vector<std::size_t>{2, 5, 4}));
  EXPECT_EQ(finalists(rates, 10), (std::vector<std::size_t>{2, 5, 4, 0, 6})) << "failed shapes never finalists";
  EXPECT_TRUE(finalists({}, 3).empty());
}

TEST(GemmPlan, RerankGivesEveryContenderEverySlotAndPicksTheHighestRate) {
  EXPECT_EQ(rerank_order(3, 0), (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(rerank_order(3, 1), (std::vector<std::size_t>{1, 2, 0}));
  EXPECT_EQ(rerank_order(3, 2), (std::vector<std::size_t>{2, 0, 1}));
  EXPECT_EQ(rerank_order(3, 3), rerank_order(3, 0));
  EXPECT_EQ(rerank_order(1, 5), (std::vector<std::size_t>{0}));
  EXPECT_TRUE(rerank_order(0, 0).empty());
  // Over rerank_rounds, every contender sits in every slot equally often (with 6 and 3 rounds the search's #1
  // sat in slots 0, 5 and 4: its median 5 slots after #2's).
  EXPECT_EQ(rerank_rounds(3, 3), 3u);
  EXPECT_EQ(rerank_rounds(2, 3), 4u);
  EXPECT_EQ(rerank_rounds(6, 3), 6u);
  EXPECT_EQ(rerank_rounds(0, 3), 0u);
  for (std::size_t n = 1; n <= 6; ++n) {
    std::vector<std::vector<int>> seen(n, std::vector<int>(n, 0));  // contender x slot
    const std::size_t rounds = rerank_rounds(n, 3);
    EXPECT_GE(rounds, 3u);
    for (std::size_t r = 0; r < rounds; ++r) {
      const auto order = rerank_order(n, r);
      for (std::size_t slot = 0; slot < order.size(); ++slot) ++seen[order[slot]][slot];
    }
    for (std::size_t c = 0; c < n; ++c)
      for (std::size_t slot = 0; slot < n; ++slot) EXPECT_EQ(seen[c][slot], static_cast<int>(rounds / n)) << n;
  }
  // Equal shapes, medians 2.0, 1.5, 1.9: the second wins although its best single timing (1.4) is not the
  // lowest (1.0).
  const std::vector<double> same{1.0, 1.0, 1.0};
  EXPECT_EQ(rerank_winner({{1.0, 2.0, 3.0}, {1.4, 1.5, 1.6}, {1.9, 1.9, 1.9}}, same), 1u);
  // Different shapes: the rate decides, not the seconds per GEMM. Half the FLOPs in 0.6 of the time is slower.
  EXPECT_EQ(rerank_winner({{1.0, 1.0}, {0.6, 0.6}}, {2.0, 1.0}), 0u);
  EXPECT_EQ(rerank_winner({{1.0, 1.0}, {0.4, 0.4}}, {2.0, 1.0}), 1u);
  EXPECT_EQ(rerank_winner({{1.5, 1.5}, {1.5, 1.5}}, {1.0, 1.0}), 0u) << "a tie keeps the search's order";
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(rerank_winner({{2.0, 2.0}, {1.0, inf}, {1.0, 0.0}}, same), 0u) << "a failed or zero timing disqualifies";
  EXPECT_EQ(rerank_winner({{inf}, {}}, {1.0, 1.0}), 2u) << "none ranked";
  EXPECT_EQ(rerank_winner({}, {}), 0u);
  EXPECT_THROW(rerank_winner({{1.0}}, {}), InputError);
  EXPECT_THROW(rerank_winner({{1.0}}, {0.0}), InputError);
}

TEST(GemmPlan, MeasurementOrderPutsTheWantedTypesFirst) {
  std::vector<DType> all;
  for (const auto& t : all_dtypes()) all.push_back(t.type);
  EXPECT_EQ(measurement_order(all), (std::vector<DType>{DType::kBf16, DType::kFp8E4m3, DType::kInt8, DType::kFp16,
                                                        DType::kTf32, DType::kFp64, DType::kFp32, DType::kFp8E5m2}));
  EXPECT_EQ(measurement_order({DType::kFp64, DType::kInt8}), (std::vector<DType>{DType::kInt8, DType::kFp64}));
  // The profile's order: the type table, then plain, reference, sustained.
  EXPECT_LT(gemm_ceiling_rank("gemm.fp64"), gemm_ceiling_rank("gemm.fp64_sustained"));
  EXPECT_LT(gemm_ceiling_rank("gemm.fp64_sustained"), gemm_ceiling_rank("gemm.fp32"));
  EXPECT_LT(gemm_ceiling_rank("gemm.bf16_ref8192"), gemm_ceiling_rank("gemm.bf16_sustained"));
  EXPECT_LT(gemm_ceiling_rank("gemm.fp8_e4m3_sustained"), gemm_ceiling_rank("gemm.fp8_e5m2"));
  EXPECT_LT(gemm_ceiling_rank("gemm.fp8_e5m2_sustained"), gemm_ceiling_rank("gemm.int8"));
  EXPECT_EQ(gemm_ceiling_rank("gemm.fp64"), 0);
  for (const char* other : {"hbm.copy", "gemm.bf17", "gemm.bf16_other", "gemm.", "fma.fp16"})
    EXPECT_EQ(gemm_ceiling_rank(other), -1) << other;
}

// fp64 and fp32 search shapes at half the lengths too (much less work a GEMM: shorter bursts), interleaved
// with the full-size ones; the reference stays first, nothing repeats.
TEST(GemmPlan, SlowTypesAlsoSearchHalfLengthShapes) {
  EXPECT_EQ(search_dim_scales(DType::kFp64), (std::vector<double>{1.0, 0.5}));
  EXPECT_EQ(search_dim_scales(DType::kFp32), (std::vector<double>{1.0, 0.5}));
  for (DType t : {DType::kBf16, DType::kFp16, DType::kTf32, DType::kFp8E4m3, DType::kInt8})
    EXPECT_EQ(search_dim_scales(t), std::vector<double>{1.0}) << dtype_info(t).name;

  ShapeSearchParams p;
  p.memory_bytes = std::size_t{100} << 30;
  const auto& fp64 = dtype_info(DType::kFp64);
  const auto full = shape_candidates(p, fp64);
  p.dim_scales = {0.5};
  const auto half = shape_candidates(p, fp64);
  ASSERT_GE(half.size(), 8u);
  EXPECT_EQ(half[0], (Shape{8192, 8192, 8192}));
  double full_work = 0, half_work = 0;
  for (std::size_t i = 1; i < 8; ++i) {
    full_work += gemm_flops(full[i]);
    half_work += gemm_flops(half[i]);
    EXPECT_EQ(half[i].m % 128, 0);
    EXPECT_EQ(half[i].n % 128, 0);
    EXPECT_GE(std::min(half[i].m, half[i].n), 512) << to_string(half[i]);
    bool whole = false;
    for (const Tile& t : p.tiles) whole = whole || wave_efficiency(half[i], t.m, t.n, p.sm_count) == 1.0;
    EXPECT_TRUE(whole) << to_string(half[i]);
  }
  EXPECT_LT(half_work, full_work / 5) << "a quarter to an eighth of the work, the long-K shapes half";
  EXPECT_GT(half_work, full_work / 12);

  p.dim_scales = search_dim_scales(DType::kFp64);
  const auto both = shape_candidates(p, fp64);
  ASSERT_EQ(both.size(), p.max_candidates);
  EXPECT_EQ(both[0], (Shape{8192, 8192, 8192}));
  std::set<std::string> seen;
  for (const Shape& s : both) EXPECT_TRUE(seen.insert(to_string(s)).second) << "duplicate " << to_string(s);
  // In turn: the full-size list's second shape, then the half-size list's.
  EXPECT_EQ(both[1], full[1]);
  EXPECT_EQ(both[2], half[1]);
  EXPECT_EQ(both[3], full[2]);
  EXPECT_EQ(both[4], half[2]);
  // A scale outside (0, 1] is an input error, not a silent default.
  for (double bad : {0.0, -0.5, 1.5, std::nan("")}) {
    p.dim_scales = {1.0, bad};
    EXPECT_THROW(shape_candidates(p, fp64), InputError) << bad;
  }
}

TEST(GemmPlan, ShapeCandidatesRespectMemory) {
  ShapeSearchParams p;
  p.memory_bytes = std::size_t{600} << 20;  // 8192^3 fp64 needs 1.5 GiB: left out
  const auto& fp64 = dtype_info(DType::kFp64);
  const auto shapes = shape_candidates(p, fp64);
  ASSERT_FALSE(shapes.empty()) << "smaller shapes fit in 600 MiB";
  for (const Shape& s : shapes) EXPECT_LE(input_set_bytes(s, fp64) + output_bytes(s, fp64), p.memory_bytes);
  for (const Shape& s : shapes) EXPECT_NE(s, (Shape{8192, 8192, 8192}));
  p.memory_bytes = 1;
  EXPECT_TRUE(shape_candidates(p, fp64).empty());
}

TEST(GemmPlan, ReferenceGemmMatchesHandComputedValues) {
  // A (2x3, rows) = [1 2 3; 4 5 6]; B (3x2, columns) = [7 9 11], [8 10 12].
  // C = A*B = [58 64; 139 154], stored column-major: 58, 139, 64, 154.
  const std::vector<double> a{1, 2, 3, 4, 5, 6};
  const std::vector<double> b{7, 9, 11, 8, 10, 12};
  const auto c = reference_gemm({2, 2, 3}, a, b);
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0], 58);
  EXPECT_EQ(c[1], 139);
  EXPECT_EQ(c[2], 64);
  EXPECT_EQ(c[3], 154);
  // Non-square 1x3x2 with signs: row [1 -2], columns [3 4], [-1 0.5], [2 2] -> -5, -2, -2.
  const auto d = reference_gemm({1, 3, 2}, {1, -2}, {3, 4, -1, 0.5, 2, 2});
  EXPECT_EQ(d, (std::vector<double>{-5, -2, -2}));
  const double row[] = {1, -2}, col[] = {3, 4};
  const RefElement e = reference_dot(row, col, 2);
  EXPECT_EQ(e.value, -5);
  EXPECT_EQ(e.magnitude, 11);
  EXPECT_THROW(reference_gemm({2, 2, 3}, a, {1, 2}), InputError);
}

TEST(GemmPlan, TolerancesFitEachType) {
  const RefElement want{10.0, 100.0};
  const auto& fp64 = dtype_info(DType::kFp64);
  const auto& fp32 = dtype_info(DType::kFp32);
  const auto& tf32 = dtype_info(DType::kTf32);
  const auto& bf16 = dtype_info(DType::kBf16);
  const auto& fp8 = dtype_info(DType::kFp8E4m3);
  const auto& int8 = dtype_info(DType::kInt8);
  // tolerance = out * |want| + acc * magnitude
  EXPECT_TRUE(within_tolerance(fp64, 10.0 + 5e-12, want));
  EXPECT_FALSE(within_tolerance(fp64, 10.0 + 1e-9, want));
  EXPECT_TRUE(within_tolerance(fp32, 10.0 + 1e-4, want));
  EXPECT_FALSE(within_tolerance(fp32, 10.0 + 1e-3, want)) << "a TF32-sized error must fail fp32";
  EXPECT_TRUE(within_tolerance(tf32, 10.05, want));  // 0.01 + 0.1
  EXPECT_FALSE(within_tolerance(tf32, 10.2, want));
  EXPECT_TRUE(within_tolerance(bf16, 10.15, want));  // 0.1 + 0.1
  EXPECT_FALSE(within_tolerance(bf16, 10.3, want));
  EXPECT_TRUE(within_tolerance(fp8, 10.25, want));  // 0.1 + 0.2
  EXPECT_FALSE(within_tolerance(fp8, 10.35, want));
  EXPECT_TRUE(within_tolerance(int8, 10.0, want));
  EXPECT_FALSE(within_tolerance(int8, 11.0, want)) << "int8 is exact";
  EXPECT_FALSE(within_tolerance(bf16, std::nan(""), want));
  // Scale factors (fp8 a_scale * b_scale) scale the expected value and the bound: 0.05 + 0.1.
  EXPECT_TRUE(within_tolerance(fp8, 5.14, want, 0.5));
  EXPECT_FALSE(within_tolerance(fp8, 5.16, want, 0.5));
  EXPECT_DOUBLE_EQ(tolerance(bf16, -20.0, 100.0), 0.3);
}

TEST(GemmPlan, ZeroOutputFailsAtLargeK) {
  // K = 16384, inputs uniform in [-1, 1]: sum |a b| ~ K/4 = 4096 while |C| ~ sqrt(K)/3 ~ 43. A bound
  // scaled by sum |a b| alone (1e-2 * 4096 = 41) would accept an all-zero output; ours must not.
  const RefElement typical{43.0, 4096.0};
  for (DType t : {DType::kFp32, DType::kTf32, DType::kBf16, DType::kFp16, DType::kFp8E4m3, DType::kFp8E5m2})
    EXPECT_FALSE(within_tolerance(dtype_info(t), 0.0, typical)) << dtype_info(t).name;
  EXPECT_TRUE(within_tolerance(dtype_info(DType::kBf16), 43.25, typical)) << "one bf16 ulp at 43 is 0.25";
}

// A kernel that skips 1/32 of the K loop at K = 8192 (inputs uniform in [-1, 1]: each product has a standard
// deviation of 1/3, so the missing 256 terms are off by about 5.3 on average in size, sum |a b| ~ 2048): the fp8
// bound must catch most such elements, or 256 sampled elements would let it pass. Elements off by the typical
// amount fail; so do nearly half of them (off by more than 0.8 standard deviations).
TEST(GemmPlan, Fp8BoundCatchesAPartialKLoop) {
  const RefElement typical{30.0, 2048.0};
  const double sigma = std::sqrt(8192.0 / 32) / 3;
  for (DType t : {DType::kFp8E4m3, DType::kFp8E5m2}) {
    EXPECT_FALSE(within_tolerance(dtype_info(t), 30.0 + sigma, typical)) << dtype_info(t).name;
    EXPECT_FALSE(within_tolerance(dtype_info(t), 30.0 + 0.9 * sigma, typical)) << dtype_info(t).name;
    // The H200's worst element on 2026-11-30: 1.9e-4 of sum |a b| off, well inside.
    EXPECT_TRUE(within_tolerance(dtype_info(t), 30.0 + 1.9e-4 * 2048.0, typical)) << dtype_info(t).name;
  }
}

// Rounds x to `bits` significant bits: to nearest even, or toward zero (what a truncating unit does).
double round_bits(double x, int bits, bool truncate = false) {
  if (x == 0 || !std::isfinite(x)) return x;
  int e = 0;
  std::frexp(x, &e);
  const double scale = std::ldexp(1.0, bits - e);
  return (truncate ? std::trunc(x * scale) : std::nearbyint(x * scale)) / scale;
}

// A device-like GEMM element at large K with random inputs, and the float64 reference on the same inputs.
struct Simulated {
  std::vector<RefElement> want;
  std::vector<double> got, got_unscaled, zero, other;  // a correct result; scale lost; all zero; another element's
};

// `in_bits`: what the stored inputs keep; `mul_bits`: what the multiplier sees (tf32 truncates fp32 inputs);
// `acc_bits`: the accumulator's significant bits (24 = fp32; fewer for fp8 fast accumulation, which adds 32
// products at a time, truncated); `out_bits`: the output type; `scale` multiplies the result (fp8 a*b scales).
Simulated simulate(std::int64_t k, int in_bits, int mul_bits, int acc_bits, int out_bits, double scale, int elements,
                   std::uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  Simulated s;
  std::vector<double> a(static_cast<std::size_t>(k)), b(static_cast<std::size_t>(k));
  for (int e = 0; e < elements; ++e) {
    for (std::int64_t l = 0; l < k; ++l) {
      a[static_cast<std::size_t>(l)] = round_bits(uni(rng), in_bits);
      b[static_cast<std::size_t>(l)] = round_bits(uni(rng), in_bits);
    }
    s.want.push_back(reference_dot(a.data(), b.data(), k));
    double acc = 0;
    for (std::int64_t l0 = 0; l0 < k; l0 += 32) {
      double chunk = 0;
      for (std::int64_t l = l0; l < std::min(k, l0 + 32); ++l)
        chunk += round_bits(a[static_cast<std::size_t>(l)], mul_bits, true) *
                 round_bits(b[static_cast<std::size_t>(l)], mul_bits, true);
      acc = round_bits(acc + round_bits(chunk, acc_bits, true), acc_bits, true);
    }
    s.got.push_back(round_bits(acc * scale, out_bits));
    s.got_unscaled.push_back(round_bits(acc, out_bits));
    s.zero.push_back(0.0);
  }
  for (int e = 0; e < elements; ++e) s.other.push_back(s.got[static_cast<std::size_t>((e + 1) % elements)]);
  return s;
}

int failures(const DTypeInfo& t, const std::vector<double>& got, const std::vector<RefElement>& want, double scale) {
  int bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) bad += within_tolerance(t, got[i], want[i], scale) ? 0 : 1;
  return bad;
}

TEST(GemmPlan, CorrectResultsPassAndWrongOnesFailAtK8192) {
  // The tolerance rules against a pessimistic model of each type's device arithmetic at the 8192^3 shape:
  // inputs uniform in [-1, 1) as the fill makes them, truncating (not rounding) multipliers and accumulators.
  // A correct result must pass every element; a zero output or another element's value must fail many
  // (one failure already fails the configuration).
  struct Case {
    DType type;
    int in_bits, mul_bits, acc_bits, out_bits;
    double scale;
  };
  const Case cases[] = {
      {DType::kFp32, 24, 24, 24, 24, 1.0},
      {DType::kTf32, 24, 11, 24, 24, 1.0},   // tf32 keeps 10 explicit mantissa bits of the fp32 inputs
      {DType::kBf16, 8, 8, 24, 8, 1.0},
      {DType::kFp16, 11, 11, 24, 11, 1.0},
      {DType::kFp8E4m3, 4, 4, 14, 8, 0.125},  // fast accumulation keeps about 14 bits; bf16 output
      {DType::kFp8E5m2, 3, 3, 14, 8, 0.125},
  };
  const int n = 64;
  for (const Case& c : cases) {
    const DTypeInfo& t = dtype_info(c.type);
    const Simulated s = simulate(8192, c.in_bits, c.mul_bits, c.acc_bits, c.out_bits, c.scale, n, 17);
    EXPECT_EQ(failures(t, s.got, s.want, c.scale), 0) << t.name << ": a correct result must pass";
    EXPECT_GE(failures(t, s.zero, s.want, c.scale), n / 4) << t.name << ": an all-zero output must fail";
    EXPECT_GE(failures(t, s.other, s.want, c.scale), n / 3) << t.name << ": another element's value must fail";
    if (c.scale != 1.0)
      EXPECT_GE(failures(t, s.got_unscaled, s.want, c.scale), n / 2) << t.name << ": a lost scale factor must fail";
  }
  // fp8 without fast accumulation (fp32 accumulator) passes the same bound.
  const Simulated fp8 = simulate(8192, 4, 4, 24, 8, 0.125, n, 18);
  EXPECT_EQ(failures(dtype_info(DType::kFp8E4m3), fp8.got, fp8.want, 0.125), 0);
  // fp32 with a silent TF32 downgrade fails fp32's bound (at this K too, not only at the tests' small K).
  const Simulated down = simulate(8192, 24, 11, 24, 24, 1.0, n, 19);
  EXPECT_GE(failures(dtype_info(DType::kFp32), down.got, down.want, 1.0), 1);
}

TEST(GemmPlan, Int8NeedsMultiplesOf4AndFp8Of16) {
  const auto& int8 = dtype_info(DType::kInt8);
  const auto& fp8 = dtype_info(DType::kFp8E5m2);
  const std::size_t lots = std::size_t{1} << 30;
  EXPECT_EQ(shape_problem({100, 36, 20}, int8, lots), "") << "IMMA's regular ordering needs multiples of 4 only";
  EXPECT_NE(shape_problem({100, 36, 18}, int8, lots).find("multiples of 4"), std::string::npos);
  EXPECT_NE(shape_problem({100, 36, 20}, fp8, lots).find("multiples of 16"), std::string::npos);
  EXPECT_EQ(shape_problem({48, 80, 32}, fp8, lots), "");
}

TEST(GemmPlan, SearchBudgetStopsBeforeOvershooting) {
  // The first candidate always runs, even past the budget.
  EXPECT_TRUE(search_should_try(10.0, 4.0, 1e-12, 1e12, 0));
  // Nothing measured yet (cost unknown): try while time is left.
  EXPECT_TRUE(search_should_try(1.0, 4.0, 0.0, 1e12, 1));
  EXPECT_FALSE(search_should_try(4.0, 4.0, 0.0, 1e12, 1));
  // 1e-12 s per FLOP: a 1e12-FLOP candidate takes 1 s; at 2.5 s of 4 it fits, at 3.5 s it would overshoot.
  EXPECT_TRUE(search_should_try(2.5, 4.0, 1e-12, 1e12, 3));
  EXPECT_FALSE(search_should_try(3.5, 4.0, 1e-12, 1e12, 3));
  // ...while a smaller candidate still fits in the same half second.
  EXPECT_TRUE(search_should_try(3.5, 4.0, 1e-12, 4e11, 3));
  EXPECT_FALSE(search_should_try(4.5, 4.0, 1e-12, 1.0, 3));
}

TEST(GemmPlan, SamplesCoverCornersAndAreDistinct) {
  const auto s = sample_elements({1000, 300, 64}, 16, 16, 42);
  ASSERT_EQ(s.size(), 256u);
  std::set<std::pair<long long, long long>> seen;
  bool first = false, last = false;
  for (const Sample& e : s) {
    EXPECT_GE(e.row, 0);
    EXPECT_LT(e.row, 1000);
    EXPECT_LT(e.col, 300);
    seen.insert({e.row, e.col});
    first = first || (e.row == 0 && e.col == 0);
    last = last || (e.row == 999 && e.col == 299);
  }
  EXPECT_EQ(seen.size(), 256u);
  EXPECT_TRUE(first && last);
  EXPECT_EQ(sample_elements({3, 2, 5}, 16, 16, 1).size(), 6u) << "a small output is checked whole";
}

TEST(GemmPlan, DecodesNarrowTypesBitExactly) {
  EXPECT_EQ(half_to_double(0x3c00), 1.0);
  EXPECT_EQ(half_to_double(0xc000), -2.0);
  EXPECT_EQ(half_to_double(0x7bff), 65504.0);
  EXPECT_EQ(half_to_double(0x0001), std::ldexp(1.0, -24));
  EXPECT_TRUE(std::isinf(half_to_double(0x7c00)));
  EXPECT_EQ(bf16_to_double(0x3f80), 1.0);
  EXPECT_EQ(bf16_to_double(0xbfc0), -1.5);
  EXPECT_EQ(fp8_e4m3_to_double(0x38), 1.0);
  EXPECT_EQ(fp8_e4m3_to_double(0x7e), 448.0);
  EXPECT_EQ(fp8_e4m3_to_double(0xb4), -0.75);
  EXPECT_EQ(fp8_e4m3_to_double(0x01), std::ldexp(1.0, -9));
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_double(0x7f)));
  EXPECT_EQ(fp8_e5m2_to_double(0x3c), 1.0);
  EXPECT_EQ(fp8_e5m2_to_double(0x7b), 57344.0);
  EXPECT_EQ(fp8_e5m2_to_double(0x01), std::ldexp(1.0, -16));
  EXPECT_TRUE(std::isinf(fp8_e5m2_to_double(0x7c)));
}

#ifdef CEILINGS_BENCH_BIN
// Flag errors come before any device check, so these run without a GPU: exit 2 and a message.
TEST(GemmFlags, UnknownTypeIsAUsageError) {
  const auto r = test::run_program({CEILINGS_BENCH_BIN, "--ceilings_gemm_types=bf16,bogus"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("bogus"), std::string::npos) << r.err;
}

TEST(GemmFlags, ImpossibleShapeIsAUsageError) {
  for (const char* bad : {"--ceilings_gemm_shapes=0x8192x8192", "--ceilings_gemm_shapes=-4x4x4",
                          "--ceilings_gemm_shapes=8192x8192"}) {
    const auto r = test::run_program({CEILINGS_BENCH_BIN, bad});
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find("GEMM shape"), std::string::npos) << r.err;
  }
}

TEST(GemmFlags, NegativeBudgetsAreRejected) {
  const auto r = test::run_program({CEILINGS_BENCH_BIN, "--ceilings_gemm_sustained_s=-1"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const auto w = test::run_program({CEILINGS_BENCH_BIN, "--ceilings_gemm_burst_warmup_s=-0.01"});
  EXPECT_EQ(w.exit_code, 2) << w.err;
  EXPECT_NE(w.err.find("--ceilings_gemm_burst_warmup_s"), std::string::npos) << w.err;
  const auto l = test::run_program({CEILINGS_BENCH_BIN, "--ceilings_gemm_layout=tt"});
  EXPECT_EQ(l.exit_code, 2) << l.err;
  EXPECT_NE(l.err.find("--ceilings_gemm_layout"), std::string::npos) << l.err;
  // A sustained window of one 50 ms chunk is one sample, which no profile takes (review 98): refused before it runs
  for (const char* tiny : {"--ceilings_gemm_sustained_s=0.001", "--ceilings_gemm_sustained_s=1e-400"}) {
    const auto s = test::run_program({CEILINGS_BENCH_BIN, tiny});
    EXPECT_EQ(s.exit_code, 2) << tiny << ": " << s.err;
    EXPECT_NE(s.err.find("--ceilings_gemm_sustained_s"), std::string::npos) << s.err;
    EXPECT_NE(s.err.find("shorter than 0.25 s"), std::string::npos) << s.err;
  }
}

TEST(GemmFlags, ValidFlagsPassParsing) {
  // Valid flags get past parsing: without a GPU the binary then stops with exit 3 (no device), with one
  // it would run; --benchmark_list_tests keeps that short.
  const auto r = test::run_program({CEILINGS_BENCH_BIN, "--ceilings_gemm_types=bf16,int8",
                                    "--ceilings_gemm_shapes=4096x4096x4096", "--ceilings_gemm_sustained_s=0",
                                    "--ceilings_gemm_burst_warmup_s=0", "--ceilings_gemm_layout=nn",
                                    "--benchmark_list_tests=true"});
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.exit_code << r.err;
  if (r.exit_code == 0) {  // the flags took effect: the types asked for are listed, one not asked for is not
    EXPECT_NE(r.out.find("gemm/bf16"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("gemm/int8"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("gemm/fp16"), std::string::npos) << r.out;
  }
  if (r.exit_code == 3) {
    EXPECT_NE(r.err.find("no usable GPU"), std::string::npos) << "exit 3 for another reason: " << r.err;
    // On the GPU machine (device-check.sh sets CEILINGS_EXPECT_GPU) no GPU is a fault, not a pass.
    if (const char* expect = std::getenv("CEILINGS_EXPECT_GPU"); expect && *expect && std::string(expect) != "0")
      ADD_FAILURE() << "CEILINGS_EXPECT_GPU is set, but the bench found no usable GPU: " << r.err;
  }
}
#endif

}  // namespace
}  // namespace ceilings::gemm

// The benchmark names gemm.cpp and fma.cpp register turn into the ceilings DESIGN.md names, with the
// datasheet roof of the plain type (reference and sustained variants included).
#include "ceilings/bench_json.hpp"
#include "ceilings/datasheet.hpp"

namespace ceilings {
namespace {

json gemm_bench_entry(const std::string& name, const char* value_counter, double value) {
  return {{"name", name + "/manual_time"}, {"run_name", name + "/manual_time"}, {"run_type", "iteration"},
          {"iterations", 1}, {"real_time", 1.0}, {"cpu_time", 1.0}, {"time_unit", "us"},
          {"label", "8192x8192x8192 TN; algo 1"}, {value_counter, value}, {"cv", 0.01}, {"samples", 10},
          {"verified", 1}, {"throttled", 0}, {"telemetry", 0}, {"m", 8192}, {"algo_id", 66}};
}

TEST(GemmProfile, BenchNamesMapToCeilings) {
  // A hand-written fixture (not a measurement): just enough device for the converter.
  json device = {{"index", 0},           {"name", "NVIDIA H200"},         {"uuid", "GPU-test"},
                 {"pci_bus_id", "0000:00:00.0"}, {"compute_capability", "9.0"}, {"sm_count", 132},
                 {"memory_bytes", 150754820096ll}, {"l2_bytes", 62914560}};
  json gb = {{"context", {{kContextDevice, device.dump()}}},
             {"benchmarks",
              {gemm_bench_entry("gemm/bf16", "flop_per_second", 8.0e14),
               gemm_bench_entry("gemm/bf16_ref8192/m:8192/n:8192/k:8192", "flop_per_second", 7.5e14),
               gemm_bench_entry("gemm/bf16_sustained/window_s:15", "flop_per_second", 7.0e14),
               gemm_bench_entry("gemm/int8", "op_per_second", 1.3e15),
               gemm_bench_entry("fma/fp16/block:256", "flop_per_second", 1.0e14)}}};
  const Profile p = profile_from_benchmark_json(gb);
  std::map<std::string, const Ceiling*> by;
  for (const auto& c : p.ceilings) by[c.name] = &c;
  ASSERT_TRUE(by.count("gemm.bf16") && by.count("gemm.bf16_ref8192") && by.count("gemm.bf16_sustained") &&
              by.count("gemm.int8") && by.count("fma.fp16"));
  EXPECT_EQ(by["gemm.bf16"]->value, 8.0e14);
  EXPECT_EQ(by["gemm.int8"]->unit, "OP/s");
  EXPECT_EQ(by["gemm.bf16"]->detail.value("algo_id", 0.0), 66.0);
  EXPECT_EQ(by["gemm.bf16"]->detail.value("label", ""), "8192x8192x8192 TN; algo 1");
  EXPECT_EQ(by["gemm.bf16_ref8192"]->detail.value("k", 0.0), 8192.0);
  const GpuSpec* h200 = find_gpu("NVIDIA H200");
  ASSERT_NE(h200, nullptr);
  EXPECT_EQ(datasheet_value(*h200, "gemm.bf16_ref8192").value_or(0), 9.89e14);
  EXPECT_EQ(datasheet_value(*h200, "gemm.fp8_e5m2_sustained").value_or(0), 1.979e15);
  EXPECT_EQ(datasheet_value(*h200, "gemm.int8").value_or(0), 1.979e15);
}

}  // namespace
}  // namespace ceilings
