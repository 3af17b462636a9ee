// `ceilings`: the user's entry point. Every subcommand lives in its own file in this folder.
// Exit codes: 0 ok/pass, 1 a verdict failed, 2 usage or bad input, 3 incomplete.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "ceilings/error.hpp"
#include "ceilings/json_fields.hpp"
#include "ceilings/version.hpp"
#include "subcommand.hpp"

#ifndef CEILINGS_VERSION
#define CEILINGS_VERSION "unknown"
#endif

namespace ceilings::cli {

namespace {
std::vector<Registered>& registry() {
  static std::vector<Registered> all;
  return all;
}
}  // namespace

bool add_subcommand(const char* name, const char* description, Setup setup) {
  registry().push_back({name, description, std::move(setup)});
  return true;
}

const std::vector<Registered>& subcommands() {
  std::sort(registry().begin(), registry().end(), [](const Registered& a, const Registered& b) { return a.name < b.name; });
  return registry();
}

namespace {
std::string& invocation_text() {
  static std::string text;
  return text;
}
}  // namespace

void set_invocation(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    const bool plain = !a.empty() && a.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                         "0123456789_./=:,+-@%") == std::string::npos;
    std::string quoted = a;
    if (!plain) {  // 'text', a quote inside as '\'' (main has refused control characters and broken UTF-8)
      quoted = "'";
      for (char c : a) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
      quoted += "'";
    }
    out += (out.empty() ? "" : " ") + quoted;
  }
  invocation_text() = out;
}

const std::string& invocation() { return invocation_text(); }

std::string executable_directory() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string path(buf, static_cast<std::size_t>(n));
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace ceilings::cli

constexpr std::size_t kMaxArgumentBytes = 4096;

namespace {
// Whether what was written to standard output reached it (`> report.json` on a full disk, a closed stdout):
// where not, says so on stderr, naming `what`, and returns false: what was written may be empty or cut short,
// and must not leave exit 0 behind it.
bool stdout_written(const std::string& what) {
  // A report longer than the buffer met the error (a full disk: ENOSPC) as it was written, and the C library
  // does not try that write again: the reason is the errno it left where these flushes set none, if it is an
  // error a write gives (another call may have set errno since).
  const int earlier = errno;
  errno = 0;
  std::cout.flush();
  if (std::fflush(stdout) == 0 && !std::ferror(stdout) && std::cout.good()) return true;
  const int code = errno ? errno : earlier;
  const bool write_error =
      code == ENOSPC || code == EDQUOT || code == EFBIG || code == EIO || code == EBADF || code == EPIPE;
  const std::string why = write_error ? std::strerror(code) : "a write failed";
  std::fprintf(stderr, "%s: error: could not write the output to standard output (%s): it may be missing or cut "
               "short\n", what.c_str(), why.c_str());
  return false;
}
}  // namespace

// After a usage error: where the words it tripped on are how another subcommand spells something, how this one does
// (review 108: the analysis commands take --json and --profile P, the judging ones --format and a positional profile,
// and CLI11's "argument was not expected: json --format" named neither).
void say_how_this_subcommand_takes_it(CLI::App& app, int argc, char** argv) {
  CLI::App* sub = nullptr;
  bool format = false, json_flag = false, profile = false;
  int positional_json = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string w = argv[i];
    if (!sub && !w.empty() && w[0] != '-') {
      try {
        sub = app.get_subcommand(w);
      } catch (const CLI::OptionNotFound&) {
        return;
      }
      continue;
    }
    format = format || w == "--format" || w.rfind("--format=", 0) == 0;
    json_flag = json_flag || w == "--json";
    profile = profile || w == "--profile" || w.rfind("--profile=", 0) == 0;
    // A plain word naming a JSON file: not an option ("--x=y.json"), nor the value of one that takes a value (review
    // 110: "--hf-config=x.json" counted as a profile given positionally).
    const std::string before = argv[i - 1];
    const CLI::Option* option = sub && before.rfind("-", 0) == 0 ? sub->get_option_no_throw(before) : nullptr;
    const bool a_value = option && option->get_type_size() != 0;
    if (sub && !a_value && w[0] != '-' && w.size() > 5 && w.compare(w.size() - 5, 5, ".json") == 0)
      ++positional_json;
  }
  if (!sub) return;
  const std::string name = "ceilings " + sub->get_name();
  const auto has = [&](const char* option) { return sub->get_option_no_throw(option) != nullptr; };
  if (format && !has("--format") && has("--json"))
    std::fprintf(stderr, "hint: %s takes --json for JSON output (it has no --format)\n", name.c_str());
  if (json_flag && !has("--json") && has("--format"))
    std::fprintf(stderr, "hint: %s takes --format json for JSON output (it has no --json)\n", name.c_str());
  if (profile && !has("--profile"))
    std::fprintf(stderr, "hint: %s takes the profile as a plain argument: %s PROFILE (it has no --profile)\n",
                 name.c_str(), name.c_str());
  if (!profile && positional_json > 0 && has("--profile"))
    std::fprintf(stderr, "hint: %s takes a profile as --profile PROFILE\n", name.c_str());
  if (sub->get_name() == "qualify" && positional_json > 1)
    std::fprintf(stderr, "hint: ceilings qualify judges one profile a call; for many GPUs, `ceilings fleet DIR` judges "
                         "them together and names each bad one (or run qualify once per profile)\n");
}

