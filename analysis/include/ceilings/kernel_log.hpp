// XID reports in the kernel log: the NVIDIA driver logs every XID it raises ("NVRM: Xid (PCI:0000:19:00): 79,
// pid=..., GPU has fallen off the bus."), so the log holds the XIDs since boot, those before a run included,
// which NVML's event watch (only while it listens) cannot see. Node health checks (Azure's NHC, Meta's GCM)
// scan it the same way.
#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ceilings {

// Where the kernel log is read by default; the environment variable names another file (a saved `dmesg`, or a
// test's log).
inline constexpr const char* kKernelLogPath = "/dev/kmsg";
inline constexpr const char* kKernelLogVariable = "CEILINGS_KERNEL_LOG";
// What a device (not a file) is read for at most: /dev/kmsg's ring buffer is a few MiB at most.
inline constexpr std::size_t kMaxKernelRingBytes = std::size_t{64} << 20;

struct KernelXid {
  long long xid = 0;
  double uptime_s = -1;  // seconds after boot, from the record's timestamp; -1 where the line has none
  std::string text;      // the driver's message, from "NVRM:"
};

// The XIDs of the GPU at `pci_bus_id` (NVML's "00000000:19:00.0" or sysfs's "0000:19:00.0") in kernel log
// text: /dev/kmsg records ("4,1234,5678901,-;NVRM: Xid ...", continuation lines starting with a space
// skipped, records user space wrote (priority 8 or more) left out) or `dmesg`/journal lines
// ("[ 5.678901] NVRM: Xid ...") or any other text (indented, several reports a line), read whole (a log across
// reboots too: its lines need not be in time order, so no boot boundary is trusted). Other GPUs' XIDs and lines that are not XID reports are left out. An
// address that is not DOMAIN:BUS:DEVICE is an IncompleteError: its XIDs could not be told from others'.
std::vector<KernelXid> parse_kernel_xids(const std::string& text, const std::string& pci_bus_id);
// The same, each handed to `visit` as it is read, none kept: a log of millions of XIDs in bounded memory.
void for_each_kernel_xid(const std::string& text, const std::string& pci_bus_id,
                         const std::function<void(KernelXid&&)>& visit);

// NVSwitch errors ("SXids") in the kernel log: the NVSwitch driver logs most as several lines, one of them with
// its severity: "nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 22013, Non-fatal, Link 44 Minion Link DLREQ
// interrupt" (Fatal, Non-fatal or Correctable); a switch failure (overheat shutdown, an I/O failure, a firmware
// halt) as one line with none, which counts as fatal (other lines without one are warnings: not events). A fatal one stalls the NVLink traffic through that switch port until the node (GPUs and switches)
// is reset (Fabric Manager user guide). They belong to the node's fabric, not to one GPU.
struct KernelSxid {
  long long sxid = 0;
  bool fatal = false;
  double uptime_s = -1;
  std::string text;  // the driver's message, from "nvidia-nvswitch" (or "SXid")
};
// The SXid events, every switch's, in log order (the Data and Severity-number lines of an event left out); read
// as parse_kernel_xids reads records.
std::vector<KernelSxid> parse_kernel_sxids(const std::string& text);
void for_each_kernel_sxid(const std::string& text, const std::function<void(KernelSxid&&)>& visit);

// Where /dev/kmsg records (numbered from 0 at boot) show that earlier ones were lost, the ring buffer having
// overwritten them (the first record's number is not 0, or numbers skip while it was read): the time after boot
// of the first record after the last loss, from which the log is whole (0 where that record has no time). In timed
// text without kmsg records (dmesg, journalctl -o short-monotonic): its earliest time, where that is past 60 s (a
// kernel logs from 0 s on: a wrapped or cut log). nullopt where nothing was lost, or the text does not tell.
std::optional<double> kernel_log_whole_since(const std::string& text);

// The kernel log's text: /dev/kmsg read without blocking up to its newest record (records the ring buffer
// overwrote while reading are skipped), or a regular file; never /proc/kmsg (the syslog daemon's queue), a
// pipe (it reads once, and a writer that failed reads as an empty log) or another device; a file whose text is no
// kernel log (empty, compressed, binary, or no line a kernel message) is refused as well, since it would read as a
// log without XIDs. Throws IncompleteError naming the path and the cause (/dev/kmsg needs root, CAP_SYSLOG or
// kernel.dmesg_restrict=0).
std::string read_kernel_log(const std::string& path);

// A kernel log without GPU errors, one /dev/kmsg record: what the fault drills (self-test, tests) give `health` where
// a case names no log of its own (an empty file is no log: read_kernel_log refuses it).
inline constexpr const char* kQuietKernelLog = "6,0,0,-;Linux version (a kernel log without GPU errors)\n";

// The path to read: $CEILINGS_KERNEL_LOG where set and not empty, else /dev/kmsg.
std::string kernel_log_path();
// A $CEILINGS_KERNEL_LOG that names no readable file or /dev/kmsg (a typo would leave the XIDs before a run
// unjudged), or a file whose text is no kernel log (read_kernel_log), is an InputError, before any work.
void check_kernel_log_variable();

}  // namespace ceilings
