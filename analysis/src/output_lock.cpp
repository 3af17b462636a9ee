#include "ceilings/output_lock.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "ceilings/error.hpp"
#include "ceilings/profile.hpp"

namespace ceilings {

namespace fs = std::filesystem;

std::string output_lock_path(const std::string& locked) {
  // The file the write replaces (write_file_atomic): a symlink's target where it exists, so that two links to one
  // file, or a link and its file, share a lock; a dangling link is itself replaced.
  fs::path written = locked;
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(written, ec))) {
    const fs::path resolved = fs::weakly_canonical(written, ec);
    if (!ec) written = resolved;
  }
  const fs::path dir = fs::weakly_canonical(written.parent_path().empty() ? "." : written.parent_path(), ec);
  return ((ec ? written.parent_path() : dir) / ("." + written.filename().string() + ".lock")).string();
}

namespace {

std::string host_name() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf[0] ? buf : "host";
}

// What the lock file says of its holder ("pid N on HOST since T"). A holder that could not write it (another user's
// file, opened read-only) left an earlier run's text: a pid on this host that has ended is named as such, not as the
// holder (review 93).
std::string holder_of(int fd) {
  char buf[256] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string s = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  long pid = 0;
  char host[256] = {};
  if (std::sscanf(s.c_str(), "pid %ld on %255s", &pid, host) == 2 && pid > 0 && host_name() == host &&
      ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
    return "holder not known: the lock file still names pid " + std::to_string(pid) +
           ", which this process cannot see (it has ended, and a run that could not write its own name, another "
           "user's, holds the lock; or it runs in another container of this host name)";
  return s;
}

}  // namespace

OutputLock::OutputLock(const std::string& locked, const std::string& option, const std::string& shown)
    : path_(output_lock_path(locked)) {
  auto unlocked = [&](const std::string& why) {
    std::fprintf(stderr,
                 "ceilings: warning: cannot lock %s (%s): a second run writing the same file at once would not be "
                 "noticed\n",
                 path_.c_str(), why.c_str());
  };
  // The file may be removed by a holder that is finishing between our open and our flock: then the lock we got
  // is on a name no one else will find, and we open again.
  for (int attempt = 0; attempt < 100; ++attempt) {
    int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    // Another user's lock file in a shared directory: a read-only descriptor locks as well on a local file system
    // (over NFS flock needs a writable one, and the warning below says it could not lock).
    if (fd < 0 && errno == EACCES) fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
      unlocked(std::strerror(errno));
      return;
    }
    // Whether the file `fd` has open is still the one the name leads to: a holder that is finishing removes the
    // name, then unlocks; whoever opened the old file before that must open again.
    auto still_named = [&] {
      struct stat opened {}, named {};
      return ::fstat(fd, &opened) == 0 && ::stat(path_.c_str(), &named) == 0 && opened.st_ino == named.st_ino &&
             opened.st_dev == named.st_dev;
    };
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      if (err == EWOULDBLOCK) {
        if (!still_named()) {  // held by a run that has just ended
          ::close(fd);
          continue;
        }
        const std::string holder = holder_of(fd);
        ::close(fd);
        throw InputError("another run is writing " + option + " '" + shown + "'" +
                         (holder.empty() ? "" : " (" + holder + ")") + ": wait for it to end, or choose another " +
                         option + " (the lock is " + path_ + "; it is released when that process ends)");
      }
      ::close(fd);
      unlocked(std::strerror(err));
      return;
    }
    if (!still_named()) {
      ::close(fd);
      continue;
    }
    const std::string me = "pid " + std::to_string(::getpid()) + " on " + host_name() + " since " + utc_now_iso8601() + "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, me.data(), me.size(), 0) != static_cast<ssize_t>(me.size())) {
      // Held all the same; only the name of the holder is missing for whoever comes second.
    }
    fd_ = fd;
    return;
  }
  unlocked("its file kept being replaced");
}

OutputLock::~OutputLock() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // while still held: whoever opened it before sees the name gone and opens again
  ::close(fd_);
}

}  // namespace ceilings
