// ceilings-bench JSON -> profile conversion. The documents here are built in the test, in the shape
// Google Benchmark 1.7/1.8 writes for ceilings-bench; they are not captured measurements.
#include <gtest/gtest.h>
#include <cstdlib>
#include <ctime>
#include <regex.h>

#include <regex>
#include <filesystem>

#include "ceilings/bench_json.hpp"
#include "ceilings/report.hpp"
#include "support/bench_output.hpp"

using namespace ceilings;

namespace {

using test::bench_output;

json hbm_case(const std::string& shape, double bytes_per_second, double cv = 0.004) {
  return {{"name", "hbm/copy/" + shape + "/iterations:1/manual_time"},
          {"run_name", "hbm/copy/" + shape + "/iterations:1/manual_time"},
          {"run_type", "iteration"},
          {"iterations", 1},
          {"real_time", 987.0},
          {"cpu_time", 12.0},
          {"time_unit", "us"},
          {"bytes_per_second", bytes_per_second},
          {"bytes", 4294967296.0},
          {"array_bytes", 2147483648.0},
          {"cv", cv},
          {"samples", 25},
          {"verified", 1},
          {"telemetry", 1},
          {"throttled", 0},
          {"throttle_reasons", 0},
          {"sm_clock_hz", 1.98e9},
          {"mem_clock_hz", 3.201e9},
          {"power_w", 480.0},
          {"temp_c", 48.0}};
}

}  // namespace

TEST(BenchJson, BestVariantBecomesTheCeiling) {
  const Profile p = profile_from_benchmark_json(bench_output(
      {hbm_case("threads:256/bpsm:8/unroll:2/hint:1", 4.20e12), hbm_case("threads:512/bpsm:4/unroll:4/hint:1", 4.36e12),
       hbm_case("threads:1024/bpsm:2/unroll:8/hint:2", 4.31e12)}));
  ASSERT_EQ(p.ceilings.size(), 1u);
  const Ceiling& c = p.ceilings[0];
  EXPECT_EQ(c.name, "hbm.copy");
  EXPECT_DOUBLE_EQ(c.value, 4.36e12);
  EXPECT_EQ(c.unit, "B/s");
  EXPECT_EQ(c.samples, 25);
  EXPECT_TRUE(c.verified);
  EXPECT_FALSE(c.throttled);
  EXPECT_TRUE(c.telemetry.available);
  EXPECT_DOUBLE_EQ(c.telemetry.power_w, 480.0);
  ASSERT_TRUE(c.datasheet.has_value());
  EXPECT_DOUBLE_EQ(*c.datasheet, 4.8e12);  // H200 datasheet bandwidth
  EXPECT_EQ(c.detail["benchmark"], "hbm/copy/threads:512/bpsm:4/unroll:4/hint:1");
  EXPECT_EQ(c.detail["threads"], 512);
  EXPECT_EQ(c.detail["unroll"], 4);
  EXPECT_EQ(c.detail["array_bytes"], 2147483648.0);
  EXPECT_EQ(c.detail["candidates"], 3);
  // Every variant that competed, best first, with its value and spread.
  ASSERT_TRUE(c.detail["variants"].is_array());
  ASSERT_EQ(c.detail["variants"].size(), 3u);
  EXPECT_EQ(c.detail["variants"][0]["benchmark"], "hbm/copy/threads:512/bpsm:4/unroll:4/hint:1");
  EXPECT_DOUBLE_EQ(c.detail["variants"][0]["value"].get<double>(), 4.36e12);
  EXPECT_EQ(c.detail["variants"][1]["benchmark"], "hbm/copy/threads:1024/bpsm:2/unroll:8/hint:2");
  EXPECT_DOUBLE_EQ(c.detail["variants"][2]["value"].get<double>(), 4.20e12);
  EXPECT_TRUE(c.detail["variants"][2].contains("cv"));
  EXPECT_EQ(p.device.name, "NVIDIA H200");
  EXPECT_EQ(p.hostname, "node001");
  EXPECT_EQ(p.numa_node.value_or(-1), 1);
  EXPECT_EQ(p.tool_git, "abc");
  EXPECT_EQ(p.tool_measurement_code, "0123456789ab");
  // The result is itself a valid profile, the measurement code kept.
  EXPECT_EQ(profile_from_json(profile_to_json(p)).tool_measurement_code, "0123456789ab");
  EXPECT_FALSE(p.quick.has_value());  // a bench that did not say
}

// A --quick pass is recorded (measure.quick), so that it is not set against a full one as alike (review 98).
TEST(BenchJson, AQuickPassIsRecorded) {
  for (const bool quick : {true, false}) {
    json out = bench_output({hbm_case("threads:256/bpsm:8/unroll:2/hint:1", 4.3e12, 0.2)});
    out["context"][kContextOptions] = json{{"quick", quick}, {"min_samples", 5}}.dump();
    const Profile p = profile_from_benchmark_json(out);
    ASSERT_TRUE(p.quick.has_value());
    EXPECT_EQ(*p.quick, quick);
    const json doc = profile_to_json(p);
    EXPECT_EQ(doc["measure"]["quick"], quick) << doc["measure"].dump();
    EXPECT_EQ(profile_from_json(doc).quick, quick);
    EXPECT_EQ(render_profile(p, Format::kTable).find(", a --quick pass") != std::string::npos, quick);
  }
}

