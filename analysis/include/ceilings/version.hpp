// The git commit the running binary was built from: `git describe --always --dirty --abbrev=12` at build time
// ("unknown" outside a git checkout). Defined in a source the build generates (cmake/Version.cmake).
#pragma once

namespace ceilings {
const char* git_describe();
}  // namespace ceilings
