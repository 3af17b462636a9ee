// Reading JSON text: what json::parse reads, the same document; a key twice in one object (which
// json::parse keeps silently, the last value winning) and a number past a double are bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ceilings/json_fields.hpp"
#include "ceilings/profile.hpp"
#include "cli_runner.hpp"

namespace ceilings {
namespace {

const std::string kFixtures = CEILINGS_FIXTURES;

std::string rejection(const std::string& text) {
  try {
    parse_json_text(text, "'x.json'");
  } catch (const InputError& e) {
    EXPECT_EQ(e.exit_code(), kExitBadInput);
    return e.what();
  }
  return "accepted";
}

// Text shown on a terminal or written into an SVG: printable UTF-8 passes, control characters and broken
// sequences do not.
TEST(JsonText, PlainTextIsPrintableUtf8) {
  for (const char* ok : {"", "hbm.read", "NVIDIA H200 NVL (\xc3\xbcn\xc3\xaf" "code)", "\xe6\x97\xa5\xe6\x9c\xac",
                         "\xf0\x9f\x9a\x80 rocket", "tab-free \xc2\xa0 nbsp"})
    EXPECT_EQ(plain_text_problem(ok), "") << ok;
  for (const char* bad : {"a\x01b", "esc\x1b[31m", "del\x7f", "nl\n", "\xff\xfe", "\xc0\x80", "cut \xe6\x97",
                          "\xed\xa0\x80 surrogate", "\xf4\x90\x80\x80 past U+10FFFF", "c1 \xc2\x9b",
                          "k\xef\xbf\xbf", "\xef\xbf\xbe"})  // U+FFFF, U+FFFE: no XML (an SVG) holds them
    EXPECT_NE(plain_text_problem(bad), "") << bad;
  EXPECT_EQ(printable_text("k\xef\xbf\xbf"), "k???");
  EXPECT_NE(plain_text_problem("x\x1b").find("control character (0x1b)"), std::string::npos);
  EXPECT_NE(plain_text_problem("x\xff").find("not valid UTF-8 (byte 1)"), std::string::npos);
  const json doc = {{"label", "ok"}, {"sweep", {{{"label", "bad\x1b[2J"}}}}};
  try {
    require_plain_strings(doc, "d");
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("field 'd.sweep[0].label': holds a control character"), std::string::npos)
        << e.what();
  }
}

TEST(JsonText, ReadsEveryFixtureAsJsonParseDoes) {
  std::size_t files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(kFixtures)) {
    if (e.path().extension() != ".json") continue;
    const std::string text = read_text_file(e.path().string());
    EXPECT_EQ(parse_json_text(text, e.path().string()), json::parse(text)) << e.path();
    ++files;
  }
  EXPECT_GE(files, 15u);
  const std::string text = R"({"a": [1, -2, 18446744073709551615, 2.5, "s", true, null, [], {}, [[{"b": {"c": [0]}}]]],
                               "d": {"e": {"f": "g"}, "h": []}, "": 0})";
  EXPECT_EQ(parse_json_text(text, "x"), json::parse(text));
  EXPECT_EQ(parse_json_text("7", "x"), json(7));
  EXPECT_EQ(parse_json_text("[]", "x"), json::array());
}

TEST(JsonText, AKeyTwiceInOneObjectIsNamedWithWhereItIs) {
  std::string e = rejection(R"({"schema": "a", "schema": "b"})");
  EXPECT_NE(e.find("'x.json'"), std::string::npos) << e;
  EXPECT_NE(e.find("the key 'schema' appears twice in the top-level object"), std::string::npos) << e;
  e = rejection(R"({"ceilings": [{"name": "a"}, {"name": "b", "value": 1, "value": 2}]})");
  EXPECT_NE(e.find("the key 'value' appears twice in 'ceilings[1]'"), std::string::npos) << e;
  e = rejection(R"({"a": [[0, {"b": {"c": 1, "d": 2, "c": 3}}]]})");
  EXPECT_NE(e.find("the key 'c' appears twice in 'a[0][1].b'"), std::string::npos) << e;
  e = rejection(R"([{"k": 1}, {"k": 1, "k": 1}])");  // equal values too: the file says something twice
  EXPECT_NE(e.find("'k' appears twice in '[1]'"), std::string::npos) << e;
  // The same key in different objects is no repetition.
  EXPECT_NO_THROW(parse_json_text(R"({"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 1}, {"x": 2}], "x": 0})", "x"));
}

