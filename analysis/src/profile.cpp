// Reading, validating and writing ceilings.profile/1 documents.
#include "ceilings/profile.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cmath>
#include <csignal>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <mutex>
#include <sstream>

#include "ceilings/clock_events.hpp"
#include "ceilings/datasheet.hpp"
#include "ceilings/health.hpp"
#include "ceilings/units.hpp"

namespace ceilings {

bool cut_short_reason(const std::string& reason) {
  const std::string prefix = kStoppedWhileRunningReason;
  if (reason.rfind(prefix, 0) != 0) return false;
  const std::string why = reason.substr(prefix.size());
  return why.rfind(kTimedOutReason, 0) == 0 || why.rfind(kInterruptedReason, 0) == 0;
}

double Ceiling::median_standard_error() const {
  const double n = static_cast<double>(samples);
  // A fleet baseline's median is of GPUs: its error is their spread (1.4826 MAD, relative) over sqrt(GPUs), not
  // the typical in-run cv it also records.
  if (const auto mad = detail_number("fleet_mad"); mad && *mad >= 0 && value != 0 && samples > 0)
    return 1.2533 * 1.4826 * *mad / std::fabs(value) / std::sqrt(n);
  return samples > 0 ? 1.2533 * spread() / std::sqrt(n) : spread();
}

double Ceiling::spread() const {
  if (const auto r = detail_number("robust_cv"); r && std::isfinite(*r) && *r >= 0) return *r;
  return cv;
}

std::optional<double> Ceiling::detail_number(const std::string& key) const {
  if (!detail.is_object()) return std::nullopt;
  const auto it = detail.find(key);
  if (it == detail.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::uint64_t Ceiling::clock_event_reasons() const {
  return clock_events::from_number(detail_number("throttle_reasons").value_or(0)).value_or(0);
}

std::optional<bool> Ceiling::throttled_known() const {
  // A fleet baseline's ceiling is its members' median: throttled where any member's measurement was.
  if (const auto members = detail_number("fleet_throttled")) return throttled || *members > 0;
  if (throttled || (clock_event_reasons() & clock_events::kSlowdownMask) != 0) return true;
  // The bench records the reasons (throttle_reasons, reason_readings) only where NVML read the GPU.
  if (!telemetry.available && !detail_number("throttle_reasons") && !(detail_number("reason_readings").value_or(0) > 0))
    return std::nullopt;
  return false;
}

const Ceiling* Profile::find(const std::string& name) const {
  for (const Ceiling& c : ceilings)
    if (c.name == name) return &c;
  return nullptr;
}

namespace {

Telemetry read_telemetry(const Fields& c) {
  Telemetry t;
  if (!c.has("telemetry")) return t;
  const json& v = c.raw().at("telemetry");
  if (v.is_string()) {
    if (v.get<std::string>() != "unavailable") c.fail("telemetry", "expected an object or \"unavailable\"");
    return t;
  }
  const Fields f = c.object("telemetry");
  if (f.has("available") && !f.boolean("available")) return t;
  t.available = true;
  t.sm_clock_hz = f.number("sm_clock_hz");
  t.mem_clock_hz = f.number("mem_clock_hz");
  t.power_w = f.number("power_w");
  t.temp_c = f.number("temp_c", -273.15);
  return t;
}

json telemetry_to_json(const Telemetry& t) {
  if (!t.available) return "unavailable";
  return {{"sm_clock_hz", t.sm_clock_hz}, {"mem_clock_hz", t.mem_clock_hz}, {"power_w", t.power_w},
          {"temp_c", t.temp_c}};
}

std::vector<Skipped> read_skipped(const Fields& doc, const std::string& key) {
  std::vector<Skipped> out;
  if (!doc.has(key)) return out;
  const json& arr = doc.array(key);
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const Fields s(arr[i], doc.path_of(key) + "[" + std::to_string(i) + "]");
    // Shown by show, qualify and fleet: no control characters, and a name that says what was not measured.
    Skipped entry{s.name_string("name"), s.name_string("reason")};
    if (entry.name.empty()) s.fail("name", "is empty: an entry names the ceiling or benchmark it is about");
    if (entry.reason.empty()) s.fail("reason", "is empty: an entry says why");
    out.push_back(std::move(entry));
  }
  return out;
}

std::optional<int> optional_int(const Fields& f, const std::string& key) {
  auto v = f.optional_integer(key);
  if (!v) return std::nullopt;
  if (*v < std::numeric_limits<int>::min() || *v > std::numeric_limits<int>::max())  // would wrap, e.g. to a width of 16
    f.fail(key, std::to_string(*v) + " is out of range");
  return static_cast<int>(*v);
}

}  // namespace

namespace {
bool identifier_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }

// Identifiers joined by dots: how many, or 0 when `name` is not of that form.
std::size_t identifier_parts(const std::string& name) {
  std::size_t parts = 0, run = 0;
  for (const char c : name) {
    if (c == '.') {
      if (run == 0) return 0;
      ++parts;
      run = 0;
    } else if (identifier_char(c)) {
      ++run;
    } else {
      return 0;
    }
  }
  return run == 0 ? 0 : parts + 1;
}
}  // namespace

bool is_identifier(const std::string& s) { return identifier_parts(s) == 1; }
bool is_ceiling_name(const std::string& name) { return identifier_parts(name) >= 2; }
bool is_family_variant(const std::string& name) { return identifier_parts(name) == 2; }

std::optional<SampleKey> sample_key(const std::string& key) {
  for (const char* field : {"sample_unit_s", "sample_sm_clock_hz", "sample_clock_reasons"}) {
    const std::string prefix = std::string(field) + "_";
    if (key.rfind(prefix, 0) != 0) continue;
    SampleKey k{field, std::nullopt};
    const std::string n = key.substr(prefix.size());
    if (!n.empty() && n.size() <= 3 && n.find_first_not_of("0123456789") == std::string::npos &&
        (n.size() == 1 || n[0] != '0'))
      k.index = std::stoul(n);
    return k;
  }
  return std::nullopt;
}

bool bench_command_was_quick(const std::string& command) {
  bool quick = false;
  std::istringstream words(command);
  for (std::string w; words >> w;) {
    static const std::string flag = "--ceilings_quick";
    if (w == flag) {
      quick = true;
    } else if (w.rfind(flag + "=", 0) == 0) {  // CLI11's flag values: the last one given stands
      std::string v = w.substr(flag.size() + 1);
      std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      quick = v == "true" || v == "1" || v == "yes" || v == "on" || v == "t" || v == "y" || v == "enable" || v == "+";
    }
  }
  return quick;
}

Profile profile_from_json(const json& document, const std::string& origin) {
  const Fields doc(document, "");
  Profile p;
  // Every section but the ceilings, which are parsed into p.ceilings and written back from there
  // (profile_to_json): a second copy of their details would double what a fleet of profiles holds.
  if (document.is_object()) {
    p.raw = json::object();
    for (const auto& [key, value] : document.items())
      if (key != "ceilings") p.raw[key] = value;
  } else {
    p.raw = document;
  }
  p.schema = doc.string("schema");
  if (p.schema != kProfileSchema)
    doc.fail("schema", "'" + p.schema + "' is not a schema this version reads (expected " + kProfileSchema + ")");
  p.created = doc.string("created");
  // The note is printed above tables and into SVG titles: plain text only, as every name is.
  if (document.contains("note") && document["note"].is_string()) (void)doc.optional_name_string("note");
  if (auto tool = doc.optional_object("tool")) {
    p.tool_version = tool->optional_name_string("version").value_or("");
    p.tool_git = tool->optional_name_string("git").value_or("");
    p.tool_measurement_code = tool->optional_name_string("measurement_code").value_or("");
  }
  if (auto host = doc.optional_object("host")) {
    p.hostname = host->optional_name_string("hostname").value_or("");
    p.cpu = host->optional_name_string("cpu").value_or("");
    p.numa_node = optional_int(*host, "numa_node");
    if (auto n = host->optional_integer("gpus_visible")) {
      if (*n < 1 || *n > 4096) host->fail("gpus_visible", std::to_string(*n) + " is not a number of GPUs (1 to 4096)");
      p.gpus_visible = static_cast<int>(*n);
    }
  }
  if (document.is_object() && document.contains("measure") && document["measure"].is_object()) {
    const Fields m = doc.object("measure");
    if (auto n = m.optional_integer("gpus_measured_together")) {
      if (*n < 1 || *n > 4096)
        m.fail("gpus_measured_together", std::to_string(*n) + " is not a number of GPUs (1 to 4096)");
      p.gpus_measured_together = static_cast<int>(*n);
    }
    p.quick = m.optional_boolean("quick");
    // A profile of a build before measure.quick: its bench command says whether the pass was quick (review 100: an
    // old quick pass read as a full one). Only a quick one is told: without the flag, absent stays absent.
    if (!p.quick)
      if (const auto command = m.optional_string("command"); command && bench_command_was_quick(*command))
        p.quick = true;
  }

  const Fields d = doc.object("device");
  DeviceInfo& dev = p.device;
  // Numbers shown as they are (an int cast turned an index of 2^40 into "device 0"), within what exists.
  auto bounded = [&d](const char* key, std::int64_t least, std::int64_t most, const char* what) {
    const std::int64_t v = d.integer(key, least);
    if (v > most) d.fail(key, std::to_string(v) + " is more than " + what);
    return v;
  };
  dev.index = static_cast<int>(bounded("index", 0, 4095, "a node's GPU count (4096)"));
  dev.name = d.name_string("name");
  dev.uuid = d.name_string("uuid");
  dev.pci_bus_id = d.name_string("pci_bus_id");
  dev.compute_capability = d.name_string("compute_capability");
  // What identifies the GPU (fleet and qualify compare and name GPUs by them) must be there.
  if (dev.name.empty()) d.fail("name", "is empty: the GPU's name, as CUDA reports it");
  if (dev.uuid.empty()) d.fail("uuid", "is empty: the GPU's UUID, as CUDA reports it");
  const std::string& cc = dev.compute_capability;
  const std::size_t dot = cc.find('.');
  const auto digits = [](const std::string& t) {
    return !t.empty() && t.size() <= 3 && t.find_first_not_of("0123456789") == std::string::npos;
  };
  if (dot == std::string::npos || !digits(cc.substr(0, dot)) || !digits(cc.substr(dot + 1)))
    d.fail("compute_capability", "'" + excerpt(cc) + "' is not of the form MAJOR.MINOR (9.0)");
  dev.sm_count = static_cast<int>(bounded("sm_count", 1, 65535, "any GPU's SMs"));
  dev.memory_bytes = static_cast<std::uint64_t>(bounded("memory_bytes", 1, std::int64_t{1} << 50, "1 PiB"));
  dev.l2_bytes = static_cast<std::uint64_t>(bounded("l2_bytes", 0, std::int64_t{1} << 40, "1 TiB"));
  dev.driver = d.optional_name_string("driver").value_or("");
  dev.cuda_runtime = d.optional_name_string("cuda_runtime").value_or("");
  dev.cublas = d.optional_name_string("cublas").value_or("");
  dev.ecc = d.optional_boolean("ecc");
  if (auto clocks = d.optional_object("clocks_max_hz")) {
    dev.max_sm_clock_hz = clocks->optional_number("sm");
    dev.max_mem_clock_hz = clocks->optional_number("memory");
  }
  dev.power_limit_w = d.optional_number("power_limit_w");
  dev.mig = d.optional_boolean("mig");
  dev.confidential_computing = d.optional_boolean("confidential_computing");
  dev.confidential_computing_mode = d.optional_name_string("confidential_computing_mode").value_or("");
  if (!dev.confidential_computing_mode.empty() && !dev.confidential_computing.value_or(false))
    d.fail("confidential_computing_mode", "'" + dev.confidential_computing_mode +
                                              "' is a mode of confidential computing, which the profile does not record "
                                              "as on");
  dev.board_uuid = d.optional_name_string("board_uuid").value_or("");
  if (auto pcie = d.optional_object("pcie")) {
    dev.pcie.gen = optional_int(*pcie, "gen");
    dev.pcie.width = optional_int(*pcie, "width");
    dev.pcie.max_gen = optional_int(*pcie, "max_gen");
    dev.pcie.max_width = optional_int(*pcie, "max_width");
    dev.pcie.gpu_max_gen = optional_int(*pcie, "gpu_max_gen");
  }

  const json& arr = doc.array("ceilings");
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const Fields c(arr[i], "ceilings[" + std::to_string(i) + "]");
    Ceiling out;
    out.name = c.string("name");
    if (!is_ceiling_name(out.name))
      c.fail("name", "'" + excerpt(out.name) + "' is not a ceiling name of the form family.variant");
    out.value = c.number("value");
    out.unit = c.string("unit");
    if (!is_known_unit(out.unit)) c.fail("unit", "unknown unit '" + out.unit + "'");
    out.cv = c.number("cv");
    out.samples = c.integer("samples", 1);
    out.datasheet = c.optional_number("datasheet");
    out.verified = c.boolean("verified");
    out.throttled = c.boolean("throttled");
    out.telemetry = read_telemetry(c);
    if (c.has("detail")) {
      out.detail = c.object("detail").raw();
      require_plain_strings(out.detail, c.path_of("detail"));  // show prints its labels
    }
    p.ceilings.push_back(std::move(out));
  }
  p.skipped = read_skipped(doc, "skipped");
  p.errors = read_skipped(doc, "errors");
  // The health section is read by qualify and fleet; checked here too, so every command refuses the same file.
  // It is the snapshots, or the reason they could not be taken (a string), or null.
  if (document.contains("health")) {
    const json& h = document.at("health");
    if (h.is_object())
      health_from_json(h, "health");
    else if (!h.is_string() && !h.is_null())
      doc.fail("health", "must be the health snapshots (an object) or why they could not be taken (a string), found " +
                             json_type_name(h));
  }
  // `ceilings measure`'s record of the run: show prints an incomplete run's counts and reason from it. Its reason
  // holds ceilings-bench's last stderr lines (made printable, tabs kept): plain text line by line.
  if (const auto m = doc.optional_object("measure")) {
    (void)m->optional_boolean("complete");
    for (const char* key : {"cases", "finished_cases", "failed_cases", "cut_short_cases"})
      if (const auto n = m->optional_integer(key); n && *n > (std::int64_t{1} << 40))
        m->fail(key, std::to_string(*n) + " cases: more than any run has");
    if (const auto stopped = m->optional_string("stopped")) {
      std::size_t start = 0;
      for (std::size_t end; start <= stopped->size(); start = end + 1) {
        end = std::min(stopped->find('\n', start), stopped->size());
        std::string line = stopped->substr(start, end - start);
        line.erase(std::remove(line.begin(), line.end(), '\t'), line.end());  // printable_text keeps tabs
        if (const std::string why = plain_text_problem(line); !why.empty()) m->fail("stopped", why);
      }
    }
  }
  check_profile_values(p);
  (void)origin;
  return p;
}

