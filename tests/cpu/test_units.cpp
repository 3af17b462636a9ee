// Units: display formatting and parsing of user-written quantities.
#include <gtest/gtest.h>

#include <functional>
#include <regex>

#include "ceilings/error.hpp"
#include "ceilings/units.hpp"

using namespace ceilings;

TEST(Units, FormatPicksDecimalPrefix) {
  EXPECT_EQ(format_quantity(4.3101e12, "B/s"), "4.31 TB/s");
  EXPECT_EQ(format_quantity(7.45e14, "FLOP/s"), "745 TFLOP/s");
  EXPECT_EQ(format_quantity(55.3e9, "B/s"), "55.3 GB/s");
  EXPECT_EQ(format_quantity(1.98e9, "Hz"), "1.98 GHz");
  EXPECT_EQ(format_quantity(700, "W"), "700 W");
  EXPECT_EQ(format_quantity(1.4533e15, "FLOP/s"), "1.45 PFLOP/s");
}

TEST(Units, FormatTimesUseSecondsPrefixes) {
  EXPECT_EQ(format_quantity(812e-9, "s"), "812 ns");
  EXPECT_EQ(format_quantity(2.1e-6, "s"), "2.10 us");
  EXPECT_EQ(format_quantity(0.0153, "s"), "15.3 ms");
  EXPECT_EQ(format_quantity(12.5, "s"), "12.5 s");
}

TEST(Units, FormatRoundsAtPrefixBoundary) {
  // 999.96e9 must not print as "1000 GB/s".
  EXPECT_EQ(format_quantity(999.96e9, "B/s"), "1.00 TB/s");
  // With 4 digits 999.7 GB/s is 999.7 GB/s (it was "1.000 TB/s"); past 999.95 it rounds to the next prefix.
  EXPECT_EQ(format_quantity(999.7e9, "B/s", 4), "999.7 GB/s");
  EXPECT_EQ(format_quantity(999.97e9, "B/s", 4), "1.000 TB/s");
  EXPECT_EQ(format_quantity(999.7e-9, "s", 4), "999.7 ns");
  EXPECT_EQ(format_quantity(999.7e-9, "s"), "1.00 us");
  // Rounding up to a power of ten keeps the digits counted: 99.96 is 100, not 100.0 (four).
  EXPECT_EQ(format_quantity(99.96e9, "B/s"), "100 GB/s");
  EXPECT_EQ(format_quantity(9.996e9, "B/s"), "10.0 GB/s");
  EXPECT_EQ(format_quantity(99.96e-9, "s"), "100 ns");
  // Below 1 in the smallest prefix, the significant digits still count (0.0025 B/s read "0.00 B/s").
  EXPECT_EQ(format_quantity(0.0025, "B/s"), "0.00250 B/s");
  EXPECT_EQ(format_quantity(0.5, "W"), "0.500 W");
  EXPECT_EQ(format_quantity(1e-13, "s"), "1.00e-13 s");
  EXPECT_EQ(format_quantity(2.5e-10, "s"), "0.250 ns");
  EXPECT_EQ(format_quantity(-4.3101e12, "B/s"), "-4.31 TB/s");
}

TEST(Units, PercentAndFixed) {
  EXPECT_EQ(format_percent(0.8962), "89.6%");
  EXPECT_EQ(format_percent(0.0031, 2), "0.31%");
  EXPECT_EQ(format_fixed(3.14159, 2), "3.14");
}

// Numbers beyond the prefixes: 3 significant digits in scientific form, not 63 digits or "0.00".
TEST(Units, NumbersBeyondThePrefixesAreScientific) {
  EXPECT_EQ(format_fixed(1.52e302, 0), "1.52e+302");
  EXPECT_EQ(format_fixed(999999999999999.0, 0), "999999999999999");
  EXPECT_EQ(format_percent(3e20), "3.00e+22%");
  EXPECT_EQ(format_quantity(4e-286, "FLOP/s"), "4.00e-286 FLOP/s");
  EXPECT_EQ(format_quantity(0, "B/s"), "0.00 B/s");
  EXPECT_EQ(format_quantity(0, "s"), "0 s");  // a thermal violation time of zero read "0.00 ns"
  EXPECT_EQ(format_quantity(2e-9, "s"), "2.00 ns");
  EXPECT_EQ(format_quantity(5e-4, "B"), "5.00e-04 B");
  // Past the largest prefix by 10^4: "262158 EFLOP" and "39358310889 s" were walls of digits
  EXPECT_EQ(format_quantity(2.62158e23, "FLOP"), "2.62e+23 FLOP");
  EXPECT_EQ(format_quantity(39358310889.0, "s"), "3.94e+10 s");
  EXPECT_EQ(format_quantity(-3.9e10, "s"), "-3.90e+10 s");
  EXPECT_EQ(format_quantity(9999.0, "s"), "9999 s");
  EXPECT_EQ(format_quantity(14400.0, "s"), "14400 s");  // a --timeout of 4 hours (review 100)
  EXPECT_EQ(format_quantity(9.9e21, "FLOP"), "9900 EFLOP");
}

