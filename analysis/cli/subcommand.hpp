// How a `ceilings` subcommand joins the CLI: one file in analysis/cli/ calls
// CEILINGS_SUBCOMMAND with a setup function that adds its options to the CLI11 subcommand and
// returns the function to run (which returns an exit code or throws ceilings::Error).
#pragma once
#include <CLI/CLI.hpp>
#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace ceilings::cli {

using Runner = std::function<int()>;
using Setup = std::function<Runner(CLI::App&)>;

bool add_subcommand(const char* name, const char* description, Setup setup);

struct Registered {
  std::string name, description;
  Setup setup;
};
const std::vector<Registered>& subcommands();  // sorted by name

// The directory of the running executable (to find ceilings-bench beside it).
std::string executable_directory();

// ---- option validators -----------------------------------------------------------------------------
// CLI11's PositiveNumber and Range let "nan" through (every comparison with NaN is false) and name their
// bounds as 300-digit numbers; these reject nan and inf and say what they want in words.

namespace detail {
inline std::string number_text(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}
// A validator for a number with `ok` deciding, `want` saying what is wanted ("a positive number").
inline CLI::Validator number_check(const std::string& description, const std::string& want,
                                   std::function<bool(double)> ok) {
  return CLI::Validator(
      [want, ok](std::string& input) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(input, v) || !std::isfinite(v) || !ok(v))
          return "must be " + want + ", not '" + input + "'";
        return std::string();
      },
      description);
}
}  // namespace detail

// A finite number: not nan, not inf (nor a number too large for a double, such as 1e400).
inline CLI::Validator finite_number() { return detail::number_check("", "a finite number", [](double) { return true; }); }
// A finite number above zero.
inline CLI::Validator positive_number() {
  return detail::number_check("POSITIVE", "a positive number", [](double v) { return v > 0; });
}
// A finite number of at least zero.
inline CLI::Validator non_negative_number() {
  return detail::number_check("NONNEGATIVE", "a number of at least 0", [](double v) { return v >= 0; });
}
// A finite number from lo to hi, both included.
inline CLI::Validator number_in(double lo, double hi) {
  const std::string range = detail::number_text(lo) + " to " + detail::number_text(hi);
  return detail::number_check(range, "a number from " + range, [lo, hi](double v) { return v >= lo && v <= hi; });
}
// Not the empty string: an empty value would otherwise act as if the option were not given (or as 0).
inline CLI::Validator non_empty() {
  return CLI::Validator([](std::string& input) { return input.empty() ? std::string("must not be empty") : std::string(); },
                        "");
}

// Run by main on every subcommand once its options are added: every option that takes a value rejects
// the empty string, and every option CLI11 reads as a floating-point number (type FLOAT) rejects nan and inf.
inline void harden_options(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_type_size_max() <= 0) continue;  // a flag
    opt->check(non_empty());
    if (opt->get_type_name().rfind("FLOAT", 0) == 0) opt->check(finite_number());
  }
}

}  // namespace ceilings::cli

#define CEILINGS_SUBCOMMAND_CAT2(a, b) a##b
#define CEILINGS_SUBCOMMAND_CAT(a, b) CEILINGS_SUBCOMMAND_CAT2(a, b)
#define CEILINGS_SUBCOMMAND(name, description, setup)                                 \
  static const bool CEILINGS_SUBCOMMAND_CAT(ceilings_subcommand_, __LINE__) = \
      ::ceilings::cli::add_subcommand(name, description, setup)
