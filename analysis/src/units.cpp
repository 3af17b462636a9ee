// Formatting and parsing of quantities in SI units.
#include "ceilings/units.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>

#include "ceilings/error.hpp"

namespace ceilings {

namespace {

struct Prefix {
  const char* symbol;
  double factor;
};

// floor(log10 a): 2 for 100-999, -1 for 0.1-0.99 (a > 0).
int magnitude(double a) { return static_cast<int>(std::floor(std::log10(a))); }

// m to `significant` significant digits: 4.29, 42.9, 429, 0.0429 (0 as 0.00). Where rounding reaches the next
// power of ten (99.96 -> 100.0) one decimal fewer keeps the digits counted (100).
std::string significant_text(double m, int significant) {
  const double a = std::fabs(m);
  if (a == 0) return format_fixed(m, std::max(0, significant - 1));
  const int decimals = std::max(0, significant - 1 - magnitude(a));
  const std::string text = format_fixed(m, decimals);
  const double rounded = std::fabs(std::strtod(text.c_str(), nullptr));
  if (decimals > 0 && rounded > 0 && magnitude(rounded) > magnitude(a)) return format_fixed(m, decimals - 1);
  return text;
}

}  // namespace

std::string format_fixed(double value, int decimals) {
  if (!std::isfinite(value)) return std::isnan(value) ? "nan" : (value > 0 ? "inf" : "-inf");
  char buf[64];
  // Past 10^15 fixed notation is a wall of digits (a day count of 10^63 printed 63 of them): 3 significant.
  if (std::fabs(value) >= 1e15)
    std::snprintf(buf, sizeof buf, "%.2e", value);
  else
    std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

std::string format_gib(double bytes) { return format_fixed(bytes / 1073741824.0, 1) + " GiB"; }

std::string format_capacity(double bytes) { return format_gib(bytes) + " = " + format_quantity(bytes, "B", 4); }

std::string format_percent(double fraction, int decimals) { return format_fixed(fraction * 100.0, decimals) + "%"; }

std::string format_quantity(double value, const std::string& unit, int significant) {
  if (!std::isfinite(value)) return format_fixed(value, 0) + " " + unit;
  const bool time = unit == "s";
  if (time && value == 0) return "0 s";  // no time at all, not "0.00 ns"
  static const Prefix time_prefixes[] = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1.0}};
  static const Prefix prefixes[] = {{"", 1.0}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15}, {"E", 1e18}};
  const Prefix* table = time ? time_prefixes : prefixes;
  const std::size_t count = time ? std::size(time_prefixes) : std::size(prefixes);
  const double a = std::fabs(value);
  // Far below the smallest prefix (not "0.00 FLOP/s"), or far past the largest (not "39358310889 s" or "262158 EFLOP";
  // a time of hours, "14400 s", stays as it is)
  if ((value != 0 && a < table[0].factor * 1e-3) || a >= table[count - 1].factor * (time ? 1e6 : 1e4)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*e", std::max(0, significant - 1), value);
    return std::string(buf) + " " + unit;
  }
  std::size_t k = 0;
  for (std::size_t i = 0; i < count; ++i)
    if (a >= table[i].factor) k = i;
  std::string text = significant_text(value / table[k].factor, significant);
  // Rounded up to a thousand of this prefix (999.96 GB/s): one of the next
  if (k + 1 < count && std::fabs(std::strtod(text.c_str(), nullptr)) >= 1000)
    text = significant_text(value / table[++k].factor, significant);
  return text + " " + table[k].symbol + (time ? "" : unit);
}

bool higher_is_better(const std::string& unit) { return unit != "s"; }

bool is_known_unit(const std::string& unit) {
  return unit == "B/s" || unit == "FLOP/s" || unit == "OP/s" || unit == "s" || unit == "Hz" || unit == "W" ||
         unit == "B";
}

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
// A unit's characters: ASCII letters, '/', '%' and the bytes of any other UTF-8 character (the micro sign "µ",
// the Greek mu "μ" a keyboard or NFKC normalisation gives; any other is then named as an unknown unit).
bool is_unit_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '/' || c == '%' ||
         static_cast<unsigned char>(c) >= 0x80;
}

