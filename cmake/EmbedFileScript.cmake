# Script half of ceilings_embed_file: writes the file's bytes as a char array (no length limits,
# no escaping issues).
file(READ "${IN}" _hex HEX)
string(LENGTH "${_hex}" _len)
math(EXPR _bytes "${_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," _arr "${_hex}")
file(WRITE "${OUT}.tmp"
  "// Generated from ${IN}; do not edit.\n#include <string_view>\n"
  "namespace ceilings::embedded {\nstatic const char data_${SYMBOL}[] = {${_arr} 0};\n"
  "std::string_view ${SYMBOL}() { return {data_${SYMBOL}, ${_bytes}}; }\n}\n")
file(RENAME "${OUT}.tmp" "${OUT}")
