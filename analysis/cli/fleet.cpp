// `ceilings fleet PROFILES_OR_DIRS...`: compares many profiles (a fleet, or the GPUs of nodes), names the
// GPUs whose ceilings fall below their peers' and those whose recorded health fails (or whose ceilings fall
// below qualify's datasheet fractions), and can write the group medians as a qualify baseline.
// Exit codes: 1 an outlier, a health or ceiling fault, a host below its group's other hosts, a GPU configured unlike its peers (in any group but the largest
// of its GPU model, when that one is large enough to compare with), a GPU below that group where only its servers'
// CPU differs (on its own ceilings) or it was measured with fewer GPUs at once, or a model configured two ways in
// equal numbers; else 3 when a GPU could not be judged (its
// group too small and no group of its model to compare with, or below its peers within its own spread: unstable);
// else 0. 2 bad usage or nothing readable.
#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <locale>
#include <memory>
#include <optional>
#include <sstream>

#include "ceilings/fleet.hpp"
#include "ceilings/json_fields.hpp"
#include "ceilings/report.hpp"
#include "ceilings/table.hpp"
#include "ceilings/units.hpp"
#include "subcommand.hpp"

namespace {

using namespace ceilings;

// The most files a text or markdown report names in one list; past it, a count and where the JSON has them all.
constexpr std::size_t kListed = 20;

// " a b c" for the members at `indices`, at most kListed of them, then "... and N more (`--format json`: KEY)".
std::string paths_of(const FleetInput& in, const std::vector<std::size_t>& indices, const char* json_key) {
  std::string out;
  for (std::size_t k = 0; k < indices.size() && k < kListed; ++k) out += " " + printable_text(in.members[indices[k]].path);
  if (indices.size() > kListed)
    out += " ... and " + std::to_string(indices.size() - kListed) + " more (`--format json` lists every one: " +
           json_key + ")";
  return out;
}

// The most rows a table of a text or markdown report shows (an outliers table's are worst first); past it, a count and where the JSON
// and csv have them all (review 109: 2048 GPUs slow on every ceiling printed 90,000 lines, a rolling driver upgrade
// half done 2,000 lines of one reason).
constexpr std::size_t kTableRows = 50;
std::string render_capped(Table t, Format format, const std::string& json_key) {
  const std::size_t rows = t.rows.size();
  if (rows <= kTableRows) return render(t, format);
  t.rows.resize(kTableRows);
  return render(t, format) + (format == Format::kMarkdown ? "\n" : "") + "... and " +
         std::to_string(rows - kTableRows) + " more row(s) (`--format json` lists every one: " + json_key +
         "; `--format csv` too)\n";
}

struct FleetOptions {
  std::vector<std::string> paths;
  std::string format = "table";
  std::string write_baseline;
  std::string expect_hosts;
  std::string rules;
  int baseline_group = 0;  // 1-based; 0: the largest group
  double z = 3.5;
  double family_alpha = 0.05;
  double margin_pct = 5;
  double min_deficit_pct = 1;
};

// A file already at the --write-baseline path is replaced only when it is a fleet baseline (rewritten as the
// fleet changes). A measured profile, or anything else the user keeps there, is left as it is.
void check_replaceable_baseline(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return;
  std::string what;
  try {
    const json doc = read_json_file(path);
    // A baseline this command wrote, not merely a document with a "baseline" key. Its source is compared only
    // where it is text: json::value() threw a type error on {"source": 5} (exit 3, no field named).
    const json* source = nullptr;
    if (doc.is_object() && doc.contains("baseline") && doc["baseline"].is_object() && doc["baseline"].contains("source"))
      source = &doc["baseline"]["source"];
    if (source && source->is_string() && source->get<std::string>() == "ceilings fleet") return;
    what = doc.is_object() && doc.contains("ceilings") ? "a measured profile" : "a JSON document";
    if (source)
      what += " whose field 'baseline.source' is " +
              (source->is_string() ? "'" + printable_text(excerpt(source->get<std::string>())) + "'"
                                   : json_type_name(*source)) +
              " (a fleet baseline's is 'ceilings fleet')";
  } catch (const Error& e) {
    what = std::string("a file that is not a profile (") + e.what() + ")";
  }
  throw InputError("--write-baseline '" + path + "' exists and is " + what +
                   ", not a fleet baseline: it was left as it was; remove it or choose another file");
}

// A failing check as named in the fleet's tables: a ceiling's check with its ceiling ("gemm.bf16 datasheet
// fraction"), a health or profile check by its rule.
std::string check_name(const Check& c) {
  return c.subject == "health" || c.subject == "profile" || c.subject.empty() ? c.rule : c.subject + " " + c.rule;
}

std::string z_text(const Deviation& d) { return d.z ? format_fixed(*d.z, 1) : "-"; }

std::string rules_text(const Deviation& d) {
  std::string out;
  for (const auto& [on, name] : {std::pair<bool, const char*>{d.by_z, "z"}, {d.by_margin, "margin"}, {d.by_split, "split"}})
    if (on) out += (out.empty() ? "" : "+") + std::string(name);
  return d.majority_split ? out + ", majority" : out;
}

// One row per (outlier, ceiling) of `list`, one of the group's: the actionable list under its statistics.
// `median`: the column of the median its members are set against.
// `spread`: the unstable lists, with the own spread that covers each deficit. A split's row is against the better
// population's median (its rule says "split"), whatever the median column's name.
Table findings_table(const FleetInput& in, const FleetGroup& g, const std::vector<Outlier>& list,
                     const std::string& median = "group median", bool spread = false) {
  Table t;
  t.columns = {"host", "gpu", "uuid", "pci bus id", "ceiling", "value", median, "worse than median", "z", "rule"};
  t.right_aligned = {false, false, false, false, false, true, true, true, true, false};
  if (spread) {
    t.columns.push_back("own spread");
    t.right_aligned.push_back(true);
  }
  for (const Outlier& o : list) {
    const Profile& p = in.members[g.members[o.member]].profile;
    for (const Deviation& d : o.ceilings) {
      std::vector<std::string> row = {p.hostname, std::to_string(p.device.index), p.device.uuid, p.device.pci_bus_id,
                                      d.ceiling, format_quantity(d.value, d.unit), format_quantity(d.median, d.unit),
                                      format_percent(d.deficit), z_text(d), rules_text(d)};
      if (spread) row.push_back(format_percent(d.own_noise));
      t.add_row(row);
    }
  }
  return t;
}

// A check of the GPU's health (its health section's, a ceiling measured under a HW/thermal slowdown, or GPU pairs
// without peer access, which the health rules `slowdown` and `peer_access` judge), apart from a ceiling's own rules
// (review 110: the slowdown read as a ceiling fault).
bool a_health_check(const Check& c) {
  return c.subject == "health" || c.rule == "HW/thermal slowdown" || c.rule == "peer access";
}

// A host's GPUs below the group's other hosts: one row per ceiling.
Table hosts_below_table(const FleetInput& in, const FleetGroup& g) {
  Table t;
  t.columns = {"host", "gpus", "ceiling", "host median", "hosts' median", "worse than median", "z", "rule"};
  t.right_aligned = {false, true, false, true, true, true, true, false};
  for (const HostOutlier& h : g.hosts_below) {
    std::string gpus;
    for (std::size_t m : h.members)
      gpus += (gpus.empty() ? "" : ",") + std::to_string(in.members[g.members[m]].profile.device.index);
    for (const Deviation& d : h.ceilings)
      t.add_row({h.host, gpus, d.ceiling, format_quantity(d.value, d.unit), format_quantity(d.median, d.unit),
                 format_percent(d.deficit), z_text(d), rules_text(d)});
  }
  return t;
}

// A check as qualify shows it: measured and threshold with their unit, and where the threshold came from.
json shown(const Check& c) { return checks_to_json({c}).at(0); }

// Why a GPU below its peers is not judged: its own spread covers the deficit. `against`: the median it is below
// where that is not its group's (a peer group's); a split's is the better population's.
std::string unstable_text(const Deviation& d, const std::string& against = "") {
  if (d.majority_split)
    return "not judged: " + format_percent(d.deficit) + " below the better population's median, but its side of the "
           "split is the group's majority: whether the few read high or the many low, qualify against a baseline or "
           "the datasheet says";
  const std::string median = !against.empty() ? against : d.by_split ? "the better population's median" : "";
  return "not judged: " + format_percent(d.deficit) + " below" + (median.empty() ? "" : " " + median) +
         ", within its own measurement's spread (" + format_percent(d.own_noise) + "): unstable, measure again";
}

// A member's entry in `list`, if any.
bool has_member(const std::vector<Outlier>& list, std::size_t member) {
  return std::any_of(list.begin(), list.end(), [&](const Outlier& o) { return o.member == member; });
}

// One row per (GPU, failing health check).
Table health_table(const FleetInput& in, const FleetHealth& h) {
  Table t;
  t.columns = {"host", "gpu", "uuid", "pci bus id", "check", "measured", "threshold", "threshold from", "reason"};
  t.right_aligned = {false, false, false, false, false, true, true, false, false};
  for (const FleetHealthFault& f : h.faults) {
    const Profile& p = in.members[f.member].profile;
    for (const Check& c : f.failed) {
      const json s = shown(c);
      t.add_row({p.hostname, std::to_string(p.device.index), p.device.uuid, p.device.pci_bus_id, check_name(c),
                 s["measured_text"], s["threshold_text"], c.source, c.reason});
    }
  }
  return t;
}

// Why a group is set against `g.peer_group`: "configured unlike group 1: driver ..." or, where only the hosts'
// CPU differs, "in other servers than group 1: host CPU ... (the GPU's own ceilings compared)".
std::string unlike_text(const FleetGroup& g) {
  std::string diff;
  for (std::size_t i = 0; i < g.differences.size(); ++i) diff += (i ? ", " : "") + g.differences[i];
  const std::string peers = "group " + std::to_string(*g.peer_group + 1);
  if (g.host_only) return "in other servers than " + peers + ": " + diff + " (the GPU's own ceilings compared)";
  if (g.fewer_together)
    return "measured with fewer GPUs at once than " + peers + ": " + diff + " (a shortfall is the GPU's own)";
  return "configured unlike " + peers + ": " + diff;
}

// "configured unlike group 1, as large, of the same GPU model: driver ... (peers: ...)" for each group `gi` is
// set up two ways with; "" where none.
std::string two_ways_text(const std::vector<FleetGroup>& groups, std::size_t gi) {
  std::string out;
  for (const TwoWayPartner& t : two_way_partners(groups, gi)) {
    std::string diff;
    for (std::size_t i = 0; i < t.differences.size(); ++i) diff += (i ? ", " : "") + t.differences[i];
    out += (out.empty() ? "" : "; ") + std::string("configured unlike group ") + std::to_string(t.group + 1) +
           ", as large, of the same GPU model: " + diff;
  }
  return out;
}

// The members of a group set against the largest group of their model (too small to compare within itself, or
// configured otherwise): what differs from that group, and how their ceilings compare with its medians.

// Why a group too small to be compared within itself, with no peer group, is not judged.
std::string not_judged_why(const FleetGroup& g) {
  if (!g.measured_unlike) return "no group of " + g.fingerprint.model() + " large enough to compare with";
  std::string how;
  for (const std::string& d : g.differences) how += (how.empty() ? "" : ", ") + d;
  return "group " + std::to_string(*g.measured_unlike + 1) + " of " + g.fingerprint.model() +
         " was measured differently (" + printable_text(how) + "), so it is no reference";
}

Table not_compared_table(const FleetInput& in, const FleetGroup& g) {
  Table t;
  const std::string peers = g.peer_group ? "group " + std::to_string(*g.peer_group + 1) : "";
  t.columns = {"host", "gpu", "uuid", "pci bus id", "finding"};
  if (g.peer_group) t.columns.push_back("worse than " + peers + "'s median");
  for (std::size_t k = 0; k < g.members.size(); ++k) {
    const Profile& p = in.members[g.members[k]].profile;
    std::vector<std::string> row{p.hostname, std::to_string(p.device.index), p.device.uuid, p.device.pci_bus_id};
    if (!g.peer_group) {
      row.push_back("not judged: " + not_judged_why(g));
    } else {
      row.push_back(unlike_text(g));
      std::string worse;
      for (const Outlier& o : g.versus_peers)
        if (o.member == k)
          for (const Deviation& d : o.ceilings)
            worse += (worse.empty() ? "" : ", ") + d.ceiling + " " + format_percent(d.deficit);
      row.push_back(!worse.empty()                              ? worse
                    : has_member(g.unstable_versus_peers, k) ? "none judged (unstable: see below)"
                                                              : "none");
    }
    t.add_row(std::move(row));
  }
  return t;
}

// A ceiling the group's peers have that a member lacks, with its profile's reason.
Table missing_table(const FleetInput& in, const FleetGroup& g) {
  Table t;
  t.columns = {"host", "gpu", "uuid", "pci bus id", "ceiling", "finding", "reason"};
  for (const MissingCeiling& m : g.missing) {
    const Profile& p = in.members[g.members[m.member]].profile;
    t.add_row({p.hostname, std::to_string(p.device.index), p.device.uuid, p.device.pci_bus_id, m.ceiling,
               m.error ? "fail" : "note", m.reason});
  }
  return t;
}

// The reason, whole (csv) or its first line (a table's cell holds one line; JSON has it whole).
std::string unfinished_text(const FleetUnfinished& u, bool first_line_only) {
  const std::size_t nl = u.reason.find('\n');
  const std::string reason = first_line_only && nl != std::string::npos ? u.reason.substr(0, nl) + " ..." : u.reason;
  return reason + (u.partial_compared ? " (a profile of it from before the summary's last write is compared)" : "") +
         " [" + u.summary + "]";
}

// Why a GPU its node named is not named here: the fleet judges it against its group's median, not its node's.
std::string node_finding_text(const std::string& deviation) {
  return "measure --all-gpus named it below its node's peers (" + deviation +
         "); against its group's median the fleet does not: its node's other GPUs may be faster than the fleet's";
}

Table node_findings_table(const FleetInput& in, const std::vector<FleetGroup>& groups) {
  Table t;
  t.columns = {"host", "gpu", "uuid", "pci bus id", "below its node's peers"};
  for (const FleetNodeFinding* f : node_findings_not_named(in, groups)) {
    std::string all;
    for (const std::string& d : f->ceilings) all += (all.empty() ? "" : "; ") + d;
    t.add_row({f->host, f->index >= 0 ? std::to_string(f->index) : "?", f->uuid, f->pci_bus_id, all});
  }
  return t;
}

Table unfinished_table(const FleetInput& in) {
  Table t;
  t.columns = {"host", "gpu", "uuid", "pci bus id", "state", "reason"};
  for (const FleetUnfinished& u : in.unfinished)
    t.add_row({u.host, u.index >= 0 ? std::to_string(u.index) : "?", u.uuid, u.pci_bus_id, u.state,
               unfinished_text(u, true)});
  return t;
}

// Every finding of the run in one table, one row per (GPU, ceiling or check): the csv output, so that a
// script reading it sees whatever made the exit code, not only the outliers.
Table all_findings_table(const FleetInput& in, const std::vector<FleetGroup>& groups, const FleetHealth& health,
                         const std::optional<HostCheck>& hosts) {
  Table t;
  // Numbers as stored (SI base units, the deficit a fraction), the unit in a column of its own: a file to parse.
  // snake_case, as every csv header (a script names the columns)
  t.columns = {"group", "finding", "host", "gpu", "uuid", "pci_bus_id", "ceiling_or_check", "value", "unit",
               "reference_median", "worse_than_median", "z", "rule", "threshold", "threshold_from", "reason"};
  std::vector<std::size_t> group_of(in.members.size(), 0);
  for (std::size_t gi = 0; gi < groups.size(); ++gi)
    for (std::size_t m : groups[gi].members) group_of[m] = gi;
  auto row = [&](std::size_t gi, const std::string& finding, std::size_t member) {
    const Profile& p = in.members[member].profile;
    return std::vector<std::string>{std::to_string(gi + 1), finding,         p.hostname,
                                    std::to_string(p.device.index), p.device.uuid, p.device.pci_bus_id};
  };
  auto add_deviation = [&](std::vector<std::string> r, const Deviation& d, const std::string& reason) {
    for (std::string s : {d.ceiling, csv_number(d.value), d.unit, csv_number(d.median), csv_number(d.deficit),
                          csv_number(d.z), rules_text(d), std::string(), std::string(), reason})
      r.push_back(std::move(s));
    t.add_row(std::move(r));
  };
  auto add_plain = [&](std::vector<std::string> r, const std::string& what, const std::string& reason) {
    for (std::string s : {what, std::string(), std::string(), std::string(), std::string(), std::string(),
                          std::string(), std::string(), std::string(), reason})
      r.push_back(std::move(s));
    t.add_row(std::move(r));
  };
  // A failing check: its value and threshold as numbers in SI where they are quantities, else as qualify words them.
  auto add_check = [&](std::vector<std::string> r, const Check& c) {
    const json s = shown(c);
    for (std::string v : {check_name(c), c.measured ? csv_number(c.measured) : s["measured_text"].get<std::string>(),
                          c.unit, std::string(), std::string(), std::string(), std::string(),
                          c.threshold ? csv_number(c.threshold) : s["threshold_text"].get<std::string>(), c.source,
                          c.reason})
      r.push_back(std::move(v));
    t.add_row(std::move(r));
  };
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const FleetGroup& g = groups[gi];
    for (const Outlier& o : g.outliers)
      for (const Deviation& d : o.ceilings) add_deviation(row(gi, "outlier", g.members[o.member]), d, "");
    // A host below the others: one row per GPU of it and ceiling, the value the host's median (reason says so).
    // (Not for a GPU named an outlier on that ceiling already: its own row says it, review 111.)
    for (const HostOutlier& h : g.hosts_below)
      for (const Deviation& d : h.ceilings)
        for (std::size_t m : h.members) {
          const bool own_row = std::any_of(g.outliers.begin(), g.outliers.end(), [&](const Outlier& o) {
            return o.member == m && std::any_of(o.ceilings.begin(), o.ceilings.end(), [&](const Deviation& x) {
                     return x.ceiling == d.ceiling && x.unit == d.unit;
                   });
          });
          if (!own_row)
            add_deviation(row(gi, "host below peers", g.members[m]), d,
                          "its host's median over " + std::to_string(h.members.size()) +
                              " GPUs here, against the median of the group's hosts");
        }
    for (const Outlier& o : g.unstable)
      for (const Deviation& d : o.ceilings)
        add_deviation(row(gi, "unstable", g.members[o.member]), d, unstable_text(d));
    if (g.too_small || g.peer_group) {
      for (std::size_t k = 0; k < g.members.size(); ++k) {
        if (!g.peer_group) {
          add_plain(row(gi, "not judged", g.members[k]), "", not_judged_why(g));
          continue;
        }
        const std::string why = unlike_text(g);
        // Set against the peers on deficits alone (other servers, fewer GPUs at once): not set up unlike them.
        const char* finding = g.host_only || g.fewer_together ? "below peer group" : "unlike peers";
        bool any = false;
        for (const Outlier& o : g.versus_peers)
          if (o.member == k)
            for (const Deviation& d : o.ceilings) {
              add_deviation(row(gi, finding, g.members[k]), d, why);
              any = true;
            }
        const bool unstable = has_member(g.unstable_versus_peers, k);
        // Servers of another model with nothing slower on the GPU's side: not a finding.
        if (!any && !g.host_only && !g.fewer_together)
          add_plain(row(gi, "unlike peers", g.members[k]), "",
                    why + (unstable ? "; no ceiling judged below the peers' medians (unstable: its own rows)"
                                    : "; no ceiling below the peers' medians"));
        const std::string peers_median = "group " + std::to_string(*g.peer_group + 1) + "'s median";
        for (const Outlier& o : g.unstable_versus_peers)
          if (o.member == k)
            for (const Deviation& d : o.ceilings)
              add_deviation(row(gi, "unstable", g.members[k]), d, unstable_text(d, peers_median));
      }
    }
    if (const std::string why = two_ways_text(groups, gi); !why.empty())
      for (std::size_t k = 0; k < g.members.size(); ++k) add_plain(row(gi, "two ways", g.members[k]), "", why);
    for (const MissingCeiling& m : g.missing)
      add_plain(row(gi, m.error ? "missing (fail)" : "missing (note)", g.members[m.member]), m.ceiling, m.reason);
  }
  for (const FleetHealthFault& f : health.faults)
    for (const Check& c : f.failed)
      // The GPU's own health apart from a ceiling's rules (review 108: a GPU slow against its datasheet read as a
      // health fault to whoever filtered them for ECC, XID and link tickets).
      add_check(row(group_of[f.member], a_health_check(c) ? "health fault" : "ceiling fault", f.member), c);
  for (const FleetUnfinished& u : in.unfinished)
    add_plain({"", "unfinished", u.host, u.index >= 0 ? std::to_string(u.index) : "", u.uuid, u.pci_bus_id},
              u.state, unfinished_text(u, false));
  // A GPU whose newer run is on another host: a note (review 109: the csv had no row for it).
  for (const FleetSuperseded& s : in.superseded)
    if (s.host != s.newer_host)
      add_plain({"", "moved or copied", printable_text(s.host), "", s.uuid, ""}, printable_text(s.path),
                "an older run of this GPU; " + printable_text(s.newer_path) + " on " + printable_text(s.newer_host) +
                    " stands for it: a GPU moved, or a profile copied; check which is the GPU as it stands");
  for (const FleetNodeFinding* f : node_findings_not_named(in, groups))
    for (const std::string& d : f->ceilings)
      add_plain({"", "below node peers only", f->host, f->index >= 0 ? std::to_string(f->index) : "", f->uuid,
                 f->pci_bus_id},
                d.substr(0, d.find(' ')), node_finding_text(d));
  for (std::size_t i : health.cut_short)
    add_plain(row(group_of[i], "cut short", i), "", "a timeout or an interrupt stopped its run: not measured in full");
  for (std::size_t i : health.other_gpu)
    add_plain(row(group_of[i], "health of another GPU", i), "",
              "its health section was recorded on another GPU: its own health is not known");
  for (std::size_t i : health.other_nvml)
    add_plain(row(group_of[i], "health not the driver's", i), "",
              "its health was read through " + health_nvml_library(in.members[i].profile) +
                  " (CEILINGS_NVML_LIBRARY), not the driver's NVML");
  if (hosts) {
    for (const std::string& h : hosts->missing)
      add_plain({"", "missing host", printable_text(h), "", "", ""}, "",
                "listed in " + hosts->list + "; nothing read from it (no profile, no node summary): not judged");
    for (const std::string& h : hosts->not_listed)
      add_plain({"", "not listed", printable_text(h), "", "", ""}, "", "read, and not in " + hosts->list);
  }
  for (const std::string& why : health.rules_unheld)
    add_plain({"", "rule judged no GPU", "", "", "", ""}, "", printable_text(why));
  // A file it could not read is part of the exit code too: a row of its own, its path in the reason.
  for (const FleetSkip& s : in.skipped)
    add_plain({"", "skipped", "", "", "", ""}, "", printable_text(s.path + ": " + s.reason));
  return t;
}

