#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Data wait with streamed shards (trainer/src/shards.h): the same Y4M shards read as local files
# and as throttled pipe: sources (pv -q -L RATE when pv is installed, else a small Python
# throttle), at the byte rate the training step consumes and at half of it. The rate is measured
# first from the local-file run (bytes per sample x samples per second); each pipe gets
# factor x that / data.workers, so with read_ahead 0 the rank's sources together deliver factor x
# the need, and read-ahead (more sources open at once) multiplies it.
#
# Usage: bench/streamed_shards.sh [OUT]   (default /tmp/orrery-streamed-shards)
# Env: TRAINER (default build/dev/bin/orrery-train), STEPS (default 60), SHARDS (default 8),
#      SAMPLES (clips per shard, default 16), SETS (extra --set words for every run), NEED (the
#      step's byte rate in bytes/s, e.g. a GPU step's; default: measured by the local-file run).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-/tmp/orrery-streamed-shards}
train=${TRAINER:-$root/build/dev/bin/orrery-train}
steps=${STEPS:-60}
shards=${SHARDS:-8}
samples=${SAMPLES:-16}
rm -rf "$out"
mkdir -p "$out/shards"

# Shards of 64x64, 16-frame 4:2:0 Y4M clips (98 KB each) with a label, made with Python's tarfile.
python3 - "$out/shards" "$shards" "$samples" <<'PY'
import io, json, sys, tarfile
dest, shards, samples = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for s in range(shards):
    with tarfile.open(f"{dest}/s-{s}.tar", "w", format=tarfile.USTAR_FORMAT) as tar:
        for k in range(samples):
            key = f"clip{s:03d}{k:03d}"
            clip = b"YUV4MPEG2 W64 H64 F8:1 Ip A1:1 C420jpeg\n" + b"".join(
                b"FRAME\n" + bytes([(16 + 7 * k + 3 * t) % 256]) * 4096 + bytes([128 + s]) * 2048 for t in range(16))
            for name, data in ((key + ".y4m", clip), (key + ".json", json.dumps({"label": k % 8}).encode())):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
PY
cat >"$out/throttle.py" <<'PY'
# python3 throttle.py BYTES_PER_S FILE: FILE to stdout at that rate (pv -q -L's job).
import sys, time
rate, path = float(sys.argv[1]), sys.argv[2]
start, sent = time.monotonic(), 0
with open(path, "rb") as f:
    while chunk := f.read(16384):
        sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.flush()
        sent += len(chunk)
        ahead = sent / rate - (time.monotonic() - start)
        if ahead > 0:
            time.sleep(ahead)
PY
throttle() {  # RATE (bytes/s) → the command prefix of a throttled source of FILE
  if command -v pv >/dev/null; then echo "pv -q -L $1"; else echo "python3 $out/throttle.py $1"; fi
}

# One run; prints "data_wait_frac samples_per_s" averaged over the log windows after the first.
run() {  # NAME DATA_PATH WORKERS READ_AHEAD
  local dir="$out/run-$1"
  "$train" --config "$root/tests/trainer/test.yaml" --run-dir "$dir" --set data.kind=shards \
    --set "data.path=$2" --set data.frames=8 --set data.size=32 --set data.stride=2 \
    --set "data.workers=$3" --set "data.read_ahead=$4" --set data.prefetch=4 --set "train.steps=$steps" \
    --set train.log_every=10 ${SETS:-} >"$dir.log" 2>&1 || { tail -5 "$dir.log"; return 1; }
  python3 - "$dir/events.jsonl" <<'PY'
import json, sys
rows = [e["values"] for e in map(json.loads, open(sys.argv[1])) if e.get("kind") == "metrics" and "perf/data_wait_frac" in e.get("values", {})][1:]
print(f'{sum(r["perf/data_wait_frac"] for r in rows) / len(rows):.3f} {sum(r["perf/samples_per_s"] for r in rows) / len(rows):.1f}')
PY
}

last=$((shards - 1))
files="$out/shards/s-{0..$last}.tar"
read -r wait sps < <(run local "$files" 2 0)
sample_bytes=$(python3 -c "import os; print(os.path.getsize('$out/shards/s-0.tar') // $samples)")
need=${NEED:-$(python3 -c "print(int($sample_bytes * $sps))")}
printf '%-44s %10s %12s %14s\n' "source" "wait_frac" "samples/s" "all (KB/s)"
printf '%-44s %10s %12s %14s\n' "local files ($files)" "$wait" "$sps" "-"
# Each source is throttled to factor x need / workers (one open source per worker gives factor x
# need); read-ahead opens workers x (read_ahead + 1) at once, the aggregate rate in the last column.
for case in "1.0 2 0" "0.5 2 0" "0.5 2 2"; do
  read -r factor workers ahead <<<"$case"
  open=$((workers * (ahead + 1)))
  per=$(python3 -c "print(int($need * $factor / $workers))")
  name="pipe at ${factor}x per worker, read_ahead $ahead"
  read -r wait sps < <(run "${factor}x-ra$ahead" "pipe:$(throttle "$per") $files" "$workers" "$ahead")
  printf '%-44s %10s %12s %14s\n' "$name" "$wait" "$sps" "$((per * open / 1000))"
done
echo "throttle: $(throttle RATE); bytes per sample: $sample_bytes; step need: $((need / 1000)) KB/s"
