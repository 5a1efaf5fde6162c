#!/bin/sh
# check-layers.sh [BUILD]: the floors of the house, checked from the code.
#   1. every #include "FOLDER/..." in a source folder names its own folder
#      or one on a floor below it;
#   2. with BUILD (a build folder), every symbol a folder's library calls
#      that another of our libraries defines is defined on a floor below
#      (read with nm from the static libraries);
#   3. a third-party header is included only by the folder that owns it;
#   4. every function a folder's public header declares is used outside
#      that folder: by another floor, by the tests or, for cli/, by the
#      executable's main.c (what only the folder uses belongs in its
#      *_internal.h).
# Prints one line per problem and exits 1 if there is any.
# SPDX-License-Identifier: MIT
set -eu
export LC_ALL=C
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-}

# Floor of each folder; folders on one floor may not use each other.
floor() {
  case "$1" in
    core) echo 0 ;; protocols) echo 1 ;; data) echo 2 ;; stamps) echo 3 ;;
    imports | bundles | analysis | run) echo 4 ;; fleet | reports) echo 5 ;; cli) echo 6 ;;
    *) echo -1 ;;
  esac
}
folders="core protocols data stamps imports bundles analysis run fleet reports cli"
# Third-party headers and the folders that may include them.
owners() {
  case "$1" in
    openssl/*) echo core ;;
    lua.h | lauxlib.h | lualib.h | luaconf.h) echo protocols ;;
    jansson.h) echo data ;;
    csv.h) echo data ;;
    archive.h | archive_entry.h) echo bundles ;;
    gsl/*) echo analysis ;;
    xlsxwriter.h | xlsxwriter/* | cmark-gfm*) echo reports ;;
    *) echo "*" ;;
  esac
}

bad=0
checked=0
for f in $folders; do
  ff=$(floor "$f")
  for file in "$src/$f"/*.c "$src/$f"/*.h; do
    [ -f "$file" ] || continue
    checked=$((checked + 1))
    rel=${file#"$src"/}
    # 1. our own headers
    for inc in $(sed -n 's/^[ \t]*#[ \t]*include[ \t]*"\([^"/]*\)\/.*".*/\1/p' "$file"); do
      [ "$inc" = "$f" ] && continue
      fi=$(floor "$inc")
      if [ "$fi" -lt 0 ] || [ "$fi" -ge "$ff" ]; then
        echo "$rel: includes $inc/ (floor $fi) from $f/ (floor $ff): an arrow that runs up or across"
        bad=1
      fi
    done
    # 3. third-party headers
    for inc in $(sed -n 's/^[ \t]*#[ \t]*include[ \t]*<\([^>]*\)>.*/\1/p' "$file"); do
      o=$(owners "$inc")
      [ "$o" = "*" ] && continue
      case " $o " in
        *" $f "*) ;;
        *) echo "$rel: includes <$inc>, which only $o/ may include"; bad=1 ;;
      esac
    done
  done
done
[ "$checked" -gt 0 ] || { echo "check-layers: no source file found under $src" >&2; exit 1; }

# 4. the public headers are contracts. code FILE...: the files' C text
# without comments and preprocessor lines.
code() {
  awk '{
    line = $0; out = ""
    while (line != "") {
      if (inc) {
        i = index(line, "*/"); if (!i) { line = ""; break }
        line = substr(line, i + 2); inc = 0
      } else {
        i = index(line, "/*"); if (!i) { out = out line; break }
        out = out substr(line, 1, i - 1); line = substr(line, i + 2); inc = 1
      }
    }
    sub(/\/\/.*/, "", out)
    if (out !~ /^[ \t]*#/) print out
  }' "$@"
}
idents() { grep -oE '\<(core|proto|data|analysis|run|report|cli)_[a-z0-9_]*' | sort -u; }
public=0
for f in $folders; do
  case $f in
    protocols) h=proto.h ;; reports) h=report.h ;; *) h=$f.h ;;
  esac
  [ -f "$src/$f/$h" ] || { echo "check-layers: $f/$h not found" >&2; exit 1; }
  declared=$(code "$src/$f/$h" | grep -oE '\<[a-z][a-z0-9_]*[ \t]*\(' |
             sed 's/[ \t]*($//' | grep -E '^(core|proto|data|analysis|run|report|cli)_' | sort -u)
  used=$( (find "$src" -path "$src/build*" -prune -o -path "$src/.git" -prune -o \
             \( -name '*.c' -o -name '*.h' \) -print | grep -v "^$src/$f/";
           [ "$f" = cli ] && echo "$src/cli/main.c") |
         while read -r file; do code "$file"; done | idents)
  for fn in $declared; do
    public=$((public + 1))
    if ! printf '%s\n' "$used" | grep -qx "$fn"; then
      echo "$f/$h declares $fn, which nothing outside $f/ uses: move it to $f/$(basename "$h" .h)_internal.h"
      bad=1
    fi
  done
done
[ "$public" -gt 0 ] || { echo "check-layers: no public function read" >&2; exit 1; }

# 2. calls, from the built libraries.
calls=0
if [ -n "$build" ]; then
  defs=$(mktemp)
  trap 'rm -f "$defs"' EXIT
  for f in $folders; do
    lib=$(find "$build" -name "libprereg_$f.a" | head -1)
    [ -n "$lib" ] || { echo "check-layers: libprereg_$f.a not found under $build" >&2; exit 1; }
    nm -g --defined-only "$lib" 2>/dev/null |
      awk -v f="$f" 'NF == 3 && $2 ~ /[TDBRC]/ { print $3, f }' >> "$defs"
  done
  for f in $folders; do
    ff=$(floor "$f")
    lib=$(find "$build" -name "libprereg_$f.a" | head -1)
    for pair in $(nm -g --undefined-only "$lib" 2>/dev/null |
                  awk '$1 == "U" { print $2 }' | sort -u |
                  join - "$(sort -o "$defs" "$defs"; echo "$defs")" 2>/dev/null |
                  awk '{ print $1 "=" $2 }'); do
      calls=$((calls + 1))
      sym=${pair%=*}
      g=${pair#*=}
      [ "$g" = "$f" ] && continue
      fg=$(floor "$g")
      if [ "$fg" -ge "$ff" ]; then
        echo "libprereg_$f.a calls $sym, defined in $g/ (floor $fg) above or beside $f/ (floor $ff)"
        bad=1
      fi
    done
  done
  [ "$calls" -gt 0 ] || { echo "check-layers: no call between our libraries was read from $build" >&2; exit 1; }
fi
if [ "$bad" -ne 0 ]; then
  exit 1
fi
echo "layers: $checked files, ${calls} calls between libraries, no arrow runs up;" \
  "the $public functions of the public headers are each used outside their folder"