// Two cases at the same value: the steadier wins (a noisy sample's luck is not the ceiling), whatever their names.
TEST(BenchJson, ATieGoesToTheSteadierCase) {
  const Profile p = profile_from_benchmark_json(bench_output({hbm_case("threads:256/bpsm:8/unroll:2/hint:1", 4.3e12, 0.2),
                                                              hbm_case("threads:512/bpsm:4/unroll:4/hint:1", 4.3e12,
                                                                       0.001)}));
  ASSERT_EQ(p.ceilings.size(), 1u);
  EXPECT_EQ(p.ceilings[0].detail["benchmark"], "hbm/copy/threads:512/bpsm:4/unroll:4/hint:1");
  EXPECT_DOUBLE_EQ(p.ceilings[0].cv, 0.001);
}

// Google Benchmark's context.date is local time with its offset; the profile's `created` is when it was
// made, in UTC, whatever zone the node runs in.
TEST(BenchJson, CreatedIsUtcWhateverTheNodesTimeZone) {
  json doc = bench_output({hbm_case("t:1", 4.3e12)});
  doc["context"]["date"] = "2026-11-30T13:00:00+01:00";
  // The process runs 9 hours ahead of UTC (a POSIX zone rule, which needs no tzdata): a local time written
  // with a Z would be 9 hours off.
  const char* old_tz = std::getenv("TZ");
  const std::string saved = old_tz ? old_tz : "";
  setenv("TZ", "JST-9", 1);
  tzset();
  const std::time_t before = std::time(nullptr);
  const Profile p = profile_from_benchmark_json(doc);
  const std::time_t after = std::time(nullptr);
  if (old_tz) setenv("TZ", saved.c_str(), 1); else unsetenv("TZ");
  tzset();
  const UtcTime created = parse_utc_time(p.created, "created");
  EXPECT_GE(created.seconds, static_cast<std::int64_t>(before)) << p.created;
  EXPECT_LE(created.seconds, static_cast<std::int64_t>(after)) << p.created;
  EXPECT_EQ(p.created.back(), 'Z') << p.created;
  EXPECT_EQ(profile_to_json(p)["created"], p.created);
  EXPECT_NO_THROW(profile_from_json(profile_to_json(p)));
}

// A case that reports a rate no GPU reaches (a timer fault) is an error of its own; it neither wins the
// ceiling nor makes the profile one its reader rejects.
TEST(BenchJson, AnImpossibleValueIsTheCasesErrorNotTheCeiling) {
  const Profile p = profile_from_benchmark_json(
      bench_output({hbm_case("threads:256", 4.2e12), hbm_case("threads:512", 3.0e15)}));
  ASSERT_EQ(p.ceilings.size(), 1u);
  EXPECT_DOUBLE_EQ(p.ceilings[0].value, 4.2e12);
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].name, "hbm.copy");
  EXPECT_NE(p.errors[0].reason.find("above 1 PB/s"), std::string::npos) << p.errors[0].reason;
  EXPECT_NE(p.errors[0].reason.find("hbm/copy/threads:512"), std::string::npos) << p.errors[0].reason;
  EXPECT_NO_THROW(profile_from_json(profile_to_json(p)));
}

// NVML answering a PCIe reading no link has (65535 lanes, generation 99) loses that reading, not the run.
TEST(BenchJson, APcieReadingNoLinkHasIsUnreadNotFatal) {
  json doc = bench_output({hbm_case("t:1", 4.3e12)});
  json device = json::parse(doc["context"][kContextDevice].get<std::string>());
  device["pcie"] = {{"gen", 5}, {"width", 65535}, {"max_gen", 99}, {"max_width", 16}};
  doc["context"][kContextDevice] = device.dump();
  const Profile p = profile_from_benchmark_json(doc);
  EXPECT_EQ(p.device.pcie.gen.value_or(0), 5);
  EXPECT_FALSE(p.device.pcie.width.has_value());
  EXPECT_FALSE(p.device.pcie.max_gen.has_value());
  EXPECT_EQ(p.device.pcie.max_width.value_or(0), 16);
  ASSERT_EQ(p.ceilings.size(), 1u);
}

// So is a power limit or maximum clock no GPU has (NVML's 0xFFFFFFFF mW read as 4294967 W): the run was lost.
TEST(BenchJson, ADeviceReadingNoGpuHasIsUnreadNotFatal) {
  json doc = bench_output({hbm_case("t:1", 4.3e12)});
  json device = json::parse(doc["context"][kContextDevice].get<std::string>());
  device["power_limit_w"] = 4294967.295;
  device["clocks_max_hz"] = {{"sm", 4.294967295e15}, {"memory", 3.201e9}};
  doc["context"][kContextDevice] = device.dump();
  const Profile p = profile_from_benchmark_json(doc);
  EXPECT_FALSE(p.device.power_limit_w.has_value());
  EXPECT_FALSE(p.device.max_sm_clock_hz.has_value());
  EXPECT_DOUBLE_EQ(p.device.max_mem_clock_hz.value_or(0), 3.201e9);
  ASSERT_EQ(p.ceilings.size(), 1u);
}

