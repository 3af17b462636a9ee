// The child-process runner (watchdog, exit codes, output) and the NVML loader's failure paths.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "ceilings/subprocess.hpp"
#include "harness/nvml.hpp"

using namespace ceilings;

TEST(Subprocess, ReportsExitCodeAndOutputLines) {
  std::vector<std::string> out, err;
  const auto r = run_process({{"/bin/sh", "-c", "echo one; echo two; echo oops >&2; exit 4"}, {}, 10, 1},
                             [&](const std::string& l) { out.push_back(l); },
                             [&](const std::string& l) { err.push_back(l); });
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(out, (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(err, (std::vector<std::string>{"oops"}));
  EXPECT_EQ(r.describe(), "exit code 4");
}

// A descendant that outlives the child and holds its output open (a wrapper's background logger) does not make a
// finished run wait for the watchdog and read as timed out (review 89); it is ended with the child's group.
TEST(Subprocess, ADescendantHoldingTheOutputDoesNotOutliveTheChild) {
  std::vector<std::string> out;
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_process({{"/bin/sh", "-c", "sleep 30 & echo done; exit 0"}, {}, 20, 1},
                             [&](const std::string& l) { out.push_back(l); }, nullptr);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(out, (std::vector<std::string>{"done"}));
  EXPECT_LT(took, 10);  // the drain after the child's exit (2 s), not the 20 s limit
}

TEST(Subprocess, PassesEnvironment) {
  std::string seen;
  const auto r = run_process({{"/bin/sh", "-c", "echo \"$CEILINGS_X\""}, {{"CEILINGS_X", "42"}}, 10, 1},
                             [&](const std::string& l) { seen = l; }, nullptr);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(seen, "42");
}

TEST(Subprocess, WatchdogKillsAHangingChildAndItsGroup) {
  const auto start = std::chrono::steady_clock::now();
  // The child ignores SIGTERM and leaves a grandchild: both must be gone within the grace period.
  const std::string pidfile = "/tmp/ceilings_watchdog_" + std::to_string(::getpid()) + ".pid";
  const auto r = run_process(
      {{"/bin/sh", "-c", "trap '' TERM; sleep 30 & echo $! > " + pidfile + "; sleep 30"}, {}, 0.5, 0.5}, nullptr,
      nullptr);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.signal, 9);
  EXPECT_LT(took, 10.0);
  std::ifstream in(pidfile);
  pid_t grandchild = 0;
  ASSERT_TRUE(in >> grandchild) << "the child wrote its grandchild's pid";
  std::remove(pidfile.c_str());
  // Killed with its group; reaped by init once orphaned, so it may linger as a zombie for a moment.
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
    std::string line;
    gone = !std::getline(stat, line) || line.find(") Z ") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(gone) << "grandchild " << grandchild << " outlived its group";
}

// A stop signal the watchdog did not send came from outside (a batch system signals every process of a job step
// at once): an interruption, not a crash (review 34 H1). A crash's signal, and SIGKILL (the OOM killer too), stay
// what they were; so does a SIGTERM the watchdog sent.
TEST(Subprocess, AStopSignalFromOutsideIsAnInterruption) {
  for (const char* sig : {"TERM", "INT", "HUP"}) {
    const auto r = run_process({{"/bin/sh", "-c", std::string("kill -") + sig + " $$; sleep 5"}, {}, 10, 1}, nullptr, nullptr);
    EXPECT_TRUE(r.interrupted) << sig;
    EXPECT_FALSE(r.stopped_by_us) << sig;
    EXPECT_FALSE(r.ok()) << sig;
    EXPECT_EQ(r.describe(), std::string("stopped by SIG") + sig + " from outside");
  }
  for (const char* sig : {"SEGV", "ABRT", "KILL"}) {
    const auto r = run_process({{"/bin/sh", "-c", std::string("kill -") + sig + " $$; sleep 5"}, {}, 10, 1}, nullptr, nullptr);
    EXPECT_FALSE(r.interrupted) << sig;
    EXPECT_NE(r.signal, 0) << sig;
    EXPECT_EQ(r.describe().rfind("killed by signal ", 0), 0u) << r.describe();
  }
  const auto timed_out = run_process({{"/bin/sh", "-c", "sleep 30"}, {}, 0.3, 1}, nullptr, nullptr);
  EXPECT_TRUE(timed_out.timed_out);
  EXPECT_TRUE(timed_out.stopped_by_us);
  EXPECT_FALSE(timed_out.interrupted);  // our own SIGTERM: a timeout, not an interruption
  EXPECT_EQ(signal_name(SIGTERM), "SIGTERM");
  EXPECT_EQ(signal_name(SIGUSR1), "signal " + std::to_string(SIGUSR1));
}

// A child's bytes reach the terminal and the profile's JSON: invalid UTF-8 and control characters become '?'
// (a Latin-1 'caf\xe9' on a child's stderr made the JSON writer throw and `measure --all-gpus` abort), tabs stay,
// and a line with no newline is cut into 64 KiB pieces instead of growing without bound.
TEST(Subprocess, OutputLinesArePrintableAndBounded) {
  std::vector<std::string> out, err;
  const auto r = run_process({{"/bin/sh", "-c",
                               "printf 'caf\\351\\tok\\033[2J\\n' >&2; head -c 150000 /dev/zero | tr '\\0' x"},
                              {}, 10, 1},
                             [&](const std::string& l) { out.push_back(l); },
                             [&](const std::string& l) { err.push_back(l); });
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(err, (std::vector<std::string>{"caf? ok?[2J"}));  // a tab as a space: a profile may quote the line
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].size(), 65536u);
  EXPECT_EQ(out[1].size(), 65536u);
  EXPECT_EQ(out[2].size(), 150000u - 2 * 65536u);

  // Cuts never split a UTF-8 character (30000 euro signs, 3 bytes each, arrive whole in their pieces), and a
  // CRLF that arrives in two reads ends its line once, with no empty line after it.
  out.clear();
  const auto utf8 = run_process({{"/bin/sh", "-c",
                                  "i=0; s=''; while [ $i -lt 1000 ]; do s=\"$s\342\202\254\"; i=$((i+1)); done; "
                                  "j=0; while [ $j -lt 30 ]; do printf '%s' \"$s\"; j=$((j+1)); done; printf '\\n'; "
                                  "head -c 65535 /dev/zero | tr '\\0' A; printf '\\r'; sleep 0.2; printf '\\nend\\n'"},
                                 {}, 20, 1},
                                [&](const std::string& l) { out.push_back(l); }, nullptr);
  EXPECT_TRUE(utf8.ok()) << utf8.describe();
  std::string euros;
  std::size_t i = 0;
  for (; i < out.size() && out[i].find('A') == std::string::npos; ++i) euros += out[i];
  EXPECT_EQ(euros.size(), 90000u);
  EXPECT_EQ(euros.find('?'), std::string::npos) << "a character was cut in two";
  ASSERT_EQ(out.size(), i + 2) << "the CRLF line and 'end', nothing between them";
  EXPECT_EQ(out[i], std::string(65535, 'A'));
  EXPECT_EQ(out[i + 1], "end");
}

