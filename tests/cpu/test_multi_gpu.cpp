// `ceilings measure --all-gpus` on the CPU with the stand-in bench (fake values, never measurements):
// per-GPU isolation and watchdog, the node summary's states, interruption, the intra-node comparison.
#include <gtest/gtest.h>
#include <signal.h>
#include <fcntl.h>
#include <cstdlib>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "ceilings/profile.hpp"
#include "cli_runner.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using ceilings::json;
using ceilings::test::run_cli;
using Env = std::vector<std::pair<std::string, std::string>>;

std::string host() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

json summary_of(const std::string& dir) { return ceilings::read_json_file(dir + "/" + host() + ".node-summary.json"); }

std::string state_of(const json& summary, int index) { return summary.at("gpus").at(index).at("state"); }

// Dead, or a zombie nobody reaps (a test container's pid 1 may not): either way it runs no more.
bool process_gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  std::string pid_s, comm, state;
  stat >> pid_s >> comm >> state;
  return state == "Z" || state == "X";
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

TEST(MultiGpu, IsolationAndWatchdogSequential) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_isolation");
  const std::string pidfile = dir + "/hang.pids";
  const Env env{{"CEILINGS_STANDIN_DEVICES", "5"},    {"CEILINGS_STANDIN_MODE_1", "crash"},
                {"CEILINGS_STANDIN_MODE_2", "hang"},  {"CEILINGS_STANDIN_MODE_3", "garbage"},
                {"CEILINGS_STANDIN_MODE_4", "slow"},  {"CEILINGS_STANDIN_SLEEP", "1"},
                {"CEILINGS_STANDIN_PIDFILE", pidfile}};
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_cli({"measure", "--all-gpus", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", dir, "--timeout", "3",
                          "--kill-grace", "1"},
                         env, 60);
  const double took = seconds_since(start);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;  // incomplete: three GPUs have no result
  EXPECT_LT(took, 20) << "the hang must be cut at its timeout (3 s) plus the kill grace (1 s)";

  const json s = summary_of(dir);
  EXPECT_EQ(s.at("schema"), "ceilings.node/1");
  EXPECT_FALSE(s.at("complete").get<bool>());
  EXPECT_EQ(state_of(s, 0), "done");
  EXPECT_EQ(s["gpus"][0]["profile"], host() + "-gpu0.profile.json");  // beside the summary
  // The crash cost its own family only (one process per family): the other families ran; the table says which
  // case failed (review 108: "(1 error(s))" read as a finished GPU).
  EXPECT_EQ(state_of(s, 1), "done");
  EXPECT_NE(r.out.find("(1 failed case(s): hbm.read)"), std::string::npos) << r.out;
  EXPECT_FALSE(s["gpus"][1].contains("partial"));
  EXPECT_FALSE(s["gpus"][2].contains("profile"));  // the hang finished nothing
  EXPECT_EQ(state_of(s, 2), "timed_out");
  EXPECT_NE(s["gpus"][2]["reason"].get<std::string>().find("killed"), std::string::npos);
  EXPECT_EQ(state_of(s, 3), "failed");
  EXPECT_NE(s["gpus"][3]["reason"].get<std::string>().find("not valid JSON"), std::string::npos);
  EXPECT_EQ(state_of(s, 4), "done");  // after the hang: the others' results stand

  // The finished GPUs' profiles are complete documents; the broken ones left nothing half-written.
  for (int i : {0, 4}) {
    const auto p = ceilings::read_profile(dir + "/" + host() + "-gpu" + std::to_string(i) + ".profile.json");
    EXPECT_EQ(p.device.index, i);
    EXPECT_EQ(p.ceilings.size(), 4u);
    EXPECT_NE(p.tool_version.find("not a measurement"), std::string::npos);
    // Each GPU's process measures only the peer pairs its GPU is in.
    EXPECT_NE(p.raw.at("measure").at("command").get<std::string>().find("--ceilings_p2p_scope=device"),
              std::string::npos);
  }
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    EXPECT_EQ(name.find(".partial."), std::string::npos) << name;
    EXPECT_EQ(name.find(".tmp."), std::string::npos) << name;  // write_file_atomic's temporary
    EXPECT_EQ(name.find(".checkpoint"), std::string::npos) << name;
    for (int i : {2, 3}) EXPECT_NE(name, host() + "-gpu" + std::to_string(i) + ".profile.json");
  }
  // The crashed GPU: the hbm family's finished case, the crashing one as an error; the gemm and latency
  // families, in processes of their own, measured.
  const auto crashed = ceilings::read_profile(dir + "/" + host() + "-gpu1.profile.json");
  ASSERT_EQ(crashed.ceilings.size(), 3u);
  EXPECT_EQ(crashed.ceilings[0].name, "hbm.copy");
  EXPECT_TRUE(crashed.find("gemm.bf16") && crashed.find("latency.launch"));
  ASSERT_EQ(crashed.errors.size(), 1u);
  EXPECT_EQ(crashed.errors[0].name, "hbm.read");  // the ceiling it feeds; the case is named in the reason
  EXPECT_NE(crashed.errors[0].reason.find("[hbm/read]"), std::string::npos) << crashed.errors[0].reason;
  EXPECT_NE(crashed.errors[0].reason.find("stopped while this case ran: ceilings-bench failed (killed by signal 6"),
            std::string::npos)
      << crashed.errors[0].reason;
  EXPECT_TRUE(crashed.skipped.empty());
  const json& m = crashed.raw.at("measure");
  EXPECT_FALSE(m.at("complete").get<bool>());
  ASSERT_EQ(m.at("families").size(), 3u);
  EXPECT_EQ(m.at("families")[0].at("family"), "hbm");
  EXPECT_EQ(m.at("families")[0].at("finished_cases"), 1);
  EXPECT_TRUE(m.at("families")[0].contains("failure"));
  EXPECT_FALSE(m.at("families")[1].contains("failure"));
  // No orphan: the hanging stand-in and the child it started (both ignore SIGTERM) are gone.
  std::ifstream pids(pidfile);
  pid_t pid = 0;
  int count = 0;
  while (pids >> pid) {
    ++count;
    EXPECT_TRUE(process_gone(pid)) << "pid " << pid << " survived the watchdog";
  }
  EXPECT_EQ(count, 2);
}

TEST(MultiGpu, ConcurrentRunsOverlapAndKeepIsolation) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_concurrent");
  const Env env{{"CEILINGS_STANDIN_DEVICES", "4"}, {"CEILINGS_STANDIN_MODE", "slow"}, {"CEILINGS_STANDIN_SLEEP", "2"},
                {"CEILINGS_STANDIN_MODE_3", "hang"}};
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_cli({"measure", "--all-gpus", "--concurrent", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", dir,
                          "--timeout", "4", "--kill-grace", "1"},
                         env, 60);
  const double took = seconds_since(start);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  // One at a time this would take 3 x 2 s + 5 s; together it is bounded by the hang's 4 s + 1 s.
  EXPECT_LT(took, 9.0);
  const json s = summary_of(dir);
  EXPECT_EQ(s.at("mode"), "concurrent");
  for (int i : {0, 1, 2}) EXPECT_EQ(state_of(s, i), "done") << i;
  EXPECT_EQ(state_of(s, 3), "timed_out");
  EXPECT_TRUE(s.at("comparison").at("compared").get<bool>());
  EXPECT_TRUE(s.at("comparison").at("below_peers").empty());
}

