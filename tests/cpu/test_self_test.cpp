// Tests for `ceilings self-test`: the fault-injection matrix catches every fault with no false pass.
#include <gtest/gtest.h>
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>
#include <filesystem>
#include <fstream>

#include "cli_runner.hpp"

namespace ceilings {
namespace {

TEST(SelfTest, EveryInjectedFaultIsDetected) {
  // Its cases' files go in a directory of its own under TMPDIR, removed at the end.
  const std::string tmp = test::scratch_dir("self_test_tmpdir");
  const auto r = test::run_cli({"self-test"}, {{"TMPDIR", tmp}});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(std::filesystem::is_empty(tmp)) << "left behind in " << tmp;
  EXPECT_NE(r.out.find("faults injected: 43\nfaults detected: 43\nfalse passes: 0\ncontrols passing: 4/4"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("time to verdict: mean"), std::string::npos);
  EXPECT_NE(r.out.find("self-test: PASS"), std::string::npos);
  for (const char* name : {"XID event", "pending row remap", "PCIe Gen3 x8", "thermal slowdown", "truncated profile",
                           "throttled measurement", "sentinel temperature", "nvmlInit fails", "no GPU",
                           "pending MIG mode change", "MIG mode changed mid-run", "SRAM error threshold",
                           "thermal violation time", "low power limit", "hot GPU", "lost GPU", "NVLink replays"})
    EXPECT_NE(r.out.find(name), std::string::npos) << name;
}

// A ceilings copied away from the fake library beside it: incomplete, saying how to name it (not to rebuild: every
// build makes it). A path the user gave that names no file, by the flag or by CEILINGS_FAKE_NVML, is bad input.
TEST(SelfTest, WithoutTheFakeLibraryItIsIncomplete) {
  const std::string dir = test::scratch_dir("self_test_no_fake");
  std::filesystem::copy_file(CEILINGS_CLI, dir + "/ceilings", std::filesystem::copy_options::overwrite_existing);
  auto r = test::run_program({dir + "/ceilings", "self-test"}, {{"CEILINGS_FAKE_NVML", ""}});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("fake NVML library is not at " + dir + "/libceilings_fake_nvml.so"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("needs --fake-nvml or CEILINGS_FAKE_NVML"), std::string::npos) << r.err;
  r = test::run_cli({"self-test"}, {{"CEILINGS_FAKE_NVML", "/nonexistent/libfake.so"}});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("CEILINGS_FAKE_NVML /nonexistent/libfake.so does not exist"), std::string::npos) << r.err;
  r = test::run_cli({"self-test", "--fake-nvml", "/nonexistent/libfake.so"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--fake-nvml /nonexistent/libfake.so does not exist"), std::string::npos) << r.err;
}

// A TMPDIR it cannot use is named, as bad input (it said "filesystem error: temp_directory_path", exit 3).
TEST(SelfTest, ATmpdirItCannotUseIsNamed) {
  auto r = test::run_cli({"self-test"}, {{"TMPDIR", "/nonexistent/tmp"}});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("TMPDIR '/nonexistent/tmp' cannot be used"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("faults injected"), std::string::npos) << r.out;
  // An empty TMPDIR is none, as mktemp(1) takes it: /tmp (it said "the directory for temporary files cannot be
  // used").
  r = test::run_cli({"self-test"}, {{"TMPDIR", ""}});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

// A bare file name is the file in the working directory (dlopen would look it up in the library path and
// report "No such file" for a file that is there).
TEST(SelfTest, ABareFileNameIsTheFileHere) {
  const std::string dir = test::scratch_dir("self_test_bare_name");
  const std::string lib = std::filesystem::path(CEILINGS_CLI).parent_path() / "libceilings_fake_nvml.so";
  std::filesystem::copy_file(lib, dir + "/fake.so", std::filesystem::copy_options::overwrite_existing);
  const auto r = test::run_program({"/bin/sh", "-c", "cd '" + dir + "' && exec '" + CEILINGS_CLI +
                                                         "' self-test --fake-nvml fake.so"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("self-test: PASS"), std::string::npos) << r.out << r.err;
}

TEST(SelfTest, SomethingThatIsNotAnNvmlIsNamed) {
  // A library without NVML's entry points, or a file that is no library, is bad input named as such: it
  // used to run the whole matrix and report every fault "missed".
  // The C maths library, wherever this machine's loader finds it (x86_64 and aarch64 keep it apart).
  void* libm = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(libm, nullptr) << dlerror();
  link_map* map = nullptr;
  ASSERT_EQ(dlinfo(libm, RTLD_DI_LINKMAP, &map), 0) << dlerror();
  ASSERT_NE(map, nullptr);
  const std::string not_nvml = map->l_name;
  dlclose(libm);
  ASSERT_EQ(access(not_nvml.c_str(), R_OK), 0) << not_nvml;
  {
    const auto r = test::run_cli({"self-test", "--fake-nvml", not_nvml});
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.err.find("without nvmlInit_v2"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("MISSED"), std::string::npos) << r.out;
  }
  const std::string text = test::scratch_dir("self_test_not_a_library") + "/libfake.so";
  std::ofstream(text) << "not a shared object\n";
  const auto r = test::run_cli({"self-test", "--fake-nvml", text});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("cannot load the fake NVML"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ceilings
