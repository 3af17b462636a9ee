# Every external dependency, found once: the CUDA Toolkit, Google Benchmark, nlohmann/json,
# CLI11 and GoogleTest. No vendored copies; scripts/install-deps.sh installs them on Debian/Ubuntu.
# Machines without packages (the GPU machine) may point at carried copies instead:
#   CEILINGS_CLI11_INCLUDE_DIR  a folder holding CLI/CLI.hpp
#   CEILINGS_GTEST_SOURCE_DIR   GoogleTest's source tree (built here with the project)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(Threads REQUIRED)

find_package(CLI11 2.1 QUIET)
if(NOT CLI11_FOUND)
  find_path(CEILINGS_CLI11_INCLUDE CLI/CLI.hpp HINTS ${CEILINGS_CLI11_INCLUDE_DIR})
  if(NOT CEILINGS_CLI11_INCLUDE)
    message(FATAL_ERROR "CLI11 not found: run scripts/install-deps.sh, or set CEILINGS_CLI11_INCLUDE_DIR")
  endif()
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  target_include_directories(CLI11::CLI11 INTERFACE ${CEILINGS_CLI11_INCLUDE})
endif()

find_package(benchmark 1.7 REQUIRED)  # ceilings-bench, and its checkpoint reporter (tested without CUDA)
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
    add_library(GTest::gtest_main ALIAS gtest_main)
    add_library(GTest::gmock ALIAS gmock)
  endif()
  include(GoogleTest)
endif()
