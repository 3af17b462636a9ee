// Fleet comparison on generated fleets (made-up values around the hand-written H200 fixture, never
// measurements): planted outliers are all found, a clean fleet yields none, grouping, baselines, the CLI.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include "ceilings/fleet.hpp"
#include "ceilings/stats.hpp"
#include "cli_runner.hpp"

namespace {

namespace fs = std::filesystem;
using namespace ceilings;
using ceilings::test::run_cli;

const Profile& fixture() {
  static const Profile p = read_profile(std::string(CEILINGS_FIXTURES) + "/profiles/h200-handmade.profile.json");
  return p;
}

// A generated fleet: every GPU is the fixture with each ceiling scaled by 1 + noise, noise normal with a
// 0.5% relative sigma clipped at 3 sigma (a clean fleet has no real outliers), plus planted deficits.
class FleetGen {
 public:
  explicit FleetGen(unsigned seed, double sigma = 0.005) : rng_(seed), sigma_(sigma) {}

  // n GPUs on nodes 0..n-1, named prefix + node; the first `slow` of them `deficit` worse in `ceiling`.
  std::vector<FleetMember> fleet(int n, int slow, const std::string& ceiling, double deficit, const std::string& prefix) {
    std::vector<FleetMember> out;
    for (int i = 0; i < n; ++i)
      out.push_back({prefix + std::to_string(i),
                     gpu(i, 0, i < slow ? std::map<std::string, double>{{ceiling, deficit}} : std::map<std::string, double>{})});
    return out;
  }

  // `deficit`: ceiling -> fraction worse than nominal (rates lower, latencies higher).
  Profile gpu(int node, int index, const std::map<std::string, double>& deficit = {}) {
    Profile p = fixture();
    p.raw = json::object();
    p.raw["note"] = "generated test profile, not a measurement";
    p.hostname = "node" + std::to_string(node);
    p.device.index = index;
    char uuid[64];
    std::snprintf(uuid, sizeof uuid, "GPU-%08d-0000-0000-0000-%012d", node, index);
    p.device.uuid = uuid;
    char bus[32];
    std::snprintf(bus, sizeof bus, "00000000:%02X:00.0", 0x10 + index);
    p.device.pci_bus_id = bus;
    for (Ceiling& c : p.ceilings) {
      const double noise = std::clamp(normal_(rng_), -3.0, 3.0) * sigma_;
      const bool rate = c.unit != "s";
      c.value *= rate ? 1 + noise : 1 - noise;
      if (auto it = deficit.find(c.name); it != deficit.end()) c.value *= rate ? 1 - it->second : 1 + it->second;
    }
    return p;
  }

 private:
  std::mt19937 rng_;
  double sigma_;
  std::normal_distribution<double> normal_{0.0, 1.0};
};

// `fleet` written as profiles into a fresh scratch directory `name` (each member's path its file name); the directory.
std::string write_fleet(const std::vector<FleetMember>& fleet, const std::string& name) {
  const std::string dir = ceilings::test::scratch_dir(name);
  for (const FleetMember& m : fleet) write_file_atomic(dir + "/" + m.path + ".profile.json", profile_to_json(m.profile).dump());
  return dir;
}

// `p` with an nvlink.p2p_uni ceiling of its own pairs (measure --all-gpus) or of every pair of its node.
Profile with_nvlink_ceiling(Profile p, bool own_pairs) {
  Ceiling c;
  c.name = "nvlink.p2p_uni";
  c.unit = "B/s";
  c.value = 3.9e11;
  c.cv = 0.001;
  c.samples = 10;
  c.verified = true;
  c.detail = {{"benchmark", "nvlink/p2p_uni/engine:ce/op:write"}, {"scope_device", own_pairs ? 1 : 0}};
  p.ceilings.push_back(c);
  return p;
}

struct Planted {
  int node, index;
  std::map<std::string, double> deficit;
};

// 1000 GPUs (125 nodes x 8); `planted` GPUs get their deficits.
std::vector<FleetMember> make_fleet(const std::vector<Planted>& planted, unsigned seed = 7) {
  FleetGen gen(seed);
  std::vector<FleetMember> fleet;
  for (int node = 0; node < 125; ++node)
    for (int i = 0; i < 8; ++i) {
      std::map<std::string, double> deficit;
      for (const Planted& p : planted)
        if (p.node == node && p.index == i) deficit = p.deficit;
      fleet.push_back({"node" + std::to_string(node) + "-gpu" + std::to_string(i), gen.gpu(node, i, deficit)});
    }
  return fleet;
}

const std::vector<Planted>& planted() {
  static const std::vector<Planted> p{
      {3, 1, {{"hbm.copy", 0.10}}},                          // both rules
      {17, 7, {{"gemm.bf16", 0.03}}},                        // 6 sigma: the z-score alone finds it (threshold
                                                             // ~4.5: 1000 GPUs, 8000 comparisons)
      {42, 0, {{"latency.launch", 0.20}}},                   // a latency: higher is worse
      {99, 4, {{"pcie.h2d", 0.50}, {"hbm.read", 0.06}}},     // a half-speed PCIe link and a slow HBM
      {124, 5, {{"hbm.copy", 0.035}, {"hbm.read", 0.035}}},  // 7 sigma on two ceilings
  };
  return p;
}

// What the host bounds as much as the GPU is left out where GPUs in other servers are set against a group: pageable
// copies, launch latency, small copies; not a graph's per-node cost, which the GPU sets (807 ns a node on the H200,
// 803 timed on the GPU alone), nor anything of the GPU's own.
TEST(Fleet, HostBoundCeilingsAreTheHostsPathOnly) {
  for (const char* host : {"pcie.h2d_pageable", "pcie.d2h_pageable", "latency.launch", "latency.h2d_small",
                           "latency.d2h_small"})
    EXPECT_TRUE(host_bound_ceiling(host)) << host;
  for (const char* gpu : {"latency.graph_launch", "latency.l2", "latency.hbm", "hbm.copy", "pcie.h2d", "gemm.bf16"})
    EXPECT_FALSE(host_bound_ceiling(gpu)) << gpu;
}

// One node's GPUs against each other (measure --all-gpus, ceilings::compare_node): each model within itself, a
// model with fewer GPUs than a comparison needs named, not compared; a GPU below its peers by the margin named with
// its index among the profiles given; half the node slower alike found by the split, against the faster half.
TEST(Fleet, ANodeIsComparedModelByModel) {
  FleetGen gen(11, 0.001);
  std::vector<Profile> gpus;
  Profile display = gen.gpu(0, 0);
  display.device.name = "NVIDIA L4";  // a workstation's other model: first, so indices must map back
  gpus.push_back(display);
  for (int i = 1; i <= 4; ++i)
    gpus.push_back(gen.gpu(0, i, i == 3 ? std::map<std::string, double>{{"hbm.copy", 0.15}}
                                        : std::map<std::string, double>{}));
  std::vector<const Profile*> node;
  for (const Profile& p : gpus) node.push_back(&p);
  const NodeComparison c = compare_node(node, 0.05);
  EXPECT_EQ(c.gpus_compared, 4u);
  EXPECT_EQ(c.too_few, (std::vector<std::string>{"1 NVIDIA L4"}));
  ASSERT_EQ(c.below_peers.size(), 1u);
  EXPECT_EQ(c.below_peers[0].member, 3u);
  ASSERT_FALSE(c.below_peers[0].ceilings.empty());
  EXPECT_EQ(c.below_peers[0].ceilings[0].ceiling, "hbm.copy");
  EXPECT_NEAR(c.below_peers[0].ceilings[0].deficit, 0.15, 0.01);
  EXPECT_TRUE(c.unstable.empty());
  EXPECT_GE(c.own_spread, 2.0);

  // Eight GPUs, four of them 10% slower alike in pcie.h2d (one socket's switch): the median sits among them.
  std::vector<Profile> eight;
  for (int i = 0; i < 8; ++i)
    eight.push_back(gen.gpu(1, i, i >= 4 ? std::map<std::string, double>{{"pcie.h2d", 0.10}}
                                        : std::map<std::string, double>{}));
  std::vector<const Profile*> split;
  for (const Profile& p : eight) split.push_back(&p);
  const NodeComparison s = compare_node(split, 0.05);
  EXPECT_EQ(s.gpus_compared, 8u);
  EXPECT_TRUE(s.too_few.empty());
  std::vector<std::size_t> named;
  for (const Outlier& o : s.below_peers) {
    named.push_back(o.member);
    ASSERT_FALSE(o.ceilings.empty());
    EXPECT_EQ(o.ceilings[0].ceiling, "pcie.h2d");
    EXPECT_TRUE(o.ceilings[0].by_split);
  }
  std::sort(named.begin(), named.end());
  EXPECT_EQ(named, (std::vector<std::size_t>{4, 5, 6, 7}));

  // Fewer than three of any model: no comparison at all.
  const NodeComparison two = compare_node({node[1], node[2]}, 0.05);
  EXPECT_EQ(two.gpus_compared, 0u);
  EXPECT_TRUE(two.below_peers.empty());
  EXPECT_EQ(two.too_few, (std::vector<std::string>{"2 NVIDIA H200"}));
}

TEST(Fleet, CleanFleetOf1000HasNoOutliers) {
  const auto fleet = make_fleet({});
  const auto groups = analyze_fleet(fleet, OutlierRule{});
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].members.size(), 1000u);
  EXPECT_TRUE(groups[0].outliers.empty()) << groups[0].outliers.size() << " invented";
  ASSERT_EQ(groups[0].stats.size(), fixture().ceilings.size());
  for (const CeilingStats& s : groups[0].stats) {
    EXPECT_EQ(s.n, 1000u);
    EXPECT_NEAR(s.median, fixture().find(s.name)->value, fixture().find(s.name)->value * 0.002) << s.name;
    // MAD of a normal is 0.6745 sigma: 0.34% here.
    EXPECT_NEAR(s.mad / s.median, 0.6745 * 0.005, 0.0006) << s.name;
  }
}

TEST(Fleet, PlantedOutliersAreAllFoundAndNamed) {
  const auto fleet = make_fleet(planted());
  const auto groups = analyze_fleet(fleet, OutlierRule{});
  ASSERT_EQ(groups.size(), 1u);
  const FleetGroup& g = groups[0];
  ASSERT_EQ(g.outliers.size(), planted().size());
  // Every verified ceiling of every GPU is a comparison; the threshold is Student's t with 0.4 x 1000 - 0.2
  // degrees of freedom at 0.05 over them (about 4.5 for 8000).
  const auto verified = std::count_if(fixture().ceilings.begin(), fixture().ceilings.end(),
                                      [](const Ceiling& c) { return c.verified; });
  EXPECT_EQ(g.z_comparisons, 1000u * static_cast<std::size_t>(verified));
  EXPECT_NEAR(g.z_threshold, student_t_upper_quantile(0.05 / static_cast<double>(g.z_comparisons), 399.8), 1e-9);
  EXPECT_GT(g.z_threshold, 4.3);
  EXPECT_LT(g.z_threshold, 4.8);
  std::set<std::string> found;
  for (const Outlier& o : g.outliers) {
    const Profile& p = fleet[g.members[o.member]].profile;
    const Planted* match = nullptr;
    for (const Planted& pl : planted())
      if ("node" + std::to_string(pl.node) == p.hostname && pl.index == p.device.index) match = &pl;
    ASSERT_NE(match, nullptr) << "invented outlier " << p.hostname << " gpu " << p.device.index;
    found.insert(p.hostname + "/" + std::to_string(p.device.index));
    std::set<std::string> drove;
    for (const Deviation& d : o.ceilings) {
      drove.insert(d.ceiling);
      ASSERT_TRUE(d.z.has_value());
      EXPECT_NEAR(d.deficit, match->deficit.at(d.ceiling), 0.02) << d.ceiling;
      EXPECT_EQ(d.by_margin, d.deficit > 0.05) << d.ceiling;
      EXPECT_EQ(d.by_z, *d.z < -d.z_threshold && d.deficit >= 0.01) << d.ceiling;
    }
    std::set<std::string> expected;
    for (const auto& [name, v] : match->deficit) expected.insert(name);
    EXPECT_EQ(drove, expected) << p.hostname;
  }
  EXPECT_EQ(found.size(), planted().size());
  // Worst first, and the 3% GEMM deficit is found by the z-score only.
  EXPECT_EQ(fleet[g.members[g.outliers.front().member]].profile.hostname, "node99");
  for (const Outlier& o : g.outliers)
    for (const Deviation& d : o.ceilings)
      if (d.ceiling == "gemm.bf16") {
        EXPECT_TRUE(d.by_z);
        EXPECT_FALSE(d.by_margin);
      }
}

TEST(Fleet, GroupsByFingerprint) {
  FleetGen gen(11, 0.001);  // small groups, quiet GPUs: nothing here may be named
  std::vector<FleetMember> fleet;
  for (int i = 0; i < 12; ++i) fleet.push_back({"a" + std::to_string(i), gen.gpu(1, i % 8)});
  for (int i = 0; i < 6; ++i) {  // another driver: its own group even with identical hardware
    Profile p = gen.gpu(2, i);
    p.device.driver = "570.86.15";
    fleet.push_back({"b" + std::to_string(i), p});
  }
  for (int i = 0; i < 4; ++i) {  // a lower power limit and 20% less: not outliers within their group, but unlike
    Profile p = gen.gpu(3, i, {{"hbm.copy", 0.2}, {"gemm.bf16", 0.2}, {"hbm.read", 0.2}});
    p.device.power_limit_w = 500;
    fleet.push_back({"c" + std::to_string(i), p});
  }
  Profile h100 = gen.gpu(4, 0);
  h100.device.name = "NVIDIA H100 80GB HBM3";
  h100.device.memory_bytes = 85520809984ULL;
  fleet.push_back({"d0", h100});
  for (int i = 0; i < 2; ++i) {  // a node of four: its peer ceilings are another node size's
    Profile p = gen.gpu(5, i);
    p.gpus_visible = 4;
    fleet.push_back({"e" + std::to_string(i), p});
  }

  const auto groups = analyze_fleet(fleet, OutlierRule{});
  ASSERT_EQ(groups.size(), 5u);
  EXPECT_EQ(groups[0].members.size(), 12u);
  EXPECT_EQ(groups[1].members.size(), 6u);
  EXPECT_EQ(groups[1].fingerprint.driver, "570.86.15");
  EXPECT_EQ(groups[2].members.size(), 4u);
  EXPECT_EQ(groups[2].fingerprint.power_limit_w.value_or(0), 500);
  EXPECT_EQ(groups[3].members.size(), 2u);
  EXPECT_EQ(groups[3].fingerprint.gpus_visible.value_or(0), 4);
  EXPECT_NE(groups[3].fingerprint.label().find("4 GPUs"), std::string::npos) << groups[3].fingerprint.label();
  ASSERT_TRUE(groups[3].peer_group.has_value()) << "set against the H200s of unrecorded node size";
  EXPECT_EQ(*groups[3].peer_group, 0u);
  EXPECT_EQ(groups[3].differences, std::vector<std::string>{"GPUs visible 4 (peers: ?)"});
  EXPECT_EQ(groups[4].members.size(), 1u);
  EXPECT_EQ(groups[4].fingerprint.gpu, "NVIDIA H100 80GB HBM3");
  for (const FleetGroup& g : groups) EXPECT_TRUE(g.outliers.empty()) << g.fingerprint.label();
  for (std::size_t i = 0; i < 3; ++i) EXPECT_FALSE(groups[i].too_small);
  // Groups large enough to compare within themselves are still set against their model's largest group: a
  // fleet split by a driver or a power limit is configured unlike itself, and the capped GPUs are 20% slower.
  EXPECT_FALSE(groups[0].peer_group.has_value()) << "the model's largest group is the reference";
  ASSERT_TRUE(groups[1].peer_group.has_value());
  EXPECT_EQ(*groups[1].peer_group, 0u);
  EXPECT_EQ(groups[1].differences, std::vector<std::string>{"driver 570.86.15 (peers: 580.95.05)"});
  EXPECT_TRUE(groups[1].versus_peers.empty());
  ASSERT_TRUE(groups[2].peer_group.has_value());
  EXPECT_EQ(groups[2].versus_peers.size(), 4u);  // each capped GPU, by its 20% deficits
  EXPECT_EQ(count_findings(groups).unlike_peers, 6u + 4u + 2u);
  EXPECT_TRUE(groups[3].too_small);
  EXPECT_TRUE(groups[4].too_small);
  EXPECT_FALSE(groups[4].peer_group.has_value()) << "no other H100 to compare it with";
  EXPECT_NE(groups[2].fingerprint.label().find("500 W"), std::string::npos) << groups[2].fingerprint.label();
}

// NVLink ceilings measured by `measure --all-gpus` (each GPU's own pairs) and by a single run (every pair of
// the node) are not one population: two groups, the smaller set against the larger with the difference named.
// A profile without nvlink ceilings (the family skipped) joins the larger group that matches it otherwise,
// where its missing nvlink ceiling is named with the reason.
TEST(Fleet, NvlinkCeilingsOfOwnAndAllPairsAreNotComparedAsOne) {
  FleetGen gen(13, 0.001);
  auto with_nvlink = [&](int node, int index, bool own_pairs) {
    return with_nvlink_ceiling(gen.gpu(node, index), own_pairs);
  };
  std::vector<FleetMember> fleet;
  for (int i = 0; i < 8; ++i) fleet.push_back({"own" + std::to_string(i), with_nvlink(1, i, true)});
  for (int i = 0; i < 2; ++i) fleet.push_back({"all" + std::to_string(i), with_nvlink(2, i, false)});
  fleet.push_back({"none", gen.gpu(3, 0)});

  EXPECT_EQ(fingerprint_of(fleet[0].profile).nvlink_own_pairs, std::optional<bool>(true));
  EXPECT_EQ(fingerprint_of(fleet[8].profile).nvlink_own_pairs, std::optional<bool>(false));
  EXPECT_FALSE(fingerprint_of(fleet[10].profile).nvlink_own_pairs.has_value());
  EXPECT_NE(fingerprint_of(fleet[0].profile).key(), fingerprint_of(fleet[8].profile).key());

  const auto groups = analyze_fleet(fleet, OutlierRule{});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].members.size(), 9u);
  EXPECT_EQ(groups[0].members.back(), 10u) << "the profile without nvlink ceilings";
  EXPECT_NE(groups[0].fingerprint.label().find("NVLink: own pairs"), std::string::npos) << groups[0].fingerprint.label();
  EXPECT_EQ(groups[0].fingerprint.to_json().at("nvlink_pairs"), "own");
  ASSERT_EQ(groups[0].missing.size(), 1u);
  EXPECT_EQ(groups[0].missing[0].member, 8u);  // its index within the group
  EXPECT_EQ(groups[0].missing[0].ceiling, "nvlink.p2p_uni");
  EXPECT_EQ(groups[0].missing[0].reason, "not measured: single GPU: no peer");
  const FleetGroup& all = groups[1];
  ASSERT_EQ(all.members.size(), 2u);
  ASSERT_TRUE(all.too_small);
  // Measured another way, not set up another way: no finding, and the other way is no reference for them.
  EXPECT_FALSE(all.peer_group.has_value());
  ASSERT_TRUE(all.measured_unlike.has_value());
  EXPECT_EQ(*all.measured_unlike, 0u);
  EXPECT_EQ(all.differences, std::vector<std::string>{"NVLink pairs all pairs (peers: own pairs)"});
  EXPECT_EQ(count_findings(groups).unlike_peers, 0u);
  EXPECT_EQ(count_findings(groups).not_judged, 2u);
}

// GPUs measured by another cuBLAS or ceilings release are another measurement, not slower hardware: four
// measured by an older release whose copy kernel read 4% lower would be four outliers among eight, with nothing said of
// the software (review 30). They are a group of their own, compared within itself; one alone is not judged.
TEST(Fleet, AnotherCublasOrCeilingsReleaseIsAnotherMeasurement) {
  FleetGen gen(43, 0.001);
  const auto fleet_of = [&](int older) {
    std::vector<FleetMember> fleet;
    for (int i = 0; i < 8 + older; ++i) {
      Profile p = gen.gpu(i, 0, i >= 8 ? std::map<std::string, double>{{"hbm.copy", 0.04}} : std::map<std::string, double>{});
      if (i >= 8) {
        p.tool_version = "0.0.9";
        p.device.cublas = "12.9.1";
      }
      fleet.push_back({"n" + std::to_string(i), p});
    }
    return fleet;
  };
  auto groups = analyze_fleet(fleet_of(4), OutlierRule{});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_NE(groups[1].fingerprint.label().find(", cuBLAS 12.9.1, ceilings 0.0.9"), std::string::npos)
      << groups[1].fingerprint.label();
  EXPECT_EQ(groups[1].fingerprint.to_json().at("tool_version"), "0.0.9");
  EXPECT_EQ(groups[1].differences,
            (std::vector<std::string>{"cuBLAS 12.9.1 (peers: " + fixture().device.cublas + ")",
                                      "ceilings 0.0.9 (peers: " + fixture().tool_version + ")"}));
  FleetFindings found = count_findings(groups);
  EXPECT_EQ(found.outliers, 0u);
  EXPECT_EQ(found.unlike_peers, 0u);
  EXPECT_EQ(found.not_judged, 0u);
  groups = analyze_fleet(fleet_of(1), OutlierRule{});
  ASSERT_EQ(groups.size(), 2u);
  found = count_findings(groups);
  EXPECT_EQ(found.unlike_peers, 0u);
  EXPECT_EQ(found.not_judged, 1u);
  const std::string dir = write_fleet(fleet_of(1), "fleet_older_release");
  const auto r = run_cli({"fleet", dir});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("; group 1 of NVIDIA H200 was measured differently (cuBLAS 12.9.1"), std::string::npos)
      << r.out;
  const auto csv = run_cli({"fleet", dir, "--format", "csv"});
  EXPECT_NE(csv.out.find(",\"group 1 of NVIDIA H200 was measured differently (cuBLAS 12.9.1"), std::string::npos)
      << csv.out;
  // One release measures with many codes (its version is bumped by hand): GPUs of one release measured by another
  // measurement code are another measurement too (review 36: four stored H200 runs of 0.1.0, the first before the
  // two-pipe FMA kernels, made two "outliers" at 49% and 7% worse). Here four of twelve read hbm.copy 4% lower.
  {
    std::vector<FleetMember> fleet;
    for (int i = 0; i < 12; ++i) {
      Profile p = gen.gpu(i, 0, i >= 8 ? std::map<std::string, double>{{"hbm.copy", 0.04}} : std::map<std::string, double>{});
      p.tool_version = "0.1.0";
      p.tool_measurement_code = i >= 8 ? "aaaaaaaaaaaa" : "bbbbbbbbbbbb";
      fleet.push_back({"c" + std::to_string(i), p});
    }
    const auto by_code = analyze_fleet(fleet, OutlierRule{});
    ASSERT_EQ(by_code.size(), 2u);
    EXPECT_EQ(by_code[1].differences,
              (std::vector<std::string>{
                  "ceilings 0.1.0 measurement code aaaaaaaaaaaa (peers: 0.1.0 measurement code bbbbbbbbbbbb)"}));
    EXPECT_EQ(count_findings(by_code).outliers, 0u);
    EXPECT_EQ(count_findings(by_code).unlike_peers, 0u);
    // Without the code (every profile of a build that did not record it) they were one group, four outliers.
    for (FleetMember& m : fleet) m.profile.tool_measurement_code.clear();
    EXPECT_EQ(count_findings(analyze_fleet(fleet, OutlierRule{})).outliers, 4u);
    // So is a --quick pass by the same code (review 98): another measurement, not four outliers
    for (std::size_t i = 0; i < fleet.size(); ++i) {
      fleet[i].profile.tool_measurement_code = "bbbbbbbbbbbb";
      fleet[i].profile.quick = i >= 8;
    }
    const auto by_pass = analyze_fleet(fleet, OutlierRule{});
    ASSERT_EQ(by_pass.size(), 2u);
    EXPECT_EQ(by_pass[1].differences,
              (std::vector<std::string>{"ceilings 0.1.0 measurement code bbbbbbbbbbbb quick pass (peers: 0.1.0 "
                                        "measurement code bbbbbbbbbbbb)"}));
    EXPECT_EQ(count_findings(by_pass).outliers, 0u);
    EXPECT_EQ(count_findings(by_pass).unlike_peers, 0u);
  }
  // In servers of another CPU as well: still no reference (its GEMMs are another cuBLAS's), not "configured unlike
  // its peers" on them.
  auto mixed = fleet_of(2);
  for (std::size_t i = 8; i < mixed.size(); ++i) mixed[i].profile.cpu = "AMD EPYC 9654 96-Core Processor";
  groups = analyze_fleet(mixed, OutlierRule{});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_FALSE(groups[1].peer_group.has_value());
  ASSERT_TRUE(groups[1].measured_unlike.has_value());
  EXPECT_EQ(count_findings(groups).unlike_peers, 0u);
  EXPECT_EQ(count_findings(groups).not_judged, 2u);
}

