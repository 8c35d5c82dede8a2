# SPDX-License-Identifier: GPL-3.0-or-later
#
# Precompiled Qt headers. Parsing Qt's headers is most of a Qt file's compile time (a GUI file:
# 6.3 of its 9 s; loading them precompiled takes under 1 s), and the test command compiles about
# 300 such files twice (dev, asan). So each file starts from one of a few precompiled headers, each
# compiled once per build tree and shared by every target of its kind (REUSE_FROM):
#
#   core       the Qt Core headers most files include, and the standard library's
#   gui        core's, Qt Widgets (all of it) and QCustomPlot
#   test_core  core's, compiled as a test is (-O0 in the dev build)
#   test_gui   gui's, compiled as a test is
#
# Qt Test is in none of them: its headers test which Qt modules the test links (QT_NETWORK_LIB,
# QT_WIDGETS_LIB) and where it was built, so one header for every test could not hold it.
#
# GCC uses a precompiled header only where the flags that shape it match (optimisation, PIC or
# PIE, the macros the headers test), so one header is compiled per level and kind of target:
# `lib` for Orrery's libraries, `exe` for the tests' executables. Where one does not match, GCC
# says so (-Winvalid-pch) and the warning fails the dev build (-Werror). -DORRERY_PCH=OFF compiles
# without them, which also checks that every file includes what it uses.
include_guard(GLOBAL)

option(ORRERY_PCH "Compile Orrery's files over precompiled Qt headers" ON)

set(ORRERY_PCH_CORE_HEADERS
  <algorithm> <chrono> <functional> <map> <memory> <optional> <string> <utility> <vector>
  <QByteArray> <QCoreApplication> <QDateTime> <QDeadlineTimer> <QDir> <QElapsedTimer> <QFile>
  <QFileInfo> <QHash> <QJsonArray> <QJsonDocument> <QJsonObject> <QList> <QMap> <QObject>
  <QPointer> <QProcess> <QRegularExpression> <QSaveFile> <QSet> <QStandardPaths> <QString>
  <QStringList> <QTemporaryDir> <QThread> <QTimer> <QUuid>)
# QCustomPlot through app/gui/base/qcp.h, which lets its header compile under QT_NO_FOREACH.
set(ORRERY_PCH_GUI_HEADERS ${ORRERY_PCH_CORE_HEADERS} <QtWidgets> "${CMAKE_CURRENT_LIST_DIR}/../app/gui/base/qcp.h")

# orrery_pch_owner(LEVEL KIND LIBS...): the target that compiles LEVEL's precompiled header for
# targets of KIND (lib or exe) that link LIBS; defined in the directory of the targets that use it
# (Qt Test's macros name the directory).
function(orrery_pch_owner level kind)
  if(NOT ORRERY_PCH)
    return()
  endif()
  set(owner orrery_pch_${level}_${kind})
  set(source "${CMAKE_CURRENT_BINARY_DIR}/${owner}.cpp")
  file(CONFIGURE OUTPUT "${source}" CONTENT "int main() { return 0; }\n")
  if(kind STREQUAL "exe")
    add_executable(${owner} EXCLUDE_FROM_ALL "${source}")
  else()
    add_library(${owner} OBJECT EXCLUDE_FROM_ALL "${source}")
  endif()
  string(REGEX REPLACE "^test_" "" headers "${level}")
  string(TOUPPER "${headers}" headers)
  target_precompile_headers(${owner} PRIVATE ${ORRERY_PCH_${headers}_HEADERS})
  target_link_libraries(${owner} PRIVATE orrery_common ${ARGN})
  set_target_properties(${owner} PROPERTIES AUTOMOC OFF AUTOUIC OFF AUTORCC OFF)
  orrery_pch_ccache(${owner})
endfunction()

# orrery_pch(TARGET LEVEL): TARGET's files start from LEVEL's precompiled header.
function(orrery_pch target level)
  if(NOT ORRERY_PCH)
    return()
  endif()
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "EXECUTABLE")
    set(owner orrery_pch_${level}_exe)
  else()
    set(owner orrery_pch_${level}_lib)
  endif()
  if(NOT TARGET ${owner})
    message(FATAL_ERROR "orrery_pch(${target} ${level}): no ${owner}; define it with orrery_pch_owner")
  endif()
  target_precompile_headers(${target} REUSE_FROM ${owner})
  orrery_pch_ccache(${target})
  # An executable's Q_OBJECT classes live in its .cpp files, which include their own .moc, so
  # AUTOMOC's mocs_compilation.cpp is empty there; over the precompiled header it still took a
  # second or more to load it (68 test executables in the asan tree: 80 of its 1,250 job-seconds).
  if(type STREQUAL "EXECUTABLE")
    get_target_property(automoc ${target} AUTOMOC)
    if(automoc)
      get_target_property(binary_dir ${target} BINARY_DIR)
      set_source_files_properties("${binary_dir}/${target}_autogen/mocs_compilation.cpp"
        TARGET_DIRECTORY ${target} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
    endif()
  endif()
endfunction()
