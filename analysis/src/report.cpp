// Rendering a profile's ceilings for people (table, markdown, csv) and programs (json).
#include "ceilings/report.hpp"

#include <sstream>

#include "ceilings/datasheet.hpp"
#include "ceilings/units.hpp"

namespace ceilings {

std::optional<double> datasheet_for(const Profile& profile, const Ceiling& c) {
  if (c.datasheet) return c.datasheet;
  if (const GpuSpec* spec = find_gpu(profile.device.name)) return datasheet_value(*spec, c.name);
  return std::nullopt;
}

Table ceilings_table(const Profile& p) {
  Table t;
  t.columns = {"ceiling", "value", "datasheet", "% datasheet", "cv", "samples", "SM clock", "throttled"};
  t.right_aligned = {false, true, true, true, true, true, true, false};
  for (const Ceiling& c : p.ceilings) {
    const auto ds = datasheet_for(p, c);
    t.add_row({c.name, format_quantity(c.value, c.unit), ds ? format_quantity(*ds, c.unit) : "-",
               ds && *ds > 0 ? format_percent(c.value / *ds) : "-", format_percent(c.cv, 2),
               std::to_string(c.samples),
               c.telemetry.available ? format_quantity(c.telemetry.sm_clock_hz, "Hz") : "n/a",
               c.throttled ? "yes" : "no"});
  }
  for (const Skipped& s : p.skipped) t.add_row({s.name, "skipped", "", "", "", "", "", s.reason});
  for (const Skipped& s : p.errors) t.add_row({s.name, "ERROR", "", "", "", "", "", s.reason});
  return t;
}

std::string profile_summary(const Profile& p) {
  std::ostringstream os;
  const DeviceInfo& d = p.device;
  os << "device " << d.index << ": " << d.name << " (sm_" << d.compute_capability << ", " << d.sm_count << " SMs, "
     << format_quantity(static_cast<double>(d.memory_bytes), "B") << ", L2 "
     << format_quantity(static_cast<double>(d.l2_bytes), "B") << ")  uuid " << d.uuid << "  bus " << d.pci_bus_id
     << "\n";
  os << "driver " << (d.driver.empty() ? "?" : d.driver) << ", CUDA runtime " << d.cuda_runtime << ", cuBLAS "
     << (d.cublas.empty() ? "?" : d.cublas) << "; host " << (p.hostname.empty() ? "?" : p.hostname) << "; measured "
     << p.created << " by ceilings " << p.tool_version << (p.tool_git.empty() ? "" : " (" + p.tool_git + ")") << "\n";
  os << "values: median over samples, bytes counted read + write (HBM) or once per direction (copies); "
        "datasheet % uses the vendor's peak\n";
  // A run cut short (timeout, interrupt, crash) keeps its finished cases; say so before the table.
  const json& m = p.raw.contains("measure") ? p.raw["measure"] : json();
  if (m.is_object() && m.value("complete", true) == false) {
    const std::string stopped = m.value("stopped", std::string("stopped early"));
    os << "INCOMPLETE run: " << m.value("finished_cases", 0) << " of " << m.value("cases", 0)
       << " cases finished; " << stopped.substr(0, stopped.find('\n')) << "\n";
  }
  return os.str();
}

std::string render_profile(const Profile& p, Format format) {
  if (format == Format::kJson) {
    json out = {{"device", profile_to_json(p)["device"]}, {"created", p.created}, {"ceilings", json::array()}};
    for (const Ceiling& c : p.ceilings) {
      const auto ds = datasheet_for(p, c);
      json row = {{"name", c.name},         {"value", c.value},         {"unit", c.unit}, {"cv", c.cv},
                  {"samples", c.samples},   {"verified", c.verified},   {"throttled", c.throttled}};
      row["datasheet"] = ds ? json(*ds) : json(nullptr);
      row["fraction_of_datasheet"] = ds && *ds > 0 ? json(c.value / *ds) : json(nullptr);
      row["sm_clock_hz"] = c.telemetry.available ? json(c.telemetry.sm_clock_hz) : json(nullptr);
      out["ceilings"].push_back(row);
    }
    out["skipped"] = profile_to_json(p)["skipped"];
    out["errors"] = profile_to_json(p)["errors"];
    return out.dump(2) + "\n";
  }
  const std::string table = render(ceilings_table(p), format);
  if (format == Format::kCsv) return table;
  if (format == Format::kMarkdown) {
    std::string summary = profile_summary(p);
    std::string md;
    std::istringstream lines(summary);
    for (std::string line; std::getline(lines, line);) md += "> " + line + "\n";
    return md + "\n" + table;
  }
  return profile_summary(p) + "\n" + table;
}

}  // namespace ceilings
