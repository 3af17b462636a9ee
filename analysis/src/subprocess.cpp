// fork/exec with pipes, poll, a watchdog and process-group cleanup.
#include "ceilings/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
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

volatile std::sig_atomic_t g_interrupted = 0;

void on_signal(int) { g_interrupted = 1; }

struct LineBuffer {
  std::string pending;
  void feed(const char* data, std::size_t n, const LineHandler& handler) {
    pending.append(data, n);
    std::size_t pos;
    while ((pos = pending.find('\n')) != std::string::npos) {
      std::string line = pending.substr(0, pos);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      pending.erase(0, pos + 1);
      if (handler) handler(line);
    }
  }
  void flush(const LineHandler& handler) {
    if (!pending.empty() && handler) handler(pending);
    pending.clear();
  }
};

}  // namespace

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool interrupted() { return g_interrupted != 0; }

std::string ProcessResult::describe() const {
  if (!exec_error.empty()) return "could not start: " + exec_error;
  if (interrupted) return "interrupted";
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
  int out_pipe[2], err_pipe[2], exec_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) || pipe2(err_pipe, O_CLOEXEC) || pipe2(exec_pipe, O_CLOEXEC)) {
    result.exec_error = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  std::vector<char*> argv;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  const pid_t pid = fork();
  if (pid < 0) {
    result.exec_error = std::string("fork: ") + std::strerror(errno);
    return result;
  }
  if (pid == 0) {
    setpgid(0, 0);  // its own group, so the watchdog can end it and anything it started
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
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
  auto term_at = clock::time_point();  // when SIGTERM went
  bool term_sent = false, kill_sent = false;
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
    // Compared in double seconds: a grace too long for the clock's integer ticks must not wrap around.
    if (term_sent && !kill_sent && now - term_at >= std::chrono::duration<double>(spec.kill_grace_s)) {
      kill(-pid, SIGKILL);
      kill_sent = true;
    }
  };
  while (open_fds > 0) {
    enforce_limits();
    const int ready = poll(fds, 2, 100);
    if (ready < 0 && errno != EINTR) break;
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
  // Pipes closed: the child is exiting (or a grandchild kept them open and we still enforce limits).
  int status = 0;
  while (true) {
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    enforce_limits();
    usleep(20000);
  }
  kill(-pid, SIGKILL);  // nothing of its group outlives it
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

}  // namespace ceilings
