# ceilings_embed_file(TARGET target FILE path SYMBOL name): compiles the file's text into the
# target as `std::string_view name()` (namespace ceilings::embedded), rebuilt when the file changes.
function(ceilings_embed_file)
  cmake_parse_arguments(ARG "" "TARGET;FILE;SYMBOL" "" ${ARGN})
  set(_out "${CMAKE_CURRENT_BINARY_DIR}/embedded_${ARG_SYMBOL}.cpp")
  add_custom_command(
    OUTPUT "${_out}"
    COMMAND ${CMAKE_COMMAND} -DIN=${ARG_FILE} -DOUT=${_out} -DSYMBOL=${ARG_SYMBOL}
            -P "${CMAKE_SOURCE_DIR}/cmake/EmbedFileScript.cmake"
    DEPENDS "${ARG_FILE}" "${CMAKE_SOURCE_DIR}/cmake/EmbedFileScript.cmake"
    COMMENT "Embedding ${ARG_FILE}")
  target_sources(${ARG_TARGET} PRIVATE "${_out}")
endfunction()