Table stats_table(const FleetGroup& g) {
  Table t;
  t.columns = {"ceiling", "n", "median", "MAD", "MAD/median", "min", "max"};
  t.right_aligned = {false, true, true, true, true, true, true};
  for (const CeilingStats& s : g.stats)
    t.add_row({s.name, std::to_string(s.n), format_quantity(s.median, s.unit), format_quantity(s.mad, s.unit),
               s.median != 0 ? format_percent(s.mad / s.median, 2) : "-", format_quantity(s.min, s.unit),
               format_quantity(s.max, s.unit)});
  return t;
}

// The run's exit code: 1 a finding, 3 a GPU, host or file not judged in full, 0 every GPU judged and none found.
int fleet_exit_code(const FleetInput& in, const FleetFindings& found, const FleetHealth& health,
                    const std::optional<HostCheck>& hosts) {
  if (found.outliers > 0 || found.unlike_peers > 0 || found.below_peers > 0 || found.two_ways > 0 ||
      found.missing_failed > 0 || found.hosts_below > 0 || !health.faults.empty())
    return kExitFailed;
  // A file it could not read is a GPU it could not judge (a node whose profile is corrupt is not a pass).
  // So is a GPU its node's summary lists as unfinished (a hang that wrote no profile is not a pass).
  return found.not_judged > 0 || found.unstable > 0 || !in.skipped.empty() || !in.unfinished.empty() ||
                 !health.cut_short.empty() || !health.other_gpu.empty() || !health.rules_unheld.empty() ||
                 (hosts && !hosts->missing.empty()) || in.members.empty()
             ? kExitIncomplete
             : kExitOk;
}