// Whatever the converter keeps, the profile reader takes: a detail it would refuse, text a terminal would
// obey, or a variant in another unit than its rivals is that case's error; the run's exit stays honest.
TEST(BenchJson, WhatTheReaderWouldRefuseIsTheCasesError) {
  json zero_power = hbm_case("threads:512", 4.36e12);
  zero_power["power_mean_w"] = 0;
  json self_pair = hbm_case("threads:1024", 4.35e12);
  self_pair["p2p_0_0"] = 1e11;
  json fractional = hbm_case("threads:768", 4.34e12);
  fractional["reason_readings"] = 2.5;
  json escape = hbm_case("threads:256", 4.2e12);
  escape["label"] = "bad\x1b[31mlabel";
  json failed = hbm_case("threads:128", 1e12);
  failed["error_occurred"] = true;
  failed["error_message"] = "cuda\x07 error\nsecond line";
  json mask = hbm_case("threads:64", 4.33e12);
  mask["throttle_reasons"] = 1e30;
  json nan_throttled = hbm_case("threads:32", 4.33e12);
  nan_throttled["throttled"] = nullptr;  // Google Benchmark's NaN, as read
  json provenance = hbm_case("threads:16/benchmark:zzz", 4.33e12);
  json one_sample = hbm_case("threads:14", 4.33e12);  // its cv of 0 says nothing
  one_sample["samples"] = 1;
  json control_key = hbm_case("threads:12", 4.33e12);
  control_key["bad\x07key"] = 1;
  json control_arg = hbm_case("threads:10/tag:a\x07" "b", 4.33e12);
  json aggregate = hbm_case("threads:8", 9e12);  // a _stddev row of a Google Benchmark older than 1.5 (no run_type)
  aggregate.erase("run_type");
  aggregate["aggregate_name"] = "stddev";
  // A family this build gives no unit: a rival in another unit (a latency, numerically "faster" in B/s terms
  // of nothing) does not compete
  auto tex = [](const std::string& shape) {
    json c = hbm_case(shape, 9e12);
    c["name"] = c["run_name"] = "tex/read/" + shape + "/iterations:1/manual_time";
    return c;
  };
  json tex_bytes = tex("t:1"), tex_latency = tex("t:2");
  tex_latency.erase("bytes_per_second");
  tex_latency["latency_s"] = 5e-6;
  const Profile p = profile_from_benchmark_json(bench_output({zero_power, self_pair, fractional, escape, failed, mask,
                                                              nan_throttled, provenance, one_sample, control_key, control_arg,
                                                              aggregate, tex_bytes, tex_latency}));
  ASSERT_EQ(p.ceilings.size(), 2u);
  EXPECT_DOUBLE_EQ(p.ceilings[0].value, 4.2e12);  // the one clean case
  EXPECT_EQ(p.ceilings[1].name, "tex.read");
  EXPECT_EQ(p.ceilings[1].unit, "B/s");
  EXPECT_EQ(p.ceilings[0].detail["label"], "bad?[31mlabel");
  std::string reasons;
  for (const Skipped& e : p.errors) reasons += e.reason + "\n";
  EXPECT_EQ(p.errors.size(), 11u) << reasons;
  for (const char* field : {"power_mean_w", "p2p_0_0", "reason_readings", "throttle_reasons", "throttled",
                            "argument 'benchmark'", "reports s where most of tex.read's cases report B/s", "samples': must be >= 2"})
    EXPECT_NE(reasons.find(field), std::string::npos) << field << "\n" << reasons;
  EXPECT_NE(reasons.find("cuda? error?second line"), std::string::npos) << reasons;
  EXPECT_NE(reasons.find("benchmarks[10].detail.benchmark': holds a control character"), std::string::npos) << reasons;
  EXPECT_NO_THROW(profile_from_json(profile_to_json(p)));
}

// Why a case's samples stopped: the counter's code becomes its name in the detail; a code that names no stop is
// that case's error, and a bench from before the counter leaves the detail without it.
TEST(BenchJson, StoppedByBecomesItsNameInTheDetail) {
  json budget = hbm_case("t:1", 4.3e12, 0.008), window = hbm_case("t:2", 4.3e12), older = hbm_case("t:3", 4.3e12);
  budget["stopped_by"] = 3;
  window["name"] = window["run_name"] = "hbm/read/t:2/iterations:1/manual_time";
  window["stopped_by"] = 4;
  older["name"] = older["run_name"] = "hbm/write/t:3/iterations:1/manual_time";
  std::vector<json> cases{budget, window, older};
  for (const json& code : {json(0), json(5), json(1.5), json(nullptr)}) {
    json bad = hbm_case("t:9", 4.3e12);
    bad["name"] = bad["run_name"] = "hbm/triad/t:" + code.dump() + "/iterations:1/manual_time";
    bad["stopped_by"] = code;
    cases.push_back(bad);
  }
  const Profile p = profile_from_benchmark_json(bench_output(cases));
  ASSERT_EQ(p.ceilings.size(), 3u);
  ASSERT_NE(p.find("hbm.copy"), nullptr);
  ASSERT_NE(p.find("hbm.read"), nullptr);
  ASSERT_NE(p.find("hbm.write"), nullptr);
  EXPECT_EQ(p.find("hbm.copy")->detail["stopped_by"], "time_budget");
  EXPECT_EQ(p.find("hbm.read")->detail["stopped_by"], "window");
  EXPECT_FALSE(p.find("hbm.write")->detail.contains("stopped_by"));
  ASSERT_EQ(p.errors.size(), 4u);
  for (const Skipped& e : p.errors) EXPECT_NE(e.reason.find(".stopped_by'"), std::string::npos) << e.reason;
  EXPECT_NE(p.errors[2].reason.find("1.5 is not why sampling stopped"), std::string::npos) << p.errors[2].reason;
  EXPECT_NE(p.errors[3].reason.find("was NaN or Infinity"), std::string::npos) << p.errors[3].reason;
  EXPECT_NO_THROW(profile_from_json(profile_to_json(p)));
}

TEST(BenchJson, LatencyPrefersTheLowestValue) {
  json a = hbm_case("x:1", 1), b = hbm_case("x:2", 1);
  for (json* j : {&a, &b}) {
    j->erase("bytes_per_second");
    (*j)["name"] = std::string("latency/launch/") + (j == &a ? "graph:0" : "graph:1");
  }
  a["latency_s"] = 2.5e-6;
  b["latency_s"] = 1.9e-6;
  const Profile p = profile_from_benchmark_json(bench_output({a, b}));
  ASSERT_EQ(p.ceilings.size(), 1u);
  EXPECT_EQ(p.ceilings[0].name, "latency.launch");
  EXPECT_EQ(p.ceilings[0].unit, "s");
  EXPECT_DOUBLE_EQ(p.ceilings[0].value, 1.9e-6);
}

