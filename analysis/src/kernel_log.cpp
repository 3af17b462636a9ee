// XID reports in the kernel log (see kernel_log.hpp).
#include "ceilings/kernel_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

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

// The XID report in one message, when it is one: "NVRM: Xid (PCI:0000:19:00): 79, ..." (older drivers write
// "(0000:19:00)" without "PCI:").
std::optional<std::pair<PciAddress, long long>> xid_report(const std::string& message) {
  const std::size_t at = message.find("NVRM: Xid (");
  if (at == std::string::npos) return std::nullopt;
  std::size_t i = at + std::strlen("NVRM: Xid (");
  if (message.compare(i, 4, "PCI:") == 0) i += 4;
  const auto address = pci_address(message, i);
  if (!address) return std::nullopt;
  const std::size_t close = message.find("):", i);
  if (close == std::string::npos) return std::nullopt;
  i = close + 2;
  while (i < message.size() && message[i] == ' ') ++i;
  std::size_t digits = 0;
  long long xid = 0;
  while (i < message.size() && std::isdigit(static_cast<unsigned char>(message[i])) && digits < 6) {
    xid = xid * 10 + (message[i++] - '0');
    ++digits;
  }
  if (digits == 0 || (i < message.size() && message[i] != ',' && message[i] != ' ')) return std::nullopt;
  return std::make_pair(*address, xid);
}

}  // namespace

std::vector<KernelXid> parse_kernel_xids(const std::string& text, const std::string& pci_bus_id) {
  std::vector<KernelXid> out;
  const auto gpu = pci_address(pci_bus_id);
  if (!gpu) return out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty() || line[0] == ' ') continue;  // a /dev/kmsg record's KEY=value continuation
    double uptime = -1;
    std::string message = line;
    if (line[0] == '[') {  // dmesg: "[  123.456789] message"
      const std::size_t close = line.find(']');
      if (close != std::string::npos) {
        char* parsed_end = nullptr;
        const std::string stamp = line.substr(1, close - 1);
        const double v = std::strtod(stamp.c_str(), &parsed_end);
        if (parsed_end != stamp.c_str()) uptime = v;
      }
    } else if (std::isdigit(static_cast<unsigned char>(line[0]))) {  // /dev/kmsg: "PRI,SEQ,USEC,FLAGS;message"
      const std::size_t semi = line.find(';');
      const std::size_t c1 = line.find(',');
      const std::size_t c2 = c1 == std::string::npos ? c1 : line.find(',', c1 + 1);
      if (semi != std::string::npos && c2 != std::string::npos && c2 < semi) {
        uptime = std::strtod(line.c_str() + c2 + 1, nullptr) * 1e-6;
        message = line.substr(semi + 1);
      }
    }
    const auto report = xid_report(message);
    if (!report || !(report->first == *gpu)) continue;
    std::string excerpt = message.substr(message.find("NVRM:"), 300);
    for (char& c : excerpt)
      if (std::iscntrl(static_cast<unsigned char>(c))) c = '?';  // shown on a terminal: no control characters
    out.push_back({report->second, uptime, excerpt});
  }
  return out;
}

std::string read_kernel_log(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw IncompleteError("cannot read the kernel log " + path + ": " + std::strerror(errno));
  if (S_ISREG(st.st_mode)) {
    try {
      return read_text_file(path);
    } catch (const Error& e) {
      throw IncompleteError(std::string("cannot read the kernel log: ") + e.what());
    }
  }
  if (!S_ISCHR(st.st_mode)) throw IncompleteError("the kernel log " + path + " is not a file or /dev/kmsg");
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    throw IncompleteError("cannot read the kernel log " + path + ": " + std::strerror(err) +
                (err == EPERM || err == EACCES ? " (it needs root, CAP_SYSLOG or kernel.dmesg_restrict=0)" : ""));
  }
  std::string text;
  char record[16384];  // /dev/kmsg hands out one record a read, at most about 8 KiB
  for (;;) {
    const ssize_t n = ::read(fd, record, sizeof record);
    if (n > 0) {
      text.append(record, static_cast<std::size_t>(n));
      if (text.size() > kMaxInputFileBytes) {
        ::close(fd);
        throw IncompleteError("the kernel log " + path + " is larger than " + std::to_string(kMaxInputFileBytes >> 20) +
                    " MiB: not a log this reads");
      }
      continue;
    }
    if (n == 0) break;                         // end of a file
    if (errno == EAGAIN) break;                // /dev/kmsg: no newer record
    if (errno == EINTR || errno == EPIPE) continue;  // EPIPE: records overwritten while reading, skipped
    const int err = errno;
    ::close(fd);
    throw IncompleteError("cannot read the kernel log " + path + ": " + std::strerror(err) +
                (err == EPERM || err == EACCES ? " (it needs root, CAP_SYSLOG or kernel.dmesg_restrict=0)" : ""));
  }
  ::close(fd);
  return text;
}

std::string kernel_log_path() {
  const char* env = std::getenv(kKernelLogVariable);
  return env && *env ? env : kKernelLogPath;
}

}  // namespace ceilings
