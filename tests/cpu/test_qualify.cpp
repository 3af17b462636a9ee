// Tests for `ceilings qualify`: verdict combinations and exit codes, clock scaling, baselines,
// health checks, output formats, and the hand-degraded fixtures (each fails for its own reason).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <set>

#include "ceilings/datasheet.hpp"
#include "ceilings/qualify.hpp"
#include "ceilings/transfer.hpp"
#include "cli_runner.hpp"

namespace ceilings {
namespace {

const std::string kFixtures = std::string(CEILINGS_FIXTURES) + "/profiles";

Profile fixture(const std::string& name = "h200-qualify") { return read_profile(kFixtures + "/" + name + ".profile.json"); }

Ceiling& ceiling(Profile& p, const std::string& name) {
  for (Ceiling& c : p.ceilings)
    if (c.name == name) return c;
  throw std::runtime_error("no " + name);
}

// An nvlink.p2p_uni ceiling (an H200's 450 GB/s one way as its datasheet) of `value`, its detail after the benchmark
// name `detail`, added to `p` (a copy of its hbm.copy with the name, unit and figures of a peer ceiling).
Ceiling& add_peer_ceiling(Profile& p, double value, const json& detail) {
  Ceiling uni = ceiling(p, "hbm.copy");
  uni.name = "nvlink.p2p_uni";
  uni.value = value;
  uni.unit = "B/s";
  uni.datasheet = 450e9;
  uni.detail = {{"benchmark", "nvlink/p2p_uni/engine:ce/op:write"}};
  uni.detail.update(detail);
  p.ceilings.push_back(uni);
  return p.ceilings.back();
}

// (subject/rule) of every check with this status.
std::set<std::string> with_status(const QualifyResult& r, CheckStatus s) {
  std::set<std::string> out;
  for (const Check& c : r.checks)
    if (c.status == s) out.insert(c.subject + "/" + c.rule);
  return out;
}

const Check& find_check(const QualifyResult& r, const std::string& subject, const std::string& rule) {
  for (const Check& c : r.checks)
    if (c.subject == subject && c.rule == rule) return c;
  throw std::runtime_error("no check " + subject + "/" + rule);
}

TEST(Qualify, HealthyFixturePassesItsDefaults) {
  const QualifyResult r = qualify(fixture(), nullptr, default_rules());
  EXPECT_EQ(r.verdict(), CheckStatus::kPass);
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_TRUE(with_status(r, CheckStatus::kFail).empty());
  EXPECT_TRUE(with_status(r, CheckStatus::kIncomplete).empty());
  const Check& hbm = find_check(r, "hbm.copy", "datasheet fraction");
  EXPECT_DOUBLE_EQ(*hbm.threshold, 0.85 * 4.8e12);  // memory clock at its maximum: unscaled
  EXPECT_NE(hbm.source.find("85% of datasheet H200"), std::string::npos);
  const Check& pcie = find_check(r, "pcie.h2d", "datasheet fraction");
  EXPECT_NEAR(*pcie.threshold, 0.80 * 32e9 * 128 / 130 / 8 * 16, 1e3);
  EXPECT_NE(pcie.source.find("PCIe Gen5 x16 theoretical"), std::string::npos);
}

// A rate far above its datasheet figure is a timing or counting fault (a CLI probe had qualify pass hbm.copy at
// 500% of the datasheet); a little above it, as a GEMM at a clock over the one its peak is quoted at, passes.
TEST(Qualify, ARateFarAboveItsDatasheetFails) {
  Profile p = fixture();
  ceiling(p, "hbm.copy").value = 2.4e13;  // 500% of 4.8 TB/s
  ceiling(p, "gemm.bf16").value = 1.05e15;  // 106% of 989 TFLOP/s: 1.98 GHz against the quoted 1.83
  const QualifyResult r = qualify(p, nullptr, default_rules());
  const Check& hbm = find_check(r, "hbm.copy", "datasheet fraction");
  EXPECT_EQ(hbm.status, CheckStatus::kFail);
  EXPECT_NE(hbm.reason.find("500.0% of datasheet H200"), std::string::npos) << hbm.reason;
  EXPECT_NE(hbm.reason.find("a timing or counting fault"), std::string::npos) << hbm.reason;
  EXPECT_EQ(find_check(r, "gemm.bf16", "datasheet fraction").status, CheckStatus::kPass);
  EXPECT_EQ(r.exit_code(), 1);
  // HBM and PCIe figures are physical limits: 123% of 4.8 TB/s passed under the compute peaks' 125%.
  ceiling(p, "hbm.copy").value = 4.75e12;
  ceiling(p, "hbm.read").value = 5.9e12;
  const QualifyResult q = qualify(p, nullptr, default_rules());
  const Check& read = find_check(q, "hbm.read", "datasheet fraction");
  EXPECT_EQ(read.status, CheckStatus::kFail);
  EXPECT_NE(read.reason.find("above the 105%"), std::string::npos) << read.reason;
  EXPECT_EQ(find_check(q, "hbm.copy", "datasheet fraction").status, CheckStatus::kPass);  // 99%
}

TEST(Qualify, BidirectionalPcieIsJudgedAgainstBothDirections) {
  Profile p = fixture();
  Ceiling sm = ceiling(p, "pcie.h2d");
  sm.name = "pcie.bidir_sm";
  sm.value = 95e9;
  p.ceilings.push_back(sm);
  Rules rules = default_rules();
  rules.ceilings["pcie.bidir_sm"].min_fraction_of_datasheet = 0.70;
  const Check c = find_check(qualify(p, nullptr, rules), "pcie.bidir_sm", "datasheet fraction");
  EXPECT_NEAR(*c.threshold, 0.70 * 2 * 32e9 * 128 / 130 / 8 * 16, 1e3);  // 88 GB/s: both directions
  EXPECT_NE(c.source.find("(both directions)"), std::string::npos) << c.source;
}

// A Gen4 link carries a smaller share of its theoretical rate than Gen5 (A100, RTX 4090: 24-26 GB/s of 31.5): the
// default fractions are 70% one way and 50% both ways there; a rules file's own fraction stands.
TEST(Qualify, AGen4LinkIsHeldToLowerDefaultFractions) {
  Profile p = fixture();
  p.device.pcie.max_gen = 4;
  p.device.pcie.gen = 4;
  const double gen4 = 16e9 * 128 / 130 / 8 * 16;  // 31.5 GB/s
  ceiling(p, "pcie.h2d").value = 0.76 * gen4;
  Ceiling bidir = ceiling(p, "pcie.h2d");
  bidir.name = "pcie.bidir";
  bidir.value = 0.57 * 2 * gen4;  // 11 + 25 GB/s
  p.ceilings.push_back(bidir);
  const QualifyResult r = qualify(p, nullptr, default_rules());
  const Check& h2d = find_check(r, "pcie.h2d", "datasheet fraction");
  EXPECT_EQ(h2d.status, CheckStatus::kPass) << h2d.reason;
  EXPECT_NEAR(*h2d.threshold, 0.70 * gen4, 1e3);
  EXPECT_NE(h2d.source.find("70% of PCIe Gen4 x16 theoretical"), std::string::npos) << h2d.source;
  const Check& both = find_check(r, "pcie.bidir", "datasheet fraction");
  EXPECT_EQ(both.status, CheckStatus::kPass) << both.reason;
  EXPECT_NEAR(*both.threshold, 0.50 * 2 * gen4, 1e3);
  Rules strict = default_rules();
  strict.ceilings["pcie.h2d"].min_fraction_of_datasheet = 0.80;  // as a rules file sets it
  strict.ceilings["pcie.h2d"].fraction_is_default = false;
  EXPECT_EQ(find_check(qualify(p, nullptr, strict), "pcie.h2d", "datasheet fraction").status, CheckStatus::kFail);
  const Rules parsed = parse_rules(json::parse(R"({"schema":"ceilings.rules/1","ceilings":{"pcie.h2d":
      {"min_fraction_of_datasheet":"80%"}}})"), "test");
  EXPECT_FALSE(parsed.ceilings.at("pcie.h2d").fraction_is_default);
  EXPECT_TRUE(parsed.ceilings.at("pcie.d2h").fraction_is_default);
  // No link reading and no PCIe figure in the table (a GPU it does not know): incomplete, saying which is missing.
  Profile unread = fixture();
  unread.device.pcie = PcieInfo{};
  unread.device.name = "NVIDIA Unknown GPU";
  const Check none = find_check(qualify(unread, nullptr, default_rules()), "pcie.h2d", "datasheet fraction");
  EXPECT_EQ(none.status, CheckStatus::kIncomplete);
  EXPECT_NE(none.reason.find("no PCIe link reading in the profile"), std::string::npos) << none.reason;
  // Gen5 keeps 80%.
  EXPECT_NEAR(*find_check(qualify(fixture(), nullptr, default_rules()), "pcie.h2d", "datasheet fraction").threshold,
              0.80 * 2 * gen4, 1e3);
}

// A GH200's GPU reaches its host over NVLink-C2C (450 GB/s each way), not PCIe: its host<->device copies are
// judged against that, and no PCIe link or slot is judged.
TEST(Qualify, AGraceSuperchipsHostLinkIsNvlinkC2c) {
  Profile p = fixture();
  p.device.name = "NVIDIA GH200 480GB";
  ceiling(p, "pcie.h2d").value = 346e9;
  const QualifyResult r = qualify(p, nullptr, default_rules());
  const Check& h2d = find_check(r, "pcie.h2d", "datasheet fraction");
  EXPECT_EQ(h2d.status, CheckStatus::kPass) << h2d.reason;  // 77% of 450 GB/s
  EXPECT_NEAR(*h2d.threshold, 0.60 * 450e9, 1e3);
  Ceiling d2h = ceiling(p, "pcie.h2d"), both = ceiling(p, "pcie.h2d");
  d2h.name = "pcie.d2h";
  d2h.value = 300e9;  // published: about 15% below host to device
  both.name = "pcie.bidir";
  both.value = 440e9;  // published: about half of 900
  p.ceilings.push_back(d2h);
  p.ceilings.push_back(both);
  const QualifyResult all = qualify(p, nullptr, default_rules());
  EXPECT_EQ(find_check(all, "pcie.d2h", "datasheet fraction").status, CheckStatus::kPass);
  EXPECT_EQ(find_check(all, "pcie.bidir", "datasheet fraction").status, CheckStatus::kPass);
  EXPECT_NEAR(*find_check(all, "pcie.bidir", "datasheet fraction").threshold, 0.40 * 900e9, 1e3);
  EXPECT_NE(h2d.source.find("NVLink-C2C (datasheet GH200"), std::string::npos) << h2d.source;
  for (const Check& c : r.checks) {
    EXPECT_NE(c.rule, "PCIe link");
    EXPECT_NE(c.rule, "PCIe slot");
  }
  const GpuSpec* gh200 = find_gpu("GH200");
  ASSERT_NE(gh200, nullptr);
  EXPECT_EQ(datasheet_value(*gh200, "pcie.h2d", json::object()), 450e9);
  EXPECT_EQ(datasheet_value(*gh200, "pcie.bidir", json::object()), 900e9);
  EXPECT_EQ(datasheet_value(*gh200, "pcie.h2d_pageable", json::object()), std::nullopt);
  // A MIG instance of it shares its host link (review 97: its copies were judged as 555% of PCIe Gen5 x16), though
  // not its compute or memory figures.
  Profile mig = p;
  mig.device.name = "NVIDIA GH200 480GB MIG 3g.48gb";
  mig.device.mig = true;
  mig.device.sm_count = 60;
  Ceiling sm = ceiling(p, "pcie.h2d");
  sm.name = "pcie.h2d_sm";
  sm.value = 350e9;
  mig.ceilings.push_back(sm);
  EXPECT_EQ(find_gpu(mig.device.name), nullptr);
  ASSERT_EQ(find_gpu_board(mig.device.name), gh200);
  EXPECT_EQ(find_gpu_board("NVIDIA H200 MIG 1c.2g.35gb"), find_gpu("NVIDIA H200"));
  EXPECT_EQ(find_gpu_board("NVIDIA H200 MIG 1g.18gb+me"), find_gpu("NVIDIA H200"));
  EXPECT_EQ(find_gpu_board("NVIDIA H200 MIG 1g.18gb-me"), find_gpu("NVIDIA H200"));
  EXPECT_EQ(find_gpu_board("NVIDIA H200 MIGHTY"), nullptr);
  const QualifyResult instance = qualify(mig, nullptr, default_rules());
  bool judged_link = false;
  for (const Check& c : instance.checks) {
    if (c.subject.rfind("pcie.", 0) == 0) {
      EXPECT_NE(c.status, CheckStatus::kFail) << c.subject << " " << c.rule << ": " << c.reason;
      EXPECT_EQ(c.source.find("PCIe Gen"), std::string::npos) << c.subject << " " << c.rule << ": " << c.source;
      judged_link = judged_link || c.source.find("NVLink-C2C (datasheet GH200") != std::string::npos;
    }
    EXPECT_NE(c.rule, "PCIe link");
    EXPECT_NE(c.rule, "PCIe slot");
  }
  EXPECT_TRUE(judged_link);
}

// A GPU in the datasheet table whose datasheet publishes no figure for a ceiling (L40S: no FP64) gets no datasheet
// row for it, rather than an incomplete one that no table entry could complete; an unknown GPU still does.
TEST(Qualify, APublishedDatasheetWithoutAFigureJudgesNothing) {
  Profile p = fixture();
  p.device.name = "NVIDIA L40S";
  Ceiling fp64 = ceiling(p, "gemm.bf16");
  fp64.name = "gemm.fp64";
  fp64.value = 1.4e12;
  fp64.datasheet.reset();
  p.ceilings.push_back(fp64);
  const QualifyResult r = qualify(p, nullptr, default_rules());
  EXPECT_THROW(find_check(r, "gemm.fp64", "datasheet fraction"), std::runtime_error);
  // A fraction the user set is not dropped: its row says why it cannot be judged.
  Rules mine = default_rules();
  mine.ceilings["gemm.fp64"].min_fraction_of_datasheet = 0.5;
  mine.ceilings["gemm.fp64"].fraction_is_default = false;
  const Check asked = find_check(qualify(p, nullptr, mine), "gemm.fp64", "datasheet fraction");
  EXPECT_EQ(asked.status, CheckStatus::kIncomplete);
  EXPECT_NE(asked.reason.find("its datasheet publishes none"), std::string::npos) << asked.reason;
  EXPECT_EQ(find_check(r, "gemm.bf16", "datasheet fraction").source.find("datasheet L40S") != std::string::npos, true);
  p.device.name = "NVIDIA Unknown GPU";
  const Check unknown = find_check(qualify(p, nullptr, default_rules()), "gemm.fp64", "datasheet fraction");
  EXPECT_EQ(unknown.status, CheckStatus::kIncomplete);
  EXPECT_NE(unknown.reason.find("add the GPU to the datasheet table"), std::string::npos) << unknown.reason;
}

// Under the GPU's own power cap a compute bar follows the SM clock, floored (see
// APowerCappedClockLowersTheBarByAtMostFifteenPercent); any other low clock is not excused
// (ALowClockWithoutThePowerCapIsNotExcused).
TEST(Qualify, ComputeThresholdFollowsAPowerCappedClockWithAFloor) {
  Profile p = fixture();
  // The H200's bf16 figure, 989 TFLOP/s, is 132 SMs x 4096 FLOP a clock at 1.83 GHz (not its 1.98 GHz boost, at
  // which its fp64 and fp32 figures are quoted): a bf16 GEMM the power cap held at 1.755 GHz is held to
  // 1.755 / 1.83 of it.
  ceiling(p, "gemm.bf16").detail["throttle_reasons"] = 0x4;
  const Check g = find_check(qualify(p, nullptr, default_rules()), "gemm.bf16", "datasheet fraction");
  EXPECT_NEAR(*g.threshold, 0.70 * 9.89e14 * 1.755 / 1.83, 1e9);
  EXPECT_NE(g.source.find("scaled to the SM clock"), std::string::npos);
  EXPECT_NE(g.source.find("the clock the datasheet's tensor-core figures imply"), std::string::npos) << g.source;
  ceiling(p, "gemm.bf16").telemetry.sm_clock_hz = 1.9e9;  // above the tensor figures' clock: no scaling
  const Check fast = find_check(qualify(p, nullptr, default_rules()), "gemm.bf16", "datasheet fraction");
  EXPECT_NEAR(*fast.threshold, 0.70 * 9.89e14, 1e9);
  EXPECT_EQ(fast.source.find("scaled"), std::string::npos) << fast.source;
  // fp64's 67 TFLOP/s is 132 x 256 FLOP a clock at 1.98 GHz: a capped DGEMM at 1.755 GHz is scaled by the boost
  // clock (0.886, above the 85% floor).
  Ceiling fp64 = ceiling(p, "gemm.bf16");
  fp64.name = "gemm.fp64";
  fp64.value = 5.5e13;
  fp64.datasheet = 6.7e13;
  fp64.telemetry.sm_clock_hz = 1.755e9;
  p.ceilings.push_back(fp64);
  const Check dgemm = find_check(qualify(p, nullptr, default_rules()), "gemm.fp64", "datasheet fraction");
  EXPECT_NEAR(*dgemm.threshold, 0.80 * 6.7e13 * 1.755 / 1.98, 1e8);
  EXPECT_EQ(dgemm.source.find("tensor-core"), std::string::npos) << dgemm.source;
  ceiling(p, "gemm.bf16").telemetry.sm_clock_hz = 0.5e9;  // capped far down: the floor keeps the bar up
  const Check low = find_check(qualify(p, nullptr, default_rules()), "gemm.bf16", "datasheet fraction");
  EXPECT_NEAR(*low.threshold, 0.70 * 9.89e14 * 0.85, 1e9);
  EXPECT_NE(low.source.find("floored at 85%"), std::string::npos) << low.source;
  ceiling(p, "gemm.bf16").telemetry.available = false;
  const Check none = find_check(qualify(p, nullptr, default_rules()), "gemm.bf16", "datasheet fraction");
  EXPECT_NEAR(*none.threshold, 0.70 * 9.89e14, 1e9);
  EXPECT_NE(none.source.find("clock not recorded"), std::string::npos);
}

// A clock held low by application clocks (nvidia-smi -ac/-lgc), sync boost or a clock that did not boost is the
// fault being looked for, not an operating point: an H200 whose GEMMs ran at 1.30 GHz under application clocks
// (560 TFLOP/s, 57% of 989) passed against a bar scaled to 1.30 / 1.83 (492 TFLOP/s).
TEST(Qualify, ALowClockWithoutThePowerCapIsNotExcused) {
  Profile p = fixture();
  Ceiling& g = ceiling(p, "gemm.bf16");
  g.value = 5.6e14;
  g.telemetry.sm_clock_hz = 1.30e9;
  g.detail["throttle_reasons"] = 0x2;  // applications_clocks_setting
  const std::string why = "the SM clock was 1.30 GHz of the quoted 1.83 GHz with no power cap (an application-clock "
                          "or sync-boost limit, or a clock that did not boost)";
  QualifyResult r = qualify(p, nullptr, default_rules());
  const Check& k = find_check(r, "gemm.bf16", "datasheet fraction");
  EXPECT_EQ(k.status, CheckStatus::kFail);
  EXPECT_NEAR(*k.threshold, 0.70 * 9.89e14, 1e9);  // 692 TFLOP/s: unscaled
  EXPECT_NE(k.source.find("unscaled: " + why), std::string::npos) << k.source;
  EXPECT_EQ(k.reason, "gemm.bf16 reaches 56.6% of the peak, below 70%: " + why);
  EXPECT_EQ(r.exit_code(), 1);
  // Sync boost, or no reason at all: the same bar.
  for (const int reasons : {0x10, 0x0}) {
    g.detail["throttle_reasons"] = reasons;
    const Check c = find_check(qualify(p, nullptr, default_rules()), "gemm.bf16", "datasheet fraction");
    EXPECT_EQ(c.status, CheckStatus::kFail) << reasons;
    EXPECT_NEAR(*c.threshold, 0.70 * 9.89e14, 1e9) << reasons;
  }
  // An older rules file's clock_scaling_floor still loads; it bounds only a power-capped scale.
  const Rules old = parse_rules(json::parse(R"({"schema":"ceilings.rules/1","clock_scaling_floor":"50%"})"), "old");
  EXPECT_NEAR(*find_check(qualify(p, nullptr, old), "gemm.bf16", "datasheet fraction").threshold, 0.70 * 9.89e14, 1e9);
  // Fast enough at that clock anyway (700 TFLOP/s): a pass, the note still in its source.
  g.value = 7.0e14;
  const Check ok = find_check(qualify(p, nullptr, default_rules()), "gemm.bf16", "datasheet fraction");
  EXPECT_EQ(ok.status, CheckStatus::kPass);
  EXPECT_NE(ok.source.find("with no power cap"), std::string::npos) << ok.source;
}

TEST(Qualify, SlowCeilingFails) {
  Profile p = fixture();
  ceiling(p, "hbm.copy").value = 3.9e12;
  const QualifyResult r = qualify(p, nullptr, default_rules());
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_EQ(with_status(r, CheckStatus::kFail), (std::set<std::string>{"hbm.copy/datasheet fraction"}));
  EXPECT_NE(find_check(r, "hbm.copy", "datasheet fraction").reason.find("81.2%"), std::string::npos);
}

// A sustained ceiling below its bar says whether it started slow or slowed down, and at what clock.
TEST(Qualify, AFailingSustainedCeilingSaysWhenItsRateFell) {
  Profile p = fixture();
  Ceiling sustained = ceiling(p, "gemm.bf16");
  sustained.name = "gemm.bf16_sustained";
  sustained.value = 3.0e14;
  sustained.detail["timeline"] = {
      {{"start_s", 0.0}, {"end_s", 1.0}, {"rate", 7.8e14}, {"sm_clock_hz", 1.98e9}},
      {{"start_s", 1.0}, {"end_s", 2.0}, {"rate", 5.1e14}, {"sm_clock_hz", 1.41e9}},
      {{"start_s", 2.0}, {"end_s", 3.3}, {"rate", 3.0e14}, {"sm_clock_hz", 0.99e9}}};
  p.ceilings.push_back(sustained);
  Rules rules = default_rules();
  rules.ceilings["gemm.bf16_sustained"].min = 6.0e14;
  const QualifyResult r = qualify(p, nullptr, rules);
  EXPECT_EQ(find_check(r, "gemm.bf16_sustained", "minimum").reason,
            "gemm.bf16_sustained below the minimum (it fell from 780 TFLOP/s in 0.0-1.0 s at 1.98 GHz to 300 TFLOP/s "
            "in 2.0-3.3 s at 990 MHz)");
  // Steady through the window (within 3%): nothing to add.
  Ceiling& s = ceiling(p, "gemm.bf16_sustained");
  s.detail["timeline"][1]["rate"] = 7.7e14;
  s.detail["timeline"][2]["rate"] = 7.6e14;
  EXPECT_EQ(find_check(qualify(p, nullptr, rules), "gemm.bf16_sustained", "minimum").reason,
            "gemm.bf16_sustained below the minimum");
}

// A clock the GPU's own power cap held down scales the bar by at most 15%: an H200 limited to 350 W that ran a
// bf16 GEMM at 1.10 GHz and 420 TFLOP/s (42% of its datasheet) passed when the 60% floor applied to it too.
// Memory bandwidth is not scaled at all: HBM's clock does not move under load.
TEST(Qualify, APowerCappedClockLowersTheBarByAtMostFifteenPercent) {
  Profile p = fixture();
  p.device.power_limit_w = 350;
  Ceiling& g = ceiling(p, "gemm.bf16");
  g.value = 4.2e14;
  g.telemetry.sm_clock_hz = 1.10e9;
  g.throttled = true;
  g.detail["throttle_reasons"] = 0x4;  // the software power cap
  QualifyResult r = qualify(p, nullptr, default_rules());
  const Check& capped = find_check(r, "gemm.bf16", "datasheet fraction");
  EXPECT_EQ(capped.status, CheckStatus::kFail);
  EXPECT_NEAR(*capped.threshold, 0.70 * 9.89e14 * 0.85, 1e9);
  EXPECT_NE(capped.source.find("floored at 85%: the GPU's own power cap held it down; its power limit is 350 W, "
                               "the datasheet's TDP 700 W"),
            std::string::npos)
      << capped.source;
  // A healthy H200 capped at 700 W under back-to-back GEMMs (its sustained bf16, 2026-11-30: 716 TFLOP/s at
  // 1.50 GHz) still passes.
  p.device.power_limit_w = 700;
  g.value = 7.16e14;
  g.telemetry.sm_clock_hz = 1.50e9;
  r = qualify(p, nullptr, default_rules());
  EXPECT_EQ(find_check(r, "gemm.bf16", "datasheet fraction").status, CheckStatus::kPass);
  EXPECT_EQ(find_check(r, "gemm.bf16", "datasheet fraction").source.find("power limit"), std::string::npos);
  // A user's floor above 85% stands; a site that caps power on purpose lowers the power-cap floor.
  Rules strict = default_rules();
  strict.clock_scaling_floor = 0.9;
  EXPECT_NEAR(*find_check(qualify(p, nullptr, strict), "gemm.bf16", "datasheet fraction").threshold,
              0.70 * 9.89e14 * 0.9, 1e9);
  const Rules capped_site = parse_rules(
      json::parse(R"({"schema":"ceilings.rules/1","power_cap_scaling_floor":"60%"})"), "site");
  EXPECT_NEAR(*find_check(qualify(p, nullptr, capped_site), "gemm.bf16", "datasheet fraction").threshold,
              0.70 * 9.89e14 * 1.50 / 1.83, 1e9);
  // HBM at 70% of its memory clock and 60% of its bandwidth fails: no scaling for memory.
  Ceiling& hbm = ceiling(p, "hbm.copy");
  hbm.value = 2.9e12;
  hbm.telemetry.mem_clock_hz = 0.7 * p.device.max_mem_clock_hz.value_or(3.2e9);
  const Check h = find_check(qualify(p, nullptr, default_rules()), "hbm.copy", "datasheet fraction");
  EXPECT_EQ(h.status, CheckStatus::kFail);
  EXPECT_DOUBLE_EQ(*h.threshold, 0.85 * 4.8e12);
}

const std::string kStoredH200 = std::string(CEILINGS_SOURCE_DIR) + "/results/nvidia-h200/h200.profile.json";

bool is_sustained(const Ceiling& c) {
  const std::string tail = "_sustained";
  return c.name.size() > tail.size() && c.name.compare(c.name.size() - tail.size(), tail.size(), tail) == 0;
}

// The stored healthy H200 passes every default check (the README's count, its power-limit and violation-time rows
// among them; it has no MIG or persistence-mode reading, so no row for either), its sustained GEMMs among them: held
// to their burst type's fraction at the power-capped clock, floored at 85% (bf16: 1.50 GHz / 1.83 = 82%).
TEST(Qualify, TheStoredH200PassesEveryDefaultCheck) {
  const QualifyResult r = qualify(read_profile(kStoredH200), nullptr, default_rules());
  EXPECT_EQ(r.exit_code(), 0);
  // 149 judged and one not: the kernel log's XIDs, which a profile of that ceilings did not record.
  EXPECT_EQ(r.checks.size(), 150u);
  // 0 s of board-limit and reliability time over its 191 s run, beside 107 s at its power cap (not judged).
  EXPECT_DOUBLE_EQ(*find_check(r, "health", "violation time").measured, 0);
  for (const Check& k : r.checks) EXPECT_TRUE(k.rule != "MIG mode" && k.rule != "persistence mode") << k.rule;
  for (const Check& k : r.checks)
    EXPECT_EQ(k.status, k.rule == "XIDs since boot" ? CheckStatus::kNotJudged : CheckStatus::kPass)
        << k.subject << " / " << k.rule << ": " << k.reason;
  EXPECT_NEAR(*find_check(r, "gemm.bf16_sustained", "datasheet fraction").threshold, 0.70 * 9.89e14 * 0.85, 1e9);  // 588
  EXPECT_NEAR(*find_check(r, "gemm.fp64_sustained", "datasheet fraction").threshold, 0.80 * 6.7e13 * 0.85, 1e8);
  EXPECT_NEAR(*find_check(r, "gemm.fp32_sustained", "datasheet fraction").threshold, 0.70 * 6.7e13 * 1.965 / 1.98,
              1e8);  // 99% of the boost clock: above the floor
  EXPECT_NEAR(*find_check(r, "gemm.fp8_e5m2", "datasheet fraction").threshold, 0.60 * 1.979e15, 1e9);
  EXPECT_NEAR(*find_check(r, "gemm.fp8_e5m2_sustained", "datasheet fraction").threshold, 0.60 * 1.979e15 * 0.85, 1e9);
  EXPECT_NEAR(*find_check(r, "gemm.bf16_ref8192", "plausible").threshold, 9.89e14 * 1.98 / 1.83 * 1.05, 1e9);
  EXPECT_NEAR(*find_check(r, "pcie.h2d_sm", "plausible").threshold, 1.05 * 32e9 * 128 / 130 / 8 * 16, 1e3);
}

// A run that left families out passed with nothing said of them: the ceilings the default rules would have judged
// on this GPU are named (not judged: the rows are what was measured), but none that a rule switched off, that has
// a row of its own (required), that was skipped with a reason, or that this GPU's datasheet has no figure for.
TEST(Qualify, CeilingsTheDefaultsWouldJudgeButTheRunLeftOutAreNamed) {
  Profile p = read_profile(kStoredH200);
  EXPECT_TRUE(qualify(p, nullptr, default_rules()).not_measured.empty());
  p.ceilings.erase(std::remove_if(p.ceilings.begin(), p.ceilings.end(),
                                  [](const Ceiling& c) {
                                    return c.name.rfind("gemm.fp64", 0) == 0 || c.name.rfind("fma.", 0) == 0 ||
                                           c.name == "hbm.copy";
                                  }),
                   p.ceilings.end());
  QualifyResult r = qualify(p, nullptr, default_rules());
  EXPECT_EQ(r.not_measured,
            (std::vector<std::string>{"fma.fp32", "fma.fp64", "gemm.fp64", "gemm.fp64_sustained"}));  // hbm.copy: a row
  EXPECT_EQ(find_check(r, "hbm.copy", "required").status, CheckStatus::kIncomplete);
  EXPECT_NE(render_qualify(r, Format::kTable).find("not measured, so not judged: fma.fp32, fma.fp64, gemm.fp64, "
                                                  "gemm.fp64_sustained (the default rules judge them"),
            std::string::npos);
  EXPECT_EQ(json::parse(render_qualify(r, Format::kJson))["not_measured"].size(), 4u);

  const Rules off = parse_rules(json::parse(R"({"schema": "ceilings.rules/1",
      "ceilings": {"fma.fp32": {"min_fraction_of_datasheet": false}}})"), "test");
  EXPECT_EQ(qualify(p, nullptr, off).not_measured,
            (std::vector<std::string>{"fma.fp64", "gemm.fp64", "gemm.fp64_sustained"}));
  // A fraction the file sets has a row of its own where the run lacks the ceiling; its sustained twin, which follows
  // it, is still named (review 92: it went without a word).
  const Rules fp64 = parse_rules(json::parse(R"({"schema": "ceilings.rules/1",
      "ceilings": {"gemm.fp64": {"min_fraction_of_datasheet": "85%"}}})"), "test");
  const QualifyResult set = qualify(p, nullptr, fp64);
  EXPECT_EQ(set.not_measured, (std::vector<std::string>{"fma.fp32", "fma.fp64", "gemm.fp64_sustained"}));
  EXPECT_EQ(find_check(set, "gemm.fp64", "rule applies").status, CheckStatus::kIncomplete);

  // The peer family is owed only where the run saw more than one GPU; skipped with a reason, it is not missing.
  p.skipped.clear();
  EXPECT_TRUE(qualify(p, nullptr, off).not_measured.size() == 3u);
  p.gpus_visible = 8;
  r = qualify(p, nullptr, off);
  EXPECT_EQ(r.not_measured, (std::vector<std::string>{"fma.fp64", "gemm.fp64", "gemm.fp64_sustained",
                                                      "nvlink.p2p_bidir", "nvlink.p2p_uni"}));

  // A GPU the datasheet table does not know: the defaults judge nothing of it, so nothing is owed.
  p.device.name = "NVIDIA Imaginary 9000";
  EXPECT_TRUE(qualify(p, nullptr, off).not_measured.empty());
}

// A sustained GEMM at half its burst rate under the power cap (a board that draws its cap at 45% of its clock)
// passed with no row judging it.
TEST(Qualify, ASustainedGemmIsHeldToItsBurstTypesFraction) {
  Profile p = read_profile(kStoredH200);
  for (Ceiling& c : p.ceilings)
    if (is_sustained(c)) {
      c.value *= 0.5;
      c.telemetry.sm_clock_hz = 0.9e9;
      c.detail["throttle_reasons"] = 0x4;  // the software power cap
    }
  QualifyResult r = qualify(p, nullptr, default_rules());
  EXPECT_EQ(r.exit_code(), 1);
  const Check& bf16 = find_check(r, "gemm.bf16_sustained", "datasheet fraction");
  EXPECT_EQ(bf16.status, CheckStatus::kFail);
  EXPECT_NEAR(*bf16.threshold, 0.70 * 9.89e14 * 0.85, 1e9);  // 358 TFLOP/s against 588
  EXPECT_NE(bf16.source.find("floored at 85%: the GPU's own power cap held it down"), std::string::npos) << bf16.source;
  const Check& fp64 = find_check(r, "gemm.fp64_sustained", "datasheet fraction");
  EXPECT_EQ(fp64.status, CheckStatus::kFail);  // 27.1 TFLOP/s against 0.80 x 67 x 0.85 = 45.6
  EXPECT_NEAR(*fp64.threshold, 0.80 * 6.7e13 * 0.85, 1e8);
  EXPECT_EQ(find_check(r, "gemm.fp8_e5m2_sustained", "datasheet fraction").status, CheckStatus::kFail);  // 693 < 1009
  // Under sync boost instead of the power cap: the bar is not scaled at all.
  for (Ceiling& c : p.ceilings)
    if (is_sustained(c)) c.detail["throttle_reasons"] = 0x10;
  r = qualify(p, nullptr, default_rules());
  const Check& sync = find_check(r, "gemm.bf16_sustained", "datasheet fraction");
  EXPECT_EQ(sync.status, CheckStatus::kFail);
  EXPECT_NEAR(*sync.threshold, 0.70 * 9.89e14, 1e9);
  EXPECT_NE(sync.reason.find("with no power cap"), std::string::npos) << sync.reason;
}

// A compute rate above what the SMs can execute at their highest clock is a timing or counting fault: bf16 at 120%
// of 989 TFLOP/s passed under a flat 125%. The limit is the figure at the highest clock with 5% for timing noise and
// rounding: 989 x 1.98 / 1.83 x 1.05 = 1123.6 TFLOP/s (113.6%).
TEST(Qualify, AComputeRateAboveItsHighestClocksFigureIsATimingFault) {
  Profile p = fixture();
  Ceiling& g = ceiling(p, "gemm.bf16");
  g.value = 1.2 * 9.89e14;
  QualifyResult r = qualify(p, nullptr, default_rules());
  const Check& k = find_check(r, "gemm.bf16", "datasheet fraction");
  EXPECT_EQ(k.status, CheckStatus::kFail);
  EXPECT_EQ(k.reason, "gemm.bf16 reads 120.0% of datasheet H200 989 TFLOP/s, above the 113.6% it can reach at its "
                      "highest SM clock, 1.98 GHz over the quoted 1.83 GHz, with a 5% margin: a timing or counting "
                      "fault, not a fast GPU");
  g.value = 1.12e15;  // 113.2%: within it
  EXPECT_EQ(find_check(qualify(p, nullptr, default_rules()), "gemm.bf16", "datasheet fraction").status,
            CheckStatus::kPass);
  // The device's own highest clock where recorded: at 2.1 GHz, 989 x 2.1 / 1.83 x 1.05 = 1191.6 TFLOP/s.
  g.value = 1.2 * 9.89e14;
  p.device.max_sm_clock_hz = 2.1e9;
  EXPECT_EQ(find_check(qualify(p, nullptr, default_rules()), "gemm.bf16", "datasheet fraction").status,
            CheckStatus::kPass);
  // Never below 105% of the figure, whatever clock is recorded.
  p.device.max_sm_clock_hz = 1.5e9;
  g.value = 1.06 * 9.89e14;
  const Check low = find_check(qualify(p, nullptr, default_rules()), "gemm.bf16", "datasheet fraction");
  EXPECT_EQ(low.status, CheckStatus::kFail);
  EXPECT_NE(low.reason.find("above the 105% no GPU attains"), std::string::npos) << low.reason;
  p.device.max_sm_clock_hz.reset();
  // A ceiling no fraction rule judges gets a row of its own: a _ref8192, a ceiling whose default is switched off.
  Ceiling ref = g;
  ref.name = "gemm.bf16_ref8192";
  ref.value = 8.3e14;
  p.ceilings.push_back(ref);
  const Check fine = find_check(qualify(p, nullptr, default_rules()), "gemm.bf16_ref8192", "plausible");
  EXPECT_EQ(fine.status, CheckStatus::kPass);
  EXPECT_NEAR(*fine.threshold, 9.89e14 * 1.98 / 1.83 * 1.05, 1e9);
  ceiling(p, "gemm.bf16_ref8192").value = 3e15;
  const Check wild = find_check(qualify(p, nullptr, default_rules()), "gemm.bf16_ref8192", "plausible");
  EXPECT_EQ(wild.status, CheckStatus::kFail);
  EXPECT_NE(wild.reason.find("reads 303.3% of datasheet H200"), std::string::npos) << wild.reason;
  const Rules off =
      parse_rules(json::parse(R"({"schema":"ceilings.rules/1","ceilings":{"gemm.bf16":{"min_fraction_of_datasheet":false}}})"),
                  "off");
  ceiling(p, "gemm.bf16").value = 1.2 * 9.89e14;  // (g moved with the push_back)
  EXPECT_EQ(find_check(qualify(p, nullptr, off), "gemm.bf16", "plausible").status, CheckStatus::kFail);
  // HBM, PCIe and NVLink keep 105%: hbm.copy at 106% of 4.8 TB/s fails.
  ceiling(p, "hbm.copy").value = 1.06 * 4.8e12;
  EXPECT_NE(find_check(qualify(p, nullptr, default_rules()), "hbm.copy", "datasheet fraction")
                .reason.find("above the 105% no GPU attains"),
            std::string::npos);
}

// A number whose samples spread more than max_cv (10%) is not judged a pass: incomplete, measure again; a low one
// still fails. The stored H200's largest cvs (gemm.fp16 6.1%, gemm.fp64 4.8%) pass (TheStoredH200PassesEveryDefaultCheck).
TEST(Qualify, AnUnstableNumberIsNoPass) {
  Profile p = fixture();
  ceiling(p, "gemm.bf16").cv = 0.45;
  ceiling(p, "hbm.copy").cv = 0.30;
  ceiling(p, "hbm.copy").value = 3.9e12;  // 81%: below 85%
  QualifyResult r = qualify(p, nullptr, default_rules());
  const Check& g = find_check(r, "gemm.bf16", "datasheet fraction");
  EXPECT_EQ(g.status, CheckStatus::kIncomplete);
  EXPECT_EQ(g.reason, "measured with cv 45.0% (above 10%): the number is not stable enough to judge; rerun");
  EXPECT_EQ(find_check(r, "hbm.copy", "datasheet fraction").status, CheckStatus::kFail);
  EXPECT_EQ(r.exit_code(), 1);
  ceiling(p, "hbm.copy").value = 4.36e12;
  EXPECT_EQ(find_check(qualify(p, nullptr, default_rules()), "hbm.copy", "datasheet fraction").status,
            CheckStatus::kIncomplete);
  EXPECT_EQ(qualify(p, nullptr, default_rules()).exit_code(), 3);
  // The spread a stalled sample cannot inflate, where the run recorded it.
  ceiling(p, "gemm.bf16").detail["robust_cv"] = 0.01;
  EXPECT_EQ(find_check(qualify(p, nullptr, default_rules()), "gemm.bf16", "datasheet fraction").status,
            CheckStatus::kPass);
  // A rules file's max_cv; its minimums and a baseline are judged the same way.
  const Rules loose = parse_rules(json::parse(R"({"schema":"ceilings.rules/1","max_cv":"35%",
      "ceilings":{"hbm.copy":{"min":"4 TB/s"}}})"), "loose");
  EXPECT_DOUBLE_EQ(loose.max_cv, 0.35);
  EXPECT_EQ(find_check(qualify(p, nullptr, loose), "hbm.copy", "minimum").status, CheckStatus::kPass);
  ceiling(p, "hbm.copy").cv = 0.40;
  EXPECT_EQ(find_check(qualify(p, nullptr, loose), "hbm.copy", "minimum").status, CheckStatus::kIncomplete);
  const Profile base = fixture();
  EXPECT_EQ(find_check(qualify(p, &base, default_rules()), "hbm.copy", "baseline").status, CheckStatus::kIncomplete);
}

// A run stopped between families (a timeout or an interrupt; measure.complete false) holds only what it finished:
// incomplete, with the reason it stopped, even where everything it holds passes.
TEST(Qualify, ARunStoppedBetweenFamiliesIsIncomplete) {
  Profile p = fixture();
  p.raw["measure"] = {{"complete", false}, {"stopped", "interrupted: SIGTERM\nceilings-bench: last lines"}};
  const QualifyResult r = qualify(p, nullptr, default_rules());
  EXPECT_EQ(r.exit_code(), 3);
  EXPECT_EQ(with_status(r, CheckStatus::kIncomplete), (std::set<std::string>{"profile/run complete"}));
  EXPECT_EQ(find_check(r, "profile", "run complete").reason,
            "the run was stopped before its end (interrupted: SIGTERM): the ceilings after that point were not "
            "measured; measure again");
  // A reason after blank lines is its first line that says something (it read "()" before); none at all is
  // "stopped early".
  p.raw["measure"]["stopped"] = "\n  \n  interrupted: SIGINT \t\nmore";
  EXPECT_NE(find_check(qualify(p, nullptr, default_rules()), "profile", "run complete")
                .reason.find("stopped before its end (interrupted: SIGINT)"),
            std::string::npos);
  p.raw["measure"]["stopped"] = "\n \n";
  EXPECT_NE(find_check(qualify(p, nullptr, default_rules()), "profile", "run complete")
                .reason.find("stopped before its end (stopped early)"),
            std::string::npos);
  p.raw["measure"]["complete"] = true;
  EXPECT_EQ(qualify(p, nullptr, default_rules()).exit_code(), 0);
}

// A row not judged (review 18: such rows read "pass") is counted apart and holds no verdict back.
TEST(Qualify, ARowNotJudgedIsCountedApartAndHoldsNoVerdict) {
  QualifyResult r;
  r.device = "NVIDIA H200";
  Check pass = make_check("hbm.copy", "minimum");
  pass.status = CheckStatus::kPass;
  Check shown = make_check("health", "SRAM error threshold");
  shown.status = CheckStatus::kNotJudged;
  r.checks = {pass, shown};
  EXPECT_EQ(r.verdict(), CheckStatus::kPass);
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_NE(render_qualify(r, Format::kTable).find("(1 pass, 0 fail, 0 incomplete, 1 not judged)"), std::string::npos);
  EXPECT_NE(render_qualify(r, Format::kTable).find(" not judged "), std::string::npos);
  const json j = json::parse(render_qualify(r, Format::kJson));
  EXPECT_EQ(j["counts"]["not_judged"], 1);
  EXPECT_EQ(j["checks"][1]["result"], "not judged");
  r.checks.pop_back();
  EXPECT_NE(render_qualify(r, Format::kTable).find("(1 pass, 0 fail, 0 incomplete)"), std::string::npos);
}

// A family that crashed while the families after it ran is not a run stopped early (review 18: "the ceilings after
// that point were not measured" was false): it is a failed measurement, and the "run complete" row says so, failing
// (incomplete where the rules judge no errors, review 19: it passed). A family that never started, or a case a
// timeout cut, is a stop.
TEST(Qualify, AFailedFamilyIsNotARunStoppedEarly) {
  Profile p = fixture();
  p.ceilings.erase(p.ceilings.begin() + 2);  // gemm.bf16
  p.errors.push_back({"gemm.bf16", std::string(kStoppedWhileRunningReason) + "ceilings-bench failed (killed by signal 6)"});
  p.raw["measure"] = {{"complete", false},
                      {"stopped", "ceilings-bench failed (killed by signal 6 (Aborted))"},
                      {"families", json::parse(R"([{"family": "hbm", "cases": 2, "finished_cases": 2},
                          {"family": "gemm", "cases": 1, "finished_cases": 0, "failure": "ceilings-bench failed"},
                          {"family": "latency", "cases": 1, "finished_cases": 1}])")}};
  EXPECT_FALSE(p.run_was_stopped());
  QualifyResult r = qualify(p, nullptr, default_rules());
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_EQ(find_check(r, "profile", "run complete").status, CheckStatus::kFail);
  EXPECT_EQ(find_check(r, "profile", "run complete").measured_text, "a family failed");
  EXPECT_EQ(find_check(r, "profile", "run complete").reason.find("not measured"), std::string::npos);
  EXPECT_EQ(find_check(r, "gemm.bf16", "measurement error").status, CheckStatus::kFail);
  Rules no_errors = default_rules();
  no_errors.health.verification = false;
  const QualifyResult lenient = qualify(p, nullptr, no_errors);
  EXPECT_EQ(find_check(lenient, "profile", "run complete").status, CheckStatus::kIncomplete);
  EXPECT_NE(find_check(lenient, "profile", "run complete").reason.find("verification off"), std::string::npos);
  // The families after it never started: stopped.
  p.raw["measure"]["families"][2]["finished_cases"] = 0;
  p.raw["measure"]["families"][2]["failure"] = "not run: ceilings-bench failed";
  EXPECT_TRUE(p.run_was_stopped());
  EXPECT_EQ(find_check(qualify(p, nullptr, default_rules()), "profile", "run complete").status,
            CheckStatus::kIncomplete);
  // The failed family's case cut by a timeout instead, the last family's: stopped too.
  p.raw["measure"]["families"][2] = {{"family", "latency"}, {"cases", 1}, {"finished_cases", 1}};
  EXPECT_FALSE(p.run_was_stopped());
  p.errors.back().reason = std::string(kStoppedWhileRunningReason) + kTimedOutReason + "600 s timeout";
  EXPECT_TRUE(p.run_was_stopped());
}

// A limit is printed as exactly as it was given: a 2.6% tolerance failed with "(tolerance 3%)" and 2.7% below.
TEST(Qualify, LimitsArePrintedAsGiven) {
  const Profile p = fixture();
  Profile base = fixture();
  ceiling(base, "hbm.copy").value = ceiling(base, "hbm.copy").value / (1 - 0.027);
  const Rules rules = parse_rules(json::parse(R"({"schema":"ceilings.rules/1","baseline_tolerance":"2.6%",
    "ceilings":{"hbm.copy":{"min_fraction_of_datasheet":"90.35%"}}})"), "site");
  const QualifyResult r = qualify(p, &base, rules);
  const Check& b = find_check(r, "hbm.copy", "baseline");
  EXPECT_EQ(b.status, CheckStatus::kFail);
  EXPECT_NE(b.reason.find("2.7% below the baseline (tolerance 2.6%)"), std::string::npos) << b.reason;
  EXPECT_NE(b.source.find(" - 2.6% "), std::string::npos) << b.source;
  Profile slow = fixture();
  ceiling(slow, "hbm.copy").value = 0.9032 * 4.8e12;
  const Check d = find_check(qualify(slow, nullptr, rules), "hbm.copy", "datasheet fraction");
  EXPECT_EQ(d.status, CheckStatus::kFail);
  EXPECT_NE(d.source.find("90.35% of datasheet"), std::string::npos) << d.source;
  EXPECT_NE(d.reason.find("reaches 90.32% of the peak, below 90.35%"), std::string::npos) << d.reason;

  // Just below a limit, the value and the limit print apart: "85.0% of the peak, below 85%" and
  // "fail 4.08 TB/s >= 4.08 TB/s" contradicted the verdict.
  Profile edge = fixture();
  ceiling(edge, "hbm.copy").value = 0.849996 * 4.8e12;
  QualifyResult e = qualify(edge, nullptr, default_rules());
  const Check& f = find_check(e, "hbm.copy", "datasheet fraction");
  EXPECT_EQ(f.status, CheckStatus::kFail);
  EXPECT_NE(f.reason.find("reaches 84.9996% of the peak, below 85%"), std::string::npos) << f.reason;
  const std::string table = render_qualify(e, Format::kCsv);
  EXPECT_NE(table.find(",B/s,4.07998 TB/s,>= 4.08000 TB/s,"), std::string::npos) << table;
  Profile near_base = fixture();
  ceiling(near_base, "hbm.copy").value = p.find("hbm.copy")->value / (1 - 0.05004);
  const QualifyResult against_base = qualify(p, &near_base, default_rules());
  const Check& nb = find_check(against_base, "hbm.copy", "baseline");
  EXPECT_EQ(nb.status, CheckStatus::kFail);
  EXPECT_NE(nb.reason.find("5.004% below the baseline (tolerance 5%)"), std::string::npos) << nb.reason;
}

// Health checks alone are no qualification: a profile with no ceilings, or none with a limit, is incomplete.
TEST(Qualify, AProfileWithNothingJudgedIsNotAPass) {
  Profile p = fixture();
  for (const Ceiling& c : p.ceilings) p.skipped.push_back({c.name, "unsupported: test"});
  p.ceilings.clear();
  const Rules nothing_required = parse_rules(json::parse(R"({"schema":"ceilings.rules/1","required":[]})"), "x");
  QualifyResult r = qualify(p, nullptr, nothing_required);
  EXPECT_EQ(r.exit_code(), 3);
  const Check& c = find_check(r, "profile", "ceilings judged");
  EXPECT_EQ(c.status, CheckStatus::kIncomplete);
  EXPECT_NE(c.reason.find("holds no ceiling"), std::string::npos) << c.reason;
  // Ceilings, but rules that set no limit on any: the same.
  const Rules no_limits = parse_rules(json::parse(R"({"schema":"ceilings.rules/1","extends_defaults":false})"), "y");
  r = qualify(fixture(), nullptr, no_limits);
  EXPECT_EQ(r.exit_code(), 3);
  EXPECT_NE(find_check(r, "profile", "ceilings judged").reason.find("no ceiling of the profile has a limit"),
            std::string::npos);
  EXPECT_EQ(qualify(fixture(), nullptr, default_rules()).exit_code(), 0);
}

// A rule that only sets a ceiling's baseline tolerance asks for nothing to be measured: without --baseline it is
// no "rule applies" row for a ceiling the profile lacks.
TEST(Qualify, AToleranceOnlyRuleIsNotALimit) {
  Profile p = fixture();
  const Rules rules = parse_rules(json::parse(R"({"schema":"ceilings.rules/1",
    "ceilings":{"l2.read":{"baseline_tolerance":"3%"}}})"), "site");
  EXPECT_EQ(rules.named.count("l2.read"), 0u);
  EXPECT_EQ(qualify(p, nullptr, rules).exit_code(), 0);
}

TEST(Qualify, ThrottleReasonsDecide) {
  Profile p = fixture();
  Ceiling& g = ceiling(p, "gemm.bf16");
  g.throttled = true;
  g.detail["throttle_reasons"] = 0x4;  // software power cap only: how a GEMM is meant to run
  EXPECT_EQ(qualify(p, nullptr, default_rules()).exit_code(), 0);
  g.detail["throttle_reasons"] = 0x5;  // and idle, which is not named as a slowdown
  g.detail["reason_readings"] = 750;
  g.detail["power_cap_readings"] = 640;
  const Check capped = find_check(qualify(p, nullptr, default_rules()), "gemm.bf16", "HW/thermal slowdown");
  EXPECT_EQ(capped.measured_text, "sw_power_cap");
  EXPECT_EQ(capped.reason, "sw_power_cap in 640 of 750 telemetry readings (expected under load)");
  g.detail["throttle_reasons"] = 0x8;  // HW slowdown
  g.detail["hw_slowdown_readings"] = 1;
  // In one reading of 750: the moment of a clock change NVML also flags this way, not a slowdown.
  QualifyResult r = qualify(p, nullptr, default_rules());
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_EQ(find_check(r, "gemm.bf16", "HW/thermal slowdown").measured_text, "none");
  EXPECT_EQ(find_check(r, "gemm.bf16", "HW/thermal slowdown").reason,
            "hw_slowdown in 1 of 750 telemetry readings (a lone reading: a clock change)");
  g.detail["hw_slowdown_readings"] = 2;
  r = qualify(p, nullptr, default_rules());
  EXPECT_EQ(with_status(r, CheckStatus::kFail), (std::set<std::string>{"gemm.bf16/HW/thermal slowdown"}));
  EXPECT_EQ(find_check(r, "gemm.bf16", "HW/thermal slowdown").reason,
            "measured under hw_slowdown in 2 of 750 telemetry readings: the hardware held the clock down");
  // A lone reading is forgiven only among several: in a burst the poller saw once or twice, that reading
  // is the whole measurement.
  g.detail["hw_slowdown_readings"] = 1;
  for (const int all : {1, 2}) {
    g.detail["reason_readings"] = all;
    EXPECT_EQ(find_check(qualify(p, nullptr, default_rules()), "gemm.bf16", "HW/thermal slowdown").status,
              CheckStatus::kFail)
        << "1 of " << all;
  }
  g.detail["reason_readings"] = 3;
  EXPECT_EQ(find_check(qualify(p, nullptr, default_rules()), "gemm.bf16", "HW/thermal slowdown").status,
            CheckStatus::kPass);
  g.detail["reason_readings"] = 750;
  g.detail["throttle_reasons"] = 0x48;  // with HW thermal: a slowdown even in one reading
  g.detail["hw_slowdown_readings"] = 1;
  EXPECT_EQ(qualify(p, nullptr, default_rules()).exit_code(), 1);
  g.detail["throttle_reasons"] = 0x20;  // SW thermal
  EXPECT_EQ(qualify(p, nullptr, default_rules()).exit_code(), 1);
  g.detail.erase("throttle_reasons");  // throttled, reasons unknown: cannot be called clean
  r = qualify(p, nullptr, default_rules());
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_NE(find_check(r, "gemm.bf16", "HW/thermal slowdown").reason.find("not recorded"), std::string::npos);
  g.detail["throttle_reasons"] = 0;  // throttled, and no reason at all: not "none (expected under load)"
  r = qualify(p, nullptr, default_rules());
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_EQ(find_check(r, "gemm.bf16", "HW/thermal slowdown").measured_text, "throttled");
  g.throttled = false;
  g.detail["throttle_reasons"] = 0x40;  // flag missing but a HW thermal bit recorded
  EXPECT_EQ(qualify(p, nullptr, default_rules()).exit_code(), 1);
}

TEST(Qualify, VerificationFailuresFail) {
  Profile p = fixture();
  ceiling(p, "pcie.h2d").verified = false;
  QualifyResult r = qualify(p, nullptr, default_rules());
  EXPECT_EQ(with_status(r, CheckStatus::kFail), (std::set<std::string>{"pcie.h2d/verified"}));
  p = fixture();
  p.errors.push_back({"gemm.bf16", "verification failed: 3 of 4096 sampled elements off"});
  p.ceilings.erase(p.ceilings.begin() + 2);
  r = qualify(p, nullptr, default_rules());
  EXPECT_EQ(with_status(r, CheckStatus::kFail),
            (std::set<std::string>{"gemm.bf16/required", "gemm.bf16/measurement error"}));
  EXPECT_EQ(r.exit_code(), 1);
}

TEST(Qualify, MissingOrSkippedRequiredCeilingIsIncomplete) {
  Profile p = fixture();
  p.ceilings.erase(p.ceilings.begin());  // hbm.copy
  QualifyResult r = qualify(p, nullptr, default_rules());
  EXPECT_EQ(r.exit_code(), 3);
  EXPECT_EQ(with_status(r, CheckStatus::kIncomplete), (std::set<std::string>{"hbm.copy/required"}));
  p.skipped.push_back({"hbm.copy", "unsupported: not enough memory"});
  r = qualify(p, nullptr, default_rules());
  EXPECT_NE(find_check(r, "hbm.copy", "required").reason.find("not enough memory"), std::string::npos);
  // A fail wins over an incomplete.
  ceiling(p, "gemm.bf16").verified = false;
  EXPECT_EQ(qualify(p, nullptr, default_rules()).exit_code(), 1);
}

TEST(Qualify, NoChecksIsNeverAPass) {
  Profile p = fixture();
  Rules none = parse_rules(json::parse(R"({"schema":"ceilings.rules/1","extends_defaults":false,"health":{
    "require_section":false,"uncorrected_ecc":false,"row_remap":false,"pcie_link":false,"pcie_slot":false,"pcie_replays":false,
    "xid":false,"xid_log":false,"slowdown":false,"power_limit":false,"violation_time":false,"mig_mode":false,
    "persistence_mode":false,"verification":false,"readable":false}})"), "none");
  const QualifyResult r = qualify(p, nullptr, none);
  // Only the plausibility rows, which judge no performance: the profile is not judged.
  for (const Check& k : r.checks)
    EXPECT_TRUE(k.rule == "plausible" || k.rule == "ceilings judged") << k.subject << " / " << k.rule;
  EXPECT_EQ(find_check(r, "profile", "ceilings judged").status, CheckStatus::kIncomplete);
  EXPECT_EQ(r.verdict(), CheckStatus::kIncomplete);
  EXPECT_EQ(r.exit_code(), 3);
}

TEST(Qualify, AbsoluteLimitsFromARulesFile) {
  const Rules rules = parse_rules(json::parse(R"({"schema":"ceilings.rules/1","ceilings":{
    "hbm.copy":{"min":"4.4 TB/s"},"latency.launch":{"max":"2 us"}}})"), "site.json");
  const QualifyResult r = qualify(fixture(), nullptr, rules);
  EXPECT_EQ(with_status(r, CheckStatus::kFail),
            (std::set<std::string>{"hbm.copy/minimum", "latency.launch/maximum"}));
  EXPECT_EQ(find_check(r, "hbm.copy", "minimum").source, "rules file site.json");
}

