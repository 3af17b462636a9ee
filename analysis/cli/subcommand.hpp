// How a `ceilings` subcommand joins the CLI: one file in analysis/cli/ calls
// CEILINGS_SUBCOMMAND with a setup function that adds its options to the CLI11 subcommand and
// returns the function to run (which returns an exit code or throws ceilings::Error).
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "ceilings/cli_checks.hpp"

namespace ceilings::cli {

using Runner = std::function<int()>;
using Setup = std::function<Runner(CLI::App&)>;

bool add_subcommand(const char* name, const char* description, Setup setup);

struct Registered {
  std::string name, description;
  Setup setup;
};
const std::vector<Registered>& subcommands();  // sorted by name

// The directory of the running executable (to find ceilings-bench beside it).
std::string executable_directory();

// The command line `ceilings` was started with, as a shell would re-run it (arguments quoted where needed);
// main sets it before any subcommand runs (`measure` records it in the profile).
void set_invocation(int argc, char** argv);
const std::string& invocation();

}  // namespace ceilings::cli

#define CEILINGS_SUBCOMMAND_CAT2(a, b) a##b
#define CEILINGS_SUBCOMMAND_CAT(a, b) CEILINGS_SUBCOMMAND_CAT2(a, b)
#define CEILINGS_SUBCOMMAND(name, description, setup)                                 \
  static const bool CEILINGS_SUBCOMMAND_CAT(ceilings_subcommand_, __LINE__) = \
      ::ceilings::cli::add_subcommand(name, description, setup)