TEST(BenchJson, UnsupportedIsSkippedAndFailuresAreErrors) {
  json unsupported = {{"name", "gemm/fp8_e5m2/m:8192/iterations:1/manual_time"},
                      {"run_type", "iteration"},
                      {"error_occurred", true},
                      {"error_message", "unsupported: cuBLASLt has no e5m2 x e5m2 kernel"}};
  json failed = {{"name", "hbm/triad/threads:256/iterations:1/manual_time"},
                 {"run_type", "iteration"},
                 {"error_occurred", true},
                 {"error_message", "verification failed: 12 of 536870912 words differ"}};
  const Profile p = profile_from_benchmark_json(bench_output({unsupported, failed, hbm_case("t:1", 4.3e12)}));
  ASSERT_EQ(p.skipped.size(), 1u);
  EXPECT_EQ(p.skipped[0].name, "gemm.fp8_e5m2");
  EXPECT_NE(p.skipped[0].reason.find("no e5m2"), std::string::npos);
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].name, "hbm.triad");
  EXPECT_NE(p.errors[0].reason.find("12 of"), std::string::npos);
  EXPECT_EQ(p.ceilings.size(), 1u);
}

// Google Benchmark writes its own "threads" (and the rest of its keys) and then every counter: a counter of
// the same name repeats the key in the text, which the converter must read (the last value wins), not refuse
// as a person's duplicate. The bench's counters keep clear of GB's keys anyway (next test).
TEST(BenchJson, ACounterRepeatingAGoogleBenchmarkKeyIsReadNotRefused) {
  json doc = bench_output({hbm_case("threads:512", 4.3e12)});
  std::string text = doc.dump(1);
  const std::string marker = "\"cv\":";
  const auto at = text.find(marker);
  ASSERT_NE(at, std::string::npos);
  text.insert(at, "\"threads\": 1, \"threads\": 512, ");  // GB's key, then the counter
  const json read = parse_benchmark_json_text(text, "bench output");
  EXPECT_EQ(read["benchmarks"][0]["threads"], 512);
  const Profile p = profile_from_benchmark_json(read);
  ASSERT_EQ(p.ceilings.size(), 1u);
  EXPECT_EQ(p.ceilings[0].detail["threads"], 512);
  // A person's file is still refused for the same text.
  EXPECT_THROW(parse_json_text(text, "a profile"), InputError);
}

// No counter of ceilings-bench takes one of Google Benchmark's own key names (a `threads` counter did, and
// every hbm, l2, smem and fma entry then held the key twice).
TEST(BenchJson, NoBenchCounterTakesAGoogleBenchmarkKeyName) {
  namespace fs = std::filesystem;
  // `c` is the bench's alias of a counters map (auto& c = state.counters), which most of them go through.
  const std::regex counter(R"re(\b(?:c|counters)\[\s*"([A-Za-z0-9_]+)"\s*\])re");
  int files = 0, counters = 0;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(CEILINGS_SOURCE_DIR) / "bench")) {
    const std::string ext = e.path().extension().string();
    if (!e.is_regular_file() || (ext != ".cu" && ext != ".cpp" && ext != ".hpp")) continue;
    ++files;
    const std::string text = read_text_file(e.path().string());
    for (std::sregex_iterator it(text.begin(), text.end(), counter), end; it != end; ++it) {
      ++counters;
      EXPECT_EQ(benchmark_keys().count((*it)[1].str()), 0u)
          << e.path().filename().string() << ": counter \"" << (*it)[1].str() << "\" is one of Google Benchmark's keys";
    }
  }
  EXPECT_GT(files, 5);
  EXPECT_GT(counters, 120);  // the scan sees the counters, the aliased ones too
}

// Google Benchmark 1.8's JSON: SkipWithError still writes error_occurred/error_message; SkipWithMessage
// writes skipped/skip_message; the context gains library_version and a numeric json_schema_version.
TEST(BenchJson, ReadsGoogleBenchmark18Output) {
  json error = {{"name", "hbm/triad/threads:256/iterations:1/manual_time"}, {"family_index", 1},
                {"per_family_instance_index", 0}, {"run_name", "hbm/triad/threads:256/iterations:1/manual_time"},
                {"run_type", "iteration"}, {"repetitions", 1}, {"repetition_index", 0}, {"threads", 1},
                {"error_occurred", true}, {"error_message", "CUDA error: an illegal memory access"},
                {"iterations", 0}, {"real_time", 0.0}, {"cpu_time", 0.0}, {"time_unit", "us"}};
  json skipped = {{"name", "nvlink/p2p_uni/engine:copy/op:write/iterations:1/manual_time"},
                  {"run_type", "iteration"}, {"skipped", true}, {"skip_message", "single GPU: no peer"},
                  {"iterations", 0}, {"real_time", 0.0}, {"cpu_time", 0.0}, {"time_unit", "us"}};
  json doc = bench_output({error, skipped, hbm_case("t:1", 4.3e12)});
  doc["context"]["library_version"] = "v1.8.3";
  doc["context"]["library_build_type"] = "release";
  doc["context"]["json_schema_version"] = 1;
  const Profile p = profile_from_benchmark_json(doc);
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].name, "hbm.triad");
  EXPECT_NE(p.errors[0].reason.find("illegal memory access"), std::string::npos);
  ASSERT_EQ(p.skipped.size(), 1u);
  EXPECT_EQ(p.skipped[0].name, "nvlink.p2p_uni");
  EXPECT_NE(p.skipped[0].reason.find("single GPU: no peer"), std::string::npos);
  EXPECT_EQ(p.ceilings.size(), 1u);
}

