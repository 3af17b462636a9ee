# The tool version and the git commit recorded in every profile (`--version`, tool.git).
# The commit is read at every build, not once at configure time: an incremental build after new commits
# would otherwise name the code it was configured at. The generated source is rewritten only when the
# description changes, so an unchanged tree relinks nothing.
set(CEILINGS_VERSION "${PROJECT_VERSION}")
set(CEILINGS_GIT_SOURCE "${PROJECT_BINARY_DIR}/generated/git_describe.cpp")
# How the measuring code is compiled is part of the measurement code: the configuration ($<CONFIG>, which a
# multi-config generator sets per build), the CUDA architectures (machine code for the GPU or PTX the driver
# compiles), the compilers and their flags (the host code times launches and pageable copies). Commas for list
# separators: a semicolon would split the argument. (A multi-config generator's configurations share the
# generated file: build one at a time.)
string(TOUPPER "${CMAKE_BUILD_TYPE}" _ceilings_config)
set(_ceilings_build_config
    "$<CONFIG> cuda ${CMAKE_CUDA_COMPILER_ID} ${CMAKE_CUDA_COMPILER_VERSION} archs ${CMAKE_CUDA_ARCHITECTURES} flags ${CMAKE_CUDA_FLAGS} ${CMAKE_CUDA_FLAGS_${_ceilings_config}} cxx ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION} flags ${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${_ceilings_config}}")
string(REPLACE ";" "," _ceilings_build_config "${_ceilings_build_config}")
add_custom_target(ceilings_git_describe
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DOUT=${CEILINGS_GIT_SOURCE}
          "-DBUILD_CONFIG=${_ceilings_build_config}"
          -P ${PROJECT_SOURCE_DIR}/cmake/GitDescribeScript.cmake
  BYPRODUCTS ${CEILINGS_GIT_SOURCE}
  COMMENT "Reading the git commit"
  VERBATIM)
# ceilings::git_describe() (ceilings/version.hpp), for `ceilings` and `ceilings-bench`.
add_library(ceilings_version STATIC ${CEILINGS_GIT_SOURCE})
add_dependencies(ceilings_version ceilings_git_describe)
target_include_directories(ceilings_version PUBLIC ${PROJECT_SOURCE_DIR}/analysis/include)
