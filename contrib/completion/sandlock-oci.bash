# bash completion for sandlock-oci
# Installed by `make install`; or: source contrib/completion/sandlock-oci.bash

_sandlock_oci_global_opts="--root --log --log-format --debug --systemd-cgroup
  --rootless --version -v --help -h"
# Global options that take a value.
_sandlock_oci_global_args="--root --log --log-format --rootless --criu"

# The command list comes from the binary being completed (so it is always
# in step); the fallback is for when it cannot be run.
_sandlock_oci_commands() {
  local out
  out=$(command "$1" --help 2>/dev/null |
        sed -n '/^Commands:/,$ s/^  \([a-z][a-z-]*\)  .*/\1/p')
  [ -n "$out" ] || out="check create delete events exec features help kill
    list pause ps resume run spec start state update"
  echo "$out"
}

_sandlock_oci_cmd_opts() {
  case $1 in
    create) echo "--bundle -b --pid-file --console-socket --preserve-fds
      --no-pivot --no-new-keyring --no-subreaper" ;;
    run) echo "--bundle -b --pid-file --console-socket --preserve-fds
      --no-pivot --no-new-keyring --no-subreaper --detach -d" ;;
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

_sandlock_oci() {
  local cur prev bin root="" cmd="" i w
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

  # Values of per-command options.
  case $prev in
    --bundle|-b) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    --pid-file|--console-socket|--process|-p|--resources|-r)
      COMPREPLY=($(compgen -f -- "$cur")); return ;;
    --format|-f)
      if [ "$cmd" = list ] || [ "$cmd" = ps ]; then
        COMPREPLY=($(compgen -W "table json" -- "$cur")); return
      fi ;;
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

  # Count the positional words after the command.
  local npos=0
  for ((i = i + 1; i < COMP_CWORD; i++)); do
    [[ ${COMP_WORDS[i]} == -* ]] || ((npos++))
  done
  case $cmd in
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