// The GPUs (indices into the members) with a finding of any kind, each once: an outlier, configured unlike its
// peers or below them, of a model configured two ways, a ceiling lost to a failed measurement, a health fault.
std::set<std::size_t> gpus_with_a_finding(const std::vector<FleetGroup>& groups, const FleetHealth& health) {
  std::set<std::size_t> out, split;
  for (std::size_t gi = 0; gi < groups.size(); ++gi)
    if (groups[gi].split_with) split.insert({gi, *groups[gi].split_with});
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const FleetGroup& g = groups[gi];
    for (const Outlier& o : g.outliers) out.insert(g.members[o.member]);
    for (const HostOutlier& h : g.hosts_below)
      for (std::size_t m : h.members) out.insert(g.members[m]);
    for (const MissingCeiling& m : g.missing)
      if (m.error) out.insert(g.members[m.member]);
    if (g.peer_group && (g.host_only || g.fewer_together))
      for (const Outlier& o : g.versus_peers) out.insert(g.members[o.member]);
    else if (g.peer_group || split.count(gi))
      out.insert(g.members.begin(), g.members.end());
  }
  for (const FleetHealthFault& f : health.faults) out.insert(f.member);
  return out;
}

// The first line: the verdict, how many GPUs it covers, and what kept it from a pass (review 108: the summary led with
// "0 outlier(s)" over a run missing a host, exit 3, that no line called incomplete).
// `baseline_refused`: --write-baseline could write nothing, which makes the process exit 2 whatever the fleet's verdict
// (review 110: the line said the verdict's code while the process exited 2).
std::string verdict_line(const FleetInput& in, const std::vector<FleetGroup>& groups, const FleetHealth& health,
                         const std::optional<HostCheck>& hosts, bool baseline_refused) {
  const FleetFindings found = count_findings(groups);
  const int code = fleet_exit_code(in, found, health, hosts);
  std::vector<std::string> open;  // what is not judged in full
  const auto add = [&](std::size_t n, const std::string& what) {
    if (n > 0) open.push_back(std::to_string(n) + " " + what);
  };
  if (hosts) add(hosts->missing.size(), "host(s) missing");
  add(in.unfinished.size(), "GPU(s) without a finished profile");
  add(in.skipped.size(), "file(s) skipped");
  add(found.not_judged, "GPU(s) not judged");
  add(found.unstable, "GPU(s) unstable");
  add(health.cut_short.size(), "run(s) cut short");
  add(health.other_gpu.size(), "health section(s) of another GPU");
  add(health.rules_unheld.size(), "rule(s) that judged no GPU");
  std::string line = "verdict: " + std::string(code == kExitFailed ? "FAIL" : code == kExitIncomplete ? "INCOMPLETE" : "PASS") +
                     ": ";
  if (code == kExitFailed)
    line += std::to_string(gpus_with_a_finding(groups, health).size()) + " of " + std::to_string(in.members.size()) +
            " GPU(s) with a finding";
  else
    line += std::to_string(in.members.size()) + " GPU(s) read, none with a finding";
  for (std::size_t k = 0; k < open.size(); ++k) line += (k ? ", " : "; not judged in full: ") + open[k];
  if (in.members.empty() && open.empty()) line += "; no profile read";
  if (baseline_refused) return line + " (exit 2: --write-baseline wrote nothing, as stderr says)";
  return line + " (exit " + std::to_string(code) + ")";
}