// A rules file limit on a ceiling the profile lacks is never silently ignored.
TEST(Qualify, ARuleOnACeilingNotInTheProfileIsJudged) {
  const Rules typo = parse_rules(json::parse(R"({"schema":"ceilings.rules/1","ceilings":{
    "latency.lanch":{"max":"1 us"},"hbm.cpy":{"min":"9 TB/s"}}})"), "typo.json");
  QualifyResult r = qualify(fixture(), nullptr, typo);
  EXPECT_EQ(r.exit_code(), 3);
  EXPECT_EQ(with_status(r, CheckStatus::kIncomplete),
            (std::set<std::string>{"latency.lanch/rule applies", "hbm.cpy/rule applies"}));
  const Check& c = find_check(r, "hbm.cpy", "rule applies");
  EXPECT_NE(c.reason.find("rule set for hbm.cpy, but the profile has no hbm.cpy"), std::string::npos) << c.reason;
  EXPECT_NE(c.reason.find("did you mean hbm.copy"), std::string::npos) << c.reason;
  EXPECT_NE(find_check(r, "latency.lanch", "rule applies").reason.find("latency.launch"), std::string::npos);

  const Rules nvlink = parse_rules(json::parse(R"({"schema":"ceilings.rules/1","ceilings":{
    "nvlink.p2p_uni":{"min":"300 GB/s"},"gemm.fp8_e4m3":{"min":"1000 TFLOP/s"}}})"), "site.json");
  Profile p = fixture();
  p.errors.push_back({"gemm.fp8_e4m3", "ceilings-bench failed (killed by signal 11)"});
  r = qualify(p, nullptr, nvlink);
  EXPECT_EQ(find_check(r, "gemm.fp8_e4m3", "rule applies").status, CheckStatus::kFail);
  EXPECT_EQ(find_check(r, "nvlink.p2p_uni", "rule applies").status, CheckStatus::kIncomplete);  // skipped
  EXPECT_NE(find_check(r, "nvlink.p2p_uni", "rule applies").reason.find("single GPU"), std::string::npos);

  // The defaults name ceilings a profile may lack (nvlink.* on one GPU): only `required` judges those,
  // and a rule that only switches a default off asks for nothing.
  const Rules off = parse_rules(json::parse(R"({"schema":"ceilings.rules/1","ceilings":{
    "gemm.int8":{"min_fraction_of_datasheet":false}}})"), "off.json");
  EXPECT_EQ(qualify(fixture(), nullptr, off).exit_code(), 0);
  EXPECT_EQ(qualify(fixture(), nullptr, default_rules()).exit_code(), 0);
  // ... and its sustained twin with it (review 90: gemm.int8_sustained still failed at 50% of the datasheet).
  Profile slow_int8 = fixture();
  for (const char* name : {"gemm.int8", "gemm.int8_sustained"}) {
    Ceiling c = ceiling(slow_int8, "gemm.bf16");
    c.name = name;
    c.unit = "OP/s";
    c.value = 0.3 * 1.979e15;  // 30% of the H200's dense int8
    c.datasheet.reset();
    slow_int8.ceilings.push_back(c);
  }
  const QualifyResult by_default = qualify(slow_int8, nullptr, default_rules());
  EXPECT_EQ(with_status(by_default, CheckStatus::kFail),
            (std::set<std::string>{"gemm.int8/datasheet fraction", "gemm.int8_sustained/datasheet fraction"}));
  EXPECT_TRUE(with_status(qualify(slow_int8, nullptr, off), CheckStatus::kFail).empty());
}

