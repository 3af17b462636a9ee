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

// The argument list that runs the CLI as a user file permissions apply to (as nobody where the test runs as root:
// as the review that found the bug did). nullopt, with `why`, where that cannot be done.
std::optional<std::vector<std::string>> cli_as_plain_user(const std::string& scratch, std::string& why) {
  auto argv = test::as_plain_user({CEILINGS_CLI, scratch}, why);
  if (argv) argv->push_back(CEILINGS_CLI);
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
  const std::string dir = test::scratch_dir("files_fleet_unreadable");
  ::chmod(dir.c_str(), 0755);
  std::string why;
  const auto cli = cli_as_plain_user(dir, why);
  if (!cli) GTEST_SKIP() << why;
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
  // A node summary beside the directories that lists node B's GPU as finished: its profile could not be read,
  // which is what is said, not that it is missing from the files.
  const std::string summary = fleet + "/nodeB.node-summary.json";
  write(summary, json{{"schema", "ceilings.node/1"}, {"host", "nodeB"}, {"created", "2026-11-30T09:00:00Z"},
                      {"updated", "2026-11-30T11:00:00Z"}, {"complete", true},
                      {"gpus", json::array({{{"index", 0}, {"uuid", "GPU-files-9"}, {"state", "done"},
                                             {"profile", "nodeB/n9.profile.json"}}})}}
                     .dump());
  for (const mode_t mode : {0000, 0444}) {
    ASSERT_EQ(::chmod(node_b.c_str(), mode), 0);
    r = run_as(*cli, {"fleet", fleet});
    EXPECT_EQ(r.exit_code, 3) << mode << "\n" << r.out << r.err;
    EXPECT_TRUE(has(r.out, "its profile (nodeB/n9.profile.json) could not be read (skipped above)")) << r.out;
  }
  ASSERT_EQ(::chmod(node_b.c_str(), 0755), 0);
  fs::remove(summary);

  // Links into a directory it cannot search: one that may have been a node's directory is named; a README linked
  // out of reach holds no profile and is not.
  const std::string hidden = dir + "/hidden";
  make_dir(hidden + "/nodeC");
  write(hidden + "/README.txt", "notes");
  fs::create_directory_symlink(hidden + "/nodeC", fleet + "/nodeC");
  fs::create_symlink(hidden + "/README.txt", fleet + "/README.txt");
  ModeRestorer restore_hidden{{hidden}};
  ASSERT_EQ(::chmod(hidden.c_str(), 0000), 0);
  r = run_as(*cli, {"fleet", fleet});
  EXPECT_TRUE(has(r.out, "skipped " + fleet + "/nodeC: cannot be read: Permission denied")) << r.out;
  EXPECT_FALSE(has(r.out, "README.txt")) << r.out;
  EXPECT_TRUE(has(r.out, "skipped 1,")) << r.out;
  ASSERT_EQ(::chmod(hidden.c_str(), 0755), 0);
  fs::remove(fleet + "/nodeC");
  fs::remove(fleet + "/README.txt");

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
  // The slow profile is judged once, under the path the walk reached first (the arguments in order).
  r = run_cli({"fleet", fleet, dir + "/elsewhere", "--format", "json"}, {}, 60);
  ASSERT_TRUE(json::accept(r.out)) << r.out << r.err;
  const json doc = json::parse(r.out);
  ASSERT_EQ(doc["groups"].size(), 1u) << r.out;
  ASSERT_EQ(doc["groups"][0]["outliers"].size(), 1u) << r.out;
  EXPECT_EQ(doc["groups"][0]["outliers"][0]["path"], fleet + "/linked/n9.profile.json") << r.out;

  // A dangling link (a profile or a directory since removed) and a loop of links lead to nothing to read: a
  // clean fleet beside them stays clean (a link into a directory without permission is named where it may have
  // held profiles: FleetNamesADirectoryItCannotRead's links).
  const std::string clean = dir + "/clean";
  make_dir(clean);
  for (int i = 0; i < 3; ++i) gpu_profile(clean + "/n" + std::to_string(i) + ".profile.json", i);
  fs::create_symlink("gone", clean + "/dangling");
  r = run_cli({"fleet", clean}, {}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  fs::create_symlink("loop2", clean + "/loop1");
  fs::create_symlink("loop1", clean + "/loop2");
  fs::create_symlink("self.lnk", clean + "/self.lnk");
  r = run_cli({"fleet", clean}, {}, 60);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "read 3 profile(s) of 3 file(s), skipped 0,")) << r.out;
}

