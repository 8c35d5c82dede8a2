#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Orrery's code snapshot (docs/sweeps.md "Each trial in its own directory"): the program's
# directory frozen when a sweep is submitted, and each trial's working directory made from it.
# Shipped with every batch into <sweep dir>/.orrery/ and run by the local executor and by the
# sbatch script alike, so the rule lives in one place and a cluster needs no Orrery installation.
#
#   orrery-code.sh snapshot SRC CODE [--link PATH]... [--fresh PATH]...
#       Freezes SRC into CODE (once: a CODE that exists is kept as it is) and prints CODE's record,
#       .orrery-snapshot.json: source, git commit/branch/dirty, files and bytes copied, entries linked.
#       - With git (SRC inside a work tree): the files git tracks or would track (untracked, not
#         ignored) are copied; the ignored entries (data, weights, caches: git's own listing,
#         a wholly ignored directory as one entry) are linked, not copied, except the outputs of a
#         run (below), which each trial starts without. The repository's `git diff HEAD` is kept
#         beside CODE as code.diff.
#       - Without git: top-level entries are copied smallest first while each is at most 64 MiB
#         and the copy stays under 256 MiB; the others are linked.
#       A directory of SRC that holds CODE (sweeps kept inside the project) is left out whole.
#       - SRC is the home directory (a cluster's default workdir) or /: nothing is copied, every
#         entry but the dotfiles is linked ("vcs":"home"): the trial's writes are its own, its code
#         is not frozen.
#       Outputs of a run, never copied nor linked: mlruns mlflow.db wandb lightning_logs outputs
#       multirun runs out exp_output checkpoints __pycache__ .ipynb_checkpoints, and each --fresh.
#       Each --link PATH is linked whatever the rules say.
#       Copies are reflinks where the filesystem has them (cp --reflink=auto), else plain copies;
#       the copy is read-only, so a trial that writes into a frozen file fails instead of changing
#       it for every other trial.
#   orrery-code.sh view CODE WORK
#       Makes WORK (once: a retry or a resumed attempt finds its own directory, checkpoints and all):
#       CODE's files hard-linked in real directories, the linked entries as symbolic links to the
#       originals. What the program writes under relative paths lands in WORK alone.
set -euo pipefail
umask 022

fresh_default=(mlruns mlflow.db wandb lightning_logs outputs multirun runs out exp_output checkpoints
               __pycache__ .ipynb_checkpoints)
# Without git, what is not code: a top-level entry above 64 MiB, or what would take the copy past
# 256 MiB (a code directory is a few MB; a dataset or a venv is not).
no_git_entry_limit=$((64 * 1024 * 1024))
no_git_total_limit=$((256 * 1024 * 1024))

die() {
    printf 'orrery-code: %s\n' "$*" >&2
    exit 1
}

