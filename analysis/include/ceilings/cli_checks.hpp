// Option validators for the CLI11 front ends, `ceilings` and `ceilings-bench` alike: numbers that must be finite
// and in range (with messages in words), no empty values.
#pragma once
#include <CLI/CLI.hpp>
#include <cmath>
#include <functional>
#include <sstream>
#include <string>

namespace ceilings::cli {

// CLI11's PositiveNumber and Range let "nan" through (every comparison with NaN is false) and name their
// bounds as 300-digit numbers; these reject nan and inf and say what they want in words.

namespace detail {
inline std::string number_text(double v) {
  std::ostringstream os;
  os.precision(15);  // whole byte counts print whole: 1099511627776, not 1.09951e+12
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
