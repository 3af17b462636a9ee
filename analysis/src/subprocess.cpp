// fork/exec with pipes, poll, a watchdog and process-group cleanup.
#include "ceilings/subprocess.hpp"

#include "ceilings/json_fields.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

namespace ceilings {

namespace {

// Atomics, not volatile sig_atomic_t: the handler runs on any thread, and `measure --all-gpus --concurrent` reads
// them from each GPU's (volatile promises only the handler's own thread). Lock-free, so safe in a handler.
static_assert(std::atomic<int>::is_always_lock_free, "a signal handler may only touch lock-free atomics");
std::atomic<int> g_interrupted{0};
std::atomic<int> g_signal{0};  // the first signal that asked us to stop

// The first signal asks the children to stop (SIGTERM, SIGKILL after the grace); a second does not wait.
void on_signal(int sig) {
  int none = 0;
  g_signal.compare_exchange_strong(none, sig);
  if (g_interrupted.load() < 2) g_interrupted.fetch_add(1);
}

// The signals that ask a process to stop (a terminal, a batch system, `kill`), as opposed to a crash's.
bool stop_signal(int sig) { return sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT; }

// A child's output, line by line: each line made printable (its bytes end up on a terminal and in JSON, whose
// writer throws on invalid UTF-8), a line past kMaxLine bytes cut into pieces (a child writing without
// newlines neither grows this without bound nor makes each read rescan all of it).
struct LineBuffer {
  static constexpr std::size_t kMaxLine = 64 * 1024;
  std::string pending;
  std::size_t scanned = 0;  // bytes at the start of `pending` known to hold no newline
  bool cut = false;         // the last line handed on was a piece cut at kMaxLine, its newline still to come
  static void emit(const std::string& line, const LineHandler& handler) {
    if (handler) handler(printable_text(line));
  }
  void feed(const char* data, std::size_t n, const LineHandler& handler) {
    pending.append(data, n);
    std::size_t start = 0;
    for (std::size_t pos; (pos = pending.find('\n', std::max(start, scanned))) != std::string::npos; start = pos + 1) {
      std::size_t end = pos;
      if (end > start && pending[end - 1] == '\r') --end;  // CRLF: the '\r' only before a newline
      // The newline that ends a line already handed on in pieces is not an empty line of its own.
      if (!(cut && end == start)) emit(pending.substr(start, end - start), handler);
      cut = false;
    }
    pending.erase(0, start);
    // A line past kMaxLine with no newline yet: handed on in pieces, each cut at a UTF-8 character's start
    // (never inside one) and before a '\r' that may be half of a CRLF.
    while (pending.size() > kMaxLine) {
      std::size_t at = kMaxLine;
      while (at > kMaxLine - 4 && (static_cast<unsigned char>(pending[at]) & 0xc0) == 0x80) --at;
      if (pending[at - 1] == '\r') --at;
      emit(pending.substr(0, at), handler);
      pending.erase(0, at);
      cut = true;
    }
    scanned = pending.size();
  }
  void flush(const LineHandler& handler) {
    if (!pending.empty()) emit(pending, handler);
    pending.clear();
    scanned = 0;
    cut = false;
  }
};

}  // namespace

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  // A closed terminal (SIGHUP) or Ctrl-\ (SIGQUIT) stops the children as Ctrl-C does, instead of leaving
  // them running on the GPU in groups of their own.
  // A signal the caller ignores stays ignored: nohup's SIGHUP, a background job's SIGINT and SIGQUIT.
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    struct sigaction old {};
    if (sigaction(s, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    sigaction(s, &sa, nullptr);
  }
  // A reader of the output that goes away (a `| tee` the same Ctrl-C stopped) fails the writes to it instead of
  // killing the run before it has saved what finished.
  signal(SIGPIPE, SIG_IGN);
  // An ignored SIGCHLD (inherited through exec from a parent that set it) has the kernel reap the children
  // itself, and their exit statuses are lost: take the default back.
  signal(SIGCHLD, SIG_DFL);
}

bool interrupted() { return g_interrupted != 0; }

std::string signal_name(int sig) {
  switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGHUP: return "SIGHUP";
    case SIGQUIT: return "SIGQUIT";
    case SIGKILL: return "SIGKILL";
    default: return "signal " + std::to_string(sig);
  }
}