bool DeviceInfo::is_mig() const {
  if (mig) return *mig;
  return mig_instance_suffix(name) != std::string::npos;
}

const Ceiling* usable_ceiling(const Profile& p, const std::string& name, const std::string& origin) {
  if (const Ceiling* c = p.find(name)) {
    if (!c->verified)
      throw IncompleteError(name + " in " + origin + " was not verified: its number cannot be trusted as a peak");
    return c;
  }
  for (const Skipped& e : p.errors)
    if (e.name == name) throw IncompleteError(name + " was not measured in " + origin + ": it failed: " + e.reason);
  for (const Skipped& s : p.skipped)
    if (s.name == name) throw IncompleteError(name + " was not measured in " + origin + ": " + s.reason);
  return nullptr;
}

const Ceiling* default_hbm_ceiling(const Profile& p) {
  for (const char* name : {"hbm.read", "hbm.copy", "hbm.triad", "hbm.write"})
    if (const Ceiling* c = p.find(name); c && c->verified && c->unit == "B/s") return c;
  for (const Ceiling& c : p.ceilings)
    if (c.name.rfind("hbm.", 0) == 0 && c.unit == "B/s" && c.verified) return &c;
  return nullptr;
}

void explain_unusable_family(const Profile& p, const std::string& family, const std::string& origin) {
  auto in_family = [&](const std::string& name) { return name.rfind(family + ".", 0) == 0; };
  for (const Ceiling& c : p.ceilings)
    if (in_family(c.name)) usable_ceiling(p, c.name, origin);
  for (const auto* list : {&p.errors, &p.skipped})
    for (const Skipped& s : *list)
      if (in_family(s.name)) usable_ceiling(p, s.name, origin);
}

