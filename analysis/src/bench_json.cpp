// Google Benchmark JSON (from ceilings-bench) -> ceilings.profile/1.
#include "ceilings/bench_json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include "ceilings/clock_events.hpp"
#include "ceilings/datasheet.hpp"
#include "ceilings/gemm_plan.hpp"
#include "ceilings/json_fields.hpp"
#include "ceilings/stats.hpp"
#include "ceilings/timeline.hpp"
#include "ceilings/units.hpp"

namespace ceilings {

namespace {

struct ValueCounter {
  const char* counter;
  const char* unit;
};
constexpr ValueCounter kValueCounters[] = {
    {"bytes_per_second", "B/s"}, {"flop_per_second", "FLOP/s"}, {"op_per_second", "OP/s"}, {"latency_s", "s"}};

const std::set<std::string>& measurement_counters() {
  static const std::set<std::string> names{"cv",          "samples",      "verified", "throttled", "throttle_reasons",
                                           "telemetry",   "sm_clock_hz",  "mem_clock_hz", "power_w", "temp_c",
                                           "candidate",   "stopped_by"};
  return names;
}


struct Parsed {
  std::string ceiling;               // family.variant
  std::string run_name;              // without /manual_time, /iterations:N, /repeats:N
  json args = json::object();        // arg:value parts
};

Parsed parse_name(const std::string& full, const std::string& where) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= full.size()) {
    const auto slash = full.find('/', start);
    parts.push_back(full.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (parts.size() < 2 || parts[0].empty() || parts[1].empty() || parts[1].find(':') != std::string::npos)
    throw InputError(where + ": benchmark name '" + full + "' is not of the form family/variant[/arg:value...]");
  if (!is_identifier(parts[0]) || !is_identifier(parts[1]))
    throw InputError(where + ": benchmark name '" + excerpt(full) + "': family and variant must be lower-case identifiers");
  Parsed p;
  p.ceiling = parts[0] + "." + parts[1];
  p.run_name = parts[0] + "/" + parts[1];
  for (std::size_t i = 2; i < parts.size(); ++i) {
    const std::string& s = parts[i];
    if (s == "manual_time" || s == "real_time" || s.rfind("iterations:", 0) == 0 || s.rfind("repeats:", 0) == 0 ||
        s.rfind("min_time:", 0) == 0)
      continue;
    p.run_name += "/" + s;
    const auto colon = s.find(':');
    if (colon == std::string::npos) {
      p.args[s] = true;
      continue;
    }
    const std::string key = s.substr(0, colon), value = s.substr(colon + 1);
    char* end = nullptr;
    const double d = std::strtod(value.c_str(), &end);
    if (end && *end == '\0' && !value.empty())
      p.args[key] = d;
    else
      p.args[key] = value;
  }
  return p;
}

json parse_context_json(const Fields& context, const char* key) {
  const std::string text = context.string(key);
  return parse_json_text(text, "context." + std::string(key));
}

struct Candidate {
  Ceiling ceiling;
  std::string run_name;
};

// The faster one; between equal values the steadier (lower cv), then the name, never the order they came in.
bool better(const Candidate& a, const Candidate& b) {
  if (a.ceiling.value != b.ceiling.value)
    return higher_is_better(a.ceiling.unit) ? a.ceiling.value > b.ceiling.value : a.ceiling.value < b.ceiling.value;
  if (a.ceiling.cv != b.ceiling.cv) return a.ceiling.cv < b.ceiling.cv;
  return a.run_name < b.run_name;
}

// GEMM ceilings in one order (the type table's) whatever order ceilings-bench measured them in (it runs the
// most wanted types first): the GEMM entries' own slots of `items` are refilled in gemm_ceiling_rank order,
// every other entry stays where it is.
template <class T, class Name>
void order_gemm_ceilings(std::vector<T>& items, Name name) {
  std::vector<std::size_t> slots;
  std::vector<T> gemm;
  for (std::size_t i = 0; i < items.size(); ++i)
    if (gemm::gemm_ceiling_rank(name(items[i])) >= 0) {
      slots.push_back(i);
      gemm.push_back(items[i]);
    }
  std::stable_sort(gemm.begin(), gemm.end(), [&](const T& a, const T& b) {
    return gemm::gemm_ceiling_rank(name(a)) < gemm::gemm_ceiling_rank(name(b));
  });
  for (std::size_t j = 0; j < slots.size(); ++j) items[slots[j]] = std::move(gemm[j]);
}

}  // namespace

const std::set<std::string>& benchmark_keys() {
  static const std::set<std::string> keys{"name",          "family_index", "per_family_instance_index",
                                          "run_name",      "run_type",     "repetitions",
                                          "repetition_index", "threads",   "iterations",
                                          "real_time",     "cpu_time",     "time_unit",
                                          "label",         "error_occurred", "error_message",
                                          "aggregate_name", "aggregate_unit", "skipped"};
  return keys;
}

json parse_benchmark_json_text(const std::string& text, const std::string& what) {
  // Google Benchmark writes a non-finite double as the bare token NaN, Infinity or -Infinity, which
  // JSON has not: outside strings those become null (no valid JSON token contains these letters).
  static const std::string tokens[] = {"-Infinity", "Infinity", "-NaN", "NaN"};
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size();) {
    const char ch = text[i];
    if (in_string) {
      out += ch;
      if (ch == '\\' && i + 1 < text.size()) {
        out += text[i + 1];
        i += 2;
        continue;
      }
      in_string = ch != '"';
      ++i;
      continue;
    }
    if (ch == '"') in_string = true;
    bool replaced = false;
    for (const std::string& t : tokens)
      if (text.compare(i, t.size(), t) == 0) {
        out += "null";
        i += t.size();
        replaced = true;
        break;
      }
    if (!replaced) {
      out += ch;
      ++i;
    }
  }
  // Google Benchmark writes its own keys (threads, iterations, ...) and then every counter: a counter of the
  // same name repeats the key. The counter, written last, is the value (as json::parse always read it).
  return parse_json_text(out, what, DuplicateKeys::kLastWins);
}

