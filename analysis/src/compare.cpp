// Generation comparison: measured profiles and datasheet entries in one table.
#include "ceilings/compare.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ceilings/ceiling_families.hpp"
#include "ceilings/clock_events.hpp"
#include "ceilings/qualify.hpp"
#include "ceilings/report.hpp"
#include "ceilings/specs.hpp"
#include "ceilings/units.hpp"

namespace ceilings {

CompareDevice load_compare_device(const std::string& spec) {
  CompareDevice d;
  d.origin = spec;
  std::error_code ec;
  // A file (or a pipe: `compare <(ssh node cat p.json) H100`) is a profile; a directory is not a device.
  if (std::filesystem::exists(spec, ec) && !std::filesystem::is_directory(spec, ec)) {
    d.from_profile = true;
    d.profile = read_profile(spec);
    const bool mig = d.profile->device.is_mig();
    // CUDA names an instance "... MIG 3g.20gb" itself; one the bench knew by NVML is said so here.
    const bool named = d.profile->device.name.find(" MIG ") != std::string::npos;
    d.label = d.profile->device.name + (mig && !named ? " MIG instance" : "") +
              (d.profile->hostname.empty() ? "" : " (" + d.profile->hostname + ")");
    // A MIG instance has no datasheet column: the datasheet's figures are the whole GPU's.
    if (const GpuSpec* g = find_gpu(d.profile->device.name); g && !mig) d.gpu = g->name;
    return d;
  }
  // A directory is no profile: where its name is a datasheet entry's or names one as `specs` matches names (a
  // results folder named "B200" or "H100"), the entry.
  if (std::filesystem::is_directory(spec, ec)) {
    bool named = false;
    if (spec.find('/') == std::string::npos) try {
        named = !resolve_gpu(spec).name.empty();
      } catch (const InputError&) {
      }
    if (!named) throw InputError("'" + spec + "' is a directory, not a profile");
  }
  if (spec.find('/') != std::string::npos || (spec.size() > 5 && spec.substr(spec.size() - 5) == ".json"))
    throw InputError("profile '" + spec + "' does not exist (and it is not a datasheet name)");
  d.gpu = resolve_gpu(spec).name;
  d.label = d.gpu + " [datasheet]";
  return d;
}

namespace {

// The mean power of the energy counter over the ceiling's window, where it was followed.
std::optional<double> mean_power(const Ceiling& c) {
  const auto w = c.detail_number("power_mean_w");
  return w && *w > 0 ? w : std::nullopt;
}

// The family's unit; "" for a family this build does not know (the unit its profiles record replaces it, and a row
// no profile measured shows only why: no unit is made up for it).
std::string unit_for(const std::string& ceiling) {
  if (ceiling == "memory.capacity") return "B";
  return ceiling_unit_for(ceiling);
}

}  // namespace

Comparison compare_devices(std::vector<CompareDevice> devices) {
  if (devices.size() < 1) throw InputError("compare needs at least one profile or datasheet name");
  // Two columns with one label (two GPUs of one node, two runs of one GPU) are told apart by the least that does:
  // the GPU's index, else the file's name, else the path named on the command line.
  auto shared = [&devices] {
    std::vector<bool> out(devices.size(), false);
    for (std::size_t i = 0; i < devices.size(); ++i)
      for (std::size_t k = 0; k < devices.size(); ++k)
        if (k != i && devices[k].label == devices[i].label && devices[i].from_profile) out[i] = true;
    return out;
  };
  const std::vector<bool> same_label = shared();
  for (std::size_t i = 0; i < devices.size(); ++i)
    if (same_label[i]) devices[i].label += " GPU " + std::to_string(devices[i].profile->device.index);
  const std::vector<bool> same_gpu = shared();
  std::vector<std::string> before_file(devices.size());
  for (std::size_t i = 0; i < devices.size(); ++i)
    if (same_gpu[i]) {
      before_file[i] = devices[i].label;
      devices[i].label += " [" + std::filesystem::path(devices[i].origin).filename().string() + "]";
    }
  const std::vector<bool> same_file_name = shared();
  for (std::size_t i = 0; i < devices.size(); ++i)  // the path instead of the file's name, not beside it
    if (same_file_name[i] && same_gpu[i]) devices[i].label = before_file[i] + " [" + devices[i].origin + "]";
  for (std::size_t i = 1; i < devices.size(); ++i)  // one file named twice: its place on the command line
    for (std::size_t k = 0; k < i; ++k)
      if (devices[k].label == devices[i].label) {
        devices[i].label += " #" + std::to_string(i + 1);
        break;
      }
  Comparison c;
  c.devices = std::move(devices);
  // Each device's ceilings by name, and the names seen, in hash tables: a linear search per name (std::find over
  // the names, Profile::find per row and device) made compare quadratic, 68 s for a profile of 60,000 ceilings.
  std::vector<std::unordered_map<std::string, const Ceiling*>> by_name(c.devices.size());
  // What each profile records as failed or skipped, by name (the first reason, as the lists are read).
  std::vector<std::unordered_map<std::string, std::string>> unmeasured(c.devices.size());
  for (std::size_t i = 0; i < c.devices.size(); ++i)
    if (c.devices[i].profile) {
      for (const Ceiling& ce : c.devices[i].profile->ceilings) by_name[i].emplace(ce.name, &ce);  // the first, as find
      // A case a timeout or an interrupt cut short is no failed measurement (qualify: incomplete).
      for (const Skipped& e : c.devices[i].profile->errors)
        unmeasured[i].emplace(e.name, cut_short_reason(e.reason) ? "cut short" : "failed");
      for (const Skipped& s : c.devices[i].profile->skipped) unmeasured[i].emplace(s.name, "skipped");
    }
  auto find = [&](std::size_t device, const std::string& n) -> const Ceiling* {
    const auto it = by_name[device].find(n);
    return it == by_name[device].end() ? nullptr : it->second;
  };
  std::vector<std::string> names;
  std::unordered_set<std::string> named;
  auto add_name = [&](const std::string& n) {
    if (named.insert(n).second) names.push_back(n);
  };
  for (const auto& d : c.devices)
    if (d.profile)
      for (const Ceiling& ce : d.profile->ceilings) add_name(ce.name);
  // A ceiling no compared profile measured still has its row, whose cells say why (failed, cut short, skipped):
  // a case that failed on every node compared, or a run cut short, must not read as a complete table.
  for (const auto& d : c.devices)
    if (d.profile)
      for (const auto* list : {&d.profile->errors, &d.profile->skipped})
        for (const Skipped& s : *list)
          if (is_ceiling_name(s.name)) add_name(s.name);
  const bool any_datasheet_only =
      std::any_of(c.devices.begin(), c.devices.end(), [](const auto& d) { return !d.from_profile; });
  if (any_datasheet_only) {
    for (const char* n : {"gemm.fp64", "gemm.tf32", "gemm.bf16", "gemm.fp16", "gemm.fp8_e4m3", "gemm.int8", "hbm.copy",
                          "pcie.h2d", "nvlink.p2p_uni"})
      add_name(n);
    // "gemm.fp4" only when some compared GPU has it.
    for (const auto& d : c.devices)
      if (!d.gpu.empty() && resolve_gpu(d.gpu).dense.count("fp4")) add_name("gemm.fp4");
  }
  // Order: compute, then memory hierarchy, then the rest; stable within a family.
  std::stable_sort(names.begin(), names.end(),
                   [](const auto& a, const auto& b) { return family_rank(a) < family_rank(b); });
  // Per watt, for generations: after each ceiling that a profile measured with the energy counter
  // followed (the sustained GEMMs), its value over that mean power beside the datasheet peak over the TDP.
  std::vector<std::pair<std::string, bool>> rows;  // (ceiling, per watt)
  for (const std::string& n : names) {
    rows.emplace_back(n, false);
    for (std::size_t i = 0; i < c.devices.size(); ++i)
      if (const Ceiling* ce = find(i, n); ce && per_watt_applies(ce->name, ce->unit) && mean_power(*ce)) {
        rows.emplace_back(n, true);
        break;
      }
  }
  rows.emplace_back("memory.capacity", false);
  for (const auto& [n, per_watt] : rows) {
    // The unit as the profiles recorded it (a family this version does not know has its own), else the family's.
    std::string unit = unit_for(n);
    std::optional<std::size_t> first;  // the first profile that has it
    for (std::size_t i = 0; i < c.devices.size(); ++i)
      if (const Ceiling* ce = n != "memory.capacity" ? find(i, n) : nullptr) {
        if (!first) {
          first = i;
          unit = ce->unit;
        } else if (ce->unit != unit) {  // a family this version does not know, recorded two ways: not one row
          throw InputError("ceiling '" + n + "' is in " + (unit.empty() ? "no unit" : unit) + " in '" +
                           c.devices[*first].origin + "' and in " + (ce->unit.empty() ? "no unit" : ce->unit) +
                           " in '" + c.devices[i].origin + "': not comparable");
        }
      }
    CompareRow row{per_watt ? n + " per W" : n, unit + (per_watt ? "/W" : ""), {}};
    bool any = false;
    for (std::size_t i = 0; i < c.devices.size(); ++i) {
      const CompareDevice& d = c.devices[i];
      CompareCell cell;
      const GpuSpec* g = d.gpu.empty() ? nullptr : &resolve_gpu(d.gpu);
      if (n == "memory.capacity") {
        if (d.profile && d.profile->device.memory_bytes > 0)
          cell.measured = static_cast<double>(d.profile->device.memory_bytes);  // as the driver reports it
        if (g) cell.datasheet = g->memory_bytes;
      } else if (d.profile) {
        // A value that failed its verification is no measurement (it is not shown as one).
        if (const Ceiling* ce = find(i, n); ce && ce->verified) {
          cell.measured = ce->value;
          cell.throttled = ce->throttled_known();
          cell.standard_error = ce->median_standard_error();
          cell.datasheet = datasheet_for(*d.profile, *ce);
          cell.hardware_slowdowns = ce->clock_event_reasons() & clock_events::kHardwareSlowdownMask;
          if (ce->telemetry.available && ce->telemetry.sm_clock_hz > 0) cell.sm_clock_hz = ce->telemetry.sm_clock_hz;
        } else {
          if (ce) {
            cell.status = "unverified";
          } else if (const auto it = unmeasured[i].find(n); it != unmeasured[i].end()) {
            cell.status = it->second;
          }
          if (g) cell.datasheet = datasheet_value(*g, n);
        }
      } else if (g) {
        cell.datasheet = datasheet_value(*g, n);
      }
      if (per_watt) {
        const Ceiling* ce = find(i, n);
        const auto watts = ce ? mean_power(*ce) : std::nullopt;
        cell.measured = watts && cell.measured ? std::optional<double>(*cell.measured / *watts) : std::nullopt;
        cell.standard_error.reset();  // the power's own spread is not recorded: no claim about noise
        cell.status.clear();          // said on the ceiling's own row
        // A module's power (GH200's covers its CPU and memory too) over a GPU's peak is no GPU's efficiency.
        cell.datasheet = g && g->tdp_w > 0 && !g->tdp_whole_module && cell.datasheet
                             ? std::optional<double>(*cell.datasheet / g->tdp_w)
                             : std::nullopt;
      }
      // A cell that says why there is no value (failed, cut short, skipped) keeps its row too, datasheet figure or
      // not: an l2 or latency case, or any case of a GPU the datasheet table does not know (review 45).
      any = any || cell.measured || cell.datasheet || !cell.status.empty();
      row.cells.push_back(cell);
    }
    if (any) c.rows.push_back(row);
  }
  c.condition_notes = measurement_condition_notes(c);
  return c;
}

namespace {

std::string watts_text(double w) { return format_fixed(w, w == std::round(w) ? 0 : 1) + " W"; }

std::string power_limit_text(const Profile& p) {
  return p.device.power_limit_w ? watts_text(*p.device.power_limit_w) : std::string();
}

// The profile's ceilings release and the commit it was built from: "0.1.0 (71fabfe5321b-dirty)".
std::string tool_text(const Profile& p) {
  if (p.tool_version.empty()) return p.tool_git;
  return p.tool_version + (p.tool_git.empty() ? "" : " (" + p.tool_git + ")");
}

// What measured it, as far as the profile says: the measurement code where recorded (builds of one code measure
// alike, whatever else their commits changed), else the release and its commit.
std::string measured_by(const Profile& p) {
  if (p.tool_measurement_code.empty()) return tool_text(p);
  return (p.tool_version.empty() ? "" : p.tool_version + " ") + "measurement code " + p.tool_measurement_code;
}

// "8 at once" or "1 per run" (measure.gpus_measured_together: what the run measured; other processes may have
// measured other GPUs meanwhile), "" where not recorded.
std::string measured_together(const Profile& p) {
  if (!p.gpus_measured_together) return "";
  return *p.gpus_measured_together == 1 ? "1 per run" : std::to_string(*p.gpus_measured_together) + " at once";
}

// "quick" or "full" (measure.quick), "" where not recorded.
std::string pass_text(const Profile& p) { return p.quick ? (*p.quick ? "quick" : "full") : ""; }

// "13.1.0 in A, 12.2.5 in B and C" for the profiles' recorded values of a field, where two or more differ;
// empty where they agree (a profile that does not record the field says nothing against the others).
std::string differing_values(const Comparison& c, const std::vector<std::size_t>& profiles,
                             std::string (*value)(const Profile&)) {
  std::vector<std::pair<std::string, std::vector<std::string>>> seen;  // value, the labels that have it
  for (std::size_t i : profiles) {
    const std::string v = value(*c.devices[i].profile);
    if (v.empty()) continue;
    auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == v; });
    if (it == seen.end()) it = seen.insert(seen.end(), {v, {}});
    it->second.push_back(c.devices[i].label);
  }
  if (seen.size() < 2) return "";
  std::string out;
  for (std::size_t k = 0; k < seen.size(); ++k) {
    out += (k ? "; " : "") + seen[k].first + " in ";
    for (std::size_t l = 0; l < seen[k].second.size(); ++l)
      out += (l == 0 ? "" : l + 1 == seen[k].second.size() ? " and " : ", ") + seen[k].second[l];
  }
  return out;
}

}  // namespace