// A family added since this build (a new bench/ file) is judged by a rules file in the unit its limit is
// written in; a family neither this build nor the profile knows is a misspelt one: bad input.
TEST(Qualify, ARuleOnANewFamilyIsJudgedInItsOwnUnit) {
  Profile p = fixture();
  Ceiling tex = p.ceilings.front();
  tex.name = "tex.read";
  tex.unit = "B/s";
  tex.value = 9e12;
  p.ceilings.push_back(tex);
  p.skipped.push_back({"nccl.allreduce", "needs two GPUs"});
  auto rules = [](const std::string& body) {
    return parse_rules(json::parse(R"({"schema":"ceilings.rules/1",)" + body + "}"), "site.json");
  };
  QualifyResult r = qualify(p, nullptr, rules(R"("ceilings":{"tex.read":{"min":"8 TB/s"}})"));
  EXPECT_EQ(find_check(r, "tex.read", "minimum").status, CheckStatus::kPass);
  r = qualify(p, nullptr, rules(R"("ceilings":{"tex.read":{"min":"10 TB/s"}})"));
  EXPECT_EQ(find_check(r, "tex.read", "minimum").status, CheckStatus::kFail);
  try {  // a limit in a unit the profile does not record it in is bad input, as for a known family
    qualify(p, nullptr, rules(R"("ceilings":{"tex.read":{"min":"10 TFLOP/s"}})"));
    ADD_FAILURE() << "a FLOP/s limit on a B/s ceiling was taken";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the limit is in FLOP/s, and the profile records tex.read in B/s"),
              std::string::npos)
        << e.what();
  }
  r = qualify(p, nullptr, rules(R"("required":["hbm.copy","tex.read","nccl.allreduce"])"));
  EXPECT_EQ(find_check(r, "tex.read", "required").status, CheckStatus::kPass);
  EXPECT_EQ(find_check(r, "nccl.allreduce", "required").status, CheckStatus::kIncomplete);  // skipped, with why

  // By the CLI: bad input, exit 2
  const std::string dir = test::scratch_dir("qualify_unknown_family");
  std::ofstream(dir + "/typo.rules.json") << R"({"schema":"ceilings.rules/1","ceilings":{"hmb.copy":{"min":"4 TB/s"}}})";
  const auto cli = test::run_cli({"qualify", kFixtures + "/h200-qualify.profile.json", "--rules", dir + "/typo.rules.json"});
  EXPECT_EQ(cli.exit_code, 2) << cli.out << cli.err;
  EXPECT_NE(cli.err.find("unknown ceiling family 'hmb'"), std::string::npos) << cli.err;
  for (const std::string body : {R"("ceilings":{"hmb.copy":{"min":"4 TB/s"}})", R"("required":["hmb.copy"])"}) {
    try {
      qualify(p, nullptr, rules(body));
      ADD_FAILURE() << body << " was taken";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("unknown ceiling family 'hmb'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("did you mean hbm.copy"), std::string::npos) << e.what();
    }
  }
}