// GPUs measured together (`measure --all-gpus --concurrent`) share the node's power, cooling and host links:
// eight measured one at a time beside four measured 8 together, whose host-to-device copies read 6% lower, are two
// ways of measuring, not four outliers (review 46). In servers of another CPU as well, still no reference.
TEST(Fleet, GpusMeasuredTogetherAreAnotherMeasurement) {
  FleetGen gen(44, 0.001);
  std::vector<FleetMember> fleet;
  for (int i = 0; i < 12; ++i) {
    const bool together = i >= 8;
    Profile p = gen.gpu(i, 0, together ? std::map<std::string, double>{{"pcie.h2d", 0.06}}
                                       : std::map<std::string, double>{});
    p.gpus_measured_together = together ? 8 : 1;
    fleet.push_back({"t" + std::to_string(i), p});
  }
  auto groups = analyze_fleet(fleet, OutlierRule{});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_NE(groups[0].fingerprint.label().find(", one GPU per run"), std::string::npos)
      << groups[0].fingerprint.label();
  EXPECT_NE(groups[1].fingerprint.label().find(", measured 8 GPUs together"), std::string::npos)
      << groups[1].fingerprint.label();
  EXPECT_EQ(groups[1].fingerprint.to_json().at("gpus_measured_together"), 8);
  EXPECT_EQ(groups[1].differences, std::vector<std::string>{"GPUs measured together 8 (peers: 1)"});
  ASSERT_TRUE(groups[1].measured_unlike.has_value());
  EXPECT_FALSE(groups[1].peer_group.has_value());
  EXPECT_EQ(count_findings(groups).outliers, 0u);
  EXPECT_EQ(count_findings(groups).unlike_peers, 0u);
  // A baseline of the group keeps its count (part of its fingerprint: qualify --baseline names it).
  EXPECT_EQ(fleet_baseline(groups[1], fleet).gpus_measured_together, 8);
  // Not recorded (profiles of an earlier build): one group, and the four are outliers on that ceiling.
  for (FleetMember& m : fleet) m.profile.gpus_measured_together.reset();
  EXPECT_EQ(count_findings(analyze_fleet(fleet, OutlierRule{})).outliers, 4u);
  // Some recorded, some not: those that do not say join the group that matches them otherwise, where they are
  // compared (an unknown count says nothing against a recorded one, as compare has it; review 51).
  for (int i = 0; i < 12; ++i)
    if (i < 8 && i % 2 == 0) fleet[i].profile.gpus_measured_together = 1;
  groups = analyze_fleet(fleet, OutlierRule{});
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].members.size(), 12u);
  EXPECT_EQ(count_findings(groups).outliers, 4u);
  // Two measured together in servers of another CPU: their GPU's own ceilings moved with the shared budget, so
  // they are not set against the others on them either.
  for (int i = 0; i < 12; ++i) fleet[i].profile.gpus_measured_together = i >= 10 ? 8 : 1;
  for (int i = 10; i < 12; ++i) fleet[i].profile.cpu = "AMD EPYC 9654 96-Core Processor";
  groups = analyze_fleet(fleet, OutlierRule{});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_TRUE(groups[1].measured_unlike.has_value());
  EXPECT_FALSE(groups[1].peer_group.has_value());
  EXPECT_EQ(count_findings(groups).unlike_peers, 0u);
}

// Sharing can only lower a ceiling, so the count has a direction (review 51): a GPU measured with fewer GPUs at once
// than its peers (re-measured alone after a repair) is set against them, a shortfall its own finding and the
// difference itself none; a node of another size measured all at once differs in GPUs visible with the count, and
// is measured otherwise when it shares more, set against its peers when it shares less.
TEST(Fleet, FewerGpusAtOnceAreSetAgainstThePeersMoreAreNot) {
  FleetGen gen(45, 0.001);
  std::vector<FleetMember> fleet;
  for (int i = 0; i < 8; ++i) {
    Profile p = gen.gpu(i / 4, i % 4);
    p.gpus_measured_together = 4;
    p.gpus_visible = 4;
    fleet.push_back({"n" + std::to_string(i), p});
  }
  Profile alone = gen.gpu(9, 0, {{"hbm.copy", 0.30}});
  alone.gpus_measured_together = 1;
  alone.gpus_visible = 4;
  fleet.push_back({"alone", alone});
  auto groups = analyze_fleet(fleet, OutlierRule{});
  ASSERT_EQ(groups.size(), 2u);
  ASSERT_TRUE(groups[1].peer_group.has_value());
  EXPECT_TRUE(groups[1].fewer_together);
  EXPECT_FALSE(groups[1].host_only);
  ASSERT_EQ(groups[1].versus_peers.size(), 1u);
  EXPECT_EQ(groups[1].versus_peers[0].ceilings.at(0).ceiling, "hbm.copy");
  EXPECT_EQ(count_findings(groups).below_peers, 1u);
  fleet.back().profile = gen.gpu(9, 0);  // as fast as its peers: no finding at all
  fleet.back().profile.gpus_measured_together = 1;
  fleet.back().profile.gpus_visible = 4;
  groups = analyze_fleet(fleet, OutlierRule{});
  EXPECT_TRUE(groups[1].fewer_together);
  EXPECT_EQ(count_findings(groups).unlike_peers, 0u);
  EXPECT_EQ(count_findings(groups).not_judged, 0u);
  const std::string dir = write_fleet(fleet, "fleet_fewer_together");
  const auto r = run_cli({"fleet", dir});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("measured with fewer GPUs at once than group 1"), std::string::npos) << r.out;

  // A node of 8 measured all at once among nodes of 4 so measured, 7% slower: it shares more, measured otherwise.
  fleet.pop_back();
  for (int i = 0; i < 8; ++i) {
    Profile p = gen.gpu(20, i, {{"hbm.copy", 0.07}});
    p.gpus_measured_together = 8;
    p.gpus_visible = 8;
    fleet.push_back({"big" + std::to_string(i), p});
  }
  for (int i = 0; i < 8; ++i) {  // and the nodes of 4 are 12 GPUs, the larger group
    Profile p = gen.gpu(30 + i / 4, i % 4);
    p.gpus_measured_together = 4;
    p.gpus_visible = 4;
    fleet.push_back({"m" + std::to_string(i), p});
  }
  groups = analyze_fleet(fleet, OutlierRule{});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].members.size(), 16u);
  ASSERT_TRUE(groups[1].measured_unlike.has_value());
  EXPECT_EQ(groups[1].differences,
            (std::vector<std::string>{"GPUs visible 8 (peers: 4)", "GPUs measured together 8 (peers: 4)"}));
  EXPECT_EQ(count_findings(groups).unlike_peers, 0u);
  // Compared within itself, not with group 1: said in the report and the JSON, not in its label alone (review 53).
  const std::string more_dir = write_fleet(fleet, "fleet_more_together");
  const auto more = run_cli({"fleet", more_dir});
  EXPECT_NE(more.out.find("compared within itself only: measured differently from group 1 of the same GPU model "
                          "(GPUs visible 8 (peers: 4), GPUs measured together 8 (peers: 4)), which is no reference "
                          "for it"),
            std::string::npos)
      << more.out;
  const json more_json = json::parse(run_cli({"fleet", more_dir, "--format", "json"}).out);
  EXPECT_TRUE(more_json.at("groups").at(0).at("measured_unlike").is_null());
  EXPECT_EQ(more_json.at("groups").at(1).at("measured_unlike").at("group"), 1);
  EXPECT_EQ(more_json["groups"][1]["measured_unlike"].at("differences").size(), 2u);
}

// The largest group measured one GPU per run, all 20% slow, beside a node measured all at once: the node is measured
// otherwise and no reference for them, but they are set against it, their shortfall their own (review 54: they had
// passed as their own group's median).
TEST(Fleet, TheLargestGroupMeasuredWithFewerAtOnceIsSetAgainstAGroupMeasuredWithMore) {
  FleetGen gen(47, 0.001);
  std::vector<FleetMember> fleet;
  for (int i = 0; i < 16; ++i) {
    Profile p = gen.gpu(i / 8, i % 8, {{"hbm.copy", 0.20}});
    p.gpus_measured_together = 1;
    fleet.push_back({"alone" + std::to_string(i), p});
  }
  for (int i = 0; i < 8; ++i) {
    Profile p = gen.gpu(5, i);
    p.gpus_measured_together = 8;
    fleet.push_back({"together" + std::to_string(i), p});
  }
  auto groups = analyze_fleet(fleet, OutlierRule{});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].members.size(), 16u);
  EXPECT_TRUE(groups[1].measured_unlike.has_value());
  ASSERT_TRUE(groups[0].peer_group.has_value());
  EXPECT_EQ(*groups[0].peer_group, 1u);
  EXPECT_TRUE(groups[0].fewer_together);
  EXPECT_EQ(count_findings(groups).below_peers, 16u);
  EXPECT_EQ(count_findings(groups).unlike_peers, 0u);  // measured otherwise, not set up otherwise (review 52)
  const std::string dir = write_fleet(fleet, "fleet_largest_fewer");
  const auto r = run_cli({"fleet", dir});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("0 GPU(s) configured unlike their peers, 16 GPU(s) below the group of their model they are set "
                       "against (in other servers, or measured with fewer GPUs at once)"),
            std::string::npos)
      << r.out;
  const auto csv = run_cli({"fleet", dir, "--format", "csv"});
  EXPECT_NE(csv.out.find("1,below peer group,"), std::string::npos) << csv.out;
  EXPECT_EQ(csv.out.find("unlike peers"), std::string::npos) << csv.out;
  const auto j = run_cli({"fleet", dir, "--format", "json"});
  const json report = json::parse(j.out);
  EXPECT_EQ(report.at("schema"), "ceilings.fleet/1");
  EXPECT_EQ(report.at("configured_unlike_peers"), 0);
  EXPECT_EQ(report.at("below_peer_group"), 16);
  EXPECT_NE(r.out.find("measured with fewer GPUs at once than group 2 of the same GPU model"), std::string::npos) << r.out;
  // Nor is their median a baseline: every one of them is below the node measured at once.
  EXPECT_THROW(fleet_baseline(groups[0], fleet), InputError);
  // As fast as the node measured at once: nothing against them.
  for (int i = 0; i < 16; ++i) {
    fleet[i].profile = gen.gpu(i / 8, i % 8);
    fleet[i].profile.gpus_measured_together = 1;
  }
  groups = analyze_fleet(fleet, OutlierRule{});
  EXPECT_TRUE(groups[0].fewer_together);
  EXPECT_EQ(count_findings(groups).unlike_peers, 0u);
}

// A node that sees fewer GPUs than its peers may have lost one: set up otherwise, every GPU counted, whatever it
// measured at once (review 52: the count had excused it, exit 0). Of two groups of one size, the one measured with
// fewer at once is set against the other, its shortfall its own (review 52: neither was a reference).
TEST(Fleet, ANodeSeeingFewerGpusIsSetUpOtherwiseWhateverItMeasuredAtOnce) {
  FleetGen gen(46, 0.001);
  const auto node = [&](int n, int gpus, int together, int visible, double slow = 0) {
    std::vector<FleetMember> out;
    for (int i = 0; i < gpus; ++i) {
      Profile p = gen.gpu(n, i, slow > 0 ? std::map<std::string, double>{{"hbm.copy", slow}} : std::map<std::string, double>{});
      p.gpus_measured_together = together;
      p.gpus_visible = visible;
      out.push_back({"n" + std::to_string(n) + "g" + std::to_string(i), p});
    }
    return out;
  };
  const auto fleet_of = [](std::initializer_list<std::vector<FleetMember>> nodes) {
    std::vector<FleetMember> all;
    for (const auto& n : nodes) all.insert(all.end(), n.begin(), n.end());
    return all;
  };
  // Three nodes of 8 and one that sees 7, all measured at once.
  auto groups = analyze_fleet(fleet_of({node(0, 8, 8, 8), node(1, 8, 8, 8), node(2, 8, 8, 8), node(3, 7, 7, 7)}),
                              OutlierRule{});
  ASSERT_EQ(groups.size(), 2u);
  ASSERT_TRUE(groups[1].peer_group.has_value());
  EXPECT_FALSE(groups[1].fewer_together);
  EXPECT_EQ(count_findings(groups).unlike_peers, 7u);
  // A node that sees 4 of 8, measured at once, among nodes measured one GPU per run: more at once, but fewer seen.
  groups = analyze_fleet(fleet_of({node(0, 8, 1, 8), node(1, 8, 1, 8), node(3, 4, 4, 4)}), OutlierRule{});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_FALSE(groups[1].measured_unlike.has_value());
  ASSERT_TRUE(groups[1].peer_group.has_value());
  EXPECT_EQ(count_findings(groups).unlike_peers, 4u);
  // Eight measured together and eight measured one per run, those 20% slow: the latter set against the former.
  groups = analyze_fleet(fleet_of({node(0, 8, 8, 8), node(1, 8, 1, 8, 0.20)}), OutlierRule{});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].fingerprint.measured_together, 8);
  ASSERT_TRUE(groups[1].peer_group.has_value());
  EXPECT_TRUE(groups[1].fewer_together);
  EXPECT_EQ(count_findings(groups).below_peers, 8u);
  // Joined by profiles that do not record the count: the label says it is the recording members' and the baseline
  // claims none (review 52), and the group is still compared by it (review 53: a group of 8 measured one per run,
  // 20% slow, beside it had passed as "measured differently ()").
  auto mixed = fleet_of({node(0, 8, 8, 8), node(1, 8, 8, 8), node(3, 8, 8, 8)});
  for (std::size_t i = 0; i < 8; ++i) mixed[i].profile.gpus_measured_together.reset();
  groups = analyze_fleet(mixed, OutlierRule{});
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].fingerprint.measured_together, 8);
  EXPECT_NE(groups[0].fingerprint.label().find(", measured 8 GPUs together (where recorded)"), std::string::npos)
      << groups[0].fingerprint.label();
  EXPECT_FALSE(fleet_baseline(groups[0], mixed).gpus_measured_together.has_value());
  // Where they match groups of one size, they join the one measured with more at once, which the other is then set
  // against (review 54: the count's text order had decided).
  {
    auto tie = fleet_of({node(0, 8, 8, 8), node(1, 8, 8, 8), node(2, 8, 1, 8, 0.20)});
    for (std::size_t i = 0; i < 8; ++i) tie[i].profile.gpus_measured_together.reset();
    const auto tied = analyze_fleet(tie, OutlierRule{});
    ASSERT_EQ(tied.size(), 2u);
    EXPECT_EQ(tied[0].members.size(), 16u);
    EXPECT_EQ(tied[0].fingerprint.measured_together, 8);
    EXPECT_TRUE(tied[1].fewer_together);
    EXPECT_EQ(count_findings(tied).below_peers, 8u);
  }
  const auto slow_alone = node(2, 8, 1, 8, 0.20);  // the 8 that do not say join the larger group of 8 together
  mixed.insert(mixed.end(), slow_alone.begin(), slow_alone.end());
  groups = analyze_fleet(mixed, OutlierRule{});
  ASSERT_EQ(groups.size(), 2u);
  ASSERT_TRUE(groups[1].peer_group.has_value());
  EXPECT_TRUE(groups[1].fewer_together);
  EXPECT_EQ(count_findings(groups).below_peers, 8u);
}

// Two 8-GPU nodes measured with their own pairs; on node 1 GPU 3's links run at half rate. Every GPU of that
// node then has its slowest pair (the ceiling's value) with GPU 3; their pair medians name GPU 3 alone, as
// `measure --all-gpus` compares them. The statistics shown stay those of the values as measured.
TEST(Fleet, PeerCeilingsAreComparedByTheirPairMedian) {
  FleetGen gen(17, 0.0);
  std::vector<FleetMember> fleet;
  for (int node = 0; node < 2; ++node)
    for (int i = 0; i < 8; ++i) {
      Profile p = gen.gpu(node, i);
      const bool bad_node = node == 1, bad_gpu = bad_node && i == 3;
      Ceiling c;
      c.name = "nvlink.p2p_uni";
      c.unit = "B/s";
      c.value = bad_node ? 2.0e11 : 3.9e11;                   // the slowest pair
      c.cv = 0.001;
      c.samples = 10;
      c.verified = true;
      c.detail = {{"benchmark", "nvlink/p2p_uni/engine:ce/op:write"}, {"scope_device", 1},
                  {"p2p_median", bad_gpu ? 2.0e11 : 3.9e11}};  // GPU 3: every pair slow; the others: one of 7
      p.ceilings.push_back(c);
      fleet.push_back({"n" + std::to_string(node) + "g" + std::to_string(i), p});
    }
  const auto groups = analyze_fleet(fleet, OutlierRule{});
  ASSERT_EQ(groups.size(), 1u);
  std::vector<std::size_t> named;
  for (const Outlier& o : groups[0].outliers)
    for (const Deviation& d : o.ceilings)
      if (d.ceiling == "nvlink.p2p_uni") named.push_back(groups[0].members[o.member]);
  EXPECT_EQ(named, std::vector<std::size_t>{8 + 3});
  for (const CeilingStats& st : groups[0].stats)
    if (st.name == "nvlink.p2p_uni") {
      EXPECT_DOUBLE_EQ(st.min, 2.0e11);  // as measured: the slowest pairs
      EXPECT_DOUBLE_EQ(st.median, (2.0e11 + 3.9e11) / 2);
    }
}

TEST(Fleet, TooFewPeersNameNobodyAndZeroMadFallsBack) {
  FleetGen gen(3);
  std::vector<const Profile*> two;
  const Profile a = gen.gpu(1, 0), b = gen.gpu(1, 1, {{"hbm.copy", 0.3}});
  two = {&a, &b};
  EXPECT_TRUE(find_outliers(two, ceiling_statistics(two), OutlierRule{}).empty()) << "which of two is the odd one?";

  // Nine identical GPUs and one 2% slower: MAD is 0, the mean absolute deviation gives the z-score.
  std::vector<Profile> same(10, fixture());
  for (Ceiling& c : same[9].ceilings)
    if (c.name == "hbm.copy") c.value *= 0.98;
  std::vector<const Profile*> ptrs;
  for (const Profile& p : same) ptrs.push_back(&p);
  const auto stats = ceiling_statistics(ptrs);
  const auto out = find_outliers(ptrs, stats, OutlierRule{});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].member, 9u);
  ASSERT_EQ(out[0].ceilings.size(), 1u);
  EXPECT_EQ(out[0].ceilings[0].mad, 0);
  ASSERT_TRUE(out[0].ceilings[0].z.has_value());
  EXPECT_NEAR(*out[0].ceilings[0].z, -1.0 / 1.253314 * 10, 0.01);  // MeanAD = 2%/10 of the median
  EXPECT_TRUE(out[0].ceilings[0].by_z);
  EXPECT_FALSE(out[0].ceilings[0].by_margin);
}

TEST(Fleet, BaselineRoundTrip) {
  auto fleet = make_fleet(planted());
  for (FleetMember& m : fleet) m.profile.tool_measurement_code = "0123456789ab";  // the group's one code
  const auto groups = analyze_fleet(fleet, OutlierRule{});
  FleetGroup empty = groups[0];  // profiles with no ceilings: no baseline qualify would refuse anyway
  empty.stats.clear();
  EXPECT_THROW(fleet_baseline(empty, fleet), InputError);
  const Profile baseline = fleet_baseline(groups[0], fleet);
  const std::string dir = ceilings::test::scratch_dir("fleet_baseline");
  write_file_atomic(dir + "/baseline.profile.json", profile_to_json(baseline).dump(2));
  const Profile back = read_profile(dir + "/baseline.profile.json");
  EXPECT_EQ(back.schema, kProfileSchema);
  // It keeps the group's measurement code: compared with one of its own profiles, nothing reads as measured by
  // other code (review 37).
  EXPECT_EQ(back.tool_measurement_code, "0123456789ab");
  EXPECT_EQ(groups[0].fingerprint.to_json().at("measurement_code"), "0123456789ab");
  EXPECT_EQ(back.device.name, "NVIDIA H200");
  EXPECT_EQ(back.device.memory_bytes, fixture().device.memory_bytes);
  // The medians of the members the fleet found nothing against: the planted outliers are left out, each listed.
  std::set<std::size_t> named;
  for (const auto* list : {&groups[0].outliers, &groups[0].unstable})
    for (const Outlier& o : *list) named.insert(groups[0].members[o.member]);
  ASSERT_FALSE(named.empty());
  std::vector<const Profile*> clean;
  for (std::size_t i : groups[0].members)
    if (!named.count(i)) clean.push_back(&fleet[i].profile);
  const auto clean_stats = ceiling_statistics(clean);
  ASSERT_EQ(back.ceilings.size(), clean_stats.size());
  for (const CeilingStats& s : clean_stats) {
    const Ceiling* c = back.find(s.name);
    ASSERT_NE(c, nullptr) << s.name;
    EXPECT_DOUBLE_EQ(c->value, s.median);
    EXPECT_EQ(c->unit, s.unit);
    EXPECT_EQ(c->samples, static_cast<std::int64_t>(clean.size()));
    EXPECT_TRUE(c->verified);
  }
  EXPECT_EQ(back.raw.at("baseline").at("profiles"), clean.size());
  EXPECT_EQ(back.raw.at("baseline").at("group_profiles"), 1000);
  ASSERT_EQ(back.raw.at("baseline").at("excluded").size(), named.size());
  EXPECT_EQ(back.raw.at("baseline").at("excluded")[0].at("reason").get<std::string>().rfind("an outlier (", 0), 0u);
  EXPECT_EQ(back.raw.at("baseline").at("fingerprint").at("gpu"), "NVIDIA H200");
  EXPECT_TRUE(back.raw.at("baseline").at("left_out").empty());

  // A ceiling only one or two of the group's profiles hold would be their values: it is left out, and said so.
  std::vector<FleetMember> four(fleet.begin(), fleet.begin() + 4);
  Ceiling l2 = *four[0].profile.find("hbm.copy");
  l2.name = "l2.read";
  four[0].profile.ceilings.push_back(l2);
  const auto small = analyze_fleet(four, OutlierRule{});
  const Profile b = fleet_baseline(small[0], four);
  EXPECT_EQ(b.find("l2.read"), nullptr);
  EXPECT_NE(b.find("hbm.copy"), nullptr);
  EXPECT_EQ(b.raw.at("baseline").at("left_out"), json::array({"l2.read (1)"}));

  // A fleet below a datasheet fraction alike (a power cap): those are faults of a ceiling, not of the GPUs' health,
  // so the baseline is still written, of every GPU (review 47).
  std::vector<FleetMember> capped;
  FleetGen capgen(9, 0.002);
  for (int i = 0; i < 4; ++i)
    capped.push_back({"c" + std::to_string(i), capgen.gpu(i, 0, {{"gemm.bf16", 0.4}})});
  const std::string capdir = write_fleet(capped, "fleet_baseline_capped");
  // Written into a fresh directory: a baseline an earlier run left would pass for this run's (review 50).
  const std::string capped_baseline = ceilings::test::scratch_dir("fleet_baseline_capped_out") + "/capped.baseline.json";
  const auto capped_run = run_cli({"fleet", capdir, "--write-baseline", capped_baseline});
  EXPECT_EQ(capped_run.exit_code, 1) << capped_run.out << capped_run.err;  // the datasheet faults
  EXPECT_EQ(read_profile(capped_baseline).raw.at("baseline").at("profiles"), 4) << capped_run.err;

  // Half a group slower alike (a split): the baseline is the faster half's, not the median among the slow ones
  // that had let the slow GPUs pass against it (review 46). Members excluded by the caller (a health fault) too.
  FleetGen gen(5, 0.002);
  auto split_of = [&](int slow) {
    std::vector<FleetMember> out;
    for (int i = 0; i < 16; ++i)
      out.push_back({"g" + std::to_string(i), gen.gpu(i, 0, i < slow ? std::map<std::string, double>{{"gemm.bf16", 0.10}}
                                                                     : std::map<std::string, double>{})});
    return out;
  };
  const std::vector<FleetMember> split = split_of(8);
  const auto sg = analyze_fleet(split, OutlierRule{});
  ASSERT_EQ(sg.size(), 1u);
  const Profile sb = fleet_baseline(sg[0], split, 3, {{15, "a health fault (XID)"}});
  const double fast = fixture().find("gemm.bf16")->value;
  ASSERT_NE(sb.find("gemm.bf16"), nullptr);
  EXPECT_NEAR(sb.find("gemm.bf16")->value / fast, 1.0, 0.01) << "the slower side's median was the baseline";
  const json& ex = sb.raw.at("baseline").at("excluded");
  EXPECT_TRUE(std::any_of(ex.begin(), ex.end(), [](const json& e) { return e.at("path") == "g15"; })) << ex.dump();
  EXPECT_LE(sb.raw.at("baseline").at("profiles").get<int>(), 7);
  // Nine of sixteen below the other seven: the few fast or the many slow? That ceiling has no baseline; the nine
  // stay in every other ceiling's median (review 90: the three that read high in a node had set every ceiling).
  const std::vector<FleetMember> most = split_of(9);
  const auto mg = analyze_fleet(most, OutlierRule{});
  ASSERT_EQ(mg.size(), 1u);
  EXPECT_TRUE(mg[0].outliers.empty());
  EXPECT_EQ(mg[0].unstable.size(), 9u);
  const Profile mb = fleet_baseline(mg[0], most);
  EXPECT_EQ(mb.find("gemm.bf16"), nullptr);
  EXPECT_NE(mb.find("hbm.copy"), nullptr);
  EXPECT_EQ(mb.raw.at("baseline").at("profiles"), 16);
  EXPECT_EQ(mb.raw.at("baseline").at("left_out"),
            json::array({"gemm.bf16 (split in two, the worse side the group's majority)"}));
  // Too few left: no baseline, said why.
  std::map<std::size_t, std::string> all_faulty;
  for (std::size_t i = 9; i < 16; ++i) all_faulty[i] = "a health fault";
  try {
    fleet_baseline(sg[0], split, 3, all_faulty);
    ADD_FAILURE() << "a baseline of no clean member";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("have nothing found against them"), std::string::npos) << e.what();
  }
}