TEST(BenchJson, UnverifiedNumbersAreRejected) {
  json c = hbm_case("t:1", 4.3e12);
  c["verified"] = 0;
  Profile p = profile_from_benchmark_json(bench_output({c}));
  EXPECT_TRUE(p.ceilings.empty());
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].name, "hbm.copy");
  EXPECT_NE(p.errors[0].reason.find("did not verify"), std::string::npos) << p.errors[0].reason;
  c.erase("verified");
  p = profile_from_benchmark_json(bench_output({c}));
  EXPECT_TRUE(p.ceilings.empty());
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_NE(p.errors[0].reason.find("verified"), std::string::npos) << p.errors[0].reason;
}

// One unusable entry costs its own case, never the run: the other ceilings still convert.
TEST(BenchJson, AnUnusableEntryIsAnErrorAndTheRestConverts) {
  json foreign = hbm_case("t:1", 4.3e12), no_value = hbm_case("t:2", 4.3e12), zero = hbm_case("t:3", 0);
  foreign["name"] = "BM_memcpy/64";
  no_value.erase("bytes_per_second");
  json good = hbm_case("t:4", 4.2e12);
  good["name"] = "hbm/read/t:4/manual_time";
  const Profile p = profile_from_benchmark_json(bench_output({foreign, no_value, zero, good}));
  ASSERT_EQ(p.ceilings.size(), 1u);
  EXPECT_EQ(p.ceilings[0].name, "hbm.read");
  ASSERT_EQ(p.errors.size(), 3u);
  EXPECT_EQ(p.errors[0].name, "BM_memcpy/64");
  EXPECT_NE(p.errors[0].reason.find("unusable benchmark entry"), std::string::npos);
  EXPECT_EQ(p.errors[1].name, "hbm.copy");
  EXPECT_NE(p.errors[1].reason.find("no value counter"), std::string::npos);
  EXPECT_NE(p.errors[2].reason.find("must be positive"), std::string::npos);
}

// Google Benchmark writes non-finite doubles as bare NaN / Infinity tokens: read as null, never inside
// strings, and a null value counter is an error of its case while its other counters are named.
TEST(BenchJson, NonFiniteCountersFromGoogleBenchmarkAreRead) {
  json c = hbm_case("t:1", 4.3e12), bad = hbm_case("t:2", 4.3e12), bad_cv = hbm_case("t:3", 4.3e12);
  c["label"] = "NaN Infinity -Infinity \\\" NaN";
  c["ratio"] = "@NaN@";
  c["slope"] = "@-Infinity@";
  c["peak"] = "@Infinity@";
  bad["name"] = "hbm/read/t:2/manual_time";
  bad["bytes_per_second"] = "@NaN@";
  bad_cv["name"] = "hbm/write/t:3/manual_time";
  bad_cv["cv"] = "@NaN@";
  std::string text = bench_output({c, bad, bad_cv}).dump(2);
  for (const std::string token : {"NaN", "-Infinity", "Infinity"})  // as Google Benchmark writes them
    for (auto at = text.find("\"@" + token + "@\""); at != std::string::npos; at = text.find("\"@" + token + "@\""))
      text.replace(at, token.size() + 4, token);
  ASSERT_EQ(text.find('@'), std::string::npos);
  EXPECT_FALSE(json::accept(text));  // plain JSON refuses it
  const Profile p = profile_from_benchmark_json(parse_benchmark_json_text(text, "test"));
  ASSERT_EQ(p.ceilings.size(), 1u);
  EXPECT_EQ(p.ceilings[0].detail["label"], "NaN Infinity -Infinity \\\" NaN");  // strings untouched
  EXPECT_EQ(p.ceilings[0].detail["nonfinite_counters"], json({"peak", "ratio", "slope"}));
  // A value or cv that was not finite says so (it had read as "required but missing").
  ASSERT_EQ(p.errors.size(), 2u);
  EXPECT_EQ(p.errors[0].name, "hbm.read");
  EXPECT_NE(p.errors[0].reason.find("bytes_per_second': was NaN or Infinity"), std::string::npos) << p.errors[0].reason;
  EXPECT_EQ(p.errors[1].name, "hbm.write");
  EXPECT_NE(p.errors[1].reason.find("cv': was NaN or Infinity"), std::string::npos) << p.errors[1].reason;
  EXPECT_THROW(parse_benchmark_json_text("{\"a\": NaNx}", "test"), InputError);
  EXPECT_THROW(parse_benchmark_json_text("{\"a\": 1", "test"), InputError);
}

