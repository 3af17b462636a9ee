// Confidential computing (NVML's system state, recorded as device.confidential_computing): the profile keeps it,
// `show` says it, qualify does not hold PCIe copies made through encrypted bounce buffers to the link's rate, fleet
// does not set such a node against nodes without it, and the NVML loader reads it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ceilings/ceiling_families.hpp"
#include "ceilings/compare.hpp"
#include "ceilings/error.hpp"
#include "ceilings/fleet.hpp"
#include "ceilings/health.hpp"
#include "ceilings/json_fields.hpp"
#include "ceilings/profile.hpp"
#include "ceilings/qualify.hpp"
#include "ceilings/report.hpp"
#include "cli_runner.hpp"
#include "harness/nvml.hpp"
#include "support/health_rows.hpp"

namespace ceilings {
namespace {

const std::string kFixture = std::string(CEILINGS_FIXTURES) + "/profiles/h200-qualify.profile.json";

Profile with_cc(bool on) {
  Profile p = read_profile(kFixture);
  p.device.confidential_computing = on;
  p.raw = json::object();  // written from the fields
  return profile_from_json(profile_to_json(p), "test");
}

// The fleet's i-th GPU: `p` under a UUID of its own, named node<i>.
FleetMember fleet_member(int i, Profile p) {
  char uuid[64];
  std::snprintf(uuid, sizeof uuid, "GPU-%08d-0000-0000-0000-000000000000", i);
  p.device.uuid = uuid;
  return {"node" + std::to_string(i), std::move(p)};
}

const Check* find_check(const QualifyResult& r, const std::string& subject, const std::string& rule) {
  for (const Check& c : r.checks)
    if (c.subject == subject && c.rule == rule) return &c;
  return nullptr;
}

// On, in `mode` ("" where not recorded), with a peer ceiling of 350 GB/s (the fixture's is skipped: one GPU).
Profile with_cc_mode(const std::string& mode) {
  json doc = read_json_file(kFixture);
  doc["device"]["confidential_computing"] = true;
  if (!mode.empty()) doc["device"]["confidential_computing_mode"] = mode;
  json peer;
  for (const json& c : doc["ceilings"])
    if (c["name"] == "pcie.h2d") peer = c;
  peer["name"] = "nvlink.p2p_uni";
  peer["value"] = 3.5e11;  // 77.8% of an NVSwitch pair's 450 GB/s: under the 80% rule
  peer["datasheet"] = nullptr;
  peer["detail"] = {{"nvlink_pair_links", 18}, {"nvlink_gpu_links", 18}, {"nvlink_switched", 1}};
  doc["ceilings"].push_back(peer);
  json skipped = json::array();
  for (const json& s : doc["skipped"])
    if (s["name"] != "nvlink.p2p_uni") skipped.push_back(s);
  doc["skipped"] = skipped;
  return profile_from_json(doc, "test");
}

// The profile `doc` is refused, its error naming `field`; `accepted` says what went wrong if it is not.
void expect_refused(const json& doc, const std::string& field, const std::string& accepted) {
  try {
    profile_from_json(doc, "bad");
    ADD_FAILURE() << accepted;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

// Recorded only where the bench could tell; a boolean, or the profile is refused naming the field.
TEST(ConfidentialComputing, TheProfileKeepsItAndShowSaysIt) {
  const Profile unknown = read_profile(kFixture);
  EXPECT_FALSE(unknown.device.confidential_computing.has_value());
  EXPECT_FALSE(profile_to_json(unknown)["device"].contains("confidential_computing"));
  EXPECT_EQ(profile_summary(unknown).find("confidential computing"), std::string::npos);

  const Profile on = with_cc(true);
  EXPECT_EQ(on.device.confidential_computing, std::optional<bool>(true));
  EXPECT_EQ(profile_to_json(on)["device"]["confidential_computing"], true);
  EXPECT_NE(profile_summary(on).find("confidential computing on: host<->device copies went through the driver's "
                                     "encrypted bounce buffers"),
            std::string::npos)
      << profile_summary(on);
  EXPECT_EQ(with_cc(false).device.confidential_computing, std::optional<bool>(false));
  EXPECT_EQ(profile_summary(with_cc(false)).find("confidential computing"), std::string::npos);

  json bad = read_json_file(kFixture);
  bad["device"]["confidential_computing"] = 1;
  expect_refused(bad, "confidential_computing", "a number was taken for a boolean");
}

// The mode, where NVML named it: kept, said by show and compare; a mode beside CC not on is refused.
TEST(ConfidentialComputing, TheModeIsKeptAndSaid) {
  const Profile nvle = with_cc_mode("NVLink encryption");
  EXPECT_TRUE(nvle.device.nvlink_encrypted());
  EXPECT_EQ(profile_to_json(nvle)["device"]["confidential_computing_mode"], "NVLink encryption");
  const std::string summary = profile_summary(nvle);
  EXPECT_NE(summary.find("confidential computing on (NVLink encryption): "), std::string::npos) << summary;
  EXPECT_NE(summary.find("peer copies over NVLink were encrypted too"), std::string::npos) << summary;
  const Profile ppcie = with_cc_mode("protected PCIe");
  EXPECT_FALSE(ppcie.device.nvlink_encrypted());
  EXPECT_EQ(profile_summary(ppcie).find("peer copies"), std::string::npos);
  bool named = false;
  for (const auto& [field, value] : measurement_conditions(ppcie))
    if (field == "confidential computing") named = value == "on (protected PCIe)";
  EXPECT_TRUE(named);
  EXPECT_EQ(confidential_computing_text(with_cc_mode("")), "on");
  EXPECT_FALSE(profile_to_json(with_cc_mode(""))["device"].contains("confidential_computing_mode"));

  for (const json off : {json(false), json(nullptr)}) {
    json bad = read_json_file(kFixture);
    if (!off.is_null()) bad["device"]["confidential_computing"] = off;
    bad["device"]["confidential_computing_mode"] = "single GPU";
    expect_refused(bad, "confidential_computing_mode", "a mode of confidential computing not on was taken");
  }
}

// NVLink encryption moves the peer copies too: against a baseline in another mode a peer shortfall is not judged
// (in protected PCIe, NVLink is plaintext: a peer shortfall against an off baseline fails), and a fleet's group in
// that mode is set against the others without its peer ceilings.
TEST(ConfidentialComputing, NvlinkEncryptionMovesThePeerCopies) {
  // Encrypted peer copies are not held to the datasheet's NVLink rate; in protected PCIe (plaintext NVLink) they are.
  for (const char* mode : {"NVLink encryption", "protected PCIe"}) {
    const QualifyResult alone = qualify(with_cc_mode(mode), nullptr, default_rules());
    const Check* fraction = find_check(alone, "nvlink.p2p_uni", "datasheet fraction");
    ASSERT_NE(fraction, nullptr) << mode;
    EXPECT_EQ(fraction->status, mode == std::string("protected PCIe") ? CheckStatus::kFail : CheckStatus::kNotJudged)
        << mode << ": " << fraction->reason;
  }
  Profile slow = with_cc_mode("NVLink encryption");
  for (Ceiling& c : slow.ceilings)
    if (c.name == "nvlink.p2p_uni") c.value /= 2;
  const Profile ppcie_baseline = with_cc_mode("protected PCIe");
  const QualifyResult r = qualify(slow, &ppcie_baseline, default_rules());
  const Check* peer = find_check(r, "nvlink.p2p_uni", "baseline");
  ASSERT_NE(peer, nullptr);
  EXPECT_EQ(peer->status, CheckStatus::kIncomplete) << peer->reason;
  EXPECT_NE(peer->reason.find("confidential computing on (NVLink encryption) (baseline: on (protected PCIe))"),
            std::string::npos)
      << peer->reason;
  const Check* alike = find_check(r, "baseline", "measured alike");
  ASSERT_NE(alike, nullptr);
  EXPECT_NE(alike->reason.find("copies and launches and the peer copies)"), std::string::npos) << alike->reason;
  const Profile same = with_cc_mode("NVLink encryption");
  const QualifyResult alike_run = qualify(slow, &same, default_rules());
  ASSERT_NE(find_check(alike_run, "nvlink.p2p_uni", "baseline"), nullptr);
  EXPECT_EQ(find_check(alike_run, "nvlink.p2p_uni", "baseline")->status, CheckStatus::kFail);
  Profile slow_ppcie = with_cc_mode("protected PCIe");
  for (Ceiling& c : slow_ppcie.ceilings)
    if (c.name == "nvlink.p2p_uni") c.value /= 2;
  Profile off = with_cc_mode("");
  off.device.confidential_computing = false;
  off.device.confidential_computing_mode.clear();
  const QualifyResult plain = qualify(slow_ppcie, &off, default_rules());
  ASSERT_NE(find_check(plain, "nvlink.p2p_uni", "baseline"), nullptr);
  EXPECT_EQ(find_check(plain, "nvlink.p2p_uni", "baseline")->status, CheckStatus::kFail);

  // A fleet: 7 nodes in protected PCIe, 3 in NVLink encryption on another driver, their peer copies half as fast:
  // set against the 7 without their peer ceilings (nor their copies and launches).
  std::vector<FleetMember> fleet;
  for (int i = 0; i < 10; ++i) {
    Profile p = with_cc_mode(i < 7 ? "protected PCIe" : "NVLink encryption");
    if (i >= 7) {
      p.device.driver = "590.44.01";
      for (Ceiling& c : p.ceilings)
        if (c.name == "nvlink.p2p_uni") c.value /= 2;
    }
    fleet.push_back(fleet_member(i, p));
  }
  const auto groups = analyze_fleet(fleet, OutlierRule{});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[1].fingerprint.confidential_computing_mode, "NVLink encryption");
  EXPECT_NE(groups[1].fingerprint.label().find("confidential computing (NVLink encryption)"), std::string::npos);
  EXPECT_EQ(groups[1].peer_group, std::optional<std::size_t>(0));
  for (const Outlier& o : groups[1].versus_peers)
    for (const Deviation& d : o.ceilings) EXPECT_NE(d.ceiling, "nvlink.p2p_uni");
  // In the same mode, the slow peer copies are found.
  std::vector<FleetMember> same_mode;
  for (int i = 0; i < 10; ++i) {
    Profile p = with_cc_mode("protected PCIe");
    if (i >= 7) {
      p.device.driver = "590.44.01";
      for (Ceiling& c : p.ceilings)
        if (c.name == "nvlink.p2p_uni") c.value /= 2;
    }
    same_mode.push_back(fleet_member(i, p));
  }
  int found = 0;
  const auto same_groups = analyze_fleet(same_mode, OutlierRule{});
  ASSERT_EQ(same_groups.size(), 2u);
  for (const Outlier& o : same_groups[1].versus_peers)
    for (const Deviation& d : o.ceilings) found += d.ceiling == "nvlink.p2p_uni";
  EXPECT_EQ(found, 3);
}

// Copies through encrypted bounce buffers are not bounded by the link: a PCIe ceiling far below the link's rate is
// not judged against it (nothing held back), while the other ceilings are judged as ever.
TEST(ConfidentialComputing, PcieCopiesAreNotHeldToTheLinksRate) {
  Profile p = with_cc(true);
  for (Ceiling& c : p.ceilings)
    if (c.name == "pcie.h2d") c.value /= 10;  // 5.5 GB/s, an eleventh of a Gen5 x16 link
  const QualifyResult r = qualify(p, nullptr, default_rules());
  const Check* h2d = find_check(r, "pcie.h2d", "datasheet fraction");
  ASSERT_NE(h2d, nullptr);
  EXPECT_EQ(h2d->status, CheckStatus::kNotJudged);
  EXPECT_NE(h2d->reason.find("confidential computing on"), std::string::npos) << h2d->reason;
  const Check* hbm = find_check(r, "hbm.copy", "datasheet fraction");
  ASSERT_NE(hbm, nullptr);
  EXPECT_EQ(hbm->status, CheckStatus::kPass);
  EXPECT_NE(r.exit_code(), 1);  // no fail (the fixture's idle Gen4 link reading the slow copies cannot prove: incomplete)

  p.device.confidential_computing = false;  // the same copies off it fail
  const QualifyResult off = qualify(p, nullptr, default_rules());
  ASSERT_NE(find_check(off, "pcie.h2d", "datasheet fraction"), nullptr);
  EXPECT_EQ(find_check(off, "pcie.h2d", "datasheet fraction")->status, CheckStatus::kFail);

  // Only PCIe measured (measure --filter pcie): every limit is not judged, and health rows alone are no pass
  // (review 90: it passed, exit 0).
  Profile pcie_only = with_cc(true);
  pcie_only.ceilings.erase(std::remove_if(pcie_only.ceilings.begin(), pcie_only.ceilings.end(),
                                          [](const Ceiling& c) { return family_of(c.name) != "pcie"; }),
                           pcie_only.ceilings.end());
  ASSERT_FALSE(pcie_only.ceilings.empty());
  const QualifyResult alone = qualify(pcie_only, nullptr, default_rules());
  const Check* judged = find_check(alone, "profile", "ceilings judged");
  ASSERT_NE(judged, nullptr);
  EXPECT_EQ(judged->status, CheckStatus::kIncomplete);
  EXPECT_NE(judged->reason.find("none could judge"), std::string::npos) << judged->reason;
  EXPECT_EQ(alone.exit_code(), 3);
}

// Nodes with it on are a group of their own, labelled, their difference named; unknown (an older profile) is off.
TEST(ConfidentialComputing, FleetDoesNotSetItAgainstNodesWithout) {
  std::vector<FleetMember> fleet;
  for (int i = 0; i < 8; ++i) {
    Profile p = with_cc(i >= 5);
    if (i < 2) p.device.confidential_computing.reset();
    fleet.push_back(fleet_member(i, p));
  }
  const auto groups = analyze_fleet(fleet, OutlierRule{});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].members.size(), 5u);
  EXPECT_FALSE(groups[0].fingerprint.confidential_computing);
  EXPECT_EQ(groups[1].members.size(), 3u);
  EXPECT_TRUE(groups[1].fingerprint.confidential_computing);
  EXPECT_NE(groups[1].fingerprint.label().find(", confidential computing"), std::string::npos)
      << groups[1].fingerprint.label();
  const auto diff = groups[1].fingerprint.differences(groups[0].fingerprint);
  ASSERT_EQ(diff.size(), 1u);
  EXPECT_EQ(diff[0], "confidential computing on (peers: off)");
  EXPECT_EQ(groups[1].fingerprint.to_json()["confidential_computing"], true);
  // Measured otherwise, not set up otherwise: never set against the group without it, nor it against them.
  EXPECT_EQ(groups[1].measured_unlike, std::optional<std::size_t>(0));
  EXPECT_FALSE(groups[1].peer_group.has_value());
  EXPECT_TRUE(groups[1].versus_peers.empty());
  EXPECT_FALSE(groups[0].peer_group.has_value());
}

// Nodes with it on that differ in something else too (servers of another CPU, another driver) are set against the
// others without their copies and launches (they read 87.5% worse than the peers' before, reviews 79 and 80), the rest
// compared as ever: an HBM shortfall is still found.
TEST(ConfidentialComputing, FleetComparesTheRestWhereSomethingElseDiffersToo) {
  for (const char* other : {"host CPU", "driver"}) {
    SCOPED_TRACE(other);
    std::vector<FleetMember> fleet;
    for (int i = 0; i < 10; ++i) {
      Profile p = with_cc(i >= 7);
      if (i >= 7) {
        if (std::string(other) == "host CPU") p.cpu = "AMD EPYC 9654 96-Core Processor";
        else p.device.driver = "590.44.01";
        for (Ceiling& c : p.ceilings)
          if (c.name.rfind("pcie.", 0) == 0 || c.name == "latency.launch")
            c.value = c.unit == "s" ? c.value * 2 : c.value / 8;
          else if (c.name == "hbm.copy" && i == 9)
            c.value *= 0.8;
      }
      fleet.push_back(fleet_member(i, p));
    }
    const auto groups = analyze_fleet(fleet, OutlierRule{});
    ASSERT_EQ(groups.size(), 2u);
    EXPECT_TRUE(groups[1].fingerprint.confidential_computing);
    EXPECT_EQ(groups[1].peer_group, std::optional<std::size_t>(0));
    int hbm = 0;
    for (const Outlier& o : groups[1].versus_peers)
      for (const Deviation& d : o.ceilings) {
        EXPECT_NE(d.ceiling.rfind("pcie.", 0), 0u) << d.ceiling;
        EXPECT_NE(d.ceiling, "latency.launch");
        hbm += d.ceiling == "hbm.copy" ? 1 : 0;
      }
    EXPECT_EQ(hbm, 1) << "node9's HBM shortfall, and no other";
  }
}

// qualify against a baseline measured the other way: a copy or launch shortfall is another measurement (incomplete,
// the difference named), the rest is judged as ever; compare names it in its conditions.
TEST(ConfidentialComputing, ABaselineMeasuredTheOtherWayJudgesNoCopyShortfall) {
  Profile p = with_cc(true);
  for (Ceiling& c : p.ceilings)
    if (c.name == "pcie.h2d") c.value /= 8;
  const Profile baseline = with_cc(false);
  const QualifyResult r = qualify(p, &baseline, default_rules());
  const Check* h2d = find_check(r, "pcie.h2d", "baseline");
  ASSERT_NE(h2d, nullptr);
  EXPECT_EQ(h2d->status, CheckStatus::kIncomplete);
  EXPECT_NE(h2d->reason.find("confidential computing on (baseline: off)"), std::string::npos) << h2d->reason;
  EXPECT_NE(h2d->reason.find("measure the baseline with confidential computing on, as this GPU was"), std::string::npos)
      << h2d->reason;
  const Check* alike = find_check(r, "baseline", "measured alike");
  ASSERT_NE(alike, nullptr);
  EXPECT_NE(alike->reason.find("not judged for the host<->device copies and launches"), std::string::npos)
      << alike->reason;
  const Check* hbm = find_check(r, "hbm.copy", "baseline");
  ASSERT_NE(hbm, nullptr);
  EXPECT_EQ(hbm->status, CheckStatus::kPass);
  // Measured alike (both on), the same shortfall fails.
  Profile both = with_cc(true);
  const QualifyResult alike_run = qualify(p, &both, default_rules());
  ASSERT_NE(find_check(alike_run, "pcie.h2d", "baseline"), nullptr);
  EXPECT_EQ(find_check(alike_run, "pcie.h2d", "baseline")->status, CheckStatus::kFail);
  // A baseline from before the field is taken for off and said to be not recorded (it read "off", review 84).
  Profile unrecorded = with_cc(false);
  unrecorded.device.confidential_computing.reset();
  const QualifyResult unrecorded_run = qualify(p, &unrecorded, default_rules());
  const Check* unrecorded_alike = find_check(unrecorded_run, "baseline", "measured alike");
  ASSERT_NE(unrecorded_alike, nullptr);
  EXPECT_NE(unrecorded_alike->reason.find("confidential computing on (baseline: not recorded)"), std::string::npos)
      << unrecorded_alike->reason;
  // This GPU's not recorded: the advice is not to measure the baseline "off, as this GPU was" (review 86).
  Profile mine_unrecorded = p;
  mine_unrecorded.device.confidential_computing.reset();
  const QualifyResult mine_run = qualify(mine_unrecorded, &both, default_rules());
  const Check* h2d_unrecorded = find_check(mine_run, "pcie.h2d", "baseline");
  ASSERT_NE(h2d_unrecorded, nullptr);
  EXPECT_EQ(h2d_unrecorded->status, CheckStatus::kIncomplete);
  EXPECT_NE(h2d_unrecorded->reason.find("confidential computing not recorded (baseline: on)"), std::string::npos)
      << h2d_unrecorded->reason;
  EXPECT_NE(h2d_unrecorded->reason.find("measure this GPU again with this build"), std::string::npos)
      << h2d_unrecorded->reason;
  EXPECT_EQ(h2d_unrecorded->reason.find("as this GPU was"), std::string::npos) << h2d_unrecorded->reason;
  // Another cuBLAS too: the row names both kinds of shortfall it does not judge (it named the GEMMs only, review 79).
  Profile other_cublas = with_cc(false);
  other_cublas.device.cublas += ".1";
  const QualifyResult both_run = qualify(p, &other_cublas, default_rules());
  const Check* both_unlike = find_check(both_run, "baseline", "measured alike");
  ASSERT_NE(both_unlike, nullptr);
  EXPECT_NE(both_unlike->reason.find("not judged for the GEMMs cuBLAS runs nor for the host<->device copies and "
                                     "launches)"),
            std::string::npos)
      << both_unlike->reason;

  bool named = false;
  for (const auto& [field, value] : measurement_conditions(p))
    if (field == "confidential computing") named = value == "on";
  EXPECT_TRUE(named);
}

// The health PCIe-link row: a generation below the maximum, read with the GPU not idle, is not judged from copies
// made through encrypted bounce buffers (they can show nothing of the link); off CC the same slow copies fail it.
TEST(ConfidentialComputing, TheLinkIsNotJudgedFromBounceBufferCopies) {
  json doc = read_json_file(kFixture);
  for (const char* snap : {"before", "after"})
    if (doc["health"].contains(snap)) {
      doc["health"][snap]["metrics"]["pcie.gen"] = 4;
      doc["health"][snap]["metrics"]["clocks.event_reasons"] = 0;
    }
  doc["device"]["pcie"]["gen"] = 4;  // as the bench read it
  for (json& c : doc["ceilings"])
    if (c["name"].get<std::string>().rfind("pcie.", 0) == 0) c["value"] = c["value"].get<double>() / 8;
  for (const bool on : {true, false}) {
    SCOPED_TRACE(on);
    doc["device"]["confidential_computing"] = on;
    const Profile p = profile_from_json(doc, "test");
    const QualifyResult r = qualify(p, nullptr, default_rules());
    const Check* link = find_check(r, "health", "PCIe link");
    ASSERT_NE(link, nullptr);
    EXPECT_EQ(link->status, on ? CheckStatus::kIncomplete : CheckStatus::kFail) << link->reason;
    if (on) EXPECT_NE(link->reason.find("measured with confidential computing on"), std::string::npos) << link->reason;
  }
}

// nvmlSystemGetConfComputeSettings' ccFeature or multi-GPU mode (a multi-GPU Hopper node in protected-PCIe mode reports
// ccFeature off), with the mode named, else the older state call's ccFeature (no mode), through the loader against
// the fake NVML.
TEST(NvmlLoader, ReadsWhetherConfidentialComputingIsOn) {
  const std::string dir = test::scratch_dir("nvml_cc");
  // 1: on; 0: off; -1: not supported; 2: protected PCIe; 3: on, from the state call (no settings call); 4: NVLink
  // encryption (ccFeature off here, to show the mode alone is taken); 5: on, with developer tools.
  const std::map<int, std::string> modes = {{1, "single GPU"}, {0, ""}, {2, "protected PCIe"}, {3, ""},
                                            {4, "NVLink encryption"}, {5, "single GPU, developer tools"}};
  for (int state : {1, 0, -1, 2, 3, 4, 5}) {
    SCOPED_TRACE(state);
    json script = test::fake_nvml_base_script();
    if (state >= 0) script["values"]["cc.feature"] = state == 1 || state == 3 || state == 5 ? 1 : 0;
    if (state == 2) script["values"]["cc.multi_gpu_mode"] = 1;
    if (state == 4) script["values"]["cc.multi_gpu_mode"] = 2;
    if (state == 5) script["values"]["cc.devtools_mode"] = 1;
    if (state == 3) script["errors"]["cc_settings"] = 13;  // FUNCTION_NOT_FOUND
    std::ofstream(dir + "/script.json") << script.dump();
    setenv("CEILINGS_FAKE_NVML_SCRIPT", (dir + "/script.json").c_str(), 1);
    setenv(nvml::Library::kPathVariable, CEILINGS_FAKE_NVML, 1);
    {
      std::string why;
      const auto lib = nvml::Library::open(&why);
      ASSERT_NE(lib, nullptr) << why;
      const auto r = lib->confidential_computing();
      const auto settings = lib->confidential_computing_settings();
      if (state < 0) {
        EXPECT_TRUE(r.unsupported());
        EXPECT_TRUE(settings.unsupported());
      } else {
        ASSERT_TRUE(r.ok());
        EXPECT_EQ(r.value, state != 0);
        ASSERT_TRUE(settings.ok());
        EXPECT_EQ(settings.value.on, state != 0);
        EXPECT_EQ(settings.value.mode, modes.at(state));
        EXPECT_EQ(settings.value.nvlink_encrypted, state == 4);
      }
    }
    unsetenv(nvml::Library::kPathVariable);
    unsetenv("CEILINGS_FAKE_NVML_SCRIPT");
  }
}

}  // namespace
}  // namespace ceilings