Profile read_profile(const std::string& path) {
  // Refused before it is parsed, which takes about 20 times a file's size (review 109: a 200 MB file named like a
  // profile took a fleet of 4096 down, out of memory, with no report).
  const std::string text = read_text_file(path);
  if (text.size() > kMaxProfileBytes)
    throw InputError("'" + path + "' holds " + format_fixed(static_cast<double>(text.size()) / (1 << 20), 1) +
                     " MiB: larger than any profile (" + std::to_string(kMaxProfileBytes >> 20) +
                     " MiB at most; a full H200 profile is 0.3 MB)");
  const json doc = parse_json_text(text, "'" + path + "'");
  try {
    return profile_from_json(doc, path);
  } catch (const InputError& e) {
    throw InputError("'" + path + "' is not a valid profile: " + e.what());
  }
}

std::optional<std::string> Profile::note() const {
  if (!raw.is_object() || !raw.contains("note") || !raw["note"].is_string()) return std::nullopt;
  return raw["note"].get<std::string>();
}

std::optional<std::string> Profile::stopped_early() const {
  // The reader checked the types of what is there; null or absent reads as unknown.
  const json& m = raw.is_object() && raw.contains("measure") ? raw["measure"] : json();
  if (!m.is_object() || !m.contains("complete") || !m["complete"].is_boolean() || m["complete"].get<bool>())
    return std::nullopt;
  const std::string stopped = m.contains("stopped") && m["stopped"].is_string() ? m["stopped"].get<std::string>() : "";
  // Its first line that says something (a reason written after a newline is not an empty one), trimmed.
  std::size_t at = 0;
  while (at < stopped.size()) {
    const std::size_t end = std::min(stopped.find('\n', at), stopped.size());
    const std::size_t first = stopped.find_first_not_of(" \t\r", at);
    if (first < end) return stopped.substr(first, stopped.find_last_not_of(" \t\r", end - 1) + 1 - first);
    at = end + 1;
  }
  return "stopped early";
}

