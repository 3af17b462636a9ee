// Units: display formatting and parsing of user-written quantities.
#include <gtest/gtest.h>

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
}

TEST(Units, PercentAndFixed) {
  EXPECT_EQ(format_percent(0.8962), "89.6%");
  EXPECT_EQ(format_percent(0.0031, 2), "0.31%");
  EXPECT_EQ(format_fixed(3.14159, 2), "3.14");
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
