#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# The package test (CTest label `package`, tests/CMakeLists.txt): makes the .deb with cpack from
# this build tree, checks what is in it (files, Depends, AppStream and desktop entry valid, no
# RPATH, the trainer's source complete), installs it on this machine with apt-get, runs what it
# installed (orrery --version, orrery doctor, orrery-gui offscreen with a screenshot, man, the bash
# completion), removes it with apt-get remove --purge and checks that none of its files is left.
#
# It installs into /usr: run it as root (CI's fresh Debian 12 root) or with password-less sudo;
# otherwise it skips (exit 77), and under CI=true that is a failure. It never replaces an `orrery`
# package that it did not install itself, nor a file of the package that is already there.
#
#   tests/package/deb_test.sh WORK_DIR BUILD_DIR SOURCE_DIR VERSION [TRAINER]
# TRAINER: the orrery-train of this build, when there is one: the installed orrery must find it
# through ORRERY_TRAINER (the route docs/install.md gives, as the package ships no trainer).
set -euo pipefail

work=${1:?WORK_DIR} build=${2:?BUILD_DIR} source=${3:?SOURCE_DIR} version=${4:?VERSION} trainer=${5:-}
app_id=io.github.orrery.Orrery
marker="$work/installed-by-this-test"

say() { printf 'package: %s\n' "$*"; }
fail() {
  printf 'package: FAIL: %s\n' "$*" >&2
  exit 1
}
skip() {
  [[ ${CI:-} == true ]] && fail "$* (CI=true: a skip is a failure)"
  printf 'package: SKIP: %s\n' "$*"
  exit 77
}
ms() { date +%s%3N; }
seconds_since() { printf '%d.%01d' $((($(ms) - $1) / 1000)) $(((($(ms) - $1) % 1000) / 100)); }
started=$(ms)

if ! command -v dpkg-deb >/dev/null || ! command -v apt-get >/dev/null; then
  skip "not a Debian system (no dpkg-deb, apt-get)"
fi
for tool in cpack appstreamcli desktop-file-validate readelf gzip bash; do
  command -v "$tool" >/dev/null || fail "$tool is missing (scripts/setup installs it)"
done
if [[ $(id -u) == 0 ]]; then
  sudo=()
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  sudo=(sudo -n)
else
  skip "installing the package needs root or password-less sudo"