bool Profile::run_was_stopped() const {
  if (!stopped_early()) return false;
  const json& m = raw["measure"];
  if (!m.contains("families") || !m["families"].is_array()) return true;
  for (const json& f : m["families"])
    if (f.is_object() && f.contains("failure") && f["failure"].is_string() &&
        f["failure"].get<std::string>().rfind("not run: ", 0) == 0)
      return true;
  return std::any_of(errors.begin(), errors.end(), [](const Skipped& e) { return cut_short_reason(e.reason); });
}

json profile_to_json(const Profile& p) {
  json doc = p.raw.is_object() ? p.raw : json::object();  // keep sections this version does not model
  doc["schema"] = p.schema;
  doc["created"] = p.created;
  doc["tool"] = {{"version", p.tool_version}, {"git", p.tool_git}};
  if (!p.tool_measurement_code.empty()) doc["tool"]["measurement_code"] = p.tool_measurement_code;
  json host = {{"hostname", p.hostname}, {"cpu", p.cpu}};
  host["numa_node"] = p.numa_node ? json(*p.numa_node) : json(nullptr);
  if (p.gpus_visible) host["gpus_visible"] = *p.gpus_visible;
  doc["host"] = host;
  if (p.gpus_measured_together) {
    if (!doc.contains("measure") || !doc["measure"].is_object()) doc["measure"] = json::object();
    doc["measure"]["gpus_measured_together"] = *p.gpus_measured_together;
  } else if (doc.contains("measure") && doc["measure"].is_object()) {
    doc["measure"].erase("gpus_measured_together");  // the field decides, not what the document held (review 51)
  }
  if (p.quick) {
    if (!doc.contains("measure") || !doc["measure"].is_object()) doc["measure"] = json::object();
    doc["measure"]["quick"] = *p.quick;
  } else if (doc.contains("measure") && doc["measure"].is_object()) {
    doc["measure"].erase("quick");
  }
  const DeviceInfo& d = p.device;
  // The device fields this version does not model (memory_bus_width_bits, cuda_driver_api, telemetry_source, a
  // newer version's) are kept, as the document's other sections are; the modelled ones are written from `d`.
  json dev = p.raw.is_object() && p.raw.contains("device") && p.raw["device"].is_object() ? p.raw["device"]
                                                                                           : json::object();
  for (const char* optional_key : {"mig", "board_uuid"}) dev.erase(optional_key);
  const json modelled = {{"index", d.index},
              {"name", d.name},
              {"uuid", d.uuid},
              {"pci_bus_id", d.pci_bus_id},
              {"compute_capability", d.compute_capability},
              {"sm_count", d.sm_count},
              {"memory_bytes", d.memory_bytes},
              {"l2_bytes", d.l2_bytes},
              {"driver", d.driver.empty() ? json(nullptr) : json(d.driver)},
              {"cuda_runtime", d.cuda_runtime},
              {"cublas", d.cublas}};
  dev.update(modelled);
  auto opt = [](const auto& v) { return v ? json(*v) : json(nullptr); };
  dev["ecc"] = opt(d.ecc);
  dev["clocks_max_hz"] = {{"sm", opt(d.max_sm_clock_hz)}, {"memory", opt(d.max_mem_clock_hz)}};
  dev["power_limit_w"] = opt(d.power_limit_w);
  if (d.mig) dev["mig"] = *d.mig;
  if (d.confidential_computing) dev["confidential_computing"] = *d.confidential_computing;
  if (!d.confidential_computing_mode.empty()) dev["confidential_computing_mode"] = d.confidential_computing_mode;
  if (!d.board_uuid.empty()) dev["board_uuid"] = d.board_uuid;
  dev["pcie"] = {{"gen", opt(d.pcie.gen)},
                 {"width", opt(d.pcie.width)},
                 {"max_gen", opt(d.pcie.max_gen)},
                 {"max_width", opt(d.pcie.max_width)},
                 {"gpu_max_gen", opt(d.pcie.gpu_max_gen)}};
  doc["device"] = dev;
  json ceilings = json::array();
  for (const Ceiling& c : p.ceilings) {
    json j = {{"name", c.name},         {"value", c.value},         {"unit", c.unit},
              {"cv", c.cv},             {"samples", c.samples},     {"verified", c.verified},
              {"throttled", c.throttled}, {"telemetry", telemetry_to_json(c.telemetry)}, {"detail", c.detail}};
    j["datasheet"] = opt(c.datasheet);
    ceilings.push_back(std::move(j));
  }
  doc["ceilings"] = ceilings;
  auto list = [](const std::vector<Skipped>& v) {
    json a = json::array();
    for (const Skipped& s : v) a.push_back({{"name", s.name}, {"reason", s.reason}});
    return a;
  };
  doc["skipped"] = list(p.skipped);
  doc["errors"] = list(p.errors);
  return doc;
}

