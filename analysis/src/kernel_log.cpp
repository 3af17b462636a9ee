// XID reports in the kernel log (see kernel_log.hpp).
#include "ceilings/kernel_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <optional>
#include <utility>
#include <vector>

#include "ceilings/error.hpp"
#include "ceilings/json_fields.hpp"

namespace ceilings {
namespace {

struct PciAddress {
  unsigned long domain = 0, bus = 0, device = 0;
  bool operator==(const PciAddress& o) const { return domain == o.domain && bus == o.bus && device == o.device; }
};

// One hex field of at most `digits` digits at `s[i]`, advancing i; nullopt when there is none.
std::optional<unsigned long> hex_field(const std::string& s, std::size_t& i, std::size_t digits) {
  std::size_t n = 0;
  unsigned long v = 0;
  while (i < s.size() && n < digits && std::isxdigit(static_cast<unsigned char>(s[i]))) {
    const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
    v = v * 16 + static_cast<unsigned long>(c <= '9' ? c - '0' : c - 'a' + 10);
    ++i;
    ++n;
  }
  if (n == 0) return std::nullopt;
  return v;
}

// "DOMAIN:BUS:DEVICE" with an optional ".FUNCTION" (NVML: 8-digit domain; the kernel and sysfs: 4), from s[i].
std::optional<PciAddress> pci_address(const std::string& s, std::size_t i = 0) {
  PciAddress a;
  const auto domain = hex_field(s, i, 8);
  if (!domain || i >= s.size() || s[i++] != ':') return std::nullopt;
  const auto bus = hex_field(s, i, 2);
  if (!bus || i >= s.size() || s[i++] != ':') return std::nullopt;
  const auto device = hex_field(s, i, 2);
  if (!device) return std::nullopt;
  a.domain = *domain;
  a.bus = *bus;
  a.device = *device;
  return a;
}

// A driver's error report in one message: "<marker>(PCI:0000:19:00): 79..." (older drivers write the address
// without "PCI:"), the device's address, the error's number and where the text after the number starts.
struct ErrorReport {
  PciAddress address;
  long long code = 0;
  std::size_t after = 0;
};
// `at`: where the marker starts in the message (a line may hold several reports: a one-line JSON log).
std::optional<ErrorReport> error_report(const std::string& message, const char* marker, std::size_t at) {
  std::size_t i = at + std::strlen(marker);
  if (message.compare(i, 4, "PCI:") == 0) i += 4;
  const auto address = pci_address(message, i);
  if (!address) return std::nullopt;
  // The address is followed by its "):" within a few characters (".0" of an SXid's, " GPU-I:1 GPU-CI:0" of a MIG
  // instance's): a search past them would read the whole of a long line for each report on it (review 95: minutes
  // for a 4 MiB line).
  std::size_t close = message.substr(i, 64).find("):");
  if (close == std::string::npos) return std::nullopt;
  close += i;
  i = close + 2;
  while (i < message.size() && message[i] == ' ') ++i;
  std::size_t digits = 0;
  long long code = 0;
  while (i < message.size() && std::isdigit(static_cast<unsigned char>(message[i])) && digits < 6) {
    code = code * 10 + (message[i++] - '0');
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  return ErrorReport{*address, code, i};
}

// The XID report at `at` in a message, when it is one: "NVRM: Xid (PCI:0000:19:00): 79, ...".
constexpr const char* kXidMarker = "NVRM: Xid (";
std::optional<std::pair<PciAddress, long long>> xid_report(const std::string& message, std::size_t at) {
  const auto r = error_report(message, kXidMarker, at);
  if (!r) return std::nullopt;
  const std::size_t i = r->after;
  if (i < message.size() && message[i] != ',' && message[i] != ' ' && message[i] != '\t' && message[i] != '\r')
    return std::nullopt;
  return std::make_pair(r->address, r->code);
}

// A /dev/kmsg record's header, "PRI,SEQ,USEC[,FLAGS...];": the priority (facility * 8 + level), the time in
// microseconds since boot, and where the message starts. nullopt when the line has no such header.
struct KmsgHeader {
  long long priority = 0;
  long long sequence = 0;  // the record's number since boot (0 first)
  double uptime_s = 0;
  std::size_t message = 0;
};
std::optional<KmsgHeader> kmsg_header(const std::string& line) {
  const std::size_t semi = line.find(';');
  if (semi == std::string::npos) return std::nullopt;
  long long fields[3] = {};
  std::size_t i = 0;
  for (int f = 0; f < 3; ++f) {
    std::size_t digits = 0;
    while (i < semi && std::isdigit(static_cast<unsigned char>(line[i])) && digits < 18) {  // 18 fit a long long
      fields[f] = fields[f] * 10 + (line[i++] - '0');
      ++digits;
    }
    if (digits == 0 || (i < semi && std::isdigit(static_cast<unsigned char>(line[i])))) return std::nullopt;
    if (f < 2 && (i >= semi || line[i++] != ',')) return std::nullopt;
  }
  if (i != semi && line[i] != ',') return std::nullopt;  // FLAGS and more follow a comma
  return KmsgHeader{fields[0], fields[1], static_cast<double>(fields[2]) * 1e-6, semi + 1};
}

// The driver's message as kept, from `from`: at most 300 bytes, anything but printable ASCII as '?' (a terminal
// shows it, and JSON needs valid UTF-8; /dev/kmsg escapes such bytes itself, a saved log may not).
std::string driver_text(const std::string& message, std::size_t from) {
  std::string out = message.substr(from, 300);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  return out;
}

}  // namespace

namespace {

// One line of a log: a /dev/kmsg record ("4,1234,5678901,-;message"), a dmesg line ("[ 5.678901] message") or any
// other text, its message and its time after boot (-1 where it has none). `in_kmsg`: whether the line before was a
// /dev/kmsg record, whose KEY=value continuation lines start with a space; elsewhere a line that starts with
// spaces is read like any other (dmesg --json and journalctl -o verbose indent their messages: review 93 read them
// as continuations and missed every XID). nullopt for a line that is no kernel message.
struct LogLine {
  double uptime = -1;
  std::string message;
  bool kmsg = false;
};
std::optional<LogLine> log_line(const std::string& raw, bool in_kmsg) {
  if (raw.empty() || (in_kmsg && raw[0] == ' ')) return std::nullopt;
  std::size_t first = 0;
  while (first < raw.size() && (raw[first] == ' ' || raw[first] == '\t')) ++first;
  const std::string line = raw.substr(first);
  LogLine out;
  out.message = line;
  if (const auto header = kmsg_header(line)) {
    // Priorities 0-7 are the kernel's own facility; user space writing to /dev/kmsg (a logger quoting a line,
    // a fault drill) gets another, and is not a driver reporting an error.
    if (header->priority >= 8) return LogLine{-1, "", true};  // no message, still a record with continuations
    out.uptime = header->uptime_s;
    out.message = line.substr(header->message);
    out.kmsg = true;
  } else if (!line.empty() && line[0] == '[') {  // dmesg: "[  123.456789] message"
    const std::size_t close = line.find(']');
    if (close != std::string::npos) {
      std::size_t digit = 1;
      while (digit < close && line[digit] == ' ') ++digit;
      // dmesg -H / --reltime print "[  +0.000123]", a delta from the line before: no time after boot.
      if (digit < close && std::isdigit(static_cast<unsigned char>(line[digit]))) {
        char* parsed_end = nullptr;
        const std::string stamp = line.substr(1, close - 1);
        const double v = std::strtod(stamp.c_str(), &parsed_end);
        if (parsed_end != stamp.c_str() && std::isfinite(v) && v >= 0) out.uptime = v;
      }
    }
  }
  return out;
}

// Each kernel message of the log text, with its time after boot (-1 where the line has none): /dev/kmsg records
// (their continuation lines skipped, records user space wrote left out), dmesg and journal lines, or any other text.
// A log kept across reboots is read whole: where its lines are not in time order (cat kern.log kern.log.1,
// journalctl -r) no boundary can be trusted, and cutting at a wrong one would miss this boot's XIDs (review 95); an
// earlier boot's XID fails instead, which the README says how to avoid (save the current boot only).
template <typename Visit>
void for_each_kernel_message(const std::string& text, Visit visit) {
  std::size_t start = 0;
  bool in_kmsg = false;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const auto line = log_line(text.substr(start, end - start), in_kmsg);
    start = end + 1;
    if (!line) continue;
    in_kmsg = line->kmsg;
    if (!line->message.empty()) visit(line->uptime, line->message);
  }
}

// A report that user space wrote, quoting the driver's (ceilings' own health reasons in the journal, a node problem
// detector, NHC), which is no fault of this boot's: counted, it would fail the node twice, and again after the reboot
// that cleared it (review 93). Told by the record that holds the report (a line may hold several: a one-line JSON
// log, an array of log lines, a Loki response): a journal JSON record whose _TRANSPORT is not "kernel", or, in the
// text from the record's or the JSON string's start (the last '{' or '"' before the report) and at most 512 bytes
// back, dmesg -x's "user" facility or a program's syslog tag with its pid ("ceilings[4242]: "; the kernel's is
// "kernel: ", with none). /dev/kmsg records user space wrote are left out by their facility (log_line). Not told
// apart, so their quotes count: a program that logs without its pid, RFC 5424 lines (whose pid is a field of its
// own), journalctl -o verbose and json-pretty (whose _TRANSPORT is a line of its own), plain dmesg's user-space
// /dev/kmsg records, a quote more than 512 bytes after its tag or after a '"' or '{' in the program's message.
//
// Reports are visited in order along the line, and the scan for the boundaries moves forward only: linear in the
// line (review 112: a scan of the whole line for each report took 37 s for a 4 MiB line), each report judged by its
// own record (reviews 112, 113: an earlier record's kernel "python3[4321]: segfault" had hidden a real XID 79).
class UserSpaceQuotes {
 public:
  explicit UserSpaceQuotes(const std::string& line) : line_(line) {
    constexpr const char* kKey = "\"_TRANSPORT\"";
    for (std::size_t t = line.find(kKey); t != std::string::npos; t = line.find(kKey, t + 1)) {
      std::size_t v = t + std::strlen(kKey);
      while (v < line.size() && (line[v] == ' ' || line[v] == ':')) ++v;
      transports_.emplace_back(t, line.compare(v, 8, "\"kernel\"") == 0);
    }
  }

