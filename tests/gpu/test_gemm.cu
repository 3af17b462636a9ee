// GPU tests of the gemm.<type> path: every data type's cuBLASLt GEMM verified against the float64
// reference at small shapes (non-square, and not a multiple of 16 where the type allows). Skips without a GPU.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "ceilings/bench_json.hpp"
#include "ceilings/gemm_plan.hpp"
#include "cli_runner.hpp"
#include "gpu_test.hpp"
#include "harness/gemm_lt.hpp"

namespace ceilings::bench::gemm {
namespace {

struct Ran {
  bool ran = false;
  std::string skipped;
  Verification v;
};

// One GEMM on input set 1 with the fastest of a few heuristic candidates; verification against `check_set`.
Ran run_one(gp::DType type, const gp::Shape& shape, int check_set = 1) {
  Ran r;
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  r.skipped = type_unsupported_reason(type, prop);
  if (!r.skipped.empty()) return r;
  Stream stream;
  DeviceBuffer<std::uint8_t> ws(std::size_t{32} << 20);
  Problem p(type, shape);
  Operands ops(p, 2, 1234u, stream.get());
  AlgoChoice c;
  try {
    c = pick_algo(p, ops, 4, ws.get(), ws.bytes(), stream.get());
  } catch (const std::runtime_error& e) {
    if (std::string(e.what()).rfind("unsupported:", 0) == 0) {
      r.skipped = e.what();
      return r;
    }
    throw;
  }
  EXPECT_GE(algo_info(c.algo).id, 0);
  EXPECT_EQ(p.run(c.algo, ops.a(1), ops.b(1), ops.c(), ws.get(), ws.bytes(), stream.get()), CUBLAS_STATUS_SUCCESS);
  stream.sync();
  r.v = verify(p, ops, check_set, stream.get());
  r.ran = true;
  return r;
}

TEST(GemmGpu, EveryTypeVerifiesAtSmallShapes) {
  CEILINGS_REQUIRE_GPU();
  for (const auto& t : gp::all_dtypes()) {
    std::vector<gp::Shape> shapes{{256, 128, 64}, {512, 384, 1024}};
    if (t.dim_multiple == 1) shapes.push_back({100, 36, 20});  // ragged: no tensor-core-friendly multiple
    for (const gp::Shape& s : shapes) {
      const Ran r = run_one(t.type, s);
      if (!r.ran) {
        std::printf("[ skipped  ] %s %s: %s\n", t.name, gp::to_string(s).c_str(), r.skipped.c_str());
        continue;
      }
      EXPECT_TRUE(r.v.ok) << t.name << " " << gp::to_string(s) << ": " << r.v.detail;
      const std::int64_t expect = std::min<std::int64_t>(16, s.m) * std::min<std::int64_t>(16, s.n);
      EXPECT_EQ(r.v.checked, expect) << t.name;
    }
  }
}

TEST(GemmGpu, BrokenResultFailsVerification) {
  CEILINGS_REQUIRE_GPU();
  // The output holds set 1's product; checking it against set 0's inputs must fail, for every type.
  for (gp::DType t : {gp::DType::kFp32, gp::DType::kBf16, gp::DType::kInt8}) {
    const Ran r = run_one(t, {256, 128, 64}, 0);
    if (!r.ran) continue;
    EXPECT_FALSE(r.v.ok) << gp::dtype_info(t).name;
    EXPECT_GT(r.v.failed, 200) << r.v.detail;
  }
}

TEST(GemmGpu, Fp8NeedsMultiplesOf16) {
  EXPECT_THROW(Problem(gp::DType::kFp8E4m3, {100, 36, 20}), std::invalid_argument);
  EXPECT_THROW(Problem(gp::DType::kInt8, {128, 128, 20}), std::invalid_argument);
}

// End to end: a short ceilings-bench pass over GEMM and FMA yields verified numbers (or skips with a
// reason), and they land in a profile under the DESIGN.md ceiling names.
TEST(GemmBench, ShortPassReportsVerifiedCeilings) {
  CEILINGS_REQUIRE_GPU();
  const auto r = test::run_program({CEILINGS_BENCH_BIN, "--ceilings_quick", "--ceilings_gemm_types=bf16,fp8_e4m3,int8",
                                    "--ceilings_gemm_search_s=0.3", "--ceilings_gemm_sustained_s=0.5",
                                    "--benchmark_filter=^(gemm|fma)/", "--benchmark_format=json"},
                                   {}, 600);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json out = json::parse(r.out);
  int values = 0;
  for (const auto& b : out.at("benchmarks")) {
    const std::string name = b.at("name");
    if (b.value("error_occurred", false)) {
      const std::string msg = b.value("error_message", "");
      EXPECT_EQ(msg.rfind("unsupported:", 0), 0u) << name << ": " << msg;
      continue;
    }
    EXPECT_EQ(b.value("verified", 0.0), 1.0) << name;
    const double v = b.value("flop_per_second", 0.0) + b.value("op_per_second", 0.0);
    EXPECT_GT(v, 1e12) << name;
    ++values;
  }
  EXPECT_GE(values, 4 + 3) << "4 FMA cases and at least bf16's three GEMM ceilings";
  const Profile p = profile_from_benchmark_json(out);
  std::set<std::string> names;
  for (const auto& c : p.ceilings) names.insert(c.name);
  for (const char* want : {"gemm.bf16", "gemm.bf16_ref8192", "gemm.bf16_sustained", "fma.fp32", "fma.fp64", "fma.fp16",
                           "fma.bf16"})
    EXPECT_TRUE(names.count(want)) << want;
}

}  // namespace
}  // namespace ceilings::bench::gemm