// "on", "on (protected PCIe)", "off", or "?" where the profile does not record it.
std::string confidential_computing_text(const Profile& p) {
  const DeviceInfo& d = p.device;
  return d.confidential_computing ? confidential_computing_text(*d.confidential_computing, d.confidential_computing_mode)
                                  : "?";
}

std::vector<std::pair<std::string, std::string>> measurement_conditions(const Profile& p) {
  // A field the profile does not record (one of an earlier build) says so in words (review 108: a bare "?").
  const std::string unknown = "not recorded";
  auto known = [&](const std::string& s) { return s.empty() || s == "?" ? unknown : s; };
  const DeviceInfo& d = p.device;
  return {{"power limit", known(power_limit_text(p))},
          {"most SM clock", d.max_sm_clock_hz ? format_quantity(*d.max_sm_clock_hz, "Hz") : unknown},
          {"ECC", d.ecc ? (*d.ecc ? "on" : "off") : unknown},
          {"confidential computing", known(confidential_computing_text(p))},
          {"driver", known(d.driver)},
          {"CUDA", known(d.cuda_runtime)},
          {"cuBLAS", known(d.cublas)},
          {"ceilings", known(tool_text(p))},
          {"measurement code", known(p.tool_measurement_code)},
          {"host CPU", known(p.cpu)},
          {"GPUs measured", known(measured_together(p))},
          {"pass", known(pass_text(p))}};
}