TEST(BenchJson, SweepPointsGoToDetail) {
  json small = hbm_case("size:4096", 1.0e9), big = hbm_case("size:1073741824", 55.1e9);
  small["name"] = "pcie/h2d/size:4096/iterations:1/manual_time";
  small["candidate"] = 0;
  big["name"] = "pcie/h2d/size:1073741824/iterations:1/manual_time";
  const Profile p = profile_from_benchmark_json(bench_output({small, big}));
  ASSERT_EQ(p.ceilings.size(), 1u);
  EXPECT_DOUBLE_EQ(p.ceilings[0].value, 55.1e9);
  ASSERT_TRUE(p.ceilings[0].detail.contains("sweep"));
  EXPECT_EQ(p.ceilings[0].detail["sweep"][0]["size"], 4096);
  // PCIe datasheet value is the Gen5 x16 link after encoding.
  EXPECT_NEAR(*p.ceilings[0].datasheet, 63.0e9, 0.1e9);
  // A sweep point is checked as a ceiling is: one that no GPU reaches (a timing fault) is its case's error,
  // not a point shown beside the ceiling.
  json absurd = small;
  absurd["name"] = "pcie/h2d/size:65536/iterations:1/manual_time";
  absurd["bytes_per_second"] = 1e30;
  const Profile q = profile_from_benchmark_json(bench_output({small, absurd, big}));
  ASSERT_EQ(q.ceilings.size(), 1u);
  ASSERT_EQ(q.ceilings[0].detail["sweep"].size(), 1u);
  EXPECT_EQ(q.ceilings[0].detail["sweep"][0]["size"], 4096);
  ASSERT_EQ(q.errors.size(), 1u);
  EXPECT_EQ(q.errors[0].name, "pcie.h2d");
  EXPECT_NE(q.errors[0].reason.find("size:65536"), std::string::npos) << q.errors[0].reason;
  EXPECT_NE(q.errors[0].reason.find("beyond any GPU"), std::string::npos) << q.errors[0].reason;
}

// A sustained case's timeline_<k>_<field> counters become one array in the detail, in bin order
// (Google Benchmark writes counters sorted by name: timeline_10 before timeline_2).
TEST(BenchJson, TimelineCountersBecomeOneArrayInBinOrder) {
  json c = hbm_case("t:1", 4.3e12);
  c["name"] = "gemm/bf16_sustained/iterations:1/manual_time";
  c.erase("bytes_per_second");
  c["flop_per_second"] = 7.4e14;
  for (int k = 0; k < 12; ++k) {
    const std::string p = "timeline_" + std::to_string(k) + "_";
    c[p + "start_s"] = k;
    c[p + "end_s"] = k + 1;
    c[p + "rate"] = 7.8e14 - k * 1e13;
    c[p + "power_w"] = 700.0;
  }
  c["timeline_3_sm_clock_hz"] = 1.755e9;
  c["timeline_4_rate"] = "@NaN@";  // non-finite: named, and left out of its bin
  std::string text = bench_output({c}).dump();
  text.replace(text.find("\"@NaN@\""), 7, "NaN");
  const Profile p = profile_from_benchmark_json(parse_benchmark_json_text(text, "test"));
  ASSERT_EQ(p.ceilings.size(), 1u);
  const json& d = p.ceilings[0].detail;
  ASSERT_TRUE(d.contains("timeline"));
  ASSERT_EQ(d["timeline"].size(), 12u);
  EXPECT_EQ(d["timeline"][2]["start_s"], 2);
  EXPECT_DOUBLE_EQ(d["timeline"][11]["rate"].get<double>(), 6.7e14);
  EXPECT_DOUBLE_EQ(d["timeline"][3]["sm_clock_hz"].get<double>(), 1.755e9);
  EXPECT_FALSE(d["timeline"][4].contains("rate"));
  EXPECT_EQ(d["nonfinite_counters"], json({"timeline_4_rate"}));
  for (const auto& [key, value] : d.items()) EXPECT_EQ(key.rfind("timeline_", 0), std::string::npos) << key;
}

TEST(BenchJson, PeerLoopbackSelfCheckIsNeverACeiling) {
  // ceilings-bench --ceilings_p2p_loopback: device-local copies through the peer code, candidate 0.
  json uni = hbm_case("engine:ce/op:write", 1.9e12), bidir = hbm_case("engine:sm/op:read", 2.1e12);
  uni["name"] = "nvlink_loopback/p2p_uni/engine:ce/op:write/iterations:1/manual_time";
  bidir["name"] = "nvlink_loopback/p2p_bidir/engine:sm/op:read/iterations:1/manual_time";
  for (json* b : {&uni, &bidir}) (*b)["candidate"] = 0;
  const Profile p = profile_from_benchmark_json(bench_output({uni, bidir}));
  EXPECT_TRUE(p.ceilings.empty());
  EXPECT_TRUE(p.errors.empty());
}

TEST(BenchJson, AggregatesAreIgnoredAndRepetitionsUseTheMedian) {
  json r1 = hbm_case("t:1", 4.1e12), r2 = hbm_case("t:1", 4.3e12), r3 = hbm_case("t:1", 4.2e12);
  json agg = hbm_case("t:1", 9e12);
  agg["run_type"] = "aggregate";
  agg["aggregate_name"] = "max";
  const Profile p = profile_from_benchmark_json(bench_output({r1, r2, r3, agg}));
  ASSERT_EQ(p.ceilings.size(), 1u);
  EXPECT_DOUBLE_EQ(p.ceilings[0].value, 4.2e12);
  // Four repetitions: the worse of the middle two (4.2 of 4.2 and 4.25), one repetition's own value, not 4.225.
  json r4 = hbm_case("t:1", 4.25e12);
  const Profile even = profile_from_benchmark_json(bench_output({r1, r2, r3, r4}));
  ASSERT_EQ(even.ceilings.size(), 1u);
  EXPECT_DOUBLE_EQ(even.ceilings[0].value, 4.2e12);
}

TEST(BenchJson, RejectsOutputNotFromCeilingsBench) {
  json doc = bench_output({hbm_case("t:1", 4.3e12)});
  doc["context"].erase(kContextDevice);
  EXPECT_THROW(profile_from_benchmark_json(doc), InputError);
  doc = bench_output({hbm_case("t:1", 4.3e12)});
  doc["context"][kContextDevice] = "{not json";
  EXPECT_THROW(profile_from_benchmark_json(doc), InputError);
}