// --concurrent measures every GPU at once: a peer case, which reaches into the other GPUs, is held back with
// its reason (the others' numbers and its own would be wrong); one GPU at a time it runs.
TEST(MultiGpu, ConcurrentRunsHoldThePeerCasesBack) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_concurrent_peer");
  const Env env{{"CEILINGS_STANDIN_DEVICES", "2"}, {"CEILINGS_STANDIN_PEER", "1"}};
  auto r = run_cli({"measure", "--all-gpus", "--concurrent", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir",
                    dir + "/together"},
                   env, 60);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  for (int gpu : {0, 1}) {
    const auto p = ceilings::read_profile(dir + "/together/" + host() + "-gpu" + std::to_string(gpu) + ".profile.json");
    EXPECT_TRUE(p.find("hbm.copy")) << gpu;
    EXPECT_FALSE(p.find("nvlink.p2p_uni")) << gpu;
    ASSERT_EQ(p.skipped.size(), 1u) << gpu;
    EXPECT_EQ(p.skipped[0].name, "nvlink.p2p_uni");
    EXPECT_EQ(p.skipped[0].reason.rfind("not run: --concurrent measures every GPU at once", 0), 0u) << p.skipped[0].reason;
    EXPECT_EQ(p.gpus_measured_together, 2) << gpu;  // fleet and compare set it apart from one at a time
  }
  // One process per GPU holds them back too (review 89: its filter was --filter's, empty, and ran them).
  r = run_cli({"measure", "--all-gpus", "--concurrent", "--one-process", "--bench", CEILINGS_STANDIN_BENCH,
               "--out-dir", dir + "/one_process"},
              env, 60);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  for (int gpu : {0, 1}) {
    const auto p =
        ceilings::read_profile(dir + "/one_process/" + host() + "-gpu" + std::to_string(gpu) + ".profile.json");
    EXPECT_TRUE(p.find("hbm.copy")) << gpu;
    EXPECT_FALSE(p.find("nvlink.p2p_uni")) << gpu;
    ASSERT_EQ(p.skipped.size(), 1u) << gpu;
    EXPECT_EQ(p.skipped[0].name, "nvlink.p2p_uni");
  }
  r = run_cli({"measure", "--all-gpus", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", dir + "/one_by_one"}, env, 60);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto one = ceilings::read_profile(dir + "/one_by_one/" + host() + "-gpu1.profile.json");
  EXPECT_TRUE(one.find("nvlink.p2p_uni"));
  EXPECT_EQ(one.gpus_measured_together, 1);
}

// A GPU with slow links drags every GPU's slowest peer pair down to the same value; the node comparison
// goes by each GPU's own pairs' median, and names that GPU only.
TEST(MultiGpu, AGpuWithSlowLinksIsNamedByItsPairsMedian) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_slow_links");
  const Env env{{"CEILINGS_STANDIN_DEVICES", "4"}, {"CEILINGS_STANDIN_PEER", "1"}, {"CEILINGS_STANDIN_SCALE_2", "0.5"}};
  const auto r = run_cli({"measure", "--all-gpus", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", dir,
                          "--filter", "^nvlink/"},
                         env, 60);
  const json s = summary_of(dir);
  const json& below = s.at("comparison").at("below_peers");
  ASSERT_EQ(below.size(), 1u) << s.dump(2) << r.err;
  EXPECT_EQ(below[0].at("index"), 2);
  EXPECT_EQ(below[0].at("ceilings")[0].at("ceiling"), "nvlink.p2p_uni");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // what a fleet job reads
  EXPECT_NE(r.out.find("GPU 2 ("), std::string::npos) << r.out;
}

// Half a node 8% slower alike (one socket's switch): the node median sits between the halves, 4% from each, inside
// the 5% margin. The gap that splits the node names the slow half, against the fast half's median.
TEST(MultiGpu, HalfANodeSlowerAlikeIsNamed) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_split");
  Env env{{"CEILINGS_STANDIN_DEVICES", "8"}};
  for (int i = 4; i < 8; ++i) env.push_back({"CEILINGS_STANDIN_SCALE_" + std::to_string(i), "0.92"});
  const auto r = run_cli({"measure", "--all-gpus", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", dir, "--filter",
                          "^hbm/"},
                         env, 120);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("worse than the faster GPUs' median (the node splits in two)"), std::string::npos) << r.out;
  const json s = summary_of(dir);
  const json& below = s.at("comparison").at("below_peers");
  ASSERT_EQ(below.size(), 4u) << below.dump(2);
  for (const json& b : below) EXPECT_GE(b.at("index").get<int>(), 4);
}

