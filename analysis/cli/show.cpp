// `ceilings show PROFILE`: the ceilings table of a stored profile.
#include <iostream>
#include <memory>

#include "ceilings/report.hpp"
#include "subcommand.hpp"

namespace {

struct ShowOptions {
  std::string profile;
  std::string format = "table";
};

CEILINGS_SUBCOMMAND("show", "Print the ceilings of a stored profile", [](CLI::App& app) -> ceilings::cli::Runner {
  auto o = std::make_shared<ShowOptions>();
  app.add_option("profile", o->profile, "Profile file (ceilings.profile/1 JSON)")->required();
  app.add_option("--format", o->format, "table | markdown | csv | json")->capture_default_str();
  return [o] {
    const ceilings::Format format = ceilings::parse_format(o->format);
    const ceilings::Profile profile = ceilings::read_profile(o->profile);
    std::cout << ceilings::render_profile(profile, format);
    return 0;
  };
});

}  // namespace