  // Whether the report at `at` is a quote; `at` grows from call to call.
  bool quoted(std::size_t at) {
    for (; scanned_ < at; ++scanned_) {
      if (line_[scanned_] == '{') object_ = scanned_;
      if (line_[scanned_] == '{' || line_[scanned_] == '"' || line_[scanned_] == '\r') string_ = scanned_ + 1;
      // An escaped line break inside one JSON string (a whole dmesg kept as one value) starts a record too
      // (review 114: an earlier record's "python3[4321]: segfault" had hidden a real XID 79).
      if (line_[scanned_] == '\\' && scanned_ + 1 < line_.size() &&
          (line_[scanned_ + 1] == 'n' || line_[scanned_ + 1] == 'r'))
        string_ = scanned_ + 2;
    }
    if (close_ != std::string::npos && close_ < at) close_ = line_.find('}', at);
    const std::size_t end = close_ == std::string::npos ? line_.size() : close_;
    // A quote already in this string (two quotes on one user-space line): the same verdict.
    if (string_ == last_string_ && last_quoted_) return true;
    last_string_ = string_;
    last_quoted_ = judge(end, at);
    return last_quoted_;
  }

 private:
  bool judge(std::size_t end, std::size_t at) const {
    auto t = std::lower_bound(transports_.begin(), transports_.end(), std::make_pair(object_, false));
    if (t != transports_.end() && t->first < end) return !t->second;
    // At most a few spaces skipped (review 114: a long run of them, skipped again for each report, was quadratic).
    std::size_t first = string_;
    while (first < at && first < string_ + 16 && line_[first] == ' ') ++first;
    if (line_.compare(first, 4, "user") == 0) {  // dmesg -x: "user  :notice: [  5.1] ..."
      std::size_t i = first + 4;
      while (i < at && i < first + 16 && line_[i] == ' ') ++i;
      if (i < at && line_[i] == ':') return true;
    }
    // "name[digits]: " before the report: a syslog tag with a pid, the kernel's never has one. A name the 512-byte
    // bound cuts is no name.
    const bool bounded = at > 512 && at - 512 > string_;
    const std::size_t from = bounded ? at - 512 : string_;
    for (std::size_t close = from; close + 3 <= at; ++close) {
      if (line_.compare(close, 3, "]: ") != 0) continue;
      std::size_t open = close;
      while (open > from && std::isdigit(static_cast<unsigned char>(line_[open - 1]))) --open;
      if (open == close || open == from || line_[open - 1] != '[') continue;
      std::size_t name = open - 1;
      while (name > from && line_[name - 1] != ' ' && line_[name - 1] != '\t') --name;
      if (name == from && bounded) continue;
      if (name < open - 1 && line_.compare(name, open - 1 - name, "kernel") != 0) return true;
    }
    return false;
  }

