// One writer per output: `ceilings measure` holds a lock on each profile it will write for the whole run, so a
// second run into the same --out (a scheduler's retry, two shells) stops at once instead of leaving a profile
// and a raw JSON from different runs, or reading the other run's per-family files.
#pragma once

#include <string>

namespace ceilings {

class OutputLock {
 public:
  // Locks `locked` (a file the run writes) through the hidden file ".<name>.lock" beside it (flock: the kernel
  // drops it when the process dies, so a killed run leaves no stale lock, only the file, which the next run takes
  // over). InputError (exit 2) naming the holder (pid, host, start time) when another process holds it, saying
  // that `option` '`shown`' is being written. Where the file system cannot lock, it warns on stderr and goes on
  // unlocked: the run is not refused for want of a lock. A network file system mounted without lock support
  // (NFS `nolock` or `local_lock`) locks on each host alone, without a word.
  OutputLock(const std::string& locked, const std::string& option, const std::string& shown);
  // Removes the lock file, then unlocks.
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

  bool held() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

// The lock file's path for `locked` (".<file name>.lock" in its directory).
std::string output_lock_path(const std::string& locked);

}  // namespace ceilings
