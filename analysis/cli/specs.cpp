// `ceilings specs [NAME]`: the embedded datasheet table, or one entry with every figure and its source.
#include "ceilings/specs.hpp"

#include <iostream>
#include <memory>

#include "ceilings/report.hpp"
#include "subcommand.hpp"

namespace {

struct SpecsOptions {
  std::string name;
  std::string format = "table";
};

CEILINGS_SUBCOMMAND("specs", "List the datasheet table, or one GPU's datasheet figures",
                    [](CLI::App& app) -> ceilings::cli::Runner {
                      auto o = std::make_shared<SpecsOptions>();
                      app.add_option("name", o->name, "GPU name (loose: case, spaces and punctuation do not matter; a name PCIe or NVL boards share must say which)");
                      app.add_option("--format", o->format, "table | markdown | csv | json")->capture_default_str();
                      return [o] {
                        const ceilings::Format format = ceilings::parse_format(o->format);
                        if (o->name.empty()) {
                          if (format == ceilings::Format::kJson) {
                            ceilings::json all = ceilings::json::array();
                            for (const auto& s : ceilings::datasheet()) all.push_back(s.raw);
                            std::cout << all.dump(2) << "\n";
                          } else if (format == ceilings::Format::kCsv) {  // the records, numbers in SI units
                            std::vector<ceilings::json> all;
                            for (const auto& s : ceilings::datasheet()) all.push_back(s.raw);
                            std::cout << ceilings::render(ceilings::json_records_table(all, {"name"}), format);
                          } else {
                            std::cout << ceilings::render(ceilings::specs_table(), format);
                            // Markdown too: it is what is pasted beside NVIDIA's tables, whose starred figures are
                            // sparse (review 83).
                            std::cout << (format == ceilings::Format::kMarkdown ? "\n" : "")
                                      << "dense peaks; `ceilings specs NAME` shows sparse figures and sources\n";
                          }
                          return 0;
                        }
                        const ceilings::GpuSpec& spec = ceilings::resolve_gpu(o->name);
                        if (format == ceilings::Format::kJson)
                          std::cout << spec.raw.dump(2) << "\n";
                        else if (format == ceilings::Format::kCsv)
                          std::cout << ceilings::render(ceilings::json_fields_table(spec.raw), format);
                        else
                          std::cout << ceilings::render(ceilings::spec_detail_table(spec), format);
                        return 0;
                      };
                    });

}  // namespace