// End to end: 2000 profile files (two fingerprints), two bad files, under a bound generous for a 2-core box.
TEST(Fleet, CliOn2000ProfilesIsFastAndCountsEverything) {
  const std::string dir = ceilings::test::scratch_dir("fleet_cli_2000");
  fs::create_directories(dir + "/nodes/a");
  fs::create_directories(dir + "/nodes/b");
  auto a = make_fleet(planted(), 1);
  auto b = make_fleet({}, 2);
  for (auto& m : b) {  // other GPUs (their own UUIDs) under another driver
    m.profile.device.driver = "570.86.15";
    m.profile.device.uuid.replace(0, 4, "GPU-b");
  }
  for (const auto* fleet : {&a, &b})
    for (const FleetMember& m : *fleet) {
      const std::string sub = fleet == &a ? "a" : "b";
      std::ofstream(dir + "/nodes/" + sub + "/" + m.path + ".profile.json") << profile_to_json(m.profile).dump();
    }
  std::ofstream(dir + "/nodes/a/truncated.profile.json") << "{\"schema\": \"ceilings.profile/1\", \"crea";
  std::ofstream(dir + "/nodes/b/wrong.profile.json") << R"({"schema": "ceilings.profile/9"})";
  std::ofstream(dir + "/nodes/b/ignored.bench.json") << "not a profile name: not read";

  const auto start = std::chrono::steady_clock::now();
  // Two groups of 1000: which the baseline comes from is said.
  const auto r = run_cli({"fleet", dir + "/nodes", "--format", "json", "--write-baseline", dir + "/baseline.json",
                          "--baseline-group", "1"},
                         {}, 120);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(took, 30.0);
  EXPECT_EQ(r.exit_code, 1) << r.err;  // outliers found
  const json j = parse_json_text(r.out, "fleet output");
  EXPECT_EQ(j.at("read"), 2000);
  EXPECT_EQ(j.at("files"), 2002);
  ASSERT_EQ(j.at("skipped").size(), 2u);
  for (const json& s : j["skipped"]) EXPECT_FALSE(s.at("reason").get<std::string>().empty());
  EXPECT_NE(j["skipped"][1]["reason"].get<std::string>().find("ceilings.profile/9"), std::string::npos);
  ASSERT_EQ(j.at("groups").size(), 2u);
  EXPECT_EQ(j.at("outliers"), planted().size());
  std::size_t named = 0;
  for (const json& g : j["groups"]) {
    EXPECT_EQ(g.at("profiles"), 1000);
    for (const json& o : g.at("outliers")) {
      ++named;
      EXPECT_FALSE(o.at("host").get<std::string>().empty());
      EXPECT_EQ(o.at("uuid").get<std::string>().rfind("GPU-", 0), 0u);
      EXPECT_EQ(o.at("pci_bus_id").get<std::string>().size(), 16u);
      EXPECT_FALSE(o.at("ceilings").empty());
    }
  }
  EXPECT_EQ(named, planted().size());
  EXPECT_NE(r.err.find("skipped"), std::string::npos);
  const Profile baseline = read_profile(dir + "/baseline.json");
  EXPECT_EQ(baseline.raw.at("baseline").at("profiles"), 1000);
  // Group 1 as the report lists it, not merely a group of 1000.
  EXPECT_EQ(baseline.raw.at("baseline").at("fingerprint").at("driver"), j["groups"][0].at("fingerprint").at("driver"));

  // csv: one row per (outlier, ceiling) that drove it.
  const auto csv = run_cli({"fleet", dir + "/nodes/a", "--format", "csv"}, {}, 120);
  EXPECT_EQ(csv.exit_code, 1);
  const auto lines = std::count(csv.out.begin(), csv.out.end(), '\n');
  // header + 1 + 1 + 1 + 2 + 2 ceilings; and two of them below qualify's datasheet fraction whatever the fleet
  // reads (node 3's hbm.copy 10% slow: 82% of 4.8 TB/s, below 85%; node 99's pcie.h2d at half speed); and the
  // truncated file fleet skipped.
  EXPECT_EQ(lines, 1 + 7 + 2 + 1);
  const std::size_t at = csv.out.find("node99,4,GPU-00000099-0000-0000-0000-000000000004,00000000:14:00.0,pcie.h2d,");
  ASSERT_NE(at, std::string::npos) << csv.out;
  // A file to parse: the value, its unit, the median and the deficit as numbers (SI, a fraction).
  std::vector<std::string> cells;
  std::stringstream row(csv.out.substr(at, csv.out.find('\n', at) - at));
  for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
  ASSERT_GE(cells.size(), 10u) << csv.out;
  EXPECT_GT(std::stod(cells[5]), 1e9);  // B/s, not "27.7 GB/s"
  EXPECT_EQ(cells[6], "B/s");
  EXPECT_GT(std::stod(cells[7]), std::stod(cells[5]));
  EXPECT_NEAR(std::stod(cells[8]), 0.5, 0.05);
}

// `n` profiles of the h200-qualify fixture in `dir` (gpu<i>.profile.json), each its own GPU (UUID, index and the
// health section's UUID), after `edit(i, document)`.
void write_qualify_fleet(const std::string& dir, int n, const std::function<void(int, json&)>& edit) {
  const json base = parse_json_text(ceilings::read_text_file(std::string(CEILINGS_FIXTURES) +
                                                            "/profiles/h200-qualify.profile.json"),
                                    "fixture");
  for (int i = 0; i < n; ++i) {
    json d = base;
    const std::string uuid = "GPU-00000000-1111-2222-3333-00000000000" + std::to_string(i);
    d["device"]["uuid"] = uuid;
    d["device"]["index"] = i;
    d["health"]["device"]["uuid"] = uuid;
    edit(i, d);
    write_file_atomic(dir + "/gpu" + std::to_string(i) + ".profile.json", d.dump());
  }
}

// Health across the fleet: a GPU as fast as its peers but with an uncorrected ECC error is named with
// the failing check; one without a health section is only counted as not judged.
TEST(Fleet, HealthFaultsAreNamedWhateverTheSpeed) {
  const std::string dir = ceilings::test::scratch_dir("fleet_health");
  write_qualify_fleet(dir, 4, [](int i, json& d) {
    if (i == 1) d["health"]["after"]["metrics"]["ecc.volatile.uncorrected"] = 2;
    if (i == 2) d.erase("health");
  });
  const FleetInput in = load_fleet({dir});
  ASSERT_EQ(in.members.size(), 4u);
  const FleetHealth h = fleet_health(in.members);
  ASSERT_EQ(h.faults.size(), 1u);
  EXPECT_EQ(in.members[h.faults[0].member].profile.device.uuid, "GPU-00000000-1111-2222-3333-000000000001");
  ASSERT_EQ(h.faults[0].failed.size(), 1u);
  EXPECT_EQ(h.faults[0].failed[0].rule, "uncorrected ECC errors");
  EXPECT_EQ(h.incomplete, 1u);  // gpu2: no health section

  const auto r = run_cli({"fleet", dir});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // no outlier (identical ceilings), but a health fault
  EXPECT_NE(r.out.find("0 outlier(s), 0 GPU(s) configured unlike their peers, 0 GPU(s) not judged, 0 ceiling(s) its "
                        "peers have lost to a failed measurement, 1 GPU(s) with a health fault"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("health: 1 GPU(s) with a failing check"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GPU-00000000-1111-2222-3333-000000000001"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 uncorrected ECC error(s) during the run"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 profile(s) could not be judged in full"), std::string::npos) << r.out;
  const auto j = run_cli({"fleet", dir, "--format", "json"});
  const json doc = parse_json_text(j.out, "fleet json");
  ASSERT_EQ(doc.at("health").at("faults").size(), 1u);
  EXPECT_EQ(doc["health"]["faults"][0]["failed"][0]["check"], "uncorrected ECC errors");
  // The value, threshold and their source, as qualify gives them (only the reason before).
  EXPECT_EQ(doc["health"]["faults"][0]["failed"][0]["measured"], 2);
  EXPECT_EQ(doc["health"]["faults"][0]["failed"][0]["threshold"], 0);
  EXPECT_EQ(doc["health"]["faults"][0]["failed"][0]["source"], "health rule uncorrected_ecc");
  EXPECT_NE(r.out.find("threshold from"), std::string::npos) << r.out;
  EXPECT_EQ(doc["health"]["incomplete"], 1);
  // csv: the fault is a row, so a script reading the csv sees why the exit code is 1.
  const auto csv = run_cli({"fleet", dir, "--format", "csv"});
  EXPECT_EQ(csv.exit_code, 1);
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 1 + 1) << csv.out;
  EXPECT_NE(csv.out.find(",health fault,"), std::string::npos) << csv.out;
  EXPECT_EQ(csv.out.rfind("group,finding,host,gpu,uuid,pci_bus_id,ceiling_or_check,value,unit,reference_median,"
                          "worse_than_median,z,rule,threshold,threshold_from,reason\n", 0),
            0u)
      << csv.out;  // snake_case, as every csv header
  EXPECT_NE(csv.out.find("GPU-00000000-1111-2222-3333-000000000001"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("uncorrected ECC errors,2.0,,,,,,0.0,health rule uncorrected_ecc,"), std::string::npos)
      << csv.out;
  // Without the faulty GPU the fleet passes.
  fs::remove(dir + "/gpu1.profile.json");
  EXPECT_EQ(run_cli({"fleet", dir}).exit_code, 0);
  // A ceiling that was not verified is a health fault, as in qualify, and no measurement: not in the median
  // (9 TB/s read would have been the maximum) nor in a baseline. It went unnoticed, exit 0.
  json bad = parse_json_text(ceilings::read_text_file(dir + "/gpu3.profile.json"), "gpu3");
  bad["ceilings"][0]["verified"] = false;
  bad["ceilings"][0]["value"] = 9e12;
  const std::string name = bad["ceilings"][0]["name"];
  std::ofstream(dir + "/gpu3.profile.json") << bad.dump();
  const auto unverified = run_cli({"fleet", dir, "--format", "json"});
  EXPECT_EQ(unverified.exit_code, 1) << unverified.out << unverified.err;
  const json u = parse_json_text(unverified.out, "fleet json");
  ASSERT_EQ(u.at("health").at("faults").size(), 1u) << u.dump(1);
  const json& failed = u["health"]["faults"][0]["failed"];
  EXPECT_TRUE(std::any_of(failed.begin(), failed.end(), [](const json& f) { return f.at("check") == "verified"; }))
      << failed.dump(1);
  for (const json& s : u.at("groups").at(0).at("ceilings"))
    if (s.at("ceiling") == name) {
      EXPECT_EQ(s.at("n"), 2);
      EXPECT_LT(s.at("max").get<double>(), 9e12);
    }
  // An unverified ceiling is a fault of that ceiling, not of the GPU's health: the GPU stays in the baseline, the
  // ceiling is in no median (two verified values of three GPUs: too few).
  fs::remove(dir + "/../fleet_health.baseline.json");  // an earlier run's
  const auto written = run_cli({"fleet", dir, "--write-baseline", dir + "/../fleet_health.baseline.json"});
  ASSERT_EQ(written.exit_code, 1) << written.err;
  const Profile b = read_profile(dir + "/../fleet_health.baseline.json");
  EXPECT_EQ(b.find(name), nullptr);
  EXPECT_EQ(b.raw.at("baseline").at("left_out"), json::array({name + " (2)"}));
  EXPECT_EQ(b.raw.at("baseline").at("profiles"), 3);
  // A GPU whose health section fails a check (uncorrected ECC errors) is left out whole: two clean GPUs of three
  // are too few for a median, and no baseline is written.
  json ecc = parse_json_text(ceilings::read_text_file(dir + "/gpu0.profile.json"), "gpu0");
  ecc["health"]["after"]["metrics"]["ecc.volatile.uncorrected"] = 2;
  std::ofstream(dir + "/gpu0.profile.json") << ecc.dump();
  fs::remove(dir + "/../fleet_health.baseline.json");
  const auto refused = run_cli({"fleet", dir, "--write-baseline", dir + "/../fleet_health.baseline.json"});
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("2 of the group's 3 profiles have nothing found against them"), std::string::npos)
      << refused.err;
  EXPECT_FALSE(fs::exists(dir + "/../fleet_health.baseline.json"));
}

// A profile whose health section was recorded on another GPU (files mixed up) says nothing of its own GPU's
// health: qualify calls it incomplete, and fleet exited 0 with it only counted (review 30). The run is incomplete,
// and the profile is named.
TEST(Fleet, AHealthSectionOfAnotherGpuMakesTheRunIncomplete) {
  const std::string dir = ceilings::test::scratch_dir("fleet_other_gpu_health");
  write_qualify_fleet(dir, 4, [](int i, json& d) {
    if (i == 2) d["health"]["device"]["uuid"] = "GPU-00000000-1111-2222-3333-000000000009";
  });
  const FleetInput in = load_fleet({dir});
  const FleetHealth h = fleet_health(in.members);
  ASSERT_EQ(h.other_gpu.size(), 1u);
  EXPECT_EQ(in.members[h.other_gpu[0]].profile.device.uuid, "GPU-00000000-1111-2222-3333-000000000002");
  EXPECT_TRUE(h.faults.empty());
  const auto r = run_cli({"fleet", dir});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("1 profile(s) whose health section was recorded on another GPU"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gpu2.profile.json"), std::string::npos) << r.out;
  const json j = parse_json_text(run_cli({"fleet", dir, "--format", "json"}).out, "fleet json");
  ASSERT_EQ(j.at("health").at("other_gpu").size(), 1u);
  EXPECT_EQ(j["health"]["other_gpu"][0].at("uuid"), "GPU-00000000-1111-2222-3333-000000000002");
  const auto csv = run_cli({"fleet", dir, "--format", "csv"});
  EXPECT_EQ(csv.exit_code, 3);
  EXPECT_NE(csv.out.find(",health of another GPU,"), std::string::npos) << csv.out;
}

// A clean fleet whose GPUs each measure with a wide spread (10% cv) and differ by 3%: GPUs past the 5% margin alone,
// within their own noise and, by the z-score, within the group's spread, are evidence of nothing: neither named nor
// unstable (review 109: 4-5% of a clean fleet listed as unstable, every run of 64 GPUs or more incomplete). A GPU
// 40% slow in the same fleet is still an outlier, and in a group of three a GPU past the margin within its own noise
// is still unstable (a z-score of three values tells nothing; Fleet.AGpuSetAgainstItsPeersWithinItsOwnSpreadIsUnstable).
TEST(Fleet, AMarginOnlyDeficitWithinItsOwnNoiseAndTheGroupsSpreadIsNotNamed) {
  FleetGen gen(11, 0.03);
  std::vector<FleetMember> fleet;
  for (int node = 0; node < 32; ++node)
    for (int i = 0; i < 8; ++i) {
      Profile p = gen.gpu(node, i, node == 5 && i == 2 ? std::map<std::string, double>{{"hbm.copy", 0.40}}
                                                         : std::map<std::string, double>{});
      for (Ceiling& c : p.ceilings) {
        c.cv = 0.10;
        c.samples = 10;
      }
      fleet.push_back({"node" + std::to_string(node) + "-gpu" + std::to_string(i), p});
    }
  const auto groups = analyze_fleet(fleet, OutlierRule{});
  ASSERT_EQ(groups.size(), 1u);
  // The test means something: some GPU's ceiling is past the margin without being planted.
  std::size_t past_margin = 0;
  for (const FleetMember& m : fleet)
    for (const Ceiling& c : m.profile.ceilings)
      for (const CeilingStats& s : groups[0].stats)
        if (s.name == c.name && c.unit != "s" && c.name != "hbm.copy" && c.value < 0.95 * s.median) ++past_margin;
  EXPECT_GT(past_margin, 20u);
  const FleetFindings f = count_findings(groups);
  EXPECT_EQ(f.unstable, 0u);
  ASSERT_EQ(f.outliers, 1u);
  EXPECT_EQ(fleet[groups[0].members[groups[0].outliers[0].member]].path, "node5-gpu2");

  // One GPU 8% slow with a cv of 10% among 16 that measure tightly (0.5%) and differ by 2%: its own spread does
  // not excuse it, the group's typical one does not cover it (review 110: it had read as ordinary, a PASS).
  FleetGen tight(12, 0.02);
  std::vector<FleetMember> noisy_one;
  for (int node = 0; node < 2; ++node)
    for (int i = 0; i < 8; ++i) {
      const bool sick = node == 1 && i == 4;
      Profile p = tight.gpu(node, i, sick ? std::map<std::string, double>{{"gemm.bf16", 0.08}}
                                          : std::map<std::string, double>{});
      for (Ceiling& c : p.ceilings) {
        c.cv = sick && c.name == "gemm.bf16" ? 0.10 : 0.005;
        c.samples = 20;
      }
      noisy_one.push_back({"node" + std::to_string(node) + "-gpu" + std::to_string(i), p});
    }
  const auto g2 = analyze_fleet(noisy_one, OutlierRule{});
  ASSERT_EQ(g2.size(), 1u);
  bool named = false;
  for (const std::vector<Outlier>* list : {&g2[0].outliers, &g2[0].unstable})
    for (const Outlier& o : *list)
      for (const Deviation& d : o.ceilings)
        named = named || (noisy_one[g2[0].members[o.member]].path == "node1-gpu4" && d.ceiling == "gemm.bf16");
  EXPECT_TRUE(named) << "a GPU 8% slow with a cv of 10% must be named, outlier or unstable";
}

// Two nodes of 8 clean H200s (the measured profile, each ceiling moved by its own standard error's noise): a
// deficit past the 5% margin alone on a noisy ceiling (pcie.h2d_pageable, gemm.fp64) is ordinary in a group this
// small too, whose z threshold (about 8) is past twice --z. With the rule off there, such fleets came out incomplete
// in 5 of 6 seeds (review 111); the 8% slow noisy GPU above is still named.
TEST(Fleet, ASmallCleanFleetIsNotLeftIncompleteByItsNoise) {
  const Profile h200 = read_profile(std::string(CEILINGS_SOURCE_DIR) + "/results/nvidia-h200/h200.profile.json");
  // 2 nodes of 8: each ceiling moved by its own standard error's noise; `slow` GPU (node 1, GPU 3) set to that
  // fraction of the profile's pcie.h2d_pageable where given.
  auto two_nodes = [&](unsigned seed, std::optional<double> slow) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::vector<FleetMember> fleet;
    for (int node = 0; node < 2; ++node)
      for (int i = 0; i < 8; ++i) {
        Profile p = h200;
        p.raw = json::object();
        p.hostname = "node" + std::to_string(node);
        p.device.index = i;
        p.device.uuid = "GPU-0000000" + std::to_string(node) + "-0000-0000-0000-00000000000" + std::to_string(i);
        for (Ceiling& c : p.ceilings) {
          const double z = std::clamp(normal(rng), -3.0, 3.0) * c.median_standard_error();
          c.value *= c.unit != "s" ? 1 + z : 1 - z;
          if (slow && node == 1 && i == 3 && c.name == "pcie.h2d_pageable") c.value = h200.find(c.name)->value * *slow;
        }
        fleet.push_back({"node" + std::to_string(node) + "-gpu" + std::to_string(i), p});
      }
    return fleet;
  };
  std::size_t unstable = 0, margin_only = 0;
  for (unsigned seed = 1; seed <= 6; ++seed) {
    const std::vector<FleetMember> fleet = two_nodes(seed, std::nullopt);
    const auto groups = analyze_fleet(fleet, OutlierRule{});
    ASSERT_EQ(groups.size(), 1u);
    for (const FleetMember& m : fleet)  // the test means something: past the margin by noise alone
      for (const Ceiling& c : m.profile.ceilings)
        for (const CeilingStats& s : groups[0].stats)
          if (s.name == c.name && c.unit != "s" && c.value < 0.95 * s.median) ++margin_only;
    unstable += count_findings(groups).unstable;
    EXPECT_EQ(count_findings(groups).outliers, 0u) << "seed " << seed;
  }
  EXPECT_GE(margin_only, 3u);
  EXPECT_EQ(unstable, 0u);

  // ... while a GPU 9% slow on pcie.h2d_pageable (its standard error 2.9%: within its own noise, past the margin and
  // one typical standard error) is not passed: unstable, measure again (review 113: with the z alone it was silent).
  const std::vector<FleetMember> fleet = two_nodes(3, 0.91);
  const auto groups = analyze_fleet(fleet, OutlierRule{});
  ASSERT_EQ(groups.size(), 1u);
  bool named = false;
  for (const std::vector<Outlier>* list : {&groups[0].outliers, &groups[0].unstable})
    for (const Outlier& o : *list)
      for (const Deviation& d : o.ceilings)
        named = named || (fleet[groups[0].members[o.member]].path == "node1-gpu3" && d.ceiling == "pcie.h2d_pageable");
  EXPECT_TRUE(named) << "a GPU 9% slow on a noisy ceiling in a small group must be named, outlier or unstable";
}

// A node whose 8 GPUs are all 3% slow on one ceiling, each within the 1% noise between GPUs, is named by its host's
// median against the other hosts' (review 109: named by nothing); clean fleets name no host.
TEST(Fleet, AHostSlowOnEveryGpuAlikeIsNamed) {
  for (unsigned seed : {1u, 2u, 3u, 4u, 5u}) {
    const auto clean = analyze_fleet(make_fleet({}, seed), OutlierRule{});
    EXPECT_EQ(count_findings(clean).hosts_below, 0u) << "seed " << seed;
  }
  FleetGen gen(21, 0.01);
  std::vector<FleetMember> fleet;
  for (int node = 0; node < 64; ++node)
    for (int i = 0; i < 8; ++i)
      fleet.push_back({"node" + std::to_string(node) + "-gpu" + std::to_string(i),
                       gen.gpu(node, i, node == 10 ? std::map<std::string, double>{{"gemm.bf16", 0.03}}
                                                   : std::map<std::string, double>{})});
  const auto groups = analyze_fleet(fleet, OutlierRule{});
  ASSERT_EQ(groups.size(), 1u);
  for (const Outlier& o : groups[0].outliers)  // no GPU of it alone is past the rule
    for (const Deviation& d : o.ceilings) EXPECT_NE(d.ceiling, "gemm.bf16") << fleet[groups[0].members[o.member]].path;
  ASSERT_EQ(groups[0].hosts_below.size(), 1u);
  const HostOutlier& h = groups[0].hosts_below[0];
  EXPECT_EQ(h.host, "node10");
  EXPECT_EQ(h.members.size(), 8u);
  ASSERT_EQ(h.ceilings.size(), 1u);
  EXPECT_EQ(h.ceilings[0].ceiling, "gemm.bf16");
  EXPECT_NEAR(h.ceilings[0].deficit, 0.03, 0.01);
  const std::string dir = write_fleet(fleet, "fleet_host_below");
  const auto r = run_cli({"fleet", dir});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("verdict: FAIL: 8 of 512 GPU(s) with a finding", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("hosts below the group's other hosts"), std::string::npos) << r.out;
  const auto csv = run_cli({"fleet", dir, "--format", "csv"});
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 1 + 8) << csv.out;
  EXPECT_NE(csv.out.find(",host below peers,node10,0,"), std::string::npos) << csv.out;
  const json j = parse_json_text(run_cli({"fleet", dir, "--format", "json"}).out, "fleet json");
  EXPECT_EQ(j.at("hosts_below"), 1);
  EXPECT_EQ(j["groups"][0].at("hosts_below").at(0).at("host"), "node10");
  EXPECT_EQ(j["groups"][0]["hosts_below"][0].at("gpus").size(), 8u);
  // A baseline leaves its GPUs out of the medians, as it does an outlier's (review 111).
  const std::string baseline = ceilings::test::scratch_dir("fleet_host_below_out") + "/baseline.profile.json";
  EXPECT_EQ(run_cli({"fleet", dir, "--write-baseline", baseline}).exit_code, 1);
  const json excluded = read_profile(baseline).raw.at("baseline").at("excluded");
  EXPECT_EQ(std::count_if(excluded.begin(), excluded.end(),
                          [](const json& e) { return e.at("reason") == "its host, node10, is below the group's other hosts"; }),
            8);

  // Clean fleets of 2- and 4-GPU hosts name no host: a median of two GPUs scatters more, and is judged with that
  // spread (review 111: clean fleets of 2-GPU hosts failed, a host past the margin with no noise of its own).
  for (int per_host : {2, 4})
    for (unsigned seed : {1u, 2u, 3u}) {
      FleetGen small(seed, 0.03);
      std::vector<FleetMember> hosts;
      for (int node = 0; node < 512 / per_host; ++node)
        for (int i = 0; i < per_host; ++i)
          hosts.push_back({"node" + std::to_string(node) + "-gpu" + std::to_string(i), small.gpu(node, i)});
      EXPECT_EQ(count_findings(analyze_fleet(hosts, OutlierRule{})).hosts_below, 0u)
          << per_host << " GPUs a host, seed " << seed;
    }
}

// The first line is the verdict the exit code gives, each GPU counted once whatever it was found for, with what was not
// judged in full; the JSON says it too, and lists the GPUs with a finding (review 108: "0 outlier(s)" led a run exit 3
// that no line called incomplete).
TEST(Fleet, TheFirstLineIsTheVerdict) {
  const std::string clean = ceilings::test::scratch_dir("fleet_verdict_clean");
  write_qualify_fleet(clean, 4, [](int, json&) {});
  auto r = run_cli({"fleet", clean});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("verdict: PASS: 4 GPU(s) read, none with a finding (exit 0)\n", 0), 0u) << r.out;
  json j = parse_json_text(run_cli({"fleet", clean, "--format", "json"}).out, "fleet json");
  EXPECT_EQ(j.at("verdict"), "pass");
  EXPECT_EQ(j.at("exit_code"), 0);
  EXPECT_TRUE(j.at("gpus_with_a_finding").empty());

  const std::string dir = ceilings::test::scratch_dir("fleet_verdict");
  write_qualify_fleet(dir, 4, [](int i, json& d) {
    if (i == 1) d["health"]["after"]["metrics"]["ecc.volatile.uncorrected"] = 2;
    if (i == 3) d["health"]["device"]["uuid"] = "GPU-00000000-1111-2222-3333-000000000009";  // not judged in full
  });
  r = run_cli({"fleet", dir});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("verdict: FAIL: 1 of 4 GPU(s) with a finding; not judged in full: 1 health section(s) of "
                        "another GPU (exit 1)\n",
                        0),
            0u)
      << r.out;
  EXPECT_EQ(r.out.find("\nrule: "), r.out.rfind("\nrule: ")) << r.out;
  EXPECT_GT(r.out.find("\nrule: "), r.out.find("recorded on another GPU")) << r.out;  // said last
  j = parse_json_text(run_cli({"fleet", dir, "--format", "json"}).out, "fleet json");
  EXPECT_EQ(j.at("verdict"), "fail");
  EXPECT_EQ(j.at("exit_code"), 1);
  ASSERT_EQ(j.at("gpus_with_a_finding").size(), 1u);
  EXPECT_EQ(j["gpus_with_a_finding"][0].at("uuid"), "GPU-00000000-1111-2222-3333-000000000001");
}