json read_benchmark_json_file(const std::string& path) {
  return parse_benchmark_json_text(read_text_file(path), "'" + path + "'");
}

std::string exact_benchmark_filter(const std::vector<std::string>& names) {
  std::string re = "^(";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) re += "|";
    for (char ch : names[i]) {
      if (ch != '\0' && std::strchr(".[\\()*+?{|^$", ch)) re += '\\';
      re += ch;
    }
  }
  return re + ")$";
}

namespace {
// UUIDs compare without their "GPU-"/"MIG-" prefix: an instance NVML failed to name in one family is the same; an
// empty one says nothing.
bool same_uuid(const std::string& x, const std::string& y) {
  return x.empty() || y.empty() || x.substr(std::min<std::size_t>(4, x.size())) == y.substr(std::min<std::size_t>(4, y.size()));
}

// The device record of a bench output, or null where it has none that parses into a device with a UUID.
json device_context(const json& output) {
  if (!output.is_object() || !output.contains("context") || !output["context"].is_object() ||
      !output["context"].contains(kContextDevice) || !output["context"][kContextDevice].is_string())
    return nullptr;
  try {
    const json d = parse_json_text(output["context"][kContextDevice].get<std::string>(), "context");
    return d.is_object() && d.contains("uuid") && d["uuid"].is_string() ? d : json();
  } catch (const InputError&) {
    return nullptr;
  }
}
}  // namespace

bool has_device_context(const json& output) { return !device_context(output).is_null(); }

std::string other_device(const json& first, const json& later) {
  const json a = device_context(first), b = device_context(later);
  if (!a.is_object() || !b.is_object()) return "";
  auto text = [](const json& d, const char* key) {
    return d.contains(key) && d[key].is_string() ? printable_text(d[key].get<std::string>()) : std::string();
  };
  const std::string ua = text(a, "uuid"), ub = text(b, "uuid"), pa = text(a, "pci_bus_id"), pb = text(b, "pci_bus_id");
  if (same_uuid(ua, ub) && (pa.empty() || pb.empty() || pa == pb)) return "";
  return ub + " (bus " + pb + "), where the first family measured " + ua + " (bus " + pa + ")";
}

std::string unlisted_device(const json& output, const std::string& pci_bus_id, const std::string& uuid) {
  const json d = device_context(output);
  if (!d.is_object()) return "";
  const std::string bus = d.contains("pci_bus_id") && d["pci_bus_id"].is_string()
                              ? printable_text(d["pci_bus_id"].get<std::string>())
                              : std::string();
  const std::string measured = printable_text(d["uuid"].get<std::string>());
  const bool other_bus = !bus.empty() && !pci_bus_id.empty() && bus != pci_bus_id;
  // Its UUID too (review 99: another GPU on the listed bus, a MIG instance's sibling, was filed with exit 0).
  if (!other_bus && same_uuid(measured, uuid)) return "";
  return measured + " (bus " + bus + "), not the GPU listed at its index (" + printable_text(uuid) + ", bus " +
         printable_text(pci_bus_id) + ")";
}

