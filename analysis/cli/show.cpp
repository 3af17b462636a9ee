// `ceilings show PROFILE [--ceiling NAME]`: the ceilings table of a stored profile, or one ceiling in
// full (measurement, how it was obtained, its sweep, the GPU pair matrix).
#include <iostream>
#include <memory>

#include "ceilings/report.hpp"
#include "subcommand.hpp"

namespace {

struct ShowOptions {
  std::string profile;
  std::string format = "table";
  std::string ceiling;
};

CEILINGS_SUBCOMMAND("show", "Print the ceilings of a stored profile", [](CLI::App& app) -> ceilings::cli::Runner {
  auto o = std::make_shared<ShowOptions>();
  app.add_option("profile", o->profile, "Profile file (ceilings.profile/1 JSON)")->required();
  app.add_option("--format", o->format, "table | markdown | csv | json")->capture_default_str();
  app.add_option("--ceiling", o->ceiling,
                 "Show this ceiling in full: measurement, benchmark case and detail, sweep, GPU pair matrix");
  return [o] {
    const ceilings::Format format = ceilings::parse_format(o->format);
    const ceilings::Profile profile = ceilings::read_profile(o->profile);
    std::cout << (o->ceiling.empty() ? ceilings::render_profile(profile, format)
                                     : ceilings::render_ceiling_detail(profile, o->ceiling, format));
    return 0;
  };
});

}  // namespace