// Splits "  4.2e3 TB/s " into its number and unit text: [space] [sign] (digits [. digits] | . digits)
// [e [sign] digits] [space] [unit characters] [space]. A plain scan, not std::regex, whose recursion
// overflows the stack on long input. False when the text is not of that form.
bool split_quantity(const std::string& text, std::string& number, std::string& unit) {
  std::size_t i = 0;
  const std::size_t n = text.size();
  auto digits = [&] {
    const std::size_t from = i;
    while (i < n && is_digit(text[i])) ++i;
    return i - from;
  };
  while (i < n && is_space(text[i])) ++i;
  const std::size_t start = i;
  if (i < n && (text[i] == '+' || text[i] == '-')) ++i;
  if (digits() > 0) {
    if (i < n && text[i] == '.') {
      ++i;
      digits();
    }
  } else {
    if (i >= n || text[i] != '.') return false;
    ++i;
    if (digits() == 0) return false;
  }
  if (i < n && (text[i] == 'e' || text[i] == 'E')) {
    std::size_t j = i + 1;
    if (j < n && (text[j] == '+' || text[j] == '-')) ++j;
    if (j < n && is_digit(text[j])) {
      i = j;
      digits();
    }
  }
  number = text.substr(start, i - start);
  while (i < n && is_space(text[i])) ++i;
  const std::size_t unit_start = i;
  while (i < n && is_unit_char(text[i])) ++i;
  unit = text.substr(unit_start, i - unit_start);
  while (i < n && is_space(text[i])) ++i;
  return i == n;
}

}  // namespace

Quantity parse_quantity(const std::string& text, const std::string& what) {
  std::string number_text, unit;
  if (!split_quantity(text, number_text, unit))
    throw InputError(what + ": '" + excerpt(text) +
                     "' is not a quantity (expected a number and a unit, e.g. \"4.2 TB/s\")");
  // strtod, not std::stod (which throws std::out_of_range): a number too large or too small for a double
  // (1e400, 1e-320) is bad input, as is one that a prefix makes too large (1e308 TB/s is infinite).
  auto in_range = [](double v) { return std::isfinite(v) && (v == 0 || std::fabs(v) >= DBL_MIN); };
  auto out_of_range = [&] {
    return InputError(what + ": '" + excerpt(text) +
                      "' is out of range: a value must be finite and, unless it is 0, at least 2.2e-308 in magnitude");
  };
  const double number = std::strtod(number_text.c_str(), nullptr);
  if (!in_range(number)) throw out_of_range();
  if (unit.empty())
    throw InputError(what + ": '" + excerpt(text) + "' has no unit (write e.g. \"55 GB/s\", \"700 TFLOP/s\", \"5%\")");
  if (unit == "%") {
    if (!in_range(number / 100.0)) throw out_of_range();
    return {number / 100.0, "%"};
  }

  struct Base {
    const char* suffix;
    const char* base;
  };
  // Longest suffixes first so "FLOP/s" is not read as "B/s" with prefix "FLO".
  static const Base bases[] = {{"FLOP/s", "FLOP/s"}, {"FLOPS", "FLOP/s"}, {"OP/s", "OP/s"}, {"OPS", "OP/s"},
                               {"B/s", "B/s"},       {"Hz", "Hz"},         {"W", "W"},       {"s", "s"},
                               {"B", "B"}};
  for (const Base& b : bases) {
    const std::string suffix = b.suffix;
    if (unit.size() < suffix.size() || unit.compare(unit.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    std::string prefix = unit.substr(0, unit.size() - suffix.size());
    double factor = 0.0;
    const std::string base = b.base;
    if (base == "s") {
      if (prefix.empty()) factor = 1.0;
      else if (prefix == "m") factor = 1e-3;
      else if (prefix == "u" || prefix == "\u00B5" || prefix == "\u03BC") factor = 1e-6;
      else if (prefix == "n") factor = 1e-9;
    } else if ((base == "B" || base == "B/s") && prefix.size() == 2 && prefix[1] == 'i') {
      const std::string bin = "KMGTP";
      const auto pos = bin.find(prefix[0]);
      if (pos != std::string::npos) factor = std::pow(1024.0, static_cast<double>(pos + 1));
    } else {
      if (prefix.empty()) factor = 1.0;
      else if (prefix == "k" || prefix == "K") factor = 1e3;
      else if (prefix == "M") factor = 1e6;
      else if (prefix == "G") factor = 1e9;
      else if (prefix == "T") factor = 1e12;
      else if (prefix == "P") factor = 1e15;
    }
    if (factor == 0.0) break;
    if (!in_range(number * factor)) throw out_of_range();
    return {number * factor, base};
  }
  throw InputError(what + ": unknown unit '" + excerpt(unit) +
                   "' (known: B/s, FLOP/s, OP/s, s, Hz, W, B with k/M/G/T/P prefixes, KiB..PiB, %)");
}

}  // namespace ceilings