// A run a --timeout or Ctrl-C cut short could not measure the running case: incomplete, not failed;
// a crash in a case is still a failure.
TEST(Qualify, ACaseCutShortIsIncomplete) {
  Profile p = fixture();
  p.ceilings.erase(p.ceilings.begin() + 2);  // gemm.bf16
  p.errors.push_back({"gemm.bf16", std::string(kStoppedWhileRunningReason) + kTimedOutReason +
                                       "600 s timeout and was terminated"});
  p.raw["measure"] = {{"complete", false}};
  QualifyResult r = qualify(p, nullptr, default_rules());
  EXPECT_TRUE(with_status(r, CheckStatus::kFail).empty());
  EXPECT_EQ(with_status(r, CheckStatus::kIncomplete),
            (std::set<std::string>{"gemm.bf16/required", "gemm.bf16/measurement error", "profile/run complete"}));
  EXPECT_EQ(r.exit_code(), 3);
  p.errors.back().reason = std::string(kStoppedWhileRunningReason) + kInterruptedReason + "ceilings-bench was stopped";
  EXPECT_EQ(qualify(p, nullptr, default_rules()).exit_code(), 3);
  p.errors.back().reason = std::string(kStoppedWhileRunningReason) + "ceilings-bench failed (killed by signal 6)";
  EXPECT_EQ(qualify(p, nullptr, default_rules()).exit_code(), 1);
}