std::vector<std::string> measurement_condition_notes(const Comparison& c) {
  std::vector<std::size_t> profiles;
  for (std::size_t i = 0; i < c.devices.size(); ++i)
    if (c.devices[i].profile) profiles.push_back(i);
  std::vector<std::string> notes;
  // Software: each field that differs, with what it moves.
  const struct {
    const char* field;
    std::string (*value)(const Profile&);
    const char* moves;
  } software[] = {
      {"driver", [](const Profile& p) { return p.device.driver; }, "clocks, copies and kernels go with it"},
      {"CUDA runtime", [](const Profile& p) { return p.device.cuda_runtime; }, "copies and launches go with it"},
      {"cuBLAS", [](const Profile& p) { return p.device.cublas; },
       "a GEMM ratio can be the library's as much as the GPU's"},
      {"ceilings", measured_by,
       "another release's or build's kernels and search are another measurement"},
      {"host CPU", [](const Profile& p) { return p.cpu; },
       "pageable copies, launch and small-copy latency go with the host"},
      {"confidential computing",
       [](const Profile& p) {  // not recorded (a profile from before the field) is "?" in the table: no value here
         const std::string cc = confidential_computing_text(p);
         return cc == "?" ? std::string() : cc;
       },
       "with it on, host<->device copies and launches go through the driver's encrypted bounce buffers (and in its "
       "NVLink-encryption mode, peer copies are encrypted too)"},
      {"GPUs measured", measured_together,
       "GPUs measured at once share the node's power, cooling and host links: copies to and from the host, and "
       "ceilings held by power or heat, go with it"},
      {"pass", pass_text,
       "a --quick pass measures fewer sizes, shapes and samples, with shorter windows: another measurement"},
  };
  for (const auto& f : software)
    if (const std::string d = differing_values(c, profiles, f.value); !d.empty())
      notes.push_back(std::string(f.field) + " differs (" + d + "): " + f.moves);
  // Power: a limit below the datasheet's TDP caps every compute ceiling lower than the datasheet's GPU runs.
  for (std::size_t i : profiles) {
    const CompareDevice& d = c.devices[i];
    const auto& limit = d.profile->device.power_limit_w;
    if (d.gpu.empty() || !limit) continue;
    const GpuSpec& g = resolve_gpu(d.gpu);
    if (g.tdp_w > 0 && !g.tdp_whole_module && *limit < 0.99 * g.tdp_w)
      notes.push_back(d.label + ": power limit " + watts_text(*limit) + ", below the datasheet TDP of " +
                      watts_text(g.tdp_w) + " (" + g.name +
                      // within a configurable range (H100 PCIe 300-350 W) it is a setting, not a fault (review 100)
                      (g.tdp_min_w > 0 && *limit >= g.tdp_min_w - 1  // within the range, 1 W for rounding
                           ? ", whose TDP is configurable from " + watts_text(g.tdp_min_w) + ": a setting, not a fault"
                           : std::string()) +
                      "): its compute ceilings ran under a lower cap");
  }
  // One model compared with itself: another power limit, or ceilings run at another clock, is not the GPU.
  for (std::size_t a = 0; a < profiles.size(); ++a) {
    const Profile& pa = *c.devices[profiles[a]].profile;
    bool first_of_model = true;
    for (std::size_t k = 0; k < a; ++k)
      if (c.devices[profiles[k]].profile->device.name == pa.device.name) first_of_model = false;
    if (!first_of_model) continue;
    std::vector<std::size_t> model{profiles[a]};
    for (std::size_t b = a + 1; b < profiles.size(); ++b)
      if (c.devices[profiles[b]].profile->device.name == pa.device.name) model.push_back(profiles[b]);
    if (model.size() < 2) continue;
    // Where the datasheet knows the model, a limit below its TDP is said above; else limits that differ.
    if (c.devices[profiles[a]].gpu.empty())
      if (const std::string d = differing_values(c, model, power_limit_text); !d.empty())
        notes.push_back("power limit differs within " + pa.device.name + " (" + d +
                        "): its compute ceilings ran under different caps");
    for (std::size_t m = 1; m < model.size(); ++m) {
      std::vector<std::string> apart;
      std::size_t compared = 0;
      for (const CompareRow& r : c.rows) {
        const auto& ref = r.cells[model[0]].sm_clock_hz;
        const auto& other = r.cells[model[m]].sm_clock_hz;
        if (r.unit.size() > 2 && r.unit.compare(r.unit.size() - 2, 2, "/W") == 0) continue;  // a per-W row repeats
        // A clock held by the power cap (or a slowdown) is the workload's result, not a setting: the stored H200's
        // four runs, under one limit and one driver, ran their capped GEMMs at 1.74 and 1.98 GHz (review 37).
        if (r.cells[model[0]].throttled != false || r.cells[model[m]].throttled != false) continue;
        if (!ref || !other) continue;
        ++compared;
        if (std::fabs(*other / *ref - 1) > 0.05)
          apart.push_back(r.ceiling + " " + format_quantity(*other, "Hz") + " vs " + format_quantity(*ref, "Hz"));
      }
      // A setting (application clocks, a locked clock) moves every ceiling: at least 3, and a quarter of those
      // compared. One GEMM whose clock was still recovering from a capped phase is not one (review 39: the stored
      // H200's run at 0951e58, its fp64 GEMM at 1.70 GHz with no reason recorded).
      if (apart.size() < 3 || apart.size() * 4 < compared) continue;
      std::string examples;
      for (std::size_t k = 0; k < apart.size() && k < 3; ++k) examples += (k ? ", " : "") + apart[k];
      notes.push_back(c.devices[model[m]].label + " ran " + std::to_string(apart.size()) +
                      " ceilings unthrottled at a median SM clock more than 5% from " + c.devices[model[0]].label +
                      "'s (" + examples + (apart.size() > 3 ? ", ..." : "") +
                      "): a ratio there goes with the clock (application clocks or a locked clock), not only the GPU");
    }
  }
  return notes;
}

