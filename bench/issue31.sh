#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# Issue 31's workbench figures in one go on one machine, offscreen (bench/RESULTS.md "The desktop
# workbench 4"): live latency and pan/zoom with re-query, opening 100,000 runs and a column
# change, parallel coordinates of 5,000 runs and parameter importance, PSNR/SSIM of 16 tiles.
# Usage: sh bench/issue31.sh [BUILD_DIR]   (default build/dev; WORK: where the databases go)
set -eu
bin="${1:-build/dev}/bin"
work="${WORK:-${TMPDIR:-/tmp}/orrery-issue31-bench}"
export QT_QPA_PLATFORM=offscreen
mkdir -p "$work"
"$bin/bench_gui" --dir "$work/gui" --only 2,4 --curves 20 --points 1000000 --steps 200 --live 100 --latency-seconds 30
"$bin/bench_runs_scale" --dir "$work/runs-scale"
"$bin/bench_parallel" --repeats 50
"$bin/bench_video" --quality-only
