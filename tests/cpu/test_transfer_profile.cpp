// The contract between the transfer/latency families and the profile: benchmark names, sweep points
// (candidate=0), plateau ceilings, per-direction counters and "unsupported:" skips turn into the
// ceilings and detail the analysis expects. Documents built here in the shape ceilings-bench writes
// them (bench/pcie.cu, p2p.cu, latency.cu); not captured measurements.
#include <gtest/gtest.h>

#include "ceilings/bench_json.hpp"
#include "ceilings/qualify.hpp"
#include "support/bench_output.hpp"

using namespace ceilings;

namespace {

json context_doc(const json& benchmarks) { return test::bench_output(benchmarks.get<std::vector<json>>()); }

json measured(const std::string& name, const char* value_key, double value, json extra = json::object()) {
  json b = {{"name", name + "/iterations:1/manual_time"},
            {"run_name", name + "/iterations:1/manual_time"},
            {"run_type", "iteration"},
            {"iterations", 1},
            {"real_time", 1.0},
            {"cpu_time", 1.0},
            {"time_unit", "us"},
            {value_key, value},
            {"cv", 0.003},
            {"samples", 12},
            {"verified", 1},
            {"telemetry", 0},
            {"throttled", 0}};
  for (const auto& [k, v] : extra.items()) b[k] = v;
  return b;
}

json skipped(const std::string& name, const std::string& message) {
  return {{"name", name + "/iterations:1/manual_time"}, {"run_name", name + "/iterations:1/manual_time"},
          {"run_type", "iteration"}, {"iterations", 0}, {"error_occurred", true}, {"error_message", message}};
}

TEST(TransferProfile, PcieSweepAndPlateauCeiling) {
  json benches = json::array();
  for (auto [size, rate] : {std::pair<double, double>{65536, 18e9}, {1048576, 46e9}, {16777216, 54.6e9},
                            {268435456, 55.3e9}})
    benches.push_back(measured("pcie/h2d/size:" + std::to_string(static_cast<long long>(size)), "bytes_per_second",
                               rate, {{"candidate", 0}, {"transfer_bytes", size}, {"bytes", size}}));
  benches.push_back(measured("pcie/h2d", "bytes_per_second", 55.3e9,
                             {{"transfer_bytes", 268435456.0}, {"plateau_start_bytes", 16777216.0},
                              {"plateau_points", 2.0}, {"pcie_gen", 5.0}, {"pcie_width", 16.0},
                              {"link_share", 0.8776}, {"numa_node", 1.0}, {"numa_pinned", 1.0}}));
  benches.push_back(measured("pcie/bidir", "bytes_per_second", 99e9,
                             {{"h2d_bytes_per_second", 47.9e9}, {"d2h_bytes_per_second", 51.1e9}}));
  benches.push_back(measured("pcie/bidir_sm", "bytes_per_second", 95e9,
                             {{"h2d_bytes_per_second", 46e9}, {"d2h_bytes_per_second", 49e9}}));
  benches.push_back(measured("pcie/d2h_sm", "bytes_per_second", 52.6e9));
  const Profile p = profile_from_benchmark_json(context_doc(benches));
  const Ceiling* h2d = p.find("pcie.h2d");
  ASSERT_NE(h2d, nullptr);
  EXPECT_DOUBLE_EQ(h2d->value, 55.3e9);  // the plateau case, not the best sweep point
  EXPECT_EQ(h2d->unit, "B/s");
  ASSERT_TRUE(h2d->detail.contains("sweep"));
  EXPECT_EQ(h2d->detail["sweep"].size(), 4u);
  EXPECT_DOUBLE_EQ(h2d->detail["sweep"][0]["size"].get<double>(), 65536);
  EXPECT_DOUBLE_EQ(h2d->detail["plateau_start_bytes"].get<double>(), 16777216);
  EXPECT_DOUBLE_EQ(h2d->detail["link_share"].get<double>(), 0.8776);
  EXPECT_DOUBLE_EQ(h2d->detail["numa_node"].get<double>(), 1);
  ASSERT_TRUE(h2d->datasheet.has_value());
  EXPECT_NEAR(*h2d->datasheet, 63.0e9, 0.1e9);  // Gen5 x16 per direction
  const Ceiling* bidir = p.find("pcie.bidir");
  ASSERT_NE(bidir, nullptr);
  EXPECT_DOUBLE_EQ(bidir->detail["h2d_bytes_per_second"].get<double>(), 47.9e9);
  ASSERT_TRUE(bidir->datasheet.has_value());
  EXPECT_NEAR(*bidir->datasheet, 126.0e9, 0.2e9);  // both directions
  // The SM variant of both directions is a sum too: its roof is both directions, not one.
  ASSERT_NE(p.find("pcie.bidir_sm"), nullptr);
  ASSERT_TRUE(p.find("pcie.bidir_sm")->datasheet.has_value());
  EXPECT_NEAR(*p.find("pcie.bidir_sm")->datasheet, 126.0e9, 0.2e9);
  ASSERT_TRUE(p.find("pcie.d2h_sm")->datasheet.has_value());
  EXPECT_NEAR(*p.find("pcie.d2h_sm")->datasheet, 63.0e9, 0.1e9);
}

TEST(TransferProfile, TheLinkReadUnderLoadRaisesTheIdleReading) {
  // The fingerprint read the link at start, idle, trained down to Gen1; the copies saw Gen5 x16.
  json doc = context_doc(json::array({measured("pcie/h2d", "bytes_per_second", 55.3e9,
                                               {{"pcie_gen", 5.0}, {"pcie_width", 16.0}}),
                                      measured("pcie/h2d_pageable", "bytes_per_second", 6.9e9,
                                               {{"pcie_gen", 3.0}, {"pcie_width", 16.0}})}));
  json device = json::parse(doc["context"][kContextDevice].get<std::string>());
  device["pcie"] = {{"gen", 1}, {"width", 16}, {"max_gen", 5}, {"max_width", 16}};
  doc["context"][kContextDevice] = device.dump();
  const Profile p = profile_from_benchmark_json(doc);
  EXPECT_EQ(p.device.pcie.gen, 5);  // the best loaded reading, not the idle one nor the pageable point's
  EXPECT_EQ(p.device.pcie.width, 16);
  EXPECT_EQ(p.device.pcie.max_gen, 5);
  EXPECT_EQ(p.raw["device"]["pcie"]["gen"], 5);
  // Without pcie ceilings the fingerprint's reading stands.
  json other = context_doc(json::array({measured("hbm/copy", "bytes_per_second", 4.3e12)}));
  other["context"][kContextDevice] = device.dump();
  EXPECT_EQ(profile_from_benchmark_json(other).device.pcie.gen, 1);
}

TEST(TransferProfile, SingleGpuPeerCasesAreSkippedNotErrors) {
  json benches = json::array();
  for (const char* v : {"nvlink/p2p_uni/engine:ce/op:write", "nvlink/p2p_bidir/engine:ce/op:write"})
    benches.push_back(skipped(v, "unsupported: single GPU: no peer"));
  const Profile p = profile_from_benchmark_json(context_doc(benches));
  EXPECT_TRUE(p.ceilings.empty());
  EXPECT_TRUE(p.errors.empty());
  ASSERT_EQ(p.skipped.size(), 2u);
  EXPECT_EQ(p.skipped[0].name, "nvlink.p2p_uni");
  EXPECT_EQ(p.skipped[0].reason.rfind("single GPU: no peer", 0), 0u) << p.skipped[0].reason;
}

// Four H200 NVL cards on a 4-way NVLink bridge: each pair has 6 of a card's 18 links, so its datasheet is a
// third of the card's NVLink figure and a healthy pair passes the default rule; without the link counts (NVML
// could not name the links' far ends) the card's whole figure stands.
TEST(TransferProfile, BridgedPairsAreJudgedAgainstTheirShareOfTheLinks) {
  auto profile = [](json extra) {
    json doc = context_doc(json::array({measured("nvlink/p2p_uni/engine:ce/op:write", "bytes_per_second", 128e9,
                                                 std::move(extra))}));
    json device = json::parse(doc["context"][kContextDevice].get<std::string>());
    device["name"] = "NVIDIA H200 NVL";
    doc["context"][kContextDevice] = device.dump();
    return profile_from_benchmark_json(doc);
  };
  const Profile bridged = profile({{"nvlink_pair_links", 6}, {"nvlink_gpu_links", 18}});
  const Ceiling* uni = bridged.find("nvlink.p2p_uni");
  ASSERT_NE(uni, nullptr);
  ASSERT_TRUE(uni->datasheet.has_value());
  EXPECT_DOUBLE_EQ(*uni->datasheet, 900e9 / 2 / 3);
  auto verdict = [](const Profile& p) {
    for (const Check& c : qualify(p, nullptr, default_rules()).checks)
      if (c.subject == "nvlink.p2p_uni" && c.rule == "datasheet fraction") return c.status;
    return CheckStatus::kIncomplete;
  };
  EXPECT_EQ(verdict(bridged), CheckStatus::kPass);  // 128 of 150 GB/s
  const Profile unknown = profile(json::object());
  ASSERT_TRUE(unknown.find("nvlink.p2p_uni")->datasheet.has_value());
  EXPECT_DOUBLE_EQ(*unknown.find("nvlink.p2p_uni")->datasheet, 900e9 / 2);
  EXPECT_EQ(verdict(unknown), CheckStatus::kFail);  // 128 of 450 GB/s
}

TEST(TransferProfile, LatencySweepLandsInTheHbmCeiling) {
  json benches = json::array();
  benches.push_back(measured("latency/l2/working_set:15728640", "latency_s", 2.6e-7, {{"working_set_bytes", 15728640}}));
  for (auto [ws, s] : {std::pair<double, double>{16384, 2e-8}, {8388608, 2.5e-7}, {268435456, 6.5e-7}})
    benches.push_back(measured("latency/hbm/working_set:" + std::to_string(static_cast<long long>(ws)) + "/l1:1",
                               "latency_s", s, {{"candidate", 0}, {"working_set_bytes", ws}}));
  benches.push_back(measured("latency/hbm/working_set:536870912", "latency_s", 6.8e-7));
  benches.push_back(measured("latency/launch", "latency_s", 2.1e-6, {{"sync_roundtrip_s", 6e-6}}));
  const Profile p = profile_from_benchmark_json(context_doc(benches));
  const Ceiling* hbm = p.find("latency.hbm");
  ASSERT_NE(hbm, nullptr);
  EXPECT_DOUBLE_EQ(hbm->value, 6.8e-7);  // not the 20 ns L1 point of the sweep
  EXPECT_EQ(hbm->unit, "s");
  ASSERT_TRUE(hbm->detail.contains("sweep"));
  EXPECT_EQ(hbm->detail["sweep"].size(), 3u);
  ASSERT_NE(p.find("latency.l2"), nullptr);
  EXPECT_DOUBLE_EQ(p.find("latency.launch")->detail["sync_roundtrip_s"].get<double>(), 6e-6);
}

}  // namespace