namespace {

// Google Benchmark compiles --benchmark_filter as POSIX extended: std::regex with the `extended` grammar
// (this build: -std=c++17 is strict, as Google Benchmark's own build is) or regcomp(REG_EXTENDED).
bool std_regex_matches(const std::string& re, const std::string& name) {
  return std::regex_search(name, std::regex(re, std::regex_constants::extended));
}
bool posix_regex_matches(const std::string& re, const std::string& name) {
  regex_t r;
  if (regcomp(&r, re.c_str(), REG_EXTENDED | REG_NOSUB) != 0) throw std::runtime_error("regcomp failed: " + re);
  const bool m = regexec(&r, name.c_str(), 0, nullptr, 0) == 0;
  regfree(&r);
  return m;
}

}  // namespace

// The per-family filter of `ceilings measure` selects exactly the listed names in both regex flavours,
// whatever characters a name holds (real names have '/', ':', '.', '_'; the rest guards later names).
TEST(BenchJson, ExactFilterSelectsExactlyTheNamesInBothRegexFlavours) {
  const std::vector<std::string> names{"l2/read/l2_fraction:0.25/bpsm:2/threads:1024/iterations:1/manual_time",
                                       "gemm/fp8_e4m3/m:8192/n:8192/k:8192",
                                       "odd/a.b+c*d?e(f)g[h]i{j}k|l^m$n\\o/p:q-r,s t=u"};
  const std::string re = exact_benchmark_filter(names);
  for (const auto& n : names) {
    EXPECT_NO_THROW(EXPECT_TRUE(std_regex_matches(re, n)) << re << " " << n) << re;
    EXPECT_TRUE(posix_regex_matches(re, n)) << re << " " << n;
  }
  // Neither a longer name, a shorter one, nor one a '.' would wildcard.
  for (const std::string other : {"l2/read/l2_fraction:0.25/bpsm:2/threads:1024/iterations:1/manual_time/x",
                                  "x/l2/read/l2_fraction:0.25/bpsm:2/threads:1024/iterations:1/manual_time",
                                  "l2/read/l2_fraction:0x25/bpsm:2/threads:1024/iterations:1/manual_time",
                                  "gemm/fp8_e4m3/m:8192/n:8192", "odd/a.b+c*d?e(f)g[h]i{j}k|l^m$n\\o/p:q-r,s t=",
                                  "odd/aXb+c*d?e(f)g[h]i{j}k|l^m$n\\o/p:q-r,s t=u"}) {
    EXPECT_FALSE(std_regex_matches(re, other)) << other;
    EXPECT_FALSE(posix_regex_matches(re, other)) << other;
  }
  // Escapes only where ERE needs them: a backslash before ']', '}', '/' or ':' is an error for std::regex.
  const std::string one = exact_benchmark_filter({"a]b}c/d:e"});
  EXPECT_EQ(one, "^(a]b}c/d:e)$");
  EXPECT_NO_THROW(std::regex(one, std::regex_constants::extended));
}

TEST(BenchJson, GemmCeilingsKeepTheTableOrderWhateverOrderTheyRanIn) {
  // ceilings-bench runs the most wanted GEMM types first (bf16, fp8_e4m3, int8, ...; the searches before the
  // sustained runs); the profile lists GEMM ceilings in the type table's order, and others where they ran.
  auto gemm_case = [](const std::string& name, const char* counter) {
    json c = hbm_case("x:1", 1);
    c.erase("bytes_per_second");
    c["name"] = name + "/manual_time";
    c["run_name"] = name + "/manual_time";
    c[counter] = 1e14;
    return c;
  };
  auto failed = [](const std::string& name, const std::string& message) {
    return json{{"name", name + "/manual_time"}, {"run_type", "iteration"}, {"error_occurred", true},
                {"error_message", message}};
  };
  const Profile p = profile_from_benchmark_json(bench_output(
      {hbm_case("t:1", 4.3e12), gemm_case("gemm/bf16", "flop_per_second"),
       gemm_case("gemm/bf16_ref8192/m:8192/n:8192/k:8192", "flop_per_second"), gemm_case("gemm/int8", "op_per_second"),
       failed("gemm/fp16", "verification failed"), failed("gemm/fp8_e5m2", "unsupported: no kernel"),
       failed("gemm/tf32", "cublasLtMatmul failed"), gemm_case("gemm/fp64", "flop_per_second"),
       failed("gemm/fp64_ref8192/m:8192/n:8192/k:8192", "unsupported: no memory"),
       gemm_case("gemm/bf16_sustained/window_s:15", "flop_per_second"),
       gemm_case("gemm/fp64_sustained/window_s:15", "flop_per_second")}));
  std::vector<std::string> names;
  for (const Ceiling& c : p.ceilings) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"hbm.copy", "gemm.fp64", "gemm.fp64_sustained", "gemm.bf16",
                                             "gemm.bf16_ref8192", "gemm.bf16_sustained", "gemm.int8"}));
  ASSERT_EQ(p.errors.size(), 2u);
  EXPECT_EQ(p.errors[0].name, "gemm.tf32");
  EXPECT_EQ(p.errors[1].name, "gemm.fp16");
  ASSERT_EQ(p.skipped.size(), 2u);
  EXPECT_EQ(p.skipped[0].name, "gemm.fp64_ref8192");
  EXPECT_EQ(p.skipped[1].name, "gemm.fp8_e5m2");
}

namespace {
json renamed(json b, const std::string& name, const char* value_key, double value) {
  b.erase("bytes_per_second");
  b["name"] = name;
  b["run_name"] = name;
  b[value_key] = value;
  return b;
}
}  // namespace