std::string device_key(std::size_t index) {
  return index < 26 ? std::string(1, static_cast<char>('A' + index)) : "D" + std::to_string(index + 1);
}

std::string device_legend(const Comparison& c, Format format) {
  std::string out;
  for (std::size_t i = 0; i < c.devices.size(); ++i)
    out += (format == Format::kMarkdown ? "- " : "") + device_key(i) + ": " + c.devices[i].label + "\n";
  return out;
}

Table conditions_table(const Comparison& c) {
  Table t;
  t.columns.push_back("measured under");
  t.right_aligned.push_back(false);
  std::vector<std::vector<std::pair<std::string, std::string>>> per;
  for (std::size_t i = 0; i < c.devices.size(); ++i)
    if (const CompareDevice& d = c.devices[i]; d.profile) {
      t.columns.push_back(device_key(i));
      t.right_aligned.push_back(false);
      per.push_back(measurement_conditions(*d.profile));
    }
  if (per.empty()) return t;
  for (std::size_t f = 0; f < per.front().size(); ++f) {
    std::vector<std::string> row{per.front()[f].first};
    for (const auto& p : per) row.push_back(p[f].second);
    t.add_row(row);
  }
  return t;
}

namespace {
std::optional<std::pair<std::string, double>> vs_first_ratio(const CompareCell& first, const CompareCell& other) {
  std::optional<std::pair<std::string, double>> r;
  if (first.measured && other.measured && *first.measured > 0)
    r = {"measured", *other.measured / *first.measured};
  else if (first.datasheet && other.datasheet && *first.datasheet > 0)
    r = {"datasheet", *other.datasheet / *first.datasheet};
  if (r && !std::isfinite(r->second)) return std::nullopt;  // a rate of 1e-300 against another: no ratio, not "infx"
  return r;
}
}  // namespace

