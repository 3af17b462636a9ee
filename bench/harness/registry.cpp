// The family registry.
#include "registry.hpp"

#include <algorithm>
#include <vector>

namespace ceilings::bench {

namespace {

struct Family {
  std::string name;
  int order;
  RegisterHook register_cases;
  OptionsHook add_options;
};

std::vector<Family>& families() {
  static std::vector<Family> all;
  return all;
}

Context& context_storage() {
  static Context ctx;
  return ctx;
}

void sort_families() {
  std::sort(families().begin(), families().end(),
            [](const Family& a, const Family& b) { return a.order != b.order ? a.order < b.order : a.name < b.name; });
}

}  // namespace

bool add_family(const char* name, int order, RegisterHook register_cases, OptionsHook add_options) {
  families().push_back({name, order, register_cases, add_options});
  return true;
}

void add_all_options(CLI::App& app) {
  sort_families();
  for (const Family& f : families())
    if (f.add_options) f.add_options(app);
}

void register_all(const Context& ctx) {
  sort_families();
  for (const Family& f : families()) f.register_cases(ctx);
}

const Context& context() { return context_storage(); }
void set_context(Context ctx) { context_storage() = std::move(ctx); }

}  // namespace ceilings::bench
