// Errors and exit codes shared by every `ceilings` subcommand and the analysis library.
#pragma once
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace ceilings {

// The exit codes of every ceilings command (DESIGN.md).
enum ExitCode : int {
  kExitOk = 0,          // ok / all verdicts pass
  kExitFailed = 1,      // a verdict failed
  kExitBadInput = 2,    // usage or bad input
  kExitIncomplete = 3,  // no GPU, could not measure, a check could not run
};

// What an error says goes to a terminal, and it often quotes what a file or an argument held: a control
// character there is written as \xHH (ESC rewrote the terminal; NUL ended the message before it said what was
// wrong; the C1 controls, U+0080-U+009F, act as ESC sequences on some terminals, as raw bytes 0x80-0x9F do on
// 8-bit ones), and so is every byte of a broken UTF-8 sequence; tabs and line breaks are kept, and a line longer
// than 2000 bytes is cut, saying how many bytes were left out (a line that ends with an earlier cut's count, a
// message built from a cut one, counts those too).
inline std::string terminal_safe(const std::string& text) {
  constexpr std::size_t kMaxLine = 2000, kSlack = 64;
  static const char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  std::size_t line_start = 0, i = 0;
  bool whole_line = false;  // what is left of this line is short: kept whole
  auto escape = [&](unsigned char b) {
    out += "\\x";
    out += hex[b >> 4];
    out += hex[b & 15];
  };
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  while (i < text.size()) {
    const unsigned char b = byte(i);
    if (b == '\n') {
      out += '\n';
      line_start = out.size();
      whole_line = false;
      ++i;
      continue;
    }
    if (!whole_line && out.size() - line_start >= kMaxLine) {
      const std::size_t end = std::min(text.find('\n', i), text.size());
      if (end - i <= kSlack) {
        whole_line = true;
      } else {
        // A line cut before ends "... (N more bytes)": those N were left out too.
        std::size_t left_out = end - i;
        const std::string line = text.substr(i, end - i), tail = " more bytes)";
        const std::size_t open = line.rfind("... (");
        if (line.size() >= tail.size() && line.compare(line.size() - tail.size(), tail.size(), tail) == 0 &&
            open != std::string::npos) {
          const std::string digits = line.substr(open + 5, line.size() - tail.size() - open - 5);
          if (!digits.empty() && digits.size() < 16 &&
              std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
            left_out = open + std::stoull(digits);
        }
        out += "... (" + std::to_string(left_out) + " more bytes)";
        i = end;
        continue;
      }
    }
    if (b < 0x80) {
      if ((b < 0x20 && b != '\t') || b == 0x7f) escape(b);
      else out += static_cast<char>(b);
      ++i;
      continue;
    }
    // A UTF-8 sequence: its length from the lead byte, then its continuation bytes (the shortest form only).
    const std::size_t n = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    bool valid = n > 0 && i + n <= text.size();
    for (std::size_t k = 1; valid && k < n; ++k) valid = (byte(i + k) & 0xc0) == 0x80;
    if (valid && n == 3 && ((b == 0xe0 && byte(i + 1) < 0xa0) || (b == 0xed && byte(i + 1) >= 0xa0))) valid = false;
    if (valid && n == 4 && ((b == 0xf0 && byte(i + 1) < 0x90) || (b == 0xf4 && byte(i + 1) >= 0x90))) valid = false;
    if (!valid) {  // a stray byte: raw C1 controls among them
      escape(b);
      ++i;
    } else if (b == 0xc2 && byte(i + 1) <= 0x9f) {  // a C1 control, U+0080-U+009F
      escape(b);
      escape(byte(i + 1));
      i += 2;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  return out;
}

// An error with the exit code it maps to; the message names the problem for the user (made terminal-safe).
class Error : public std::runtime_error {
 public:
  Error(int exit_code, const std::string& message)
      : std::runtime_error(terminal_safe(message)), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

// Bad input: a malformed file, a missing or wrong field, an impossible value. Exit code 2.
class InputError : public Error {
 public:
  explicit InputError(const std::string& message) : Error(kExitBadInput, message) {}
};

// Something could not be measured or run (no GPU, no driver). Exit code 3.
class IncompleteError : public Error {
 public:
  explicit IncompleteError(const std::string& message) : Error(kExitIncomplete, message) {}
};

// Text a user wrote, shortened for an error message: the first `max` characters and how long it was.
inline std::string excerpt(const std::string& text, std::size_t max = 64) {
  if (text.size() <= max) return text;
  return text.substr(0, max) + "... (" + std::to_string(text.size()) + " characters)";
}

// A count the user gave (a batch, GPUs, layers): a whole number from 1 to 2^53 (every whole number up to
// there is exact in a double, and a cast to int64 stays defined); infinity and NaN are not counts.
inline double require_count(double v, const std::string& what) {
  if (!(v >= 1 && v <= 9007199254740992.0) || std::floor(v) != v)
    throw InputError(what + " must be a positive whole number (at most 2^53)");
  return v;
}

// A length the user gave (tokens of sequence or context): a whole number from 1 to 2^40 (a trillion tokens,
// far beyond any context; a larger one makes FLOP and byte counts overflow to infinity). A fraction of a
// token is refused rather than rounded: 2048.5 is a typo, not a length.
inline double require_length(double v, const std::string& what) {
  if (!(v >= 1 && v <= 1099511627776.0) || std::floor(v) != v)
    throw InputError(what + " must be a whole number of tokens from 1 to 2^40");
  return v;
}

}  // namespace ceilings