std::string atomic_temp_prefix(const std::string& file_name) {
  // Short enough that a 255-byte file name still leaves room for the random suffix.
  return "." + file_name.substr(0, 200) + ".tmp.";
}

namespace {

// The process's umask, read without changing it (umask(2) would, for a moment, for every thread).
mode_t current_umask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Umask:", 0) == 0) {
      try {
        return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
      } catch (const std::exception&) {
        break;
      }
    }
  return 022;
}

}  // namespace

namespace {

// Interrupts held while temporaries exist: SIGINT, SIGTERM, SIGHUP or SIGQUIT in the middle of a write ended the
// process at once (their default action) and left the temporary beside its target for good (review 22 #3). Held,
// they land when the files are in place (or put back): the dispositions the process had come back and each signal
// that came is raised again, in the order they came, as often as it came up to twice (a second Ctrl-C during a
// write, which `measure` reads as "do not wait", was one). A signal the process ignores (nohup's SIGHUP) is not
// held: held, it had taken the place of a SIGTERM that came after it, and the process went on. Process-wide
// (another thread would take a signal one thread blocked); the first of concurrent writers holds, the last lets go.
std::mutex g_hold_lock;
int g_holders = 0;
constexpr int kHeldSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
constexpr std::size_t kHeld = std::size(kHeldSignals);
struct sigaction g_dispositions[kHeld];
bool g_holding[kHeld];  // whether the hold handler is installed for it (not ignored)
// Lock-free atomics: the handler may run on any thread, beside the one that reads them.
static_assert(std::atomic<int>::is_always_lock_free, "a signal handler may only touch lock-free atomics");
std::atomic<int> g_held_count[kHeld];  // how often each came while held, up to 2
std::atomic<int> g_held_order[kHeld];  // when each first came (1, 2, ...; 0: it did not)
std::atomic<int> g_held_seen{0};       // signals that came, for the order
extern "C" void hold_signal(int sig) {
  for (std::size_t i = 0; i < kHeld; ++i)
    if (kHeldSignals[i] == sig) {
      int none = 0;
      g_held_order[i].compare_exchange_strong(none, g_held_seen.fetch_add(1) + 1);
      if (g_held_count[i].load() < 2) g_held_count[i].fetch_add(1);
    }
}

class InterruptsHeld {
 public:
  InterruptsHeld() {
    std::lock_guard<std::mutex> lock(g_hold_lock);
    if (g_holders++ > 0) return;
    g_held_seen = 0;
    struct sigaction hold {};
    hold.sa_handler = hold_signal;
    sigemptyset(&hold.sa_mask);
    for (int s : kHeldSignals) sigaddset(&hold.sa_mask, s);  // one handler at a time: the counts stay exact
    hold.sa_flags = SA_RESTART;  // a write or fsync goes on, not EINTR
    for (std::size_t i = 0; i < kHeld; ++i) {
      g_held_count[i] = 0;
      g_held_order[i] = 0;
      ::sigaction(kHeldSignals[i], nullptr, &g_dispositions[i]);
      g_holding[i] = g_dispositions[i].sa_handler != SIG_IGN;
      if (g_holding[i]) ::sigaction(kHeldSignals[i], &hold, nullptr);
    }
  }
  ~InterruptsHeld() {
    std::array<std::pair<int, int>, 2 * kHeld> came{};  // (order, signal), raised in that order (no allocation)
    std::size_t n = 0;
    {
      std::lock_guard<std::mutex> lock(g_hold_lock);
      if (--g_holders > 0) return;
      for (std::size_t i = 0; i < kHeld; ++i)
        if (g_holding[i]) ::sigaction(kHeldSignals[i], &g_dispositions[i], nullptr);
      for (std::size_t i = 0; i < kHeld; ++i)
        for (int k = 0; k < g_held_count[i] && n < came.size(); ++k) came[n++] = {g_held_order[i], kHeldSignals[i]};
    }
    std::stable_sort(came.begin(), came.begin() + static_cast<std::ptrdiff_t>(n),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t k = 0; k < n; ++k) ::raise(came[k].second);
  }
  InterruptsHeld(const InterruptsHeld&) = delete;
  InterruptsHeld& operator=(const InterruptsHeld&) = delete;
};

// A written, flushed and closed temporary beside its target, to be renamed over it.
struct StagedFile {
  std::string path, tmp;
  std::filesystem::path target, dir;
};

// A path the user cannot write (no such directory, no permission, read-only) is bad input, exit 2; a write
// the system could not complete (a full disk, a quota, an I/O error) leaves the output incomplete, exit 3.
[[noreturn]] void write_error(const std::string& message, int err) {
  switch (err) {
    case EACCES: case EPERM: case ENOENT: case ENOTDIR: case EISDIR: case EROFS: case ENAMETOOLONG: case ELOOP:
      throw InputError(message);
    default:
      throw IncompleteError(message);
  }
}

StagedFile stage_file(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  // Through a symlink, its target is replaced and the link kept (renaming onto the link would replace it).
  std::error_code ec;
  fs::path target = path;
  if (fs::is_symlink(fs::symlink_status(target, ec))) {
    const fs::path resolved = fs::weakly_canonical(target, ec);
    if (!ec) target = resolved;
  }
  // A temporary file in the same directory (so the rename stays on one file system), created exclusively under
  // a random name (two processes, or two nodes sharing the directory, never write one file; a planted link is
  // not followed), written in full, flushed to the disk and closed with every error checked, then renamed over
  // the target: a reader sees the old file or the new one, never a part. The messages name the user's path.
  const fs::path dir = target.parent_path();
  std::string name = (dir / (atomic_temp_prefix(target.filename().string()) + "XXXXXX")).string();
  const int fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    write_error("cannot write '" + path + "' (a temporary file beside it): " + std::strerror(err), err);
  }
  const std::string tmp = name;
  auto fail = [&](const std::string& what, int err, bool open) {
    if (open) ::close(fd);
    ::unlink(tmp.c_str());
    write_error(what + std::strerror(err) + "; '" + path + "' was left as it was", err);
  };
  // The new file keeps the old one's permissions; a new one gets what creating it would have (0666 less the
  // umask), not mkstemp's 0600.
  struct stat old {};
  const mode_t mode = ::stat(target.c_str(), &old) == 0 ? (old.st_mode & 07777) : (0666 & ~current_umask());
  // A file system without Unix permissions (vfat, some CIFS mounts) refuses this: the write goes on.
  if (::fchmod(fd, mode) != 0 && errno != EPERM && errno != ENOTSUP && errno != EOPNOTSUPP)
    fail("cannot set the permissions of '" + path + "': ", errno, true);
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("writing '" + path + "' failed: ", errno, true);
    }
    done += static_cast<std::size_t>(n);
  }
  // Quota and full-disk errors on network file systems often show only here.
  if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) fail("writing '" + path + "' failed: ", errno, true);
  if (::close(fd) != 0) fail("writing '" + path + "' failed: ", errno, false);
  return {path, tmp, target, dir};
}

