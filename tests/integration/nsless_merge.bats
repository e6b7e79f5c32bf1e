#!/usr/bin/env bats
# Namespace-less mode: the fast path's pinned parents (nsless-perf) beside
# the supervisor acting in its caller's credentials (nsless-sys).  A pin
# skips the search (x) checks of the directories above it, so it must
# never serve a caller with other credentials than the lookup that made
# it (docs/nsless.md "Resolution").  The runtime runs as root, where the
# supervisor switches credentials per call.
load ../lib/common
bats_require_minimum_version 1.5.0   # run --separate-stderr: create-time warnings are on stderr
load ../lib/nsless

setup() { nsless_setup; }
teardown() { nsless_teardown; }

# process.user root, args "sh -c $1", the default capabilities plus
# CAP_SETUID/CAP_SETGID (to drop to 1000 inside).
root_sh() {
  jqc ".process.user={uid:0,gid:0} | .process.args=[\"/bin/sh\",\"-c\",$(jq -Rn --arg s "$1" '$s')]
       | .process.capabilities |= with_entries(.value += [\"CAP_SETUID\",\"CAP_SETGID\"] | .value |= unique)"
}

@test "nsless pins (as root): uid 1000 cannot reach a 0700 root directory through root's recent lookup" {
  chown -R 0:0 "$(R)"; chmod 1777 "$(R)/tmp"
  mkdir -p "$(R)/root/secret"
  echo hidden > "$(R)/root/secret/file"
  chmod 700 "$(R)/root"; chmod 755 "$(R)/root/secret"; chmod 644 "$(R)/root/secret/file"
  # Root looks (ls, and vrsys's own lstat pins /root/secret), then a child
  # that dropped to 1000 opens and stats the file within the pin's 20 ms;
  # five times, so a slow machine's tick cannot hide the hole.
  root_sh 'ls /root/secret; cat /root/secret/file
           for i in 1 2 3 4 5; do vrsys pin-open 1000 1000 /root/secret/file; done
           vrsys asuser 1000 1000 /bin/cat /root/secret/file; echo late=$?'
  run --separate-stderr as_root pins1
  echo "$output"
  [ "${lines[0]}" = file ]
  [ "${lines[1]}" = hidden ]              # root still reads it
  [ "$(grep -c '^EACCES$' <<<"$output")" -eq 10 ]
  [[ "$output" != *OK* ]]
  [[ "$output" == *late=1* ]]             # the walk, without a pin: refused too
}

@test "nsless pins (as root): the control — a directory both may search serves both, pinned or not" {
  chown -R 0:0 "$(R)"; chmod 1777 "$(R)/tmp"
  mkdir -p "$(R)/srv/pub"
  echo open > "$(R)/srv/pub/file"
  chmod 755 "$(R)/srv" "$(R)/srv/pub"; chmod 644 "$(R)/srv/pub/file"
  root_sh 'ls /srv/pub; for i in 1 2 3; do vrsys pin-open 1000 1000 /srv/pub/file; done
           cat /srv/pub/file'
  run --separate-stderr as_root pins2
  echo "$output"
  [ "${lines[0]}" = file ]
  [ "$(grep -c '^OK$' <<<"$output")" -eq 6 ]
  [ "${lines[-1]}" = open ]
}