// A GPU of another model in the node (a display GPU, a mixed server) is no peer of the others: each model is
// compared within itself. A GPU half as fast named "another model" failed the node as below its peers (review 30).
TEST(MultiGpu, EachModelIsComparedWithinItself) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_two_models");
  const Env env{{"CEILINGS_STANDIN_DEVICES", "4"}, {"CEILINGS_STANDIN_NAME_3", "NVIDIA RTX A400"},
                {"CEILINGS_STANDIN_SCALE_3", "0.5"}};
  const auto r = run_cli({"measure", "--all-gpus", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", dir}, env, 60);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("is below its peers"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("node comparison: 3 of 4 finished GPUs compared"), std::string::npos) << r.out;
  json s = summary_of(dir);
  EXPECT_EQ(s.at("comparison").at("gpus_compared"), 3);
  EXPECT_TRUE(s["comparison"].at("below_peers").empty()) << s.dump(2);
  EXPECT_NE(s["comparison"].at("note").get<std::string>().find("1 NVIDIA RTX A400"), std::string::npos) << s.dump(2);
  // Within the three of one model a slow one is still named.
  Env slow = env;
  slow.push_back({"CEILINGS_STANDIN_SCALE_1", "0.9"});
  const auto r2 = run_cli({"measure", "--all-gpus", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", dir}, slow, 60);
  EXPECT_EQ(r2.exit_code, 1) << r2.out << r2.err;
  EXPECT_NE(r2.out.find("GPU 1 (GPU-57a4d100-0000-0000-0000-000000000001, 00000000:01:00.0) is below its peers"),
            std::string::npos)
      << r2.out;
  EXPECT_EQ(r2.out.find("GPU 3 ("), std::string::npos) << r2.out;
  s = summary_of(dir);
  ASSERT_EQ(s.at("comparison").at("below_peers").size(), 1u) << s.dump(2);
  EXPECT_EQ(s["comparison"]["below_peers"][0].at("index"), 1);
}

TEST(MultiGpu, NamesTheGpuBelowItsPeers) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_below_peers");
  const Env env{{"CEILINGS_STANDIN_DEVICES", "4"}, {"CEILINGS_STANDIN_SCALE_2", "0.9"},
                {"CEILINGS_STANDIN_SCALE_1", "0.97"}};  // 3% below: inside the default 5% margin
  const auto r = run_cli({"measure", "--all-gpus", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", dir}, env, 60);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("GPU 2 (GPU-57a4d100-0000-0000-0000-000000000002, 00000000:02:00.0) is below its peers"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("GPU 1 ("), std::string::npos) << r.out;
  const json s = summary_of(dir);
  EXPECT_TRUE(s.at("complete").get<bool>());
  const json& below = s.at("comparison").at("below_peers");
  ASSERT_EQ(below.size(), 1u);
  EXPECT_EQ(below[0].at("index"), 2);
  EXPECT_EQ(below[0].at("uuid"), "GPU-57a4d100-0000-0000-0000-000000000002");
  EXPECT_EQ(below[0].at("pci_bus_id"), "00000000:02:00.0");
  // Every ceiling drove it, the latency too (higher is worse there): 4 ceilings, each ~8.5-11% worse.
  ASSERT_EQ(below[0].at("ceilings").size(), 4u);
  for (const json& c : below[0]["ceilings"]) {
    EXPECT_GT(c.at("below_median").get<double>(), 0.05) << c.dump();
    EXPECT_LT(c.at("below_median").get<double>(), 0.12) << c.dump();
  }
  // The node's output directory is a fleet input as it is: the profiles are read, the summary and raw JSON not.
  const auto fleet = run_cli({"fleet", dir, "--format", "json"});
  EXPECT_EQ(fleet.exit_code, 1) << fleet.err;
  const json f = ceilings::parse_json_text(fleet.out, "fleet output");
  EXPECT_EQ(f.at("read"), 4);
  EXPECT_EQ(f.at("files"), 4);
  ASSERT_EQ(f.at("outliers"), 1);
  EXPECT_EQ(f["groups"][0]["outliers"][0].at("index"), 2);
  // A wider margin names nobody.
  const auto wide = run_cli({"measure", "--all-gpus", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", dir, "--margin",
                             "15"},
                            env, 60);
  EXPECT_EQ(wide.exit_code, 0) << wide.out << wide.err;
}

// A GPU 10% below its node peers with a cv of 30% (32.5% of own noise at 10 samples: 2.73 standard errors for
// 4 GPUs' values compared) was dropped in silence: the
// run exited 0. It is unstable, not judged (exit 3 where nothing fails), in the output and the summary; beside a
// GPU as slow whose own spread is narrow, that one still fails the run (exit 1).
TEST(MultiGpu, AGpuBelowItsPeersWithinItsOwnSpreadIsUnstable) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_unstable");
  const Env env{{"CEILINGS_STANDIN_DEVICES", "4"}, {"CEILINGS_STANDIN_SCALE_2", "0.9"}, {"CEILINGS_STANDIN_CV_2", "0.3"}};
  const auto r = run_cli({"measure", "--all-gpus", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", dir}, env, 60);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("GPU 2 (GPU-57a4d100-0000-0000-0000-000000000002, 00000000:02:00.0) is unstable, not judged"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("worse than the node median"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("within its own measurement's spread (32.5%)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("is below its peers"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 GPU(s) unstable (not judged)"), std::string::npos) << r.out;
  const json s = summary_of(dir);
  EXPECT_TRUE(s.at("complete").get<bool>());
  EXPECT_TRUE(s.at("comparison").at("below_peers").empty()) << s.dump(2);
  const json& unstable = s.at("comparison").at("unstable");
  ASSERT_EQ(unstable.size(), 1u) << s.dump(2);
  EXPECT_EQ(unstable[0].at("index"), 2);
  EXPECT_EQ(unstable[0].at("uuid"), "GPU-57a4d100-0000-0000-0000-000000000002");
  EXPECT_EQ(unstable[0].at("pci_bus_id"), "00000000:02:00.0");
  ASSERT_EQ(unstable[0].at("ceilings").size(), 4u);
  for (const json& c : unstable[0]["ceilings"]) {
    EXPECT_GT(c.at("below_median").get<double>(), 0.05) << c.dump();
    const double k = c.at("own_spread_standard_errors").get<double>();
    EXPECT_GT(k, 2.0) << c.dump();  // raised for the values compared
    EXPECT_NEAR(c.at("own_noise").get<double>(), k * 1.2533 * 0.3 / std::sqrt(10.0), 1e-9) << c.dump();
    EXPECT_LT(c.at("below_median").get<double>(), c.at("own_noise").get<double>()) << c.dump();
    EXPECT_EQ(c.at("reference"), "the node median");
  }

  // Beside it a GPU as slow that its own spread cannot excuse: that one fails the run, the other stays unstable.
  const std::string dir6 = ceilings::test::scratch_dir("multi_gpu_unstable_and_below");
  Env six = env;
  six[0].second = "6";
  six.push_back({"CEILINGS_STANDIN_SCALE_1", "0.9"});
  const auto r6 = run_cli({"measure", "--all-gpus", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", dir6}, six, 90);
  EXPECT_EQ(r6.exit_code, 1) << r6.out << r6.err;
  EXPECT_NE(r6.out.find("GPU 1 (GPU-57a4d100-0000-0000-0000-000000000001, 00000000:01:00.0) is below its peers"),
            std::string::npos)
      << r6.out;
  EXPECT_NE(r6.out.find("GPU 2 (GPU-57a4d100-0000-0000-0000-000000000002, 00000000:02:00.0) is unstable"),
            std::string::npos)
      << r6.out;
  const json s6 = summary_of(dir6);
  ASSERT_EQ(s6.at("comparison").at("below_peers").size(), 1u) << s6.dump(2);
  EXPECT_EQ(s6["comparison"]["below_peers"][0].at("index"), 1);
  // A GPU judged below its peers is so beyond its own spread, which the summary records beside the deficit.
  const double k6 = s6["comparison"].at("own_spread_standard_errors").get<double>();
  EXPECT_GT(k6, 2.0);
  for (const json& c : s6["comparison"]["below_peers"][0].at("ceilings")) {
    EXPECT_DOUBLE_EQ(c.at("own_spread_standard_errors").get<double>(), k6) << c.dump();
    EXPECT_GT(c.at("own_noise").get<double>(), 0.0) << c.dump();
    EXPECT_GT(c.at("below_median").get<double>(), c.at("own_noise").get<double>()) << c.dump();
  }
  ASSERT_EQ(s6.at("comparison").at("unstable").size(), 1u) << s6.dump(2);
  EXPECT_EQ(s6["comparison"]["unstable"][0].at("index"), 2);
}

// Half a node 8% slower alike, each of them with a cv of 30%: the split would name them but for their own spread.
// They are unstable against the faster GPUs' median, not judged (the run exited 0).
TEST(MultiGpu, HalfANodeSlowerWithinItsOwnSpreadIsUnstable) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_split_unstable");
  Env env{{"CEILINGS_STANDIN_DEVICES", "8"}};
  for (int i = 4; i < 8; ++i) {
    env.push_back({"CEILINGS_STANDIN_SCALE_" + std::to_string(i), "0.92"});
    env.push_back({"CEILINGS_STANDIN_CV_" + std::to_string(i), "0.3"});
  }
  const auto r = run_cli({"measure", "--all-gpus", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", dir, "--filter",
                          "^hbm/"},
                         env, 120);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("worse than the faster GPUs' median (the node splits in two)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("4 GPU(s) unstable (not judged)"), std::string::npos) << r.out;
  const json s = summary_of(dir);
  EXPECT_TRUE(s.at("comparison").at("below_peers").empty()) << s.dump(2);
  const json& unstable = s.at("comparison").at("unstable");
  ASSERT_EQ(unstable.size(), 4u) << s.dump(2);
  for (const json& u : unstable) {
    EXPECT_GE(u.at("index").get<int>(), 4);
    EXPECT_EQ(u.at("ceilings").at(0).at("reference"), "the faster GPUs' median (the node splits in two)");
  }
}

// `ceilings ...` started in the background with `env` added to this process's environment, its output to
// /dev/null and its errors to `stderr_path`; the pid (0 where it could not start).
pid_t spawn_cli(const std::vector<std::string>& args, const std::vector<std::string>& env,
                const std::string& stderr_path) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // The inherited environment less what `env` sets (getenv takes the first of a name: an outer TMPDIR won).
  auto overridden = [&](const std::string& entry) {
    const std::string name = entry.substr(0, entry.find('='));
    return std::any_of(env.begin(), env.end(),
                       [&](const std::string& e) { return e.substr(0, e.find('=')) == name; });
  };
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e)
    if (!overridden(*e)) env_s.push_back(*e);
  env_s.insert(env_s.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_path.c_str(), O_WRONLY | O_CREAT, 0644);
  pid_t pid = 0;
  if (posix_spawn(&pid, CEILINGS_CLI, &actions, nullptr, argv.data(), envp.data()) != 0) pid = 0;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

// Its wait status once it ends, until `limit_s` after `start`; past that it is killed and nullopt returned.
std::optional<int> wait_for(pid_t pid, std::chrono::steady_clock::time_point start, double limit_s) {
  int status = 0;
  pid_t w = 0;
  while ((w = waitpid(pid, &status, WNOHANG)) == 0 && seconds_since(start) < limit_s)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (w != 0) return status;
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return std::nullopt;
}

TEST(MultiGpu, InterruptionKeepsFinishedResults) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_interrupt");
  const std::vector<std::string> args{CEILINGS_CLI, "measure", "--all-gpus", "--bench", CEILINGS_STANDIN_BENCH,
                                      "--out-dir", dir, "--kill-grace", "1"};
  const pid_t pid = spawn_cli(args, {"CEILINGS_STANDIN_DEVICES=3", "CEILINGS_STANDIN_MODE_1=slow", "CEILINGS_STANDIN_SLEEP=60"},
                              dir + "/stderr.txt");
  ASSERT_GT(pid, 0);

  // Wait until GPU 0 is done and GPU 1 is running, then send SIGTERM (as a scheduler or Ctrl-C would).
  const auto start = std::chrono::steady_clock::now();
  bool ready = false;
  while (!ready && seconds_since(start) < 30) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    try {
      const json s = summary_of(dir);
      ready = state_of(s, 0) == "done" && state_of(s, 1) == "running";
    } catch (const std::exception&) {
    }
  }
  EXPECT_TRUE(ready);
  kill(pid, SIGTERM);
  const auto status = wait_for(pid, start, 60);
  ASSERT_TRUE(status.has_value()) << "ceilings did not stop after SIGTERM";
  ASSERT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 3);
  EXPECT_LT(seconds_since(start), 30) << "the 60 s stand-in must have been stopped, not waited for";

  const json s = summary_of(dir);
  EXPECT_EQ(state_of(s, 0), "done");
  EXPECT_EQ(state_of(s, 1), "interrupted");
  EXPECT_EQ(state_of(s, 2), "not_started");
  EXPECT_NE(s.at("gpus").at(2).at("reason").get<std::string>().find("interrupted by SIGTERM"), std::string::npos)
      << s.dump();
  EXPECT_EQ(s.value("interrupted_by", ""), "SIGTERM");  // a time limit's signal, told from a terminal's SIGINT
  EXPECT_FALSE(s.at("complete").get<bool>());
  EXPECT_EQ(ceilings::read_profile(dir + "/" + host() + "-gpu0.profile.json").device.index, 0);
  EXPECT_FALSE(fs::exists(dir + "/" + host() + "-gpu1.profile.json"));
}

// `self-test` interrupted: no verdict (exit 3, naming the case), and its directory of case files removed (the
// default action of SIGINT left it in TMPDIR).
TEST(Interrupt, SelfTestStopsAndRemovesItsFiles) {
  const std::string tmp = ceilings::test::scratch_dir("self_test_interrupt");
  const std::string err = ceilings::test::scratch_dir("self_test_interrupt_err") + "/stderr.txt";
  const pid_t pid = spawn_cli({CEILINGS_CLI, "self-test"}, {"TMPDIR=" + tmp}, err);
  ASSERT_GT(pid, 0);
  // Its first case's directory is there: the run is under way.
  const auto start = std::chrono::steady_clock::now();
  auto started = [&] {
    for (const auto& d : fs::directory_iterator(tmp))
      if (fs::exists(d.path() / "0")) return true;
    return false;
  };
  while (!started() && seconds_since(start) < 30) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (!started()) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    FAIL() << "self-test made no case directory in " << tmp << " in 30 s";
  }
  kill(pid, SIGINT);
  const auto status = wait_for(pid, start, 60);
  ASSERT_TRUE(status.has_value()) << "self-test did not stop after SIGINT";
  ASSERT_TRUE(WIFEXITED(*status)) << "ended by a signal: its files were left";
  EXPECT_EQ(WEXITSTATUS(*status), 3);
  std::ifstream in(err);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("ceilings self-test: interrupted by SIGINT during case "), std::string::npos) << text;
  EXPECT_TRUE(fs::is_empty(tmp)) << "left behind in " << tmp;
}

// --timeout bounds the GPU listing too (a CUDA start-up hung on a sick GPU): it took a fixed 120 s first.
TEST(MultiGpu, TheTimeoutBoundsTheGpuListing) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_listing_timeout");
  const std::string bench = dir + "/hang.sh";
  std::ofstream(bench) << "#!/bin/sh\nexec sleep 300\n";
  ASSERT_EQ(std::system(("chmod +x " + bench).c_str()), 0);
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_cli({"measure", "--bench", bench, "--out", dir + "/a.profile.json", "--timeout", "4",
                          "--kill-grace", "0"},
                         {}, 100);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  // Once, not twice: the GPU listing that hung ends the run, and the cases' listing is not tried under a limit of its
  // own (review 89: 8 s against --timeout 4; 240 s by default).
  EXPECT_LT(seconds_since(start), 7) << r.err;
}

// Text another program printed is kept printable in the profile, a tab as a space: measure wrote a profile whose
// reasons held a tab, which every command then refused (review 89).
TEST(MultiGpu, ATabInTheBenchsWordsLeavesAReadableProfile) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_tab");
  const std::string bench = dir + "/tab.sh";
  std::ofstream(bench) << "#!/bin/sh\ncase \"$*\" in *benchmark_filter=*gemm*) printf 'no GPU:\\tgone\\n' >&2; exit 3;; "
                          "esac\nexec " CEILINGS_STANDIN_BENCH " \"$@\"\n";
  ASSERT_EQ(std::system(("chmod +x " + bench).c_str()), 0);
  const std::string out = dir + "/tab.profile.json";
  const auto r = run_cli({"measure", "--bench", bench, "--out", out}, {}, 60);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  const auto p = ceilings::read_profile(out);  // threw: a control character (0x09)
  bool quoted = false;
  for (const auto* list : {&p.errors, &p.skipped})
    for (const auto& s : *list) quoted = quoted || s.reason.find("no GPU: gone") != std::string::npos;
  EXPECT_TRUE(quoted) << ceilings::profile_to_json(p).dump();
  EXPECT_EQ(run_cli({"show", out}).exit_code, 0);
}