// A ceiling measured under a HW thermal slowdown fails the health rule `slowdown`: a health fault in the csv, as
// qualify has it, not a ceiling fault (review 110); one below its datasheet fraction alone is a ceiling fault.
TEST(Fleet, ASlowdownIsAHealthFaultAndASlowCeilingACeilingFault) {
  const std::string dir = ceilings::test::scratch_dir("fleet_fault_kinds");
  write_qualify_fleet(dir, 4, [](int i, json& d) {
    if (i == 1) {
      d["ceilings"][1]["throttled"] = true;
      d["ceilings"][1]["detail"]["throttle_reasons"] = 0x40;  // HW thermal slowdown
    }
    if (i == 2) d["ceilings"][0]["value"] = 3.0e12;  // hbm.copy at 62% of 4.8 TB/s
  });
  const auto csv = run_cli({"fleet", dir, "--format", "csv"});
  EXPECT_EQ(csv.exit_code, 1) << csv.out << csv.err;
  EXPECT_NE(csv.out.find(",health fault,node001,1,"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("HW/thermal slowdown"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find(",ceiling fault,node001,2,"), std::string::npos) << csv.out;
  const auto text = run_cli({"fleet", dir});
  EXPECT_NE(text.out.find("2 GPU(s) with a health fault (1 failing a health check, 1 only a ceiling's rules"),
            std::string::npos)
      << text.out;
}

// GPU pairs without peer access while NVLinks are up fail the node as qualify fails it, as a health fault (review
// 111: fleet had left the peer_access rule out, and such a node passed).
TEST(Fleet, PairsWithoutPeerAccessAreAHealthFault) {
  const std::string dir = ceilings::test::scratch_dir("fleet_peer_access");
  write_qualify_fleet(dir, 4, [](int i, json& d) {
    if (i != 3) return;
    for (const char* when : {"before", "after"}) d["health"][when]["metrics"]["nvlink.links_active"] = 18;
    json peer = d["ceilings"][3];  // pcie.h2d's fields, as a peer ceiling's
    peer["name"] = "nvlink.p2p_uni";
    peer["value"] = 3.9e11;
    peer["detail"] = {{"benchmark", "nvlink/p2p_uni/engine:ce/op:write"}, {"pairs_without_access", 2}};
    d["ceilings"].push_back(peer);
  });
  ASSERT_EQ(parse_json_text(read_text_file(dir + "/gpu3.profile.json"), "gpu3")["ceilings"][3]["name"], "pcie.h2d");
  const auto q = run_cli({"qualify", dir + "/gpu3.profile.json"});
  EXPECT_EQ(q.exit_code, 1) << q.out;
  const auto csv = run_cli({"fleet", dir, "--format", "csv"});
  EXPECT_EQ(csv.exit_code, 1) << csv.out << csv.err;
  EXPECT_NE(csv.out.find(",health fault,node001,3,"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("nvlink.p2p_uni peer access"), std::string::npos) << csv.out;
  const auto text = run_cli({"fleet", dir});
  EXPECT_EQ(text.out.rfind("verdict: FAIL: 1 of 4 GPU(s) with a finding", 0), 0u) << text.out;
  // Where the rules accept it, as qualify does.
  const std::string rules = dir + "/accept.rules.json";
  write_file_atomic(rules, R"({"schema": "ceilings.rules/1", "health": {"peer_access": false}})");
  EXPECT_EQ(run_cli({"fleet", dir, "--rules", rules}).exit_code, 0);
}

// A profile whose health was read through another NVML than the driver's (CEILINGS_NVML_LIBRARY: the self-test's
// fake) is named in every format, as qualify says it beside its verdict (review 104: fleet said nothing of it).
TEST(Fleet, HealthReadThroughAnotherNvmlIsNamed) {
  const std::string dir = ceilings::test::scratch_dir("fleet_other_nvml");
  write_qualify_fleet(dir, 4, [](int i, json& d) {
    if (i == 1) d["health"]["nvml_library"] = "/opt/fake/libnvml.so";
  });
  const FleetInput in = load_fleet({dir});
  const FleetHealth h = fleet_health(in.members);
  ASSERT_EQ(h.other_nvml.size(), 1u);
  EXPECT_EQ(in.members[h.other_nvml[0]].profile.device.uuid, "GPU-00000000-1111-2222-3333-000000000001");
  const auto r = run_cli({"fleet", dir});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;  // a note, as qualify's: the readings are judged as they are
  EXPECT_NE(r.out.find("1 profile(s) whose health was read through another NVML than the driver's"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gpu1.profile.json"), std::string::npos) << r.out;
  const json j = parse_json_text(run_cli({"fleet", dir, "--format", "json"}).out, "fleet json");
  ASSERT_EQ(j.at("health").at("other_nvml").size(), 1u);
  EXPECT_EQ(j["health"]["other_nvml"][0].at("nvml_library"), "/opt/fake/libnvml.so");
  const auto csv = run_cli({"fleet", dir, "--format", "csv"});
  EXPECT_NE(csv.out.find(",health not the driver's,"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("/opt/fake/libnvml.so (CEILINGS_NVML_LIBRARY)"), std::string::npos) << csv.out;
}

// A rate past what the GPU can attain is a timing or counting fault, as qualify's plausible row calls it: above
// its peers, no median names it (it passed, exit 0). A site's rules file (`--rules`) is read as qualify reads it:
// a power cap set low on purpose, said there, fails no GPU; a limit it sets for a ceiling is judged.
TEST(Fleet, RulesAndImplausibleRatesAreJudgedPerGpu) {
  const std::string dir = ceilings::test::scratch_dir("fleet_rules");
  const auto write_fleet = [&](double power_limit_w, double gpu0_sm_rate) {
    write_qualify_fleet(dir, 4, [&](int i, json& d) {
      for (const char* snap : {"before", "after"})
        if (d["health"].contains(snap)) d["health"][snap]["metrics"]["power.enforced_limit_w"] = power_limit_w;
      // pcie.h2d_sm has no datasheet fraction: only the plausible row judges it alone.
      json sm = d["ceilings"][3];
      sm["name"] = "pcie.h2d_sm";
      sm["value"] = i == 0 ? gpu0_sm_rate : 51.3e9;
      d["ceilings"].push_back(sm);
    });
  };
  write_fleet(700, 51.3e9);
  EXPECT_EQ(run_cli({"fleet", dir}).exit_code, 0);
  write_fleet(700, 80e9);  // 127% of the Gen5 x16 link's 63 GB/s
  auto r = run_cli({"fleet", dir, "--format", "json"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  json doc = parse_json_text(r.out, "fleet json");
  ASSERT_EQ(doc.at("health").at("faults").size(), 1u) << doc.dump(1);
  EXPECT_EQ(doc["health"]["faults"][0]["failed"][0]["check"], "plausible");
  EXPECT_EQ(doc["health"]["rules_origin"], "built-in defaults");

  // Every GPU capped at 500 W: each fails the power-limit row by default, and passes where the site says so.
  write_fleet(500, 51.3e9);
  r = run_cli({"fleet", dir, "--format", "json"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(parse_json_text(r.out, "fleet json").at("health").at("faults").size(), 4u);
  const std::string site = dir + "/../fleet_rules.site.rules.json";
  std::ofstream(site) << R"({"schema": "ceilings.rules/1", "health": {"power_limit": false}})";
  r = run_cli({"fleet", dir, "--rules", site, "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(parse_json_text(r.out, "fleet json").at("health").at("rules_origin"), site);
  const auto text = run_cli({"fleet", dir, "--rules", site});
  EXPECT_NE(text.out.find("rules: " + site), std::string::npos) << text.out;
  // A minimum the rules set for a ceiling fails the GPUs below it, peers alike or not.
  std::ofstream(site) << R"({"schema": "ceilings.rules/1", "health": {"power_limit": false},
                             "ceilings": {"pcie.h2d_sm": {"min": "52 GB/s"}}})";
  r = run_cli({"fleet", dir, "--rules", site, "--format", "json"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  doc = parse_json_text(r.out, "fleet json");
  ASSERT_EQ(doc.at("health").at("faults").size(), 4u);
  EXPECT_EQ(doc["health"]["faults"][0]["failed"][0]["check"], "minimum");
  // A limit on a ceiling no GPU holds (misspelt, or measured by none of the runs) judged no GPU: named, and the run
  // incomplete (it was dropped without a word, then counted as "not judged in full" with exit 0: review 90; not bad
  // input, as a --filter run or an older build's profiles lack a ceiling whose name is right: review 92).
  std::ofstream(site) << R"({"schema": "ceilings.rules/1", "health": {"power_limit": false},
                             "ceilings": {"gemm.bf16_ref4096": {"min": "500 TFLOP/s"}, "pcie.h2d_sn": {"min": "1 GB/s"}}})";
  r = run_cli({"fleet", dir, "--rules", site, "--format", "json"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  doc = parse_json_text(r.out, "fleet json");
  ASSERT_EQ(doc.at("health").at("rules_unheld").size(), 2u) << r.out;
  EXPECT_NE(doc["health"]["rules_unheld"].dump().find("no profile read has gemm.bf16_ref4096"), std::string::npos);
  EXPECT_NE(doc["health"]["rules_unheld"].dump().find("did you mean pcie.h2d_sm"), std::string::npos);
  const auto unheld_text = run_cli({"fleet", dir, "--rules", site});
  EXPECT_EQ(unheld_text.exit_code, 3);
  EXPECT_NE(unheld_text.out.find("rules: 'ceilings.pcie.h2d_sn': no profile read has pcie.h2d_sn"), std::string::npos)
      << unheld_text.out;
  const auto unheld_csv = run_cli({"fleet", dir, "--rules", site, "--format", "csv"});
  EXPECT_NE(unheld_csv.out.find("rule judged no GPU"), std::string::npos) << unheld_csv.out;
  // A rules file that is not one is bad input, exit 2, as in qualify.
  std::ofstream(site) << R"({"schema": "ceilings.rules/1", "health": {"power_limit": 3}})";
  EXPECT_EQ(run_cli({"fleet", dir, "--rules", site}).exit_code, 2);
}

// Two of four GPUs skipped a ceiling: the other two are too few to compare on it, and the two without it are listed
// as missing, saying so (review 90: nobody was listed, and one of the two 12% slow went without a word).
TEST(Fleet, ACeilingTooFewHoldIsListedAsMissing) {
  FleetGen gen(15, 0.001);
  std::vector<FleetMember> fleet = gen.fleet(4, 0, "hbm.copy", 0, "few");
  for (std::size_t i = 2; i < 4; ++i) {
    Profile& p = fleet[i].profile;
    p.ceilings.erase(std::remove_if(p.ceilings.begin(), p.ceilings.end(),
                                    [](const Ceiling& c) { return c.name == "gemm.bf16"; }),
                     p.ceilings.end());
    p.skipped.push_back({"gemm.bf16", "not run: --only"});
  }
  const auto groups = analyze_fleet(fleet, OutlierRule{});
  ASSERT_EQ(groups.size(), 1u);
  ASSERT_EQ(groups[0].missing.size(), 2u);
  for (const MissingCeiling& m : groups[0].missing) {
    EXPECT_GE(m.member, 2u);
    EXPECT_EQ(m.ceiling, "gemm.bf16");
    EXPECT_FALSE(m.error);
    EXPECT_EQ(m.reason, "not measured: not run: --only; held by 2 of the group's 4, too few to compare: judged for none");
  }
}

// A datasheet fraction the rules file sets that a spread past max_cv keeps from judging is counted as not judged in
// full, as a minimum so kept is (review 90: only min and max were counted); the default fraction is not the file's.
TEST(Fleet, AFractionTheRulesSetThatCouldNotJudgeIsCounted) {
  FleetGen gen(14, 0.001);
  std::vector<FleetMember> fleet = gen.fleet(4, 0, "hbm.copy", 0, "cv");
  for (FleetMember& m : fleet)
    for (Ceiling& c : m.profile.ceilings)
      if (c.name == "gemm.bf16") c.cv = 0.15;
  const Rules defaults = parse_rules(json::parse(R"({"schema":"ceilings.rules/1","health":{"require_section":false}})"),
                                     "defaults.json");
  const std::size_t before = fleet_health(fleet, defaults).incomplete;
  const Rules fraction = parse_rules(json::parse(R"({"schema":"ceilings.rules/1","health":{"require_section":false},
    "ceilings":{"gemm.bf16":{"min_fraction_of_datasheet":"72%"}}})"), "fraction.json");
  const Rules minimum = parse_rules(json::parse(R"({"schema":"ceilings.rules/1","health":{"require_section":false},
    "ceilings":{"gemm.bf16":{"min":"700 TFLOP/s"}}})"), "min.json");
  EXPECT_EQ(fleet_health(fleet, minimum).incomplete, 4u);
  EXPECT_EQ(fleet_health(fleet, fraction).incomplete, 4u);
  EXPECT_LT(before, 4u);
}

// A rule on a family no profile holds and this build does not know is misspelt: bad input, as in qualify (review 48:
// qualify's refusal, caught per profile, dropped every ceiling check of every GPU, and a fleet with an unverified
// GEMM passed). A rule on a newer family that only some profiles hold is not judged for the others, and their other
// checks still are.
TEST(Fleet, RulesOnAnUnknownFamilyAreBadInputAndANewerFamilyIsJudgedWhereHeld) {
  FleetGen gen(12, 0.001);
  std::vector<FleetMember> fleet = gen.fleet(4, 0, "hbm.copy", 0, "r");
  for (Ceiling& c : fleet[3].profile.ceilings)
    if (c.name == "gemm.bf16") c.verified = false;
  const Rules typo = parse_rules(json::parse(R"({"schema":"ceilings.rules/1","ceilings":{"hmb.copy":{"min":"4 TB/s"}}})"),
                                 "typo.rules.json");
  try {
    (void)fleet_health(fleet, typo);
    ADD_FAILURE() << "a rule on family 'hmb' was taken";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rules: 'ceilings.hmb.copy': unknown ceiling family 'hmb'"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("and no profile read has a hmb.* ceiling"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("did you mean hbm.copy"), std::string::npos) << e.what();
  }
  const std::string dir = write_fleet(fleet, "fleet_rules_family");
  std::ofstream(dir + "/../fleet_rules_family.rules.json")
      << R"({"schema":"ceilings.rules/1","required":["hmb.copy"]})";
  const auto r = run_cli({"fleet", dir, "--rules", dir + "/../fleet_rules_family.rules.json"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("unknown ceiling family"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;  // refused before any report

  // newfam.x on three GPUs of four: where held it is judged (GPU 0's is below the rule's minimum); the fourth,
  // without it, is not judged on that rule (counted as not judged in full), and its other checks still run (its
  // unverified GEMM fails).
  for (std::size_t i = 0; i < 3; ++i) {
    Ceiling c = *fleet[i].profile.find("hbm.copy");
    c.name = "newfam.x";
    if (i == 0) c.value = 0.5e12;
    fleet[i].profile.ceilings.push_back(c);
  }
  const Rules newer = parse_rules(
      json::parse(R"({"schema":"ceilings.rules/1","ceilings":{"newfam.x":{"min":"1 TB/s"}}})"),
      "newer.rules.json");
  FleetHealth h = fleet_health(fleet, newer);
  ASSERT_EQ(h.faults.size(), 2u);
  EXPECT_EQ(h.faults[0].member, 0u);
  ASSERT_FALSE(h.faults[0].failed.empty());
  EXPECT_EQ(h.faults[0].failed[0].subject, "newfam.x");
  EXPECT_EQ(h.faults[0].failed[0].rule, "minimum");
  EXPECT_EQ(h.faults[1].member, 3u);
  ASSERT_FALSE(h.faults[1].failed.empty());
  EXPECT_EQ(h.faults[1].failed[0].subject, "gemm.bf16");
  EXPECT_EQ(h.faults[1].failed[0].rule, "verified");
  // Nothing else against it: not judged in full, the only one so (the generated profiles have no health section,
  // which these rules do not ask for).
  for (Ceiling& c : fleet[3].profile.ceilings) c.verified = true;
  const Rules newer_only = parse_rules(json::parse(R"({"schema":"ceilings.rules/1","health":{"require_section":false},
                                                       "ceilings":{"newfam.x":{"min":"1 TB/s"}}})"),
                                       "newer-only.rules.json");
  h = fleet_health(fleet, newer_only);
  ASSERT_EQ(h.faults.size(), 1u);
  EXPECT_EQ(h.incomplete, 1u);
}

// A GPU measured twice counts once, by its newest run: the stale run with a slow HBM neither weighs in
// the median nor names the GPU, and is listed as set aside with the run that replaced it.
TEST(Fleet, TheNewestRunOfEachGpuStandsForIt) {
  const std::string dir = ceilings::test::scratch_dir("fleet_reruns");
  FleetGen gen(11);
  for (int node = 0; node < 4; ++node)
    for (int i = 0; i < 2; ++i) {
      Profile p = gen.gpu(node, i);
      p.created = "2026-11-30T10:00:00Z";
      write_file_atomic(dir + "/n" + std::to_string(node) + "-g" + std::to_string(i) + ".profile.json",
                        profile_to_json(p).dump());
    }
  Profile stale = gen.gpu(2, 1, {{"hbm.copy", 0.30}});  // before a repair: 30% slow
  stale.created = "2026-11-29T08:00:00Z";
  write_file_atomic(dir + "/z-stale.profile.json", profile_to_json(stale).dump());
  Profile later = gen.gpu(3, 0, {{"hbm.copy", 0.30}});  // after a fault appeared: the newest run counts
  later.created = "2026-11-30T12:00:00Z";
  write_file_atomic(dir + "/a-later.profile.json", profile_to_json(later).dump());

  const FleetInput in = load_fleet({dir});
  EXPECT_EQ(in.files, 10u);
  EXPECT_EQ(in.members.size(), 8u);
  ASSERT_EQ(in.superseded.size(), 2u);
  std::set<std::string> set_aside;
  for (const FleetSuperseded& s : in.superseded) set_aside.insert(fs::path(s.path).filename().string());
  EXPECT_EQ(set_aside, (std::set<std::string>{"z-stale.profile.json", "n3-g0.profile.json"}));
  for (const FleetSuperseded& s : in.superseded)
    if (s.path.find("z-stale") != std::string::npos) {
      EXPECT_EQ(fs::path(s.newer_path).filename().string(), "n2-g1.profile.json");
      EXPECT_EQ(s.created, "2026-11-29T08:00:00Z");
      EXPECT_EQ(s.newer_created, "2026-11-30T10:00:00Z");
    }
  const auto groups = analyze_fleet(in.members, OutlierRule{});
  ASSERT_EQ(groups.size(), 1u);
  ASSERT_EQ(groups[0].outliers.size(), 1u);  // node 3's GPU 0 by its newest run; not node 2's GPU 1
  EXPECT_EQ(in.members[groups[0].members[groups[0].outliers[0].member]].profile.device.uuid,
            later.device.uuid);

  const auto r = run_cli({"fleet", dir});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("read 8 profile(s) of 10 file(s), skipped 0, 2 older run(s) set aside"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("z-stale.profile.json: an older run (2026-11-29T08:00:00Z)"), std::string::npos) << r.out;
  const auto j = run_cli({"fleet", dir, "--format", "json"});
  const json f = json::parse(j.out);
  EXPECT_EQ(f.at("read"), 8);
  EXPECT_EQ(f.at("superseded").size(), 2u);

  // The same GPU re-measured under a newer driver: the new run stands for it, the one from before the upgrade
  // is set aside (it is not the GPU as it stands, nor a GPU configured unlike its peers).
  Profile upgraded = gen.gpu(0, 0);
  upgraded.device.driver = "590.10.01";
  upgraded.created = "2026-11-30T13:00:00Z";
  write_file_atomic(dir + "/upgraded.profile.json", profile_to_json(upgraded).dump());
  const FleetInput again = load_fleet({dir});
  EXPECT_EQ(again.members.size(), 8u);
  EXPECT_EQ(again.superseded.size(), 3u);
  EXPECT_EQ(analyze_fleet(again.members, OutlierRule{}).size(), 2u);  // the upgraded GPU alone in its group
}

// One UUID on two hosts is one GPU moved or a profile copied: the newest stands, and the set-aside line says the
// hosts differ (and where the times are the same, that the later file stood).
TEST(Fleet, OneUuidOnTwoHostsIsSaidWhenSetAside) {
  const std::string dir = ceilings::test::scratch_dir("fleet_two_hosts");
  FleetGen gen(15);
  for (int node = 0; node < 3; ++node) {
    Profile p = gen.gpu(node, 0);
    p.created = "2026-11-30T10:00:00Z";
    write_file_atomic(dir + "/n" + std::to_string(node) + ".profile.json", profile_to_json(p).dump());
  }
  Profile copy = gen.gpu(1, 0);
  copy.hostname = "elsewhere";
  copy.created = "2026-11-30T10:00:00Z";
  write_file_atomic(dir + "/z-copy.profile.json", profile_to_json(copy).dump());
  const auto r = run_cli({"fleet", dir});
  EXPECT_NE(r.out.find("(on another host, elsewhere, than node1: a GPU moved, or a profile copied"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("(the same time: the later file stands)"), std::string::npos) << r.out;
  // The csv has a row for it too (review 109: none).
  const auto csv = run_cli({"fleet", dir, "--format", "csv"});
  EXPECT_NE(csv.out.find(",moved or copied,node1,,"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("z-copy.profile.json on elsewhere stands for it"), std::string::npos) << csv.out;
  // Past the 20-line cap, behind 30 plain re-measurements, it is listed first (review 109: it fell past the cap).
  for (int node = 3; node < 33; ++node) {
    Profile old = gen.gpu(node, 0);
    old.created = "2026-11-29T10:00:00Z";
    write_file_atomic(dir + "/a-old" + std::to_string(node) + ".profile.json", profile_to_json(old).dump());
    Profile now = old;
    now.created = "2026-11-30T10:00:00Z";
    write_file_atomic(dir + "/n" + std::to_string(node) + ".profile.json", profile_to_json(now).dump());
  }
  const auto many = run_cli({"fleet", dir});
  EXPECT_NE(many.out.find("(on another host, elsewhere, than node1"), std::string::npos) << many.out;
  EXPECT_NE(many.out.find("... and 11 more older run(s) set aside"), std::string::npos) << many.out;
  const json j = parse_json_text(run_cli({"fleet", dir, "--format", "json"}).out, "fleet json");
  ASSERT_EQ(j.at("superseded").size(), 31u);
  EXPECT_EQ(std::count_if(j["superseded"].begin(), j["superseded"].end(),
                          [](const json& s) { return s.at("newer_host") == "elsewhere"; }),
            1);
}

// A directory of many jobs' runs: each older profile was one "set aside" line, 2,000 lines burying a clean
// fleet's report (review 34). Text names the first 20 and counts the rest; the JSON lists every one.
TEST(Fleet, LongListsAreCutInTextAndWholeInJson) {
  const std::string dir = ceilings::test::scratch_dir("fleet_many_reruns");
  FleetGen gen(21);
  for (int node = 0; node < 25; ++node)
    for (const char* when : {"2026-11-29T10:00:00Z", "2026-11-30T10:00:00Z"}) {
      Profile p = gen.gpu(node, 0);
      p.created = when;
      write_file_atomic(dir + "/n" + std::to_string(node) + "-" + when + ".profile.json", profile_to_json(p).dump());
    }
  const auto r = run_cli({"fleet", dir});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  std::size_t lines = 0;
  for (std::size_t at = r.out.find("\nset aside "); at != std::string::npos; at = r.out.find("\nset aside ", at + 1)) ++lines;
  EXPECT_EQ(lines, 20u) << r.out;
  EXPECT_NE(r.out.find("\n... and 5 more older run(s) set aside (`--format json` lists every one: superseded)\n"),
            std::string::npos)
      << r.out;
  const json j = parse_json_text(run_cli({"fleet", dir, "--format", "json"}).out, "fleet json");
  EXPECT_EQ(j.at("superseded").size(), 25u);
  // The table of GPUs with a failing health check too: a fault on every node (here an unverified ceiling on each
  // of 25 GPUs) is its first 20 GPUs and a count (review 40).
  const std::string faulty = ceilings::test::scratch_dir("fleet_many_faults");
  for (int node = 0; node < 25; ++node) {
    Profile p = gen.gpu(node, 0);
    for (Ceiling& c : p.ceilings)
      if (c.name == "hbm.copy") c.verified = false;
    write_file_atomic(faulty + "/n" + std::to_string(node) + ".profile.json", profile_to_json(p).dump());
  }
  const auto f = run_cli({"fleet", faulty});
  EXPECT_EQ(f.exit_code, 1) << f.out << f.err;
  EXPECT_NE(f.out.find("\n... and 5 more GPU(s) with a failing check (`--format json` lists every one: health.faults)\n"),
            std::string::npos)
      << f.out;
  EXPECT_EQ(parse_json_text(run_cli({"fleet", faulty, "--format", "json"}).out, "fleet json")["health"]["faults"].size(),
            25u);
  // Twenty or fewer: every one, no count.
  fs::remove(dir + "/n0-2026-11-29T10:00:00Z.profile.json");
  for (int node = 1; node < 5; ++node) fs::remove(dir + "/n" + std::to_string(node) + "-2026-11-29T10:00:00Z.profile.json");
  const auto few = run_cli({"fleet", dir});
  EXPECT_EQ(few.out.find("more older run(s)"), std::string::npos) << few.out;
}

// A group's tables in text and markdown show their first 50 rows (an outliers table worst first) and a count with where the JSON has
// them all (review 109 L2: 2048 slow GPUs printed 90,000 lines); the JSON and csv hold every row.
TEST(Fleet, LongTablesAreCutInTextAndWholeInJsonAndCsv) {
  FleetGen gen(5);
  const std::string dir = write_fleet(gen.fleet(400, 60, "gemm.bf16", 0.10, "n"), "fleet_long_tables");
  for (const char* format : {"table", "markdown"}) {
    const auto r = run_cli({"fleet", dir, "--format", format});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.out.find("... and 10 more row(s) (`--format json` lists every one: groups[0].outliers; `--format csv` "
                         "too)\n"),
              std::string::npos)
        << r.out;
    std::size_t rows = 0;
    for (std::size_t at = r.out.find("gemm.bf16"); at != std::string::npos; at = r.out.find("gemm.bf16", at + 1))
      if (r.out.compare(at, 10, "gemm.bf16 ") == 0 || r.out.compare(at, 11, "gemm.bf16 |") == 0) ++rows;
    EXPECT_LT(rows, 60u) << r.out;
  }
  const json j = parse_json_text(run_cli({"fleet", dir, "--format", "json"}).out, "fleet json");
  EXPECT_EQ(j["groups"][0]["outliers"].size(), 60u);
  const auto csv = run_cli({"fleet", dir, "--format", "csv"});
  std::size_t outlier_rows = 0;
  for (std::size_t at = csv.out.find(",outlier,"); at != std::string::npos; at = csv.out.find(",outlier,", at + 1))
    ++outlier_rows;
  EXPECT_EQ(outlier_rows, 60u) << csv.out.substr(0, 2000);
}

// Two runs of one node in dated folders: the older finished every GPU, the newer hung on GPU 3. The newer run
// says how GPU 3 ended, whichever folder is read first: the older run's "done" used to win (read first, in path
// order) and pass a GPU that hung.
TEST(Fleet, TheNewestRunOfAGpuSaysHowItEnded) {
  const std::string dir = ceilings::test::scratch_dir("fleet_two_runs");
  FleetGen gen(21);
  for (int run = 1; run <= 2; ++run) {
    const std::string run_dir = dir + "/run-" + std::to_string(run);
    fs::create_directories(run_dir);
    json gpus = json::array();
    for (int i = 0; i < 4; ++i) {
      Profile p = gen.gpu(0, i);
      p.created = run == 1 ? "2026-11-30T10:00:00Z" : "2026-11-30T11:30:00Z";
      const std::string name = "node0-gpu" + std::to_string(i) + ".profile.json";
      const bool hung = run == 2 && i == 3;
      if (!hung) write_file_atomic(run_dir + "/" + name, profile_to_json(p).dump());
      gpus.push_back(hung ? json{{"index", i}, {"uuid", p.device.uuid}, {"pci_bus_id", p.device.pci_bus_id},
                                 {"state", "timed_out"}, {"reason", "ceilings-bench ran past the 5 s timeout"}}
                          : json{{"index", i}, {"uuid", p.device.uuid}, {"pci_bus_id", p.device.pci_bus_id},
                                 {"state", "done"}, {"profile", name}});
    }
    const json summary = {{"schema", "ceilings.node/1"}, {"host", "node0"}, {"created", "2026-11-30T09:00:00Z"},
                          {"updated", run == 1 ? "2026-11-30T10:30:00Z" : "2026-11-30T12:00:00Z"},
                          {"complete", run == 1}, {"gpus", gpus}};
    write_file_atomic(run_dir + "/node0.node-summary.json", summary.dump());
  }
  for (int node = 1; node < 3; ++node)  // peers, so the group is compared
    for (int i = 0; i < 4; ++i)
      write_file_atomic(dir + "/node" + std::to_string(node) + "-gpu" + std::to_string(i) + ".profile.json",
                        profile_to_json(gen.gpu(node, i)).dump());
  for (const std::vector<std::string>& order :
       {std::vector<std::string>{dir}, {dir + "/run-1", dir + "/run-2", dir}, {dir + "/run-2", dir + "/run-1", dir}}) {
    const FleetInput in = load_fleet(order);
    EXPECT_EQ(in.node_summaries, 2u);
    ASSERT_EQ(in.unfinished.size(), 1u) << order.front();
    EXPECT_EQ(in.unfinished[0].index, 3);
    EXPECT_EQ(in.unfinished[0].state, "timed_out");
    EXPECT_TRUE(in.unfinished[0].partial_compared);  // the older run's profile is compared, but does not pass it
  }
  const auto r = run_cli({"fleet", dir});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("timed_out"), std::string::npos) << r.out;

  // A third run says every GPU finished, but its profiles are not here: an earlier run's profile of a GPU does
  // not pass it for this run (it passed them all, exit 0).
  fs::create_directories(dir + "/run-3");
  json gpus = json::array();
  for (int i = 0; i < 4; ++i) {
    const Profile p = gen.gpu(0, i);
    gpus.push_back({{"index", i}, {"uuid", p.device.uuid}, {"pci_bus_id", p.device.pci_bus_id}, {"state", "done"},
                    {"profile", "node0-gpu" + std::to_string(i) + ".profile.json"},
                    {"started", "2026-11-30T13:00:00Z"}, {"finished", "2026-11-30T13:05:00Z"}});
  }
  write_file_atomic(dir + "/run-3/node0.node-summary.json",
                    json{{"schema", "ceilings.node/1"}, {"host", "node0"}, {"created", "2026-11-30T13:00:00Z"},
                         {"updated", "2026-11-30T13:20:00Z"}, {"complete", true}, {"gpus", gpus}}
                        .dump());
  const FleetInput third = load_fleet({dir});
  ASSERT_EQ(third.unfinished.size(), 4u);
  for (const FleetUnfinished& u : third.unfinished) {
    EXPECT_EQ(u.state, "done");
    EXPECT_NE(u.reason.find("is from an earlier run than this one (started 2026-11-30T13:00:00Z)"), std::string::npos)
        << u.reason;
  }
  EXPECT_EQ(run_cli({"fleet", dir}).exit_code, 3);
}

// A GPU a node summary lists without a finished profile (one that hung wrote none; one finished whose profile is
// not among the files) is named and makes the run incomplete: a hang is not a pass. A GPU measured again since
// the summary was written stands for itself.
TEST(Fleet, GpusANodeSummaryListsWithoutAProfileAreNamed) {
  const std::string dir = ceilings::test::scratch_dir("fleet_unfinished");
  FleetGen gen(12);
  json gpus = json::array();
  for (int i = 0; i < 4; ++i) {
    Profile p = gen.gpu(0, i);
    p.created = "2026-11-30T10:00:00Z";
    const std::string name = "node0-gpu" + std::to_string(i) + ".profile.json";
    if (i != 2 && i != 3) write_file_atomic(dir + "/" + name, profile_to_json(p).dump());
    json g = {{"index", i}, {"uuid", p.device.uuid}, {"pci_bus_id", p.device.pci_bus_id}, {"state", "done"},
              {"profile", name}};
    if (i == 2) g = {{"index", i}, {"uuid", p.device.uuid}, {"pci_bus_id", p.device.pci_bus_id},
                     {"state", "timed_out"}, {"reason", "ceilings-bench ran past the 7200 s timeout"}};
    gpus.push_back(g);
  }
  for (int node = 1; node < 3; ++node)  // two more nodes without summaries, so the group is compared
    for (int i = 0; i < 2; ++i)
      write_file_atomic(dir + "/node" + std::to_string(node) + "-gpu" + std::to_string(i) + ".profile.json",
                        profile_to_json(gen.gpu(node, i)).dump());
  const json summary = {{"schema", "ceilings.node/1"}, {"host", "node0"}, {"created", "2026-11-30T09:00:00Z"},
                        {"updated", "2026-11-30T11:00:00Z"}, {"complete", true}, {"gpus", gpus}};
  write_file_atomic(dir + "/node0.node-summary.json", summary.dump());

  FleetInput in = load_fleet({dir});
  EXPECT_EQ(in.node_summaries, 1u);
  ASSERT_EQ(in.unfinished.size(), 2u);
  EXPECT_EQ(in.unfinished[0].index, 2);
  EXPECT_EQ(in.unfinished[0].state, "timed_out");
  EXPECT_EQ(in.unfinished[0].reason, "ceilings-bench ran past the 7200 s timeout");
  EXPECT_FALSE(in.unfinished[0].partial_compared);
  EXPECT_EQ(in.unfinished[1].index, 3);
  EXPECT_EQ(in.unfinished[1].reason, "finished, but its profile (node0-gpu3.profile.json) is not among the files read");
  auto r = run_cli({"fleet", dir});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;  // nothing slow, but two GPUs not judged
  EXPECT_NE(r.out.find("1 node summary(ies) listing 2 GPU(s) without a finished profile"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("timed_out"), std::string::npos) << r.out;
  const json j = json::parse(run_cli({"fleet", dir, "--format", "json"}).out);
  EXPECT_EQ(j.at("unfinished").size(), 2u);
  EXPECT_EQ(j.at("unfinished")[0].at("state"), "timed_out");
  const auto csv = run_cli({"fleet", dir, "--format", "csv"});
  EXPECT_NE(csv.out.find(",unfinished,node0,2,"), std::string::npos) << csv.out;

  // GPU 2 measured again after the summary: it stands; GPU 3's profile found: nothing unfinished, exit 0.
  Profile again = gen.gpu(0, 2);
  again.created = "2026-11-30T12:00:00Z";
  write_file_atomic(dir + "/node0-gpu2.profile.json", profile_to_json(again).dump());
  Profile three = gen.gpu(0, 3);
  write_file_atomic(dir + "/node0-gpu3.profile.json", profile_to_json(three).dump());
  in = load_fleet({dir});
  EXPECT_TRUE(in.unfinished.empty());
  EXPECT_EQ(run_cli({"fleet", dir}).exit_code, 0);
  // A partial profile from before the summary's last write does not stand for the timed-out GPU.
  again.created = "2026-11-30T10:30:00Z";
  write_file_atomic(dir + "/node0-gpu2.profile.json", profile_to_json(again).dump());
  in = load_fleet({dir});
  ASSERT_EQ(in.unfinished.size(), 1u);
  EXPECT_TRUE(in.unfinished[0].partial_compared);
  // A reason of several lines (the bench's last words) is one line in a table, whole in JSON; the same GPU in a
  // second summary is named once; a control character is not printed.
  json twice = summary;
  twice["gpus"][2]["reason"] = "ceilings-bench ran past the 7200 s timeout\n  kept 3 finished case(s)\x1b[2J";
  write_file_atomic(dir + "/node0.node-summary.json", twice.dump());
  write_file_atomic(dir + "/copy.node-summary.json", twice.dump());
  in = load_fleet({dir});
  ASSERT_EQ(in.unfinished.size(), 1u);
  EXPECT_EQ(in.unfinished[0].reason.find('\x1b'), std::string::npos);
  auto multi = run_cli({"fleet", dir, "--format", "markdown"});
  EXPECT_NE(multi.out.find("ceilings-bench ran past the 7200 s timeout ... (a profile of it"), std::string::npos)
      << multi.out;
  EXPECT_NE(json::parse(run_cli({"fleet", dir, "--format", "json"}).out)["unfinished"][0]["reason"].get<std::string>().find(
                "\n  kept 3"),
            std::string::npos);
  fs::remove(dir + "/copy.node-summary.json");
  // A summary that is not one is named, not guessed at.
  write_file_atomic(dir + "/bad.node-summary.json", "{\"schema\": \"ceilings.node/1\"}");
  in = load_fleet({dir});
  ASSERT_EQ(in.skipped.size(), 1u);
  EXPECT_NE(in.skipped[0].reason.find("not a node summary"), std::string::npos) << in.skipped[0].reason;
}

// Two groups as large as each other: which the baseline comes from is the user's to say, not the labels' alphabet.
// A file fleet could not read has a csv row of its own, as it weighs in the exit code.
TEST(Fleet, ABaselineOfTwoEqualGroupsIsAskedForAndSkippedFilesAreRows) {
  const std::string dir = ceilings::test::scratch_dir("fleet_tie");
  FleetGen gen(14);
  for (int node = 0; node < 6; ++node) {
    Profile p = gen.gpu(node, 0);
    if (node >= 3) p.device.driver = "590.10.01";
    write_file_atomic(dir + "/n" + std::to_string(node) + ".profile.json", profile_to_json(p).dump());
  }
  const std::string baseline = ceilings::test::scratch_dir("fleet_tie_out") + "/baseline.profile.json";
  auto r = run_cli({"fleet", dir, "--write-baseline", baseline});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("are the largest alike, 3 profiles each: say which"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(baseline));
  r = run_cli({"fleet", dir, "--write-baseline", baseline, "--baseline-group", "2"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // the model is configured two ways
  ASSERT_TRUE(fs::exists(baseline)) << r.out << r.err;
  EXPECT_EQ(read_profile(baseline).raw.at("baseline").at("fingerprint").at("driver"), "590.10.01");  // group 2's
  r = run_cli({"fleet", dir, "--write-baseline", baseline, "--baseline-group", "1"});
  EXPECT_EQ(read_profile(baseline).raw.at("baseline").at("fingerprint").at("driver"), "580.95.05") << r.err;
  // The README's batch job, `--format json --write-baseline F > fleet.json`: the report is printed in full
  // (it printed nothing, leaving fleet.json empty, in the very case it reports: a model configured two ways),
  // then exit 2 says why there is no baseline; F, a baseline of an earlier run here, is left as it was.
  const std::string before = ceilings::read_text_file(baseline);
  for (const char* format : {"json", "csv", "table"}) {
    const auto tied = run_cli({"fleet", dir, "--format", format, "--write-baseline", baseline});
    EXPECT_EQ(tied.exit_code, 2) << format << tied.err;
    EXPECT_NE(tied.err.find("--write-baseline: nothing written to '" + baseline + "' (the report was printed in "
                            "full): groups 1 ("),
              std::string::npos)
        << tied.err;
    EXPECT_EQ(ceilings::read_text_file(baseline), before) << format;
    const auto plain = run_cli({"fleet", dir, "--format", format});
    EXPECT_EQ(plain.exit_code, 1) << plain.err;  // a model configured two ways
    // The same report, but for the exit code it says, which is the process's (review 110: it said 1, exit 2).
    if (std::string(format) == "json") {
      json t = parse_json_text(tied.out, "fleet json"), p = parse_json_text(plain.out, "fleet json");
      EXPECT_EQ(t.at("groups").size(), 2u);
      EXPECT_EQ(t.at("exit_code"), 2);
      EXPECT_EQ(t.at("verdict"), "fail");
      t.erase("exit_code");
      p.erase("exit_code");
      EXPECT_EQ(t, p);
    } else if (std::string(format) == "table") {
      const std::size_t nl = tied.out.find('\n');
      EXPECT_NE(tied.out.substr(0, nl).find("(exit 2: --write-baseline wrote nothing, as stderr says)"),
                std::string::npos)
          << tied.out;
      EXPECT_EQ(tied.out.substr(nl), plain.out.substr(plain.out.find('\n'))) << format;
    } else {
      EXPECT_EQ(tied.out, plain.out) << format;
    }
  }
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(fs::path(baseline).parent_path()))
    left.push_back(e.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"baseline.profile.json"});  // no temporary file beside it
  write_file_atomic(dir + "/broken.profile.json", "{");
  r = run_cli({"fleet", dir, "--format", "csv"});
  EXPECT_NE(r.out.find(",skipped,,,,,,,,,,,,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("broken.profile.json: "), std::string::npos) << r.out;
}

// A case a timeout cut short is not a measurement that failed: the GPU is not judged in full (exit 3, as qualify
// has it), not a health fault (exit 1); a case that failed on its own still fails.
TEST(Fleet, ACaseCutShortIsIncompleteNotAFault) {
  const std::string dir = ceilings::test::scratch_dir("fleet_cut_short");
  FleetGen gen(13);
  for (int node = 0; node < 4; ++node) {
    Profile p = gen.gpu(node, 0);
    if (node == 3) {
      p.ceilings.erase(std::remove_if(p.ceilings.begin(), p.ceilings.end(),
                                      [](const Ceiling& c) { return c.name == "hbm.copy"; }),
                       p.ceilings.end());
      p.errors.push_back({"hbm.copy", std::string(kStoppedWhileRunningReason) + kTimedOutReason +
                                          "600 s timeout and was terminated"});
    }
    write_file_atomic(dir + "/n" + std::to_string(node) + ".profile.json", profile_to_json(p).dump());
  }
  FleetInput in = load_fleet({dir});
  const FleetHealth h = fleet_health(in.members);
  EXPECT_TRUE(h.faults.empty());
  ASSERT_EQ(h.cut_short.size(), 1u);
  EXPECT_EQ(in.members[h.cut_short[0]].profile.hostname, "node3");
  const auto groups = analyze_fleet(in.members, OutlierRule{});
  ASSERT_EQ(groups.size(), 1u);
  ASSERT_EQ(groups[0].missing.size(), 1u);
  EXPECT_FALSE(groups[0].missing[0].error);
  EXPECT_NE(groups[0].missing[0].reason.find("not measured, the run was stopped"), std::string::npos)
      << groups[0].missing[0].reason;
  auto r = run_cli({"fleet", dir});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("1 profile(s) of a run a timeout or an interrupt cut short"), std::string::npos) << r.out;
  EXPECT_NE(run_cli({"fleet", dir, "--format", "csv"}).out.find(",cut short,node3,"), std::string::npos);
  // A run stopped between two families writes no error, only measure.complete false: cut short all the same.
  Profile stopped = gen.gpu(3, 0);
  stopped.raw["measure"] = {{"complete", false}};
  write_file_atomic(dir + "/n3.profile.json", profile_to_json(stopped).dump());
  in = load_fleet({dir});
  EXPECT_EQ(fleet_health(in.members).cut_short.size(), 1u);
  EXPECT_EQ(run_cli({"fleet", dir}).exit_code, 3);
  // A failure of its own fails.
  Profile failed = gen.gpu(3, 0);
  failed.errors.push_back({"pcie.h2d", "verification failed: 12 of 4096 words differ"});
  write_file_atomic(dir + "/n3.profile.json", profile_to_json(failed).dump());
  EXPECT_EQ(run_cli({"fleet", dir}).exit_code, 1);
  // A family that crashed while the later ones ran (measure.families holds no "not run"): a failed measurement,
  // not a run cut short (review 18: it was named "a timeout or an interrupt").
  Profile crashed = gen.gpu(3, 0);
  crashed.errors.push_back({"pcie.h2d", std::string(kStoppedWhileRunningReason) + "ceilings-bench failed (killed by "
                                                                                   "signal 11 (Segmentation fault))"});
  crashed.raw["measure"] = {{"complete", false},
                            {"stopped", "ceilings-bench failed (killed by signal 11 (Segmentation fault))"},
                            {"families", json::parse(R"([{"family": "pcie", "cases": 1, "finished_cases": 0,
                                "failure": "ceilings-bench failed"}, {"family": "gemm", "cases": 1, "finished_cases": 1}])")}};
  write_file_atomic(dir + "/n3.profile.json", profile_to_json(crashed).dump());
  in = load_fleet({dir});
  EXPECT_TRUE(fleet_health(in.members).cut_short.empty());
  r = run_cli({"fleet", dir});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(r.out.find("cut short"), std::string::npos) << r.out;
}

// A GPU's older run with peer ceilings and its newer run without them (the family skipped) are one GPU: the
// run without them joins the group of the runs with them, so only the newest may weigh in its median.
TEST(Fleet, ARunWithoutPeerCeilingsSupersedesTheSameGpusRunWithThem) {
  FleetGen gen(17, 0.001);
  std::vector<FleetMember> fleet;
  auto with_nvlink = [](Profile p) { return with_nvlink_ceiling(std::move(p), true); };
  for (int i = 0; i < 4; ++i) {
    Profile p = with_nvlink(gen.gpu(1, i));
    p.created = "2026-11-30T10:00:00Z";
    fleet.push_back({"g" + std::to_string(i), p});
  }
  Profile old = with_nvlink(gen.gpu(1, 0, {{"hbm.copy", 0.2}}));  // GPU 0 before a repair, 20% slow
  old.created = "2026-11-29T10:00:00Z";
  fleet.push_back({"g0-old", old});
  Profile newer = gen.gpu(1, 0);  // GPU 0 again, newest, the peer family skipped
  newer.created = "2026-11-30T12:00:00Z";
  fleet.push_back({"g0-new", newer});
  const std::string dir = write_fleet(fleet, "fleet_rerun_scope");
  const FleetInput in = load_fleet({dir});
  EXPECT_EQ(in.members.size(), 4u);  // g0 and g0-old set aside for g0-new
  EXPECT_EQ(in.superseded.size(), 2u);
  const auto groups = analyze_fleet(in.members, OutlierRule{});
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].members.size(), 4u);
  EXPECT_TRUE(groups[0].outliers.empty()) << "the stale run is not in the median, nor named";
}

// The newest run is the newest in time, not in text: "12:00:00.5Z" is after "12:00:00Z" (as text it sorts
// before), and a run whose `created` is not a time is skipped with the reason, never "newer" than a real one.
TEST(Fleet, TheNewestRunIsChosenByTimeNotByText) {
  const std::string dir = ceilings::test::scratch_dir("fleet_rerun_times");
  FleetGen gen(13);
  Profile newer = gen.gpu(0, 0);
  newer.created = "2026-11-30T12:00:00.5Z";
  write_file_atomic(dir + "/a-newer.profile.json", profile_to_json(newer).dump());
  Profile older = gen.gpu(0, 0);
  older.created = "2026-11-30T12:00:00Z";
  write_file_atomic(dir + "/b-older.profile.json", profile_to_json(older).dump());
  Profile garbage = gen.gpu(0, 0);
  garbage.created = "not a date";
  write_file_atomic(dir + "/c-garbage.profile.json", profile_to_json(garbage).dump());

  const FleetInput in = load_fleet({dir});
  EXPECT_EQ(in.files, 3u);
  ASSERT_EQ(in.members.size(), 1u);
  EXPECT_EQ(fs::path(in.members[0].path).filename().string(), "a-newer.profile.json");
  ASSERT_EQ(in.superseded.size(), 1u);
  EXPECT_EQ(fs::path(in.superseded[0].path).filename().string(), "b-older.profile.json");
  ASSERT_EQ(in.skipped.size(), 1u);
  EXPECT_NE(in.skipped[0].path.find("c-garbage"), std::string::npos);
  EXPECT_NE(in.skipped[0].reason.find("'created'"), std::string::npos) << in.skipped[0].reason;
}

// Five of nine GPUs with HBM 20% slow: the median is theirs, so the median rules name none; the gap that splits the
// group lists all five against the fast four's median, but as unstable, not judged: the worse side is the majority,
// and five slow or four fast is not for the peers to say (review 90: three of eight reading high had named the five).
// Each is below qualify's datasheet fraction, which judges them (it exited 0, with HBM at 75% of its datasheet).
TEST(Fleet, AFleetSlowAsAWholeIsCaughtByItsDatasheetNotByItsPeers) {
  FleetGen gen(31, 0.001);
  const std::vector<FleetMember> fleet = gen.fleet(9, 5, "hbm.copy", 0.2, "n");
  const auto groups = analyze_fleet(fleet, OutlierRule{});
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_TRUE(groups[0].outliers.empty());
  ASSERT_EQ(groups[0].unstable.size(), 5u);
  for (const Outlier& o : groups[0].unstable) {
    EXPECT_LT(o.member, 5u);
    ASSERT_EQ(o.ceilings.size(), 1u);
    EXPECT_TRUE(o.ceilings[0].by_split);
    EXPECT_TRUE(o.ceilings[0].majority_split);
    EXPECT_FALSE(o.ceilings[0].by_z || o.ceilings[0].by_margin) << "the group median is the slow GPUs'";
    EXPECT_NEAR(o.ceilings[0].deficit, 0.2, 0.01);
    EXPECT_NEAR(o.ceilings[0].median, 4.36e12, 0.02e12);  // the fast four's median
  }
  const FleetHealth h = fleet_health(fleet);
  ASSERT_EQ(h.faults.size(), 5u);
  for (const FleetHealthFault& f : h.faults) {
    EXPECT_LT(f.member, 5u);
    ASSERT_EQ(f.failed.size(), 1u);
    EXPECT_EQ(f.failed[0].subject, "hbm.copy");
    EXPECT_EQ(f.failed[0].rule, "datasheet fraction");
  }

  // Sixty of a hundred just past the margin or further below: a majority either way, not judged by how many the
  // noise put past the margin (review 95: at 5.05% 43 were named against the forty, at 5.2% none).
  for (const double deficit : {0.0505, 0.052, 0.08}) {
    FleetGen many(33, 0.002);
    const auto g = analyze_fleet(many.fleet(100, 60, "hbm.copy", deficit, "q"), OutlierRule{});
    ASSERT_EQ(g.size(), 1u);
    std::size_t named = 0, majority = 0;
    for (const Outlier& o : g[0].outliers)
      for (const Deviation& d : o.ceilings) named += d.ceiling == "hbm.copy" ? 1 : 0;
    for (const Outlier& o : g[0].unstable)
      for (const Deviation& d : o.ceilings) majority += d.majority_split ? 1 : 0;
    EXPECT_EQ(named, 0u) << deficit;
    EXPECT_GT(majority, 0u) << deficit;
  }

  // Three of eight reading 8% high on a GEMM, within its datasheet fraction: nobody judged, exit 3 (not the five
  // named outliers, exit 1), and the rows say why.
  std::vector<FleetMember> node;
  for (int i = 0; i < 8; ++i) {
    Profile p = gen.gpu(i, 0);
    if (i < 3)
      for (Ceiling& c : p.ceilings)
        if (c.name == "gemm.bf16") c.value *= 1.08;
    node.push_back({"h" + std::to_string(i), p});
  }
  const auto g8 = analyze_fleet(node, OutlierRule{});
  ASSERT_EQ(g8.size(), 1u);
  EXPECT_TRUE(g8[0].outliers.empty());
  EXPECT_EQ(g8[0].unstable.size(), 5u);
  const std::string dir = write_fleet(node, "fleet_majority_split");
  const auto r = run_cli({"fleet", dir});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("split, majority"), std::string::npos) << r.out;
  const auto csv = run_cli({"fleet", dir, "--format", "csv"});
  EXPECT_NE(csv.out.find("its side of the split is the group's majority"), std::string::npos) << csv.out;
  const json j = parse_json_text(run_cli({"fleet", dir, "--format", "json"}).out, "fleet json");
  EXPECT_TRUE(j.at("groups")[0].at("unstable")[0].at("ceilings")[0].at("majority_split").get<bool>()) << j.dump();
}

// Half a fleet 8% slower in its bf16 GEMM (a BIOS setting on half the nodes): within every datasheet fraction, and
// the median sits between the halves, so neither median rule names anyone. The gap that splits the group does:
// the slow half, against the fast half's median, exit 1. A clean fleet has no such gap, and a gap with fewer than
// min_members on one side is the median rules' to judge.
TEST(Fleet, HalfAFleetSlowerAlikeIsNamedByTheGapThatSplitsIt) {
  FleetGen gen(37, 0.002);
  const std::string dir = ceilings::test::scratch_dir("fleet_split");
  std::vector<FleetMember> fleet;
  for (int i = 0; i < 20; ++i) {
    Profile p = gen.gpu(i, 0, i % 2 ? std::map<std::string, double>{{"gemm.bf16", 0.08}} : std::map<std::string, double>{});
    write_file_atomic(dir + "/n" + std::to_string(i) + ".profile.json", profile_to_json(p).dump());
    fleet.push_back({"n" + std::to_string(i), p});
  }
  OutlierRule margin_only;
  margin_only.use_z = false;
  std::vector<const Profile*> members;
  for (const FleetMember& m : fleet) members.push_back(&m.profile);
  EXPECT_TRUE(find_outliers(members, ceiling_statistics(members), OutlierRule{}).empty())
      << "the median rules alone see nothing";
  const auto groups = analyze_fleet(fleet, OutlierRule{});
  ASSERT_EQ(groups.size(), 1u);
  ASSERT_EQ(groups[0].outliers.size(), 10u);
  for (const Outlier& o : groups[0].outliers) {
    EXPECT_EQ(o.member % 2, 1u);
    ASSERT_EQ(o.ceilings.size(), 1u);
    EXPECT_EQ(o.ceilings[0].ceiling, "gemm.bf16");
    EXPECT_TRUE(o.ceilings[0].by_split);
    EXPECT_NEAR(o.ceilings[0].deficit, 0.08, 0.01);
  }
  EXPECT_TRUE(fleet_health(fleet).faults.empty()) << "within every datasheet fraction";
  const auto r = run_cli({"fleet", dir});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("10 outlier(s)"), std::string::npos) << r.out;
  // Each outlier's row names the split as its rule (the legend above the tables names every rule: review 50).
  std::size_t split_rows = 0;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);)
    if (line.find(" gemm.bf16 ") != std::string::npos && line.size() > 5 && line.compare(line.size() - 5, 5, "split") == 0)
      ++split_rows;
  EXPECT_EQ(split_rows, 10u) << r.out;
  const json j = parse_json_text(run_cli({"fleet", dir, "--format", "json"}).out, "fleet json");
  EXPECT_NE(j.dump().find("\"split\""), std::string::npos);

  // Three and three, 11.5% apart: the margin rule names the slow three against the median in the gap (6%); the
  // split's comparison, against the fast three's median, is the one shown.
  const auto g6 = analyze_fleet(gen.fleet(6, 3, "hbm.read", 0.115, "s"), OutlierRule{});
  ASSERT_EQ(g6[0].outliers.size(), 3u);
  for (const Outlier& o : g6[0].outliers) {
    ASSERT_EQ(o.ceilings.size(), 1u);
    EXPECT_TRUE(o.ceilings[0].by_margin && o.ceilings[0].by_split);
    EXPECT_NEAR(o.ceilings[0].deficit, 0.115, 0.01);
    EXPECT_NEAR(o.ceilings[0].median, 4.52e12, 0.03e12);
  }

  // Three GPUs of twenty-three that read 6.5% high (a cooler rack): a gap, but not two populations; the twenty
  // are not put on its "worse side" (each side needs a quarter of the group).
  std::vector<FleetMember> high;
  for (int i = 0; i < 23; ++i) {
    Profile p = gen.gpu(i, 0);
    if (i < 3)
      for (Ceiling& c : p.ceilings)
        if (c.name == "hbm.copy") c.value *= 1.065;
    high.push_back({"h" + std::to_string(i), p});
  }
  EXPECT_TRUE(analyze_fleet(high, OutlierRule{})[0].outliers.empty());

  // Two slow GPUs of twenty: too few for a population of their own (the margin rule names them, as before).
  const auto g2 = analyze_fleet(gen.fleet(20, 2, "gemm.bf16", 0.08, "t"), OutlierRule{});
  ASSERT_EQ(g2[0].outliers.size(), 2u);
  for (const Outlier& o : g2[0].outliers) EXPECT_FALSE(o.ceilings[0].by_split);
}

// Half of a large fleet slower alike: the noise of 256 and 256 GPUs closes every gap between neighbours, so the
// split is found by the cut that best separates them (the sides' medians 8% apart, far beyond their spreads).
// One population, even a wide one, is never split that way.
TEST(Fleet, HalfALargeFleetSlowerAlikeIsFoundWithoutAGap) {
  FleetGen gen(41, 0.01);
  const auto split = analyze_fleet(gen.fleet(512, 256, "gemm.bf16", 0.08, "b"), OutlierRule{});
  ASSERT_EQ(split.size(), 1u);
  std::size_t slow_named = 0, fast_named = 0;
  for (const Outlier& o : split[0].outliers)
    for (const Deviation& d : o.ceilings)
      if (d.ceiling == "gemm.bf16" && d.by_split) ++(o.member < 256 ? slow_named : fast_named);
  EXPECT_EQ(fast_named, 0u);
  EXPECT_GE(slow_named, 230u);  // those more than 5% below the fast half's median: about 98% of them at 1% noise
  // The slow half tighter than the healthy one (a fixed cap; healthy silicon varies more): the separating cut can
  // take in a few healthy GPUs it never names, which had tipped the split into "majority", nobody judged, in about
  // 7 fleets of 10 (review 92). The side the split names is what counts.
  for (unsigned seed = 51; seed < 56; ++seed) {
    FleetGen slow(seed, 0.005), healthy(seed + 100, 0.015);
    std::vector<FleetMember> fleet;
    for (int i = 0; i < 512; ++i)
      fleet.push_back({"m" + std::to_string(i), i < 256 ? slow.gpu(i, 0, {{"hbm.copy", 0.08}}) : healthy.gpu(i, 0)});
    const auto groups = analyze_fleet(fleet, OutlierRule{});
    ASSERT_EQ(groups.size(), 1u);
    std::size_t named = 0, majority = 0;
    for (const Outlier& o : groups[0].outliers)
      for (const Deviation& d : o.ceilings) named += d.ceiling == "hbm.copy" && o.member < 256 ? 1 : 0;
    for (const Outlier& o : groups[0].unstable)
      for (const Deviation& d : o.ceilings) majority += d.majority_split ? 1 : 0;
    EXPECT_EQ(majority, 0u) << "seed " << seed;
    EXPECT_GE(named, 230u) << "seed " << seed;
  }
  // Eight GPUs 2.2% apart one from the next: no gap past the margin, and too few for the separating cut (in
  // groups of 8 a normal population passes its test one time in five).
  std::vector<Profile> eight(8, fixture());
  for (std::size_t i = 0; i < eight.size(); ++i)
    for (Ceiling& c : eight[i].ceilings) c.value *= std::pow(1.022, static_cast<double>(i));
  std::vector<const Profile*> eight_ptrs;
  for (const Profile& p : eight) eight_ptrs.push_back(&p);
  OutlierRule no_z;
  no_z.use_z = false;
  std::vector<Outlier> none;
  add_population_splits(eight_ptrs, no_z, none);
  EXPECT_TRUE(none.empty());
  for (double sigma : {0.01, 0.03}) {
    FleetGen clean(43, sigma);
    const auto groups = analyze_fleet(clean.fleet(512, 0, "", 0, "c"), OutlierRule{});
    for (const Outlier& o : groups[0].outliers)
      for (const Deviation& d : o.ceilings) EXPECT_FALSE(d.by_split) << d.ceiling << " at sigma " << sigma;
  }
}

// Groups of one model that are not "configured unlike": one as large as the largest (which half would be the
// reference is the label's alphabet; the model set up two ways is named instead, both halves), and one that
// differs only in how its nvlink ceilings were measured (no finding).
TEST(Fleet, ATieOrAMeasuringScopeIsNotAConfigurationFinding) {
  FleetGen gen(37, 0.001);
  std::vector<FleetMember> tie;
  for (int i = 0; i < 8; ++i) {
    Profile p = gen.gpu(i, 0);
    if (i >= 4) p.device.driver = "590.10.01";
    tie.push_back({"t" + std::to_string(i), p});
  }
  const auto halves = analyze_fleet(tie, OutlierRule{});
  for (const FleetGroup& g : halves) EXPECT_FALSE(g.peer_group.has_value()) << "neither half is the odd one";
  // ... but the model is set up two ways, and that is named (a 5/3 split would be "unlike" already).
  ASSERT_EQ(halves.size(), 2u);
  ASSERT_TRUE(halves[1].split_with.has_value());
  EXPECT_EQ(*halves[1].split_with, 0u);
  EXPECT_FALSE(halves[0].split_with.has_value());
  EXPECT_EQ(halves[1].differences.size(), 1u);
  EXPECT_EQ(count_findings(halves).two_ways, 8u);
  EXPECT_EQ(count_findings(halves).unlike_peers, 0u);
  const std::string dir = write_fleet(tie, "fleet_two_ways");
  auto r = run_cli({"fleet", dir});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("8 GPU(s) of a model configured two ways in equal numbers"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("configured unlike group 1, as large, of the same GPU model: driver"), std::string::npos) << r.out;
  r = run_cli({"fleet", dir, "--format", "csv"});
  std::size_t rows = 0;
  for (std::size_t at = r.out.find(",two ways,"); at != std::string::npos; at = r.out.find(",two ways,", at + 1)) ++rows;
  EXPECT_EQ(rows, 8u) << r.out;
  const json two = parse_json_text(run_cli({"fleet", dir, "--format", "json"}).out, "fleet json");
  EXPECT_EQ(two.at("configured_two_ways"), 8);
  for (int gi : {0, 1}) {  // both halves say it, each naming the other
    ASSERT_EQ(two.at("groups")[gi].at("configured_two_ways").size(), 1u) << gi;
    EXPECT_EQ(two["groups"][gi]["configured_two_ways"][0].at("group"), 2 - gi);
  }
  // A GPU of one half unstable within it (10% slow at a cv of 30%) is listed as unstable, but counted once, under
  // the model configured two ways (it was counted under both).
  std::vector<FleetMember> noisy = tie;
  for (Ceiling& c : noisy[5].profile.ceilings)
    if (c.name == "gemm.bf16") {
      c.value *= 0.9;
      c.cv = 0.30;
    }
  const auto noisy_halves = analyze_fleet(noisy, OutlierRule{});
  ASSERT_EQ(noisy_halves.size(), 2u);
  std::size_t unstable_listed = 0;
  for (const FleetGroup& g : noisy_halves) unstable_listed += g.unstable.size();
  EXPECT_EQ(unstable_listed, 1u);
  EXPECT_EQ(count_findings(noisy_halves).two_ways, 8u);
  EXPECT_EQ(count_findings(noisy_halves).unstable, 0u);
  std::vector<FleetMember> scope;
  for (int i = 0; i < 12; ++i) scope.push_back({"s" + std::to_string(i), with_nvlink_ceiling(gen.gpu(i, 0), i < 8)});
  const auto groups = analyze_fleet(scope, OutlierRule{});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_FALSE(groups[1].peer_group.has_value()) << "all pairs vs own pairs: how it was measured";
  EXPECT_EQ(count_findings(groups).unlike_peers, 0u);
  EXPECT_EQ(count_findings(groups).two_ways, 0u);
}

// One GPU's bad links make every node-mate's slowest pair slow: the datasheet check judges each GPU by its pair
// median, as the fleet compares it, so only that GPU fails.
TEST(Fleet, TheDatasheetCheckJudgesPeerCeilingsByTheirPairMedian) {
  FleetGen gen(41, 0.001);
  std::vector<FleetMember> node;
  for (int i = 0; i < 8; ++i) {
    Profile p = with_nvlink_ceiling(gen.gpu(1, i), true);
    for (Ceiling& c : p.ceilings)
      if (c.name == "nvlink.p2p_uni") {
        c.value = 2.0e11;  // every GPU's slowest pair is its pair with GPU 3
        c.detail["p2p_median"] = i == 3 ? 2.0e11 : 3.9e11;
      }
    node.push_back({"g" + std::to_string(i), p});
  }
  const FleetHealth h = fleet_health(node);
  ASSERT_EQ(h.faults.size(), 1u);
  EXPECT_EQ(h.faults[0].member, 3u);
  EXPECT_EQ(h.faults[0].failed.at(0).subject, "nvlink.p2p_uni");
  // A baseline of them keeps the members' pair medians (GPU 3, the fault, left out), so that qualify can say of a
  // GPU whose slowest pair is slow but whose median pair is not that the other GPU may be the slow one (review 46).
  const auto groups = analyze_fleet(node, OutlierRule{});
  ASSERT_EQ(groups.size(), 1u);
  const Profile b = fleet_baseline(groups[0], node, 3, {{3, "a health fault"}});
  ASSERT_NE(b.find("nvlink.p2p_uni"), nullptr);
  EXPECT_NEAR(b.find("nvlink.p2p_uni")->detail_number("p2p_median").value_or(0), 3.9e11, 1e9);
  Profile slow = node[0].profile;
  for (Ceiling& c : slow.ceilings)
    if (c.name == "nvlink.p2p_uni") c.value = 1.0e11;
  const QualifyResult q = qualify(slow, &b, default_rules());
  const auto row = std::find_if(q.checks.begin(), q.checks.end(), [](const Check& k) {
    return k.subject == "nvlink.p2p_uni" && k.rule == "baseline";
  });
  ASSERT_NE(row, q.checks.end()) << "no baseline row for the peer ceiling";  // review 50: the loop could see none
  EXPECT_EQ(row->status, CheckStatus::kFail) << row->reason;
  EXPECT_NE(row->reason.find("the slowest pair's other GPU may be the slow one"), std::string::npos) << row->reason;
  // The baseline keeps the group's NVLink scope: a member is measured alike it ("NVLink pairs ?" had been said).
  EXPECT_EQ(b.find("nvlink.p2p_uni")->detail_number("scope_device").value_or(-1), 1);
  for (const Check& k : qualify(node[0].profile, &b, default_rules()).checks)
    EXPECT_NE(k.rule, "measured alike") << k.reason;
}

// The own-spread gate counts the comparisons, as the z-score does: each GPU's ~50 ceilings are ~50 chances for
// noise. With a fixed 2 standard errors, a clean fleet of 8 whose noisy ceiling (a cv of 7.3% over 10 samples, as
// the H200's pcie.h2d_pageable: a standard error of 2.9%) read 7.1% low on one GPU by noise alone named that GPU,
// exit 1 (8 of 30 generated clean fleets did). Now it is unstable, measure again; 12% low is still judged.
TEST(Fleet, TheOwnSpreadGateCountsTheComparisons) {
  EXPECT_DOUBLE_EQ(own_spread_for(OutlierRule{}, 0), 2.0);
  EXPECT_DOUBLE_EQ(own_spread_for(OutlierRule{}, 1), 2.0);  // z at 5% is 1.64: the least multiple stands
  EXPECT_NEAR(own_spread_for(OutlierRule{}, 384), 3.6518, 1e-4);
  EXPECT_NEAR(own_spread_for(OutlierRule{}, 24000), 4.6029, 1e-4);
  OutlierRule off;
  off.own_spread = 0;
  EXPECT_EQ(own_spread_for(off, 384), 0.0);
  EXPECT_NEAR(normal_upper_quantile(0.025), 1.959964, 1e-6);
  EXPECT_NEAR(normal_upper_quantile(0.975), -1.959964, 1e-6);
  EXPECT_TRUE(std::isnan(normal_upper_quantile(0)));

  FleetGen gen(41, 0.001);
  for (const double low : {0.071, 0.12}) {
    std::vector<FleetMember> fleet;
    for (int i = 0; i < 8; ++i) {
      Profile p = gen.gpu(i, 0, i == 5 ? std::map<std::string, double>{{"hbm.read", low}} : std::map<std::string, double>{});
      for (Ceiling& c : p.ceilings)
        if (c.name == "hbm.read") {
          c.cv = 0.073;
          c.samples = 10;
          c.detail.erase("robust_cv");
        }
      fleet.push_back({"n" + std::to_string(i), p});
    }
    const auto groups = analyze_fleet(fleet, OutlierRule{});
    ASSERT_EQ(groups.size(), 1u);
    EXPECT_GT(groups[0].own_spread, 3.0) << groups[0].own_spread;
    const bool judged = low > 0.1;
    ASSERT_EQ(groups[0].outliers.size(), judged ? 1u : 0u) << "low " << low;
    ASSERT_EQ(groups[0].unstable.size(), judged ? 0u : 1u) << "low " << low;
    const Outlier& o = judged ? groups[0].outliers[0] : groups[0].unstable[0];
    EXPECT_EQ(o.member, 5u);
    ASSERT_EQ(o.ceilings.size(), 1u);
    EXPECT_EQ(o.ceilings[0].ceiling, "hbm.read");
    EXPECT_DOUBLE_EQ(o.ceilings[0].own_spread, groups[0].own_spread);
    EXPECT_NEAR(o.ceilings[0].own_noise, groups[0].own_spread * 1.2533 * 0.073 / std::sqrt(10.0), 1e-9);
  }
}

// A GPU whose own measurement of latency.launch spread 30% over its 50 samples (a standard error of its median
// of 5.3%) reading 6% worse than its peers is within its own noise (2 standard errors), not a finding; with
// the H200's real 10% spread (1.8%), or 0.5%, the same 6% is.
// ... and is not passed either: unstable, not judged (a GPU 12% slow with a cv of 30% exited 0).
TEST(Fleet, ADeficitWithinTheGpusOwnErrorIsNotAFinding) {
  FleetGen gen(29, 0.001);
  for (const double cv : {0.30, 0.10, 0.005}) {
    std::vector<FleetMember> fleet;
    for (int i = 0; i < 8; ++i) {
      Profile p = gen.gpu(i, 0, i == 7 ? std::map<std::string, double>{{"latency.launch", 0.06}}
                                       : std::map<std::string, double>{});
      for (Ceiling& c : p.ceilings)
        if (c.name == "latency.launch") c.cv = cv;
      fleet.push_back({"n" + std::to_string(i), p});
    }
    const auto groups = analyze_fleet(fleet, OutlierRule{});
    ASSERT_EQ(groups.size(), 1u);
    EXPECT_EQ(groups[0].outliers.size(), cv > 0.2 ? 0u : 1u) << "cv " << cv;
    ASSERT_EQ(groups[0].unstable.size(), cv > 0.2 ? 1u : 0u) << "cv " << cv;
    EXPECT_EQ(count_findings(groups).unstable, cv > 0.2 ? 1u : 0u);
    if (cv > 0.2) {
      EXPECT_EQ(groups[0].unstable[0].member, 7u);
      EXPECT_EQ(groups[0].unstable[0].ceilings.at(0).ceiling, "latency.launch");
      EXPECT_GT(groups[0].unstable[0].ceilings[0].own_noise, groups[0].unstable[0].ceilings[0].deficit);
    }
  }
  // End to end: the review's case, gemm.bf16 10% below seven peers with a cv of 0.30: exit 3, named.
  const std::string dir = ceilings::test::scratch_dir("fleet_unstable");
  for (int i = 0; i < 8; ++i) {
    Profile p = gen.gpu(i, 0, i == 2 ? std::map<std::string, double>{{"gemm.bf16", 0.10}}
                                     : std::map<std::string, double>{});
    for (Ceiling& c : p.ceilings)
      if (i == 2 && c.name == "gemm.bf16") c.cv = 0.30;
    std::ofstream(dir + "/n" + std::to_string(i) + ".profile.json") << profile_to_json(p).dump();
  }
  const auto r = run_cli({"fleet", dir});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("1 GPU(s) unstable (not judged)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unstable, not judged"), std::string::npos) << r.out;
  // The table names the spread that covers the deficit, as the README says of an unstable GPU.
  const std::size_t table = r.out.find("unstable, not judged");
  EXPECT_NE(r.out.find("own spread", table), std::string::npos) << r.out;
  const auto csv = run_cli({"fleet", dir, "--format", "csv"});
  EXPECT_EQ(csv.exit_code, 3);
  EXPECT_NE(csv.out.find(",unstable,node2,"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("within its own measurement's spread"), std::string::npos) << csv.out;
  const json doc = parse_json_text(run_cli({"fleet", dir, "--format", "json"}).out, "fleet json");
  EXPECT_EQ(doc.at("unstable"), 1);
  EXPECT_EQ(doc.at("groups").at(0).at("unstable").at(0).at("ceilings").at(0).at("ceiling"), "gemm.bf16");
}

// The population split held its worse side to the same own-spread gate and dropped a GPU within it without a word:
// half of eight GPUs 8% slower on GEMM, two of them with a cv of 0.30 (16.8% of own noise at 20 samples), gave two
// outliers and nothing said of the other two. They are unstable, not judged, against the better side's median.
TEST(Fleet, AGpuOnTheWorseSideOfASplitWithinItsOwnSpreadIsUnstable) {
  FleetGen gen(37, 0.001);
  auto half_slow = [&](const std::set<int>& wide, const std::string& prefix) {
    std::vector<FleetMember> fleet;
    for (int i = 0; i < 8; ++i) {
      Profile p = gen.gpu(i, 0, i % 2 ? std::map<std::string, double>{{"gemm.bf16", 0.08}} : std::map<std::string, double>{});
      for (Ceiling& c : p.ceilings)
        if (wide.count(i) && c.name == "gemm.bf16") c.cv = 0.30;
      fleet.push_back({prefix + std::to_string(i), p});
    }
    return fleet;
  };
  const auto groups = analyze_fleet(half_slow({1, 3}, "m"), OutlierRule{});
  ASSERT_EQ(groups.size(), 1u);
  ASSERT_EQ(groups[0].outliers.size(), 2u);
  for (const Outlier& o : groups[0].outliers) EXPECT_TRUE(o.member == 5u || o.member == 7u) << o.member;
  ASSERT_EQ(groups[0].unstable.size(), 2u);
  for (const Outlier& o : groups[0].unstable) {
    EXPECT_TRUE(o.member == 1u || o.member == 3u) << o.member;
    ASSERT_EQ(o.ceilings.size(), 1u);
    const Deviation& d = o.ceilings[0];
    EXPECT_EQ(d.ceiling, "gemm.bf16");
    EXPECT_TRUE(d.by_split);
    EXPECT_FALSE(d.by_z || d.by_margin) << "the group median sits in the gap";
    EXPECT_NEAR(d.deficit, 0.08, 0.01);
    EXPECT_NEAR(d.median, 8.0e14, 0.02e14);  // the fast half's median
    EXPECT_GT(d.own_spread, 2.0);             // raised for the group's comparisons
    EXPECT_NEAR(d.own_noise, d.own_spread * 1.2533 * 0.30 / std::sqrt(20.0), 1e-9);
  }
  EXPECT_EQ(count_findings(groups).outliers, 2u);
  EXPECT_EQ(count_findings(groups).unstable, 2u);

  // Listed once. Three and three, 11.5% apart on hbm.read: the margin names the slow three against the median in
  // the gap (6.1%), within a cv of 0.12's own noise (8.1% at 30 samples: 2.94 standard errors for the group's
  // comparisons), but the split's 11.5% is beyond it: an
  // outlier, no longer unstable as well. With a cv of 0.30 (20.1%) neither is: unstable once, against the better
  // side's median, as the split's outliers are shown.
  for (const double cv : {0.12, 0.30}) {
    auto six = gen.fleet(6, 3, "hbm.read", 0.115, "s");
    for (int i = 0; i < 3; ++i)
      for (Ceiling& c : six[i].profile.ceilings)
        if (c.name == "hbm.read") c.cv = cv;
    const auto g6 = analyze_fleet(six, OutlierRule{});
    ASSERT_EQ(g6.size(), 1u);
    EXPECT_EQ(g6[0].outliers.size(), cv < 0.2 ? 3u : 0u) << "cv " << cv;
    ASSERT_EQ(g6[0].unstable.size(), cv < 0.2 ? 0u : 3u) << "cv " << cv;
    for (const Outlier& o : cv < 0.2 ? g6[0].outliers : g6[0].unstable) {
      EXPECT_LT(o.member, 3u);
      ASSERT_EQ(o.ceilings.size(), 1u) << "cv " << cv;
      EXPECT_TRUE(o.ceilings[0].by_split) << "cv " << cv;
      EXPECT_NEAR(o.ceilings[0].deficit, 0.115, 0.01) << "cv " << cv;
      EXPECT_NEAR(o.ceilings[0].median, 4.52e12, 0.03e12) << "cv " << cv;
    }
  }

  // End to end: the whole slow half that wide: nothing fails, and it is not a pass (exit 0 before).
  const std::string dir = write_fleet(half_slow({1, 3, 5, 7}, "w"), "fleet_split_unstable");
  const auto r = run_cli({"fleet", dir});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("0 outlier(s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("4 GPU(s) unstable (not judged)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unstable, not judged"), std::string::npos) << r.out;
  const auto csv = run_cli({"fleet", dir, "--format", "csv"});
  EXPECT_EQ(csv.exit_code, 3);
  std::size_t rows = 0;
  for (std::size_t at = csv.out.find(",unstable,"); at != std::string::npos; at = csv.out.find(",unstable,", at + 1))
    ++rows;
  EXPECT_EQ(rows, 4u) << csv.out;
  EXPECT_NE(csv.out.find(",split,,,\"not judged: "), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("below the better population's median, within its own measurement's spread"),
            std::string::npos)
      << csv.out;
  const json doc = parse_json_text(run_cli({"fleet", dir, "--format", "json"}).out, "fleet json");
  EXPECT_EQ(doc.at("unstable"), 4);
  EXPECT_EQ(doc.at("outliers"), 0);
  ASSERT_EQ(doc.at("groups").at(0).at("unstable").size(), 4u);
  const json& first = doc["groups"][0]["unstable"][0].at("ceilings").at(0);
  EXPECT_EQ(first.at("ceiling"), "gemm.bf16");
  EXPECT_EQ(first.at("rules"), json::array({"split"}));
  EXPECT_EQ(first.at("reference"), "the better population's median");
}

// A small group set against its model's largest group held its GPUs to the same own-spread gate and passed those
// within it in silence: two servers of another CPU model, one of them 10% slower on GEMM with a cv of 0.30
// (16.8% of own noise), exited 0. It is unstable against the peers, not judged (exit 3); a host-bound ceiling as
// wide is the host's, not listed; and a GPU already listed within its own group is not listed again.
TEST(Fleet, AGpuSetAgainstItsPeersWithinItsOwnSpreadIsUnstable) {
  FleetGen gen(29, 0.001);
  const std::string amd = "AMD EPYC 9654 96-Core Processor";
  std::vector<FleetMember> fleet;
  for (int i = 0; i < 8; ++i) fleet.push_back({"intel" + std::to_string(i), gen.gpu(i, 0)});
  Profile wide = gen.gpu(20, 0, {{"gemm.bf16", 0.10}});
  for (Ceiling& c : wide.ceilings)
    if (c.name == "gemm.bf16") c.cv = 0.30;
  wide.cpu = amd;
  Profile host_wide = gen.gpu(21, 0, {{"latency.launch", 0.08}});
  for (Ceiling& c : host_wide.ceilings)
    if (c.name == "latency.launch") c.cv = 0.5;  // 17.7% of own noise at 50 samples: wide, and the host's
  host_wide.cpu = amd;
  fleet.push_back({"amd0", wide});
  fleet.push_back({"amd1", host_wide});
  const auto groups = analyze_fleet(fleet, OutlierRule{});
  ASSERT_EQ(groups.size(), 2u);
  ASSERT_TRUE(groups[1].peer_group.has_value());
  EXPECT_TRUE(groups[1].too_small && groups[1].host_only);
  EXPECT_TRUE(groups[1].versus_peers.empty());
  ASSERT_EQ(groups[1].unstable_versus_peers.size(), 1u);
  EXPECT_EQ(groups[1].members.at(groups[1].unstable_versus_peers[0].member), 8u);  // amd0
  ASSERT_EQ(groups[1].unstable_versus_peers[0].ceilings.size(), 1u) << "latency.launch is the host's";
  const Deviation& d = groups[1].unstable_versus_peers[0].ceilings[0];
  EXPECT_EQ(d.ceiling, "gemm.bf16");
  EXPECT_NEAR(d.deficit, 0.10, 0.01);
  EXPECT_NEAR(d.median, 8.0e14, 0.02e14);  // group 1's
  EXPECT_GT(d.own_spread, 2.0);
  EXPECT_NEAR(d.own_noise, d.own_spread * 1.2533 * 0.30 / std::sqrt(20.0), 1e-9);
  FleetFindings found = count_findings(groups);
  EXPECT_EQ(found.unstable, 1u);
  EXPECT_EQ(found.unlike_peers, 0u);
  EXPECT_EQ(found.not_judged, 0u);

  const std::string dir = write_fleet(fleet, "fleet_peers_unstable");
  const auto r = run_cli({"fleet", dir});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("1 GPU(s) unstable (not judged)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unstable against group 1, not judged"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("own spread", r.out.find("unstable against group 1, not judged")), std::string::npos) << r.out;
  const auto csv = run_cli({"fleet", dir, "--format", "csv"});
  EXPECT_EQ(csv.exit_code, 3);
  EXPECT_NE(csv.out.find("2,unstable,node20,"), std::string::npos) << csv.out;
  EXPECT_EQ(csv.out.find(",unstable,node21,"), std::string::npos) << "latency.launch is the host's: " << csv.out;
  EXPECT_NE(csv.out.find("below group 1's median, within its own measurement's spread"), std::string::npos)
      << csv.out;
  const json doc = parse_json_text(run_cli({"fleet", dir, "--format", "json"}).out, "fleet json");
  EXPECT_EQ(doc.at("unstable"), 1);
  const json& listed = doc.at("groups").at(1).at("not_compared").at("unstable");
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].at("host"), "node20");
  EXPECT_EQ(listed[0].at("ceilings").at(0).at("ceiling"), "gemm.bf16");
  EXPECT_EQ(listed[0]["ceilings"][0].at("reference"), "group 1's median");  // the peers', not its own group's

  // Configured unlike its peers (another driver): that fails as before (exit 1), and the GPU within its own
  // spread on GEMM is listed as unstable beside it, but counted once, as configured unlike its peers (it was
  // counted under both before).
  std::vector<FleetMember> driver(fleet.begin(), fleet.begin() + 8);
  Profile odd = wide;
  odd.cpu = driver[0].profile.cpu;
  odd.device.driver = "590.10.01";
  driver.push_back({"odd", odd});
  const auto unlike = analyze_fleet(driver, OutlierRule{});
  ASSERT_EQ(unlike.size(), 2u);
  found = count_findings(unlike);
  EXPECT_EQ(found.unlike_peers, 1u);
  EXPECT_EQ(found.unstable, 0u);
  ASSERT_EQ(unlike[1].unstable_versus_peers.size(), 1u);
  EXPECT_EQ(unlike[1].unstable_versus_peers[0].ceilings.at(0).ceiling, "gemm.bf16");

  // Three servers of another CPU model, one of them the wide one: unstable within its own group already (10%
  // below its two peers there), and not listed a second time against group 1.
  std::vector<FleetMember> three(fleet.begin(), fleet.begin() + 9);
  Profile third = gen.gpu(22, 0);
  third.cpu = amd;
  three.push_back({"amd1", third});
  Profile fourth = gen.gpu(23, 0);
  fourth.cpu = amd;
  three.push_back({"amd2", fourth});
  const auto own = analyze_fleet(three, OutlierRule{});
  ASSERT_EQ(own.size(), 2u);
  ASSERT_EQ(own[1].unstable.size(), 1u);
  EXPECT_EQ(own[1].unstable[0].ceilings.at(0).ceiling, "gemm.bf16");
  EXPECT_TRUE(own[1].unstable_versus_peers.empty());
  EXPECT_EQ(count_findings(own).unstable, 1u);
  const std::string dir3 = write_fleet(three, "fleet_peers_unstable_once");
  const auto csv3 = run_cli({"fleet", dir3, "--format", "csv"});
  EXPECT_EQ(csv3.exit_code, 3) << csv3.out << csv3.err;
  std::size_t rows = 0;
  for (std::size_t at = csv3.out.find(",unstable,"); at != std::string::npos; at = csv3.out.find(",unstable,", at + 1))
    ++rows;
  EXPECT_EQ(rows, 1u) << csv3.out;
}

// Three GPUs capped at 500 W among ten at 700 W, 30% slower on GEMM: a group of their own, large enough to
// compare within itself, and still configured unlike their model's fleet (it exited 0 before).
TEST(Fleet, AGroupLargeEnoughIsStillSetAgainstItsModel) {
  FleetGen gen(23, 0.001);
  const std::string dir = ceilings::test::scratch_dir("fleet_capped_group");
  for (int i = 0; i < 13; ++i) {
    Profile p = gen.gpu(i, 0, i >= 10 ? std::map<std::string, double>{{"gemm.bf16", 0.30}} : std::map<std::string, double>{});
    if (i >= 10) p.device.power_limit_w = 500;
    write_file_atomic(dir + "/n" + std::to_string(i) + ".profile.json", profile_to_json(p).dump());
  }
  const auto r = run_cli({"fleet", dir});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("3 GPU(s) configured unlike their peers"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("configured unlike group 1, the largest of the same GPU model"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gemm.bf16 30."), std::string::npos) << r.out;
  const json j = parse_json_text(run_cli({"fleet", dir, "--format", "json"}).out, "fleet json");
  ASSERT_EQ(j.at("groups").size(), 2u);
  EXPECT_TRUE(j["groups"][1].at("compared").get<bool>());
  EXPECT_EQ(j["groups"][1].at("unlike_peers").at("peer_group"), 1);
  EXPECT_EQ(j["groups"][1]["unlike_peers"].at("versus_peers").size(), 3u);
  // Each deviation is against group 1's median (the peers'), as the text says, not the group's own.
  for (const json& o : j["groups"][1]["unlike_peers"]["versus_peers"])
    for (const json& c : o.at("ceilings")) {
      EXPECT_EQ(c.at("reference"), "group 1's median") << c.dump();
      for (const json& st : j["groups"][0].at("ceilings"))
        if (st.at("ceiling") == c.at("ceiling") && st.at("unit") == c.at("unit"))
          EXPECT_DOUBLE_EQ(c.at("median").get<double>(), st.at("median").get<double>()) << c.dump();
    }
}

// Three GPUs capped at 500 W, 30% slower on GEMM than their model's ten, one of them 10% below the other two with a
// wide spread (cv 30%: own noise 16.8%): within its spread of its own group's median, far beyond it of its peers'.
// It is judged against the peers and not listed as unstable in its group as well (it was listed twice before).
TEST(Fleet, AGpuJudgedAgainstItsPeersIsNotAlsoUnstableInItsGroup) {
  FleetGen gen(23, 0.001);
  std::vector<FleetMember> fleet;
  for (int i = 0; i < 13; ++i) {
    Profile p = gen.gpu(i, 0, i >= 10 ? std::map<std::string, double>{{"gemm.bf16", i == 12 ? 0.37 : 0.30}}
                                      : std::map<std::string, double>{});
    if (i >= 10) p.device.power_limit_w = 500;
    if (i == 12)
      for (Ceiling& c : p.ceilings)
        if (c.name == "gemm.bf16") c.cv = 0.30;
    fleet.push_back({"n" + std::to_string(i), p});
  }
  const auto groups = analyze_fleet(fleet, OutlierRule{});
  ASSERT_EQ(groups.size(), 2u);
  const FleetGroup& capped = groups[1];
  ASSERT_TRUE(capped.peer_group.has_value());
  const auto member_of = [&](int node) {
    return static_cast<std::size_t>(std::find(capped.members.begin(), capped.members.end(), node) -
                                    capped.members.begin());
  };
  const Deviation* judged = nullptr;
  for (const Outlier& o : capped.versus_peers)
    if (o.member == member_of(12))
      for (const Deviation& d : o.ceilings)
        if (d.ceiling == "gemm.bf16") judged = &d;
  ASSERT_NE(judged, nullptr) << "n12 is 37% below its peers, beyond its own noise";
  EXPECT_GT(judged->own_spread, 2.0);
  EXPECT_NEAR(judged->own_noise, judged->own_spread * 1.2533 * 0.30 / std::sqrt(20.0), 1e-9);
  EXPECT_GT(judged->deficit, judged->own_noise);
  for (const Outlier& o : capped.unstable)
    for (const Deviation& d : o.ceilings)
      EXPECT_FALSE(o.member == member_of(12) && d.ceiling == "gemm.bf16") << "listed twice: judged and unstable";
  EXPECT_TRUE(capped.unstable_versus_peers.empty());
  const FleetFindings found = count_findings(groups);
  EXPECT_EQ(found.unlike_peers, 3u);
  EXPECT_EQ(found.unstable, 0u);

  // The CLI says so: exit 1 (configured unlike its peers), no unstable row, and the JSON's deviation carries the
  // own noise it was judged beyond.
  const std::string dir = write_fleet(fleet, "fleet_peers_judged_once");
  const auto csv = run_cli({"fleet", dir, "--format", "csv"});
  EXPECT_EQ(csv.exit_code, 1) << csv.out << csv.err;
  EXPECT_EQ(csv.out.find(",unstable,"), std::string::npos) << csv.out;
  const json j = parse_json_text(run_cli({"fleet", dir, "--format", "json"}).out, "fleet json");
  EXPECT_EQ(j.at("unstable"), 0);
  EXPECT_EQ(j.at("rule").at("own_spread_standard_errors"), 2.0);  // the least multiple; each deviation's is its own
  EXPECT_TRUE(j.at("groups").at(1).at("unstable").empty()) << j["groups"][1].dump();
  bool seen = false;
  for (const json& o : j["groups"][1].at("unlike_peers").at("versus_peers"))
    for (const json& c : o.at("ceilings"))
      if (o.at("host") == "node12" && c.at("ceiling") == "gemm.bf16") {
        seen = true;
        EXPECT_NEAR(c.at("own_noise").get<double>(), judged->own_spread * 1.2533 * 0.30 / std::sqrt(20.0), 1e-9)
            << c.dump();
        EXPECT_DOUBLE_EQ(c.at("own_spread_standard_errors").get<double>(), judged->own_spread) << c.dump();
      }
  EXPECT_TRUE(seen) << j["groups"][1].dump();
}

// MIG instances: each is its own GPU (its own UUID, the board's beside it), so two instances of one board are two
// members, not an older and a newer run; instances of one size are a model of their own, never set against whole
// GPUs or another size. A whole GPU that shows fewer SMs than its peers is configured unlike them.
TEST(Fleet, MigInstancesAreTheirOwnModelAndFewerSmsAreADifference) {
  FleetGen gen(29, 0.001);
  std::vector<FleetMember> fleet;
  for (int i = 0; i < 12; ++i) fleet.push_back({"whole" + std::to_string(i), gen.gpu(i, 0)});
  auto instance = [&](int node, int slot, int sms, double share, std::uint64_t memory) {
    Profile p = gen.gpu(node, 0);
    p.device.memory_bytes = memory;
    p.device.board_uuid = p.device.uuid;
    char uuid[64];
    std::snprintf(uuid, sizeof uuid, "MIG-%08d-0000-0000-0000-%012d", node, slot);
    p.device.uuid = uuid;
    p.device.mig = true;
    p.device.sm_count = sms;
    for (Ceiling& c : p.ceilings)
      if (c.unit != "s") c.value *= share;
    return p;
  };
  for (int node = 20; node < 22; ++node)
    for (int slot = 0; slot < 4; ++slot)
      fleet.push_back({"1g" + std::to_string(node) + std::to_string(slot), instance(node, slot, 16, 1.0 / 7, 17716740096)});
  for (int node = 20; node < 22; ++node) fleet.push_back({"3g" + std::to_string(node), instance(node, 9, 60, 3.0 / 7, 70866960384)});
  // 1g.35gb: the 1g's 16 SMs with twice its memory, another instance profile (not a 1g.18gb set up otherwise).
  for (int slot = 5; slot < 8; ++slot)
    fleet.push_back({"1g35" + std::to_string(slot), instance(23, slot, 16, 1.0 / 7, 35433480192)});
  Profile fewer = gen.gpu(30, 0);
  fewer.device.sm_count = 114;
  fleet.push_back({"fewer", fewer});

  // Two instances of one board are two GPUs: nothing is set aside as an older run.
  const std::string dir = write_fleet(fleet, "fleet_mig");
  const FleetInput in = load_fleet({dir});
  EXPECT_EQ(in.members.size(), fleet.size());
  EXPECT_TRUE(in.superseded.empty());

  const auto groups = analyze_fleet(fleet, OutlierRule{});
  ASSERT_EQ(groups.size(), 5u);
  EXPECT_EQ(groups[0].members.size(), 12u);
  EXPECT_FALSE(groups[0].fingerprint.mig);
  EXPECT_EQ(groups[1].members.size(), 8u);
  EXPECT_TRUE(groups[1].fingerprint.mig);
  EXPECT_EQ(groups[1].fingerprint.sm_count, 16);
  EXPECT_NE(groups[1].fingerprint.label().find("MIG instance of 16 SMs"), std::string::npos) << groups[1].fingerprint.label();
  EXPECT_FALSE(groups[1].peer_group.has_value()) << "1/7 of a GPU is not a whole GPU's deficit";
  EXPECT_TRUE(groups[1].outliers.empty());
  EXPECT_EQ(groups[2].members.size(), 3u);
  EXPECT_EQ(groups[2].fingerprint.model(), "NVIDIA H200 MIG instances of 16 SMs and 35.4 GB");
  EXPECT_FALSE(groups[2].peer_group.has_value()) << "a 1g.35gb is not a 1g.18gb configured otherwise";
  EXPECT_EQ(groups[3].members.size(), 2u);
  EXPECT_EQ(groups[3].fingerprint.model(), "NVIDIA H200 MIG instances of 60 SMs and 70.9 GB");
  EXPECT_FALSE(groups[3].peer_group.has_value()) << "nor is a 3g instance a 1g one's";
  EXPECT_EQ(groups[4].members.size(), 1u);
  ASSERT_TRUE(groups[4].peer_group.has_value()) << "a whole GPU with fewer SMs is set against its model";
  EXPECT_EQ(*groups[4].peer_group, 0u);
  EXPECT_EQ(groups[4].differences, std::vector<std::string>{"SMs 114 (peers: 132)"});
  EXPECT_EQ(count_findings(groups).unlike_peers, 1u);
  // A baseline of instances is no one board's.
  const Profile baseline = fleet_baseline(groups[1], fleet);
  EXPECT_TRUE(baseline.device.board_uuid.empty());
  EXPECT_TRUE(baseline.device.is_mig());
}

// The host's CPU model is part of the fingerprint: pageable copies and launch latency go with the server,
// so GPUs in another server model are not one group's peers. Against the largest group they are judged on the
// GPU's own ceilings: slower pinned copies are a finding, a slower launch path (the host's) is not, and servers
// of another model that are as fast are no finding at all, however few.
TEST(Fleet, AnotherHostCpuIsAnotherGroup) {
  FleetGen gen(29, 0.001);
  std::vector<FleetMember> fleet;
  for (int i = 0; i < 8; ++i) fleet.push_back({"intel" + std::to_string(i), gen.gpu(i, 0)});
  for (int i = 0; i < 3; ++i) {
    Profile p = gen.gpu(20 + i, 0, {{"pcie.h2d", 0.15}, {"latency.launch", 0.25}});
    p.cpu = "AMD EPYC 9654 96-Core Processor";
    fleet.push_back({"amd" + std::to_string(i), p});
  }
  const auto groups = analyze_fleet(fleet, OutlierRule{});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].members.size(), 8u);
  EXPECT_EQ(groups[0].fingerprint.host_cpu, "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_NE(groups[1].fingerprint.label().find(", host AMD EPYC 9654"), std::string::npos)
      << groups[1].fingerprint.label();
  EXPECT_EQ(groups[1].fingerprint.to_json().at("host_cpu"), "AMD EPYC 9654 96-Core Processor");
  for (const FleetGroup& g : groups) EXPECT_TRUE(g.outliers.empty()) << "each group is uniform within itself";
  ASSERT_TRUE(groups[1].peer_group.has_value());
  EXPECT_EQ(groups[1].differences, std::vector<std::string>{"host CPU AMD EPYC 9654 96-Core Processor (peers: "
                                                            "Intel(R) Xeon(R) Platinum 8480+)"});
  EXPECT_TRUE(groups[1].host_only);
  ASSERT_EQ(groups[1].versus_peers.size(), 3u);
  for (const Outlier& o : groups[1].versus_peers) {
    std::set<std::string> named;
    for (const Deviation& d : o.ceilings) named.insert(d.ceiling);
    EXPECT_EQ(named, (std::set<std::string>{"pcie.h2d"})) << "latency.launch is the host's";
  }
  EXPECT_EQ(count_findings(groups).below_peers, 3u);
  EXPECT_EQ(count_findings(groups).unlike_peers, 0u);
  // A baseline keeps the group's CPU, so that it describes the servers its medians came from.
  EXPECT_EQ(fleet_baseline(groups[1], fleet).cpu, "AMD EPYC 9654 96-Core Processor");

  // Two servers of another model, slower only on the host's side: judged (not "not judged"), and no finding.
  fleet.resize(8);
  for (int i = 0; i < 2; ++i) {
    Profile p = gen.gpu(30 + i, 0, {{"latency.launch", 0.25}});
    p.cpu = "AMD EPYC 9654 96-Core Processor";
    fleet.push_back({"amd" + std::to_string(i), p});
  }
  const auto two = analyze_fleet(fleet, OutlierRule{});
  ASSERT_EQ(two.size(), 2u);
  EXPECT_TRUE(two[1].too_small);
  ASSERT_TRUE(two[1].peer_group.has_value());
  EXPECT_TRUE(two[1].host_only);
  EXPECT_TRUE(two[1].versus_peers.empty());
  const FleetFindings found = count_findings(two);
  EXPECT_EQ(found.unlike_peers, 0u);
  EXPECT_EQ(found.not_judged, 0u);
  const std::string dir = write_fleet(fleet, "fleet_host_cpu");
  const auto r = run_cli({"fleet", dir});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("in other servers than group 1: host CPU AMD EPYC 9654"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0 GPU(s) configured unlike their peers"), std::string::npos) << r.out;

  // Another server model measured with another NVLink scope as well: still servers of another model, not a
  // configuration finding (each difference alone was none, together they were).
  std::vector<FleetMember> scoped;
  for (int i = 0; i < 8; ++i) scoped.push_back({"own" + std::to_string(i), with_nvlink_ceiling(gen.gpu(40 + i, 0), true)});
  for (int i = 0; i < 3; ++i) {
    Profile q = with_nvlink_ceiling(gen.gpu(50 + i, 0), false);
    q.cpu = "AMD EPYC 9654 96-Core Processor";
    scoped.push_back({"all" + std::to_string(i), q});
  }
  const auto mixed = analyze_fleet(scoped, OutlierRule{});
  ASSERT_EQ(mixed.size(), 2u);
  EXPECT_TRUE(mixed[1].host_only);
  EXPECT_EQ(count_findings(mixed).unlike_peers, 0u);

  // Two server models in equal numbers: neither is the reference, whichever sorts first.
  std::vector<FleetMember> halves;
  for (int i = 0; i < 8; ++i) {
    Profile q = gen.gpu(60 + i, 0, i < 4 ? std::map<std::string, double>{{"gemm.bf16", 0.10}} : std::map<std::string, double>{});
    if (i < 4) q.cpu = "AMD EPYC 9654 96-Core Processor";
    halves.push_back({"h" + std::to_string(i), q});
  }
  const auto even = analyze_fleet(halves, OutlierRule{});
  ASSERT_EQ(even.size(), 2u);
  for (const FleetGroup& g : even) {
    EXPECT_FALSE(g.peer_group.has_value()) << g.fingerprint.label();
    EXPECT_FALSE(g.split_with.has_value()) << "another server model is not a node set up two ways";
  }
}

// A GPU alone in its fingerprint group is not compared within it, but set against the group of its GPU
// model: a node configured unlike its peers (another power limit, an older driver) is a finding (exit 1),
// with what differs and how far its ceilings are below the peers' medians. A GPU with no group of its model
// large enough could not be judged (exit 3).
TEST(Fleet, AGpuAloneInItsGroupIsSetAgainstItsModel) {
  FleetGen gen(5, 0.001);
  const auto write_fleet = [&](const std::string& name, const std::function<void(Profile&)>& odd) {
    const std::string dir = ceilings::test::scratch_dir(name);
    for (int i = 0; i < 6; ++i) {
      Profile p = gen.gpu(i, 0);
      if (i == 5) odd(p);
      write_file_atomic(dir + "/n" + std::to_string(i) + ".profile.json", profile_to_json(p).dump());
    }
    return dir;
  };
  const std::string capped = write_fleet("fleet_alone_power", [](Profile& p) {
    p.device.power_limit_w = 500;
    for (Ceiling& c : p.ceilings)
      if (c.name == "gemm.bf16") c.value *= 0.75;
  });
  auto r = run_cli({"fleet", capped});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("1 GPU(s) configured unlike their peers, 0 GPU(s) not judged"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("set against group 1 of the same GPU model"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("power limit 500.0 W (peers: 700.0 W)"), std::string::npos) << r.out;
  EXPECT_TRUE(r.out.find("gemm.bf16 24.") != std::string::npos || r.out.find("gemm.bf16 25.") != std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("GPU-00000005-0000-0000-0000-000000000000"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("too few profiles"), std::string::npos) << r.out;
  const json j = parse_json_text(run_cli({"fleet", capped, "--format", "json"}).out, "fleet json");
  EXPECT_EQ(j.at("configured_unlike_peers"), 1);
  EXPECT_EQ(j.at("not_judged"), 0);
  ASSERT_EQ(j.at("groups").size(), 2u);
  const json& alone = j["groups"][1];
  EXPECT_FALSE(alone.at("compared").get<bool>());
  EXPECT_EQ(alone.at("not_compared").at("peer_group"), 1);
  ASSERT_EQ(alone["not_compared"].at("differences").size(), 1u);
  EXPECT_EQ(alone["not_compared"]["differences"][0], "power limit 500.0 W (peers: 700.0 W)");
  ASSERT_EQ(alone["not_compared"].at("versus_peers").size(), 1u);
  EXPECT_EQ(alone["not_compared"]["versus_peers"][0]["ceilings"][0]["ceiling"], "gemm.bf16");
  const auto csv = run_cli({"fleet", capped, "--format", "csv"});
  EXPECT_EQ(csv.exit_code, 1);
  // The header, the unlike-peers row, its GEMM below qualify's datasheet fraction (63% of the clock-scaled
  // peak, below 70%): a fault whatever the peers read, and its 500 W limit below the H200's 700 W.
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 1 + 3) << csv.out;
  EXPECT_NE(csv.out.find(",power limit,500.0,W,,,,,665.0,health rule power_limit (95% of datasheet H200 TDP"),
            std::string::npos)
      << csv.out;
  EXPECT_NE(csv.out.find(",ceiling fault,node5,0,GPU-00000005-0000-0000-0000-000000000000,00000000:10:00.0,gemm.bf16 "
                         "datasheet fraction,"),
            std::string::npos)
      << csv.out;
  EXPECT_NE(csv.out.find("2,unlike peers,node5,"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find(",gemm.bf16,"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("configured unlike group 1: power limit 500.0 W (peers: 700.0 W)"), std::string::npos)
      << csv.out;

  const std::string old_driver = write_fleet("fleet_alone_driver", [](Profile& p) {
    p.device.driver = "535.54.03";
    for (Ceiling& c : p.ceilings)
      if (c.name == "hbm.copy") c.value *= 0.7;
  });
  r = run_cli({"fleet", old_driver});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("driver 535.54.03 (peers: 580.95.05)"), std::string::npos) << r.out;
  EXPECT_TRUE(r.out.find("hbm.copy 29.") != std::string::npos || r.out.find("hbm.copy 30.") != std::string::npos)
      << r.out;

  // The same model under another driver but equally fast is still named: the configuration is the finding.
  const std::string same_speed = write_fleet("fleet_alone_same_speed", [](Profile& p) { p.device.driver = "590.1"; });
  r = run_cli({"fleet", same_speed});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("driver 590.1 (peers: 580.95.05)"), std::string::npos) << r.out;

  // Another model among H200s (one the datasheet table lacks, so no datasheet fraction judges it either): no
  // group of its model, not judged; the H200s are fine. Exit 3.
  const std::string other_model = write_fleet("fleet_alone_model", [](Profile& p) {
    p.device.name = "NVIDIA Future GPU";
    p.device.memory_bytes = 85520809984ULL;
  });
  r = run_cli({"fleet", other_model});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("0 GPU(s) configured unlike their peers, 1 GPU(s) not judged"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not judged: no group of NVIDIA Future GPU large enough"), std::string::npos) << r.out;
  r = run_cli({"fleet", other_model, "--format", "csv"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find(",not judged,node5,"), std::string::npos) << r.out;
}

// A GPU lacking a ceiling its peers have is named with its profile's reason: a failed measurement fails
// (and its profile's `errors` fail the health count), a skipped one is a note.
TEST(Fleet, AMissingCeilingIsNamedWithItsReason) {
  FleetGen gen(9, 0.001);
  const std::string dir = ceilings::test::scratch_dir("fleet_missing");
  for (int i = 0; i < 6; ++i) {
    Profile p = gen.gpu(i, 0);
    if (i == 5) {
      p.ceilings.erase(std::remove_if(p.ceilings.begin(), p.ceilings.end(),
                                      [](const Ceiling& c) { return c.name == "gemm.bf16"; }),
                       p.ceilings.end());
      p.errors.push_back({"gemm.bf16", "verification failed: 12 of 4096 sampled elements off"});
    }
    if (i == 4) {
      p.ceilings.erase(std::remove_if(p.ceilings.begin(), p.ceilings.end(),
                                      [](const Ceiling& c) { return c.name == "hbm.copy"; }),
                       p.ceilings.end());
      p.skipped.push_back({"hbm.copy", "not run: --only"});
    }
    write_file_atomic(dir + "/n" + std::to_string(i) + ".profile.json", profile_to_json(p).dump());
  }
  const FleetInput in = load_fleet({dir});
  const auto groups = analyze_fleet(in.members, OutlierRule{});
  ASSERT_EQ(groups.size(), 1u);
  ASSERT_EQ(groups[0].missing.size(), 2u);
  for (const MissingCeiling& m : groups[0].missing) {
    const Profile& p = in.members[groups[0].members[m.member]].profile;
    if (m.ceiling == "gemm.bf16") {
      EXPECT_TRUE(m.error);
      EXPECT_EQ(p.hostname, "node5");
      EXPECT_EQ(m.reason, "measurement failed: verification failed: 12 of 4096 sampled elements off");
    } else {
      EXPECT_EQ(m.ceiling, "hbm.copy");
      EXPECT_FALSE(m.error);
      EXPECT_EQ(p.hostname, "node4");
      EXPECT_EQ(m.reason, "not measured: not run: --only");
    }
  }
  const FleetHealth h = fleet_health(in.members);
  ASSERT_EQ(h.faults.size(), 1u);
  EXPECT_EQ(in.members[h.faults[0].member].profile.hostname, "node5");
  EXPECT_EQ(h.faults[0].failed.back().rule, "measurement errors");
  // Rules that turn verification off pass such a profile in qualify, and so here (review 90: fleet still failed it).
  const Rules unverified =
      parse_rules(json::parse(R"({"schema":"ceilings.rules/1","health":{"verification":false}})"), "nover.json");
  EXPECT_TRUE(fleet_health(in.members, unverified).faults.empty());

  auto r = run_cli({"fleet", dir});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("1 ceiling(s) its peers have lost to a failed measurement"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("measurement failed: verification failed: 12 of 4096"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not measured: not run: --only"), std::string::npos) << r.out;
  const json j = parse_json_text(run_cli({"fleet", dir, "--format", "json"}).out, "fleet json");
  EXPECT_EQ(j.at("missing_ceilings_failed"), 1);
  EXPECT_EQ(j["groups"][0].at("missing").size(), 2u);
  const auto csv = run_cli({"fleet", dir, "--format", "csv"});
  EXPECT_EQ(csv.exit_code, 1);
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 1 + 3) << csv.out;  // two missing, one health fault
  EXPECT_NE(csv.out.find("1,missing (fail),node5,"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("1,missing (note),node4,"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("1,ceiling fault,node5,"), std::string::npos) << csv.out;  // a failed measurement

  // Only the skipped one: a note, the fleet passes.
  fs::remove(dir + "/n5.profile.json");
  r = run_cli({"fleet", dir});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("not measured: not run: --only"), std::string::npos) << r.out;
}

// The README's batch script writes the baseline into the directory it scans: the next run sets it aside
// (its medians would otherwise count as one more GPU) and says so.
TEST(Fleet, ABaselineInTheScannedDirectoryIsNotAGpu) {
  FleetGen gen(13, 0.001);
  const std::string dir = ceilings::test::scratch_dir("fleet_baseline_in_dir");
  for (int i = 0; i < 5; ++i)
    write_file_atomic(dir + "/n" + std::to_string(i) + ".profile.json", profile_to_json(gen.gpu(i, 0)).dump());
  auto r = run_cli({"fleet", dir, "--write-baseline", dir + "/baseline.profile.json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_TRUE(fs::exists(dir + "/baseline.profile.json"));
  // Shown as what it is: written (not measured) then, its samples the profiles of each median.
  const auto shown = run_cli({"show", dir + "/baseline.profile.json"});
  EXPECT_NE(shown.out.find("; written "), std::string::npos) << shown.out;
  EXPECT_EQ(shown.out.find("; measured "), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("samples are the profiles its median was taken over"), std::string::npos) << shown.out;

  const FleetInput in = load_fleet({dir});
  EXPECT_EQ(in.files, 6u);
  EXPECT_EQ(in.members.size(), 5u);
  ASSERT_EQ(in.baselines.size(), 1u);
  EXPECT_NE(in.baselines[0].reason.find("fleet baseline of 5 profile(s)"), std::string::npos) << in.baselines[0].reason;
  r = run_cli({"fleet", dir});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("read 5 profile(s) of 6 file(s), skipped 0, 1 baseline(s) set aside"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("baseline.profile.json: a fleet baseline of 5 profile(s)"), std::string::npos) << r.out;
  const json j = parse_json_text(run_cli({"fleet", dir, "--format", "json"}).out, "fleet json");
  EXPECT_EQ(j.at("read"), 5);
  EXPECT_EQ(j.at("baselines_set_aside").size(), 1u);
  EXPECT_EQ(j["groups"][0].at("profiles"), 5);
  // Named alone, it is nothing to compare.
  EXPECT_EQ(run_cli({"fleet", dir + "/baseline.profile.json"}).exit_code, 2);
}

TEST(Fleet, CliInputErrors) {
  const std::string dir = ceilings::test::scratch_dir("fleet_cli_errors");
  auto r = run_cli({"fleet", dir + "/missing"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = run_cli({"fleet", dir});  // empty directory
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no *.profile.json"), std::string::npos) << r.err;
  std::ofstream(dir + "/bad.profile.json") << "[]";
  r = run_cli({"fleet", dir});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.profile.json"), std::string::npos) << r.err;
  // One good profile beside the bad one: read, not fatal; one GPU alone has no peers: not judged, exit 3.
  r = run_cli({"fleet", dir, std::string(CEILINGS_FIXTURES) + "/profiles/h200-handmade.profile.json", "--format",
               "markdown"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.out.find("read 1 profile(s) of 2 file(s), skipped 1"), std::string::npos) << r.out;
  // A pipe named like a profile in the directory: named as skipped, not waited on for ever.
  ASSERT_EQ(mkfifo((dir + "/pipe.profile.json").c_str(), 0644), 0);
  r = run_cli({"fleet", dir, std::string(CEILINGS_FIXTURES) + "/profiles/h200-handmade.profile.json"}, {}, 20);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.out.find("pipe.profile.json"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not a regular file"), std::string::npos) << r.out;
  fs::remove(dir + "/pipe.profile.json");
  // A dangling link is no file: left out, not named (an old run's link to a profile since removed).
  fs::create_symlink(dir + "/gone.json", dir + "/old.profile.json");
  r = run_cli({"fleet", dir, std::string(CEILINGS_FIXTURES) + "/profiles/h200-handmade.profile.json"}, {}, 20);
  EXPECT_EQ(r.exit_code, 3) << r.err;  // as without the link: one GPU alone is not judged
  EXPECT_NE(r.out.find("read 1 profile(s) of 2 file(s), skipped 1"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("old.profile.json"), std::string::npos) << r.out;
  fs::remove(dir + "/old.profile.json");
  // A link loop is named: it is there, and cannot be read.
  fs::create_symlink(dir + "/loop.profile.json", dir + "/loop.profile.json");
  r = run_cli({"fleet", dir, std::string(CEILINGS_FIXTURES) + "/profiles/h200-handmade.profile.json"}, {}, 20);
  EXPECT_NE(r.out.find("loop.profile.json"), std::string::npos) << r.out;
  fs::remove(dir + "/loop.profile.json");
  r = run_cli({"fleet", dir, "--margin", "200"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--margin: must be a number from 0 to 100, not '200'"), std::string::npos) << r.err;
  for (const char* alpha : {"0", "1", "nan", "-0.1"}) {  // a probability strictly between 0 and 1
    r = run_cli({"fleet", dir, "--family-alpha", alpha});
    EXPECT_EQ(r.exit_code, 2) << alpha;
    EXPECT_NE(r.err.find("--family-alpha: must be a number above 0 and below 1"), std::string::npos) << r.err;
  }
  r = run_cli({"fleet", std::string(CEILINGS_FIXTURES) + "/profiles", "--write-baseline", dir + "/b.json",
               "--baseline-group", "9"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/b.json"));
}

}  // namespace

namespace {

// Plain normal noise is not a finding. Groups of 24 GPUs (3 nodes) and of 200, each ceiling 1% apart GPU to
// GPU with nothing planted and no truncation: a fixed z of 3.5 named a GPU in a quarter of the groups with these
// 8 ceilings (a real profile has ~50: 2 GPUs a fleet of 3 generated nodes), the comparisons adding up and a
// small group's MAD small by chance. The threshold that grows with the comparisons and allows for the MAD's
// own uncertainty names one in about one group in twenty (family_alpha 0.05; 5 and 10 of 200 here).
// A GPU 10% down on one ceiling (10 sigma) is still named by the z-score in every group, the margin aside.
TEST(Fleet, PlainNoiseIsNotNamedWhateverTheGroupSize) {
  std::mt19937 rng(11);
  std::normal_distribution<double> normal(0.0, 1.0);
  const int groups = 200;
  for (const int n : {24, 200}) {
    int noisy_groups = 0, fixed_noisy_groups = 0, found = 0;
    for (int g = 0; g < groups; ++g) {
      std::vector<Profile> gpus(static_cast<std::size_t>(n), fixture());
      for (Profile& p : gpus)
        for (Ceiling& c : p.ceilings) {
          c.value *= 1 + 0.01 * normal(rng);
          c.cv = 0.001;  // a tight in-run spread: the noise gate does not hide anything here
          c.samples = 10;
        }
      std::vector<const Profile*> ptrs;
      for (const Profile& p : gpus) ptrs.push_back(&p);
      OutlierRule margin_off;
      margin_off.margin = 1.0;  // the z-score alone
      const auto stats = ceiling_statistics(ptrs);
      if (!find_outliers(ptrs, stats, margin_off).empty()) ++noisy_groups;
      // The fixed threshold of before, by hand: z below -3.5 and at least 1% below.
      bool fixed_names = false;
      for (const CeilingStats& st : stats)
        for (const Profile& p : gpus) {
          const double x = p.find(st.name)->value, sign = st.unit == "s" ? -1.0 : 1.0;
          fixed_names |= sign * 0.6745 * (x - st.median) / st.mad < -3.5 && sign * (st.median - x) / st.median >= 0.01;
        }
      fixed_noisy_groups += fixed_names;
      // One GPU 10 sigma down on hbm.copy (a rate).
      for (Ceiling& c : gpus[0].ceilings)
        if (c.name == "hbm.copy") c.value = fixture().find("hbm.copy")->value * 0.90;
      const auto out = find_outliers(ptrs, ceiling_statistics(ptrs), margin_off);
      for (const Outlier& o : out)
        if (o.member == 0)
          for (const Deviation& d : o.ceilings) found += d.ceiling == "hbm.copy" && d.by_z;
    }
    // family_alpha 0.05 over 200 groups: 10 expected where the t approximation is exact; it is slightly
    // conservative for small groups.
    EXPECT_LE(noisy_groups, 20) << n << " GPUs a group";
    EXPECT_GT(fixed_noisy_groups, 40) << n << " GPUs a group";
    EXPECT_EQ(found, groups) << n << " GPUs a group";
    std::printf("%d GPUs a group: %d of %d clean groups with a GPU named (a fixed 3.5: %d)\n", n, noisy_groups,
                groups, fixed_noisy_groups);
  }
}

// The z-score alone does not name a difference below the repeatability floor (--min-deficit).
TEST(Fleet, ZScoreNeedsAPracticalDeficit) {
  std::vector<Profile> gpus(9, fixture());
  for (std::size_t i = 0; i < gpus.size(); ++i)
    for (Ceiling& c : gpus[i].ceilings) c.value *= 1 + 0.0001 * static_cast<double>(i);  // a 0.08% spread
  for (Ceiling& c : gpus[8].ceilings) c.value = fixture().find(c.name)->value * (c.unit == "s" ? 1.005 : 0.995);
  std::vector<const Profile*> ptrs;
  for (const Profile& p : gpus) ptrs.push_back(&p);
  const auto stats = ceiling_statistics(ptrs);
  EXPECT_TRUE(find_outliers(ptrs, stats, OutlierRule{}).empty());  // z far below the threshold, but only 0.5% worse
  OutlierRule strict;
  strict.min_deficit = 0.001;
  strict.own_spread = 0;  // no own-spread gate: the fixture's cvs (up to 1%) would otherwise cover a 0.5% deficit
  const auto out = find_outliers(ptrs, stats, strict);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].member, 8u);
  EXPECT_EQ(out[0].ceilings.size(), 5u);
}

// A small group set against its peers' statistics gets the peers' scale: where the peers' MAD is 0, the
// fallback's mean absolute deviation is theirs too. It was the small group's own, so a lone GPU got
// MeanAD = |x - median| and z = -1/1.2533 whatever its value.
TEST(Fleet, AGpuSetAgainstPeersWithoutSpreadGetsTheirScale) {
  std::vector<Profile> peers(5, fixture());
  const double median = fixture().find("hbm.read")->value;
  for (Ceiling& c : peers[4].ceilings)
    if (c.name == "hbm.read") c.value = 0.88 * median;  // named by the margin rule; z is computed all the same
  std::vector<const Profile*> ptrs;
  for (const Profile& p : peers) ptrs.push_back(&p);
  const auto stats = ceiling_statistics(ptrs);
  // Peers: median m, MAD 0, mean absolute deviation 0.12 m / 5 = 0.024 m: z of a GPU at 0.88 m is
  // -0.12 / (1.253314 x 0.024) = -3.99, in the group and alone alike.
  const double z = -0.12 / (1.253314 * 0.024);
  const auto in_group = find_outliers(ptrs, stats, OutlierRule{});
  ASSERT_EQ(in_group.size(), 1u);
  ASSERT_EQ(in_group[0].ceilings.size(), 1u);
  EXPECT_NEAR(*in_group[0].ceilings[0].z, z, 1e-9);
  Profile lone = peers[4];
  const auto alone = find_outliers({&lone}, stats, OutlierRule{});
  ASSERT_EQ(alone.size(), 1u);
  ASSERT_EQ(alone[0].ceilings.size(), 1u);
  EXPECT_EQ(alone[0].ceilings[0].ceiling, "hbm.read");
  EXPECT_NEAR(*alone[0].ceilings[0].z, z, 1e-9);
  EXPECT_TRUE(alone[0].ceilings[0].by_margin);
  // Four robust sigmas among five values is not a z-score finding: a MAD from five values is a rough scale.
  EXPECT_FALSE(alone[0].ceilings[0].by_z);
  // Student's t with 0.4 x 5 - 0.2 degrees of freedom at 0.05 over the lone GPU's comparisons (5: about 7.6;
  // it was one of the five the statistics came from).
  const std::size_t comparisons = z_comparisons({&lone}, stats, OutlierRule{});
  EXPECT_EQ(comparisons, 5u);
  EXPECT_NEAR(alone[0].ceilings[0].z_threshold, student_t_upper_quantile(0.05 / 5, 1.8), 1e-9);
  // Judged as a GPU outside the five (a small group against its peers): heavier tails, 0.3 x 5 degrees of freedom.
  const auto outside = find_outliers({&lone}, stats, OutlierRule{}, /*members_in_sample=*/false);
  ASSERT_EQ(outside.size(), 1u);
  EXPECT_NEAR(outside[0].ceilings[0].z_threshold, student_t_upper_quantile(0.05 / 5, 1.5), 1e-9);
  EXPECT_GT(outside[0].ceilings[0].z_threshold, alone[0].ceilings[0].z_threshold);
  // The strictest request is not the loosest: a family_alpha whose share underflows gives no z-score finding.
  OutlierRule tiny;
  tiny.family_alpha = 4.9e-324;
  EXPECT_EQ(z_threshold_for(tiny, 1000, 100000), std::numeric_limits<double>::infinity());
  EXPECT_GT(alone[0].ceilings[0].z_threshold, 6.9);
}

}  // namespace

namespace {

// A node that wrote nothing at all is unseen unless the job's host list is given: `--expect-hosts` names it and
// makes the run incomplete. Names compare case-blind, and by their first label where one has no domain.
TEST(Fleet, HostsTheJobRanOnWithNothingReadAreNamed) {
  const std::string dir = ceilings::test::scratch_dir("fleet_expect_hosts");
  fs::create_directories(dir + "/profiles");
  FleetGen gen(21);
  for (int node = 0; node < 3; ++node)
    for (int i = 0; i < 2; ++i)
      write_file_atomic(dir + "/profiles/node" + std::to_string(node) + "-gpu" + std::to_string(i) + ".profile.json",
                        profile_to_json(gen.gpu(node, i)).dump());
  // node3 wrote only its summary (every GPU hung): it is seen, and its GPUs are named as unfinished.
  write_file_atomic(dir + "/profiles/node3.node-summary.json",
                    json{{"schema", "ceilings.node/1"}, {"host", "node3"}, {"updated", "2026-11-30T11:00:00Z"},
                         {"gpus", json::array({{{"index", 0}, {"uuid", "GPU-x"}, {"state", "running"}}})}}
                        .dump());
  write_file_atomic(dir + "/hosts.txt",  // saved by an editor that writes a byte-order mark and CRLF
                    "\xEF\xBB\xBFNODE0  \n# scontrol show hostnames\nnode1.cluster.local\r\n\nnode2\nnode3\nnode4\nnode4\n");
  const std::vector<std::string> listed = read_host_list(dir + "/hosts.txt");
  EXPECT_EQ(listed, (std::vector<std::string>{"NODE0", "node1.cluster.local", "node2", "node3", "node4"}));

  FleetInput in = load_fleet({dir + "/profiles"});
  HostCheck hosts = check_hosts(in, "hosts.txt", listed);
  EXPECT_EQ(hosts.expected, 5u);
  EXPECT_EQ(hosts.missing, std::vector<std::string>{"node4"});
  EXPECT_TRUE(hosts.not_listed.empty());
  // A bare name on either side matches any domain on the other; a host read that the list does not name is a note.
  hosts = check_hosts(in, "hosts.txt", {"node0.a", "node1", "node2", "node3"});
  EXPECT_EQ(hosts.missing, std::vector<std::string>{});
  hosts = check_hosts(in, "hosts.txt", {"node1", "node2"});
  EXPECT_TRUE(hosts.missing.empty());
  EXPECT_EQ(hosts.not_listed, (std::vector<std::string>{"node0", "node3"}));

  auto r = run_cli({"fleet", dir + "/profiles", "--expect-hosts", dir + "/hosts.txt", "--format", "json"});
  EXPECT_EQ(r.exit_code, 3) << r.err;  // a node that wrote nothing is not a pass
  const json j = parse_json_text(r.out, "fleet json");
  EXPECT_EQ(j.at("hosts").at("missing"), json::array({"node4"}));
  EXPECT_EQ(j.at("hosts").at("expected"), 5);
  r = run_cli({"fleet", dir + "/profiles", "--expect-hosts", dir + "/hosts.txt", "--format", "csv"});
  EXPECT_NE(r.out.find(",missing host,node4,"), std::string::npos) << r.out;
  r = run_cli({"fleet", dir + "/profiles", "--expect-hosts", dir + "/hosts.txt"});
  EXPECT_NE(r.out.find("hosts: 5 listed in " + dir + "/hosts.txt, 1 with nothing read from it"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("missing: node4\n"), std::string::npos) << r.out;
  // Without the list the same files are only incomplete for node3's hung GPU; node4 is unseen.
  r = run_cli({"fleet", dir + "/profiles", "--format", "json"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(parse_json_text(r.out, "fleet json").at("hosts").is_null());
  fs::remove(dir + "/profiles/node3.node-summary.json");
  write_file_atomic(dir + "/three.txt", "node0\nnode1\nnode2\n");
  EXPECT_EQ(run_cli({"fleet", dir + "/profiles", "--expect-hosts", dir + "/three.txt"}).exit_code, 0);

  // A list that is not one name a line, or names no host, or is not there: exit 2, named.
  write_file_atomic(dir + "/two.txt", "node0\nnode1 node2\n");
  r = run_cli({"fleet", dir + "/profiles", "--expect-hosts", dir + "/two.txt"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("line 2: \"node1 node2\" is not one host name"), std::string::npos) << r.err;
  write_file_atomic(dir + "/nbsp.txt", "node0\nnode1\xC2\xA0\n");  // a non-breaking space no node reports
  r = run_cli({"fleet", dir + "/profiles", "--expect-hosts", dir + "/nbsp.txt"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("line 2: \"node1\\u00a0\" is not one host name"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  write_file_atomic(dir + "/long.txt", "node0\n" + std::string(1000000, 'n') + "\n");  // review 99: echoed whole
  r = run_cli({"fleet", dir + "/profiles", "--expect-hosts", dir + "/long.txt"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("line 2: a host name of 1000000 characters"), std::string::npos) << r.err.substr(0, 300);
  EXPECT_LT(r.err.size(), 1000u);
  EXPECT_TRUE(r.out.empty());
  write_file_atomic(dir + "/none.txt", "# nothing\n\n");
  r = run_cli({"fleet", dir + "/profiles", "--expect-hosts", dir + "/none.txt"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("names no host"), std::string::npos) << r.err;
  EXPECT_EQ(run_cli({"fleet", dir + "/profiles", "--expect-hosts", dir + "/absent.txt"}).exit_code, 2);

  // A job where no node wrote a profile is a run with nothing finished (exit 3, every host named), not a usage
  // error; so is one whose nodes wrote only their summaries. Without either, an empty directory is exit 2.
  fs::create_directories(dir + "/nothing");
  r = run_cli({"fleet", dir + "/nothing", "--expect-hosts", dir + "/three.txt"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.out.find("missing: node0 node1 node2\n"), std::string::npos) << r.out;
  EXPECT_EQ(run_cli({"fleet", dir + "/nothing"}).exit_code, 2);
  r = run_cli({"fleet", dir + "/nothing", "--expect-hosts", dir + "/three.txt", "--write-baseline", dir + "/b.json"});
  EXPECT_EQ(r.exit_code, 2) << r.err;  // the report, then no baseline
  EXPECT_NE(r.out.find("missing: node0 node1 node2\n"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("no readable profile to take the medians of"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/b.json"));
  write_file_atomic(dir + "/nothing/node0.node-summary.json",
                    json{{"schema", "ceilings.node/1"}, {"host", "node0"}, {"gpus", json::array()}}.dump());
  r = run_cli({"fleet", dir + "/nothing", "--format", "json"});
  EXPECT_EQ(r.exit_code, 3) << r.err;  // a node whose run listed no GPU is no pass
  EXPECT_EQ(parse_json_text(r.out, "fleet json").at("read"), 0);
  EXPECT_EQ(run_cli({"fleet", dir + "/profiles", "--expect-hosts", ""}).exit_code, 2);
}

// A GPU that is an outlier on one ceiling and unstable on another is counted once, as an outlier: the summary
// read "1 outlier(s) ... 1 GPU(s) unstable" of the same GPU. Its unstable ceilings are still listed.
TEST(Fleet, AnOutlierUnstableOnAnotherCeilingIsCountedOnce) {
  FleetGroup g;
  Outlier slow, noisy, other;
  slow.member = noisy.member = 0;
  other.member = 1;
  g.outliers = {slow};
  g.unstable = {noisy, other};
  g.unstable_versus_peers = {other};
  const FleetFindings f = count_findings({g});
  EXPECT_EQ(f.outliers, 1u);
  EXPECT_EQ(f.unstable, 1u);  // GPU 1 alone, once for both lists
  EXPECT_EQ(g.unstable.size(), 2u);
}

}  // namespace

namespace {
// A GPU `measure --all-gpus` named below its node's peers that the fleet, against its group's median, does not
// name (its node-mates faster than the fleet's) is listed with both, not left as two unexplained verdicts; one the
// fleet names too is not listed twice (review 46).
TEST(Fleet, AGpuOnlyItsNodeNamedIsListed) {
  FleetGen gen(17, 0.002);
  std::vector<FleetMember> fleet;
  for (int node = 0; node < 3; ++node)
    for (int i = 0; i < 4; ++i)
      fleet.push_back({"n" + std::to_string(node) + "-gpu" + std::to_string(i),
                       gen.gpu(node, i, node == 2 && i == 1 ? std::map<std::string, double>{{"hbm.copy", 0.2}}
                                                            : std::map<std::string, double>{})});
  const std::string dir = write_fleet(fleet, "fleet_node_only");
  auto named = [&](const FleetMember& m, double value, double median) {
    return json{{"index", m.profile.device.index},
                {"uuid", m.profile.device.uuid},
                {"pci_bus_id", m.profile.device.pci_bus_id},
                {"ceilings", json::array({{{"ceiling", "hbm.copy"}, {"unit", "B/s"}, {"value", value},
                                           {"node_median", median}, {"below_median", 1 - value / median}}})}};
  };
  for (int node : {0, 2}) {
    json gpus = json::array();
    for (int i = 0; i < 4; ++i) {
      const FleetMember& m = fleet[static_cast<std::size_t>(node * 4 + i)];
      gpus.push_back({{"index", i}, {"uuid", m.profile.device.uuid}, {"pci_bus_id", m.profile.device.pci_bus_id},
                      {"state", "done"}, {"profile", m.path + ".profile.json"}});
    }
    const FleetMember& slow = fleet[static_cast<std::size_t>(node * 4 + 1)];
    const json summary = {{"schema", "ceilings.node/1"}, {"host", "node" + std::to_string(node)},
                          {"created", "2030-01-01T00:00:00Z"}, {"updated", "2030-01-01T00:00:00Z"},
                          {"gpus", gpus},
                          {"comparison", {{"below_peers", json::array({named(slow, 4.19e12, 4.43e12)})}}}};
    write_file_atomic(dir + "/node" + std::to_string(node) + ".node-summary.json", summary.dump());
  }
  const auto r = run_cli({"fleet", dir, "--format", "json"});
  const json j = json::parse(r.out);
  const json& only = j.at("below_node_peers_only");
  ASSERT_EQ(only.size(), 1u) << only.dump(1);  // node 2's GPU 1 is the fleet's outlier too: not listed again
  EXPECT_EQ(only[0].at("uuid"), fleet[1].profile.device.uuid);
  EXPECT_EQ(only[0].at("ceilings")[0], "hbm.copy 4.19 TB/s, 5.4% worse than the node median 4.43 TB/s");
  const auto text = run_cli({"fleet", dir});
  EXPECT_NE(text.out.find("below their node's peers only: 1 GPU(s)"), std::string::npos) << text.out;
  const auto csv = run_cli({"fleet", dir, "--format", "csv"});
  EXPECT_NE(csv.out.find("below node peers only"), std::string::npos) << csv.out;
  // A GPU the fleet could not judge (its group too small to compare) is not said to be judged and not named.
  const auto two = run_cli({"fleet", dir + "/" + fleet[0].path + ".profile.json", dir + "/" + fleet[1].path +
                            ".profile.json", dir + "/node0.node-summary.json", "--format", "json"});
  EXPECT_TRUE(json::parse(two.out).at("below_node_peers_only").empty()) << two.out;
}
}  // namespace