TEST(JsonText, MalformedTextAndHugeNumbersAreBadInput) {
  EXPECT_NE(rejection(R"({"a": 1)").find("not valid JSON"), std::string::npos);
  EXPECT_NE(rejection(R"({"a": 1} x)").find("not valid JSON"), std::string::npos);
  EXPECT_NE(rejection("").find("is empty"), std::string::npos);
  // json::parse throws out_of_range here, not parse_error: it escaped as an unexpected error (exit 3).
  EXPECT_NE(rejection(R"({"value": 1e400})").find("number overflow"), std::string::npos);
  // The parser ends at a NUL byte: a document with garbage after one passed whole (profiles, rules, configs).
  const std::string nul = std::string(R"({"a": 1})") + '\0' + "{garbage";
  EXPECT_NE(rejection(nul).find("a NUL byte at offset 8"), std::string::npos) << rejection(nul);
}

// A whole number past 64 bits (json::parse reads 2^64 as a double) is too large, as 2^64 - 1 is; it read
// "expected a whole number".
TEST(JsonFields, AWholeNumberPast64BitsIsTooLarge) {
  auto error = [](const std::string& text) {
    try {
      Fields(parse_json_text(text, "'x.json'"), "x").integer("n");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(error(R"({"n": 18446744073709551615})").find("'x.n': is too large"), std::string::npos)
      << error(R"({"n": 18446744073709551615})");
  EXPECT_NE(error(R"({"n": 18446744073709551616})").find("'x.n': is too large"), std::string::npos)
      << error(R"({"n": 18446744073709551616})");
  EXPECT_NE(error(R"({"n": 2.5})").find("expected a whole number"), std::string::npos);
  EXPECT_EQ(error(R"({"n": 4096})"), "accepted");
}

// `show` of a profile with a NUL and garbage after its last brace printed it and exited 0.
TEST(JsonText, CliRejectsAFileWithANulByte) {
  const std::string dir = test::scratch_dir("json_nul");
  std::string text = read_text_file(kFixtures + "/profiles/h200-qualify.profile.json");
  text += std::string(1, '\0') + "{garbage";
  std::ofstream(dir + "/nul.profile.json", std::ios::binary) << text;
  const auto r = test::run_cli({"show", dir + "/nul.profile.json"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("a NUL byte at offset"), std::string::npos) << r.err;
}

// Each kind of file the CLI reads: a profile, a rules file (a ceiling's rule given twice), an HF config.
TEST(JsonText, CliRejectsARepeatedKeyInEveryKindOfFile) {
  const std::string dir = test::scratch_dir("json_duplicate_keys");
  const std::string profile = kFixtures + "/profiles/h200-qualify.profile.json";
  std::string text = read_text_file(profile);
  const std::string schema = R"("schema": "ceilings.profile/1")";
  ASSERT_NE(text.find(schema), std::string::npos);
  text.insert(text.find(schema), R"("created": "2099-01-01T00:00:00Z", )");
  std::ofstream(dir + "/twice.profile.json") << text;
  auto r = test::run_cli({"qualify", dir + "/twice.profile.json"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("twice.profile.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'created' appears twice"), std::string::npos) << r.err;

  std::ofstream(dir + "/twice.rules.json") << R"({"schema": "ceilings.rules/1", "ceilings": {
      "hbm.copy": {"min": "4.2 TB/s"},
      "hbm.copy": {"min": "1 GB/s"}}})";
  r = test::run_cli({"qualify", profile, "--rules", dir + "/twice.rules.json"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("twice.rules.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'hbm.copy' appears twice in 'ceilings'"), std::string::npos) << r.err;

  std::ofstream(dir + "/config.json") << R"({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
      "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000,
      "num_hidden_layers": 80})";
  r = test::run_cli({"model", "--hf-config", dir + "/config.json"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("config.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'num_hidden_layers' appears twice"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ceilings