// A file name that is not UTF-8 (the walk reads names as bytes) made `fleet --format json` fail with nlohmann's
// type_error and print nothing, and the table print the raw bytes: printed as '?' in text, U+FFFD in JSON.
TEST(CliFiles, FleetPrintsANameThatIsNotUtf8) {
  const std::string dir = test::scratch_dir("files_fleet_bytes");
  for (int i = 0; i < 3; ++i) gpu_profile(dir + "/n" + std::to_string(i) + ".profile.json", i);
  const std::string odd = dir + "/bad\xff\x1b.profile.json";
  write(odd, "not a profile");
  auto r = run_cli({"fleet", dir, "--format", "json"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;  // a file it could not read
  ASSERT_TRUE(json::accept(r.out)) << r.out << r.err;
  const json doc = json::parse(r.out);
  ASSERT_EQ(doc["skipped"].size(), 1u) << r.out;
  EXPECT_TRUE(has(doc["skipped"][0]["path"].get<std::string>(), "bad\xEF\xBF\xBD")) << r.out;
  r = run_cli({"fleet", dir});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "skipped " + dir + "/bad??.profile.json: ")) << r.out;
  EXPECT_FALSE(has(r.out, "\xff") || has(r.out, "\x1b")) << r.out;
}

// ---- output paths: only what the command writes there is replaced -------------------------------------