// Whether `sig` is pending for process `pid` (/proc/PID/status: SigPnd for its thread, ShdPnd for the process):
// a signal not yet taken, with which the kernel merges another of its kind.
bool signal_pending(pid_t pid, int sig) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  const unsigned long long bit = 1ULL << (sig - 1);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("SigPnd:", 0) == 0 || line.rfind("ShdPnd:", 0) == 0)
      if (std::stoull(line.substr(7), nullptr, 16) & bit) return true;
  return false;
}

// A second Ctrl-C does not wait out the kill grace: a family that ignores SIGTERM is killed at once.
TEST(MultiGpu, ASecondInterruptKillsAtOnce) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_second_interrupt");
  const std::string pidfile = dir + "/pids.txt";
  std::remove(pidfile.c_str());
  const pid_t pid = spawn_cli({CEILINGS_CLI, "measure", "--bench", CEILINGS_STANDIN_BENCH, "--out",
                               dir + "/a.profile.json", "--kill-grace", "60"},
                              {"CEILINGS_STANDIN_MODE=hang", "CEILINGS_STANDIN_PIDFILE=" + pidfile}, "/dev/null");
  ASSERT_GT(pid, 0);
  // The hanging family is running (it wrote its pids) before the first interrupt.
  const auto start = std::chrono::steady_clock::now();
  while (!fs::exists(pidfile) && seconds_since(start) < 30) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(fs::exists(pidfile));
  kill(pid, SIGINT);
  // The second only once the first is taken: sent while the first is still pending (a loaded machine that has not
  // run the process yet), the kernel merges the two into one (review 50).
  const auto first = std::chrono::steady_clock::now();
  while (signal_pending(pid, SIGINT) && seconds_since(first) < 30)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(signal_pending(pid, SIGINT)) << "the first interrupt was not taken in 30 s";
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto second = std::chrono::steady_clock::now();
  kill(pid, SIGINT);
  const auto status = wait_for(pid, start, 90);
  ASSERT_TRUE(status.has_value()) << "ceilings did not stop after two interrupts";
  EXPECT_LT(seconds_since(second), 10) << "the second interrupt waited out the 60 s kill grace";
  ASSERT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 3);
}

