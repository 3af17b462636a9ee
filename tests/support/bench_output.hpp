// Google Benchmark JSON in the shape ceilings-bench writes it, for the converter tests: a hand-written
// H200 context around the benchmark entries a test supplies. Not a captured measurement.
#pragma once
#include <utility>
#include <vector>

#include "ceilings/bench_json.hpp"

namespace ceilings::test {

inline json h200_device_context() {
  return {{"index", 0},
          {"name", "NVIDIA H200"},
          {"uuid", "GPU-00000000-1111-2222-3333-444444444444"},
          {"pci_bus_id", "0000:19:00.0"},
          {"compute_capability", "9.0"},
          {"sm_count", 132},
          {"memory_bytes", 150754820096ULL},
          {"l2_bytes", 62914560},
          {"cuda_runtime", "13.0"},
          {"cublas", "13.1.0"},
          {"driver", "580.95.05"},
          {"ecc", true},
          {"clocks_max_hz", {{"sm", 1.98e9}, {"memory", 3.201e9}}},
          {"power_limit_w", 700},
          {"pcie", {{"gen", 5}, {"width", 16}, {"max_gen", 5}, {"max_width", 16}}}};
}

// A vector, not a json: `bench_output({entry})` with a json parameter is an array of one entry under
// GCC but a copy of the entry itself under Clang (brace-initialising nlohmann::json from one json).
inline json bench_output(const std::vector<json>& benchmarks) {
  return {{"context",
           {{"date", "2026-11-30T12:00:00+00:00"},
            {"host_name", "node001"},
            {kContextDevice, h200_device_context().dump()},
            {kContextHost, json{{"hostname", "node001"}, {"cpu", "x"}, {"numa_node", 1}}.dump()},
            {kContextVersion, "0.1.0"},
            {kContextGit, "abc"},
            {kContextMeasurementCode, "0123456789ab"}}},
          {"benchmarks", json(benchmarks)}};
}

}  // namespace ceilings::test