fi
apt() { "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "$@"; }
installed() { [[ $(dpkg-query -W -f='${Status}' orrery 2>/dev/null || true) == *" installed" ]]; }

# --- never clobber an orrery this test did not install -------------------------------------------
if installed || [[ $(dpkg-query -W -f='${Status}' orrery 2>/dev/null || true) == *half* ]]; then
  if [[ -f $marker ]]; then
    say "removing the orrery package a previous run of this test left installed"
    apt remove --purge -y orrery >/dev/null
  else
    fail "a package 'orrery' ($(dpkg-query -W -f='${Version} ${Status}' orrery)) is installed, and this" \
      "test did not install it: it will not replace it. Remove it first (apt-get remove --purge orrery)."
  fi
fi
rm -f "$marker"
# Whatever happens below, what this test installed does not stay.
cleanup() {
  if [[ -f $marker ]] && installed; then
    say "cleanup: removing the package this test installed"
    apt remove --purge -y orrery >/dev/null 2>&1 || true
  fi
  rm -f "$marker"
}
trap cleanup EXIT

rm -rf "${work:?}/out" "${work:?}/extract" "${work:?}/home"
mkdir -p "$work/out" "$work/home"

# --- build the package ---------------------------------------------------------------------------
t=$(ms)
if ! cpack --config "$build/CPackConfig.cmake" -B "$work/out" >"$work/cpack.log" 2>&1; then
  tail -n 40 "$work/cpack.log" >&2
  fail "cpack failed (log: $work/cpack.log)"
fi
shopt -s nullglob
debs=("$work/out"/orrery_*.deb)
shopt -u nullglob
((${#debs[@]} == 1)) || fail "cpack made ${#debs[@]} orrery_*.deb files in $work/out, not one"
deb=${debs[0]}
say "built $(basename "$deb") ($(du -k "$deb" | cut -f1) KiB) in $(seconds_since "$t") s"

[[ $(dpkg-deb -f "$deb" Package) == orrery ]] || fail "the package is not named orrery"
[[ $(dpkg-deb -f "$deb" Version) == "$version" ]] || fail "the package's version is not $version"
depends=$(dpkg-deb -f "$deb" Depends)
say "Depends: $depends"
# dpkg-shlibdeps found what the programs link (the Qt 6, libssh, SQLite and QCustomPlot libraries).
for lib in libc6 libqt6core6 libqt6widgets6 libssh libsqlite3 libqcustomplot; do
  [[ $depends == *"$lib"* ]] || fail "Depends names no $lib: $depends"
done

# --- what is in it -------------------------------------------------------------------------------
dpkg-deb -c "$deb" | awk '{ print $6 }' | sed -e 's|^\./|/|' -e 's|/$||' | grep -v '^$' >"$work/contents"
expect=(
  /usr/bin/orrery /usr/bin/orrery-gui
  /usr/share/man/man1/orrery.1.gz /usr/share/man/man1/orrery-gui.1.gz
  /usr/share/bash-completion/completions/orrery
  "/usr/share/applications/$app_id.desktop" "/usr/share/metainfo/$app_id.metainfo.xml"
  "/usr/share/icons/hicolor/scalable/apps/$app_id.svg"
  /usr/share/orrery/configs/tiny.yaml /usr/share/orrery/sweeps/quickstart.yaml
  /usr/share/orrery/sbatch/array.sbatch
  /usr/share/orrery/trainer-source/trainer/CMakeLists.txt /usr/share/orrery/trainer-source/trainer/src/main.cpp
  /usr/share/orrery/trainer-source/cmake/OrreryVersion.cmake /usr/share/orrery/trainer-source/cmake/OrreryCommon.cmake
  /usr/share/doc/orrery/copyright
)
for size in 16 32 48 64 128 256; do
  expect+=("/usr/share/icons/hicolor/${size}x${size}/apps/$app_id.png")
done
[[ -n $trainer ]] && expect+=(/usr/share/man/man1/orrery-train.1.gz /usr/share/orrery/trainer-schema.json)
for f in "${expect[@]}"; do
  grep -qxF "$f" "$work/contents" || fail "the package has no $f"
done
if grep -qx '/usr/bin/orrery-train' "$work/contents"; then
  fail "the package ships /usr/bin/orrery-train, which links the build machine's LibTorch by path"
fi
if grep -Eq '^/usr/share/orrery/trainer-source/trainer/build(-[^/]*)?(/|$)' "$work/contents"; then
  fail "the trainer's source in the package holds a build directory"
fi

dpkg-deb -x "$deb" "$work/extract"
x=$work/extract
# The trainer's source is the repo's trainer/ and cmake/, build directories left out.
diff -r --exclude=build --exclude='build-*' "$source/trainer" "$x/usr/share/orrery/trainer-source/trainer" \
  >"$work/trainer-source.diff" || fail "the packaged trainer source differs from trainer/: $(head -5 "$work/trainer-source.diff")"
diff -r "$source/cmake" "$x/usr/share/orrery/trainer-source/cmake" >/dev/null || fail "the packaged cmake/ differs"

appstreamcli validate --no-net "$x/usr/share/metainfo/$app_id.metainfo.xml" >"$work/appstream.log" 2>&1 ||
  fail "appstreamcli validate: $(cat "$work/appstream.log")"
# The tree as installed: the metainfo's launchable names a desktop entry the package has.
appstreamcli validate-tree --no-net "$x" >"$work/appstream-tree.log" 2>&1 ||
  fail "appstreamcli validate-tree: $(cat "$work/appstream-tree.log")"
desktop-file-validate "$x/usr/share/applications/$app_id.desktop" >"$work/desktop.log" 2>&1 ||
  fail "desktop-file-validate: $(cat "$work/desktop.log")"
[[ ! -s $work/desktop.log ]] || fail "desktop-file-validate: $(cat "$work/desktop.log")"
say "appstreamcli validate (and validate-tree) --no-net, desktop-file-validate: ok"
for size in 16 32 48 64 128 256; do
  png="$x/usr/share/icons/hicolor/${size}x${size}/apps/$app_id.png"
  [[ $(od -An -c -j1 -N3 "$png" | tr -d ' ') == PNG ]] || fail "$png is no PNG"
  width=$(od -An -tu4 --endian=big -j16 -N4 "$png" | tr -d ' ')
  [[ $width == "$size" ]] || fail "$png is $width pixels wide, not $size"
done
for program in orrery orrery-gui; do
  if readelf -d "$x/usr/bin/$program" | grep -Eq 'RPATH|RUNPATH'; then
    fail "/usr/bin/$program carries an RPATH: $(readelf -d "$x/usr/bin/$program" | grep -E 'RPATH|RUNPATH')"
  fi
done
for page in "$x"/usr/share/man/man1/*.gz; do
  gzip -t "$page" || fail "$page is not gzip"
done

# --- install it ----------------------------------------------------------------------------------
# No file of the package may be there before: dpkg would silently overwrite one that no package owns.
while read -r f; do
  if [[ -e $f && ! -d $f ]]; then
    fail "$f is already there and is no file of an installed orrery package: installing would overwrite it"
  fi
done <"$work/contents"
t=$(ms)
touch "$marker"
if ! apt install -y --no-install-recommends "$deb" >"$work/apt-install.log" 2>&1; then
  tail -n 30 "$work/apt-install.log" >&2
  fail "apt-get install $deb failed"
fi
installed || fail "apt-get install succeeded but dpkg does not list orrery as installed"
say "installed with apt-get in $(seconds_since "$t") s"
dpkg -L orrery >"$work/installed-files"
(($(wc -l <"$work/installed-files") > 30)) || fail "dpkg -L orrery lists only $(wc -l <"$work/installed-files") paths"

# --- run what it installed, as a user with nothing of Orrery yet ---------------------------------
export HOME=$work/home XDG_CONFIG_HOME=$work/home/.config XDG_DATA_HOME=$work/home/.local/share
export PATH=/usr/bin:/bin
unset ORRERY_DB ORRERY_TRAINER ORRERY_CLI
[[ $(command -v orrery) == /usr/bin/orrery ]] || fail "orrery on PATH is $(command -v orrery), not /usr/bin/orrery"
v=$(orrery --version) || fail "orrery --version failed"
[[ $v == "orrery $version" ]] || fail "orrery --version printed '$v'"

# doctor: the package has no trainer, so that check warns (and says how to get one); the others run.
rc=0
orrery doctor >"$work/doctor.txt" 2>"$work/doctor.err" || rc=$?
[[ $rc == 0 || $rc == 1 ]] || fail "orrery doctor exited $rc: $(cat "$work/doctor.err")"
grep -qx "orrery $version" "$work/doctor.txt" || fail "orrery doctor printed no version line: $(cat "$work/doctor.txt")"
grep -Eq '^STATUS +CHECK +DETAIL' "$work/doctor.txt" || fail "orrery doctor printed no table: $(cat "$work/doctor.txt")"
for check in Qt SQLite trainer libssh; do
  grep -Eq "^(ok|warn|FAIL) +$check " "$work/doctor.txt" || fail "orrery doctor has no $check check: $(cat "$work/doctor.txt")"
done
grep -Eq '^warn +trainer +orrery-train not found' "$work/doctor.txt" ||
  fail "orrery doctor should find no trainer here: $(grep trainer "$work/doctor.txt")"
say "orrery doctor (exit $rc): $(grep -Ec '^(ok|warn|FAIL) ' "$work/doctor.txt") checks, the trainer not found"
# The documented route to a trainer: ORRERY_TRAINER names one built elsewhere.
if [[ -n $trainer ]]; then
  rc=0
  ORRERY_TRAINER=$trainer orrery doctor >"$work/doctor-trainer.txt" 2>&1 || rc=$?
  grep -Eq "^ok +trainer +$trainer: LibTorch" "$work/doctor-trainer.txt" ||
    fail "with ORRERY_TRAINER=$trainer, doctor's trainer check: $(grep trainer "$work/doctor-trainer.txt")"
  say "orrery doctor with ORRERY_TRAINER: the trainer found"
fi

# Without a local trainer, a spec is checked against the schema the package ships: a good one plans
# (and would submit to a cluster), a bad key is refused by name; a local sweep says what is missing.
if [[ -n $trainer ]]; then
  orrery --db "$work/home/plan.sqlite" sweep plan /usr/share/orrery/sweeps/quickstart.yaml >"$work/plan.txt" 2>&1 ||
    fail "orrery sweep plan without a local trainer: $(cat "$work/plan.txt")"
  grep -q '3 of 3 combinations' "$work/plan.txt" || fail "orrery sweep plan printed: $(cat "$work/plan.txt")"
  sed 's/optim.lr:/optim.no_such_key:/' /usr/share/orrery/sweeps/quickstart.yaml >"$work/home/bad.yaml"
  sed -i "s|\.\./configs/|/usr/share/orrery/configs/|" "$work/home/bad.yaml"
  rc=0
  orrery --db "$work/home/plan.sqlite" sweep plan "$work/home/bad.yaml" >"$work/bad.txt" 2>&1 || rc=$?
  [[ $rc == 2 ]] && grep -q 'optim.no_such_key' "$work/bad.txt" ||
    fail "a spec with an unknown key: exit $rc, $(cat "$work/bad.txt")"
  rc=0
  orrery --db "$work/home/plan.sqlite" sweep submit /usr/share/orrery/sweeps/quickstart.yaml >"$work/local.txt" 2>&1 || rc=$?
  [[ $rc == 1 ]] && grep -q 'orrery-train is not on this machine' "$work/local.txt" ||
    fail "a local sweep without a trainer: exit $rc, $(cat "$work/local.txt")"
  say "sweep plan with the shipped schema; a bad key refused; a local sweep says it needs a trainer"
fi

# The GUI, offscreen, on a database the CLI made: it shows it, saves a screenshot and quits.
orrery --db "$work/home/gui.sqlite" experiments list >/dev/null || fail "orrery experiments list failed"
rc=0
QT_QPA_PLATFORM=offscreen timeout 120 orrery-gui --db "$work/home/gui.sqlite" --no-follow \
  --screenshot "$work/gui.png" >"$work/gui.log" 2>&1 || rc=$?
[[ $rc == 0 ]] || fail "orrery-gui exited $rc: $(tail -5 "$work/gui.log")"
[[ -s $work/gui.png && $(od -An -c -j1 -N3 "$work/gui.png" | tr -d ' ') == PNG ]] ||
  fail "orrery-gui saved no PNG screenshot: $(tail -5 "$work/gui.log")"
say "orrery-gui offscreen: screenshot $(od -An -tu4 --endian=big -j16 -N8 "$work/gui.png" | awk '{ print $1 "x" $2 }')"

# Man pages: where man finds them, and they render without a warning.
pages=(orrery orrery-gui)
[[ -n $trainer ]] && pages+=(orrery-train)
for page in "${pages[@]}"; do
  [[ -f /usr/share/man/man1/$page.1.gz ]] || fail "/usr/share/man/man1/$page.1.gz is not installed"
  if command -v man >/dev/null; then
    where=$(man -w "$page") || fail "man -w $page found nothing"
    [[ $where == "/usr/share/man/man1/$page.1.gz" ]] || fail "man -w $page: $where"
    MANWIDTH=100 man --warnings -P cat "$page" >"$work/$page.txt" 2>"$work/$page.warnings" || fail "man $page failed"
    [[ ! -s $work/$page.warnings ]] || fail "man $page: $(cat "$work/$page.warnings")"
  fi
done
if command -v man >/dev/null; then
  grep -q 'orrery sweep submit FILE' "$work/orrery.txt" || fail "man orrery has no 'orrery sweep submit FILE'"
  grep -q -- '--screenshot' "$work/orrery-gui.txt" || fail "man orrery-gui has no --screenshot"
  say "man: ${pages[*]} found and rendered without warnings"
fi

# The bash completion: what TAB gives in a real bash.
completion=/usr/share/bash-completion/completions/orrery
[[ -f $completion ]] || fail "$completion is not installed"
complete_words() {
  bash --norc --noprofile -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1));
    COMPREPLY=(); _orrery; printf "%s\n" "${COMPREPLY[@]}"' complete "$completion" "$@"
}
[[ $(complete_words orrery sw) == sweep ]] || fail "orrery sw<TAB> gives '$(complete_words orrery sw)', not sweep"
verbs=$(complete_words orrery sweep '' | tr '\n' ' ')
for verb in plan submit status watch best; do
  [[ " $verbs " == *" $verb "* ]] || fail "orrery sweep <TAB> gives '$verbs', without $verb"
done
say "bash completion: orrery sw<TAB> -> sweep; orrery sweep <TAB> -> $verbs"

# --- remove it: nothing of it is left ------------------------------------------------------------
t=$(ms)
apt remove --purge -y orrery >"$work/apt-remove.log" 2>&1 || fail "apt-get remove --purge orrery failed"
rm -f "$marker"
! installed || fail "orrery is still installed after apt-get remove --purge"
left=()
while read -r f; do
  [[ -d $f ]] && continue
  [[ -e $f || -L $f ]] && left+=("$f")
done <"$work/installed-files"
((${#left[@]} == 0)) || fail "left after removal: ${left[*]}"
for d in /usr/share/orrery /usr/share/doc/orrery; do
  [[ ! -e $d ]] || fail "$d is left after removal"
done
[[ ! -e /usr/bin/orrery && ! -e /usr/bin/orrery-gui ]] || fail "/usr/bin/orrery or orrery-gui is left"
say "removed with apt-get remove --purge in $(seconds_since "$t") s: none of its $(wc -l <"$work/installed-files") paths left"
say "passed in $(seconds_since "$started") s"