void commit_file(const StagedFile& f) {
  if (std::rename(f.tmp.c_str(), f.target.c_str()) != 0) {
    const int err = errno;
    ::unlink(f.tmp.c_str());
    write_error("cannot write '" + f.path + "': " + std::strerror(err) + "; '" + f.path + "' was left as it was", err);
  }
  // The rename itself on the disk (best effort: a directory may refuse fsync).
  const int dfd = ::open(f.dir.empty() ? "." : f.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace

void write_files_atomic(const std::vector<std::pair<std::string, std::string>>& files) {
  // Every file written in full before any replaces its target: a full disk on the second leaves the first's
  // old version too, never a new one beside an old one.
  const InterruptsHeld held;
  std::vector<StagedFile> staged;
  staged.reserve(files.size());
  try {
    for (const auto& [path, text] : files) staged.push_back(stage_file(path, text));
  } catch (...) {
    for (const StagedFile& f : staged) ::unlink(f.tmp.c_str());
    throw;
  }
  // A rename that fails after another succeeded (EIO, a network file system's quota) must not leave one new
  // file beside an old one either: each old file is kept under a hard link until every rename is done, and put
  // back where a later one fails (where the file system has no hard links, a new file stays: said so).
  std::vector<std::string> backups(staged.size());
  std::vector<bool> existed(staged.size(), true);
  if (staged.size() > 1)
    for (std::size_t i = 0; i < staged.size(); ++i) {
      existed[i] = ::access(staged[i].target.c_str(), F_OK) == 0;
      const std::string b = staged[i].tmp + ".old";
      if (existed[i] && ::link(staged[i].target.c_str(), b.c_str()) == 0) backups[i] = b;
    }
  for (std::size_t i = 0; i < staged.size(); ++i) {
    try {
      commit_file(staged[i]);
    } catch (const Error& e) {
      std::string kept_new;
      for (std::size_t k = 0; k < i; ++k) {
        if (!backups[k].empty() && std::rename(backups[k].c_str(), staged[k].target.c_str()) == 0)
          backups[k].clear();
        else if (!existed[k] && ::unlink(staged[k].target.c_str()) == 0)
          continue;  // new with this write: gone again, as it was
        else
          kept_new += (kept_new.empty() ? "" : ", ") + staged[k].path;
      }
      for (std::size_t k = i + 1; k < staged.size(); ++k) ::unlink(staged[k].tmp.c_str());
      for (const std::string& b : backups)
        if (!b.empty()) ::unlink(b.c_str());
      const std::string message = std::string(e.what()) +
                                  (kept_new.empty() ? "" : "; written before it, and not put back: " + kept_new);
      if (e.exit_code() == kExitBadInput) throw InputError(message);
      throw IncompleteError(message);
    }
  }
  for (const std::string& b : backups)
    if (!b.empty()) ::unlink(b.c_str());
}

void write_file_atomic(const std::string& path, const std::string& text) { write_files_atomic({{path, text}}); }

void write_profile_with_raw(const Profile& profile, const std::string& path, const std::string& raw_path,
                            const std::string& raw_text) {
  const json doc = profile_to_json(profile);
  try {
    (void)profile_from_json(doc, path);
  } catch (const Error& e) {
    write_files_atomic({{raw_path, raw_text}});
    throw Error(kExitIncomplete, "the profile would not read back, so it was not written (the raw ceilings-bench JSON "
                                 "is kept in " + raw_path + "): " + e.what());
  }
  write_files_atomic({{raw_path, raw_text}, {path, doc.dump(2) + "\n"}});
}

void check_output_path(const std::string& path, const std::string& option, const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  if (path.empty()) throw InputError(option + " is empty");
  const std::string named = option + " '" + path + "'";
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::is_directory(st)) throw InputError(named + " is a directory: give a file name");
  // A stream's name (/dev/stdout, /dev/fd/1, /proc/self/fd/1) leads through a link to what it is open on: a log
  // the shell redirected into was replaced by the file, and the files written beside it landed in /dev (review 22
  // #5). Only files are written: nothing under /dev (but /dev/shm) or /proc, named or linked to.
  const auto special = [](const fs::path& p) {
    const std::string a = p.lexically_normal().string();
    return (a.rfind("/dev/", 0) == 0 && a.rfind("/dev/shm/", 0) != 0) || a.rfind("/proc/", 0) == 0;
  };
  // Every hop of a chain of links, each with its directories resolved (a directory linked to /proc/self/fd as well).
  fs::path hop = fs::absolute(path, ec);
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code dir_ec;
    const fs::path dir = fs::weakly_canonical(hop.parent_path(), dir_ec);
    const fs::path here = (dir_ec ? hop.parent_path() : dir) / hop.filename();
    if (special(hop) || special(here))
      throw InputError(named + " is a device's or a stream's name under /dev or /proc: give a file's name");
    std::error_code link_ec;
    if (!fs::is_symlink(fs::symlink_status(here, link_ec))) break;
    const fs::path target = fs::read_symlink(here, link_ec);
    if (link_ec) break;
    hop = target.is_absolute() ? target : here.parent_path() / target;
  }
  if (fs::exists(st) && !fs::is_regular_file(st)) throw InputError(named + " is not a regular file");
  // A symlink's target is what write_file_atomic replaces: its directory is the one that must take new files.
  fs::path written = path;
  if (fs::is_symlink(fs::symlink_status(written, ec))) {
    const fs::path resolved = fs::weakly_canonical(written, ec);
    if (!ec) written = resolved;
  }
  const fs::path parent = written.parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec))
    throw InputError("the directory of " + named + " does not exist");
  // Checked now, not found by the write after a whole measurement or report: the file is written as a
  // temporary file beside it and renamed, so the directory must take new files.
  if (::access(parent.empty() ? "." : parent.c_str(), W_OK | X_OK) != 0)
    throw InputError("cannot write in the directory of " + named + ": " + std::strerror(errno));
  if (!fs::exists(st)) return;  // a new file cannot be one of the inputs
  for (const std::string& input : inputs) {
    if (input.empty()) continue;
    ec.clear();
    if (fs::equivalent(path, input, ec) && !ec)
      throw InputError(named + " is the same file as the input '" + input +
                       "': writing it would destroy that input; choose another file");
  }
}

