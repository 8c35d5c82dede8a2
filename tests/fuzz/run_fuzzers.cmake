# SPDX-License-Identifier: GPL-3.0-or-later
# Builds the fuzz targets of the Slurm parsers, the store's parsers, the sweep spec parser and the
# clip decoder with clang (a project of its own, tests/fuzz/) and runs each briefly from its seed
# corpus (real Slurm 22.05 output, trainer events, example sweep specs, trainer sample videos). A
# crash, leak, UB or failed check fails.
# cmake -DCLANGXX=... -DSOURCE_DIR=<tests/fuzz> -DBINARY_DIR=... -DGENERATOR=... [-DSECONDS=2]
#       [-DOPT=-O0] [-DLAUNCHER=ccache] -P run_fuzzers.cmake
# A longer campaign: -DSECONDS=600 -DOPT=-O1 (the test's -O0 compiles in half the time and runs
# 2-3x fewer inputs a second).
if(NOT SECONDS)
  set(SECONDS 2)
endif()
if(NOT OPT)
  set(OPT -O0)
endif()
# Always said, empty without one: a build directory keeps what an earlier configure set.
set(_launcher "-DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER}")
execute_process(COMMAND "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${BINARY_DIR}" -G "${GENERATOR}"
  -DCMAKE_CXX_COMPILER=${CLANGXX} -DCMAKE_BUILD_TYPE=RelWithDebInfo -DORRERY_FUZZ_OPT=${OPT} ${_launcher}
  COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BINARY_DIR}" COMMAND_ERROR_IS_FATAL ANY)
# Per-target libFuzzer options: the clip decoder's inputs are whole files (the seeds are a few KB).
set(_options_media -max_len=65536)
# Each target as NAME:EXECUTABLE (fuzz_EXECUTABLE runs it with ORRERY_FUZZ_TARGET=NAME).
foreach(_target sbatch:slurmparse squeue:slurmparse sinfo:slurmparse scontrol:slurmparse sacct:slurmparse
    version:slurmparse events:store chunk:store sweepspec:sweepspec batchread:remote tar:remote media:media
    tfevents:runfiles wandb:runfiles)
  string(REPLACE ":" ";" _target "${_target}")
  list(GET _target 0 _name)
  list(GET _target 1 _exe)
  # A fresh copy of the seeds: the fuzzer adds what it finds to its corpus directory.
  set(_corpus "${BINARY_DIR}/corpus-run/${_name}")
  file(REMOVE_RECURSE "${_corpus}")
  file(MAKE_DIRECTORY "${_corpus}")
  file(GLOB _seeds "${SOURCE_DIR}/corpus/${_name}/*")
  if(_seeds)
    file(COPY ${_seeds} DESTINATION "${_corpus}")
  endif()
  execute_process(COMMAND "${CMAKE_COMMAND}" -E env ORRERY_FUZZ_TARGET=${_name} "${BINARY_DIR}/fuzz_${_exe}" -max_total_time=${SECONDS} -timeout=10
      -rss_limit_mb=2048 -print_final_stats=1 ${_options_${_name}} "${_corpus}"
    WORKING_DIRECTORY "${BINARY_DIR}"
    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  string(REGEX MATCH "stat::number_of_executed_units: *[0-9]+" _runs "${_out}")
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "fuzz_${_exe} (${_name}) failed (${_rc}); the crashing input is in ${BINARY_DIR}:\n${_out}")
  endif()
  message(STATUS "fuzz_${_exe} ${_name}: ok (${_runs})")
endforeach()