CaseName case_name(const std::string& benchmark_name) {
  try {
    const Parsed p = parse_name(benchmark_name, "case");
    return {p.ceiling, p.run_name};
  } catch (const InputError&) {
    return {benchmark_name, ""};
  }
}

Profile profile_from_benchmark_json(const json& gb) {
  const Fields doc(gb, "");
  const Fields context = doc.object("context");
  if (!context.has(kContextDevice))
    throw InputError("benchmark output has no context." + std::string(kContextDevice) +
                     ": it was not written by ceilings-bench");

  // The device fingerprint and host facts are written by ceilings-bench in profile form already. The
  // profile is created now, in UTC (Google Benchmark's context.date is local time with an offset).
  json skeleton = {{"schema", kProfileSchema},
                   {"created", utc_now_iso8601()},
                   {"device", parse_context_json(context, kContextDevice)},
                   {"ceilings", json::array()}};
  if (context.has(kContextHost)) skeleton["host"] = parse_context_json(context, kContextHost);
  // A PCIe reading no link has (NVML answering garbage) is "could not be read", not a reason to lose the
  // whole measurement when the profile reader refuses it.
  if (json& dev = skeleton["device"]; dev.is_object() && dev.contains("pcie") && dev["pcie"].is_object())
    for (auto& [key, v] : dev["pcie"].items()) {
      const bool gen = key.find("gen") != std::string::npos;
      const bool ok = v.is_number_integer() && (gen ? valid_pcie_gen(v.get<int>()) : valid_pcie_width(v.get<int>()));
      if (!v.is_null() && !ok) v = nullptr;
    }
  // So is a power limit or maximum clock no GPU has (NVML's 0xFFFFFFFF "not available" read as a value).
  if (json& dev = skeleton["device"]; dev.is_object()) {
    auto plausible_or_null = [](json& v, const char* unit) {
      if (v.is_number() && (!(v.get<double>() > 0) || !implausible_limit(v.get<double>(), unit).empty())) v = nullptr;
    };
    if (dev.contains("power_limit_w")) plausible_or_null(dev["power_limit_w"], "W");
    if (dev.contains("clocks_max_hz") && dev["clocks_max_hz"].is_object())
      for (auto& [key, v] : dev["clocks_max_hz"].items()) plausible_or_null(v, "Hz");
  }
  skeleton["tool"] = {{"version", context.optional_string(kContextVersion).value_or("")},
                      {"git", context.optional_string(kContextGit).value_or("")}};
  if (const auto code = context.optional_string(kContextMeasurementCode)) skeleton["tool"]["measurement_code"] = *code;
  Profile profile = profile_from_json(skeleton, "benchmark context");
  // A quick pass is another measurement than a full one (fewer sizes, shapes and samples): recorded, so that qualify
  // and fleet do not set one against the other as alike (review 98).
  if (context.has(kContextOptions)) {
    const json options = parse_context_json(context, kContextOptions);
    if (options.is_object() && options.contains("quick") && options["quick"].is_boolean())
      profile.quick = options["quick"].get<bool>();
  }
  const GpuSpec* spec = find_gpu(profile.device.name);

  std::map<std::string, std::vector<Candidate>> by_ceiling;
  std::map<std::string, std::vector<Candidate>> ref_candidates;  // gemm.<type> -> its _ref8192 cases
  std::map<std::string, json> sweeps;  // ceiling -> sweep points that are not candidates
  std::vector<std::string> order;      // ceilings in the order the bench ran them
  const json& benchmarks = doc.array("benchmarks");
  for (std::size_t i = 0; i < benchmarks.size(); ++i) {
    const std::string where = "benchmarks[" + std::to_string(i) + "]";
    // One unusable entry is an error of its own case; the rest of the run still counts.
    std::string subject = where;
    try {
      const Fields b(benchmarks[i], where);
      // Google Benchmark's aggregates (_mean, _median, _stddev of --benchmark_repetitions): by run_type, or by
      // aggregate_name where a Google Benchmark older than 1.5 wrote no run_type
      if (b.optional_string("run_type").value_or("iteration") != "iteration" || benchmarks[i].contains("aggregate_name"))
        continue;
      const std::string name = b.string("name");
      subject = name;
      const Parsed parsed = parse_name(name, where);
      subject = parsed.ceiling;
      if (std::find(order.begin(), order.end(), parsed.ceiling) == order.end()) order.push_back(parsed.ceiling);

      // Google Benchmark 1.8's SkipWithMessage ("skipped"/"skip_message"; SkipWithError is still
      // "error_occurred"/"error_message"): a case that chose not to run, with its reason.
      if (b.optional_boolean("skipped").value_or(false)) {
        profile.skipped.push_back(
            {parsed.ceiling, b.optional_string("skip_message").value_or("skipped") + " [" + parsed.run_name + "]"});
        continue;
      }
      const bool failed = b.optional_boolean("error_occurred").value_or(false);
      if (failed) {
        const std::string message = b.optional_string("error_message").value_or("failed without a message");
        const std::string prefix = "unsupported:";
        if (message.rfind(prefix, 0) == 0) {
          std::string reason = message.substr(prefix.size());
          reason.erase(0, reason.find_first_not_of(' '));
          profile.skipped.push_back({parsed.ceiling, reason + " [" + parsed.run_name + "]"});
        } else {
          profile.errors.push_back({parsed.ceiling, message + " [" + parsed.run_name + "]"});
        }
        continue;
      }

      Candidate cand;
      Ceiling& c = cand.ceiling;
      cand.run_name = parsed.run_name;
      c.name = parsed.ceiling;
      // Google Benchmark writes a non-finite counter as bare NaN or Infinity, which is read as null: a number the
      // result needs that is null was not finite, not missing.
      auto not_finite = [&](const char* key) {
        if (benchmarks[i].contains(key) && benchmarks[i][key].is_null())
          b.fail(key, "was NaN or Infinity in Google Benchmark's output: the measurement gave no finite number");
      };
      const char* value_key = nullptr;
      for (const ValueCounter& vc : kValueCounters) not_finite(vc.counter);
      for (const ValueCounter& vc : kValueCounters)
        if (b.has(vc.counter)) {
          if (value_key) b.fail(vc.counter, "a benchmark reports exactly one value counter");
          value_key = vc.counter;
          c.unit = vc.unit;
        }
      if (!value_key)
        throw InputError(where + " (" + name +
                         "): no value counter (bytes_per_second, flop_per_second, op_per_second or latency_s)");
      for (const char* key : {"cv", "samples", "verified", "throttled", "telemetry", "throttle_reasons", "stopped_by"})
        not_finite(key);
      c.value = b.number(value_key);
      if (c.value <= 0) b.fail(value_key, "must be positive");
      c.cv = b.number("cv");
      c.samples = b.integer("samples", 2);  // a cv needs two (ceilings-bench never takes fewer)
      c.verified = b.number("verified") == 1.0;
      if (!c.verified) b.fail("verified", "the benchmark did not verify its output; its number is not a result");
      c.throttled = b.optional_number("throttled").value_or(0) != 0;
      c.telemetry.available = b.optional_number("telemetry").value_or(0) != 0;
      if (c.telemetry.available) {
        c.telemetry.sm_clock_hz = b.number("sm_clock_hz");
        c.telemetry.mem_clock_hz = b.number("mem_clock_hz");
        c.telemetry.power_w = b.number("power_w");
        c.telemetry.temp_c = b.number("temp_c", -273.15);
      }
      c.detail = {{"benchmark", parsed.run_name}};
      for (const auto& [k, v] : parsed.args.items()) {
        // An argument named like what the converter writes would overwrite the case's provenance
        if (k == "benchmark" || k == "candidates" || k == "variants")
          b.fail("name", "its argument '" + k + "' has a name the profile's detail uses for something else");
        c.detail[k] = v;
      }
      if (b.has("throttle_reasons")) {
        const double mask = b.number("throttle_reasons");
        const auto bits = clock_events::from_number(mask);
        if (!bits)
          b.fail("throttle_reasons", json(mask).dump() + " is not a clock-event bit mask (a whole number, 0 to 2^64)");
        c.detail["throttle_reasons"] = *bits;
      }
      if (b.has("stopped_by")) {
        const double code = b.number("stopped_by");
        const auto stop = sampling_stop_name(code);
        if (!stop)
          b.fail("stopped_by", json(code).dump() +
                                   " is not why sampling stopped (1 cv converged, 2 sample cap, 3 time budget, 4 window)");
        c.detail["stopped_by"] = *stop;
      }
      if (auto label = b.optional_string("label"); label && !label->empty()) c.detail["label"] = printable_text(*label);
      json nonfinite = json::array();  // counters Google Benchmark wrote as NaN or Infinity (read as null)
      std::map<int, json> timeline;     // timeline_<k>_<field> counters, one object per bin
      for (const auto& [k, v] : benchmarks[i].items()) {
        if (benchmark_keys().count(k) || measurement_counters().count(k) || k == value_key) continue;
        if (v.is_null()) nonfinite.push_back(k);
        if (!v.is_number()) continue;
        if (const auto bin = parse_timeline_counter(k)) {
          timeline[bin->first][bin->second] = v;
          continue;
        }
        c.detail[k] = v;
      }
      if (!nonfinite.empty()) c.detail["nonfinite_counters"] = nonfinite;
      if (!timeline.empty()) {
        c.detail["timeline"] = json::array();
        for (auto& [k, bin] : timeline) c.detail["timeline"].push_back(std::move(bin));
      }
      // Counter names and argument values are shown and stored: text the profile reader would refuse (a control
      // character) makes the case unusable here, not the written profile unreadable.
      require_plain_strings(c.detail, where + ".detail");
      // A value no GPU reaches (a timing fault) or a detail the reader refuses is this case's error, not a
      // profile its reader rejects; a sweep point's too, as it is shown beside its ceiling.
      check_ceiling(c, where + " (" + parsed.run_name + ")");
      check_ceiling_detail(c, where + " (" + parsed.run_name + ").", profile.gpus_visible);
      if (b.optional_number("candidate").value_or(1) == 0) {
        json point = c.detail;
        point["value"] = c.value;
        point["unit"] = c.unit;
        point["cv"] = c.cv;
        sweeps[c.name].push_back(point);
        continue;
      }
      if (spec) c.datasheet = datasheet_value(*spec, c.name, c.detail);
      // gemm/<type>_ref8192 also competes for gemm.<type> (where the search gave that ceiling a number).
      const std::string ref_suffix = "_ref8192";
      if (c.name.rfind("gemm.", 0) == 0 && c.name.size() > ref_suffix.size() &&
          c.name.compare(c.name.size() - ref_suffix.size(), ref_suffix.size(), ref_suffix) == 0) {
        Candidate as_search = cand;
        as_search.ceiling.name = c.name.substr(0, c.name.size() - ref_suffix.size());
        ref_candidates[as_search.ceiling.name].push_back(std::move(as_search));
      }
      by_ceiling[c.name].push_back(std::move(cand));
    } catch (const InputError& e) {
      profile.errors.push_back({subject, std::string("unusable benchmark entry: ") + e.what()});
    }
  }

  for (auto& [name, refs] : ref_candidates) {
    auto it = by_ceiling.find(name);
    if (it == by_ceiling.end()) continue;  // the search failed or was skipped: its own entry says why
    for (auto& r : refs) it->second.push_back(std::move(r));
  }
  order_gemm_ceilings(order, [](const std::string& n) { return n; });
  for (const std::string& name : order) {
    auto it = by_ceiling.find(name);
    if (it == by_ceiling.end()) {
      // A pure sweep family has no ceiling: say so (its points are in the raw JSON). Not where the
      // ceiling's own case failed or was skipped: its entry says why.
      auto named = [&](const Skipped& e) { return e.name == name; };
      const bool said = std::any_of(profile.errors.begin(), profile.errors.end(), named) ||
                        std::any_of(profile.skipped.begin(), profile.skipped.end(), named);
      if (sweeps.count(name) && !said)
        profile.skipped.push_back({name, "sweep only: no point was marked as a ceiling candidate"});
      continue;
    }
    std::vector<Candidate>& cands = it->second;
    // Candidates compete on their numbers: one in another unit than most of them report (a family this build
    // gives no unit) is its own case's error.
    std::map<std::string, std::size_t> units;
    for (const Candidate& cand : cands) ++units[cand.ceiling.unit];
    std::string unit = cands.front().ceiling.unit;  // the most cases' unit (ties: the first case's)
    for (const auto& [u, n] : units)
      if (n > units[unit]) unit = u;
    for (const Candidate& cand : cands)
      if (cand.ceiling.unit != unit)
        profile.errors.push_back({name, "unusable benchmark entry: reports " + cand.ceiling.unit + " where most of " +
                                            name + "'s cases report " + unit + " [" + cand.run_name + "]"});
    cands.erase(std::remove_if(cands.begin(), cands.end(), [&](const Candidate& c) { return c.ceiling.unit != unit; }),
                cands.end());
    // Repetitions of one configuration: its median repetition stands for it; of an even number the worse of the
    // middle two (sorted best first), so the value, cv and telemetry are all one repetition's, never averaged.
    std::map<std::string, std::vector<Candidate>> by_run;
    for (auto& c : cands) by_run[c.run_name].push_back(c);
    std::vector<Candidate> representatives;
    for (auto& [run, reps] : by_run) {
      std::sort(reps.begin(), reps.end(), better);
      representatives.push_back(reps[reps.size() / 2]);
    }
    auto best = std::min_element(representatives.begin(), representatives.end(), better);
    Ceiling winner = best->ceiling;
    winner.detail["candidates"] = representatives.size();
    // Every configuration that competed, best first: what the ceiling beat, and by how much.
    if (representatives.size() > 1) {
      std::stable_sort(representatives.begin(), representatives.end(), better);
      json variants = json::array();
      for (const Candidate& r : representatives)
        variants.push_back({{"benchmark", r.run_name}, {"value", r.ceiling.value}, {"cv", r.ceiling.cv}});
      winner.detail["variants"] = std::move(variants);
    }
    if (sweeps.count(name)) winner.detail["sweep"] = sweeps[name];
    profile.ceilings.push_back(std::move(winner));
  }
  // The PCIe link as the pcie family read it while its copies ran (every case, the sweep points too, so a
  // failed ceiling case still counts): links train down at idle, so the fingerprint's generation at start
  // may be low and the best loaded reading raises it; the width is the narrowest reading, the start's
  // included (a link that lost lanes during the run is narrow).
  auto link_reading = [&](const json& detail) {
    // A reading that is no generation or width a link has (0: NVML could not read it) is not one.
    auto read = [&](const char* key, bool (*valid)(int)) -> std::optional<int> {
      if (!detail.is_object() || !detail.contains(key) || !detail[key].is_number()) return std::nullopt;
      const double d = detail[key].get<double>();
      if (!(d >= 1 && d <= 64) || std::floor(d) != d || !valid(static_cast<int>(d))) return std::nullopt;
      return static_cast<int>(d);
    };
    // Never past the most the GPU and its slot allow: one reading of generation 7 on a Gen5 slot is no link's
    if (const auto g = read("pcie_gen", valid_pcie_gen);
        g && (!profile.device.pcie.gen || *profile.device.pcie.gen < *g) &&
        (!profile.device.pcie.max_gen || *g <= *profile.device.pcie.max_gen))
      profile.device.pcie.gen = g;
    if (const auto w = read("pcie_width", valid_pcie_width);
        w && (!profile.device.pcie.width || *profile.device.pcie.width > *w))
      profile.device.pcie.width = w;
  };
  for (const Ceiling& c : profile.ceilings)
    if (c.name.rfind("pcie.", 0) == 0) link_reading(c.detail);
  for (const auto& [name, points] : sweeps)
    if (name.rfind("pcie.", 0) == 0)
      for (const json& point : points) link_reading(point);
  // A ceiling that has a number is not also "skipped" just because one variant was unsupported.
  profile.skipped.erase(std::remove_if(profile.skipped.begin(), profile.skipped.end(),
                                       [&](const Skipped& s) { return profile.find(s.name) != nullptr; }),
                        profile.skipped.end());
  // Names and reasons quote the bench's text (a case name, its arguments, a message): kept printable.
  for (auto* list : {&profile.skipped, &profile.errors})
    for (Skipped& s : *list) {
      s.name = printable_text(s.name);
      s.reason = printable_text(s.reason);
    }
  order_gemm_ceilings(profile.skipped, [](const Skipped& x) { return x.name; });
  order_gemm_ceilings(profile.errors, [](const Skipped& x) { return x.name; });
  profile.raw = profile_to_json(profile);
  return profile;
}

}  // namespace ceilings
