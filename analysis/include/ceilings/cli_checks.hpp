// Option validators for the CLI11 front ends, `ceilings` and `ceilings-bench` alike: numbers that must be finite
// and in range (with messages in words), no empty values.
#pragma once
#include <CLI/CLI.hpp>
#include <cctype>
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
// A finite number strictly between lo and hi (a probability that must be neither 0 nor 1).
inline CLI::Validator number_between(double lo, double hi) {
  const std::string range = detail::number_text(lo) + " < x < " + detail::number_text(hi);
  return detail::number_check(range,
                              "a number above " + detail::number_text(lo) + " and below " + detail::number_text(hi),
                              [lo, hi](double v) { return v > lo && v < hi; });
}
// Not the empty string: an empty value would otherwise act as if the option were not given (or as 0).
inline CLI::Validator non_empty() {
  return CLI::Validator([](std::string& input) { return input.empty() ? std::string("must not be empty") : std::string(); },
                        "");
}

// Numbers written in plain decimal only (`whole`: an integer option; `is_signed`: it may be negative). CLI11
// reads an integer "010" as octal 8 and "0x10" as 16, and a floating-point "0x1p3" as 8, while a
// floating-point "010" is 10: one spelling, two values. A whole number may have leading zeros (read as
// decimal: they are removed before CLI11 converts it); no spaces, no digit separators, no base prefixes.
inline CLI::Validator decimal_number(bool whole, bool is_signed = true) {
  return CLI::Validator(
      [whole, is_signed](std::string& input) -> std::string {
        if (input.empty()) return "must not be empty";
        std::size_t i = (input[0] == '+' || input[0] == '-') ? 1 : 0;
        if (!whole) {  // nan and inf: left to the option's range or finite-number check, which names what it wants
          std::string word = input.substr(i);
          for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
          if (word == "nan" || word == "inf" || word == "infinity") return std::string();
        }
        if (!is_signed && input[0] == '-')  // CLI11 reads "-1" as 2^64 - 1 here
          return "must be a whole number of at least 0, not '" + input + "'";
        const std::size_t sign = i;
        std::size_t digits = 0, point = 0, exponent = 0;
        for (; i < input.size(); ++i) {
          const char c = input[i];
          if (c >= '0' && c <= '9') {
            ++digits;
          } else if (!whole && c == '.' && !point && !exponent) {
            ++point;
          } else if (!whole && (c == 'e' || c == 'E') && digits && !exponent) {
            ++exponent;
            if (i + 1 < input.size() && (input[i + 1] == '+' || input[i + 1] == '-')) ++i;
            if (i + 1 >= input.size()) return "must be a decimal number, not '" + input + "'";
            digits = 0;  // the exponent needs digits of its own
          } else {
            return std::string("must be ") + (whole ? "a whole number" : "a number") + " in decimal digits, not '" +
                   input + "'";
          }
        }
        if (!digits) return std::string("must be ") + (whole ? "a whole number" : "a number") + ", not '" + input + "'";
        if (whole) {  // "010" is ten, as it is for every other number here
          const std::size_t first = input.find_first_not_of('0', sign);
          input.erase(sign, (first == std::string::npos ? input.size() - 1 : first) - sign);
        }
        return std::string();
      },
      "");
}

// Run by main on every subcommand once its options are added: every option that takes a value rejects
// the empty string, every option CLI11 reads as a floating-point number (type FLOAT) rejects nan and inf,
// and every number (FLOAT, INT, UINT) must be written in decimal.
inline void harden_options(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_type_size_max() <= 0) continue;  // a flag
    opt->check(non_empty());
    const std::string type = opt->get_type_name();
    const bool is_float = type.rfind("FLOAT", 0) == 0;
    if (is_float) opt->check(finite_number());
    // A transform (it may drop leading zeros), which CLI11 runs before the option's other checks.
    const bool is_unsigned = type.rfind("UINT", 0) == 0;
    if (is_float || is_unsigned || type.rfind("INT", 0) == 0) opt->transform(decimal_number(!is_float, !is_unsigned));
  }
}

}  // namespace ceilings::cli
