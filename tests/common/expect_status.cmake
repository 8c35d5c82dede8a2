# SPDX-License-Identifier: GPL-3.0-or-later
# Runs a program and checks its exact exit status and what it printed on stderr, for CLI
# conventions that CTest's WILL_FAIL (any non-zero passes) cannot pin:
#   cmake -DPROGRAM=... -DARGS="a;b" -DSTATUS=2 -DSTDERR_REGEX=... -DSTDOUT_EMPTY=ON -P expect_status.cmake
execute_process(COMMAND "${PROGRAM}" ${ARGS}
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status STREQUAL "${STATUS}")
  message(FATAL_ERROR "${PROGRAM} ${ARGS}: exit status '${status}', expected ${STATUS}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(DEFINED STDERR_REGEX AND NOT err MATCHES "${STDERR_REGEX}")
  message(FATAL_ERROR "${PROGRAM} ${ARGS}: stderr does not match '${STDERR_REGEX}':\n${err}")
endif()
if(STDOUT_EMPTY AND NOT out STREQUAL "")
  message(FATAL_ERROR "${PROGRAM} ${ARGS}: printed on stdout (errors go to stderr):\n${out}")
endif()
message(STATUS "${PROGRAM} ${ARGS}: exit ${status} as expected")