  const std::string& line_;
  std::vector<std::pair<std::size_t, bool>> transports_;  // where, and whether it is the kernel's
  std::size_t scanned_ = 0, object_ = 0, string_ = 0;     // scanned to; the last '{'; past the last '{' or '"'
  std::size_t close_ = 0;                                 // the first '}' at or after the last report (npos: none)
  std::size_t last_string_ = std::string::npos;
  bool last_quoted_ = false;
};

// The SXid event line in one message, when it is one: "SXid (PCI:0000:04:00.0): 22013, Fatal, ..." (the severity
// is the field after the number: "Fatal", "Non-fatal" or "Correctable"). The event's other lines ("Data {...}",
// "Severity 0 Engine instance ...") are not events. Lines without a severity are the NVSwitch driver's plain
// reports: most are warnings or recoveries (thermal slowdown engaged and disengaged, 10004 and 10005; OSFP
// thermal warnings), not events; a few are the switch failing, fatal (kSeverityLessFatal).
// The SXids the NVSwitch driver (open-gpu-kernel-modules, src/common/nvswitch) reports without a severity when
// the switch fails (the numbers of its error table): 10006 overheat shutdown (TSENSE OVERT), 10007 I/O failure (the
// switch reads 0xBADF...), 10008 firmware initialization failure, 26001 and 26002 its management firmware (SOE) not
// reset or not booted when the switch was brought up ("Failed to reset SOE", "Failed to boot SOE", "SOE init
// Failed": review 93), 26006 the SOE halted, 28003 an OSFP module past its overtemperature limit, 28005 the OSFP
// thermal heartbeat's shutdown.
constexpr long long kSeverityLessFatal[] = {10006, 10007, 10008, 26001, 26002, 26006, 28003, 28005};

constexpr const char* kSxidMarker = "SXid (";
std::optional<std::pair<long long, bool>> sxid_report(const std::string& message, std::size_t at) {
  const auto r = error_report(message, kSxidMarker, at);
  if (!r || message.compare(r->after, 2, ", ") != 0) return std::nullopt;
  const std::size_t i = r->after + 2;
  auto starts = [&](const char* word) { return message.compare(i, std::strlen(word), word) == 0; };
  if (starts("Fatal,")) return std::make_pair(r->code, true);
  if (starts("Non-fatal,") || starts("Correctable,")) return std::make_pair(r->code, false);
  if (starts("Data {") || starts("Severity ")) return std::nullopt;
  for (const long long fatal : kSeverityLessFatal)
    if (r->code == fatal) return std::make_pair(r->code, true);
  return std::nullopt;  // a warning or a recovery without a severity: not an event
}

}  // namespace

std::vector<KernelXid> parse_kernel_xids(const std::string& text, const std::string& pci_bus_id) {
  std::vector<KernelXid> out;
  for_each_kernel_xid(text, pci_bus_id, [&](KernelXid&& x) { out.push_back(std::move(x)); });
  return out;
}

void for_each_kernel_xid(const std::string& text, const std::string& pci_bus_id,
                         const std::function<void(KernelXid&&)>& visit_xid) {
  const auto gpu = pci_address(pci_bus_id);
  if (!gpu)
    throw IncompleteError("the GPU's PCI address '" + excerpt(pci_bus_id) +
                          "' is not DOMAIN:BUS:DEVICE: its XIDs in the kernel log cannot be told from other GPUs'");
  for_each_kernel_message(text, [&](double uptime, const std::string& message) {
    UserSpaceQuotes quotes(message);
    // Every report of the line (review 93: a one-line JSON log's first, another GPU's, hid this GPU's XID 79).
    for (std::size_t at = message.find(kXidMarker); at != std::string::npos; at = message.find(kXidMarker, at + 1)) {
      const auto report = xid_report(message, at);
      if (report && report->first == *gpu && !quotes.quoted(at))
        visit_xid({report->second, uptime, driver_text(message, at)});
    }
  });
}

std::vector<KernelSxid> parse_kernel_sxids(const std::string& text) {
  std::vector<KernelSxid> out;
  for_each_kernel_sxid(text, [&](KernelSxid&& x) { out.push_back(std::move(x)); });
  return out;
}

void for_each_kernel_sxid(const std::string& text, const std::function<void(KernelSxid&&)>& visit_sxid) {
  for_each_kernel_message(text, [&](double uptime, const std::string& message) {
    UserSpaceQuotes quotes(message);
    for (std::size_t at = message.find(kSxidMarker); at != std::string::npos; at = message.find(kSxidMarker, at + 1)) {
      const auto report = sxid_report(message, at);
      if (!report || quotes.quoted(at)) continue;
      // From the switch's name where it leads this report ("nvidia-nvswitch3: SXid (...)").
      // "nvidia-nvswitchN: " just before it (a bounded look back: review 95 found a whole-line one quadratic).
      const std::size_t back = at > 40 ? at - 40 : 0;
      const std::size_t near = message.substr(back, at - back).rfind("nvidia-nvswitch");
      const std::size_t from = near == std::string::npos ? near : back + near;
      const bool named = from != std::string::npos && message.find(kSxidMarker, from) == at;
      visit_sxid({report->first, report->second, uptime, driver_text(message, named ? from : at)});
    }
  });
}

std::optional<double> kernel_log_whole_since(const std::string& text) {
  std::optional<double> since;
  bool kmsg = false;
  long long next = 0;  // the number the next record should have
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const auto header = kmsg_header(text.substr(start, end - start));
    start = end + 1;
    if (!header) continue;
    kmsg = true;
    if (header->sequence != next) since = header->uptime_s;  // a loss (or a first record past 0)
    next = header->sequence + 1;
  }
  if (kmsg) return since;
  // Timed text (dmesg, journalctl -o short-monotonic): a kernel logs from 0 s on, so a log whose earliest time is
  // past kFirstRecordBy holds none of the boot (review 93: a wrapped dmesg from 86400 s on read "since boot").
  // The earliest, not the first: reversed or concatenated logs are not in time order.
  constexpr double kFirstRecordBy = 60;
  std::optional<double> earliest;
  for_each_kernel_message(text, [&](double uptime, const std::string&) {
    if (uptime >= 0 && (!earliest || uptime < *earliest)) earliest = uptime;
  });
  if (earliest && *earliest > kFirstRecordBy) return earliest;
  return std::nullopt;
}