json_string() {  # json_string TEXT: TEXT as a JSON string
    local s=$1
    s=${s//\\/\\\\}
    s=${s//\"/\\\"}
    s=${s//$'\n'/\\n}
    s=${s//$'\t'/\\t}
    s=${s//$'\r'/\\r}
    printf '"%s"' "$s"
}

# is_fresh PATH: PATH (relative, no trailing /) or one of its parents is an output of a run.
is_fresh() {
    local path=$1 part name f
    IFS=/ read -r -a part <<< "$path"
    for name in "${part[@]}"; do
        for f in "${fresh[@]}"; do
            [[ $name == "$f" ]] && return 0
        done
    done
    for f in "${fresh_paths[@]}" "${excluded[@]}"; do
        [[ $path == "$f" || $path == "$f"/* ]] && return 0
    done
    return 1
}

# is_forced_link PATH: PATH is one of --link or lies under one.
is_forced_link() {
    local path=$1 l
    for l in "${links[@]}"; do
        [[ $path == "$l" || $path == "$l"/* ]] && return 0
    done
    return 1
}

snapshot() {
    local src=$1 code=$2
    shift 2
    links=() fresh=("${fresh_default[@]}") fresh_paths=()
    while (($#)); do
        case $1 in
            --link) links+=("${2%/}") ;;
            --fresh) fresh_paths+=("${2%/}") ;;
            *) die "snapshot: unknown option $1" ;;
        esac
        shift 2
    done
    [[ -d $src ]] || die "cannot freeze $src: not a directory"
    src=$(cd -- "$src" && pwd -P)
    # Sweeps kept inside the program's directory: the top directory holding them stays out.
    excluded=()
    mkdir -p -- "$(dirname -- "$code")"
    local parent
    parent=$(cd -- "$(dirname -- "$code")" && pwd -P)
    if [[ $parent == "$src"/* ]]; then
        local inside=${parent#"$src"/}
        excluded+=("${inside%%/*}")
    fi
    if [[ -e $code/.orrery-snapshot.json ]]; then
        cat -- "$code/.orrery-snapshot.json"
        return
    fi
    local tmp=$code.tmp.$$
    local list=$tmp.files linked=$tmp.linked
    # shellcheck disable=SC2064 # the names are fixed now
    trap "rm -rf -- '$tmp' '$list' '$linked' '$tmp.err'" EXIT
    rm -rf -- "$tmp"
    mkdir -p -- "$tmp"
    : > "$list"
    : > "$linked"
    local commit="" branch="" dirty=false top="" kind=none
    # The home directory itself (a cluster's default workdir) or the root is no project: nothing
    # is copied (dotfiles, keys), every entry is linked; the trial's writes are still its own.
    local whole=$HOME
    [[ -n $whole ]] && whole=$(cd -- "$whole" 2> /dev/null && pwd -P || printf '%s' "$HOME")
    if [[ $src == "$whole" || $src == / ]]; then
        kind=home
        no_git_entry_limit=-1
    fi
    if [[ $kind == none ]] && top=$(git -C "$src" rev-parse --show-toplevel 2> /dev/null); then
        kind=git
        commit=$(git -C "$src" rev-parse -q --verify HEAD 2> /dev/null || true)
        branch=$(git -C "$src" symbolic-ref -q --short HEAD 2> /dev/null || true)
        if [[ -n $(git -C "$src" status --porcelain 2> /dev/null | head -n 1) ]]; then dirty=true; fi
        if [[ -n $commit ]]; then
            git -C "$top" diff --binary HEAD > "$code.diff.tmp" 2> /dev/null || true
            mv -f -- "$code.diff.tmp" "$code.diff"
        fi
        # Tracked and untracked-not-ignored files, relative to SRC; a tracked file deleted from the
        # work tree is not there to copy.
        local f
        while IFS= read -r -d '' f; do
            [[ -e $src/$f || -L $src/$f ]] || continue
            if is_forced_link "$f"; then continue; fi
            if is_fresh "$f"; then continue; fi
            printf '%s\0' "$f" >> "$list"
        done < <(git -C "$src" ls-files -z --cached --others --exclude-standard -- .)
        # Ignored entries, a wholly ignored directory as one (trailing /).
        while IFS= read -r -d '' f; do
            f=${f%/}
            is_fresh "$f" && continue
            is_forced_link "$f" && continue
            printf '%s\0' "$f" >> "$linked"
        done < <(git -C "$src" ls-files -z --others --ignored --exclude-standard --directory -- .)
    else
        local entry name size total=0 prune=(\( -false)
        for f in "${fresh[@]}"; do prune+=(-o -name "$f"); done
        prune+=(\) -prune)
        shopt -s dotglob nullglob
        # Smallest first: the code is copied before a large entry can use up the limit.
        while IFS=$'\t' read -r -d '' size name; do
            if ((no_git_entry_limit >= 0 && size <= no_git_entry_limit && total + size <= no_git_total_limit)); then
                total=$((total + size))
                (cd -- "$src" && find "$name" "${prune[@]}" -o \( -type f -o -type l \) -print0) >> "$list"
            else
                printf '%s\0' "$name" >> "$linked"
            fi
        done < <(for entry in "$src"/*; do
            name=${entry##*/}
            [[ $name == .git ]] && continue
            [[ $kind == home && $name == .* ]] && continue  # dotfiles: keys, shell history, caches
            is_fresh "$name" && continue
            is_forced_link "$name" && continue
            [[ -f $entry || -d $entry || -L $entry ]] || continue  # sockets, fifos, devices
            if [[ -L $entry || $kind == home ]]; then size=0; else size=$(du -sb -- "$entry" 2> /dev/null | cut -f1); fi
            printf '%s\t%s\0' "${size:-0}" "$name"
        done | sort -z -n)
        shopt -u dotglob nullglob
    fi
    local l kept=""
    for l in "${links[@]}"; do
        [[ -e $src/$l ]] && printf '%s\0' "$l" >> "$linked"
    done
    # One link per entry: git lists a wholly ignored directory and, for patterns such as *.bin, its
    # files too; what lies under a linked directory is reached through it.
    sort -z -u -o "$linked" "$linked"
    while IFS= read -r -d '' l; do
        [[ -n $kept && $l == "$kept"/* ]] && continue
        kept=$l
        printf '%s\0' "$l"
    done < "$linked" > "$linked.kept"
    mv -f -- "$linked.kept" "$linked"
    # The copy: reflinks where the filesystem has them, symbolic links kept as links.
    # A file that vanished meanwhile (a temporary file of a running program) is not an error;
    # any other failure (a full disk, an unreadable file) is.
    if [[ -s $list ]] &&
        ! (cd -- "$src" && xargs -0 cp --reflink=auto -d --preserve=mode,timestamps --parents -t "$tmp" -- < "$list" 2> "$tmp.err"); then
        local f
        while IFS= read -r -d '' f; do
            if [[ ! -e $tmp/$f && ! -L $tmp/$f ]] && [[ -e $src/$f || -L $src/$f ]]; then
                die "cannot copy $src into $code: $(head -c 2000 "$tmp.err")"
            fi
        done < "$list"
    fi
    rm -f -- "$tmp.err"
    find "$tmp" -type f -exec chmod a-w -- {} +
    local files bytes
    files=$(tr -cd '\0' < "$list" | wc -c)
    bytes=$(find "$tmp" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
    mkdir -p -- "$tmp/.orrery-code"
    cp -- "$linked" "$tmp/.orrery-code/linked"
    printf '%s' "$src" > "$tmp/.orrery-code/source"
    {
        printf '{"source":%s,"files":%d,"bytes":%d,"vcs":"%s"' "$(json_string "$src")" "$files" "$bytes" "$kind"
        if [[ $kind == git ]]; then
            printf ',"git":{"commit":%s,"branch":%s,"dirty":%s,"root":%s' "$(json_string "$commit")" \
                "$(json_string "$branch")" "$dirty" "$(json_string "$top")"
            [[ -e $code.diff ]] && printf ',"diff":%s' "$(json_string "$code.diff")"
            printf '}'
        fi
        printf ',"linked":['
        local first=1
        while IFS= read -r -d '' l; do
            ((first)) || printf ','
            first=0
            json_string "$l"
        done < "$linked"
        printf '],"t":%s}\n' "$(date +%s)"
    } > "$tmp/.orrery-snapshot.json"
    rm -f -- "$list" "$linked"
    # A snapshot made by another process meanwhile wins: both froze the same directory.
    if ! mv -T -- "$tmp" "$code" 2> /dev/null; then
        chmod -R u+w -- "$tmp"
        rm -rf -- "$tmp"
    fi
    trap - EXIT
    cat -- "$code/.orrery-snapshot.json"
}

view() {
    local code=$1 work=$2
    [[ -e $code/.orrery-snapshot.json ]] || die "no code snapshot in $code"
    [[ -d $work ]] && return 0
    local tmp=$work.tmp.$$ src l
    # shellcheck disable=SC2064 # the name is fixed now
    trap "rm -rf -- '$tmp'" EXIT
    rm -rf -- "$tmp"
    mkdir -p -- "$tmp"
    # Real directories (what the program creates in them stays in this trial), files hard-linked
    # (no copy per trial; a copy where the two cannot share an inode); the snapshot's own records
    # stay out.
    cp -al -- "$code/." "$tmp/" 2> /dev/null || cp -a --reflink=auto -- "$code/." "$tmp/" ||
        die "cannot make $work from $code"
    rm -rf -- "$tmp/.orrery-code" "$tmp/.orrery-snapshot.json"
    find "$tmp" -type d -exec chmod u+w -- {} +
    src=$(cat -- "$code/.orrery-code/source")
    while IFS= read -r -d '' l; do
        mkdir -p -- "$tmp/$(dirname -- "$l")"
        ln -sfn -- "$src/$l" "$tmp/$l"
    done < "$code/.orrery-code/linked"
    mv -T -- "$tmp" "$work" 2> /dev/null || rm -rf -- "$tmp"
    trap - EXIT
}

case ${1:-} in
    snapshot)
        (($# >= 3)) || die "usage: orrery-code.sh snapshot SRC CODE [--link PATH]... [--fresh PATH]..."
        shift
        snapshot "$@"
        ;;
    view)
        (($# == 3)) || die "usage: orrery-code.sh view CODE WORK"
        view "$2" "$3"
        ;;
    *) die "usage: orrery-code.sh snapshot SRC CODE ... | view CODE WORK" ;;
esac