void check_replaceable_output(const std::string& path, const std::string& option, const std::string& kind,
                              bool (*is_kind)(const std::string& text)) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return;
  std::string text;
  try {
    text = read_text_file(path);
  } catch (const Error& e) {
    throw InputError(option + " '" + path + "' exists and cannot be read to tell what it is (" + e.what() +
                     "): it was left as it was; remove it or choose another file");
  }
  if (!text.empty() && !is_kind(text))  // an empty file (mktemp's, touch's) holds nothing to lose
    throw InputError(option + " '" + path + "' exists and is not " + kind +
                     ": it was left as it was; remove it or choose another file");
}

namespace {
// The value of a top-level "schema" string, "" where the text is no JSON object with one.
std::string schema_of(const std::string& text) {
  try {
    const json doc = parse_json_text(text, "output");
    if (doc.is_object() && doc.contains("schema") && doc["schema"].is_string()) return doc["schema"].get<std::string>();
  } catch (const Error&) {
  }
  return "";
}
}  // namespace

bool is_profile_text(const std::string& text) { return schema_of(text).rfind("ceilings.profile/", 0) == 0; }
bool is_measured_profile_text(const std::string& text) {
  try {
    const json doc = parse_json_text(text, "output");
    // A fleet baseline is a ceilings.profile too, marked by its top-level "baseline" section (as `fleet` tells
    // one from a GPU's profile): medians the user chose to keep, not an earlier run to replace.
    return doc.is_object() && doc.contains("schema") && doc["schema"].is_string() &&
           doc["schema"].get<std::string>().rfind("ceilings.profile/", 0) == 0 && !doc.contains("baseline");
  } catch (const Error&) {
    return false;
  }
}
bool is_fleet_baseline_text(const std::string& text) {
  try {
    const json doc = parse_json_text(text, "output");
    return doc.is_object() && doc.contains("baseline");
  } catch (const Error&) {
    return false;
  }
}
bool is_node_summary_text(const std::string& text) { return schema_of(text).rfind("ceilings.node/", 0) == 0; }

