# bash completion for sandlock-oci
# Installed by `make install`; or: source contrib/completion/sandlock-oci.bash

_sandlock_oci_global_opts="--root --log --log-format --debug --systemd-cgroup
  --rootless --sandlock-disable --sandlock-degrade --sandlock-config
  --version -v --help -h"
# Global options that take a value.
_sandlock_oci_global_args="--root --log --log-format --rootless --criu --sandlock-disable --sandlock-degrade --sandlock-config"

# The command list comes from the binary being completed (so it is always
# in step); the fallback is for when it cannot be run.
_sandlock_oci_commands() {
  local out
  out=$(command "$1" --help 2>/dev/null |
        sed -n '/^Commands:/,$ s/^  \([a-z][a-z-]*\)  .*/\1/p')
  [ -n "$out" ] || out="bundle check create delete events exec features help
    images inspect kill list pause prune ps pull resume rmi run spec start
    state update"
  echo "$out"
}

# Options shared by pull and bundle (oci/image_cli.c).
_sandlock_oci_image_opts="--cache-dir --creds --authfile --cert-dir
  --tls-verify=false --platform --offline --jobs -q --quiet --format"
# How pull, bundle and run --image unpack layers.
_sandlock_oci_unpack_opts="--allow-devices --max-unpacked-size"

_sandlock_oci_cmd_opts() {
  case $1 in
    pull) echo "$_sandlock_oci_image_opts $_sandlock_oci_unpack_opts" ;;
    bundle) echo "$_sandlock_oci_image_opts $_sandlock_oci_unpack_opts --cow" ;;
    changes) echo "--format" ;;
    commit) echo "--force" ;;
    images|prune) echo "--cache-dir -q --quiet --format" ;;
    inspect|rmi) echo "--cache-dir" ;;
    create) echo "--bundle -b --pid-file --console-socket --preserve-fds
      --no-pivot --no-new-keyring --no-subreaper" ;;
    run) echo "--bundle -b --pid-file --console-socket --preserve-fds
      --no-pivot --no-new-keyring --no-subreaper --detach -d --image
      --cache-dir --keep --cow-on-exit --cow-on-error
      $_sandlock_oci_unpack_opts" ;;
    exec) echo "--process -p --console-socket --cwd --env -e --tty -t
      --user -u --additional-gids -g --cap -c --no-new-privs --detach -d
      --pid-file --preserve-fds --process-label --apparmor --cgroup
      --ignore-paused" ;;
    delete) echo "--force -f" ;;
    kill) echo "--all -a" ;;
    list) echo "--format -f --quiet -q" ;;
    ps) echo "--format -f" ;;
    events) echo "--stats --interval" ;;
    update) echo "--resources -r --memory --memory-reservation --memory-swap
      --kernel-memory --kernel-memory-tcp --pids-limit --cpu-quota
      --cpu-period --cpu-share --cpu-shares --cpu-rt-period --cpu-rt-runtime
      --cpuset-cpus --cpuset-mems --blkio-weight" ;;
    spec) echo "--bundle -b --rootless" ;;
  esac
}

# Container ids from `sandlock-oci [--root R] list -q`.
_sandlock_oci_ids() {
  command "$1" ${2:+--root "$2"} list -q 2>/dev/null
}

# Cached image references: `sandlock-oci images -q [--cache-dir D]`.
_sandlock_oci_refs() {
  command "$1" images -q ${2:+--cache-dir "$2"} 2>/dev/null
}