// `roofline --svg notes.md` replaced a Markdown note because it mentioned `<svg>` in its first 4 KiB; an HTML
// report with a picture inline was lost the same way. Only an SVG document is a picture to replace: its
// prolog (declaration, comments, DOCTYPE) and then the <svg root, as this project and common tools write one.
TEST(CliFiles, AnSvgIsADocumentWhoseRootIsSvg) {
  for (const std::string svg :
       {std::string("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"/>"),
        std::string("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\"></svg>"), std::string("<svg>x</svg>"),
        std::string("\xEF\xBB\xBF  \n<svg\n  width=\"1\"/>"),  // a byte order mark and white space first
        // Inkscape
        std::string("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n<!-- Created with Inkscape "
                    "(http://www.inkscape.org/) -->\n\n<svg\n   width=\"210mm\"\n   xmlns=\"http://www.w3.org/2000/svg\">"),
        // matplotlib
        std::string("<?xml version=\"1.0\" encoding=\"utf-8\" standalone=\"no\"?>\n<!DOCTYPE svg PUBLIC \"-//W3C//DTD "
                    "SVG 1.1//EN\"\n  \"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n<svg xmlns:xlink=\"x\" "
                    "width=\"460.8pt\">"),
        // graphviz: a DOCTYPE, then comments
        std::string("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n<!DOCTYPE svg PUBLIC \"-//W3C//DTD "
                    "SVG 1.1//EN\"\n \"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n<!-- Generated by graphviz "
                    "version 2.43.0 (0)\n -->\n<!-- Title: G Pages: 1 -->\n<svg width=\"62pt\" height=\"116pt\">"),
        // an internal subset whose declarations hold '>' and quoted text
        std::string("<?xml version=\"1.0\"?>\n<!DOCTYPE svg [\n  <!ENTITY a \"<b>\">\n  <!ENTITY c '>]'>\n]>\n"
                    "<?xml-stylesheet href=\"s.css\"?>\n<svg>"),
        std::string("<svg:svg xmlns:svg=\"http://www.w3.org/2000/svg\">")})
    EXPECT_TRUE(is_svg_text(svg)) << svg;
  for (const std::string other :
       {std::string("# notes\nUse `<svg>` tags for pictures.\nlots of text\n"),
        std::string("<html><body><h1>Q3 capacity report</h1><svg width=\"1\"></svg><p>notes</p></body></html>"),
        std::string("<!DOCTYPE html>\n<html><svg></svg></html>"), std::string("<!-- <svg> -->\n<p>notes</p>"),
        std::string("<!DOCTYPE html>\n<svg width=\"1\"></svg><p>a page whose body starts with a picture</p>"),
        std::string("<?xml version=\"1.0\"?>\n<svgfoo/>"), std::string("<?xml version=\"1.0\"?>\n<notes><svg/></notes>"),
        std::string("<!-- unclosed comment <svg>"), std::string("<?xml <svg>"), std::string("<!DOCTYPE svg [ <svg>"),
        std::string("notes <svg>"), std::string("<svg"), std::string("")})
    EXPECT_FALSE(is_svg_text(other)) << other;
}

TEST(CliFiles, RooflineSvgNeverReplacesAFileThatMerelyMentionsSvg) {
  const std::string dir = test::scratch_dir("files_roofline_svg");
  const std::vector<std::pair<std::string, std::string>> kept = {
      {"notes.md", "# notes\nUse `<svg>` tags for pictures.\nlots of text\n"},
      {"report.html", "<html><body><h1>Q3 capacity report</h1><svg width=\"10\" height=\"10\"></svg>"
                      "<p>notes I wrote by hand</p></body></html>"},
      {"page.svg", "<!DOCTYPE html>\n<html><body><svg></svg></body></html>"}};
  for (const auto& [name, text] : kept) {
    const std::string path = dir + "/" + name;
    write(path, text);
    const auto r = run_cli({"roofline", "--profile", kHandmade, "--svg", path});
    EXPECT_EQ(r.exit_code, 2) << name << "\n" << r.out << r.err;
    EXPECT_TRUE(has(r.err, "--svg '" + path + "' exists and is not an SVG picture")) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(read_text_file(path), text) << name;
  }
  // Its own picture, and one another tool drew, are replaced.
  const std::string roof = dir + "/roof.svg";
  ASSERT_EQ(run_cli({"roofline", "--profile", kHandmade, "--svg", roof}).exit_code, 0);
  EXPECT_TRUE(is_svg_text(read_text_file(roof)));
  EXPECT_EQ(run_cli({"roofline", "--profile", kHandmade, "--svg", roof}).exit_code, 0);
  const std::string drawn = "<?xml version=\"1.0\"?>\n<!-- Created with Inkscape -->\n<svg width=\"1\"/>\n";
  write(roof, drawn);
  EXPECT_EQ(run_cli({"roofline", "--profile", kHandmade, "--svg", roof}).exit_code, 0);
  EXPECT_NE(read_text_file(roof), drawn);
  EXPECT_TRUE(is_svg_text(read_text_file(roof)));
}

// `measure --out b.profile.json` replaced a fleet baseline (`fleet --write-baseline`'s medians), because it is
// a ceilings.profile too; `fleet` already refused to write a baseline over a measured profile.
TEST(CliFiles, MeasureOutNeverReplacesAFleetBaseline) {
  const std::string dir = test::scratch_dir("files_measure_baseline");
  const std::string fleet = dir + "/fleet", baseline = dir + "/b.profile.json";
  make_dir(fleet);
  for (int i = 0; i < 3; ++i) gpu_profile(fleet + "/n" + std::to_string(i) + ".profile.json", i);
  auto r = run_cli({"fleet", fleet, "--write-baseline", baseline});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string before = read_text_file(baseline);
  r = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", baseline}, {}, 60);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "--out '" + baseline + "' exists and is a fleet baseline")) << r.err;
  EXPECT_EQ(read_text_file(baseline), before);
  EXPECT_FALSE(fs::exists(dir + "/b.bench.json"));
  EXPECT_FALSE(is_measured_profile_text(before));
  EXPECT_TRUE(is_profile_text(before));
  // An earlier run's profile is still replaced, with its raw JSON: the real output of a measurement is both.
  const std::string out = dir + "/a.profile.json";
  ASSERT_EQ(run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", out}, {}, 60).exit_code, 0);
  EXPECT_TRUE(is_measured_profile_text(read_text_file(out)));
  EXPECT_TRUE(is_bench_json_text(read_text_file(dir + "/a.bench.json")));
  EXPECT_EQ(run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", out}, {}, 60).exit_code, 0);
}

// Any JSON object with a "context" or a "benchmarks" key was taken for an earlier run's raw JSON.
TEST(CliFiles, ABenchJsonIsGoogleBenchmarksOutput) {
  const std::string context =
      R"("context": {"date": "2026-01-01T00:00:00+00:00", "host_name": "n", "executable": "ceilings-bench",
         "num_cpus": 2, "mhz_per_cpu": 2000, "caches": [], "library_build_type": "release"})";
  EXPECT_TRUE(is_bench_json_text("{" + context + R"(, "benchmarks": []})"));
  EXPECT_TRUE(is_bench_json_text("{" + context + R"(, "benchmarks": [{"name": "hbm/copy", "run_type": "iteration",
      "iterations": 1, "real_time": 1.0, "time_unit": "ns"}]})"));
  for (const char* other : {R"({"context": "my notes"})", R"({"benchmarks": [1, 2]})", R"({"context": {}, "x": 1})",
                            R"({"context": {}, "benchmarks": [1, 2]})", R"({"context": {}, "benchmarks": [{}]})",
                            R"({"context": 1, "benchmarks": []})", "[1, 2]"})
    EXPECT_FALSE(is_bench_json_text(other)) << other;
  const std::string dir = test::scratch_dir("files_measure_bench_json");
  const std::string mine = R"({"context": "notes on the context of my project", "benchmarks": "mine"})";
  write(dir + "/a.bench.json", mine);
  const auto r = run_cli({"measure", "--bench", CEILINGS_STANDIN_BENCH, "--out", dir + "/a.profile.json"}, {}, 60);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "is not a ceilings-bench JSON output")) << r.err;
  EXPECT_EQ(read_text_file(dir + "/a.bench.json"), mine);
}