// Two runs into one --out: the second stops at once (exit 2, naming the first), and the first's files are
// its own. A run that finds what a killed run left beside its output (per-family files) removes it.
TEST(MultiGpu, ASecondRunIntoTheSameOutIsRefused) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_same_out");
  const std::string name = host() + "-gpu0";  // the name --all-gpus gives GPU 0's profile too
  const std::string out = dir + "/" + name + ".profile.json", lock = dir + "/." + name + ".bench.json.lock";
  const std::string stale = dir + "/" + name + ".bench.json.partial.1-0badf00d.0.json.checkpoint";
  const std::string stale_temp = dir + "/." + name + ".bench.json.partial.1-0badf00d.0.json.checkpoint.tmp.Xy12Ab";
  std::ofstream(stale) << "{\"benchmarks\": []}";
  std::ofstream(stale_temp) << "{";
  std::ofstream(out).close();  // there (empty, replaceable) before the run, so a link to it is not dangling
  const pid_t pid = spawn_cli({CEILINGS_CLI, "measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", out,
                               "--kill-grace", "1"},
                              {"CEILINGS_STANDIN_MODE=slow", "CEILINGS_STANDIN_SLEEP=60"}, dir + "/first.txt");
  ASSERT_GT(pid, 0);
  const auto start = std::chrono::steady_clock::now();
  while (!fs::exists(lock) && seconds_since(start) < 30) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(fs::exists(lock));
  // The lock file is there from its open, before the lock is held and the clean-up runs: wait for the clean-up
  // itself (a fixed 300 ms could pass first on a loaded machine, review 96), within 30 s.
  while ((fs::exists(stale) || fs::exists(stale_temp)) && seconds_since(start) < 30)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_FALSE(fs::exists(stale_temp));

  const std::string holder = "(pid " + std::to_string(pid) + " on ";
  auto r = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", out}, {}, 30);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("another run is writing --out '" + out + "' " + holder), std::string::npos) << r.err;
  // --all-gpus into that directory would write the same file: refused before its node summary is written.
  r = run_cli({"measure", "--all-gpus", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", dir},
              {{"CEILINGS_STANDIN_DEVICES", "2"}}, 30);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(holder), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/" + host() + ".node-summary.json"));
  EXPECT_FALSE(fs::exists(dir + "/." + host() + "-gpu1.bench.json.lock")) << "the locks taken are given back";
  // A symlink to the profile writes it too, beside another raw JSON: refused by the profile's own lock.
  fs::create_directories(dir + "/elsewhere");
  fs::create_symlink(out, dir + "/elsewhere/link.profile.json");
  r = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", dir + "/elsewhere/link.profile.json"}, {}, 30);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(holder), std::string::npos) << r.err;
  // Another name for the same files: --out without ".profile" writes the same raw JSON and per-family files.
  r = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", dir + "/" + name + ".json"}, {}, 30);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(holder), std::string::npos) << r.err;
  // Another file in the same directory is no conflict.
  r = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", dir + "/b.profile.json"}, {}, 30);
  EXPECT_EQ(r.exit_code, 0) << r.err;

  kill(pid, SIGTERM);
  const auto status = wait_for(pid, start, 60);
  ASSERT_TRUE(status.has_value());
  EXPECT_FALSE(fs::exists(lock)) << "the lock file outlived its run";
  EXPECT_FALSE(fs::exists(dir + "/." + name + ".profile.json.lock")) << "the profile's lock file outlived its run";
  std::ifstream first(dir + "/first.txt");
  const std::string first_err((std::istreambuf_iterator<char>(first)), std::istreambuf_iterator<char>());
  EXPECT_NE(first_err.find("removed 2 file(s) an earlier run that was killed left"), std::string::npos) << first_err;
}

TEST(MultiGpu, NoGpuIsIncompleteAndWritesNothing) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_none");
  const auto r = run_cli({"measure", "--all-gpus", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", dir},
                         {{"CEILINGS_STANDIN_DEVICES", "0"}}, 30);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("no usable GPU"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(dir));
  // An --out-dir that does not exist yet is not created for nothing (a CLI probe found it left empty).
  const auto r2 = run_cli({"measure", "--all-gpus", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", dir + "/new"},
                          {{"CEILINGS_STANDIN_DEVICES", "0"}}, 30);
  EXPECT_EQ(r2.exit_code, 3) << r2.err;
  EXPECT_FALSE(fs::exists(dir + "/new"));
}

TEST(MultiGpu, SingleGpuPathSharesTheRunner) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_single");
  const std::string out = dir + "/one.profile.json";
  auto r = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--device", "1", "--out", out},
                   {{"CEILINGS_STANDIN_DEVICES", "2"}}, 30);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ceilings::read_profile(out).device.index, 1);
  EXPECT_EQ(ceilings::read_profile(out).raw.at("measure").at("command").get<std::string>().find("p2p_scope"),
            std::string::npos);  // one GPU measured alone: every pair of the node
  EXPECT_TRUE(fs::exists(dir + "/one.bench.json"));
  // --filter picks the cases; each family then runs with an exact filter of its own cases.
  r = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", dir + "/some.profile.json", "--filter",
               "^(hbm/read|latency)/"},
              {}, 30);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto some = ceilings::read_profile(dir + "/some.profile.json");
  ASSERT_EQ(some.ceilings.size(), 2u);
  EXPECT_EQ(some.ceilings[0].name, "hbm.read");
  EXPECT_EQ(some.ceilings[1].name, "latency.launch");
  ASSERT_EQ(some.raw.at("measure").at("families").size(), 2u);
  EXPECT_NE(some.raw.at("measure").at("command").get<std::string>().find(
                "--benchmark_filter=^(hbm/read/manual_time)$"),
            std::string::npos);
  // The user's own command line, as a shell would re-run it: the filter's parentheses and | quoted.
  const std::string invocation = some.raw.at("measure").at("invocation").get<std::string>();
  EXPECT_NE(invocation.find("ceilings measure --bench "), std::string::npos) << invocation;
  EXPECT_NE(invocation.find(" --filter '^(hbm/read|latency)/'"), std::string::npos) << invocation;
  // The same watchdog on the single-GPU path: a hang becomes exit 3 with the reason.
  r = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", dir + "/hang.profile.json", "--timeout", "1.5",
               "--kill-grace", "1"},
              {{"CEILINGS_STANDIN_MODE", "hang"}}, 30);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  // The limit as given, not rounded to whole seconds (0.4 read "0 s", which means no limit).
  EXPECT_NE(r.err.find("ran past the 1.50 s timeout"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/hang.profile.json"));
  EXPECT_FALSE(fs::exists(dir + "/hang.bench.json"));
  // Flags of one mode are refused with the other.
  r = run_cli({"measure", "--all-gpus", "--device", "1", "--bench", CEILINGS_STANDIN_BENCH}, {}, 30);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = run_cli({"measure", "--concurrent", "--bench", CEILINGS_STANDIN_BENCH}, {}, 30);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  // Arguments ceilings-bench rejects are bad input for the whole node, not an incomplete GPU.
  r = run_cli({"measure", "--all-gpus", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", dir + "/bad", "--bench-arg",
               "--no_such_flag"},
              {{"CEILINGS_STANDIN_DEVICES", "2"}}, 30);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(summary_of(dir + "/bad").at("gpus").at(1).at("state"), "failed");
}

// A run stopped by its timeout keeps the cases it finished: a profile marked incomplete, the raw JSON of
// those cases, the running case as an error and the rest (the later families too) as not run; exit 3.
TEST(MultiGpu, TimedOutRunKeepsItsFinishedCases) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_partial");
  const std::string out = dir + "/stall.profile.json";
  const auto r = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", out, "--timeout", "2",
                          "--kill-grace", "1"},
                         {{"CEILINGS_STANDIN_MODE", "stall"}}, 30);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("timeout"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("kept the 1 finished case(s) of 4"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ceilings measure: family hbm: 1 of 2 case(s) finished; ceilings-bench ran past the 2 s"),
            std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("running gemm"), std::string::npos) << r.err;  // the progress names no family that never ran
  EXPECT_NE(r.out.find("hbm.copy"), std::string::npos) << r.out;  // the table of what was kept
  EXPECT_NE(r.out.find("INCOMPLETE run: 1 of 4 cases finished; ceilings-bench ran past the 2 s timeout"),
            std::string::npos) << r.out;
  const auto p = ceilings::read_profile(out);
  ASSERT_EQ(p.ceilings.size(), 1u);
  EXPECT_TRUE(p.find("hbm.copy"));
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].name, "hbm.read");
  EXPECT_NE(p.errors[0].reason.find("stopped while this case ran"), std::string::npos);
  ASSERT_EQ(p.skipped.size(), 2u);
  EXPECT_EQ(p.skipped[0].name, "gemm.bf16");
  EXPECT_NE(p.skipped[0].reason.find("[gemm/bf16/m:8192]"), std::string::npos) << p.skipped[0].reason;
  EXPECT_EQ(p.skipped[1].name, "latency.launch");
  EXPECT_EQ(p.skipped[1].reason.rfind("not run: ceilings-bench ran past the 2 s timeout", 0), 0u) << p.skipped[1].reason;
  EXPECT_FALSE(p.raw.at("measure").at("complete").get<bool>());
  EXPECT_EQ(p.raw.at("measure").at("finished_cases"), 1);
  // Every family's outcome, the ones that never started too.
  const json& families = p.raw.at("measure").at("families");
  ASSERT_EQ(families.size(), 3u) << families.dump();
  EXPECT_EQ(families[1].at("family"), "gemm");
  EXPECT_EQ(families[1].at("finished_cases"), 0);
  EXPECT_EQ(families[1].at("failure").get<std::string>().rfind("not run: ceilings-bench ran past the 2 s", 0), 0u)
      << families[1].dump();
  EXPECT_EQ(families[2].at("family"), "latency");
  const json raw = ceilings::read_json_file(dir + "/stall.bench.json");
  EXPECT_EQ(raw.at("benchmarks").size(), 1u);
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    EXPECT_TRUE(name == "stall.profile.json" || name == "stall.bench.json") << name;
  }
}

