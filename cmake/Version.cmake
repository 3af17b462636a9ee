# The tool version and git commit recorded in every profile.
execute_process(COMMAND git -C "${CMAKE_SOURCE_DIR}" describe --always --dirty --abbrev=12
                OUTPUT_VARIABLE CEILINGS_GIT_DESCRIBE ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
if(CEILINGS_GIT_DESCRIBE STREQUAL "")
  set(CEILINGS_GIT_DESCRIBE "unknown")
endif()
set(CEILINGS_VERSION "${PROJECT_VERSION}")
