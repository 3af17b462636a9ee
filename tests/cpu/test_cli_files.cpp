// The files the CLI reads and writes, end to end: directories it cannot read or that are linked in, files that
// are not what an output path should hold, standard output that cannot be written, pipes with no writer.
// Bad input is a clear error with its own exit code, never a silent default, a hang or a user's file lost.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ceilings/json_fields.hpp"
#include "ceilings/profile.hpp"
#include "cli_runner.hpp"

using namespace ceilings;
using ceilings::test::run_cli;
using ceilings::test::run_program;

namespace {

namespace fs = std::filesystem;

const std::string kHandmade = std::string(CEILINGS_FIXTURES) + "/profiles/h200-handmade.profile.json";

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// A directory others can walk (the permission tests run as nobody when the suite runs as root).
void make_dir(const std::string& path) {
  fs::create_directories(path);
  ::chmod(path.c_str(), 0755);
}

// GPU `i` of a made-up fleet: the hand-made H200 profile with its own UUID and host; a `slow` one has hbm.copy
// at 3.0 TB/s instead of 4.36 (an outlier among its peers).
void gpu_profile(const std::string& path, int i, bool slow = false) {
  json doc = read_json_file(kHandmade);
  doc["device"]["uuid"] = "GPU-files-" + std::to_string(i);
  doc["host"]["hostname"] = "node" + std::to_string(i);
  if (slow)
    for (json& c : doc["ceilings"])
      if (c["name"] == "hbm.copy") c["value"] = 3.0e12;
  write(path, doc.dump(2));
  ::chmod(path.c_str(), 0644);
}

// The argument list that runs the CLI as a user file permissions apply to: root opens a chmod 000 directory
// anyway, so as root it runs as nobody under setpriv (as the review that found the bug did). nullopt where
// that cannot be done (root without setpriv).
std::optional<std::vector<std::string>> cli_as_plain_user() {
  std::vector<std::string> argv;
  if (::geteuid() == 0) {
    if (::access("/usr/bin/setpriv", X_OK) != 0) return std::nullopt;
    argv = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
  }
  argv.push_back(CEILINGS_CLI);
  return argv;
}

ceilings::test::CliResult run_as(const std::vector<std::string>& prefix, const std::vector<std::string>& args) {
  std::vector<std::string> argv = prefix;
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv, {}, 60);
}

// Sets a directory's mode back when the test ends, however it ends (a chmod 000 directory left behind would
// stop the next run's scratch_dir from removing it, for a user that is not root).
struct ModeRestorer {
  std::vector<std::string> paths;
  ~ModeRestorer() {
    for (const std::string& p : paths) ::chmod(p.c_str(), 0755);
  }
};

}  // namespace

// ---- fleet: directories ----------------------------------------------------------------------------

