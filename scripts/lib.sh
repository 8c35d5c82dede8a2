# SPDX-License-Identifier: GPL-3.0-or-later
# Shared by scripts/quickstart and scripts/test: set up, configure and build a preset, timing each
# step so the README's figures can be checked.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

step_started=0
step() {  # step NAME: prints a header and remembers when it began
  step_started=$SECONDS
  printf '\n==> %s\n' "$*"
}
step_done() { printf '==> done in %ss\n' "$((SECONDS - step_started))"; }

setup_and_build() {  # setup_and_build PRESET [SETUP OPTIONS...]
  local preset=$1
  shift
  step "setup (scripts/setup $*)"
  "$root/scripts/setup" "$@"
  step_done
  configure "$preset"
  build "$preset"
}

configure() {  # configure PRESET [CMAKE OPTIONS...]
  local preset=$1
  shift
  # ccache only where asked (ORRERY_CCACHE=1): on a fresh machine its cache is empty, and filling
  # it cost 11% of the dev build (dev_pass from nothing on 2 cores: 374 s without, 417 s through an
  # empty cache), while the build tree itself already makes the same command's next run
  # incremental. Worth it where clean clones are built again and again on one machine: paths
  # relative to the clone (BASEDIR) and no working directory in the hash (NOHASHDIR), so another
  # clone hits the same entries; the sloppiness lets the precompiled Qt and LibTorch headers be
  # cached at all; depend mode takes a file's includes from the compiler's dependency output instead
  # of running the preprocessor first; the inode cache hashes each precompiled header (180-750 MB)
  # once. A plain `cmake --preset dev` compiles through ccache where it is installed (top-level
  # CMakeLists.txt, ORRERY_CCACHE), set up the same way.
  local launcher=(-DORRERY_CCACHE=OFF -DCMAKE_C_COMPILER_LAUNCHER= -DCMAKE_CXX_COMPILER_LAUNCHER=)
  if [[ ${ORRERY_CCACHE:-0} == 1 ]] && command -v ccache >/dev/null; then
    export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
    export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
    export CCACHE_DEPEND=1 CCACHE_INODECACHE=1
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  step "configure (cmake --preset $preset${*:+ $*})"
  cmake --preset "$preset" "${launcher[@]}" "$@" >/dev/null
  step_done
}

build() {  # build PRESET [BUILD OPTIONS...], e.g. build dev --target dev_pass
  local preset=$1
  shift
  step "build (cmake --build --preset $preset${*:+ $*})"
  cmake --build --preset "$preset" "$@"
  step_done
  disk_report "build/$preset"
}

disk_report() {  # disk_report DIR: what DIR and the compiler cache take, and what is left free
  local cache=""
  if command -v ccache >/dev/null; then
    cache=$(ccache --get-config cache_dir 2>/dev/null || true)
    [[ -d $cache ]] && cache=", ccache $(du -sh "$cache" | cut -f1)"
  fi
  printf '==> disk: %s takes %s%s; %s free\n' "$1" "$(du -sh "$root/$1" | cut -f1)" "$cache" \
    "$(df -h --output=avail "$root" | tail -1 | tr -d ' ')"
}
