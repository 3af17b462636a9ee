// Units: every stored number is in an SI base unit (B/s, FLOP/s, OP/s, s, Hz, W, B); decimal
// prefixes (GB/s, TFLOP/s) exist only for display and for quantities a user writes. GiB is never GB.
#pragma once
#include <string>

namespace ceilings {

// "4.31 TB/s", "745 TFLOP/s", "812 ns", "1.98 GHz": picks a decimal prefix so 1 <= mantissa < 1000.
// Seconds use ns/us/ms/s. `significant` digits, at least the integer part.
std::string format_quantity(double value, const std::string& unit, int significant = 3);
// GPU memory as vendors size it, in binary units: 151397597184 -> "141.0 GiB".
std::string format_gib(double bytes);
// A GPU's memory where a command also counts bytes in GB (memory, roofline): both, so that `specs` and `show` (GiB)
// and `memory` (GB) are seen to agree: 150109880320 -> "139.8 GiB = 150.1 GB" (review 108: one H200 read 139.8 GiB
// in `show` and 150.1 GB in `memory`).
std::string format_capacity(double bytes);
// Fixed decimals: format_fixed(3.14159, 2) == "3.14".
std::string format_fixed(double value, int decimals);
// A fraction as a percentage: 0.8962 -> "89.6%".
std::string format_percent(double fraction, int decimals = 1);

// A quantity a user wrote, converted to its SI base unit: "4.2 TB/s" -> {4.2e12, "B/s"},
// "55 GB/s", "700 TFLOP/s", "1200 TOP/s", "800 ns", "1.98 GHz", "700 W", "80 GiB" -> bytes,
// "5%" -> {0.05, "%"}. Unknown units and malformed text throw InputError naming `what`.
struct Quantity {
  double value = 0.0;
  std::string unit;  // base unit: B/s, FLOP/s, OP/s, s, Hz, W, B, or % (value is a fraction)
};
Quantity parse_quantity(const std::string& text, const std::string& what);

// True for units where a larger value is better (rates); false for times (latencies).
bool higher_is_better(const std::string& unit);
// True for the units ceilings stores (B/s, FLOP/s, OP/s, s, Hz, W, B).
bool is_known_unit(const std::string& unit);

}  // namespace ceilings
