// Errors and exit codes shared by every `ceilings` subcommand and the analysis library.
#pragma once
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

// An error with the exit code it maps to; the message names the problem for the user.
class Error : public std::runtime_error {
 public:
  Error(int exit_code, const std::string& message) : std::runtime_error(message), exit_code_(exit_code) {}
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