void check_replaceable_profile(const std::string& path, const std::string& option) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return;
  std::string text;
  try {
    text = read_text_file(path);
  } catch (const Error&) {
    // check_replaceable_output below says what is wrong with it
  }
  if (is_profile_text(text) && is_fleet_baseline_text(text))
    throw InputError(option + " '" + path + "' exists and is a fleet baseline (`ceilings fleet --write-baseline`'s "
                     "medians), not an earlier run's profile: it was left as it was; remove it or choose another file");
  check_replaceable_output(path, option, "a ceilings profile", is_measured_profile_text);
}

bool is_bench_json_text(const std::string& text) {
  try {
    // Google Benchmark's JSON output: its "context" object, then the "benchmarks" array of one object per case,
    // each named (even a run whose filter matched nothing writes both). Not any object with either key.
    const json doc = parse_json_text(text, "output");
    if (!doc.is_object() || !doc.contains("context") || !doc["context"].is_object() || !doc.contains("benchmarks") ||
        !doc["benchmarks"].is_array())
      return false;
    for (const json& b : doc["benchmarks"])
      if (!b.is_object() || !b.contains("name") || !b["name"].is_string()) return false;
    return true;
  } catch (const Error&) {
    return false;
  }
}

namespace {
bool starts_at(const std::string& text, std::size_t i, const char* prefix) {
  return text.compare(i, std::strlen(prefix), prefix) == 0;
}
bool xml_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
}  // namespace

bool is_svg_text(const std::string& text) {
  // An SVG document, not any text that mentions one (a Markdown note or an HTML report with an <svg> in it was
  // taken for a picture and replaced): a byte order mark, then the XML prolog, whatever order and number of
  // declarations, processing instructions (<?xml-stylesheet?>), comments (Inkscape's "Created with", graphviz's
  // "Generated by") and a DOCTYPE (matplotlib's and graphviz's, with an internal subset in [...] or not), and
  // white space between them, then the root element: <svg, or <svg:svg with the namespace prefix.
  std::size_t i = starts_at(text, 0, "\xEF\xBB\xBF") ? 3 : 0;
  for (;;) {
    while (i < text.size() && xml_space(text[i])) ++i;
    if (starts_at(text, i, "<?")) {
      i = text.find("?>", i + 2);
      if (i == std::string::npos) return false;
      i += 2;
    } else if (starts_at(text, i, "<!--")) {
      i = text.find("-->", i + 4);
      if (i == std::string::npos) return false;
      i += 3;
    } else if (starts_at(text, i, "<!DOCTYPE")) {
      // Its root element's name must be the picture's (an HTML page's <!DOCTYPE html> with an <svg> first in its
      // body is a page, not a picture).
      std::size_t name = i + 9;
      while (name < text.size() && xml_space(text[name])) ++name;
      if (!(starts_at(text, name, "svg") || starts_at(text, name, "svg:svg"))) return false;
      // Up to its '>', past an internal subset's brackets (its declarations hold '>' of their own) and quotes.
      std::size_t depth = 0;
      char quote = 0;
      for (i += 9; i < text.size(); ++i) {
        const char c = text[i];
        if (quote) {
          if (c == quote) quote = 0;
        } else if (c == '"' || c == '\'') {
          quote = c;
        } else if (c == '[') {
          ++depth;
        } else if (c == ']' && depth > 0) {
          --depth;
        } else if (c == '>' && depth == 0) {
          break;
        }
      }
      if (i >= text.size()) return false;
      ++i;
    } else {
      break;
    }
  }
  for (const char* root : {"<svg", "<svg:svg"}) {
    const std::size_t end = i + std::strlen(root);
    if (starts_at(text, i, root) && end < text.size() &&
        (xml_space(text[end]) || text[end] == '>' || text[end] == '/'))
      return true;
  }
  return false;
}

std::string utc_iso8601(std::int64_t seconds_since_epoch) {
  const auto t = static_cast<std::time_t>(seconds_since_epoch);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string utc_now_iso8601() { return utc_iso8601(std::time(nullptr)); }

}  // namespace ceilings