// --family-timeout: the stalled family is cut at its own limit, keeps its finished case, and the families
// after it still run; the run is incomplete (exit 3), not stopped.
// In the node table, a case a family's timeout cut short is not measured, not a failed case (review 111).
TEST(MultiGpu, ACaseCutShortIsNotCalledFailed) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_cut_case");
  const auto r = run_cli({"measure", "--all-gpus", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", dir,
                          "--family-timeout", "2", "--timeout", "60", "--kill-grace", "1"},
                         {{"CEILINGS_STANDIN_DEVICES", "3"}, {"CEILINGS_STANDIN_MODE_1", "stall"}}, 60);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("(1 case(s) cut short, not measured: hbm.read)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("failed case"), std::string::npos) << r.out;
  // The node summary and the profile count it apart too (review 113).
  const json s = summary_of(dir);
  EXPECT_EQ(s["gpus"][1]["failed_cases"], 0);
  EXPECT_EQ(s["gpus"][1]["cut_short_cases"], 1);
  const auto p = ceilings::read_profile(dir + "/" + s["gpus"][1]["profile"].get<std::string>());
  EXPECT_EQ(p.raw.at("measure").at("failed_cases"), 0);
  EXPECT_EQ(p.raw.at("measure").at("cut_short_cases"), 1);
}

TEST(MultiGpu, AFamilyPastItsOwnTimeoutDoesNotStarveTheNext) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_family_timeout");
  const std::string out = dir + "/stall.profile.json";
  const auto r = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", out, "--family-timeout", "2",
                          "--timeout", "60", "--kill-grace", "1"},
                         {{"CEILINGS_STANDIN_MODE", "stall"}}, 60);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("ceilings measure: family hbm: 1 of 2 case(s) finished; ceilings-bench ran past the 2 s "
                       "family timeout (--family-timeout)"),
            std::string::npos)
      << r.err;
  const auto p = ceilings::read_profile(out);
  EXPECT_TRUE(p.find("hbm.copy"));
  EXPECT_TRUE(p.find("gemm.bf16")) << "the family after the stalled one ran";
  EXPECT_TRUE(p.find("latency.launch"));
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].name, "hbm.read");
  EXPECT_NE(p.errors[0].reason.find("stopped while this case ran"), std::string::npos) << p.errors[0].reason;
  EXPECT_TRUE(p.skipped.empty());
  EXPECT_FALSE(p.raw.at("measure").at("complete").get<bool>());
  // Without it the same stall takes the whole --timeout and every later family with it.
  const auto whole = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", dir + "/whole.profile.json",
                              "--timeout", "2", "--kill-grace", "1"},
                             {{"CEILINGS_STANDIN_MODE", "stall"}}, 60);
  EXPECT_EQ(whole.exit_code, 3) << whole.err;
  EXPECT_FALSE(ceilings::read_profile(dir + "/whole.profile.json").find("gemm.bf16"));
  // A family cut at its own limit that leaves --timeout used up: the families after it are still each in
  // measure.families (not run), as a stopped run's are.
  const auto used_up = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", dir + "/used.profile.json",
                                "--timeout", "1", "--family-timeout", "0.95", "--kill-grace", "0"},
                               {{"CEILINGS_STANDIN_MODE", "stall"}}, 60);
  EXPECT_EQ(used_up.exit_code, 3) << used_up.err;
  const auto families = ceilings::read_profile(dir + "/used.profile.json").raw.at("measure").at("families");
  ASSERT_EQ(families.size(), 3u) << families.dump();
  EXPECT_EQ(families.back().at("finished_cases"), 0) << families.dump();
  // A name the per-family files beside the raw JSON would push past 255 bytes: refused up front.
  const auto long_name = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out",
                                  dir + "/" + std::string(225, 'n') + ".profile.json"},
                                 {}, 30);
  EXPECT_EQ(long_name.exit_code, 2) << long_name.err;
  EXPECT_NE(long_name.err.find("a name too long for the files written beside it"), std::string::npos) << long_name.err;
  // With every family in one process there is no family to cut: refused, not silently ignored.
  const auto both = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", dir + "/x.profile.json",
                             "--family-timeout", "2", "--one-process"},
                            {}, 30);
  EXPECT_EQ(both.exit_code, 2) << both.err;
  EXPECT_NE(both.err.find("--one-process"), std::string::npos) << both.err;
}

// A family that exits 0 without reporting a listed case (a name that changed since the listing, e.g. one
// sized from free memory, or a filter that missed it): that case is an error, not silently dropped; the
// progress count still reaches the total, and the node summary counts every error of the profile.
TEST(MultiGpu, UnreportedCaseIsAnError) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_unreported");
  const auto r = run_cli({"measure", "--all-gpus", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", dir},
                         {{"CEILINGS_STANDIN_DEVICES", "1"}, {"CEILINGS_STANDIN_MODE", "unlisted"}}, 30);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("[4/4 "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("[5/4 "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ceilings measure: family hbm: 1 of 2 case(s) finished; ceilings-bench exited 0 without "
                       "reporting 1"),
            std::string::npos) << r.err;
  const auto p = ceilings::read_profile(dir + "/" + host() + "-gpu0.profile.json");
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].name, "hbm.copy");
  EXPECT_EQ(p.errors[0].reason.rfind("not reported: ceilings-bench exited 0 without reporting 1 of the family's 2", 0),
            0u) << p.errors[0].reason;
  EXPECT_TRUE(p.find("hbm.read"));
  EXPECT_TRUE(p.find("latency.launch"));
  EXPECT_FALSE(p.raw.at("measure").at("complete").get<bool>());
  EXPECT_EQ(p.raw.at("measure").at("failed_cases"), 1);
  const json s = summary_of(dir);
  EXPECT_EQ(state_of(s, 0), "done");
  EXPECT_EQ(s["gpus"][0]["failed_cases"], 1);
  EXPECT_FALSE(s["complete"].get<bool>());
}

namespace {

// One GPU measured with the stand-in in `mode`: the exit code (checked) and the profile it wrote.
ceilings::Profile measure_standin(const std::string& mode, int expected_exit, const std::string& devices = "1") {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_" + mode);
  const auto r = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", dir + "/x.profile.json"},
                         {{"CEILINGS_STANDIN_DEVICES", devices}, {"CEILINGS_STANDIN_MODE", mode}}, 30);
  EXPECT_EQ(r.exit_code, expected_exit) << mode << "\n" << r.err;
  return ceilings::read_profile(dir + "/x.profile.json");
}

std::set<std::string> error_names(const ceilings::Profile& p) {
  std::set<std::string> names;
  for (const auto& e : p.errors) names.insert(e.name);
  return names;
}

}  // namespace

// A family that exits 0 with JSON but no benchmarks array: its cases are errors, not silently gone.
TEST(MultiGpu, AFamilyWithNoBenchmarksArrayLosesItsCasesAsErrors) {
  const auto p = measure_standin("nobench", 3);
  EXPECT_EQ(error_names(p), (std::set<std::string>{"hbm.copy", "hbm.read"}));
  EXPECT_NE(p.errors[0].reason.find("no benchmarks array"), std::string::npos) << p.errors[0].reason;
  EXPECT_TRUE(p.find("gemm.bf16"));  // the families after it, with their device record, still count
}

// A family that measured another GPU than the first (one fell off the bus, and --ceilings_device named the
// next): its numbers are not filed under the first GPU.
TEST(MultiGpu, AFamilyThatMeasuredAnotherGpuIsNotMerged) {
  const auto p = measure_standin("othergpu", 3, "2");
  EXPECT_TRUE(p.find("hbm.copy"));
  EXPECT_EQ(error_names(p), (std::set<std::string>{"gemm.bf16", "latency.launch"}));
  for (const auto& e : p.errors)
    EXPECT_NE(e.reason.find("measured another GPU than the run's first family"), std::string::npos) << e.reason;

  // Crashing as well: the crash is said first, and every case of those families is an error (none "not run")
  const auto q = measure_standin("othergpu_crash", 3, "2");
  EXPECT_EQ(error_names(q), (std::set<std::string>{"gemm.bf16", "latency.launch"}));
  for (const auto& e : q.errors)
    EXPECT_NE(e.reason.find("; and ceilings-bench measured another GPU"), std::string::npos) << e.reason;
  EXPECT_TRUE(q.skipped.empty()) << q.skipped[0].reason;
}