// Without telemetry a slowdown cannot be seen: "none" would be a guess.
TEST(Qualify, SlowdownWithoutTelemetryIsIncomplete) {
  Profile p = fixture();
  ceiling(p, "pcie.h2d").telemetry = Telemetry{};
  ASSERT_FALSE(ceiling(p, "pcie.h2d").telemetry.available);
  QualifyResult r = qualify(p, nullptr, default_rules());
  EXPECT_EQ(with_status(r, CheckStatus::kIncomplete), (std::set<std::string>{"pcie.h2d/HW/thermal slowdown"}));
  EXPECT_EQ(r.exit_code(), 3);
  ceiling(p, "pcie.h2d").throttled = true;  // throttled with no reasons recorded: still a fail
  EXPECT_EQ(qualify(p, nullptr, default_rules()).exit_code(), 1);
}

TEST(Qualify, BaselineToleranceBothDirections) {
  const Profile p = fixture();
  Profile base = fixture();
  EXPECT_EQ(qualify(p, &base, default_rules()).exit_code(), 0);
  ceiling(base, "hbm.copy").value = 4.36e12 / 0.94;  // this node is 6% below the baseline
  QualifyResult r = qualify(p, &base, default_rules());
  EXPECT_EQ(with_status(r, CheckStatus::kFail), (std::set<std::string>{"hbm.copy/baseline"}));
  EXPECT_NE(find_check(r, "hbm.copy", "baseline").reason.find("6.0% below"), std::string::npos);
  Rules loose = parse_rules(json::parse(R"({"schema":"ceilings.rules/1",
    "ceilings":{"hbm.copy":{"baseline_tolerance":"7%"}}})"), "loose");
  EXPECT_EQ(qualify(p, &base, loose).exit_code(), 0);
  // A tolerance for a name neither side has (misspelt) left the default in force without a word (review 90).
  const Rules typo = parse_rules(json::parse(R"({"schema":"ceilings.rules/1",
    "ceilings":{"hbm.cpy":{"baseline_tolerance":"7%"}}})"), "typo");
  r = qualify(p, &base, typo);
  EXPECT_EQ(r.exit_code(), 1);  // hbm.copy still fails at the default 5%
  const Check& misspelt = find_check(r, "hbm.cpy", "rule applies");
  EXPECT_EQ(misspelt.status, CheckStatus::kIncomplete);
  EXPECT_NE(misspelt.reason.find("neither the profile nor the baseline has hbm.cpy"), std::string::npos) << misspelt.reason;
  EXPECT_NE(misspelt.reason.find("did you mean hbm.copy"), std::string::npos) << misspelt.reason;
  base = fixture();
  ceiling(base, "latency.launch").value = 2.1e-6 / 1.08;  // latency 8% above: lower is better
  r = qualify(p, &base, default_rules());
  EXPECT_EQ(with_status(r, CheckStatus::kFail), (std::set<std::string>{"latency.launch/baseline"}));
  base = fixture();
  base.ceilings.push_back(base.ceilings[0]);
  base.ceilings.back().name = "hbm.triad";
  r = qualify(p, &base, default_rules());
  EXPECT_EQ(with_status(r, CheckStatus::kIncomplete), (std::set<std::string>{"hbm.triad/baseline"}));
  // A baseline number that failed its own verification is no reference: incomplete, not a fail (a healthy GPU
  // failed against a 9 TB/s that the baseline's own qualify failed).
  base = fixture();
  ceiling(base, "hbm.copy").value = 9e12;
  ceiling(base, "hbm.copy").verified = false;
  r = qualify(p, &base, default_rules());
  EXPECT_TRUE(with_status(r, CheckStatus::kFail).empty());
  EXPECT_EQ(with_status(r, CheckStatus::kIncomplete), (std::set<std::string>{"hbm.copy/baseline"}));
  EXPECT_NE(find_check(r, "hbm.copy", "baseline").reason.find("was not verified"), std::string::npos);
}

