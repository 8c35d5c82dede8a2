# SPDX-License-Identifier: GPL-3.0-or-later
# Configures and builds trainer/ as a project of its own, then runs the result: proves a cluster
# with only PyTorch, a compiler and CMake can build orrery-train from the bundled source.
# The CUDA toolkit is hidden from it, so this also covers the CPU-only path of a CUDA wheel on a
# machine without the toolkit (the main build covers the CUDA/NCCL path), and so is FFmpeg, as on
# a cluster (or the GPU machine) with only a pip PyTorch: samples are Y4M. tst_trainer_y4m runs
# the result (CTest fixture `trainer_standalone`). No build type (-O0, no debug info): it proves the
# project builds, and compiles in 126 s instead of Release's 156 s on the 2-core machine (measured
# alone, no ccache); the main build compiles the same sources with -O2 and -Werror.
# cmake -DSOURCE_DIR=... -DBINARY_DIR=... -DGENERATOR=... -P standalone_build.cmake
file(REMOVE_RECURSE "${BINARY_DIR}")
execute_process(COMMAND "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${BINARY_DIR}" -G "${GENERATOR}"
  -DCMAKE_BUILD_TYPE= -DORRERY_WERROR=ON -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON
  -DORRERY_TRAINER_FFMPEG=OFF
  COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BINARY_DIR}" COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND "${BINARY_DIR}/bin/orrery-train" --version
  OUTPUT_VARIABLE out COMMAND_ERROR_IS_FATAL ANY)
if(NOT out MATCHES "LibTorch 2\\.11" OR NOT out MATCHES "CUDA: compiled in: no" OR NOT out MATCHES "samples as Y4M")
  message(FATAL_ERROR "standalone orrery-train --version printed:\n${out}")
endif()
# Qt must not have leaked in.
file(READ "${BINARY_DIR}/CMakeCache.txt" cache)
if(cache MATCHES "Qt6_DIR:PATH=/")
  message(FATAL_ERROR "the standalone trainer build found Qt; it must not use it")
endif()
message(STATUS "standalone trainer OK:\n${out}")