// `--bench-arg --ceilings_device=3` measured GPU 3 under every GPU's name (a node with a slow GPU 0 passed), and
// `--bench-arg --benchmark_out=FILE` wrote over a user's file (review 22 #2): a flag measure sets itself is bad
// input, before anything runs. A run that measured another GPU than the one listed at its index is not filed
// under that one.
TEST(MultiGpu, ABenchArgCannotRedirectTheRun) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_owned_args");
  const std::string notes = dir + "/notes.txt";
  { std::ofstream(notes) << "my notes\n"; }
  for (const auto& [arg, instead] : std::vector<std::pair<std::string, std::string>>{
           {"--ceilings_device=3", "use --device, or --all-gpus"},
           {"-ceilings_device=3", "use --device, or --all-gpus"},
           {"--benchmark_out=" + notes, "measure writes the raw JSON beside the profile"},
           {"--benchmark_out_format=csv", "measure reads JSON"},
           {"--ceilings_checkpoint=" + notes, "measure keeps a checkpoint of its own"},
           {"--benchmark_filter=hbm", "use --filter"},
           {"--benchmark_list_tests", "measure lists the cases itself"},
           {"--ceilings_list_devices", "measure lists the GPUs itself"},
           {"--benchmark_format=json", "measure reads the console format"},
           {"--benchmark_color=true", "measure reads the console format without colours"}}) {
    for (const bool all : {false, true}) {
      std::vector<std::string> args{"measure", "--bench", CEILINGS_STANDIN_BENCH, "--bench-arg", arg};
      if (all) args.insert(args.end(), {"--all-gpus", "--out-dir", dir + "/node"});
      else args.insert(args.end(), {"--out", dir + "/x.profile.json"});
      const auto r = run_cli(args, {{"CEILINGS_STANDIN_DEVICES", "4"}}, 30);
      EXPECT_EQ(r.exit_code, 2) << arg << "\n" << r.err;
      const std::string flag = arg.substr(arg.find_first_not_of('-'), arg.find('=') - arg.find_first_not_of('-'));
      EXPECT_NE(r.err.find("--bench-arg '" + arg + "': measure sets --" + flag + " itself (" + instead),
                std::string::npos)
          << r.err;
      EXPECT_EQ(r.out, "") << arg;
    }
  }
  EXPECT_EQ(ceilings::read_text_file(notes), "my notes\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1) << "nothing but the notes";

  // The GPU each family measured is the one listed at the run's index (its health is read by that bus id).
  const std::string out = dir + "/shifted.profile.json";
  const auto r = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", out},
                         {{"CEILINGS_STANDIN_DEVICES", "3"}, {"CEILINGS_STANDIN_MODE", "shifted"}}, 30);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("ceilings-bench measured GPU-57a4d100-0000-0000-0000-000000000001 (bus 00000000:01:00.0), not "
                       "the GPU listed at its index (GPU-57a4d100-0000-0000-0000-000000000000, bus 00000000:00:00.0)"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(out)) << "no ceiling of GPU 1 filed under GPU 0";
  // Nor another GPU on the listed bus (review 99: a MIG instance's sibling shares its bus id; it was filed, exit 0).
  const auto sibling = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", dir + "/sibling.profile.json"},
                               {{"CEILINGS_STANDIN_DEVICES", "3"}, {"CEILINGS_STANDIN_MODE", "sibling"}}, 30);
  EXPECT_EQ(sibling.exit_code, 3) << sibling.err;
  EXPECT_NE(sibling.err.find("ceilings-bench measured GPU-57a4d100-0000-0000-0000-000000000100 (bus 00000000:00:00.0), "
                             "not the GPU listed at its index (GPU-57a4d100-0000-0000-0000-000000000000, bus "
                             "00000000:00:00.0)"),
            std::string::npos)
      << sibling.err;
  EXPECT_FALSE(fs::exists(dir + "/sibling.profile.json"));
  EXPECT_NE(r.err.find("family hbm: 0 of 2 case(s) finished"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("family gemm"), std::string::npos) << "no later family measures the wrong GPU\n" << r.err;
  // With --all-gpus: that GPU fails, its node-mates measure.
  const auto node = run_cli({"measure", "--all-gpus", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", dir + "/node"},
                            {{"CEILINGS_STANDIN_DEVICES", "3"}, {"CEILINGS_STANDIN_MODE_0", "shifted"}}, 60);
  EXPECT_EQ(node.exit_code, 3) << node.err;
  const json summary = summary_of(dir + "/node");
  EXPECT_EQ(state_of(summary, 0), "failed");
  EXPECT_EQ(state_of(summary, 1), "done");
  EXPECT_EQ(state_of(summary, 2), "done");
}

// The first family's device record unusable ({}), the next's whole: the run is described by that one, not lost.
TEST(MultiGpu, ADeviceRecordFromALaterFamilyServesWhereTheFirstsIsUnusable) {
  const auto p = measure_standin("nodevice", 0);
  EXPECT_TRUE(p.find("hbm.copy"));
  EXPECT_TRUE(p.find("gemm.bf16"));
  EXPECT_EQ(p.device.index, 0);
}

// One GPU's run has a limit unless told otherwise (review 18: a hung family held README command (1) forever): the
// profile records the 7200 s it ran under; --timeout 0 is no limit, and a given one is recorded as given.
TEST(MultiGpu, OneGpuRunsUnderADefaultTimeout) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_default_timeout");
  for (const auto& [args, expected] : {std::pair<std::vector<std::string>, double>{{}, 7200},
                                       {{"--timeout", "0"}, 0},
                                       {{"--timeout", "600"}, 600}}) {
    std::vector<std::string> a{"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", dir + "/p.profile.json"};
    a.insert(a.end(), args.begin(), args.end());
    const auto r = run_cli(a, {}, 30);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_DOUBLE_EQ(ceilings::read_profile(dir + "/p.profile.json").raw.at("measure").at("timeout_s").get<double>(),
                     expected);
  }
}

// Families that exit 0 and write nothing: every case is an error of its own (none "ran"); nothing is
// written, and no temporary file stays.
TEST(MultiGpu, FamiliesThatWriteNothingFailTheRun) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_nothing");
  const auto r = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", dir + "/x.profile.json"},
                         {{"CEILINGS_STANDIN_MODE", "sleep"}, {"CEILINGS_STANDIN_SLEEP", "0"}}, 30);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("family gemm: 0 of 1 case(s) finished; ceilings-bench exited 0 without a usable result: it "
                       "wrote no results file (--benchmark_out)"),
            std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(".partial."), std::string::npos) << r.err;  // not a scratch file it never wrote
  EXPECT_TRUE(fs::is_empty(dir)) << r.err;
}

// An extra argument the listing accepts but the measuring run rejects (exit 2 in the first family): bad
// input, exit 2, no other family started, nothing written.
TEST(MultiGpu, ArgumentRejectedByTheFirstFamilyIsBadInput) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_rejected");
  auto r = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", dir + "/x.profile.json", "--bench-arg",
                    "--standin_mode=no_such_mode"},
                   {}, 30);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("rejected its arguments"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unknown mode 'no_such_mode'"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("family gemm"), std::string::npos) << r.err;  // stopped after the first family
  EXPECT_TRUE(fs::is_empty(dir)) << r.err;
  r = run_cli({"measure", "--all-gpus", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", dir, "--bench-arg",
               "--standin_mode=no_such_mode"},
              {{"CEILINGS_STANDIN_DEVICES", "2"}}, 30);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const json s = summary_of(dir);
  EXPECT_EQ(state_of(s, 0), "failed");
  EXPECT_EQ(state_of(s, 1), "failed");
  EXPECT_FALSE(s["gpus"][0].contains("profile"));
  // A --filter that matches nothing: bad input, with Google Benchmark's own words.
  r = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", dir + "/y.profile.json", "--filter", "^nothing$"},
              {}, 30);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("no benchmark matches --filter '^nothing$'\n  Failed to match any benchmarks"), std::string::npos)
      << r.err;
  // One that is no regex at all: bad input too, with the compiler's words (review 99: the stand-in aborted on it)
  r = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", dir + "/y.profile.json", "--filter", "("}, {}, 30);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("no benchmark matches --filter '('\n  Could not compile benchmark re: "), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir + "/y.profile.json"));
  // A program that lists nothing with no --filter given: named, not a filter that matched nothing.
  r = run_cli({"measure", "--bench", "/bin/true", "--out", dir + "/z.profile.json"}, {}, 30);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("/bin/true listed no benchmarks"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("--filter"), std::string::npos) << r.err;
}