namespace {
// Why a path stat'ed as `st` is no kernel log to read, or "" where it is one: a regular file or /dev/kmsg
// (character device 1:11).
std::string not_a_log(const struct stat& st) {
  // /proc/kmsg is the syslog daemon's queue: a read blocks for new messages and takes them from it.
  struct stat proc {};
  if (::stat("/proc/kmsg", &proc) == 0 && st.st_dev == proc.st_dev && st.st_ino == proc.st_ino)
    return "/proc/kmsg is the syslog daemon's queue (reading it would take its messages): read /dev/kmsg";
  // A pipe reads once (every GPU of a node reads the log), and its writer's failure reads as an empty log that
  // passes; another device reads as another log or none (/dev/null, which a container may bind over /dev/kmsg).
  if (S_ISFIFO(st.st_mode))
    return "a pipe (it reads once, and a writer that failed reads as an empty log): save the log to a file "
           "(journalctl -k -o short-monotonic > kernel.log)";
  if (S_ISCHR(st.st_mode) && !(major(st.st_rdev) == 1 && minor(st.st_rdev) == 11))
    return "a device that is not /dev/kmsg (it would read as another log, or none)";
  if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode)) return "not a file or /dev/kmsg";
  return "";
}

// Why the text of a saved log (a regular file) is no kernel log, or "" where it may be one: a compressed rotation, an
// empty file, a binary file or what a failed `journalctl` writes would read as a log without XIDs, and pass. Any
// text is taken otherwise: logs are saved in many forms (dmesg with or without times, -x, -r, journalctl -o cat,
// json, short; grep's lines of them), and the XID parser reads them all. NUL bytes are skipped: a syslog file keeps
// runs of them where the node lost power while writing (the node, often, that hung on an XID).
std::string not_log_text(const std::string& text) {
  const auto starts = [&](const char* magic, std::size_t n) { return text.compare(0, n, magic, n) == 0; };
  if (starts("\x1f\x8b", 2) || starts("\xfd" "7zXZ", 5) || starts("\x28\xb5\x2f\xfd", 4) || starts("BZh", 3))
    return "compressed (gzip, xz, zstd or bzip2): decompress it first (zcat kern.log.2.gz > kernel.log)";
  std::size_t bytes = 0, control = 0;
  bool words = false;  // a line that is not journalctl's own note of having no entries
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line;
    for (std::size_t i = start; i < end; ++i)
      if (text[i] != '\0') line += text[i];
    start = end + 1;
    for (const char ch : line) {
      const auto c = static_cast<unsigned char>(ch);
      ++bytes;
      if ((c < 0x20 && c != '\t' && c != '\r' && c != 0x1b) || c == 0x7f) ++control;
    }
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty() && line != "-- No entries --" && line.rfind("No journal files were found", 0) != 0 &&
        line.rfind("-- Journal begins at ", 0) != 0 && line.rfind("-- Logs begin at ", 0) != 0)
      words = true;
  }
  if (bytes == 0) return "empty (a log since boot never is: did the command that saved it fail?)";
  // Text has next to no control characters; a binary file (random bytes: one in eight) has many.
  if (control * 20 > bytes) return "binary (" + std::to_string(control) + " control bytes in " +
                                   std::to_string(bytes) + "): not a text log";
  if (!words)
    return "journalctl's note that it found no entries, and nothing else (did the command that saved it fail?)";
  return "";
}
}  // namespace

