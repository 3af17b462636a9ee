// `ceilings qualify PROFILE [--baseline PROFILE] [--rules FILE]`: one verdict per check (ceilings
// against datasheet, limits and baseline; health; verification). Exit 0 pass, 1 fail, 3 incomplete, 2 bad input.
#include <algorithm>
#include <iostream>
#include <memory>

#include "ceilings/qualify.hpp"
#include "subcommand.hpp"

namespace {

// The run being judged given as its own baseline (the same path twice, or a copy of the file) would pass every
// baseline row whatever the GPU reads: one GPU's run is told by its UUID, the time it was written and what it
// measured (a file edited from it, a degraded copy, is another profile). A fleet baseline (the medians of several
// runs) is no one run.
bool same_run(const ceilings::Profile& a, const ceilings::Profile& b) {
  using ceilings::Ceiling;
  return !b.raw.contains("baseline") && !a.device.uuid.empty() && !a.created.empty() &&
         a.device.uuid == b.device.uuid && a.created == b.created &&
         std::equal(a.ceilings.begin(), a.ceilings.end(), b.ceilings.begin(), b.ceilings.end(),
                    [](const Ceiling& x, const Ceiling& y) { return x.name == y.name && x.value == y.value; });
}

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
    if (baseline && same_run(profile, *baseline))
      throw ceilings::InputError("--baseline '" + o->baseline + "' is the run being judged (GPU " + profile.device.uuid +
                                 ", written " + profile.created +
                                 "): every baseline check would pass; give a known-good run of another time or GPU");
    const ceilings::QualifyResult result = ceilings::qualify(profile, baseline.get(), rules);
    std::cout << ceilings::render_qualify(result, format);
    return result.exit_code();
  };
});

}  // namespace
