// `ceilings compare A B ...`: profiles and datasheet entries side by side, ceilings as rows.
#include "ceilings/compare.hpp"
#include "ceilings/report.hpp"

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
      const bool markdown = format == Format::kMarkdown;  // markdown ends a table only at a blank line
      if (format != Format::kCsv) std::cout << device_legend(c, format) << "\n";
      std::cout << render(format == Format::kCsv ? comparison_csv_table(c) : comparison_table(c), format);
      if (format != Format::kCsv) {
        // One line each, not one 779-character line (review 108).
        const std::string item = markdown ? "- " : "  ";
        std::cout
            << (markdown ? "\n" : "") << "meas/ds: measured / datasheet\n"
            << item << "\"vs\" columns: the device's value over the first device's, measured to measured when both "
                       "were measured, else datasheet to datasheet (marked \"(ds)\")\n"
            << item << "above 1x is faster for a rate, slower for a latency (s), marked \"(slower)\" there\n"
            << item << "\"(noise)\": within 2 standard errors of the two medians, each from its own run's samples, so "
                       "these runs cannot tell the two apart\n"
            << item << "  (a ratio beyond it is still one run each: the spread between runs, or another GEMM shape "
                       "chosen, is not in it)\n"
            << item << "* measured under a power cap or a slowdown (throttled); ! under a hardware slowdown (heat, a "
                       "power brake): not the GPU's normal rate\n"
            << item << "failed, cut short (a timeout or an interrupt), skipped, unverified: what the profile records "
                       "instead of a number\n"
            << item << "memory.capacity \"measured\" is what the driver reports\n";
        const Table conditions = conditions_table(c);
        if (!conditions.rows.empty()) std::cout << "\n" << render(conditions, format);
        for (const std::string& note : c.condition_notes) std::cout << (markdown ? "\n" : "") << "NOTE: " << note << "\n";
        for (const CompareDevice& d : c.devices)  // no datasheet column to read for it, and why
          if (d.profile && d.gpu.empty() && !d.profile->device.is_mig())
            std::cout << (markdown ? "\n" : "") << "NOTE: " << d.label << ": " << datasheet_source(*d.profile) << "\n";
        for (const CompareDevice& d : c.devices)
          if (const auto note = d.profile ? d.profile->note() : std::nullopt)
            std::cout << (markdown ? "\n" : "") << "NOTE: " << d.label << ": " << *note << "\n";
      }
    }
    return 0;
  };
}

CEILINGS_SUBCOMMAND("compare", "Compare profiles and datasheet entries: ceilings as rows, devices as columns", setup);

}  // namespace
