# bash completion for prereg: commands, options, sheet files and, after
# --only, the sheet's workloads. Names come from the installed prereg
# itself (its --help and `prereg check`), so they follow the version.
# SPDX-License-Identifier: MIT

_prereg_commands() {
  "$1" --help 2>/dev/null |
    sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p' | sort -u
}

# The workloads of the sheet on the line: the names `prereg check` lists.
_prereg_workloads() {
  "$1" check "$2" 2>/dev/null |
    awk '/^Workloads \(/ { w = 1; next } w && /^$/ { exit }
         w && /^  [^ ]/ { print $1 }'
}

_prereg() {
  local cur prev prog cmd sheet i
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD - 1]}
  prog=${COMP_WORDS[0]}
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
    --data | --out | --only | --arm-from | --arm-map | --where | --backend | \
    --format | --tsa | --tsa-ca | --attach | --sign | --allowed-signers)
      ((i++)) ;;
    -*) ;;
    *)
      if [ -z "$cmd" ]; then cmd=${COMP_WORDS[i]}
      elif [ -z "$sheet" ]; then sheet=${COMP_WORDS[i]}
      fi ;;
    esac
  done
  case $prev in
  --data | --out)
    mapfile -t COMPREPLY < <(compgen -d -- "$cur")
    return ;;
  --tsa-ca | --attach | --sign | --allowed-signers)
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    return ;;
  --tsa) return ;;
  --only)
    [ -n "$sheet" ] &&
      mapfile -t COMPREPLY < <(compgen -W \
        "$(_prereg_workloads "$prog" "$sheet")" -- "$cur")
    return ;;
  --backend)
    mapfile -t COMPREPLY < <(compgen -W "slurm kubernetes" -- "$cur")
    return ;;
  --format)
    mapfile -t COMPREPLY < <(compgen -W "csv json" -- "$cur")
    return ;;
  esac
  if [ -z "$cmd" ] && [[ $cur != -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_prereg_commands "$prog")" \
      -- "$cur")
    return
  fi
  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W \
      "$("$prog" ${cmd:+"$cmd"} --help 2>/dev/null |
        grep -o -- '--[a-z][a-z-]*' | sort -u)" -- "$cur")
    return
  fi
  # A sheet (or a bundle), then a file.
  if [ -n "$sheet" ]; then
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
  else
    mapfile -t COMPREPLY < <(compgen -f -- "$cur" |
      grep -E '\.(lua|tar\.gz)$'; compgen -d -- "$cur")
  fi
}
complete -o filenames -o bashdefault -F _prereg prereg