// ---- standard output -------------------------------------------------------------------------------

// `ceilings --help > /dev/full` and `--version` exited 0, while every subcommand exits 3 when its output
// cannot be written: help and version are output like any other.
TEST(CliFiles, HelpAndVersionThatCannotBeWrittenAreIncomplete) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--help"}, {"-h"}, {"--version"},
                                               {"show", "--help"}, {"fleet", "-h"}}) {
    std::string command = "exec '" + std::string(CEILINGS_CLI) + "'";
    for (const std::string& a : args) command += " '" + a + "'";
    auto r = run_program({"/bin/sh", "-c", command});
    EXPECT_EQ(r.exit_code, 0) << args[0] << "\n" << r.err;
    EXPECT_FALSE(r.out.empty()) << args[0];
    for (const char* redirect : {" > /dev/full", " >&-"}) {
      r = run_program({"/bin/sh", "-c", command + redirect});
      EXPECT_EQ(r.exit_code, 3) << args[0] << redirect << "\n" << r.err;
      EXPECT_TRUE(has(r.err, "could not write the output to standard output")) << args[0] << redirect << r.err;
    }
  }
}

// ---- pipes -----------------------------------------------------------------------------------------

namespace {
// A named pipe in dir, made afresh.
std::string fifo(const std::string& dir, const std::string& name) {
  const std::string path = dir + "/" + name;
  fs::remove(path);
  if (::mkfifo(path.c_str(), 0644) != 0) throw std::runtime_error("mkfifo " + path + " failed");
  return path;
}
// Opens `path` for writing after `delay`, waits `hold` more, writes `text` and closes it.
std::thread late_writer(const std::string& path, std::chrono::milliseconds delay, std::chrono::milliseconds hold,
                        const std::string& text) {
  return std::thread([=] {
    std::this_thread::sleep_for(delay);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);  // the reader has it open: no wait
    if (fd < 0) return;
    std::this_thread::sleep_for(hold);
    if (!text.empty()) (void)!::write(fd, text.data(), text.size());
    ::close(fd);
  });
}
}  // namespace

