# SPDX-License-Identifier: GPL-3.0-or-later
# Fails when a C++ source is not formatted as .clang-format says. Fix with:
#   clang-format -i $(git ls-files '*.cpp' '*.h')
# cmake -DCLANG_FORMAT=... -DSOURCE_DIR=... -P format_check.cmake
file(GLOB_RECURSE sources LIST_DIRECTORIES false
  "${SOURCE_DIR}/app/*.cpp" "${SOURCE_DIR}/app/*.h"
  "${SOURCE_DIR}/core/*.cpp" "${SOURCE_DIR}/core/*.h"
  "${SOURCE_DIR}/remote/*.cpp" "${SOURCE_DIR}/remote/*.h"
  "${SOURCE_DIR}/trainer/*.cpp" "${SOURCE_DIR}/trainer/*.h"
  "${SOURCE_DIR}/tests/*.cpp" "${SOURCE_DIR}/tests/*.h"
  "${SOURCE_DIR}/bench/*.cpp" "${SOURCE_DIR}/bench/*.h")
# Copies of other projects keep their own formatting.
list(FILTER sources EXCLUDE REGEX "/third_party/")
execute_process(COMMAND "${CLANG_FORMAT}" --dry-run --Werror ${sources}
  RESULT_VARIABLE rc ERROR_VARIABLE diagnostics)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${diagnostics}\nSome files are not formatted: run clang-format -i on them.")
endif()
list(LENGTH sources count)
message(STATUS "${count} files formatted")
