# SPDX-License-Identifier: GPL-3.0-or-later
#
# orrery_common: the one place for strictness. Every Orrery target links it; it carries the C++
# standard, the warnings and the Qt safety macros (harmless for the Qt-free trainer).
# Included by the top-level project and by trainer/ when that is built on its own.
include_guard(GLOBAL)

# Standard C++ (no GNU extensions) for every target of the including project.
set(CMAKE_CXX_EXTENSIONS OFF)

option(ORRERY_WERROR "Treat compiler warnings as errors" OFF)

add_library(orrery_common INTERFACE)
add_library(orrery::common ALIAS orrery_common)
target_compile_features(orrery_common INTERFACE cxx_std_20)
target_compile_options(orrery_common INTERFACE
  $<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
    -Wcast-align -Woverloaded-virtual -Wnull-dereference -Wimplicit-fallthrough -Wformat=2>
  $<$<AND:$<BOOL:${ORRERY_WERROR}>,$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>>:-Werror>)
target_compile_definitions(orrery_common INTERFACE
  QT_NO_CAST_FROM_ASCII
  QT_NO_CAST_TO_ASCII
  QT_NO_CAST_FROM_BYTEARRAY
  QT_NO_URL_CAST_FROM_STRING
  QT_NO_NARROWING_CONVERSIONS_IN_CONNECT
  QT_NO_CONTEXTLESS_CONNECT
  QT_NO_FOREACH
  QT_USE_QSTRINGBUILDER
  QT_STRICT_ITERATORS
  # Qt 6.4 (Debian 12) knows QT_DISABLE_DEPRECATED_BEFORE; 6.5+ reads QT_DISABLE_DEPRECATED_UP_TO.
  QT_DISABLE_DEPRECATED_BEFORE=0x060400
  QT_DISABLE_DEPRECATED_UP_TO=0x060400)

# Debug information is written zlib-compressed, in objects and in what is linked: it is most of
# every test binary's size (each GUI test links the whole app; about 90 of a dev test binary's 107
# MB were DWARF), and a clean `scripts/test` builds two trees of them (dev, asan) plus a ccache
# copy. Compressed, the whole run fits a small CI disk; gdb, addr2line and the sanitizers' own
# symbolizer read the sections as they are.
option(ORRERY_COMPRESS_DEBUG "Write compressed debug sections (-gz=zlib)" ON)
if(ORRERY_COMPRESS_DEBUG)
  target_compile_options(orrery_common INTERFACE $<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>:-gz=zlib>)
  target_link_options(orrery_common INTERFACE $<$<LINK_LANG_AND_ID:CXX,GNU,Clang>:-gz=zlib>)
endif()

# Links with lld where it is installed (scripts/setup installs it): GNU ld took 12.7 s to link one
# GUI test binary that lld links in 3.2 s (bench/RESULTS.md, "How long the test command takes"),
# and the test command links about 90 of them, twice (dev, asan).
option(ORRERY_USE_LLD "Link with lld where it is found" ON)
find_program(ORRERY_LLD NAMES ld.lld)
if(ORRERY_USE_LLD AND ORRERY_LLD)
  target_link_options(orrery_common INTERFACE $<$<LINK_LANG_AND_ID:CXX,GNU,Clang>:-fuse-ld=lld>)
endif()

# Orrery's own libraries (core, remote, the app's and the GUI's) are static by default: the
# installed programs and the .deb carry no library of ours. The asan preset makes them shared:
# every sanitized test binary linked the whole app statically (about 230 MB each, 4.5 GB for the
# tree), which filled a small CI disk; shared, the tree is a fraction of that (bench/RESULTS.md,
# "How long the test command takes").
set(ORRERY_LIBRARY_TYPE STATIC CACHE STRING "Type of Orrery's own libraries: STATIC or SHARED")
set_property(CACHE ORRERY_LIBRARY_TYPE PROPERTY STRINGS STATIC SHARED)
if(NOT ORRERY_LIBRARY_TYPE MATCHES "^(STATIC|SHARED)$")
  message(FATAL_ERROR "ORRERY_LIBRARY_TYPE must be STATIC or SHARED, not '${ORRERY_LIBRARY_TYPE}'")
endif()

# orrery_pch_ccache(TARGET), for every target that uses a precompiled header (cmake/OrreryPch.cmake,
# the trainer): ccache caches a file that uses a GCC precompiled header only when told how it was
# included (its manual, "Precompiled headers"); without ccache the flag changes nothing.
function(orrery_pch_ccache target)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -fpch-preprocess)
  endif()
endfunction()

# Unity builds (the asan preset): GCC warns when a lambda or member of one file uses a type of that
# file's anonymous namespace (-Wsubobject-linkage), because in a unity file that file is no longer
# the main file. The dev build compiles every file on its own and keeps the warning.
if(CMAKE_UNITY_BUILD)
  target_compile_options(orrery_common INTERFACE $<$<COMPILE_LANG_AND_ID:CXX,GNU>:-Wno-subobject-linkage>)
endif()

# Sanitizer builds (preset `asan`): ASan + UBSan on every target, no recovery from UB.
option(ORRERY_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
if(ORRERY_SANITIZE)
  target_compile_options(orrery_common INTERFACE
    -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  target_link_options(orrery_common INTERFACE -fsanitize=address,undefined)
endif()