TEST(Units, ParseDecimalAndBinaryPrefixes) {
  auto q = parse_quantity("4.2 TB/s", "rule");
  EXPECT_DOUBLE_EQ(q.value, 4.2e12);
  EXPECT_EQ(q.unit, "B/s");
  q = parse_quantity("55GB/s", "rule");
  EXPECT_DOUBLE_EQ(q.value, 55e9);
  q = parse_quantity("700 TFLOP/s", "rule");
  EXPECT_DOUBLE_EQ(q.value, 700e12);
  EXPECT_EQ(q.unit, "FLOP/s");
  q = parse_quantity("1200 TOP/s", "rule");
  EXPECT_EQ(q.unit, "OP/s");
  EXPECT_DOUBLE_EQ(q.value, 1.2e15);
  q = parse_quantity("80 GiB", "rule");
  EXPECT_DOUBLE_EQ(q.value, 80.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(q.unit, "B");
  q = parse_quantity("800 ns", "rule");
  EXPECT_DOUBLE_EQ(q.value, 800e-9);
  EXPECT_EQ(q.unit, "s");
  q = parse_quantity("5%", "rule");
  EXPECT_DOUBLE_EQ(q.value, 0.05);
  EXPECT_EQ(q.unit, "%");
  q = parse_quantity("1.98 GHz", "rule");
  EXPECT_DOUBLE_EQ(q.value, 1.98e9);
  // Micro as the micro sign (U+00B5), the Greek mu (U+03BC, what keyboards and NFKC give) or u.
  for (const char* text : {"4 \u00B5s", "4 \u03BCs", "4us"}) {
    q = parse_quantity(text, "rule");
    EXPECT_DOUBLE_EQ(q.value, 4e-6) << text;
    EXPECT_EQ(q.unit, "s") << text;
  }
}

// A unit in another script is named as an unknown unit (the Greek mu was "not a quantity").
TEST(Units, AnUnknownNonAsciiUnitIsNamed) {
  for (const std::string unit : {"\u03A9", "\u03BCB/s", "\u00B5W"}) {
    try {
      parse_quantity("4 " + unit, "rules.x");
      ADD_FAILURE() << unit << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("unknown unit '" + unit + "'"), std::string::npos) << e.what();
    }
  }
}

TEST(Units, ParseRejectsBareNumbersAndUnknownUnits) {
  EXPECT_THROW(parse_quantity("2333", "rules.hbm"), InputError);
  EXPECT_THROW(parse_quantity("4.2 TB/h", "rules.hbm"), InputError);
  EXPECT_THROW(parse_quantity("fast", "rules.hbm"), InputError);
  EXPECT_THROW(parse_quantity("", "rules.hbm"), InputError);
  try {
    parse_quantity("2333", "rules.ceilings.hbm.copy.min");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rules.ceilings.hbm.copy.min"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("no unit"), std::string::npos);
  }
}

TEST(Units, Direction) {
  EXPECT_TRUE(higher_is_better("B/s"));
  EXPECT_FALSE(higher_is_better("s"));
  EXPECT_TRUE(is_known_unit("OP/s"));
  EXPECT_FALSE(is_known_unit("GB/s"));  // stored values are in base units only
}

// The scan that replaced std::regex (whose recursion overflowed the stack on long text) accepts exactly
// the text the regex did: every string of up to 5 characters over an alphabet of the grammar's pieces.
TEST(Units, ParseAcceptsWhatTheOldRegexAccepted) {
  const std::regex old(R"(^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z/%µ]*)\s*$)");
  const std::string alphabet = " +-7.eEB/%x\t";
  std::string s;
  std::size_t checked = 0;
  std::function<void(std::size_t)> all = [&](std::size_t len) {
    if (s.size() == len) {
      bool not_a_quantity = false;
      try {
        parse_quantity(s, "q");
      } catch (const InputError& e) {
        not_a_quantity = std::string(e.what()).find("is not a quantity") != std::string::npos;
      }
      EXPECT_EQ(!not_a_quantity, std::regex_match(s, old)) << "'" << s << "'";
      ++checked;
      return;
    }
    for (char c : alphabet) {
      s.push_back(c);
      all(len);
      s.pop_back();
    }
  };
  for (std::size_t len = 0; len <= 5; ++len) all(len);
  EXPECT_GT(checked, 200000u);
  EXPECT_DOUBLE_EQ(parse_quantity(" .5e+3 µs ", "q").value, 500e-6);
  EXPECT_DOUBLE_EQ(parse_quantity("-4.e-1 kHz", "q").value, -400);
}

// Long text is an InputError naming the problem, not a stack overflow; the message shows only its start.
TEST(Units, ParseLongTextIsAnErrorNotACrash) {
  for (const std::string& text : {std::string(100000, '4') + " TB/s", "4 " + std::string(100000, 'x'),
                                  std::string(100000, ' ') + "4 TB/s" + std::string(100000, '!')}) {
    try {
      parse_quantity(text, "rules: 'ceilings.hbm.copy.min'");
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("rules: 'ceilings.hbm.copy.min'"), std::string::npos);
      EXPECT_LT(std::string(e.what()).size(), 400u);
    }
  }
}

// Numbers a double cannot hold (1e400, 1e-320), or that a prefix makes infinite (1e308 TB/s), are bad
// input naming the text, not std::stod's out_of_range ("error: stod", exit 3) nor an infinite limit.
TEST(Units, ParseRejectsNumbersOutOfRange) {
  for (const char* text : {"1e400 TB/s", "1e-320 TB/s", "1e308 TB/s", "-1e400 B", "1e-307%", "4e-310 s"}) {
    try {
      parse_quantity(text, "rules: 'x'");
      ADD_FAILURE() << text << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + text + "' is out of range"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_DOUBLE_EQ(parse_quantity("0 TB/s", "q").value, 0.0);
  EXPECT_DOUBLE_EQ(parse_quantity("1e300 B", "q").value, 1e300);
  EXPECT_DOUBLE_EQ(parse_quantity("1e-300 s", "q").value, 1e-300);
}

// A GPU's memory reads the same in `specs`/`show` (GiB) and `memory`/`roofline` (GB): both are given (review 108).
TEST(Units, CapacityShowsGibAndGb) {
  EXPECT_EQ(format_capacity(150109880320.0), "139.8 GiB = 150.1 GB");
  EXPECT_EQ(format_capacity(151397597184.0), "141.0 GiB = 151.4 GB");
}
