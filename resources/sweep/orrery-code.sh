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
#         ignored) are copied, an untracked one over 64 MiB linked instead; the ignored entries
#         (data, weights, caches: git's own listing, a wholly ignored directory as one entry) and
#         submodules are linked, not copied. The repository's `git diff HEAD` is kept as
#         CODE/.orrery-code/code.diff.
#       - Without git: top-level entries are copied smallest first while each is at most 64 MiB
#         and the copy stays under 256 MiB; the others are linked.
#       - SRC is the home directory (a cluster's default workdir) or /: nothing is copied, every
#         entry but the dotfiles is linked ("vcs":"home"): the trial's writes are its own, its code
#         is not frozen.
#       Outputs of a run, each trial starts without them: the top-level entries mlruns mlflow.db
#       wandb lightning_logs outputs multirun runs out exp_output checkpoints, ignored or untracked
#       __pycache__ and .ipynb_checkpoints anywhere, and each --fresh PATH. A directory of SRC that
#       holds CODE (sweeps kept inside the project) is left out whole. Each --link PATH is linked
#       whatever the rules say.
#       Copies are reflinks where the filesystem has them (cp --reflink=auto), else plain copies;
#       the copy is read-only, so a trial that writes into a frozen file fails instead of changing
#       it for every other trial.
#   orrery-code.sh view CODE WORK
#       Makes WORK (once: a retry or a resumed attempt finds its own directory, checkpoints and all):
#       CODE's files hard-linked in real directories, the linked entries as symbolic links to the
#       originals. What the program writes under relative paths lands in WORK alone.
set -euo pipefail
umask 022
export LC_ALL=C  # byte order for sort: a directory's entries follow it

fresh_top=(mlruns mlflow.db wandb lightning_logs outputs multirun runs out exp_output checkpoints)
fresh_anywhere=(__pycache__ .ipynb_checkpoints)
# Without git, what is not code: a top-level entry above 64 MiB, or what would take the copy past
# 256 MiB (a code directory is a few MB; a dataset or a venv is not). With git, an untracked file
# above 64 MiB (a dataset not yet in .gitignore) is linked.
entry_limit=$((64 * 1024 * 1024))
total_limit=$((256 * 1024 * 1024))

