# SPDX-License-Identifier: GPL-3.0-or-later
#
# Runs a program at build time and keeps what it prints: the man pages and the bash completion
# (packaging/CMakeLists.txt).
#   cmake -DOUTPUT=FILE [-DGZIP=gzip] -P generate.cmake -- PROGRAM [ARG...]
# A program that fails or prints nothing fails the build, and no half-written OUTPUT is left for
# the next build to take as done. With GZIP the output is compressed as Debian wants man pages
# (gzip -9n: no file name or time in the header, so the same page gives the same bytes).
set(_command "")
set(_after_separator OFF)
math(EXPR _last "${CMAKE_ARGC} - 1")
foreach(_i RANGE ${_last})
  if(_after_separator)
    list(APPEND _command "${CMAKE_ARGV${_i}}")
  elseif(CMAKE_ARGV${_i} STREQUAL "--")
    set(_after_separator ON)
  endif()
endforeach()
if(NOT OUTPUT OR NOT _command)
  message(FATAL_ERROR "usage: cmake -DOUTPUT=FILE [-DGZIP=gzip] -P generate.cmake -- PROGRAM [ARG...]")
endif()

set(_plain "${OUTPUT}.tmp")
execute_process(COMMAND ${_command} OUTPUT_FILE "${_plain}" RESULT_VARIABLE _rc ERROR_VARIABLE _errors)
file(SIZE "${_plain}" _size)
if(NOT _rc EQUAL 0 OR _size EQUAL 0)
  file(REMOVE "${_plain}")
  list(JOIN _command " " _shown)
  message(FATAL_ERROR "${_shown}: exit status ${_rc}, ${_size} bytes of output\n${_errors}")
endif()
if(GZIP)
  execute_process(COMMAND "${GZIP}" -9nc "${_plain}" OUTPUT_FILE "${OUTPUT}" RESULT_VARIABLE _rc)
  file(REMOVE "${_plain}")
  if(NOT _rc EQUAL 0)
    file(REMOVE "${OUTPUT}")
    message(FATAL_ERROR "${GZIP} failed on ${_plain}")
  endif()
else()
  file(RENAME "${_plain}" "${OUTPUT}")
endif()