# The word being completed as typed: bash splits words at ':'
# (COMP_WORDBREAKS), and references are full of them.
_sandlock_oci_word() {
  local w=$cur
  if [ -n "${COMP_LINE:-}" ]; then
    w=${COMP_LINE:0:COMP_POINT}
    w=${w##*[[:space:]]}
  fi
  echo "$w"
}

# COMPREPLY from candidate references $1 (and the transports when $2 is
# set), trimmed to what bash replaces when the word holds a ':'.
_sandlock_oci_ref_reply() {
  local w pre
  w=$(_sandlock_oci_word)
  COMPREPLY=($(compgen -W "$1 ${2:+docker:// oci: oci-archive: docker-daemon:}" -- "$w"))
  [ ${#COMPREPLY[@]} -eq 1 ] && [[ ${COMPREPLY[0]} == *: || ${COMPREPLY[0]} == *// ]] &&
    type compopt >/dev/null 2>&1 && compopt -o nospace 2>/dev/null
  if [[ $w == *:* && ${COMP_WORDBREAKS:-:} == *:* ]]; then
    pre=${w%"${w##*:}"}
    COMPREPLY=("${COMPREPLY[@]#"$pre"}")
  fi
}

_sandlock_oci() {
  local cur prev bin root="" cache="" cmd="" i w
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD-1]}
  bin=${COMP_WORDS[0]}

  # Find the sub-command: the first word that is not a global option or
  # a global option's value.
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    case " $_sandlock_oci_global_args " in
      *" $w "*) [ "$w" = --root ] && root=${COMP_WORDS[i+1]}; ((i++)); continue ;;
    esac
    case $w in
      --root=*) root=${w#--root=}; continue ;;
      -*) continue ;;
    esac
    cmd=$w
    break
  done

  if [ -z "$cmd" ]; then
    case $prev in
      --root) COMPREPLY=($(compgen -d -- "$cur")); return ;;
      --log) COMPREPLY=($(compgen -f -- "$cur")); return ;;
      --log-format) COMPREPLY=($(compgen -W "text json" -- "$cur")); return ;;
      --rootless) COMPREPLY=($(compgen -W "auto true false" -- "$cur")); return ;;
    esac
    if [[ $cur == -* ]]; then
      COMPREPLY=($(compgen -W "$_sandlock_oci_global_opts" -- "$cur"))
    else
      COMPREPLY=($(compgen -W "$(_sandlock_oci_commands "$bin")" -- "$cur"))
    fi
    return
  fi

  for ((w = i + 1; w < COMP_CWORD; w++)); do
    [ "${COMP_WORDS[w]}" = --cache-dir ] && cache=${COMP_WORDS[w+1]}
  done

  # Values of per-command options.
  case $prev in
    --cache-dir|--cert-dir) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    --authfile) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --platform)
      COMPREPLY=($(compgen -W "linux/amd64 linux/arm64 linux/arm/v7 linux/386
        linux/ppc64le linux/s390x linux/riscv64" -- "$cur")); return ;;
    --image) _sandlock_oci_ref_reply "$(_sandlock_oci_refs "$bin" "$cache")" t; return ;;
    --creds|--jobs|--max-unpacked-size) return ;;
    --bundle|-b) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    --pid-file|--console-socket|--process|-p|--resources|-r)
      COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --format|-f)
      case $cmd in
        list|ps) COMPREPLY=($(compgen -W "table json" -- "$cur")); return ;;
        pull|bundle|images|prune)
          COMPREPLY=($(compgen -W "text json" -- "$cur")); return ;;
      esac ;;
    --interval) COMPREPLY=($(compgen -W "1s 5s 10s" -- "$cur")); return ;;
    --cwd) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    --memory|--memory-reservation|--memory-swap|--kernel-memory|\
    --kernel-memory-tcp|--pids-limit|--cpu-quota|--cpu-period|--cpu-share|\
    --cpu-shares|--cpu-rt-period|--cpu-rt-runtime|--cpuset-cpus|\
    --cpuset-mems|--blkio-weight|--env|-e|--user|-u|--additional-gids|-g|\
    --cap|-c|--preserve-fds|--process-label|--apparmor|--cgroup)
      return ;;
  esac

  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_sandlock_oci_cmd_opts "$cmd")" -- "$cur"))
    return
  fi

  # Count the positional words after the command (image commands: from
  # the line as typed, as ':' splits references into several words).
  local npos=0 wl
  case $cmd in
    pull|bundle|inspect|rmi)
      if [ -n "${COMP_LINE:-}" ]; then
        read -ra wl <<< "${COMP_LINE:0:COMP_POINT}"
        [[ ${COMP_LINE:0:COMP_POINT} == *[[:space:]] ]] || unset 'wl[${#wl[@]}-1]'
        for ((w = 0; w < ${#wl[@]}; w++)); do [ "${wl[w]}" = "$cmd" ] && break; done
        for ((w++; w < ${#wl[@]}; w++)); do
          case ${wl[w]} in
            --) npos=99 ;;
            --cache-dir|--creds|--authfile|--cert-dir|--platform|--jobs|--format) ((w++)) ;;
            -*) ;;
            *) ((npos++)) ;;
          esac
        done
        i=$COMP_CWORD
      fi ;;
  esac
  for ((i = i + 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      --) npos=99 ;;
      --cache-dir|--creds|--authfile|--cert-dir|--platform|--jobs|--format|--image)
        ((i++)) ;;
      -*) ;;
      *) ((npos++)) ;;
    esac
  done
  case $cmd in
    images|prune) ;;
    pull) [ "$npos" -eq 0 ] && _sandlock_oci_ref_reply "" t ;;
    inspect|rmi)
      [ "$npos" -eq 0 ] && _sandlock_oci_ref_reply "$(_sandlock_oci_refs "$bin" "$cache")" ;;
    bundle)
      if [ "$npos" -eq 0 ]; then
        _sandlock_oci_ref_reply "$(_sandlock_oci_refs "$bin" "$cache")" t
      elif [ "$npos" -eq 1 ]; then
        COMPREPLY=($(compgen -d -- "$cur"))
      fi ;;
    help) COMPREPLY=($(compgen -W "$(_sandlock_oci_commands "$bin")" -- "$cur")) ;;
    spec|list|check|features) ;;
    kill)
      if [ "$npos" -eq 0 ]; then
        COMPREPLY=($(compgen -W "$(_sandlock_oci_ids "$bin" "$root")" -- "$cur"))
      elif [ "$npos" -eq 1 ]; then
        COMPREPLY=($(compgen -W "$(compgen -A signal | sed 's/^SIG//')" -- "$cur"))
      fi ;;
    create|run) ;;              # a new id
    *)
      [ "$npos" -eq 0 ] &&
        COMPREPLY=($(compgen -W "$(_sandlock_oci_ids "$bin" "$root")" -- "$cur")) ;;
  esac
}

complete -F _sandlock_oci sandlock-oci