int main(int argc, char** argv) {
  using namespace ceilings;
  // Arguments end up in JSON (profiles, --json output), which must be UTF-8, and in messages on a terminal: a
  // control character or a broken UTF-8 sequence (a Latin-1 file name) is refused before anything runs, not
  // found by the JSON writer after a measurement.
  for (int i = 1; i < argc; ++i) {
    // Every value here is a name, a number, a path or a regex: none is longer than a path may be (4096). A
    // longer one is a mistake (a file pasted in), and its error message would echo all of it.
    if (const std::size_t n = std::strlen(argv[i]); n > kMaxArgumentBytes) {
      std::fprintf(stderr, "ceilings: argument %d is %zu bytes long ('%s'): arguments are at most %zu bytes\n", i, n,
                   excerpt(argv[i]).c_str(), kMaxArgumentBytes);
      return kExitBadInput;
    }
    std::string problem = plain_text_problem(argv[i]);
    if (problem.empty()) continue;
    problem = problem.substr(0, std::min(problem.find(", which"), problem.find(';')));
    std::fprintf(stderr, "ceilings: argument %d %s: arguments must be printable UTF-8 text (names and values go "
                 "into JSON)\n", i, problem.c_str());
    return kExitBadInput;
  }
  cli::set_invocation(argc, argv);
  CLI::App app("ceilings: measured GPU ceilings, and the MFU/MBU/roofline analysis that uses them", "ceilings");
  app.set_version_flag("--version", std::string("ceilings ") + CEILINGS_VERSION + " (" + ceilings::git_describe() +
                                         ", measurement code " + ceilings::measurement_code() + ")");
  app.require_subcommand(1);
  // What scripts branch on, in every --help (the README's "Exit codes everywhere").
  const std::string exit_codes = "Exit codes: 0 ok / pass, 1 a verdict failed, 2 usage or bad input, 3 incomplete (no "
                                 "GPU, could not measure, a check could not run, the output could not be written).";
  app.footer(exit_codes);
  std::map<CLI::App*, cli::Runner> runners;
  for (const auto& reg : cli::subcommands()) {
    CLI::App* sub = app.add_subcommand(reg.name, reg.description);
    sub->footer(exit_codes);
    runners[sub] = reg.setup(*sub);
    cli::harden_options(*sub);
  }
  // The first word that is not an option names the subcommand. CLI11 would answer an unknown one with
  // "A subcommand is required", which names the wrong problem.
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] != '-') {
      std::string known;
      bool found = false;
      for (const auto& reg : cli::subcommands()) {
        known += (known.empty() ? "" : ", ") + reg.name;
        found = found || reg.name == word;
      }
      if (found) break;
      const std::string before = i > 1 ? argv[i - 1] : "";
      if (i > 1 && before != "-h" && before != "--help" && before != "--version") {
        // `ceilings --format json show P`: the word is an option's value, not a subcommand
        std::fprintf(stderr,
                     "ceilings: '%s' comes before the subcommand; options go after it: ceilings SUBCOMMAND [OPTIONS] "
                     "(subcommands: %s)\n",
                     excerpt(before).c_str(), known.c_str());
        return kExitBadInput;
      }
      std::fprintf(stderr, "ceilings: unknown subcommand '%s' (known: %s)\nRun with --help for more information.\n",
                   excerpt(word).c_str(), known.c_str());
      return kExitBadInput;
    }
    if (word == "--") break;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {  // help and version are output like any report: exit 3 if lost
    const int code = app.exit(e);
    return stdout_written("ceilings") ? code : kExitIncomplete;
  } catch (const CLI::CallForAllHelp& e) {
    const int code = app.exit(e);
    return stdout_written("ceilings") ? code : kExitIncomplete;
  } catch (const CLI::CallForVersion& e) {
    const int code = app.exit(e);
    return stdout_written("ceilings") ? code : kExitIncomplete;
  } catch (const CLI::ConversionError& e) {
    // "Could not convert: --dp = 99999999999999999999999": every number passed the decimal check first, so a whole
    // number CLI11 could not convert is past the range of the option's type. Said as the other checks say theirs.
    const std::string what = e.what(), prefix = "Could not convert: ";
    const std::size_t eq = what.find(" = ");
    const std::string value = eq == std::string::npos ? std::string() : what.substr(eq + 3);
    const std::size_t sign = !value.empty() && (value[0] == '-' || value[0] == '+') ? 1 : 0;
    if (what.rfind(prefix, 0) == 0 && value.size() > sign && value.find_first_not_of("0123456789", sign) == std::string::npos) {
      std::fprintf(stderr, "%s: must be a number within the option's range, not '%s' (out of range)\n%s\n",
                   what.substr(prefix.size(), eq - prefix.size()).c_str(), excerpt(value).c_str(),
                   "Run with --help for more information.");
      return kExitBadInput;
    }
    app.exit(e);
    return kExitBadInput;
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    say_how_this_subcommand_takes_it(app, argc, argv);
    return kExitBadInput;
  }
  for (auto& [sub, run] : runners) {
    if (!sub->parsed()) continue;
    try {
      const int code = run();
      // A report that did not reach its reader (`> report.json` on a full disk, a closed pipe) must not leave
      // a pass behind it: what was written may be empty or cut short.
      if (!stdout_written("ceilings " + sub->get_name())) return kExitIncomplete;
      return code;
    } catch (const Error& e) {
      std::fprintf(stderr, "ceilings %s: error: %s\n", sub->get_name().c_str(), e.what());
      return e.exit_code();
    } catch (const std::exception& e) {  // a library's message may quote the bytes it choked on
      std::fprintf(stderr, "ceilings %s: error: %s\n", sub->get_name().c_str(), terminal_safe(e.what()).c_str());
      return kExitIncomplete;
    }
  }
  return kExitBadInput;
}
