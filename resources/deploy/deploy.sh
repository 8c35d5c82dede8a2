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
# it built and started), build.log, build.status (the exit status, once ended), build.phase,
# build.pid ("pid:HOST:N" or "job:N"), build.alive (touched every 5 s while a login-node build
# lives: how another login node behind the same name sees it), build.cancel (asks it to stop).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")" || exit 1

alive() {
  local p host out
  p=$(cat build.pid 2>/dev/null) || return 1
  case $p in
    pid:*)
      host=${p#pid:}
      host=${host%%:*}
      if [ "$host" = "$(hostname)" ]; then
        kill -0 "${p##*:}" 2>/dev/null
      else  # started on another login node: its watcher's heartbeat
        [ -n "$(find build.alive -newermt '-60 seconds' 2>/dev/null)" ]
      fi
      ;;
    job:*)
      # A squeue that fails (slurmctld busy) says nothing: alive until Slurm says otherwise.
      out=$(squeue -h -j "${p#job:}" -o %T 2>&1) || { case $out in *"Invalid job id"*) return 1 ;; *) return 0 ;; esac; }
      [ -n "$out" ]
      ;;
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
  echo "$1" > build.phase
}

case ${1-} in
start)
  # One start at a time on this node (two deploys that both found no build).
  if command -v flock > /dev/null; then
    exec 9>> build.lock
    flock 9
  fi
  if [ -x bin/orrery-train ]; then echo done; exit 0; fi
  if alive; then echo "running $(cat build.pid)"; exit 0; fi
  rm -f build.status build.log build.phase build.cancel build.alive
  if [ "${2-}" = login ]; then
    # The build and a watcher in one new session: the watcher touches build.alive while the
    # build lives and ends the session when build.cancel appears (a cancel from another node).
    setsid nohup bash -c 'bash build.sh "$1" & b=$!
      while kill -0 "$b" 2> /dev/null; do
        touch build.alive
        if [ -e build.cancel ]; then echo 130 > build.status.tmp && mv -f build.status.tmp build.status; kill -TERM -- "-$$"; fi
        sleep 5
      done' orrery-deploy "$PWD" > build.log 2>&1 < /dev/null &
    echo "pid:$(hostname):$!" > build.pid
  else
    partition=${3-}
    shift 3
    cpus=$(sinfo -h -e -o %c ${partition:+-p "$partition"} 2> /dev/null | tr -d + | sort -n | head -n 1)
    [ -n "$cpus" ] && [ "$cpus" -le 8 ] 2> /dev/null || cpus=8
    id=$(sbatch --parsable ${partition:+--partition="$partition"} --cpus-per-task="$cpus" "$@" \
      --chdir="$PWD" --output="$PWD/build.log" build.sh "$PWD") || exit 1
    echo "job:${id%%;*}" > build.pid
  fi
  echo "started $(cat build.pid)"
  ;;
poll)
  if alive; then echo alive; else echo gone; fi
  cat build.status 2>/dev/null || echo -
  cat build.phase 2>/dev/null || echo -
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
  stopped=0
  case $p in
    pid:*)
      host=${p#pid:}
      host=${host%%:*}
      if [ "$host" = "$(hostname)" ]; then
        kill -TERM -- "-${p##*:}" 2>/dev/null && stopped=1
      else
        touch build.cancel  # the watcher on that node ends it within 5 s
        echo "asked the build on $host to stop"
      fi
      ;;
    job:*) scancel "${p#job:}" && stopped=1 ;;
  esac
  if [ $stopped = 1 ]; then
    echo "orrery-deploy: cancelled" >> build.log
    echo 130 > build.status.tmp && mv -f build.status.tmp build.status
  fi
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