// A named pipe that no program writes to hung every reader for ever (`mkfifo p.json; ceilings show p.json`).
// The wait for a writer is bounded; a writer that has opened it is waited for as long as it takes to write, as
// any pipe's, and a pipe with no name (`show <(cmd)`) is read as before.
TEST(CliFiles, APipeIsReadAndANamedPipeWithoutAWriterIsAnError) {
  using namespace std::chrono_literals;
  const std::string dir = test::scratch_dir("files_pipe_read");
  // No writer: an error naming it, after the wait and not much more.
  const std::string p = fifo(dir, "p.json");
  auto start = std::chrono::steady_clock::now();
  try {
    (void)read_text_file(p, 300ms);
    ADD_FAILURE() << "read a pipe nobody writes to";
  } catch (const InputError& e) {
    EXPECT_TRUE(has(e.what(), "'" + p + "' is a named pipe that no program opened for writing in 1 s")) << e.what();
  }
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, 300ms);
  EXPECT_LT(took, 5s);
  // A writer that opens it within the wait, then takes longer than the wait to write (a wait 20 times the writer's
  // delay: a loaded machine can start the writer's thread late, review 50).
  std::thread w = late_writer(p, 50ms, 1500ms, "{\"a\": 1}");
  EXPECT_EQ(read_text_file(p, 1000ms), "{\"a\": 1}");
  w.join();
  // A writer that opens it and closes it having written nothing: empty, at once.
  w = late_writer(p, 50ms, 0ms, "");
  start = std::chrono::steady_clock::now();
  EXPECT_EQ(read_text_file(p, 3000ms), "");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2500ms);
  w.join();
  // A pipe with no name, as `<(cmd)` passes one (/dev/fd/N), whose writer writes after the wait: read whole.
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  std::thread anonymous([fd = ends[1]] {
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    (void)!::write(fd, "text", 4);
    ::close(fd);
  });
  EXPECT_EQ(read_text_file("/dev/fd/" + std::to_string(ends[0]), 300ms), "text");
  anonymous.join();
  ::close(ends[0]);
}

TEST(CliFiles, EveryInputThatIsANamedPipeWithoutAWriterIsAnError) {
  const std::string dir = test::scratch_dir("files_pipe_cli");
  const std::string profile = std::string(CEILINGS_FIXTURES) + "/profiles/h200-qualify.profile.json";
  const std::vector<std::vector<std::string>> commands = {
      {"show", fifo(dir, "show.json")},
      {"model", "--hf-config", fifo(dir, "config.json")},
      {"qualify", profile, "--rules", fifo(dir, "rules.json")},
      {"qualify", profile, "--baseline", fifo(dir, "baseline.json")},
      {"compare", fifo(dir, "compare.json")},
      {"fleet", std::string(CEILINGS_FIXTURES) + "/profiles", "--expect-hosts", fifo(dir, "hosts.txt")}};
  // At once: each waits out the bound for a writer (30 s).
  std::vector<std::future<ceilings::test::CliResult>> runs;
  const auto start = std::chrono::steady_clock::now();
  for (const auto& args : commands) runs.push_back(std::async(std::launch::async, [args] { return run_cli(args, {}, 120); }));
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto r = runs[i].get();
    const std::string& pipe = commands[i].back();
    EXPECT_EQ(r.exit_code, 2) << commands[i][0] << "\n" << r.out << r.err;
    EXPECT_TRUE(has(r.err, "'" + pipe + "' is a named pipe that no program opened for writing in 30 s")) << r.err;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(100));
  // `show <(cat profile)`: a pipe as the shell passes it, its writer slow to start or not.
  for (const std::string writer : {"cat '" + profile + "'", "sleep 1; cat '" + profile + "'"}) {
    const auto r = run_program({"/bin/bash", "-c", "exec '" + std::string(CEILINGS_CLI) + "' show <(" + writer + ")"});
    EXPECT_EQ(r.exit_code, 0) << writer << "\n" << r.err;
    EXPECT_TRUE(has(r.out, "hbm.copy")) << r.out;
  }
  // A named pipe with a writer: read as a file.
  const std::string named = fifo(dir, "named.profile.json");
  const auto r = run_program({"/bin/bash", "-c", "cat '" + profile + "' > '" + named + "' & exec '" +
                                                     std::string(CEILINGS_CLI) + "' show '" + named + "'"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "hbm.copy")) << r.out;
}