// Beyond the tolerance but within two standard errors of the two medians: the measurements cannot tell the GPU
// from the baseline, so no verdict (incomplete, measure again), not a fail. Beyond them, a fail as before.
TEST(Qualify, BaselineDifferenceWithinTheMeasurementsNoiseIsNoVerdict) {
  Profile p = fixture();
  Profile base = fixture();
  Ceiling& here = ceiling(p, "latency.launch");
  Ceiling& there = ceiling(base, "latency.launch");
  here.cv = 0.10;  // launch latency's spread on the H200 (10.2%)
  here.samples = 10;
  there.cv = 0.01;
  there.samples = 8;
  // Standard errors 1.2533 * 10% / sqrt(10) = 3.96% and 1.2533 * 1% / sqrt(8) = 0.44%: 3.99% together.
  there.value = here.value / 1.07;  // 7% above the baseline: beyond 5%, within 2 x 3.99%
  QualifyResult r = qualify(p, &base, default_rules());
  EXPECT_TRUE(with_status(r, CheckStatus::kFail).empty());
  EXPECT_EQ(with_status(r, CheckStatus::kIncomplete), (std::set<std::string>{"latency.launch/baseline"}));
  const std::string why = find_check(r, "latency.launch", "baseline").reason;
  EXPECT_NE(why.find("7.0% above the baseline (tolerance 5%), but within 2 standard errors of the two medians (4.0%: "
                     "cv 10.0% over 10 samples here, 1.0% over 8 in the baseline): not told apart from noise"),
            std::string::npos)
      << why;
  EXPECT_EQ(r.exit_code(), 3);
  there.value = here.value / 1.09;  // 9%: beyond the noise too
  r = qualify(p, &base, default_rules());
  EXPECT_EQ(with_status(r, CheckStatus::kFail), (std::set<std::string>{"latency.launch/baseline"}));
  here.cv = 0.005;  // a quiet measurement: 7% is a fail
  there.value = here.value / 1.07;
  EXPECT_EQ(with_status(qualify(p, &base, default_rules()), CheckStatus::kFail),
            (std::set<std::string>{"latency.launch/baseline"}));
  // One stalled sample inflates the cv, not the median: where the run recorded robust_cv, that is the spread.
  here.cv = 0.16;
  here.detail["robust_cv"] = 0.0015;
  EXPECT_EQ(with_status(qualify(p, &base, default_rules()), CheckStatus::kFail),
            (std::set<std::string>{"latency.launch/baseline"}));
  // A fleet baseline's median is of GPUs: its noise is the fleet's spread over sqrt(GPUs), not the typical
  // in-run cv it records (7.4% at 3 GPUs would have excused a launch latency 13.7% slow).
  here.detail["robust_cv"] = 0.001;
  there.cv = 0.10;
  there.samples = 3;
  there.detail["fleet_mad"] = 0.001 * there.value;
  there.value = here.value / 1.137;
  EXPECT_EQ(with_status(qualify(p, &base, default_rules()), CheckStatus::kFail),
            (std::set<std::string>{"latency.launch/baseline"}));
}

TEST(Qualify, BaselineOfAnotherGpuIsBadInput) {
  const Profile p = fixture();
  Profile base = fixture();
  base.device.name = "NVIDIA H100 80GB HBM3";
  EXPECT_THROW(qualify(p, &base, default_rules()), InputError);
  base.device.name = "NVIDIA H200 141GB";  // another name of the same datasheet entry: one model
  ASSERT_EQ(find_gpu(base.device.name), find_gpu(p.device.name));
  EXPECT_EQ(qualify(p, &base, default_rules()).exit_code(), 0);
}

// The datasheet's figures are the whole GPU's. A MIG instance cannot be judged against them (incomplete, never a
// pass or a fail); a whole GPU that shows another SM count than its entry is not the GPU its name says (fail).
TEST(Qualify, AMigInstanceIsNotJudgedAgainstTheWholeGpusDatasheet) {
  const QualifyResult whole = qualify(fixture(), nullptr, default_rules());
  const Check& sms = find_check(whole, "device", "SM count");
  EXPECT_EQ(sms.status, CheckStatus::kPass);
  EXPECT_EQ(sms.measured_text, "132 SMs");
  EXPECT_EQ(sms.threshold_text, "132 SMs");
  ASSERT_TRUE(sms.threshold.has_value());  // the csv's threshold column holds the number its text says
  EXPECT_EQ(*sms.threshold, 132.0);

  Profile mig = fixture();
  mig.device.board_uuid = mig.device.uuid;  // the health section names the board, as NVML does
  mig.device.uuid = "MIG-00000000-1111-2222-3333-555555555555";
  mig.device.mig = true;
  mig.device.sm_count = 16;
  for (Ceiling& c : mig.ceilings)
    if (c.unit != "s") c.value /= 7;
  const QualifyResult r = qualify(mig, nullptr, default_rules());
  EXPECT_EQ(r.verdict(), CheckStatus::kIncomplete);
  EXPECT_EQ(r.exit_code(), 3);
  EXPECT_TRUE(with_status(r, CheckStatus::kFail).empty()) << *with_status(r, CheckStatus::kFail).begin();
  const Check& instance = find_check(r, "device", "SM count");
  EXPECT_EQ(instance.status, CheckStatus::kIncomplete);
  EXPECT_NE(instance.reason.find("a MIG instance of GPU-00000000-1111-2222-3333-444444444444"), std::string::npos)
      << instance.reason;
  const Check& hbm = find_check(r, "hbm.copy", "datasheet fraction");
  EXPECT_EQ(hbm.status, CheckStatus::kIncomplete);
  EXPECT_NE(hbm.reason.find("the whole GPU's"), std::string::npos) << hbm.reason;
  EXPECT_EQ(find_check(r, "health", "uncorrected ECC errors").status, CheckStatus::kPass)
      << "the board's health section is this instance's board";
  EXPECT_THROW(find_check(r, "health", "same GPU"), std::runtime_error);
  // An instance whose board is not recorded does not match the board's health section: its checks are not run.
  Profile unnamed = mig;
  unnamed.device.board_uuid.clear();
  const QualifyResult u = qualify(unnamed, nullptr, default_rules());
  EXPECT_EQ(find_check(u, "health", "same GPU").status, CheckStatus::kIncomplete);
  EXPECT_THROW(find_check(u, "health", "uncorrected ECC errors"), std::runtime_error);
  // Measured against a baseline of the whole GPU: not like with like.
  const Profile whole_gpu = fixture();
  EXPECT_THROW(qualify(mig, &whole_gpu, default_rules()), InputError);
  EXPECT_THROW(qualify(whole_gpu, &mig, default_rules()), InputError);
  EXPECT_EQ(qualify(mig, &mig, default_rules()).exit_code(), 3);  // the baseline passes, the datasheet cannot judge
  // An instance of as many SMs as the whole GPU (a 7g instance's count, or a baseline marked so): the message says
  // what differs, not two equal SM counts (review 48).
  Profile whole_instance = mig;
  whole_instance.device.sm_count = whole_gpu.device.sm_count;
  try {
    (void)qualify(whole_gpu, &whole_instance, default_rules());
    ADD_FAILURE() << "a MIG baseline judged the whole GPU";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the baseline was measured on a MIG instance and this profile on the whole GPU"),
              std::string::npos) << e.what();
  }

  // Rules that judge no datasheet figure (no SM count row then): a MIG instance with nothing judged is no pass.
  const Rules baseline_only =
      parse_rules(json::parse(R"({"schema":"ceilings.rules/1","extends_defaults":false})"), "none");
  EXPECT_EQ(qualify(mig, nullptr, baseline_only).exit_code(), 3);
  // Without NVML the bench cannot say; CUDA's name for an instance does ("NVIDIA A100-SXM4-40GB MIG 3g.20gb").
  Profile named = fixture();
  named.device.name = "NVIDIA H200 MIG 1g.18gb";
  EXPECT_TRUE(named.device.is_mig());
  EXPECT_EQ(qualify(named, nullptr, default_rules()).exit_code(), 3);

  Profile fewer = fixture();
  fewer.device.sm_count = 114;
  const QualifyResult f = qualify(fewer, nullptr, default_rules());
  EXPECT_EQ(f.exit_code(), 1);
  const Check& other = find_check(f, "device", "SM count");
  EXPECT_EQ(other.status, CheckStatus::kFail);
  EXPECT_NE(other.reason.find("the GPU shows 114 SMs, the datasheet's H200 has 132"), std::string::npos) << other.reason;
}

TEST(Qualify, BaselineWithoutCeilingsIsBadInput) {
  const Profile p = fixture();
  Profile base = fixture();
  base.ceilings.clear();
  try {
    qualify(p, &base, default_rules());
    ADD_FAILURE() << "judged against an empty baseline";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the baseline has no ceilings"), std::string::npos) << e.what();
    EXPECT_EQ(e.exit_code(), kExitBadInput);
  }
}

TEST(Qualify, PeerCeilingsMustCoverEveryGpuPair) {
  Profile p = fixture();
  add_peer_ceiling(p, 390e9, {{"gpus", 8}, {"pairs_without_access", 0}});
  QualifyResult r = qualify(p, nullptr, default_rules());
  EXPECT_EQ(find_check(r, "nvlink.p2p_uni", "peer access").status, CheckStatus::kPass);
  ceiling(p, "nvlink.p2p_uni").detail["pairs_without_access"] = 2;  // two ordered pairs left out
  // Without NVLink up (a PCIe box, GPUs under two sockets): noted, not failed.
  r = qualify(p, nullptr, default_rules());
  EXPECT_EQ(find_check(r, "nvlink.p2p_uni", "peer access").status, CheckStatus::kPass);
  EXPECT_NE(find_check(r, "nvlink.p2p_uni", "peer access").reason.find("no NVLink up"), std::string::npos);
  EXPECT_EQ(r.exit_code(), 0);
  p.raw["health"]["before"]["metrics"]["nvlink.links_active"] = 18;  // an NVLink node: every pair must reach
  r = qualify(p, nullptr, default_rules());
  const Check& c = find_check(r, "nvlink.p2p_uni", "peer access");
  EXPECT_EQ(c.status, CheckStatus::kFail);
  EXPECT_NE(c.reason.find("2 GPU pair(s) had no peer access and are not in nvlink.p2p_uni"), std::string::npos);
  Rules off = default_rules();
  off.health.peer_access = false;
  EXPECT_THROW(find_check(qualify(p, nullptr, off), "nvlink.p2p_uni", "peer access"), std::runtime_error);
}

TEST(Qualify, ASlowPeerCeilingNamesItsSlowestPair) {
  Profile p = fixture();
  // The slowest pair: one link of the node is degraded.
  add_peer_ceiling(p, 210e9, {{"p2p_0_1", 389e9}, {"p2p_1_0", 391e9}, {"p2p_2_3", 210e9}, {"p2p_median", 390e9},
                              {"p2p_min", 210e9}});
  const QualifyResult r = qualify(p, nullptr, default_rules());  // named: a Check& into a temporary would dangle
  const Check& c = find_check(r, "nvlink.p2p_uni", "datasheet fraction");
  EXPECT_EQ(c.status, CheckStatus::kFail);
  EXPECT_NE(c.reason.find("(slowest pair GPU 2 -> GPU 3 at 210 GB/s; median pair 390 GB/s)"), std::string::npos)
      << c.reason;
}

// Against a baseline too (review 18): the row names the slowest pair, and where this GPU's median pair is within the
// tolerance, says that the slow link may be the other GPU's (a GPU pairing with one whose links are slow).
TEST(Qualify, APeerCeilingBelowItsBaselineNamesThePairAndTheMedian) {
  Profile p = fixture();
  add_peer_ceiling(p, 330e9, {{"p2p_0_1", 389e9}, {"p2p_0_5", 330e9}, {"p2p_median", 388e9}}).cv = 0.001;
  Profile base = fixture();
  add_peer_ceiling(base, 388e9, {{"p2p_0_1", 389e9}, {"p2p_0_5", 388e9}, {"p2p_median", 388e9}}).cv = 0.001;
  QualifyResult r = qualify(p, &base, default_rules());
  const Check& c = find_check(r, "nvlink.p2p_uni", "baseline");
  EXPECT_EQ(c.status, CheckStatus::kFail);
  EXPECT_NE(c.reason.find("(slowest pair GPU 0 -> GPU 5 at 330 GB/s; median pair 388 GB/s)"), std::string::npos)
      << c.reason;
  EXPECT_NE(c.reason.find("its median pair is within the baseline's tolerance"), std::string::npos) << c.reason;
  // A baseline without a median pair (a fleet's holds the members' slowest pairs): no median to set this one's
  // against, so no hint (review 19).
  base.ceilings.back().detail.erase("p2p_median");
  EXPECT_EQ(find_check(qualify(p, &base, default_rules()), "nvlink.p2p_uni", "baseline").reason.find("median pair is "
                                                                                                     "within"),
            std::string::npos);
  // This GPU's own pairs slow: no such hint.
  p.ceilings.back().detail["p2p_median"] = 331e9;
  r = qualify(p, &base, default_rules());
  EXPECT_EQ(find_check(r, "nvlink.p2p_uni", "baseline").reason.find("median pair is within"), std::string::npos);
}

