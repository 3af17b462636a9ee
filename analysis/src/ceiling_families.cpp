// The ceiling families the analysis knows (see ceiling_families.hpp). A new family: one row here places it (its
// unit checked, its rows ordered, its level known); without one it is read as a family from a newer bench.
#include "ceilings/ceiling_families.hpp"

#include <algorithm>
#include <initializer_list>

namespace ceilings {

const std::vector<CeilingFamily>& ceiling_families() {
  static const std::vector<CeilingFamily> table{
      {"gemm", FamilyLevel::kCompute},       {"fma", FamilyLevel::kCompute},
      {"smem", FamilyLevel::kOnChip},        {"l2", FamilyLevel::kOnChip},
      {"hbm", FamilyLevel::kDeviceMemory},   {"pcie", FamilyLevel::kHostLink},
      {"nvlink", FamilyLevel::kPeerLink},    {"latency", FamilyLevel::kLatency},
  };
  return table;
}

std::string family_of(const std::string& ceiling_name) { return ceiling_name.substr(0, ceiling_name.find('.')); }

const CeilingFamily* find_family(const std::string& ceiling_name) {
  const std::string f = family_of(ceiling_name);
  const auto& table = ceiling_families();
  const auto it = std::find_if(table.begin(), table.end(), [&](const CeilingFamily& e) { return f == e.name; });
  return it == table.end() ? nullptr : &*it;
}

std::size_t family_rank(const std::string& ceiling_name) {
  const CeilingFamily* f = find_family(ceiling_name);
  return f ? static_cast<std::size_t>(f - ceiling_families().data()) : ceiling_families().size();
}

std::string ceiling_unit_for(const std::string& ceiling_name) {
  const CeilingFamily* f = find_family(ceiling_name);
  if (!f) return "";  // a family this build does not know (a newly added one): its profile records the unit
  switch (f->level) {
    case FamilyLevel::kCompute: {
      // Integer types count operations (gemm.int8, its _sustained and _ref8192; an fma.int32 to come),
      // floating-point ones FLOPs. A variant of neither kind (an fma.dp4a a newer bench adds) has the unit its
      // profile records, as a new family does: a reader must not refuse a newer writer's whole profile for it.
      const std::string variant = ceiling_name.substr(std::min(ceiling_name.size(), std::string(f->name).size() + 1));
      if (variant.rfind("int", 0) == 0) return "OP/s";
      for (const char* t : {"fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "fp6", "fp4"})
        if (variant.rfind(t, 0) == 0) return "FLOP/s";
      return "";
    }
    case FamilyLevel::kOnChip:
    case FamilyLevel::kDeviceMemory:
    case FamilyLevel::kHostLink:
    case FamilyLevel::kPeerLink: return "B/s";
    case FamilyLevel::kLatency: return "s";
  }
  return "";
}

namespace {
bool at_level(const std::string& ceiling_name, std::initializer_list<FamilyLevel> levels) {
  const CeilingFamily* f = find_family(ceiling_name);
  return f && std::find(levels.begin(), levels.end(), f->level) != levels.end();
}
}  // namespace

bool holds_weights(const std::string& ceiling_name) {
  return at_level(ceiling_name, {FamilyLevel::kDeviceMemory, FamilyLevel::kHostLink, FamilyLevel::kPeerLink});
}
bool is_on_chip(const std::string& ceiling_name) { return at_level(ceiling_name, {FamilyLevel::kOnChip}); }
bool reaches_other_gpus(const std::string& ceiling_name) { return at_level(ceiling_name, {FamilyLevel::kPeerLink}); }

}  // namespace ceilings
