# SPDX-License-Identifier: GPL-3.0-or-later
#
# Finds LibTorch inside a Python environment's torch package, the way it is installed both here
# (scripts/setup puts torch==2.11.0 in <repo>/.venv) and on a cluster (a conda or pip env that the
# cluster profile's setup lines activate). Works around what the CUDA 13 build of the wheel needs
# from CMake, and finds the gloo headers that the wheel does not ship.
#
# Defines: orrery_torch (INTERFACE target to link), ORRERY_TORCH_VERSION, ORRERY_TORCH_CUDA (the
# CUDA half is compiled in: needs the CUDA toolkit), ORRERY_TORCH_GLOO (ProcessGroupGloo usable).
include_guard(GLOBAL)

set(ORRERY_PYTHON "" CACHE FILEPATH
  "Python interpreter whose torch package provides LibTorch (default: <repo>/.venv, then python3 on PATH)")
if(NOT ORRERY_PYTHON)
  set(_venv_python "${CMAKE_CURRENT_LIST_DIR}/../../.venv/bin/python")
  if(EXISTS "${_venv_python}")
    get_filename_component(_venv_python "${_venv_python}" ABSOLUTE)
    set(ORRERY_PYTHON "${_venv_python}" CACHE FILEPATH "" FORCE)
  else()
    find_program(_python3 NAMES python3 python REQUIRED)
    set(ORRERY_PYTHON "${_python3}" CACHE FILEPATH "" FORCE)
  endif()
endif()

execute_process(
  COMMAND "${ORRERY_PYTHON}" -W ignore -c
    "import os, torch; print(torch.utils.cmake_prefix_path); print(torch.__version__.split('+')[0]); print(torch.version.cuda or ''); print(os.path.dirname(torch.__file__))"
  OUTPUT_VARIABLE _torch_info OUTPUT_STRIP_TRAILING_WHITESPACE
  ERROR_VARIABLE _torch_error RESULT_VARIABLE _torch_rc)
if(NOT _torch_rc EQUAL 0)
  message(FATAL_ERROR
    "orrery-train needs LibTorch from a Python torch install, but '${ORRERY_PYTHON}' cannot import "
    "torch:\n${_torch_error}\nRun scripts/setup (it makes <repo>/.venv with torch==2.11.0), or pass "
    "-DORRERY_PYTHON=/path/to/env/bin/python.")
endif()
string(REPLACE "\n" ";" _torch_info "${_torch_info}")
list(GET _torch_info 0 _torch_prefix)
list(GET _torch_info 1 ORRERY_TORCH_VERSION)
list(GET _torch_info 2 _torch_built_cuda)
list(GET _torch_info 3 _torch_dir)

add_library(orrery_torch INTERFACE)
set(ORRERY_TORCH_CUDA OFF)
find_package(CUDAToolkit QUIET)

if(_torch_built_cuda AND NOT CUDAToolkit_FOUND)
  # A CUDA build of LibTorch (the PyPI wheel) on a machine without the CUDA toolkit (a laptop, a
  # CPU login node). Torch's CMake config refuses to load there, but the CPU half needs no CUDA
  # header: link LibTorch's libraries directly and build the CPU path (Gloo) only. libtorch.so
  # is linked even though nothing refers to it, so its CUDA half still registers at run time
  # (its CUDA libraries come from the wheel's nvidia-* packages).
  message(STATUS "orrery-train: LibTorch ${ORRERY_TORCH_VERSION} was built with CUDA "
    "${_torch_built_cuda} but no CUDA toolkit is installed: building the CPU path only (no NCCL)")
  target_include_directories(orrery_torch SYSTEM INTERFACE
    "${_torch_dir}/include" "${_torch_dir}/include/torch/csrc/api/include")
  target_link_libraries(orrery_torch INTERFACE
    "-Wl,--no-as-needed" "${_torch_dir}/lib/libtorch.so" "-Wl,--as-needed"
    "${_torch_dir}/lib/libtorch_cpu.so" "${_torch_dir}/lib/libc10.so")
  target_compile_definitions(orrery_torch INTERFACE USE_DISTRIBUTED USE_C10D_GLOO)