// The 8192^3 reference is a variant of gemm.<type> too: measured faster than the search's winner, it is
// the attainable peak (and stays its own ceiling); it never stands in for a search that failed.
TEST(BenchJson, TheReferenceShapeCompetesForTheTypesCeiling) {
  const json search = renamed(hbm_case("x:1", 1), "gemm/bf16/iterations:1/manual_time", "flop_per_second", 7.90e14);
  const json ref = renamed(hbm_case("x:1", 1), "gemm/bf16_ref8192/iterations:1/manual_time", "flop_per_second", 8.05e14);
  Profile p = profile_from_benchmark_json(bench_output({search, ref}));
  ASSERT_NE(p.find("gemm.bf16"), nullptr);
  EXPECT_DOUBLE_EQ(p.find("gemm.bf16")->value, 8.05e14);
  EXPECT_EQ(p.find("gemm.bf16")->detail["benchmark"], "gemm/bf16_ref8192");
  EXPECT_EQ(p.find("gemm.bf16")->detail["candidates"], 2);
  ASSERT_NE(p.find("gemm.bf16_ref8192"), nullptr);
  EXPECT_DOUBLE_EQ(p.find("gemm.bf16_ref8192")->value, 8.05e14);
  // The search faster: it stays the ceiling.
  p = profile_from_benchmark_json(bench_output({renamed(search, search["name"], "flop_per_second", 8.2e14), ref}));
  EXPECT_DOUBLE_EQ(p.find("gemm.bf16")->value, 8.2e14);
  EXPECT_EQ(p.find("gemm.bf16")->detail["benchmark"], "gemm/bf16");
  // The search failed: gemm.bf16 is its error, not the reference's number.
  const json failed = {{"name", "gemm/bf16/iterations:1/manual_time"},
                       {"run_type", "iteration"},
                       {"error_occurred", true},
                       {"error_message", "no bf16 GEMM configuration verified"}};
  p = profile_from_benchmark_json(bench_output({failed, ref}));
  EXPECT_EQ(p.find("gemm.bf16"), nullptr);
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].name, "gemm.bf16");
  ASSERT_NE(p.find("gemm.bf16_ref8192"), nullptr);
}

// The PCIe link in the device section: the best generation read under load (the sweep points count, so a
// failed ceiling case still raises an idle reading), and the narrowest width (a link that lost lanes).
TEST(BenchJson, PcieLinkIsTheBestGenerationAndTheNarrowestWidth) {
  auto pcie = [](const std::string& name, int gen, int width, bool candidate) {
    json b = hbm_case("x:1", 5.5e10);
    b["name"] = name;
    b["run_name"] = name;
    b["pcie_gen"] = gen;
    b["pcie_width"] = width;
    if (!candidate) b["candidate"] = 0;
    return b;
  };
  json doc = bench_output({pcie("pcie/h2d/size:1073741824/iterations:1/manual_time", 5, 8, true)});
  Profile p = profile_from_benchmark_json(doc);
  EXPECT_EQ(p.device.pcie.width.value_or(0), 8) << "the start's x16, then x8 under load: x8";
  EXPECT_EQ(p.device.pcie.gen.value_or(0), 5);

  // The ceiling case failed; its sweep points read Gen5 while the start (idle) read Gen1.
  json device = json::parse(doc["context"][kContextDevice].get<std::string>());
  device["pcie"]["gen"] = 1;
  const json failed = {{"name", "pcie/h2d/iterations:1/manual_time"},
                       {"run_type", "iteration"},
                       {"error_occurred", true},
                       {"error_message", "verification failed: 3 words differ"}};
  doc = bench_output({pcie("pcie/h2d/size:4096/iterations:1/manual_time", 5, 16, false), failed});
  doc["context"][kContextDevice] = device.dump();
  p = profile_from_benchmark_json(doc);
  EXPECT_EQ(p.device.pcie.gen.value_or(0), 5);
  EXPECT_EQ(p.device.pcie.width.value_or(0), 16);
  // Its error says why there is no pcie.h2d: no "sweep only" skip beside it.
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].name, "pcie.h2d");
  EXPECT_TRUE(p.skipped.empty()) << p.skipped[0].reason;

  // A reading no link can have (x3, Gen 9) is not a reading: the profile stays one its reader accepts.
  doc = bench_output({pcie("pcie/h2d/size:1073741824/iterations:1/manual_time", 9, 3, true)});
  p = profile_from_benchmark_json(doc);
  EXPECT_EQ(p.device.pcie.width.value_or(0), 16);
  EXPECT_EQ(p.device.pcie.gen.value_or(0), 5);
  EXPECT_NO_THROW(profile_from_json(profile_to_json(p)));
  // Nor is one past the most the GPU and its slot allow (Gen7 on a Gen5 slot, max_gen 5)
  doc = bench_output({pcie("pcie/h2d/size:1073741824/iterations:1/manual_time", 7, 16, true)});
  EXPECT_EQ(profile_from_benchmark_json(doc).device.pcie.gen.value_or(0), 5);

  // A ceiling case skipped as unsupported says why there is no ceiling: no "sweep only" beside it either.
  const json unsupported = {{"name", "pcie/h2d/iterations:1/manual_time"},
                            {"run_type", "iteration"},
                            {"error_occurred", true},
                            {"error_message", "unsupported: no pinned memory"}};
  p = profile_from_benchmark_json(
      bench_output({pcie("pcie/h2d/size:4096/iterations:1/manual_time", 5, 16, false), unsupported}));
  ASSERT_EQ(p.skipped.size(), 1u);
  EXPECT_NE(p.skipped[0].reason.find("no pinned memory"), std::string::npos) << p.skipped[0].reason;
}