std::optional<std::string> vs_first_basis(const CompareCell& first, const CompareCell& other) {
  const auto r = vs_first_ratio(first, other);
  return r ? std::optional<std::string>(r->first) : std::nullopt;
}

std::optional<double> vs_first(const CompareCell& first, const CompareCell& other) {
  const auto r = vs_first_ratio(first, other);
  return r ? std::optional<double>(r->second) : std::nullopt;
}

std::optional<bool> vs_first_within_noise(const CompareCell& first, const CompareCell& other) {
  const auto r = vs_first_ratio(first, other);
  if (!r || r->first != "measured" || !first.standard_error || !other.standard_error) return std::nullopt;
  return std::fabs(r->second - 1) <= 2 * std::hypot(*first.standard_error, *other.standard_error);
}

Table comparison_table(const Comparison& c) {
  Table t;
  t.columns.push_back("ceiling");
  t.right_aligned.push_back(false);
  for (std::size_t i = 0; i < c.devices.size(); ++i)
    for (const char* what : {" measured", " datasheet", " meas/ds"}) {
      t.columns.push_back(device_key(i) + what);
      t.right_aligned.push_back(true);
    }
  for (std::size_t i = 1; i < c.devices.size(); ++i) {
    t.columns.push_back(device_key(i) + " vs " + device_key(0));
    t.right_aligned.push_back(true);
  }
  for (const CompareRow& r : c.rows) {
    // Memory in GiB, as the datasheets' "141 GB" and `specs` count it (SI read 151 GB there, review 83); csv and
    // json keep bytes.
    auto show = [&](const std::optional<double>& v, const std::string& unit) {
      return !v ? std::string("-") : r.ceiling == "memory.capacity" ? format_gib(*v) : format_quantity(*v, unit);
    };
    std::vector<std::string> row{r.ceiling};
    for (const CompareCell& cell : r.cells) {
      row.push_back(!cell.status.empty() ? cell.status
                    : show(cell.measured, r.unit) + (cell.measured && cell.hardware_slowdowns ? " !"
                                                     : cell.measured && cell.throttled == true ? " *"
                                                                                               : ""));
      row.push_back(show(cell.datasheet, r.unit));
      row.push_back(cell.ratio() ? format_percent(*cell.ratio()) : "-");
    }
    for (std::size_t i = 1; i < r.cells.size(); ++i) {
      const auto v = vs_first(r.cells[0], r.cells[i]);
      const bool datasheet = vs_first_basis(r.cells[0], r.cells[i]) == std::optional<std::string>("datasheet");
      const bool noise = vs_first_within_noise(r.cells[0], r.cells[i]).value_or(false);
      // A latency's ratio above 1 is slower, a rate's faster: said for the time rows (review 108).
      const bool time = r.unit == "s";
      const std::string way = !time || !v || noise || std::fabs(*v - 1) < 0.005 ? "" : *v > 1 ? " (slower)" : " (faster)";
      row.push_back(v ? format_fixed(*v, 2) + "x" + way + (datasheet ? " (ds)" : noise ? " (noise)" : "") : "-");
    }
    t.add_row(row);
  }
  return t;
}