# What an EXIT trap removes: a snapshot or view cut short leaves nothing half made. Globals, so
# the trap's text holds no path (a path with a quote in it would be shell code there).
cleanup=()
remove_cleanup() { ((${#cleanup[@]} == 0)) || rm -rf -- "${cleanup[@]}"; }
trap remove_cleanup EXIT
trap 'exit 143' TERM INT HUP

die() {
    printf 'orrery-code: %s\n' "$*" >&2
    exit 1
}

json_string() {  # json_string TEXT: TEXT as a JSON string
    local s=$1 out="" c i
    s=${s//\\/\\\\}
    s=${s//\"/\\\"}
    if [[ $s == *[$'\x01'-$'\x1f']* ]]; then
        for ((i = 0; i < ${#s}; i++)); do
            c=${s:i:1}
            if [[ $c == [$'\x01'-$'\x1f'] ]]; then
                printf -v c '\\u%04x' "'$c"
            fi
            out+=$c
        done
        s=$out
    fi
    printf '"%s"' "$s"
}

# is_output PATH [TOPLEVEL_TOO]: PATH (relative, no trailing /) is an output of a run: a name of
# fresh_anywhere in it, an --fresh path or one under it, the directory holding the sweeps, or
# (with TOPLEVEL_TOO, for what git ignores or does not track) a top-level name of fresh_top.
is_output() {
    local path=$1 f
    # Split by hand: a here-string per call costs a temporary file, per file of the project.
    for f in "${fresh_anywhere[@]}"; do
        [[ /$path/ == */"$f"/* ]] && return 0
    done
    for f in "${fresh_top[@]}"; do
        [[ ${path%%/*} == "$f" ]] && return 0
    done
    for f in "${fresh_paths[@]}" "${excluded[@]}"; do
        [[ $path == "$f" || $path == "$f"/* ]] && return 0
    done
    return 1
}

# is_excluded PATH: PATH is an --fresh path or under one, or in the directory holding the sweeps
# (what applies to tracked files: the output names do not, `src/runs/` may well be code).
is_excluded() {
    local path=$1 f
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
    links=() fresh_paths=() excluded=()
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
    mkdir -p -- "$(dirname -- "$code")"
    code=$(cd -- "$(dirname -- "$code")" && pwd -P)/$(basename -- "$code")
    if [[ -e $code/.orrery-snapshot.json ]]; then
        cat -- "$code/.orrery-snapshot.json"
        return
    fi
    # Sweeps kept inside the program's directory: the top directory holding them stays out.
    local parent=${code%/*}
    if [[ $parent == "$src"/* ]]; then
        local inside=${parent#"$src"/}
        excluded+=("${inside%%/*}")
    fi
    local tmp=$code.tmp.$$
    local list=$tmp.files linked=$tmp.linked err=$tmp.err
    cleanup=("$tmp" "$list" "$linked" "$err" "$linked.kept")
    rm -rf -- "$tmp"
    mkdir -p -- "$tmp/.orrery-code"
    : > "$list"
    : > "$linked"
    local commit="" branch="" dirty=false top="" kind=none f mode rest
    # The home directory itself (a cluster's default workdir) or the root is no project: nothing
    # is copied (dotfiles, keys), every entry is linked; the trial's writes are still its own.
    local home=${HOME:-}
    [[ -n $home && -d $home ]] && home=$(cd -- "$home" && pwd -P)
    if [[ $src == "$home" || $src == / ]]; then
        kind=home
    elif top=$(git -C "$src" rev-parse --show-toplevel 2> /dev/null); then
        kind=git
        commit=$(git -C "$src" rev-parse -q --verify HEAD 2> /dev/null || true)
        branch=$(git -C "$src" symbolic-ref -q --short HEAD 2> /dev/null || true)
        if [[ -n $(git -C "$src" status --porcelain 2> /dev/null | head -n 1) ]]; then dirty=true; fi
        if [[ -n $commit ]]; then
            git -C "$top" diff --binary HEAD > "$tmp/.orrery-code/code.diff" 2> /dev/null || true
        fi
        # Submodules (gitlinks, mode 160000): linked, their code not frozen.
        local -A gitlink=()
        while IFS= read -r -d '' f; do
            mode=${f%% *}
            rest=${f#*$'\t'}
            if [[ $mode == 160000 ]]; then
                gitlink[$rest]=1
                is_output "$rest" || printf '%s\0' "$rest" >> "$linked"
            fi
        done < <(git -C "$src" ls-files -s -z -- .)
        # Tracked files (a tracked file deleted from the work tree is not there to copy).
        while IFS= read -r -d '' f; do
            [[ -n ${gitlink[$f]+x} ]] && continue
            [[ -e $src/$f || -L $src/$f ]] || continue
            is_forced_link "$f" && continue
            is_excluded "$f" && continue
            printf '%s\0' "$f" >> "$list"
        done < <(git -C "$src" ls-files -z --cached -- .)
        # Untracked, not ignored: copied like tracked ones, unless an output or over the limit.
        while IFS= read -r -d '' f; do
            [[ -e $src/$f || -L $src/$f ]] || continue
            is_forced_link "$f" && continue
            is_output "$f" && continue
            if [[ ! -L $src/$f ]] && (($(stat -c %s -- "$src/$f") > entry_limit)); then
                printf '%s\0' "$f" >> "$linked"
            else
                printf '%s\0' "$f" >> "$list"
            fi
        done < <(git -C "$src" ls-files -z --others --exclude-standard -- .)
        # Ignored entries, a wholly ignored directory as one (trailing /).
        while IFS= read -r -d '' f; do
            f=${f%/}
            is_output "$f" && continue
            is_forced_link "$f" && continue
            printf '%s\0' "$f" >> "$linked"
        done < <(git -C "$src" ls-files -z --others --ignored --exclude-standard --directory -- .)
    fi
    if [[ $kind != git ]]; then
        local entry name size total=0 prune=(\( -false)
        for f in "${fresh_anywhere[@]}"; do prune+=(-o -name "$f"); done
        prune+=(\) -prune)
        shopt -s dotglob nullglob
        # Smallest first: the code is copied before a large entry can use up the limit.
        while IFS=$'\t' read -r -d '' size name; do
            if [[ $kind == none ]] && ((size <= entry_limit && total + size <= total_limit)); then
                total=$((total + size))
                # ./NAME: a name such as -rf is a path to find, not an option; the ./ is dropped.
                (cd -- "$src" && find "./$name" "${prune[@]}" -o \( -type f -o -type l \) -printf '%P\0' |
                    while IFS= read -r -d '' f; do [[ -z $f ]] || printf '%s/%s\0' "$name" "$f"; done) >> "$list"
                [[ -f $src/$name || -L $src/$name ]] && printf '%s\0' "$name" >> "$list"
            else
                printf '%s\0' "$name" >> "$linked"
            fi
        done < <(for entry in "$src"/*; do
            name=${entry##*/}
            [[ $name == .git ]] && continue
            [[ $kind == home && $name == .* ]] && continue  # dotfiles: keys, shell history, caches
            is_output "$name" && continue
            is_forced_link "$name" && continue
            [[ -f $entry || -d $entry || -L $entry ]] || continue  # sockets, fifos, devices
            if [[ -L $entry || $kind == home ]]; then size=0; else size=$(du -sb -- "$entry" 2> /dev/null | cut -f1); fi
            printf '%s\t%s\0' "${size:-0}" "$name"
        done | sort -z -n)
        shopt -u dotglob nullglob
    fi
    local l
    for l in "${links[@]}"; do
        [[ -e $src/$l || -L $src/$l ]] && printf '%s\0' "$l" >> "$linked"
    done
    # One link per entry: git lists a wholly ignored directory and, for patterns such as *.bin, its
    # files too; what lies under a linked entry is reached through it. A copied file under a linked
    # entry is dropped for the same reason.
    local -A kept=()
    sort -z -u -o "$linked" "$linked"
    while IFS= read -r -d '' l; do
        under_kept "$l" && continue
        kept[$l]=1
        printf '%s\0' "$l"
    done < "$linked" > "$linked.kept"
    mv -f -- "$linked.kept" "$linked"
    if ((${#kept[@]})); then
        while IFS= read -r -d '' f; do
            under_kept "$f" && continue
            printf '%s\0' "$f"
        done < "$list" > "$list.kept"
        mv -f -- "$list.kept" "$list"
    fi
    # The copy: reflinks where the filesystem has them, symbolic links kept as links.
    # A file that vanished meanwhile (a temporary file of a running program) is not an error;
    # any other failure (a full disk, an unreadable file) is.
    if [[ -s $list ]] &&
        ! (cd -- "$src" && xargs -0 cp --reflink=auto -d --preserve=mode,timestamps --parents -t "$tmp" -- < "$list" 2> "$err"); then
        while IFS= read -r -d '' f; do
            if [[ ! -e $tmp/$f && ! -L $tmp/$f ]] && [[ -e $src/$f || -L $src/$f ]]; then
                die "cannot copy $src into $code: $(head -c 2000 "$err")"
            fi
        done < "$list"
    fi
    find "$tmp" -path "$tmp/.orrery-code" -prune -o -type f -exec chmod a-w -- {} +
    local files bytes
    files=$(tr -cd '\0' < "$list" | wc -c)
    bytes=$(find "$tmp" -path "$tmp/.orrery-code" -prune -o -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
    cp -- "$linked" "$tmp/.orrery-code/linked"
    printf '%s' "$src" > "$tmp/.orrery-code/source"
    {
        printf '{"source":%s,"files":%d,"bytes":%d,"vcs":"%s"' "$(json_string "$src")" "$files" "$bytes" "$kind"
        if [[ $kind == git ]]; then
            printf ',"git":{"commit":%s,"branch":%s,"dirty":%s,"root":%s' "$(json_string "$commit")" \
                "$(json_string "$branch")" "$dirty" "$(json_string "$top")"
            [[ -e $tmp/.orrery-code/code.diff ]] && printf ',"diff":%s' "$(json_string "$code/.orrery-code/code.diff")"
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
    mv -T -- "$tmp" "$code" 2> /dev/null || true
    cat -- "$code/.orrery-snapshot.json"
}

# under_kept PATH: a parent of PATH (or PATH itself) is in the associative array `kept`.
under_kept() {
    local rest=$1 prefix=""
    while :; do
        prefix=${prefix:+$prefix/}${rest%%/*}
        [[ -n ${kept[$prefix]+x} ]] && return 0
        [[ $rest == */* ]] || return 1
        rest=${rest#*/}
    done
}

view() {
    local code=$1 work=$2
    [[ -e $code/.orrery-snapshot.json ]] || die "no code snapshot in $code"
    [[ -d $work ]] && return 0
    local tmp=$work.tmp.$$ src l parent
    cleanup=("$tmp")
    rm -rf -- "$work".tmp.*  # what an attempt killed while making it left
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
    local real_tmp
    real_tmp=$(cd -- "$tmp" && pwd -P)
    while IFS= read -r -d '' l; do
        mkdir -p -- "$tmp/$(dirname -- "$l")"
        # Never through a link: a link's place must lie inside this trial's directory.
        parent=$(cd -- "$tmp/$(dirname -- "$l")" && pwd -P)
        [[ $parent == "$real_tmp" || $parent == "$real_tmp"/* ]] || continue
        [[ -e $tmp/$l || -L $tmp/$l ]] && continue
        ln -s -- "$src/$l" "$tmp/$l"
    done < "$code/.orrery-code/linked"
    mv -T -- "$tmp" "$work" 2> /dev/null || rm -rf -- "$tmp"
    cleanup=()
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
