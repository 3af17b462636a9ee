// One writer per output (`ceilings measure`'s lock on each profile it writes).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "ceilings/error.hpp"
#include "ceilings/output_lock.hpp"
#include "cli_runner.hpp"

namespace {

namespace fs = std::filesystem;

TEST(OutputLock, ASecondHolderIsRefusedWithTheFirstsName) {
  const std::string dir = ceilings::test::scratch_dir("output_lock_second");
  const std::string out = dir + "/a.profile.json";
  auto first = std::make_unique<ceilings::OutputLock>(out, "--out", out);
  ASSERT_TRUE(first->held());
  EXPECT_EQ(first->path(), dir + "/.a.profile.json.lock");
  EXPECT_TRUE(fs::exists(first->path()));
  try {
    ceilings::OutputLock second(out, "--out", out);  // flock: a second open file conflicts within one process too
    FAIL() << "a second lock on the same output was granted";
  } catch (const ceilings::InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("another run is writing --out '" + out + "'"), std::string::npos) << what;
    EXPECT_NE(what.find("pid " + std::to_string(getpid()) + " on "), std::string::npos) << what;
  }
  first.reset();
  EXPECT_FALSE(fs::exists(dir + "/.a.profile.json.lock")) << "the lock file outlived its holder";
  ceilings::OutputLock again(out, "--out", out);
  EXPECT_TRUE(again.held());
}

// A killed run leaves its lock file, not its lock: the next run takes the file over.
TEST(OutputLock, ALeftoverLockFileIsTakenOver) {
  const std::string dir = ceilings::test::scratch_dir("output_lock_leftover");
  const std::string out = dir + "/b.profile.json";
  std::ofstream(ceilings::output_lock_path(out)) << "pid 1 on gone since 2026-01-01T00:00:00Z\n";
  ceilings::OutputLock lock(out, "--out", out);
  EXPECT_TRUE(lock.held());
  std::ifstream in(lock.path());
  std::string holder;
  std::getline(in, holder);
  EXPECT_EQ(holder.rfind("pid " + std::to_string(getpid()) + " on ", 0), 0u) << holder;
}

// A holder that could not write its name (another user's lock file, opened read-only) leaves an earlier run's: a
// pid of this host that has ended is not named as the holder (review 93).
TEST(OutputLock, AStaleHolderNameIsNotTakenForTheHolder) {
  const std::string dir = ceilings::test::scratch_dir("output_lock_stale_name");
  const std::string out = dir + "/c.profile.json";
  const pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);  // reaped: its pid names no process
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof host - 1), 0);
  const std::string lock_path = ceilings::output_lock_path(out);
  std::ofstream(lock_path) << "pid " << child << " on " << host << " since 2026-01-01T00:00:00Z\n";
  const int fd = ::open(lock_path.c_str(), O_RDONLY | O_CLOEXEC);  // the holder, as a read-only descriptor locks
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  try {
    ceilings::OutputLock second(out, "--out", out);
    ADD_FAILURE() << "granted while held";
  } catch (const ceilings::InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("holder not known: the lock file still names pid " + std::to_string(child) +
                        ", which this process cannot see"),
              std::string::npos)
        << what;
  }
  ::close(fd);
}

// Two names of one file (a symlink) share a lock: it is the file written that is held.
TEST(OutputLock, ASymlinkSharesItsTargetsLock) {
  const std::string dir = ceilings::test::scratch_dir("output_lock_symlink");
  fs::create_directories(dir + "/real");
  std::ofstream(dir + "/real/c.profile.json") << "{}";
  fs::create_symlink(dir + "/real/c.profile.json", dir + "/link.profile.json");
  ceilings::OutputLock held(dir + "/real/c.profile.json", "--out", "c");
  EXPECT_THROW(ceilings::OutputLock(dir + "/link.profile.json", "--out", "link"), ceilings::InputError);
}

}  // namespace