Table comparison_csv_table(const Comparison& c) {
  Table t;
  t.columns = {"ceiling", "unit"};
  for (const auto& d : c.devices)
    for (const char* what : {" measured", " datasheet", " measured/datasheet", " throttled", " hardware slowdowns",
                             " status"})
      t.columns.push_back(d.label + what);
  for (std::size_t i = 1; i < c.devices.size(); ++i) {
    t.columns.push_back(c.devices[i].label + " vs " + c.devices[0].label);
    t.columns.push_back(c.devices[i].label + " vs " + c.devices[0].label + " basis");
    t.columns.push_back(c.devices[i].label + " vs " + c.devices[0].label + " within noise");
  }
  for (const CompareRow& r : c.rows) {
    std::vector<std::string> row{r.ceiling, r.unit};
    for (const CompareCell& cell : r.cells) {
      row.push_back(csv_number(cell.measured));
      row.push_back(csv_number(cell.datasheet));
      row.push_back(csv_number(cell.ratio()));
      row.push_back(cell.measured && cell.throttled ? (*cell.throttled ? "true" : "false") : "");
      row.push_back(cell.measured && cell.hardware_slowdowns ? clock_events::names(cell.hardware_slowdowns) : "");
      row.push_back(cell.status);
    }
    for (std::size_t i = 1; i < r.cells.size(); ++i) {
      row.push_back(csv_number(vs_first(r.cells[0], r.cells[i])));
      row.push_back(vs_first_basis(r.cells[0], r.cells[i]).value_or(""));
      const auto noise = vs_first_within_noise(r.cells[0], r.cells[i]);
      row.push_back(noise ? (*noise ? "true" : "false") : "");
    }
    t.add_row(row);
  }
  return t;
}

