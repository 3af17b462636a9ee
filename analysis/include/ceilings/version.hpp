// The git commit the running binary was built from: `git describe --always --dirty --abbrev=12` at build time
// ("unknown" outside a git checkout). Defined in a source the build generates (cmake/Version.cmake).
#pragma once

namespace ceilings {
const char* git_describe();
// The measurement code: 12 hex digits of a SHA-256 over the sources that decide a measured number (the bench, its
// harness, the kernels and the analysis code they compute with; cmake/GitDescribeScript.cmake lists them), taken
// at build time. Two profiles with one code were measured by the same code, whatever else changed between their
// commits; `fleet` groups GPUs by it.
const char* measurement_code();
}  // namespace ceilings
