# Every external dependency, found once: the CUDA Toolkit, Google Benchmark, nlohmann/json,
# CLI11 and GoogleTest. No vendored copies; scripts/install-deps.sh installs them on Debian/Ubuntu.
# Machines without packages (the GPU machine) may point at carried copies instead:
#   CEILINGS_CLI11_INCLUDE_DIR  a folder holding CLI/CLI.hpp
#   CEILINGS_GTEST_SOURCE_DIR   GoogleTest's source tree (built here with the project)
find_package(Threads REQUIRED)

# A header or library installed without its CMake package files (seen on images that copy them into
# /usr/include): found by name instead, as an imported target of the same name. One whose package files say it is
# older than the minimum is refused, not taken by name (review 107: Ubuntu 22.04's Google Benchmark 1.6 slipped
# past the 1.7 asked for).
# Only where every version considered is older: one refused for another reason (a newer major version whose package
# files take no older request) is still found by name, as before (review 110).
function(ceilings_refuse_too_old package minimum)
  foreach(version IN LISTS ${package}_CONSIDERED_VERSIONS)
    if(NOT version VERSION_LESS minimum)
      return()
    endif()
  endforeach()
  if(${package}_CONSIDERED_VERSIONS)
    message(FATAL_ERROR "${package} ${${package}_CONSIDERED_VERSIONS} found (${${package}_CONSIDERED_CONFIGS}); "
                        "ceilings needs ${minimum} or newer: install a newer one (Debian 12 and Ubuntu 24.04 ship it)")
  endif()
endfunction()
find_package(nlohmann_json 3.10 QUIET)
if(NOT nlohmann_json_FOUND)
  ceilings_refuse_too_old(nlohmann_json 3.10)
  find_path(CEILINGS_NLOHMANN_JSON_INCLUDE nlohmann/json.hpp)
  if(NOT CEILINGS_NLOHMANN_JSON_INCLUDE)
    message(FATAL_ERROR "nlohmann/json not found: run scripts/install-deps.sh")
  endif()
  add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
  target_include_directories(nlohmann_json::nlohmann_json INTERFACE ${CEILINGS_NLOHMANN_JSON_INCLUDE})
endif()

find_package(CLI11 2.1 QUIET)
if(NOT CLI11_FOUND)
  ceilings_refuse_too_old(CLI11 2.1)
  find_path(CEILINGS_CLI11_INCLUDE CLI/CLI.hpp HINTS ${CEILINGS_CLI11_INCLUDE_DIR})
  if(NOT CEILINGS_CLI11_INCLUDE)
    message(FATAL_ERROR "CLI11 not found: run scripts/install-deps.sh, or set CEILINGS_CLI11_INCLUDE_DIR")
  endif()
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  target_include_directories(CLI11::CLI11 INTERFACE ${CEILINGS_CLI11_INCLUDE})
endif()

find_package(benchmark 1.7 QUIET)  # ceilings-bench, and its checkpoint reporter (tested without CUDA)
if(NOT benchmark_FOUND)
  ceilings_refuse_too_old(benchmark 1.7)
  find_path(CEILINGS_BENCHMARK_INCLUDE benchmark/benchmark.h)
  find_library(CEILINGS_BENCHMARK_LIBRARY benchmark)
  if(NOT CEILINGS_BENCHMARK_INCLUDE OR NOT CEILINGS_BENCHMARK_LIBRARY)
    message(FATAL_ERROR "Google Benchmark not found: run scripts/install-deps.sh")
  endif()
  add_library(benchmark::benchmark UNKNOWN IMPORTED)
  set_target_properties(benchmark::benchmark PROPERTIES IMPORTED_LOCATION ${CEILINGS_BENCHMARK_LIBRARY}
                        INTERFACE_INCLUDE_DIRECTORIES ${CEILINGS_BENCHMARK_INCLUDE}
                        INTERFACE_LINK_LIBRARIES Threads::Threads)
endif()
if(CEILINGS_BUILD_CUDA)
  find_package(CUDAToolkit 12.0 REQUIRED)
endif()

if(CEILINGS_BUILD_TESTS)
  find_package(GTest 1.10 QUIET)
  if(NOT GTest_FOUND)
    if(NOT CEILINGS_GTEST_SOURCE_DIR)
      message(FATAL_ERROR "GoogleTest not found: run scripts/install-deps.sh, or set CEILINGS_GTEST_SOURCE_DIR")
    endif()
    set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
    add_subdirectory(${CEILINGS_GTEST_SOURCE_DIR} ${PROJECT_BINARY_DIR}/_deps/googletest EXCLUDE_FROM_ALL)
    # GoogleTest 1.11 and later define these aliases themselves; older trees do not.
    if(NOT TARGET GTest::gtest_main)
      add_library(GTest::gtest_main ALIAS gtest_main)
    endif()
    if(NOT TARGET GTest::gmock)
      add_library(GTest::gmock ALIAS gmock)
    endif()
  endif()
  include(GoogleTest)
endif()