json comparison_json(const Comparison& c) {
  json out = {{"devices", json::array()}, {"rows", json::array()}};
  for (const auto& d : c.devices) {
    out["devices"].push_back({{"label", d.label},
                              {"origin", d.origin},
                              {"source", d.from_profile ? "profile" : "datasheet"},
                              {"datasheet_entry", d.gpu.empty() ? json(nullptr) : json(d.gpu)},
                              {"mig", d.profile && d.profile->device.is_mig()}});
    if (const auto note = d.profile ? d.profile->note() : std::nullopt) out["devices"].back()["note"] = *note;
    if (d.profile) {
      const DeviceInfo& di = d.profile->device;
      auto text = [](const std::string& s) { return s.empty() ? json(nullptr) : json(s); };
      auto number = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
      out["devices"].back()["conditions"] = {{"power_limit_w", number(di.power_limit_w)},
                                             {"max_sm_clock_hz", number(di.max_sm_clock_hz)},
                                             {"ecc", di.ecc ? json(*di.ecc) : json(nullptr)},
                                             {"confidential_computing", di.confidential_computing
                                                                            ? json(*di.confidential_computing)
                                                                            : json(nullptr)},
                                             {"driver", text(di.driver)},
                                             {"cuda_runtime", text(di.cuda_runtime)},
                                             {"cublas", text(di.cublas)},
                                             {"tool_version", text(d.profile->tool_version)},
                                             {"tool_git", text(d.profile->tool_git)},
                                             {"measurement_code", text(d.profile->tool_measurement_code)},
                                             {"host_cpu", text(d.profile->cpu)},
                                             {"gpus_measured_together",
                                              d.profile->gpus_measured_together
                                                  ? json(*d.profile->gpus_measured_together)
                                                  : json(nullptr)},
                                             {"quick", d.profile->quick ? json(*d.profile->quick) : json(nullptr)}};
    }
  }
  out["condition_notes"] = c.condition_notes;
  auto num = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  for (const CompareRow& r : c.rows) {
    json row = {{"ceiling", r.ceiling}, {"unit", r.unit}, {"values", json::array()}};
    for (std::size_t i = 0; i < r.cells.size(); ++i) {
      const CompareCell& cell = r.cells[i];
      const auto v = vs_first(r.cells[0], cell);
      row["values"].push_back({{"device", c.devices[i].label},
                               {"measured", num(cell.measured)},
                               {"datasheet", num(cell.datasheet)},
                               {"ratio", num(cell.ratio())},
                               {"throttled", cell.measured && cell.throttled ? json(*cell.throttled) : json(nullptr)},
                               {"hardware_slowdowns",
                                cell.measured && cell.hardware_slowdowns
                                    ? json(clock_events::names(cell.hardware_slowdowns))
                                    : json(nullptr)},
                               {"sm_clock_hz", num(cell.sm_clock_hz)},
                               {"status", cell.status.empty() ? json(nullptr) : json(cell.status)},
                               {"vs_first", num(v)},
                               {"vs_first_basis", v ? json(*vs_first_basis(r.cells[0], cell)) : json(nullptr)},
                               {"vs_first_within_noise", [&] {
                                  const auto n = vs_first_within_noise(r.cells[0], cell);
                                  return n ? json(*n) : json(nullptr);
                                }()}});
    }
    out["rows"].push_back(row);
  }
  return out;
}

}  // namespace ceilings
