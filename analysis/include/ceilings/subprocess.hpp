// Running a child process (ceilings-bench) with its output streamed line by line, a watchdog
// (SIGTERM, then SIGKILL to its whole process group past the timeout) and interruption: a SIGINT or
// SIGTERM to ceilings stops the child too, so no orphan is left measuring a GPU.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ceilings {

struct ProcessSpec {
  std::vector<std::string> argv;                            // argv[0] is the program path
  std::vector<std::pair<std::string, std::string>> env;    // set (or, with an empty value, kept) in the child
  double timeout_s = 0;                                     // 0: none
  double kill_grace_s = 5;                                  // between SIGTERM and SIGKILL
};

struct ProcessResult {
  int exit_code = -1;   // when it exited normally
  int signal = 0;       // when a signal ended it
  bool timed_out = false;
  // We were asked to stop (SIGINT/SIGTERM) and stopped the child, or a stop signal (SIGTERM, SIGINT, SIGHUP,
  // SIGQUIT) from outside ended it (`signal` says which; a batch system signals the whole job step at once).
  bool interrupted = false;
  bool stopped_by_us = false;  // the watchdog sent it SIGTERM (a timeout, our own interrupt)
  std::string exec_error;     // the program could not be started
  std::string wait_error;     // it ran, but its exit status could not be read (waitid/waitpid failed)
  bool ok() const {
    return exec_error.empty() && wait_error.empty() && !timed_out && !interrupted && signal == 0 && exit_code == 0;
  }
  std::string describe() const;  // "exit code 3", "killed by signal 9", "timed out after 30 s" ...
};

using LineHandler = std::function<void(const std::string& line)>;

ProcessResult run_process(const ProcessSpec& spec, const LineHandler& on_stdout, const LineHandler& on_stderr);

// Installs SIGINT/SIGTERM/SIGHUP/SIGQUIT handlers that make run_process stop its child and return interrupted
// (SIGTERM, SIGKILL after the grace, or at once on a second signal); a signal the caller ignores (nohup) stays
// ignored. SIGPIPE is ignored from then on (the children get its default back): a reader that goes away fails
// the writes instead of killing the run before it saves what finished.
void install_interrupt_handlers();
bool interrupted();
// "SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGKILL", else "signal N".
std::string signal_name(int sig);
// The first signal that interrupted this process (the handlers above): its name, "" where none has.
std::string interrupt_signal_name();

}  // namespace ceilings