// A node's results directory the user could not read vanished from the walk without a word: its slow GPU was
// gone, and the fleet passed with exit 0. An unreadable file was skipped with its reason and made the run
// incomplete (exit 3); an unreadable directory is now the same. An unreadable directory named on the command
// line said "no *.profile.json found", not why.
TEST(CliFiles, FleetNamesADirectoryItCannotRead) {
  const auto cli = cli_as_plain_user();
  if (!cli) GTEST_SKIP() << "root, and no setpriv to run as a user that permissions apply to";
  const std::string dir = test::scratch_dir("files_fleet_unreadable");
  ::chmod(dir.c_str(), 0755);
  const std::string fleet = dir + "/fleet", node_a = fleet + "/nodeA", node_b = fleet + "/nodeB";
  make_dir(node_a);
  make_dir(node_b);
  for (int i = 0; i < 3; ++i) gpu_profile(node_a + "/n" + std::to_string(i) + ".profile.json", i);
  gpu_profile(node_b + "/n9.profile.json", 9, true);
  ModeRestorer restore{{node_b, fleet}};

  auto r = run_as(*cli, {"fleet", fleet});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;  // the slow GPU is named
  EXPECT_TRUE(has(r.out, "GPU-files-9")) << r.out;

  for (const mode_t mode : {0000, 0444}) {  // cannot be opened; can be listed but not searched
    ASSERT_EQ(::chmod(node_b.c_str(), mode), 0);
    r = run_as(*cli, {"fleet", fleet});
    EXPECT_EQ(r.exit_code, 3) << mode << "\n" << r.out << r.err;
    EXPECT_TRUE(has(r.out, "skipped " + node_b + ": cannot ")) << r.out;
    EXPECT_TRUE(has(r.out, "Permission denied")) << r.out;
    EXPECT_TRUE(has(r.out, "skipped 1,")) << r.out;  // in the count on the first line too
    r = run_as(*cli, {"fleet", fleet, "--format", "json"});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    const json doc = json::parse(r.out);
    ASSERT_EQ(doc["skipped"].size(), 1u) << r.out;
    EXPECT_EQ(doc["skipped"][0]["path"], node_b);
    EXPECT_TRUE(has(doc["skipped"][0]["reason"].get<std::string>(), "Permission denied")) << r.out;
    r = run_as(*cli, {"fleet", fleet, "--format", "csv"});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_TRUE(has(r.out, node_b) && has(r.out, "Permission denied")) << r.out;
  }
  ASSERT_EQ(::chmod(node_b.c_str(), 0755), 0);

  // The directory named on the command line: an error that names the permission problem.
  ASSERT_EQ(::chmod(fleet.c_str(), 0000), 0);
  r = run_as(*cli, {"fleet", fleet});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "cannot read the directory '" + fleet + "'") && has(r.err, "Permission denied")) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  // Below a directory it cannot search: what is named cannot even be looked at.
  ASSERT_EQ(::chmod(fleet.c_str(), 0644), 0);
  r = run_as(*cli, {"fleet", node_a});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "cannot read '" + node_a + "'") && has(r.err, "Permission denied")) << r.err;
}

// A results directory linked in from elsewhere was not followed, and nothing said so: its GPUs were not judged.
// Links are followed, each directory once: a link back to a parent is no endless walk, and a profile reachable
// by two paths counts once. Works as root: no permissions involved.
TEST(CliFiles, FleetFollowsDirectoryLinksOnce) {
  const std::string dir = test::scratch_dir("files_fleet_links");
  const std::string fleet = dir + "/fleet", elsewhere = dir + "/elsewhere/nodeB";
  make_dir(fleet + "/nodeA");
  make_dir(elsewhere);
  for (int i = 0; i < 3; ++i) gpu_profile(fleet + "/nodeA/n" + std::to_string(i) + ".profile.json", i);
  gpu_profile(elsewhere + "/n9.profile.json", 9, true);
  fs::create_directory_symlink("../elsewhere/nodeB", fleet + "/linked");

  auto r = run_cli({"fleet", fleet}, {}, 60);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // the linked node's slow GPU is judged and named
  EXPECT_TRUE(has(r.out, "GPU-files-9")) << r.out;
  EXPECT_TRUE(has(r.out, "read 4 profile(s) of 4 file(s), skipped 0,")) << r.out;

  // A link back to a parent, a second path to a directory already walked, the linked directory named again:
  // every profile once, and no endless walk.
  fs::create_directory_symlink("..", fleet + "/nodeA/up");
  fs::create_directory_symlink("nodeA", fleet + "/alias");
  fs::create_directory_symlink(fleet, fleet + "/nodeA/loop");
  const auto start = std::chrono::steady_clock::now();
  r = run_cli({"fleet", fleet, dir + "/elsewhere"}, {}, 60);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "read 4 profile(s) of 4 file(s), skipped 0,")) << r.out;
  EXPECT_TRUE(has(r.out, fleet + "/linked/n9.profile.json") || has(r.out, "GPU-files-9")) << r.out;

  // A dangling link (a profile or a directory since removed) is nothing to read; a link that cannot be
  // followed (a loop of links) might have been a node's directory: named, and the run is incomplete.
  const std::string clean = dir + "/clean";
  make_dir(clean);
  for (int i = 0; i < 3; ++i) gpu_profile(clean + "/n" + std::to_string(i) + ".profile.json", i);
  fs::create_symlink("gone", clean + "/dangling");
  r = run_cli({"fleet", clean}, {}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  fs::create_symlink("loop2", clean + "/loop1");
  fs::create_symlink("loop1", clean + "/loop2");
  r = run_cli({"fleet", clean}, {}, 60);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "skipped " + clean + "/loop1: cannot be read: Too many levels of symbolic links")) << r.out;
}
