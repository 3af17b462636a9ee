// What the analysis knows of each ceiling family (a ceiling name's first part: "hbm" of "hbm.copy"), in one
// table (ceiling_families.cpp): the unit its ceilings are measured in, where in the machine it sits, and the
// order compare's table lists it in (show keeps the order the bench measured in). A family not in the table (one a newer ceilings-bench adds) is still read,
// shown and judged: in the unit its profile records, listed after the known ones.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace ceilings {

// Where a family's ceilings sit, compute first, then the memory hierarchy from the SM outwards.
enum class FamilyLevel {
  kCompute,       // gemm, fma: FLOP/s (OP/s for an integer type)
  kOnChip,        // smem, l2: bandwidth inside the GPU, where no model's weights are stored
  kDeviceMemory,  // hbm
  kHostLink,      // pcie: to and from the host (offloaded weights are read over it)
  kPeerLink,      // nvlink: to other GPUs (a peer case reaches into them while it runs)
  kLatency,       // latency: seconds
};

struct CeilingFamily {
  const char* name;
  FamilyLevel level;
};

// The known families in the order compare lists them.
const std::vector<CeilingFamily>& ceiling_families();

// "hbm" of "hbm.copy" (the whole name where it has no dot).
std::string family_of(const std::string& ceiling_name);
// The ceiling's family entry, or nullptr for a family this build does not know.
const CeilingFamily* find_family(const std::string& ceiling_name);
// The family's place in ceiling_families(); a family this build does not know ranks after all of them.
std::size_t family_rank(const std::string& ceiling_name);

// The unit a ceiling is measured in, from its family ("hbm.copy" -> "B/s"); "" for an unknown family.
// (gemm and fma: OP/s for an int* variant, FLOP/s for a floating-point type's, "" for a variant of neither kind.)
std::string ceiling_unit_for(const std::string& ceiling_name);

// Whether a model's weights can be stored where the ceiling reads from (device memory, or the host or a peer for
// offloaded weights): what MBU may be taken against. An allow-list: an unknown family is not.
bool holds_weights(const std::string& ceiling_name);
// Whether the ceiling's family is bandwidth inside the GPU (l2, smem).
bool is_on_chip(const std::string& ceiling_name);
// Whether the ceiling's cases reach into other GPUs while they run (nvlink: peer buffers, copies and kernels).
bool reaches_other_gpus(const std::string& ceiling_name);

}  // namespace ceilings