// A family that crashes after its last case (say, in teardown): every case is kept from its checkpoint,
// and the crash is an error of the family, so the run is incomplete (exit 3) but loses no number.
TEST(MultiGpu, CrashAfterTheLastCaseKeepsEveryCase) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_crash_after");
  const std::string out = dir + "/x.profile.json";
  const auto r = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", out},
                         {{"CEILINGS_STANDIN_MODE", "crash_after"}}, 30);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  const auto p = ceilings::read_profile(out);
  EXPECT_EQ(p.ceilings.size(), 4u);
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].name, "hbm");
  EXPECT_EQ(p.errors[0].reason.rfind("ceilings-bench failed after its last case: ceilings-bench failed (killed by signal", 0),
            0u) << p.errors[0].reason;
  EXPECT_TRUE(p.skipped.empty());
  EXPECT_EQ(p.raw.at("measure").at("finished_cases"), 4);
  EXPECT_EQ(p.raw.at("measure").at("families").at(0).at("finished_cases"), 2);
  EXPECT_NE(r.err.find("[4/4 "), std::string::npos) << r.err;
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_TRUE(e.path().filename() == "x.profile.json" || e.path().filename() == "x.bench.json") << e.path();
}

// A family that crashes before its first case: its first case is the error (with the crash and the
// process's last stderr line), the rest of it not run; the other families measure.
TEST(MultiGpu, CrashBeforeAnyCaseCostsOnlyItsFamily) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_crash_early");
  const std::string out = dir + "/x.profile.json";
  const auto r = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", out},
                         {{"CEILINGS_STANDIN_MODE", "crash_early"}}, 30);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("family hbm: 0 of 2 case(s) finished; ceilings-bench failed (killed by signal"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find("standin: crashing at start-up"), std::string::npos) << r.err;
  const auto p = ceilings::read_profile(out);
  EXPECT_EQ(p.ceilings.size(), 2u);
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].name, "hbm.copy");
  ASSERT_EQ(p.skipped.size(), 1u);
  EXPECT_EQ(p.skipped[0].name, "hbm.read");
  EXPECT_NE(r.err.find("[4/4 "), std::string::npos) << r.err;
}

// A --bench that is executable but no program (exec format error) is the user's input, exit 2, and stops the
// run at once; a missing --out-dir is made, as --all-gpus makes it.
TEST(MultiGpu, ABenchThatCannotRunIsBadInputAndOutDirIsMade) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_bad_bench");
  const std::string text = dir + "/not-a-program";
  { std::ofstream(text) << "hello\n"; }
  fs::permissions(text, fs::perms::owner_all);
  auto r = run_cli({"measure", "--bench", text, "--out", dir + "/x.profile.json"}, {}, 30);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--bench cannot be run: " + text + ": Exec format error"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/x.profile.json"));
  r = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", dir + "/made/here"}, {}, 30);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir + "/made/here/" + host() + "-gpu0.profile.json"));
  // No GPU: nothing written, and the directory it made for nothing is gone again.
  r = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out-dir", dir + "/not/made"},
              {{"CEILINGS_STANDIN_MODE", "nogpu"}}, 30);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/not"));
}

// A run stopped before any case finished has nothing to keep: the profile an earlier run left at the same path
// (the default name is the same every run) is not replaced by an empty one, and the exit says why (3).
TEST(MultiGpu, ARunStoppedBeforeAnyCaseKeepsTheEarlierProfile) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_stopped_early");
  const std::string out = dir + "/x.profile.json";
  auto r = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", out}, {}, 30);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string before = ceilings::read_text_file(out);
  const std::string raw_before = ceilings::read_text_file(dir + "/x.bench.json");
  r = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", out, "--timeout", "2", "--kill-grace", "1"},
              {{"CEILINGS_STANDIN_MODE", "stall_early"}}, 30);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("no case finished: nothing written (" + out + " was left as it was)"), std::string::npos)
      << r.err;
  EXPECT_EQ(ceilings::read_text_file(out), before);
  EXPECT_EQ(ceilings::read_text_file(dir + "/x.bench.json"), raw_before);
}

// A bench that dies of SIGTERM that ceilings measure did not send (a Slurm time limit or scancel signals the whole
// job step, and the bench can die before measure acts on its own signal) was recorded as a crash: qualify said
// FAIL and fleet named a healthy GPU a health fault (review 34 H1). It is an interruption: incomplete, exit 3.
TEST(MultiGpu, ABenchStoppedFromOutsideIsInterruptedNotFailed) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_terminated");
  const std::string out = dir + "/t.profile.json";
  const auto r = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", out},
                         {{"CEILINGS_STANDIN_MODE", "terminated"}}, 30);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  const auto p = ceilings::read_profile(out);
  ASSERT_FALSE(p.errors.empty()) << r.err;
  EXPECT_EQ(p.errors[0].reason.rfind(std::string(ceilings::kStoppedWhileRunningReason) + ceilings::kInterruptedReason, 0),
            0u)
      << p.errors[0].reason;
  EXPECT_NE(p.errors[0].reason.find("(SIGTERM from outside"), std::string::npos) << p.errors[0].reason;
  EXPECT_TRUE(p.run_was_stopped());
  EXPECT_EQ(run_cli({"qualify", out}).exit_code, 3);  // incomplete, never a failed GPU
  // A crash (SIGABRT) is still a failure of the measurement.
  const std::string crashed = dir + "/c.profile.json";
  EXPECT_EQ(run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", crashed},
                    {{"CEILINGS_STANDIN_MODE", "crash"}}, 30)
                .exit_code,
            3);
  const auto c = ceilings::read_profile(crashed);
  ASSERT_FALSE(c.errors.empty());
  EXPECT_NE(c.errors[0].reason.find("ceilings-bench failed (killed by signal 6"), std::string::npos) << c.errors[0].reason;
  EXPECT_EQ(run_cli({"qualify", crashed}).exit_code, 1);
}

// --one-process runs every family in one ceilings-bench: a crash then costs every case after it.
TEST(MultiGpu, OneProcessLosesWhatFollowsACrash) {
  const std::string dir = ceilings::test::scratch_dir("multi_gpu_one_process");
  const std::string out = dir + "/crash.profile.json";
  const auto r = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", out, "--one-process"},
                         {{"CEILINGS_STANDIN_MODE", "crash"}}, 30);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  const auto p = ceilings::read_profile(out);
  ASSERT_EQ(p.ceilings.size(), 1u);
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.skipped.size(), 2u);
  EXPECT_EQ(p.raw.at("measure").at("families").size(), 1u);
  EXPECT_EQ(p.raw.at("measure").at("command").get<std::string>().find("per family"), std::string::npos);
}

}  // namespace

#ifdef CEILINGS_BENCH_BIN
namespace {

// The real ceilings-bench's device list (how --all-gpus finds the GPUs): one JSON line per device, or exit 3.
TEST(MultiGpu, RealBenchListsDevicesOrSaysNoGpu) {
  const auto r = ceilings::test::run_program({CEILINGS_BENCH_BIN, "--ceilings_list_devices"}, {}, 60);
  // On the GPU machine (device-check.sh sets CEILINGS_EXPECT_GPU) "no usable GPU" is a failure, not a pass.
  const char* expect = std::getenv("CEILINGS_EXPECT_GPU");
  if (expect && *expect && std::string(expect) != "0") ASSERT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code == 3) {
    EXPECT_NE(r.err.find("no usable GPU"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    return;
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  int expected = 0;
  while (std::getline(lines, line)) {
    const json d = ceilings::parse_json_text(line, "device line");
    EXPECT_EQ(d.at("index"), expected++);
    EXPECT_FALSE(d.at("name").get<std::string>().empty());
    EXPECT_EQ(d.at("uuid").get<std::string>().rfind("GPU-", 0), 0u);
    EXPECT_FALSE(d.at("pci_bus_id").get<std::string>().empty());
  }
  EXPECT_GT(expected, 0);
}

}  // namespace
#endif