else()
  list(APPEND CMAKE_PREFIX_PATH "${_torch_prefix}")
  # --- CUDA 13 builds of the wheel ----------------------------------------------------------
  # The wheel's Caffe2 config calls find_package(CUDAToolkit) and enable_language(CUDA) when it
  # was built with CUDA. Two things moved in CUDA 12.9+/13:
  #  * nvToolsExt (libnvToolsExt.so) is gone; only the header-only nvtx3 remains. Older torch
  #    configs link CUDA::nvToolsExt, so point that name at nvtx3.
  #  * CCCL (thrust/cub/libcu++) headers moved to include/cccl; c10/ATen CUDA headers include
  #    them by their old names, so that directory goes on the include path.
  if(CUDAToolkit_FOUND)
    if(NOT TARGET CUDA::nvtx3 AND EXISTS "${CUDAToolkit_INCLUDE_DIRS}/nvtx3")
      add_library(CUDA::nvtx3 INTERFACE IMPORTED)
      target_include_directories(CUDA::nvtx3 SYSTEM INTERFACE "${CUDAToolkit_INCLUDE_DIRS}")
    endif()
    if(NOT TARGET CUDA::nvToolsExt AND TARGET CUDA::nvtx3)
      add_library(CUDA::nvToolsExt INTERFACE IMPORTED)
      target_link_libraries(CUDA::nvToolsExt INTERFACE CUDA::nvtx3)
    endif()
    # torch picks its own arch list (TORCH_CUDA_ARCH_LIST) and warns if CMake's is defined too.
    # Enabling CUDA here first and dropping the default CMake chose keeps the configure quiet;
    # the trainer's one .cu file (fused_cuda.cu) takes TORCH_CUDA_ARCH_LIST's architectures.
    enable_language(CUDA)
    unset(CMAKE_CUDA_ARCHITECTURES CACHE)
    unset(CMAKE_CUDA_ARCHITECTURES)
    if(NOT DEFINED TORCH_CUDA_ARCH_LIST AND NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
      set(TORCH_CUDA_ARCH_LIST "8.0;9.0")  # A100, H100/H200: what clusters run this on
    endif()
  endif()

  find_package(Torch REQUIRED)
  target_link_libraries(orrery_torch INTERFACE ${TORCH_LIBRARIES})
  if(CUDAToolkit_FOUND AND EXISTS "${CUDAToolkit_INCLUDE_DIRS}/cccl")
    target_include_directories(orrery_torch SYSTEM INTERFACE "${CUDAToolkit_INCLUDE_DIRS}/cccl")
  endif()
  if(TARGET torch_cuda)
    set(ORRERY_TORCH_CUDA ON)
    target_compile_definitions(orrery_torch INTERFACE ORRERY_TORCH_CUDA=1)
  endif()
endif()

# The wheel ships libtorch_cpu with gloo inside but without gloo's headers. ProcessGroupGloo's
# header needs them for declarations only (every symbol resolves in libtorch_cpu), so a
# compatible copy is enough: Debian's libgloo-dev here, or -DORRERY_GLOO_INCLUDE_DIR=... on a
# cluster. Without them the trainer still builds, with NCCL only (no CPU multi-rank).
find_path(ORRERY_GLOO_INCLUDE_DIR NAMES gloo/algorithm.h
  DOC "Directory holding gloo/algorithm.h (for ProcessGroupGloo)")
set(ORRERY_TORCH_GLOO OFF)
if(ORRERY_GLOO_INCLUDE_DIR)
  set(ORRERY_TORCH_GLOO ON)
  target_include_directories(orrery_torch SYSTEM INTERFACE "${ORRERY_GLOO_INCLUDE_DIR}")
  target_compile_definitions(orrery_torch INTERFACE ORRERY_TORCH_GLOO=1)
else()
  message(WARNING "gloo headers not found: orrery-train is built without the Gloo backend "
    "(no multi-rank training on CPU). Install libgloo-dev or set ORRERY_GLOO_INCLUDE_DIR.")
endif()
message(STATUS "orrery-train: LibTorch ${ORRERY_TORCH_VERSION} from ${_torch_dir}; "
  "CUDA ${ORRERY_TORCH_CUDA}, Gloo ${ORRERY_TORCH_GLOO}")
