#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Times the README's two commands on a fresh Debian 12: a new minbase root from debootstrap, with
# nothing installed, the command run inside it with chroot, twice (fresh, then again). Copies in
# only what every machine of the workplace has (its CA bundle, pip settings, /etc/hosts).
# Needs root and debootstrap; uses /srv/orrery-fresh-* (about 7 GB each). Prints one line a run:
#   bench/fresh_machine.sh ./scripts/quickstart ./scripts/test
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
base=/srv/orrery-fresh-base
[[ $(id -u) == 0 ]] || { echo "fresh_machine.sh: run as root" >&2; exit 1; }
command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null
[[ -d $base ]] || debootstrap --variant=minbase bookworm "$base" http://deb.debian.org/debian >/dev/null

mounted_under() { mount | grep -q " $1/"; }
cleanup_root() {
  local r=$1
  for p in /proc/[0-9]*; do
    [[ $(readlink "$p/root" 2>/dev/null) == "$r" ]] && kill -9 "${p#/proc/}" 2>/dev/null || true
  done
  sleep 1
  for m in dev sys proc tmp; do umount -R "$r/$m" 2>/dev/null || true; done
}

for cmd in "$@"; do
  r=/srv/orrery-fresh-$(basename "$cmd")
  if mounted_under "$r"; then echo "refusing: something is mounted under $r" >&2; exit 1; fi
  rm -rf --one-file-system "$r"
  cp -a "$base" "$r"
  cp /etc/resolv.conf /etc/hosts "$r/etc/"
  mkdir -p "$r/usr/local/share/ca-certificates" "$r/etc/ssl/certs"
  cp /usr/local/share/ca-certificates/* "$r/usr/local/share/ca-certificates/" 2>/dev/null || true
  cp /etc/ssl/certs/ca-certificates.crt "$r/etc/ssl/certs/"
  [[ -f /etc/pip.conf ]] && cp /etc/pip.conf "$r/etc/"
  git clone -q "$repo" "$r/root/orrery"
  mount -t proc proc "$r/proc"; mount --rbind /dev "$r/dev"; mount --rbind /sys "$r/sys"
  mount -t tmpfs tmpfs "$r/tmp"
  trap 'cleanup_root "$r"' EXIT
  for run in fresh again; do
    start=$SECONDS
    rc=0
    chroot "$r" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      LANG=C.UTF-8 PIP_CERT=/etc/ssl/certs/ca-certificates.crt \
      bash -c "cd /root/orrery && $cmd" >"$r.$run.log" 2>&1 || rc=$?
    echo "$cmd $run: exit $rc, $((SECONDS - start)) s (log $r.$run.log; step times: grep '==>' it)"
  done
  cleanup_root "$r"
  trap - EXIT
done
