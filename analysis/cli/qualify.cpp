// `ceilings qualify PROFILE [--baseline PROFILE] [--rules FILE]`: one verdict per check (ceilings
// against datasheet, limits and baseline; health; verification). Exit 0 pass, 1 fail, 3 incomplete, 2 bad input.
#include <iostream>
#include <memory>

#include "ceilings/qualify.hpp"
#include "subcommand.hpp"

namespace {

struct QualifyOptions {
  std::string profile, baseline, rules;
  std::string format = "table";
};

CEILINGS_SUBCOMMAND("qualify", "Judge a profile: pass, fail or incomplete per check, with reasons",
                    [](CLI::App& app) -> ceilings::cli::Runner {
  auto o = std::make_shared<QualifyOptions>();
  app.add_option("profile", o->profile, "Profile to judge (ceilings.profile/1 JSON)")->required();
  app.add_option("--baseline", o->baseline, "A known-good profile of the same GPU model");
  app.add_option("--rules", o->rules, "Rules file (ceilings.rules/1 JSON); default: built-in rules");
  app.add_option("--format", o->format, "table | markdown | csv | json")->capture_default_str();
  return [o] {
    // Everything the user wrote is checked before anything is judged.
    const ceilings::Format format = ceilings::parse_format(o->format);
    const ceilings::Rules rules = o->rules.empty() ? ceilings::default_rules() : ceilings::read_rules(o->rules);
    const ceilings::Profile profile = ceilings::read_profile(o->profile);
    std::unique_ptr<ceilings::Profile> baseline;
    if (!o->baseline.empty()) baseline = std::make_unique<ceilings::Profile>(ceilings::read_profile(o->baseline));
    const ceilings::QualifyResult result = ceilings::qualify(profile, baseline.get(), rules);
    std::cout << ceilings::render_qualify(result, format);
    return result.exit_code();
  };
});

}  // namespace
