#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# The cluster side of `orrery cluster deploy` (remote/src/deploy.cpp, docs/clusters.md). Orrery
# uploads it with the trainer's source into <remote_root>/trainer/<hash>/ and runs it there:
#   deploy.sh start login         build on this node, detached (setsid nohup), log in build.log
#   deploy.sh start job PARTITION ARGS...
#                                 build in a Slurm job: sbatch ARGS... build.sh, with as many CPUs
#                                 as the partition's smallest node has, at most 8 ("" = default)
#   deploy.sh poll                whether the build lives, its status, and the log's tail
#   deploy.sh cancel              end the build (its process group, or scancel)
# build.sh (written by Orrery: the profile's setup lines) sources it as `deploy.sh build`.
# Layout of the directory: src/ (trainer/, cmake/), build/ (CMake's), bin/orrery-train (only once
# it built and started), build.log, build.status (the exit status, once ended), build.pid
# ("pid:N" or "job:N").
set -u
cd "$(dirname "${BASH_SOURCE[0]}")" || exit 1

alive() {
  local p
  p=$(cat build.pid 2>/dev/null) || return 1
  case $p in
    pid:*) kill -0 "${p#pid:}" 2>/dev/null ;;
    job:*) [ -n "$(squeue -h -j "${p#job:}" -o %T 2>/dev/null)" ] ;;
    *) return 1 ;;
  esac
}

# The end of a build: its status where poll reads it, written whole (rename).
finish() {
  echo "$1" > build.status.tmp && mv -f build.status.tmp build.status
  exit "$1"
}
fail() {
  echo "orrery-deploy: failed in ${phase:-setup}: $*"
  finish 1
}
phase() {
  phase=$1
  echo "orrery-deploy: phase $1"
}

case ${1-} in
start)
  if [ -x bin/orrery-train ]; then echo done; exit 0; fi
  if alive; then echo "running $(cat build.pid)"; exit 0; fi
  rm -f build.status build.log
  if [ "${2-}" = login ]; then
    setsid nohup bash build.sh > build.log 2>&1 < /dev/null &
    echo "pid:$!" > build.pid
  else
    partition=${3-}
    shift 3
    cpus=$(sinfo -h -o %c ${partition:+-p "$partition"} 2> /dev/null | sort -n | head -n 1)
    [ -n "$cpus" ] && [ "$cpus" -le 8 ] 2> /dev/null || cpus=8
    id=$(sbatch --parsable ${partition:+--partition="$partition"} --cpus-per-task="$cpus" "$@" \
      --chdir="$PWD" --output="$PWD/build.log" build.sh) || exit 1
    echo "job:${id%%;*}" > build.pid
  fi
  echo "started $(cat build.pid)"
  ;;
poll)
  if alive; then echo alive; else echo gone; fi
  cat build.status 2>/dev/null || echo -
  echo ---
  tail -c 16384 build.log 2>/dev/null
  # A job that has not started has no log yet: its state and Slurm's reason say why.
  p=$(cat build.pid 2>/dev/null)
  if [ ! -s build.log ] && [ "${p#job:}" != "$p" ]; then
    squeue -h -j "${p#job:}" -o 'orrery-deploy: job %i %T (%r)' 2>/dev/null
  fi
  ;;
cancel)
  p=$(cat build.pid 2>/dev/null)
  case $p in
    pid:*) kill -TERM -- "-${p#pid:}" 2>/dev/null ;;
    job:*) scancel "${p#job:}" 2>/dev/null ;;
  esac
  echo "orrery-deploy: cancelled" >> build.log
  echo 130 > build.status
  ;;
build)
  phase torch
  python=${ORRERY_PYTHON:-$(command -v python3 || command -v python)}
  [ -n "$python" ] || fail "no python3 on PATH after the setup lines"
  "$python" -W ignore -c 'import torch; print("orrery-deploy: torch", torch.__version__, "cuda", torch.version.cuda or "none", "python", __import__("sys").executable)' ||
    fail "$python cannot import torch"
  command -v cmake > /dev/null || fail "no cmake on PATH"
  phase configure
  # ORRERY_DEPLOY_CMAKE_ARGS (set by a setup line) is split on spaces on purpose: -D options.
  # shellcheck disable=SC2086
  cmake -S src/trainer -B build -DCMAKE_BUILD_TYPE=Release -DORRERY_PYTHON="$python" \
    -DORRERY_BUILD_TESTS=OFF ${ORRERY_DEPLOY_CMAKE_ARGS-} || fail "cmake could not configure the trainer"
  phase build
  jobs=${ORRERY_DEPLOY_JOBS:-$(nproc 2> /dev/null || echo 4)}
  [ "$jobs" -le 8 ] || jobs=8  # a login node is shared
  cmake --build build -j "$jobs" || fail "the trainer did not compile"
  phase install
  mkdir -p bin && cp build/bin/orrery-train bin/.orrery-train.tmp || fail "cannot copy the trainer into bin/"
  bin/.orrery-train.tmp --version || fail "the built trainer does not start"
  mv -f bin/.orrery-train.tmp bin/orrery-train || fail "cannot move the trainer into bin/"
  phase done
  finish 0
  ;;
*)
  echo "usage: deploy.sh start login|job [SBATCH ARGS...] | poll | cancel" >&2
  exit 2
  ;;
esac