TEST(Qualify, NoPeerAccessAtAllFailsOnlyWhereNvLinksAreUp) {
  Profile p = fixture();
  p.skipped.push_back({"nvlink.p2p_uni", "no GPU pair has peer access (8 GPUs, cudaDeviceCanAccessPeer = 0)"});
  p.skipped.push_back({"nvlink.p2p_bidir", "single GPU: no peer"});
  ASSERT_TRUE(p.raw.contains("health"));
  QualifyResult r = qualify(p, nullptr, default_rules());  // no NVLink in the health section: a PCIe box
  EXPECT_THROW(find_check(r, "nvlink.p2p_uni", "peer access"), std::runtime_error);
  EXPECT_EQ(r.verdict(), CheckStatus::kPass);
  p.raw["health"]["before"]["metrics"]["nvlink.links_active"] = 18;
  r = qualify(p, nullptr, default_rules());
  const Check& c = find_check(r, "nvlink.p2p_uni", "peer access");
  EXPECT_EQ(c.status, CheckStatus::kFail);
  EXPECT_NE(c.reason.find("NVLinks are up but no GPU pair has peer access (8 GPUs"), std::string::npos) << c.reason;
  EXPECT_THROW(find_check(r, "nvlink.p2p_bidir", "peer access"), std::runtime_error);  // one GPU: not this fault
  // NVLinks up, yet NVML counts no pair as NVLink-connected (a fabric manager that is not running): a fault too.
  p.skipped[1] = {"nvlink.p2p_bidir", "no GPU pair is connected by NVLink (NVML: 56 pair(s) reach each other over "
                                      "PCIe or not at all)"};
  EXPECT_EQ(find_check(qualify(p, nullptr, default_rules()), "nvlink.p2p_bidir", "peer access").status,
            CheckStatus::kFail);
  // NVLinks up, and NVML could not classify any pair: a GPU it cannot answer for, a fault too.
  p.skipped[1] = {"nvlink.p2p_bidir", std::string(kUnclassifiedPairsReason) + "56 GPU pair(s) are joined by NVLink"};
  EXPECT_EQ(find_check(qualify(p, nullptr, default_rules()), "nvlink.p2p_bidir", "peer access").status,
            CheckStatus::kFail);
  p.raw["health"]["before"]["metrics"].erase("nvlink.links_active");  // a PCIe box: a skip, not a fault
  EXPECT_THROW(find_check(qualify(p, nullptr, default_rules()), "nvlink.p2p_bidir", "peer access"), std::runtime_error);
}

// Pairs NVML could not classify are left out of a peer ceiling: named, and a fault where NVLinks are up (one
// GPU that NVML has lost must not leave the node's ceiling to the pairs it still answers for).
TEST(Qualify, UnclassifiedPeerPairsAreNamed) {
  Profile p = fixture();
  add_peer_ceiling(p, 390e9, {{"gpus", 8}, {"pairs_without_access", 0}, {"pairs_unclassified", 14}});
  p.raw["health"]["before"]["metrics"]["nvlink.links_active"] = 18;
  const Check c = find_check(qualify(p, nullptr, default_rules()), "nvlink.p2p_uni", "peer access");
  EXPECT_EQ(c.status, CheckStatus::kFail);
  EXPECT_NE(c.reason.find("14 GPU pair(s) NVML could not classify"), std::string::npos) << c.reason;
  p.raw["health"]["before"]["metrics"].erase("nvlink.links_active");
  const Check note = find_check(qualify(p, nullptr, default_rules()), "nvlink.p2p_uni", "peer access");
  EXPECT_EQ(note.status, CheckStatus::kPass);
  EXPECT_NE(note.reason.find("14 GPU pair(s)"), std::string::npos) << note.reason;
}

TEST(Qualify, HealthSectionRequiredUnlessWaived) {
  Profile bare = fixture("h200-handmade");
  for (const char* name : {"pcie.h2d", "latency.launch"})  // rows without telemetry: judged in their own test
    ceiling(bare, name).telemetry = Telemetry{true, 1.98e9, 3.201e9, 100, 40};
  QualifyResult r = qualify(bare, nullptr, default_rules());
  EXPECT_EQ(r.exit_code(), 3);
  EXPECT_EQ(with_status(r, CheckStatus::kIncomplete), (std::set<std::string>{"health/health recorded"}));
  const Rules waived = parse_rules(json::parse(R"({"schema":"ceilings.rules/1","health":{"require_section":false}})"), "w");
  EXPECT_EQ(qualify(bare, nullptr, waived).exit_code(), 0);
  Profile unavailable = fixture("h200-handmade");
  unavailable.raw["health"] = "NVML is not available";
  r = qualify(unavailable, nullptr, default_rules());
  EXPECT_NE(find_check(r, "health", "health recorded").reason.find("NVML is not available"), std::string::npos);
}

// An explicit require_persistence_mode is never dropped without a word: with no health section, or one that says
// why it was not recorded, its row is incomplete (it was left out, and the profile passed).
TEST(Qualify, RequiredPersistenceModeWithoutAHealthSectionIsIncomplete) {
  Profile bare = fixture("h200-handmade");
  for (const char* name : {"pcie.h2d", "latency.launch"})  // rows without telemetry: judged in their own test
    ceiling(bare, name).telemetry = Telemetry{true, 1.98e9, 3.201e9, 100, 40};
  const Rules rules = parse_rules(json::parse(R"({"schema":"ceilings.rules/1","health":{"require_section":false,
      "require_persistence_mode":true}})"), "r");
  QualifyResult r = qualify(bare, nullptr, rules);
  EXPECT_EQ(r.exit_code(), 3);
  EXPECT_EQ(with_status(r, CheckStatus::kIncomplete), (std::set<std::string>{"health/persistence mode"}));
  EXPECT_NE(find_check(r, "health", "persistence mode").reason.find(
                "persistence mode not read: the profile has no health section"),
            std::string::npos)
      << find_check(r, "health", "persistence mode").reason;
  bare.raw["health"] = "NVML is not available";
  r = qualify(bare, nullptr, rules);
  EXPECT_EQ(r.exit_code(), 3);
  EXPECT_NE(find_check(r, "health", "persistence mode").reason.find("NVML is not available"), std::string::npos)
      << find_check(r, "health", "persistence mode").reason;
  const Rules waived =
      parse_rules(json::parse(R"({"schema":"ceilings.rules/1","health":{"require_section":false}})"), "w");
  EXPECT_THROW(find_check(qualify(bare, nullptr, waived), "health", "persistence mode"), std::runtime_error);
}

// From a profile: a MIG mode that differs between the health snapshots fails (the GPU was reset or reconfigured
// mid-run); a change pending before the run and set back by its end is noted and passes.
TEST(Qualify, AMigModeChangedDuringTheRunFails) {
  Profile p = fixture();
  json& h = p.raw["health"];
  h["before"]["metrics"]["mig.enabled"] = false;
  h["before"]["metrics"]["mig.pending_enabled"] = false;
  h["after"]["metrics"]["mig.enabled"] = true;
  h["after"]["metrics"]["mig.pending_enabled"] = true;
  QualifyResult r = qualify(p, nullptr, default_rules());
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_EQ(with_status(r, CheckStatus::kFail), (std::set<std::string>{"health/MIG mode"}));
  EXPECT_NE(find_check(r, "health", "MIG mode").reason.find("changed during the run (disabled before, enabled after)"),
            std::string::npos)
      << find_check(r, "health", "MIG mode").reason;
  h["before"]["metrics"]["mig.pending_enabled"] = true;
  h["after"]["metrics"]["mig.enabled"] = false;
  h["after"]["metrics"]["mig.pending_enabled"] = false;
  r = qualify(p, nullptr, default_rules());
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_NE(find_check(r, "health", "MIG mode").reason.find("set back by its end"), std::string::npos)
      << find_check(r, "health", "MIG mode").reason;
}

// From a profile whose health section records the monitor's window (xid.window_s): the violation share is over it
// (floored at 1 s, 30 ms of a 52 ms window read as 3%), shown under 1 s and judged from 1 s.
TEST(Qualify, ViolationTimeIsAShareOfTheRecordedWindow) {
  Profile p = fixture();
  json& h = p.raw["health"];
  h["xid"]["window_s"] = 0.052;
  h["after"]["metrics"]["throttle.board_limit_s"] = 0.03;
  QualifyResult r = qualify(p, nullptr, default_rules());
  EXPECT_EQ(r.exit_code(), 0);  // under 1 s: shown, not judged
  EXPECT_NEAR(*find_check(r, "health", "violation time").measured, 0.03 / 0.052, 1e-9);
  h["xid"]["window_s"] = 5.2;  // from 1 s a share is judged: 0.3 s over 5.2 s is 5.8%
  h["after"]["metrics"]["throttle.board_limit_s"] = 0.3;
  r = qualify(p, nullptr, default_rules());
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_EQ(with_status(r, CheckStatus::kFail), (std::set<std::string>{"health/violation time"}));
  EXPECT_NEAR(*find_check(r, "health", "violation time").measured, 0.3 / 5.2, 1e-9);
}

TEST(Qualify, MalformedHealthSectionIsBadInput) {
  Profile p = fixture();
  p.raw["health"]["before"]["metrics"]["ecc.volatile.uncorrected"] = "lots";
  EXPECT_THROW(qualify(p, nullptr, default_rules()), InputError);
  // A metric this version does not know is a newer version's: skipped, as readers skip unknown fields.
  p = fixture();
  p.raw["health"]["before"]["metrics"]["ecc.newer_counter"] = 0;
  EXPECT_EQ(qualify(p, nullptr, default_rules()).exit_code(), 0);
}

struct Degraded {
  const char* file;
  int exit_code;
  std::set<std::string> failing;  // exactly these checks fail (or are incomplete, for exit 3)
  const char* reason;
};

TEST(Qualify, HandDegradedFixturesFailForTheRightReason) {
  const Degraded cases[] = {
      {"slow-hbm", 1, {"hbm.copy/datasheet fraction"}, "75.0% of the"},
      {"thermal-gemm", 1, {"gemm.bf16/HW/thermal slowdown"}, "hw_thermal_slowdown"},
      {"pcie-gen3-x8", 1, {"health/PCIe link"}, "Gen3 x8 below its maximum Gen5 x16"},
      {"ecc-uncorrected", 1, {"health/uncorrected ECC errors"}, "during the run"},
      {"remap-pending", 1, {"health/row remapping"}, "pending"},
      {"xid", 1, {"health/XID critical errors"}, "XID 48"},
      {"verification-error", 1, {"pcie.d2h/measurement error"}, "bytes differ"},
      {"missing-gemm", 3, {"gemm.bf16/required"}, "cuBLASLt found no algorithm"},
  };
  for (const Degraded& d : cases) {
    SCOPED_TRACE(d.file);
    const QualifyResult r = qualify(fixture(std::string("degraded/") + d.file), nullptr, default_rules());
    EXPECT_EQ(r.exit_code(), d.exit_code);
    EXPECT_EQ(with_status(r, d.exit_code == 1 ? CheckStatus::kFail : CheckStatus::kIncomplete), d.failing);
    const auto cli = test::run_cli({"qualify", kFixtures + "/degraded/" + d.file + ".profile.json"});
    EXPECT_EQ(cli.exit_code, d.exit_code);
    EXPECT_NE(cli.out.find(d.reason), std::string::npos) << cli.out;
  }
}

