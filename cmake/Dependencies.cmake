# Every external dependency, found once: the CUDA Toolkit, Google Benchmark, nlohmann/json,
# CLI11 and GoogleTest. No vendored copies; scripts/install-deps.sh installs them on Debian/Ubuntu.
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 2.1 REQUIRED)
find_package(Threads REQUIRED)
if(CEILINGS_BUILD_CUDA)
  find_package(CUDAToolkit 12.0 REQUIRED)
  find_package(benchmark 1.7 REQUIRED)
endif()
if(CEILINGS_BUILD_TESTS)
  find_package(GTest 1.10 REQUIRED)
  include(GoogleTest)
endif()