// With SIGCHLD ignored (inherited through exec) the kernel reaps children itself and their statuses are lost: a
// child that exits 3 must not read as exit code 0.
TEST(Subprocess, ALostExitStatusIsNeverSuccess) {
  struct sigaction old {}, ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGCHLD, &ignore, &old);
  const auto r = run_process({{"/bin/sh", "-c", "exit 3"}, {}, 10, 1}, nullptr, nullptr);
  sigaction(SIGCHLD, &old, nullptr);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.describe().find("exit status was lost"), std::string::npos) << r.describe();
  // install_interrupt_handlers (what `measure` calls first) takes SIGCHLD's default back.
  sigaction(SIGCHLD, &ignore, &old);
  install_interrupt_handlers();
  const auto back = run_process({{"/bin/sh", "-c", "exit 3"}, {}, 10, 1}, nullptr, nullptr);
  sigaction(SIGCHLD, &old, nullptr);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) signal(sig, SIG_DFL);
  EXPECT_EQ(back.exit_code, 3) << back.describe();
}

// nohup's SIGHUP (or a background job's SIGINT) stays ignored; SIGPIPE is ignored, so a log reader that goes away
// cannot kill a run before it saves what finished.
TEST(Subprocess, InterruptHandlersKeepIgnoredSignalsAndIgnoreSigpipe) {
  struct sigaction ignore {}, old_hup {}, old_pipe {}, now {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGHUP, &ignore, &old_hup);
  sigaction(SIGPIPE, nullptr, &old_pipe);
  install_interrupt_handlers();
  sigaction(SIGHUP, nullptr, &now);
  EXPECT_EQ(now.sa_handler, SIG_IGN);
  sigaction(SIGINT, nullptr, &now);
  EXPECT_NE(now.sa_handler, SIG_IGN);
  EXPECT_NE(now.sa_handler, SIG_DFL);
  sigaction(SIGPIPE, nullptr, &now);
  EXPECT_EQ(now.sa_handler, SIG_IGN);
  // The children get SIGPIPE's default back (an ignored signal would be inherited through exec).
  std::string line;
  const auto r = run_process({{"/bin/sh", "-c", "grep SigIgn /proc/self/status"}, {}, 10, 1},
                             [&](const std::string& l) { line = l; }, nullptr);
  EXPECT_TRUE(r.ok()) << r.describe();
  ASSERT_EQ(line.rfind("SigIgn:", 0), 0u) << line;
  const unsigned long long ignored = std::stoull(line.substr(line.find_first_not_of(" \t", 7)), nullptr, 16);
  EXPECT_EQ(ignored & (1ull << (SIGPIPE - 1)), 0u) << line;
  sigaction(SIGHUP, &old_hup, nullptr);
  sigaction(SIGPIPE, &old_pipe, nullptr);
  for (int sig : {SIGINT, SIGTERM, SIGQUIT}) signal(sig, SIG_DFL);
}

TEST(Subprocess, MissingProgramIsAnExecError) {
  const auto r = run_process({{"/nonexistent/program"}, {}, 5, 1}, nullptr, nullptr);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.exec_error.find("No such file"), std::string::npos) << r.exec_error;
}

TEST(NvmlLoader, MissingLibraryIsUnavailableNotACrash) {
  setenv(nvml::Library::kPathVariable, "/nonexistent/libnvidia-ml.so.1", 1);
  std::string why;
  EXPECT_EQ(nvml::Library::open(&why), nullptr);
  EXPECT_NE(why.find("cannot load"), std::string::npos) << why;
  unsetenv(nvml::Library::kPathVariable);
}

TEST(NvmlLoader, ALibraryWithoutNvmlSymbolsIsRejected) {
  setenv(nvml::Library::kPathVariable, "libm.so.6", 1);
  std::string why;
  EXPECT_EQ(nvml::Library::open(&why), nullptr);
  EXPECT_NE(why.find("not an NVML library"), std::string::npos) << why;
  unsetenv(nvml::Library::kPathVariable);
}