std::string render_text(const FleetInput& in, const std::vector<FleetGroup>& groups, const OutlierRule& rule,
                        const FleetHealth& health, const std::optional<HostCheck>& hosts, Format format,
                        bool baseline_refused) {
  const bool md = format == Format::kMarkdown;
  std::string out;
  const FleetFindings found = count_findings(groups);
  const std::string verdict = verdict_line(in, groups, health, hosts, baseline_refused);
  out += (md ? "**" + verdict + "**\n\n" : verdict + "\n");
  out += std::string(md ? "**fleet**: " : "fleet: ") + "read " + std::to_string(in.members.size()) + " profile(s) of " +
         std::to_string(in.files) + " file(s), skipped " + std::to_string(in.skipped.size()) +
         (in.superseded.empty() ? "" : ", " + std::to_string(in.superseded.size()) + " older run(s) set aside") +
         (in.baselines.empty() ? "" : ", " + std::to_string(in.baselines.size()) + " baseline(s) set aside") +
         (in.node_summaries == 0 ? std::string()
                                 : ", " + std::to_string(in.node_summaries) + " node summary(ies) listing " +
                                       std::to_string(in.unfinished.size()) + " GPU(s) without a finished profile") +
         ", " +
         std::to_string(groups.size()) + " group(s) by fingerprint, " + std::to_string(found.outliers) +
         " outlier(s), " + std::to_string(found.unlike_peers) + " GPU(s) configured unlike their peers, " +
         (found.below_peers ? std::to_string(found.below_peers) +
                                  " GPU(s) below the group of their model they are set against (in other servers, or "
                                  "measured with fewer GPUs at once), "
                            : std::string()) +
         (found.two_ways ? std::to_string(found.two_ways) + " GPU(s) of a model configured two ways in equal numbers, "
                         : std::string()) +
         std::to_string(found.not_judged) + " GPU(s) not judged, " +
         (found.unstable ? std::to_string(found.unstable) + " GPU(s) unstable (not judged), " : std::string()) +
         std::to_string(found.missing_failed) +
         " ceiling(s) its peers have lost to a failed measurement, " +
         (found.hosts_below ? std::to_string(found.hosts_below) + " host(s) below their group's other hosts, "
                            : std::string()) +
         std::to_string(health.faults.size()) +
         " GPU(s) with a health fault" + [&] {
           std::size_t own = 0, ceiling_only = 0;
           for (const FleetHealthFault& f : health.faults) {
             const bool health_check = std::any_of(f.failed.begin(), f.failed.end(), a_health_check);
             ++(health_check ? own : ceiling_only);
           }
           return ceiling_only == 0 ? std::string()
                                    : " (" + std::to_string(own) + " failing a health check, " +
                                          std::to_string(ceiling_only) +
                                          " only a ceiling's rules: a datasheet fraction, a limit, a failed or "
                                          "unverified measurement; csv \"ceiling fault\")";
         }() + "\n" + (md ? "\n" : "");
  // How a GPU is named: said last, after what it found (review 108: a 990-character sentence before any result).
  const std::string rule_text = "rule: modified z-score below minus the group's z threshold (at least " + format_fixed(rule.z_threshold, 1) +
         ", and higher where the group's size and comparisons need it for plain normal noise to name a GPU with a "
         "chance of at most " + [&] {
           std::ostringstream os;
           os.imbue(std::locale::classic());
           os << std::setprecision(3) << rule.family_alpha;
           return os.str();
         }() + ") and at least " +
         format_percent(rule.min_deficit) + " below, or more than " + format_percent(rule.margin) +
         " below the group median, or (split) below a gap of more than " + format_percent(rule.margin) +
         " that splits the group into two populations of at least " + std::to_string(rule.min_members) +
         " GPUs and a quarter of it each (in a group of 64 or more also where the cut that best separates the values "
         "leaves the sides' medians more than " + format_percent(rule.margin) +
         " and 4 times their MADs added apart), and more than " + format_percent(rule.margin) +
         " below the better one's median (its median is then the median column and the deficit's reference; z "
         "stays the GPU's z-score in the whole group; where the worse population is the group's majority: unstable, "
         "not judged, rule \"split, majority\"), and beyond the GPU's own median's standard error times the "
         "larger of " + format_fixed(rule.own_spread, 0) + " and the normal quantile at family-alpha / comparisons "
         "(within it: unstable, not judged; past the margin alone, within the noise its group typically measures "
         "with too, and within the group's spread by the z-score, at most twice --z, and where the z threshold is "
         "past twice --z within the margin and one typical standard error too: not named); groups of at least " +
         std::to_string(rule.min_members) + "\n";
  // Paths as the walk found them: a name that is not UTF-8 printed as '?', as everything another program wrote.
  // A list longer than kListed is cut there, with a count: a directory of many jobs' runs printed one "set aside"
  // line per older profile, 2,000 lines burying the report (review 34); the JSON holds every one.
  const auto listed = [&](std::size_t shown, std::size_t all, const char* what, const char* json_key) {
    if (all > shown)
      out += std::string(md ? "- " : "") + "... and " + std::to_string(all - shown) + " more " + what +
             " (`--format json` lists every one: " + json_key + ")\n";
  };
  for (std::size_t k = 0; k < in.skipped.size() && k < kListed; ++k)
    out += (md ? "- skipped " : "skipped ") + printable_text(in.skipped[k].path + ": " + in.skipped[k].reason) + "\n";
  listed(std::min(in.skipped.size(), kListed), in.skipped.size(), "file(s) skipped", "skipped");
  for (std::size_t k = 0; k < in.baselines.size() && k < kListed; ++k)
    out += (md ? "- set aside " : "set aside ") + printable_text(in.baselines[k].path + ": " + in.baselines[k].reason) + "\n";
  listed(std::min(in.baselines.size(), kListed), in.baselines.size(), "baseline(s) set aside", "baselines_set_aside");
  // Those whose newer run is on another host first (a GPU moved, or a profile copied: worth a look), so that the cap
  // never hides them behind plain re-measurements (review 109: at scale they fell past it).
  std::vector<const FleetSuperseded*> superseded;
  for (const FleetSuperseded& s : in.superseded) superseded.push_back(&s);
  std::stable_partition(superseded.begin(), superseded.end(),
                        [](const FleetSuperseded* s) { return s->host != s->newer_host; });
  for (std::size_t k = 0; k < superseded.size() && k < kListed; ++k) {
    const FleetSuperseded& s = *superseded[k];
    out += (md ? "- set aside " : "set aside ") + printable_text(s.path) + ": an older run (" + s.created + ") of " + s.uuid + "; " +
           printable_text(s.newer_path) + " (" + s.newer_created + ") stands for it" +
           (s.host != s.newer_host ? " (on another host, " + s.newer_host + ", than " + s.host +
                                         ": a GPU moved, or a profile copied; check which is the GPU as it stands)"
                                   : std::string()) +
           (s.created == s.newer_created ? " (the same time: the later file stands)" : std::string()) + "\n";
  }
  listed(std::min(in.superseded.size(), kListed), in.superseded.size(), "older run(s) set aside", "superseded");
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const FleetGroup& g = groups[gi];
    const std::string key = "groups[" + std::to_string(gi) + "].";  // the group's JSON, for what a table leaves out
    out += std::string("\n") + (md ? "### " : "") + "group " + std::to_string(gi + 1) + ": " + g.fingerprint.label() +
           " (" + std::to_string(g.members.size()) + " profile(s), " + std::to_string(g.outliers.size()) +
           " outlier(s)" +
           (g.z_comparisons ? "; z threshold " + format_fixed(g.z_threshold, 2) + " over " +
                                  std::to_string(g.z_comparisons) + " comparisons"
                            : std::string()) +
           (g.own_spread > 0 && !g.too_small ? "; own spread " + format_fixed(g.own_spread, 2) + " standard errors" : std::string()) +
           ")\n";
    if (md) out += "\n";
    out += render(stats_table(g), format);
    if (g.too_small) {
      out += std::string(md ? "\n" : "") + "not compared: " + std::to_string(g.members.size()) +
             " profile(s) in this fingerprint group, " + std::to_string(rule.min_members) + " needed to name outliers";
      out += g.peer_group ? "; set against group " + std::to_string(*g.peer_group + 1) + " of the same GPU model:\n"
                          : "; " + not_judged_why(g) + ": not judged\n";
      out += (md ? "\n" : "") + render_capped(not_compared_table(in, g), format, key + "not_compared");
    } else if (g.measured_unlike && !g.peer_group) {
      // Compared within itself, and not with the model's largest group: say so, not only in the label (review 53).
      std::string how;
      for (const std::string& d : g.differences) how += (how.empty() ? "" : ", ") + d;
      out += std::string(md ? "\n" : "") + "compared within itself only: measured differently from group " +
             std::to_string(*g.measured_unlike + 1) + " of the same GPU model (" + printable_text(how) +
             "), which is no reference for it\n";
    } else if (g.peer_group) {
      out += std::string(md ? "\n" : "") +
             (g.host_only ? "in servers with another CPU than group " + std::to_string(*g.peer_group + 1) +
                                ", the largest of the same GPU model, and set against it on the GPU's own ceilings "
                                "(not pageable copies or launch and small-copy latency):\n"
              : g.fewer_together
                  ? "measured with fewer GPUs at once than group " + std::to_string(*g.peer_group + 1) +
                        " of the same GPU model, and set against it (sharing less of the node can only raise a "
                        "ceiling: a shortfall is the GPU's own):\n"
                  : "configured unlike group " + std::to_string(*g.peer_group + 1) +
                        ", the largest of the same GPU model, and set against it:\n");
      out += (md ? "\n" : "") + render_capped(not_compared_table(in, g), format, key + "unlike_peers");
    }
    if (!g.unstable_versus_peers.empty()) {
      const std::string peers = "group " + std::to_string(*g.peer_group + 1);
      out += std::string(md ? "\n" : "") + "unstable against " + peers +
             ", not judged (below its median by less than its own measurement's spread: measure again):\n" +
             (md ? "\n" : "") + render_capped(findings_table(in, g, g.unstable_versus_peers, peers + "'s median", true), format,
                                         key + (g.too_small ? "not_compared" : "unlike_peers") + ".unstable");
    }
    if (const std::string why = two_ways_text(groups, gi); !why.empty())
      out += std::string(md ? "\n" : "") + why +
             " (the model is set up more than one way in equal numbers; which is intended is not for fleet to say)\n";
    if (!g.missing.empty()) {
      out += std::string(md ? "\n" : "") + "missing (a ceiling its peers have; a failed measurement fails):\n" +
             (md ? "\n" : "");
      out += render_capped(missing_table(in, g), format, key + "missing");
    }
    if (!g.unstable.empty())
      out += std::string(md ? "\n" : "") +
             "unstable, not judged (below the median by less than its own measurement's spread: measure again; rule "
             "\"split, majority\": on the worse side of a split that is the group's majority, which its peers cannot "
             "judge):\n" +
             (md ? "\n" : "") + render_capped(findings_table(in, g, g.unstable, "group median", true), format, key + "unstable");
    if (!g.hosts_below.empty())
      out += std::string(md ? "\n" : "") +
             "hosts below the group's other hosts (each host's median over its GPUs here, against the hosts' median "
             "by the same rule):\n" +
             (md ? "\n" : "") + render_capped(hosts_below_table(in, g), format, key + "hosts_below");
    if (g.outliers.empty()) continue;
    out += std::string(md ? "\n" : "") + "outliers (worst first):\n" + (md ? "\n" : "");
    out += render_capped(findings_table(in, g, g.outliers), format, key + "outliers");
  }
  if (const auto node_only = node_findings_not_named(in, groups); !node_only.empty())
    out += std::string("\n") + (md ? "### " : "") + "below their node's peers only: " +
           std::to_string(node_only.size()) +
           " GPU(s) `measure --all-gpus` named below their node's median that the fleet, judging them against "
           "their group's median, does not name (their node's other GPUs may be faster than the fleet's)\n" +
           (md ? "\n" : "") + render_capped(node_findings_table(in, groups), format, "below_node_peers_only");
  if (!in.unfinished.empty())
    out += std::string("\n") + (md ? "### " : "") + "unfinished: " + std::to_string(in.unfinished.size()) +
           " GPU(s) a node summary lists without a finished profile (not judged: measure them again)\n" +
           (md ? "\n" : "") + render_capped(unfinished_table(in), format, "unfinished");
  if (hosts) {
    out += std::string("\n") + (md ? "### " : "") + "hosts: " + std::to_string(hosts->expected) + " listed in " +
           hosts->list + ", " + std::to_string(hosts->missing.size()) +
           " with nothing read from it (no profile, no node summary: not judged)" +
           (hosts->not_listed.empty() ? std::string()
                                      : ", " + std::to_string(hosts->not_listed.size()) + " read and not listed") +
           "\n";
    const auto names = [&](const char* what, const std::vector<std::string>& list) {
      if (list.empty()) return;
      out += std::string(md ? "\n- " : "") + what + ":";
      for (const std::string& h : list) out += " " + printable_text(h);
      out += "\n";
    };
    names("missing", hosts->missing);
    names("not listed", hosts->not_listed);
  }
  out += std::string("\n") + (md ? "### " : "") + "health: " + std::to_string(health.faults.size()) +
         " GPU(s) with a failing check (qualify's health checks on each profile's health section, its measurement "
         "errors, and its ceilings against the datasheet fractions and limits; rules: " +
         printable_text(health.rules_origin) + ")\n";
  if (!health.faults.empty()) {  // a fault on every node (a 500 W limit fleet-wide) is its first GPUs and a count
    FleetHealth first = health;
    if (first.faults.size() > kListed) first.faults.resize(kListed);
    out += (md ? "\n" : "") + render(health_table(in, first), format);
    if (health.faults.size() > kListed)
      out += std::string(md ? "\n" : "") + "... and " + std::to_string(health.faults.size() - kListed) +
             " more GPU(s) with a failing check (`--format json` lists every one: health.faults)\n";
  }
  if (health.incomplete > 0)
    out += std::string(md && !health.faults.empty() ? "\n" : "") + std::to_string(health.incomplete) + " profile(s) could not be judged in full (no health section, or a "
           "check that could not run): `ceilings qualify` on each says why\n";
  for (const std::string& why : health.rules_unheld) out += std::string(md ? "- " : "") + printable_text(why) + "\n";
  if (!health.other_gpu.empty()) {
    out += std::to_string(health.other_gpu.size()) + " profile(s) whose health section was recorded on another GPU "
           "(files mixed up: its own health is not known; measure it again):";
    out += paths_of(in, health.other_gpu, "health.other_gpu") + "\n";
  }
  if (!health.other_nvml.empty()) {
    out += std::to_string(health.other_nvml.size()) + " profile(s) whose health was read through another NVML than "
           "the driver's (CEILINGS_NVML_LIBRARY: its readings are that library's, not the GPU's):";
    out += paths_of(in, health.other_nvml, "health.other_nvml") + "\n";
  }
  if (!health.cut_short.empty()) {
    out += std::to_string(health.cut_short.size()) + " profile(s) of a run a timeout or an interrupt cut short (the "
           "cases it stopped are not measured: measure again without the limit):";
    out += paths_of(in, health.cut_short, "health.cut_short") + "\n";
  }
  out += std::string("\n") + (md ? "- " : "") + rule_text;
  return out;
}

