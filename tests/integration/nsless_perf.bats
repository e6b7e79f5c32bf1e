#!/usr/bin/env bats
# The namespace-less supervisor's fast paths (docs/nsless.md "Cost" and
# "Resolution"): what they must not change — every answer the same as the
# walk's, and as the namespaced mode's — and what they do change, counted
# in system calls, never timed.
load ../lib/common

setup_file() { common_setup_file; }

setup() {
  require_root
  "$SANDLOCK_OCI" check | grep -q '^isolation landlock (no namespaces): yes' \
    || skip "namespace-less mode unavailable here"
  common_setup
  cfg 'del(.hostname)'
}

teardown() { common_teardown; }

# The container's pid and its supervisor's, from state.json.
spid() { jq -r .supervisor_pid "$ROOT/$1/state.json"; }
ipid() { rt state "$1" | jq -r .pid; }

# True while pid $1 runs (a zombie does not).
alive() { [ -e "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }

# Waits (bounded) until "$@" holds.
until_true() {
  local i
  for i in $(seq 500); do "$@" && return 0; sleep 0.02; done
  return 1
}

@test "nsless-perf: check says whether the listener takes SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP" {
  run rt check
  [ "$status" -eq 0 ]
  local v
  v=$(sed -n 's/^seccomp notify sync wakeup: //p' <<<"$output")
  echo "got: $v"
  IFS=. read -r maj min _ <<<"$(uname -r)"
  if [ "$maj" -gt 6 ] || { [ "$maj" -eq 6 ] && [ "${min%%[!0-9]*}" -ge 6 ]; }; then
    [ "$v" = yes ]
  else
    [ "$v" = no ]
  fi
}

@test "nsless-perf: the watcher's death kills the container; a stray SIGCHLD does not" {
  local id sup w init
  id=$(cid)
  cfg '.process.args=["sh","-c","while :; do cat /etc/passwd >/dev/null || exit 3; done"]'
  rt create --isolation landlock --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>&1
  rt start "$id"
  sup=$(spid "$id"); init=$(ipid "$id")
  w=$(pgrep -P "$sup")
  [ -n "$w" ] && alive "$init"
  # Signals that are not the watcher's death: the loop goes on serving.
  for _ in $(seq 20); do kill -CHLD "$sup"; done
  [ "$(rt state "$id" | jq -r .status)" = running ]
  alive "$sup" && alive "$w" && alive "$init"
  kill -9 "$w"
  until_true eval "! alive $init"
  ! alive "$init"
  until_true eval "! alive $sup"
}
