// Turns ceilings-bench's Google Benchmark JSON into a ceilings.profile/1 profile.
//
// Conventions ceilings-bench follows (bench/harness/measure.cu's report() writes them):
//  - a benchmark named "family/variant[/arg:value...]" feeds the ceiling "family.variant";
//  - its value is one of the counters bytes_per_second (B/s), flop_per_second (FLOP/s),
//    op_per_second (OP/s) or latency_s (s, lower is better);
//  - cv, samples, verified, throttled, throttle_reasons and the telemetry counters
//    (telemetry, sm_clock_hz, mem_clock_hz, power_w, temp_c) describe the measurement;
//    every other counter lands in the ceiling's detail;
//  - counter candidate = 0 marks a sweep point that is reported in detail but is not a ceiling;
//  - a failed benchmark's error message starting with "unsupported:" means skipped, any other
//    message is an error (verification failure, CUDA error).
// Across variants of one ceiling (launch shapes, sizes, algorithms) the best value wins and its
// benchmark name and arguments go into the detail. The fixed 8192^3 GEMM (gemm/<type>_ref8192) is
// also a variant of gemm.<type>: the search screened that shape too, and whichever configuration
// measured faster is the attainable peak.
// The device's PCIe link: the generation is the best reading under load (links train down at idle),
// the width the narrowest one seen (a link that lost lanes during the run counts as narrow).
#pragma once
#include <set>
#include "ceilings/profile.hpp"

namespace ceilings {

// Context keys ceilings-bench adds to the Google Benchmark context (JSON text values).
inline constexpr const char* kContextDevice = "ceilings_device";
inline constexpr const char* kContextHost = "ceilings_host";
inline constexpr const char* kContextVersion = "ceilings_version";
inline constexpr const char* kContextGit = "ceilings_git";
inline constexpr const char* kContextMeasurementCode = "ceilings_measurement_code";
inline constexpr const char* kContextOptions = "ceilings_options";  // {"quick": bool, sampling options, ...}

// Reads Google Benchmark's JSON output, whose non-finite counters are the bare tokens NaN, Infinity and
// -Infinity (not JSON): they are read as null. Anything else that is not JSON is an InputError.
json parse_benchmark_json_text(const std::string& text, const std::string& what);
// Google Benchmark's own keys in a benchmark entry (name, threads, iterations, ...); every other numeric key
// is a user counter. A counter must not take one of these names.
const std::set<std::string>& benchmark_keys();
json read_benchmark_json_file(const std::string& path);

// A --benchmark_filter value that selects exactly these benchmark names. Google Benchmark compiles its
// filter as a POSIX extended regex (std::regex with the `extended` grammar, or regcomp(REG_EXTENDED)),
// so only ERE's special characters are escaped: a backslash before any other character (']', '}', '/',
// ':') is an error for std::regex in a strict (-std=c++NN) build, and the filter would match nothing.
std::string exact_benchmark_filter(const std::vector<std::string>& names);

// The ceiling a benchmark case feeds and its run name: "gemm/bf16/m:8192/manual_time" is gemm.bf16, run
// gemm/bf16/m:8192. A name not of the form family/variant[/...] comes back as it is, with no run name.
struct CaseName {
  std::string ceiling, run_name;
};
CaseName case_name(const std::string& benchmark_name);

// Whether a bench output carries ceilings-bench's device record (context.ceilings_device) that parses into a device.
bool has_device_context(const json& benchmark_output);
// Where `later` measured another GPU than `first` (by UUID or PCI bus id), the two, said; "" where they are
// one GPU or either output cannot say.
std::string other_device(const json& first, const json& later);
// Where `output` measured a GPU at another PCI bus id than `pci_bus_id`, or of another UUID than `uuid` (those
// `--ceilings_list_devices` gave for the index the run was started for; MIG instances share their GPU's bus id), the
// two, said; "" where they agree or either is not known.
std::string unlisted_device(const json& output, const std::string& pci_bus_id, const std::string& uuid = "");

// Context problems (not ceilings-bench output) throw InputError; an unusable entry (no value counter,
// unverified, a malformed name) becomes an entry of the profile's errors and the rest converts.
Profile profile_from_benchmark_json(const json& benchmark_output);

}  // namespace ceilings