std::string interrupt_signal_name() { return g_signal ? signal_name(g_signal) : std::string(); }

std::string ProcessResult::describe() const {
  if (!exec_error.empty()) return "could not start: " + exec_error;
  if (!wait_error.empty()) return wait_error;
  if (interrupted) return signal && !stopped_by_us ? "stopped by " + signal_name(signal) + " from outside" : "interrupted";
  if (timed_out) return "timed out";
  if (signal) return std::string("killed by signal ") + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exit code " + std::to_string(exit_code);
}

ProcessResult run_process(const ProcessSpec& spec, const LineHandler& on_stdout, const LineHandler& on_stderr) {
  ProcessResult result;
  if (spec.argv.empty()) {
    result.exec_error = "no program given";
    return result;
  }
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1}, exec_pipe[2] = {-1, -1};
  auto close_all = [&] {  // on a failure before the child runs: none of them may leak
    const int err = errno;
    for (int* p : {out_pipe, err_pipe, exec_pipe})
      for (int i = 0; i < 2; ++i)
        if (p[i] >= 0) close(p[i]);
    errno = err;
  };
  if (pipe2(out_pipe, O_CLOEXEC) || pipe2(err_pipe, O_CLOEXEC) || pipe2(exec_pipe, O_CLOEXEC)) {
    result.exec_error = std::string("pipe: ") + std::strerror(errno);
    close_all();
    return result;
  }
  std::vector<char*> argv;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    result.exec_error = std::string("fork: ") + std::strerror(errno);
    close_all();
    return result;
  }
  if (pid == 0) {
    setpgid(0, 0);  // its own group, so the watchdog can end it and anything it started
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) signal(s, SIG_DFL);
    // Killed with us if we die without stopping it (SIGKILL, a crash): a benchmark never runs on orphaned.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    for (const auto& [k, v] : spec.env) setenv(k.c_str(), v.c_str(), 1);
    execv(argv[0], argv.data());
    const int err = errno;
    (void)!write(exec_pipe[1], &err, sizeof err);
    _exit(127);
  }
  setpgid(pid, pid);
  close(out_pipe[1]);
  close(err_pipe[1]);
  close(exec_pipe[1]);
  int exec_errno = 0;
  if (read(exec_pipe[0], &exec_errno, sizeof exec_errno) == static_cast<ssize_t>(sizeof exec_errno)) {
    result.exec_error = spec.argv[0] + ": " + std::strerror(exec_errno);
  }
  close(exec_pipe[0]);

  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  auto term_at = clock::time_point(), kill_at = clock::time_point();  // when SIGTERM and SIGKILL went
  bool term_sent = false, kill_sent = false;
  // A process SIGKILL does not end (stuck in the kernel, as in a GPU driver after an XID) is given up on this
  // long after it: the run goes on, and says so, instead of waiting for ever.
  constexpr double kUnkillableS = 30;
  auto abandoned = [&] {
    return kill_sent && clock::now() - kill_at > std::chrono::duration<double>(kUnkillableS);
  };
  LineBuffer out_lines, err_lines;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[4096];
  // The watchdog: past the timeout (or on Ctrl-C) SIGTERM to the child's group, SIGKILL after the grace.
  auto enforce_limits = [&] {
    const auto now = clock::now();
    const bool over_time = spec.timeout_s > 0 && now - start > std::chrono::duration<double>(spec.timeout_s);
    if ((over_time || g_interrupted) && !term_sent) {
      result.timed_out = over_time && !g_interrupted;
      result.interrupted = g_interrupted != 0;
      kill(-pid, SIGTERM);
      term_sent = true;
      term_at = now;
    }
    // Compared in double seconds: a grace too long for the clock's integer ticks must not wrap around. A second
    // interrupt (Ctrl-C again) does not wait for it.
    if (term_sent && !kill_sent &&
        (now - term_at >= std::chrono::duration<double>(spec.kill_grace_s) || g_interrupted >= 2)) {
      kill(-pid, SIGKILL);
      kill_sent = true;
      kill_at = now;
    }
  };
  auto close_pipes = [&] {
    for (pollfd& f : fds)
      if (f.fd >= 0) {
        close(f.fd);
        f.fd = -1;
      }
    open_fds = 0;
  };
  auto give_up = [&] {
    close_pipes();
    out_lines.flush(on_stdout);
    err_lines.flush(on_stderr);
    result.wait_error = "still running " + std::to_string(static_cast<int>(kUnkillableS)) +
                        " s after SIGKILL (stuck in the kernel: the GPU driver?); left behind";
    return result;
  };
  // A descendant that outlives the child (a wrapper's background logger) may hold the pipes open: once the child
  // has exited, what is still buffered is read for a moment, then the pipes are closed (review 89: a finished
  // family waited for the watchdog and read as timed out).
  constexpr double kDrainAfterExitS = 2;
  bool child_gone = false;
  auto child_gone_at = clock::time_point();
  while (open_fds > 0) {
    enforce_limits();
    if (abandoned()) return give_up();
    if (!child_gone) {
      siginfo_t info{};
      if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid) {
        child_gone = true;
        child_gone_at = clock::now();
      }
    } else if (clock::now() - child_gone_at > std::chrono::duration<double>(kDrainAfterExitS)) {
      close_pipes();
      break;
    }
    const int ready = poll(fds, 2, 100);
    if (ready < 0 && errno != EINTR) {
      close_pipes();  // nothing more can be read: a child still writing gets SIGPIPE rather than blocking
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? out_lines : err_lines).feed(buf, static_cast<std::size_t>(n), i == 0 ? on_stdout : on_stderr);
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  out_lines.flush(on_stdout);
  err_lines.flush(on_stderr);
  // Pipes closed: the child is exiting (or a grandchild kept them open and we still enforce limits). Its exit
  // is seen without reaping it (WNOWAIT), so its group is killed while its pid cannot yet be anyone else's.
  bool exited = false;
  int wait_errno = 0;
  while (true) {
    siginfo_t info{};
    const int w = waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
    if (w == 0 && info.si_pid == pid) {
      exited = true;
      break;
    }
    if (w < 0 && errno != EINTR) {
      wait_errno = errno;
      break;
    }
    enforce_limits();
    if (abandoned()) return give_up();
    usleep(20000);
  }
  kill(-pid, SIGKILL);  // nothing of its group outlives it
  int status = 0;
  pid_t reaped = -1;
  if (exited) {
    do reaped = waitpid(pid, &status, 0);
    while (reaped < 0 && errno == EINTR);
    if (reaped < 0) wait_errno = errno;
  }
  if (reaped != pid) {
    // The status is gone (with SIGCHLD ignored the kernel reaps children itself): never read as exit code 0.
    result.wait_error = "its exit status was lost (" + std::string(std::strerror(wait_errno)) +
                        (wait_errno == ECHILD ? ": is SIGCHLD ignored?" : "") + ")";
    return result;
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.stopped_by_us = term_sent;
  // A stop signal the watchdog did not send came from outside. A batch system signals every process of a job
  // step at once (Slurm's time limit, scancel), so the child can die of it before our own handler has run: that
  // is an interruption, never a failed measurement (review 34: healthy GPUs read as health faults). Our own
  // signal is given a moment to arrive, so that no further family or GPU starts.
  if (result.signal && !term_sent && stop_signal(result.signal)) {
    for (int i = 0; i < 25 && !g_interrupted; ++i) usleep(20000);
    result.interrupted = true;
  }
  return result;
}

}  // namespace ceilings
