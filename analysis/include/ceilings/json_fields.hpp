// Typed, validating access to JSON documents: every error names the offending field by its path
// ("ceilings[3].value") and is an InputError. Used for profiles, Hugging Face configs, rules files.
#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ceilings/error.hpp"

namespace ceilings {

using json = nlohmann::json;

// What a key that appears twice in one object means: an InputError naming it (what a person wrote), or the
// last value (Google Benchmark's output, whose own keys a user counter of the same name repeats).
enum class DuplicateKeys { kRefuse, kLastWins };
// Parses text as JSON; an empty, truncated or malformed document is an InputError naming `what`.
json parse_json_text(const std::string& text, const std::string& what, DuplicateKeys duplicates = DuplicateKeys::kRefuse);
// Reads and parses a file; a missing or unreadable file is an InputError too.
json read_json_file(const std::string& path);
// The whole file as text; InputError when it cannot be opened or read, is neither a regular file nor a pipe (a
// directory, /dev/zero, a socket) or is larger than kMaxInputFileBytes. A pipe is read to its end: one with no
// name (`show <(cmd)`) as long as its writer writes; a named one (mkfifo) that no program opens for writing
// within pipe_writer_wait is an InputError, not a wait for ever.
inline constexpr std::uintmax_t kMaxInputFileBytes = std::uintmax_t{256} << 20;
inline constexpr std::chrono::milliseconds kPipeWriterWait{30000};
std::string read_text_file(const std::string& path);
std::string read_text_file(const std::string& path, std::chrono::milliseconds pipe_writer_wait);

// Why `text` cannot be printed as it is ("holds a control character (0x1b)", "is not valid UTF-8"), or ""
// when it can: text a user or a file gave that a terminal or an SVG would show (a control character rewrites
// the terminal; either makes the SVG malformed).
std::string plain_text_problem(const std::string& text);
// `text` with every byte plain_text_problem would object to as '?' (a tab as a space): what another program printed,
// made safe for a terminal, for JSON (whose writer throws on invalid UTF-8) and for the profile's reader.
std::string printable_text(const std::string& text);

// InputError "field '<path>.<key>': <problem>" unless every string and key in `doc` (nested objects and arrays
// too) is plain text.
void require_plain_strings(const json& doc, const std::string& path);

// A view of one JSON object at a known path.
class Fields {
 public:
  Fields(const json& object, std::string path);  // throws unless `object` is an object

  const json& raw() const { return j_; }
  const std::string& path() const { return path_; }
  std::string path_of(const std::string& key) const;
  bool has(const std::string& key) const;  // present and not null

  std::string string(const std::string& key) const;
  std::optional<std::string> optional_string(const std::string& key) const;
  // Text shown on a terminal (a device name, a hostname, a skipped entry's reason): a string without control
  // characters, which no driver, host or measurement writes and which would rewrite the terminal that prints it.
  std::string name_string(const std::string& key) const;
  std::optional<std::string> optional_name_string(const std::string& key) const;
  bool boolean(const std::string& key) const;
  std::optional<bool> optional_boolean(const std::string& key) const;
  // Finite numbers; `minimum` is inclusive.
  double number(const std::string& key, double minimum = 0.0) const;
  std::optional<double> optional_number(const std::string& key, double minimum = 0.0) const;
  // Whole numbers (a JSON integer, or a float with no fractional part).
  std::int64_t integer(const std::string& key, std::int64_t minimum = 0) const;
  std::optional<std::int64_t> optional_integer(const std::string& key, std::int64_t minimum = 0) const;
  Fields object(const std::string& key) const;
  std::optional<Fields> optional_object(const std::string& key) const;
  const json& array(const std::string& key) const;  // throws unless an array

  [[noreturn]] void fail(const std::string& key, const std::string& problem) const;

 private:
  const json& at(const std::string& key) const;  // throws when missing or null
  const json& j_;
  std::string path_;
};

std::string json_type_name(const json& j);

}  // namespace ceilings