CEILINGS_SUBCOMMAND("fleet", "Compare many profiles: group by fingerprint, name GPUs below their peers",
                    ([](CLI::App& app) -> cli::Runner {
  auto o = std::make_shared<FleetOptions>();
  app.add_option("paths", o->paths, "Profile files, or directories searched for *.profile.json")->required();
  app.add_option("--format", o->format, "table | markdown | csv (one row per finding) | json (everything)")
      ->capture_default_str();
  app.add_option("--expect-hosts", o->expect_hosts,
                 "A file naming the hosts the job ran on, one a line (scontrol show hostnames): a host with nothing "
                 "read from it is named, and the run is incomplete")
      ->check(cli::non_empty());
  app.add_option("--rules", o->rules,
                 "Rules file (ceilings.rules/1 JSON, as qualify takes) for each GPU's health checks, datasheet "
                 "fractions and ceiling limits; default: qualify's built-in rules");
  auto* write_baseline = app.add_option("--write-baseline", o->write_baseline,
                                        "Write the group medians as a profile that `ceilings qualify --baseline` "
                                        "accepts (an existing file there must be a fleet baseline: it is replaced)");
  app.add_option("--baseline-group", o->baseline_group, "Which group (1-based, as printed) the baseline comes from "
                                                          "(default: the largest)")
      ->check(cli::positive_number())
      ->needs(write_baseline);
  app.add_option("--z", o->z,
                 "The least z threshold: an outlier when the modified z-score is below minus the group's threshold")
      ->capture_default_str()
      ->check(cli::positive_number());
  app.add_option("--family-alpha", o->family_alpha,
                 "The chance that a group of plain normal noise has any GPU named by the z-score: raises the z "
                 "threshold with the group's comparisons")
      ->capture_default_str()
      ->check(cli::number_between(0, 1));
  app.add_option("--margin", o->margin_pct, "Outlier when more than this many percent below the group median")
      ->capture_default_str()
      ->check(cli::number_in(0, 100));
  app.add_option("--min-deficit", o->min_deficit_pct,
                 "The z-score names a GPU only when it is also at least this many percent below the median")
      ->capture_default_str()
      ->check(cli::number_in(0, 100));
  return [o] {
    const Format format = parse_format(o->format);
    OutlierRule rule;
    rule.z_threshold = o->z;
    rule.family_alpha = o->family_alpha;
    rule.margin = o->margin_pct / 100.0;
    rule.min_deficit = o->min_deficit_pct / 100.0;
    const bool want_baseline = !o->write_baseline.empty();
    if (want_baseline) check_output_path(o->write_baseline, "--write-baseline");
    // Read first: a list that names no host is exit 2 before any profile is read.
    std::vector<std::string> expected_hosts;
    if (!o->expect_hosts.empty()) expected_hosts = read_host_list(o->expect_hosts);
    const Rules rules = o->rules.empty() ? default_rules() : read_rules(o->rules);
    const FleetInput in = load_fleet(o->paths);
    std::optional<HostCheck> hosts;
    if (!o->expect_hosts.empty()) hosts = check_hosts(in, o->expect_hosts, expected_hosts);
    // No profile at all is a usage error (a wrong directory), unless the job's hosts or node summaries say what
    // should have been there: then it is a run with nothing finished, reported as such (incomplete; with
    // --write-baseline, the report and then exit 2: there is no baseline to write).
    if (in.members.empty() && !hosts && in.node_summaries == 0) {
      std::string why = in.files == 0 ? "no *.profile.json found" : "no readable profile";
      for (const FleetSkip& s : in.skipped) why += "\n  skipped " + printable_text(s.path + ": " + s.reason);
      for (const FleetSkip& s : in.baselines) why += "\n  set aside " + printable_text(s.path + ": " + s.reason);
      throw InputError(why);
    }
    if (want_baseline) {
      // Not over a profile of a GPU (one read, one superseded by a newer run) nor a file it could not read;
      // a baseline it set aside may be replaced (rewriting the baseline in the directory it scans).
      std::vector<std::string> inputs;
      for (const FleetMember& m : in.members) inputs.push_back(m.path);
      for (const FleetSuperseded& s : in.superseded) inputs.push_back(s.path);
      for (const FleetSkip& s : in.skipped) inputs.push_back(s.path);
      if (!o->rules.empty()) inputs.push_back(o->rules);
      check_output_path(o->write_baseline, "--write-baseline", inputs);
      check_replaceable_baseline(o->write_baseline);
    }
    const std::vector<FleetGroup> groups = analyze_fleet(in.members, rule);
    const FleetFindings found = count_findings(groups);
    const FleetHealth health = fleet_health(in.members, rules);
    if (want_baseline && o->baseline_group > static_cast<int>(groups.size()))  // said before the report, not after it
      throw InputError("--baseline-group " + std::to_string(o->baseline_group) + ": there are only " +
                       std::to_string(groups.size()) + " group(s)");
    // A baseline this fleet cannot give is said after the report, which is printed as without --write-baseline:
    // a batch job's `--format json --write-baseline F > fleet.json` keeps its report in the very cases the report
    // is for (a model configured two ways, a group too small). Nothing is written to F; the exit code is 2.
    std::string no_baseline;
    const std::size_t gi = o->baseline_group > 0 ? static_cast<std::size_t>(o->baseline_group - 1) : 0;
    if (!want_baseline) {
      // no baseline asked for
    } else if (in.members.empty()) {  // a job's hosts or node summaries, and no profile
      no_baseline = "no readable profile to take the medians of";
    } else if (o->baseline_group == 0 && groups.size() > 1 && groups[1].members.size() == groups[0].members.size()) {
      // The largest group by default; two as large (a model set up two ways in equal numbers, an older and a newer
      // driver) leave the choice to the user, not to the labels' alphabet.
      no_baseline = "groups 1 (" + groups[0].fingerprint.label() + ") and 2 (" + groups[1].fingerprint.label() +
                    ") are the largest alike, " + std::to_string(groups[0].members.size()) +
                    " profiles each: say which the baseline comes from with --baseline-group";
    } else if (groups[gi].members.size() < rule.min_members) {
      // A median of one or two GPUs is their values: a slow one would become the reference its peers meet.
      no_baseline = "group " + std::to_string(gi + 1) + " (" + groups[gi].fingerprint.label() + ") has " +
                    std::to_string(groups[gi].members.size()) + " profile(s); a baseline is the median of at least " +
                    std::to_string(rule.min_members) +
                    " GPUs, where one slow GPU cannot set it (to judge against one GPU, pass its profile to "
                    "`ceilings qualify --baseline`)";
    }
    std::optional<Profile> baseline;
    if (want_baseline && no_baseline.empty()) {
      try {
        // Not the median of GPUs the fleet found something against: its health faults, the runs cut short and
        // those whose health is another GPU's are left out with the group's outliers (fleet_baseline).
        std::map<std::size_t, std::string> excluded;
        // A fault of the GPU itself (its health section: ECC, XIDs, links) takes it out whole. A ceiling below a
        // datasheet fraction or a limit does not: a fleet below a fraction alike (a power cap) keeps its baseline,
        // and a GPU slow against its peers is an outlier, left out as one.
        for (const FleetHealthFault& f : health.faults) {
          std::string failed;
          for (const Check& c : f.failed)
            if (a_health_check(c)) failed += (failed.empty() ? "" : ", ") + c.rule;
          if (!failed.empty()) excluded.emplace(f.member, "a health fault (" + failed + ")");
        }
        // A host below the group's other hosts: its GPUs are what it is found for (review 111).
        for (const HostOutlier& h : groups[gi].hosts_below)
          for (std::size_t m : h.members)
            excluded.emplace(groups[gi].members[m], "its host, " + h.host + ", is below the group's other hosts");
        for (std::size_t m : health.cut_short) excluded.emplace(m, "cut short by a timeout or an interrupt");
        for (std::size_t m : health.other_gpu) excluded.emplace(m, "its health section is another GPU's");
        baseline = fleet_baseline(groups[gi], in.members, rule.min_members, excluded);  // may find too few
        // Written before the report, so that a file that cannot be written is said in it, as the exit code (2) the
        // process then ends with (review 111: the report said exit 3).
        write_file_atomic(o->write_baseline, profile_to_json(*baseline).dump(2) + "\n");
      } catch (const Error& e) {  // too few to take the medians of, or a file that could not be written
        no_baseline = e.what();
        baseline.reset();
      }
    }

    if (format == Format::kJson) {
      json doc = fleet_to_json(in, groups, rule, health, hosts);
      // The verdict as the exit code gives it, and every GPU with a finding, each once (review 108: a script had to
      // merge six lists to tell a pass from an incomplete run).
      const int code = fleet_exit_code(in, found, health, hosts);
      doc["verdict"] = code == kExitFailed ? "fail" : code == kExitIncomplete ? "incomplete" : "pass";
      // The process's own: 2 where --write-baseline could write nothing (stderr says why), whatever the verdict.
      doc["exit_code"] = no_baseline.empty() ? code : static_cast<int>(kExitBadInput);
      json with = json::array();
      for (std::size_t m : gpus_with_a_finding(groups, health)) with.push_back(gpu_identity(in.members[m]));
      doc["gpus_with_a_finding"] = std::move(with);
      // A file name that is not UTF-8 (a byte the walk found) as U+FFFD, not nlohmann's type_error in place of the report.
      std::cout << doc.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    }
    else if (format == Format::kCsv)
      std::cout << render(all_findings_table(in, groups, health, hosts), Format::kCsv);
    else
      std::cout << render_text(in, groups, rule, health, hosts, format, !no_baseline.empty());
    for (const FleetSkip& s : in.skipped)
      if (format == Format::kJson || format == Format::kCsv)
        std::cerr << "ceilings fleet: skipped " << printable_text(s.path + ": " + s.reason) << "\n";

    if (!no_baseline.empty()) {
      std::cout.flush();  // the report first, then why no baseline
      throw InputError("--write-baseline: nothing written to '" + o->write_baseline +
                       "' (the report was printed in full): " + no_baseline);
    }
    if (baseline) {
      std::cerr << "ceilings fleet: baseline of group " << gi + 1 << " (" << groups[gi].fingerprint.label() << ", "
                << groups[gi].members.size() << " profile(s); the medians of "
                << baseline->raw["baseline"]["profiles"].get<std::size_t>()
                << " with nothing found against them) written to " << o->write_baseline << "\n";
    }
    return fleet_exit_code(in, found, health, hosts);
  };
}));

}  // namespace