TEST(QualifyCli, ExitCodesAndFormats) {
  const std::string good = kFixtures + "/h200-qualify.profile.json";
  auto r = test::run_cli({"qualify", good});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("verdict: PASS for NVIDIA H200", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("threshold from"), std::string::npos);

  r = test::run_cli({"qualify", good, "--format", "json"});
  ASSERT_EQ(r.exit_code, 0);
  const json j = json::parse(r.out);
  EXPECT_EQ(j["verdict"], "pass");
  EXPECT_EQ(j["exit_code"], 0);
  EXPECT_EQ(j["counts"]["fail"], 0);
  bool found = false;
  for (const auto& c : j["checks"])
    if (c["check"] == "hbm.copy" && c["rule"] == "datasheet fraction") {
      found = true;
      EXPECT_DOUBLE_EQ(c["measured"].get<double>(), 4.36e12);
      EXPECT_DOUBLE_EQ(c["threshold"].get<double>(), 0.85 * 4.8e12);
      EXPECT_EQ(c["unit"], "B/s");
      EXPECT_EQ(c["result"], "pass");
    }
  EXPECT_TRUE(found);

  r = test::run_cli({"qualify", good, "--format", "markdown"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("**verdict: PASS", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("| check | rule | result |"), std::string::npos);

  r = test::run_cli({"qualify", good, "--format", "csv"});  // one table: the exit code carries the verdict
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("check,rule,result,measured,threshold,unit,measured_text,threshold_text,threshold_from,reason\n", 0), 0u) << r.out;
  EXPECT_EQ(r.out.find("verdict"), std::string::npos) << r.out;
  // Numbers in SI base units with their unit, the displayed texts beside them
  EXPECT_NE(r.out.find("\nhbm.copy,datasheet fraction,pass,4360000000000.0,4080000000000.0,B/s,4.36 TB/s,>= 4.08 TB/s,"),
            std::string::npos) << r.out;

  r = test::run_cli({"qualify", good, "--format", "yaml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown format 'yaml'"), std::string::npos) << r.err;

  r = test::run_cli({"qualify", kFixtures + "/h200-handmade.profile.json"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("verdict: INCOMPLETE"), std::string::npos);
  // A hand-written profile says so under the verdict: a pass of it is no node's qualification.
  EXPECT_NE(r.out.find("\nNOTE: hand-written test fixture, not a measurement\n"), std::string::npos) << r.out;
  r = test::run_cli({"qualify", kFixtures + "/h200-handmade.profile.json", "--format", "json"});
  EXPECT_EQ(json::parse(r.out).value("note", ""), "hand-written test fixture, not a measurement") << r.out;
  EXPECT_EQ(json::parse(r.out)["exit_code"], 3);
  EXPECT_EQ(json::parse(r.out)["exit_code"], r.exit_code);

  r = test::run_cli({"qualify", kFixtures + "/degraded/slow-hbm.profile.json", "--baseline", good});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("below the baseline"), std::string::npos);
  // What failed, its measured value against its threshold and why, right under the verdict, before the table's
  // rows (review 108: four failures sat among 150 passes, the reason past column 360).
  const std::size_t verdict_end = r.out.find('\n');
  const std::size_t listed = r.out.find("\n  fail: hbm.copy (datasheet fraction), 3.60 TB/s against >= 4.08 TB/s: ");
  const std::size_t table = r.out.find("\ncheck ");
  EXPECT_EQ(listed, verdict_end) << r.out;
  EXPECT_LT(listed, table) << r.out;
  EXPECT_NE(r.out.find(" against >= ", listed), std::string::npos) << r.out;
  EXPECT_LT(r.out.find("reason"), r.out.find("threshold from")) << r.out;  // the reason before the long texts
  // The default-rule ceilings the run left out are counted on the verdict line.
  const json handmade =
      json::parse(test::run_cli({"qualify", kFixtures + "/h200-handmade.profile.json", "--format", "json"}).out);
  const std::size_t left_out = handmade.at("not_measured").size();
  ASSERT_GT(left_out, 0u);
  r = test::run_cli({"qualify", kFixtures + "/h200-handmade.profile.json"});
  EXPECT_NE(r.out.substr(0, r.out.find('\n')).find(", " + std::to_string(left_out) + " not measured)"),
            std::string::npos)
      << r.out;
}

// A profile that passed before these values were checked: each is bad input (exit 2) naming its field.
TEST(QualifyCli, ImpossibleValuesAreBadInputNotAPass) {
  const std::string dir = test::scratch_dir("qualify_impossible");
  const json good = read_json_file(kFixtures + "/h200-qualify.profile.json");
  struct Case {
    const char* file;
    std::function<void(json&)> spoil;
    const char* field;
  };
  const Case cases[] = {
      {"huge", [](json& d) { d["ceilings"][0]["value"] = 1e308; }, "ceilings[0].value"},
      {"unit", [](json& d) { d["ceilings"][0]["unit"] = "FLOP/s"; }, "ceilings[0].unit"},
      {"latency0", [](json& d) { d["ceilings"][4]["value"] = 0; }, "ceilings[4].value"},
      {"width0", [](json& d) { d["device"]["pcie"]["width"] = 0; }, "device.pcie.width"},
      {"gen0", [](json& d) { d["device"]["pcie"]["max_gen"] = 0; }, "device.pcie.max_gen"},
      {"twice", [](json& d) { d["ceilings"].push_back(d["ceilings"][0]); }, "ceilings[5].name"},
      {"created", [](json& d) { d["created"] = "not a date"; }, "created"},
      // Health readings the live reader records as "could not read": a default limit of 0 W passed any cap, Gen9
      // passed any copy as above what "Gen8" carries.
      {"power0", [](json& d) { d["health"]["before"]["metrics"]["power.default_limit_w"] = 0; },
       "health.before.metrics.power.default_limit_w"},
      {"gen9", [](json& d) { d["health"]["after"]["metrics"]["pcie.max_gen"] = 9; },
       "health.after.metrics.pcie.max_gen"},
  };
  ASSERT_EQ(good["ceilings"][4]["name"], "latency.launch");
  for (const Case& c : cases) {
    json d = good;
    c.spoil(d);
    const std::string path = dir + "/" + c.file + ".profile.json";
    std::ofstream(path) << d.dump();
    const auto r = test::run_cli({"qualify", path});
    EXPECT_EQ(r.exit_code, 2) << c.file << ": " << r.out << r.err;
    EXPECT_NE(r.err.find(c.field), std::string::npos) << c.file << ": " << r.err;
  }
}

// A baseline that cannot judge: no ceilings (it used to add no rows and pass), or a ceiling of 0 (the
// threshold ">= 0.00 B/s" passed anything). Both are bad input naming the problem.
TEST(QualifyCli, ABaselineThatCannotJudgeIsBadInput) {
  const std::string dir = test::scratch_dir("qualify_bad_baseline");
  const std::string good = kFixtures + "/h200-qualify.profile.json";
  json empty = read_json_file(good);
  empty["ceilings"] = json::array();
  std::ofstream(dir + "/empty.profile.json") << empty.dump();
  auto r = test::run_cli({"qualify", good, "--baseline", dir + "/empty.profile.json"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("the baseline has no ceilings"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("PASS"), std::string::npos) << r.out;

  json zero = read_json_file(good);
  ASSERT_EQ(zero["ceilings"][0]["name"], "hbm.copy");
  zero["ceilings"][0]["value"] = 0;
  std::ofstream(dir + "/zero.profile.json") << zero.dump();
  r = test::run_cli({"qualify", good, "--baseline", dir + "/zero.profile.json"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("zero.profile.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ceilings[0].value"), std::string::npos) << r.err;
}

// The run being judged as its own baseline, by the same path twice or by a copy, would pass every baseline row:
// bad input. Another run of the same GPU (another time) is a baseline, as is a fleet's.
TEST(QualifyCli, TheRunBeingJudgedIsNotItsOwnBaseline) {
  const std::string dir = test::scratch_dir("qualify_own_baseline");
  const std::string good = kFixtures + "/h200-qualify.profile.json";
  const json doc = read_json_file(good);
  std::ofstream(dir + "/copy.profile.json") << doc.dump();
  for (const std::string& baseline : {good, dir + "/copy.profile.json"}) {
    const auto r = test::run_cli({"qualify", good, "--baseline", baseline});
    EXPECT_EQ(r.exit_code, 2) << baseline << ": " << r.out << r.err;
    EXPECT_NE(r.err.find("is the run being judged (GPU " + doc["device"]["uuid"].get<std::string>() +
                         ", written " + doc["created"].get<std::string>() + ")"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.out.find("PASS"), std::string::npos) << r.out;
  }
  // Edited from it (the degraded fixtures are): another profile, judged.
  auto r = test::run_cli({"qualify", kFixtures + "/degraded/slow-hbm.profile.json", "--baseline", good});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  json earlier = doc;
  earlier["created"] = "2026-01-02T03:04:05Z";
  std::ofstream(dir + "/earlier.profile.json") << earlier.dump();
  r = test::run_cli({"qualify", good, "--baseline", dir + "/earlier.profile.json"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("baseline"), std::string::npos) << r.out;
  json fleet = doc;
  fleet["baseline"] = {{"profiles", 3}};
  std::ofstream(dir + "/fleet.profile.json") << fleet.dump();
  r = test::run_cli({"qualify", good, "--baseline", dir + "/fleet.profile.json"});
  EXPECT_NE(r.exit_code, 2) << r.out << r.err;
}

TEST(QualifyCli, TruncatedOrCorruptProfileIsBadInput) {
  const std::string dir = test::scratch_dir("qualify_corrupt");
  std::ifstream in(kFixtures + "/h200-qualify.profile.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(dir + "/truncated.json") << text.substr(0, text.size() / 3);
  auto r = test::run_cli({"qualify", dir + "/truncated.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not valid JSON"), std::string::npos) << r.err;

  std::ofstream(dir + "/empty.json") << "";
  r = test::run_cli({"qualify", dir + "/empty.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("empty.json' is empty"), std::string::npos) << r.err;

  json j = json::parse(text);
  j["ceilings"][0]["value"] = "fast";
  std::ofstream(dir + "/corrupt.json") << j.dump();
  r = test::run_cli({"qualify", dir + "/corrupt.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("ceilings[0].value"), std::string::npos) << r.err;

  r = test::run_cli({"qualify", dir + "/none.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("none.json': no such file"), std::string::npos) << r.err;
  r = test::run_cli({"qualify", kFixtures + "/h200-qualify.profile.json", "--baseline", dir + "/truncated.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("truncated.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not valid JSON"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ceilings

namespace ceilings {
namespace {
// A baseline measured by another build (its measurement code) cannot fail a GPU: the shortfall may be the code's.
// One from a run that did not complete says so; a ceiling the baseline lacks is named as not judged against it,
// not passed over (review 46).
TEST(Qualify, ABaselineMeasuredOtherwiseOrIncompleteIsSaid) {
  const std::string stored = std::string(CEILINGS_SOURCE_DIR) + "/results/nvidia-h200/h200.profile.json";
  Profile baseline = read_profile(stored);
  Profile p = read_profile(stored);
  for (Ceiling& c : p.ceilings)
    if (c.name == "gemm.bf16") c.value *= 0.9;
  // The same build: the shortfall fails, and nothing is said of how they were measured.
  QualifyResult same = qualify(p, &baseline, default_rules());
  EXPECT_EQ(find_check(same, "gemm.bf16", "baseline").status, CheckStatus::kFail);
  for (const Check& k : same.checks) EXPECT_NE(k.rule, "measured alike");
  // Another measurement code: not judged as a failure, and said why.
  p.tool_measurement_code = "0123456789ab";
  baseline.tool_measurement_code = "ba9876543210";
  baseline.ceilings.erase(std::remove_if(baseline.ceilings.begin(), baseline.ceilings.end(),
                                         [](const Ceiling& c) { return c.name == "l2.read"; }),
                          baseline.ceilings.end());
  baseline.raw["measure"] = {{"complete", false}, {"stopped", "interrupted by SIGTERM"}};
  const QualifyResult other = qualify(p, &baseline, default_rules());
  const Check& bf16 = find_check(other, "gemm.bf16", "baseline");
  EXPECT_EQ(bf16.status, CheckStatus::kIncomplete);
  EXPECT_NE(bf16.reason.find("measured otherwise than the baseline"), std::string::npos) << bf16.reason;
  const Check& alike = find_check(other, "baseline", "measured alike");
  EXPECT_EQ(alike.status, CheckStatus::kNotJudged);
  EXPECT_NE(alike.reason.find("measurement code 0123456789ab"), std::string::npos) << alike.reason;
  EXPECT_NE(alike.reason.find("(baseline: "), std::string::npos) << alike.reason;
  const Check& complete = find_check(other, "baseline", "complete");
  EXPECT_NE(complete.reason.find("did not complete (interrupted by SIGTERM)"), std::string::npos) << complete.reason;
  const Check& l2 = find_check(other, "l2.read", "baseline");
  EXPECT_EQ(l2.status, CheckStatus::kNotJudged);
  EXPECT_EQ(l2.reason, "not in the baseline: not judged against it");
  EXPECT_NE(other.verdict(), CheckStatus::kFail);
  // A --quick pass against a full baseline by the same code: another measurement, not judged (review 98).
  {
    Profile quick = p, full = read_profile(stored);
    quick.tool_measurement_code = full.tool_measurement_code;
    quick.quick = true;
    full.quick = false;
    const QualifyResult q = qualify(quick, &full, default_rules());
    EXPECT_EQ(find_check(q, "gemm.bf16", "baseline").status, CheckStatus::kIncomplete);
    const Check& k = find_check(q, "baseline", "measured alike");
    EXPECT_NE(k.reason.find("quick pass (baseline: "), std::string::npos) << k.reason;
    EXPECT_NE(k.reason.find("another measurement: a shortfall against the baseline is not judged"), std::string::npos)
        << k.reason;
    quick.quick = false;  // both full: judged
    EXPECT_EQ(find_check(qualify(quick, &full, default_rules()), "gemm.bf16", "baseline").status, CheckStatus::kFail);
  }
  // Another cuBLAS alone is another measurement of the GEMMs only: an L2 shortfall still fails (review 47).
  p.tool_measurement_code = baseline.tool_measurement_code;
  p.device.cublas = "12.9.1";
  for (Ceiling& c : p.ceilings)
    if (c.name == "l2.read") c.value *= 0.8;
  baseline = read_profile(stored);
  baseline.tool_measurement_code = p.tool_measurement_code;
  const QualifyResult cublas = qualify(p, &baseline, default_rules());
  EXPECT_EQ(find_check(cublas, "gemm.bf16", "baseline").status, CheckStatus::kIncomplete);
  EXPECT_EQ(find_check(cublas, "l2.read", "baseline").status, CheckStatus::kFail);
  EXPECT_NE(find_check(cublas, "baseline", "measured alike").reason.find("for the GEMMs cuBLAS runs"),
            std::string::npos);
  // Another release with the same measurement code measured alike: the shortfall fails, the release is only said.
  p.device.cublas = baseline.device.cublas;
  p.tool_version = "0.2.0";
  const QualifyResult release = qualify(p, &baseline, default_rules());
  EXPECT_EQ(find_check(release, "gemm.bf16", "baseline").status, CheckStatus::kFail);
  EXPECT_EQ(find_check(release, "baseline", "measured alike").reason.find("another measurement"), std::string::npos);
  // Measured with more GPUs at once than the baseline: the shortfall may be the shared power, cooling and host
  // links, not judged; with fewer, it is the GPU's own and fails; a count either lacks says nothing (review 51).
  p.tool_version = baseline.tool_version;
  p.gpus_measured_together = 8;
  baseline.gpus_measured_together = 1;
  const QualifyResult more = qualify(p, &baseline, default_rules());
  const Check& shared = find_check(more, "gemm.bf16", "baseline");
  EXPECT_EQ(shared.status, CheckStatus::kIncomplete);
  EXPECT_NE(shared.reason.find("measured with 8 GPUs at once, the baseline with 1"), std::string::npos) << shared.reason;
  EXPECT_NE(find_check(more, "baseline", "measured alike").reason.find("GPUs measured together 8 (baseline: 1)"),
            std::string::npos);
  std::swap(p.gpus_measured_together, baseline.gpus_measured_together);
  const QualifyResult fewer = qualify(p, &baseline, default_rules());
  EXPECT_EQ(find_check(fewer, "gemm.bf16", "baseline").status, CheckStatus::kFail);
  baseline.gpus_measured_together.reset();
  const QualifyResult unknown = qualify(p, &baseline, default_rules());
  for (const Check& k : unknown.checks) EXPECT_NE(k.rule, "measured alike") << k.reason;
}
}  // namespace
}  // namespace ceilings
