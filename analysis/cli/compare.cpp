// `ceilings compare A B ...`: profiles and datasheet entries side by side, ceilings as rows.
#include "ceilings/compare.hpp"

#include <iostream>
#include <memory>

#include "subcommand.hpp"

namespace {

using namespace ceilings;

struct CompareOptions {
  std::vector<std::string> devices;
  std::string format = "table";
};

cli::Runner setup(CLI::App& app) {
  auto o = std::make_shared<CompareOptions>();
  app.add_option("devices", o->devices, "Profile files and/or datasheet names (`ceilings specs` lists them)")
      ->required();
  app.add_option("--format", o->format, "table | markdown | csv | json")->capture_default_str();
  return [o] {
    const Format format = parse_format(o->format);
    std::vector<CompareDevice> devices;
    for (const auto& d : o->devices) devices.push_back(load_compare_device(d));
    const Comparison c = compare_devices(std::move(devices));
    if (format == Format::kJson) {
      std::cout << comparison_json(c).dump(2) << "\n";
    } else {
      std::cout << render(format == Format::kCsv ? comparison_csv_table(c) : comparison_table(c), format);
      if (format != Format::kCsv) {
        std::cout
            << (format == Format::kMarkdown ? "\n" : "")  // markdown ends a table only at a blank line
            << "meas/ds: measured / datasheet; \"vs\" columns: the device's value over the first device's, measured "
               "to measured when both were measured, else datasheet to datasheet (marked \"(ds)\"): above 1x is faster "
               "for a rate, slower for a latency (s); * measured under a power cap or a slowdown (throttled); "
               "memory.capacity \"measured\" is what the driver reports\n";
        for (const CompareDevice& d : c.devices)
          if (const auto note = d.profile ? d.profile->note() : std::nullopt)
            std::cout << "NOTE: " << d.label << ": " << *note << "\n";
      }
    }
    return 0;
  };
}

CEILINGS_SUBCOMMAND("compare", "Compare profiles and datasheet entries: ceilings as rows, devices as columns", setup);

}  // namespace