std::string read_kernel_log(const std::string& path) {
  const auto refuse = [&](const std::string& why) {
    return IncompleteError("cannot read the kernel log " + path + ": " + why);
  };
  const auto permission = [](int err) {
    return err == EPERM || err == EACCES ? " (it needs root, CAP_SYSLOG or kernel.dmesg_restrict=0)" : "";
  };
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw refuse(std::strerror(errno));
  if (const std::string why = not_a_log(st); !why.empty()) throw refuse(why);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    throw refuse(std::string(std::strerror(err)) + permission(err));
  }
  // A file, or /dev/kmsg's ring buffer (at most a few MiB).
  const std::size_t cap = S_ISREG(st.st_mode) ? kMaxInputFileBytes : kMaxKernelRingBytes;
  std::string text;
  char record[16384];  // /dev/kmsg hands out one record a read, at most about 8 KiB
  for (;;) {
    const ssize_t n = ::read(fd, record, sizeof record);
    if (n > 0) {
      text.append(record, static_cast<std::size_t>(n));
      if (text.size() > cap) {
        ::close(fd);
        throw refuse("more than " + std::to_string(cap >> 20) + " MiB: not a kernel log");
      }
      continue;
    }
    if (n == 0) break;                               // the end of a file
    if (errno == EAGAIN) break;                      // /dev/kmsg: no newer record
    if (errno == EINTR || errno == EPIPE) continue;  // EPIPE: records overwritten while reading, skipped
    const int err = errno;
    ::close(fd);
    throw refuse(std::string(std::strerror(err)) + permission(err));
  }
  ::close(fd);
  if (S_ISREG(st.st_mode))
    if (const std::string why = not_log_text(text); !why.empty()) throw refuse(why);
  return text;
}

void check_kernel_log_variable() {
  const char* env = std::getenv(kKernelLogVariable);
  if (!env || !*env) return;
  const std::string path = env;
  const std::string head = std::string(kKernelLogVariable) + " names '" + excerpt(path) + "'";
  const std::string unset = " (unset it to read /dev/kmsg)";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw InputError(head + ": " + std::strerror(errno) + unset);
  if (const std::string why = not_a_log(st); !why.empty()) throw InputError(head + ": " + why + unset);
  // A file this user cannot read is theirs to fix; /dev/kmsg's permission (root, CAP_SYSLOG) is the node's,
  // which its health row names.
  if (S_ISREG(st.st_mode) && ::access(path.c_str(), R_OK) != 0)
    throw InputError(head + ": " + std::strerror(errno) + unset);
  // Its text as well: a file that holds no kernel log is not a log without XIDs.
  if (S_ISREG(st.st_mode))
    if (const std::string why = not_log_text(read_text_file(path)); !why.empty())
      throw InputError(head + ": " + why + unset);
}

std::string kernel_log_path() {
  const char* env = std::getenv(kKernelLogVariable);
  return env && *env ? env : kKernelLogPath;
}

}  // namespace ceilings
