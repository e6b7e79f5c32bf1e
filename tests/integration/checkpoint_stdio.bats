#!/usr/bin/env bats
# The container's stdio across checkpoint and restore (docs/checkpoint.md,
# "The container's stdio"): an fd is the engine's stdio, rebound to the
# restoring side's, iff it is the very pipe, pty or /dev/null the runtime
# gave the init (recorded at create and at restore), in any process at any
# number; every other fd is an ordinary one.  Each test fails on a
# criu-lite that takes the init's fds 0-2 of the moment for the engine's.

load ../lib/common
load ../lib/checkpoint

setup_file() { common_setup_file; }
setup() {
  checkpoint_setup
  cfg '.root.readonly=false'
  TMP=$BUNDLE/rootfs/tmp
  ERR=$BATS_TEST_TMPDIR/err
}
teardown() { common_teardown; }

# The highest N of the lines "$2 N" in file $1 (0: none).
last_of() { # file word
  { grep "^$2 " "$1" 2>/dev/null || echo "$2 0"; } | tail -1 | cut -d' ' -f2
}

# Runs `rt "$@"` with stdin /dev/null, stdout an anonymous pipe whose
# reader copies it into file $1 (as an engine's pipe to its log), stderr
# $ERR.
piped() { # file rt-args...
  local out=$1 fd rc=0
  shift
  exec {fd}> >(exec cat > "$out" 3>&-)
  (cd "$BUNDLE" && rt "$@" < /dev/null >&"$fd" 2>> "$ERR") || rc=$?
  exec {fd}>&-
  return "$rc"
}

# Runs the bundle as $1 with its stdout to $OUT through a pipe, waits for
# a line matching $2 there, checkpoints it and restores it as $1-r, its
# stdout to $OUT2 through another pipe.
cycle() { # id regex
  piped "$OUT" run -d "$1"
  wait_for "$OUT" "$2"
  rt checkpoint --image-path "$IMG" "$1"
  piped "$OUT2" restore -d --image-path "$IMG" "$1-r"
}

@test "stdio: sh's own redirect of a loop (fd 1 a file, the engine's pipe parked above) comes back as it was" {
  # busybox sh runs `while …; done > /tmp/out` by moving its fd 1 up
  # (the engine's pipe) and opening the file at 1 itself
  cmd /bin/sh -c 'echo start; i=0; while [ ! -e /tmp/stop ]; do echo "loop $i"; i=$((i+1)); sleep 0.1; done > /tmp/out; echo "after $i"; exec sleep 1000'
  id=$(cid)
  piped "$OUT" run -d "$id"
  wait_for "$TMP/out" '^loop 3'
  rt checkpoint --image-path "$IMG" "$id"
  n=$(last_of "$TMP/out" loop)
  piped "$OUT2" restore -d --image-path "$IMG" "$id-r"
  # the loop goes on into its file, not into the restoring side's pipe
  wait_for "$TMP/out" "^loop $((n + 3))"
  ! grep -q '^loop' "$OUT2"
  # once it ends, sh puts the engine's pipe back at 1: the restorer's
  touch "$TMP/stop"
  wait_for "$OUT2" '^after '
  cat "$OUT" "$OUT2" "$ERR"
  grep -qx start "$OUT"
  ! grep -q '^after' "$OUT"
}

@test "stdio: the engine's pipe at fd 5 of a process whose fd 1 is a file" {
  cmd /bin/sh -c 'exec 5>&1 >/tmp/log; i=0; while :; do echo "tick $i" >&5; echo "log $i"; i=$((i+1)); sleep 0.1; done'
  id=$(cid)
  cycle "$id" '^tick 3'
  n=$(last_of "$OUT" tick)
  m=$(last_of "$TMP/log" log)
  wait_for "$OUT2" "^tick $((n + 3))"
  wait_for "$TMP/log" "^log $((m + 3))"
  cat "$OUT2" "$ERR"
  # the ticks go on where they were, into the restoring side's pipe; the
  # log lines into the file, never into the pipe
  first=$(grep -m1 '^tick ' "$OUT2" | cut -d' ' -f2)
  [ "$first" -ge "$n" ]
  ! grep -q '^log' "$OUT2"
  # (sh itself points fd 1 at the pipe for a moment for each `>&5`)
  pid=$(rt state "$id-r" | jq -r .pid)
  for i in $(seq 20); do
    [[ "$(readlink "/proc/$pid/fd/1")" == */tmp/log ]] && break
    sleep 0.05
  done
  [[ "$(readlink "/proc/$pid/fd/1")" == */tmp/log ]]
}

@test "stdio: a child keeps the engine's pipe while the init redirected; a grandchild's own file stays its own" {
  # (the init then only sleeps: what matters of it is its fd 1, checked
  # below)
  cmd /bin/sh -c 'sh -c "i=0; while :; do echo \"child \$i\"; i=\$((i+1)); sleep 0.1; done" & sh -c "exec >/tmp/gc; j=0; while :; do echo \"gc \$j\"; j=\$((j+1)); sleep 0.1; done" & exec >/tmp/init.log; echo redirected; exec sleep 100000'
  id=$(cid)
  piped "$OUT" run -d "$id"
  wait_for "$OUT" '^child 3'
  wait_for "$TMP/gc" '^gc 3'
  wait_for "$TMP/init.log" '^redirected'
  rt checkpoint --image-path "$IMG" "$id"
  c=$(last_of "$OUT" child)
  g=$(last_of "$TMP/gc" gc)
  piped "$OUT2" restore -d --image-path "$IMG" "$id-r"
  wait_for "$OUT2" "^child $((c + 3))"
  wait_for "$TMP/gc" "^gc $((g + 3))"
  cat "$OUT2" "$ERR"
  ! grep -q '^gc' "$OUT2"
  # the init's fd 1 is its file again, not the restoring side's pipe
  pid=$(rt state "$id-r" | jq -r .pid)
  [[ "$(readlink "/proc/$pid/fd/1")" == */tmp/init.log ]]
}

@test "stdio: restored stdio is recorded again: a second checkpoint of the restored container" {
  cmd /bin/sh -c 'exec 5>&1 >/tmp/log; i=0; while :; do echo "tick $i" >&5; echo "log $i"; i=$((i+1)); sleep 0.1; done'
  id=$(cid)
  cycle "$id" '^tick 3'
  wait_for "$OUT2" '^tick '
  # the restored container's stdio is the restore command's pipe
  rm -rf "$IMG"
  rt checkpoint --image-path "$IMG" "$id-r"
  n=$(last_of "$OUT2" tick)
  out3=$BATS_TEST_TMPDIR/out3
  piped "$out3" restore -d --image-path "$IMG" "$id-r2"
  wait_for "$out3" "^tick $((n + 3))"
  ! grep -q '^log' "$out3"
}

@test "checkpoint: a listener's unaccepted connections are counted and restore says they are dropped" {
  # carrying them would need TCP repair (and the peers' side of a unix
  # socket): restore lists them with the fds it could not bring back
  cmd /bin/cl_fds -N -l unix:/tmp/l.sock -l tcp:7011
  id=$(cid)
  piped "$OUT" run -d "$id"
  wait_for "$OUT" '^ready'
  pid=$(rt state "$id" | jq -r .pid)
  # two clients connect to the unix listener, one to the TCP one; none
  # is accepted (cl_fds accepts only when asked)
  python3 - "/proc/$pid/root/tmp/l.sock" <<'PY'
import socket, sys
for _ in range(2):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    s.detach()
PY
  nsenter -t "$pid" -n python3 -c 'import socket; socket.create_connection(("127.0.0.1", 7011)).detach()'
  rt checkpoint --image-path "$IMG" "$id"
  (cd "$BUNDLE" && rt restore -d --image-path "$IMG" "$id-r" < /dev/null > "$OUT2" 2>&1)
  cat "$OUT2"
  grep -Eq 'not restored: fd [0-9]+: listener with 2 unaccepted connections; they are dropped' "$OUT2"
  grep -Eq 'not restored: fd [0-9]+: listener with 1 unaccepted connection; they are dropped' "$OUT2"
}

# Starts recvtty on socket $1 copying the pty to file $2 (background).
tty_to() { # sock file
  "$SANDLOCK_HELPERS/recvtty" "$1" > "$2" 3>&- &
  until [ -S "$1" ]; do sleep 0.02; done
}

@test "stdio: a terminal container: the pty at fd 5 is rebound to the restoring side's pty, fd 1's file stays" {
  cfg '.process.terminal=true'
  cmd /bin/sh -c 'exec 5>&1 >/tmp/log; i=0; while :; do echo "tick $i" >&5; echo "log $i"; i=$((i+1)); sleep 0.1; done'
  id=$(cid)
  tty_to "$BATS_TEST_TMPDIR/c1.sock" "$OUT"
  rt run -d -b "$BUNDLE" --console-socket "$BATS_TEST_TMPDIR/c1.sock" "$id" < /dev/null
  wait_for "$OUT" '^tick 3'
  rt checkpoint --image-path "$IMG" "$id"
  n=$(last_of "$TMP/log" log)
  tty_to "$BATS_TEST_TMPDIR/c2.sock" "$OUT2"
  (cd "$BUNDLE" && rt restore -d --console-socket "$BATS_TEST_TMPDIR/c2.sock" \
     --image-path "$IMG" "$id-r" < /dev/null)
  wait_for "$OUT2" '^tick '
  wait_for "$TMP/log" "^log $((n + 3))"
  tr -d '\r' < "$OUT2" | head -3
  ! grep -q '^log' "$OUT2"
}

@test "stdio: the container's own /dev/null (the host's node, bind-mounted) is not the engine's /dev/null" {
  # in a user namespace /dev/null is a bind mount of the host's node: the
  # same inode as the /dev/null the engine gave, through another mount
  cfg '.linux.namespaces += [{"type":"user"}]
       | .linux.uidMappings=[{"containerID":0,"hostID":0,"size":65536}]
       | .linux.gidMappings=[{"containerID":0,"hostID":0,"size":65536}]'
  cmd /bin/sh -c 'exec 6>/dev/null; i=0; while :; do echo "leak $i" >&6 || echo "fail $i" >> /tmp/errs; echo "alive $i" >> /tmp/alive; i=$((i+1)); sleep 0.1; done'
  id=$(cid)
  (cd "$BUNDLE" && rt run -d "$id" < /dev/null > /dev/null 2>&1)
  wait_for "$TMP/alive" '^alive 3'
  pid=$(rt state "$id" | jq -r .pid)
  [ "$(stat -L -c %d:%i "/proc/$pid/fd/6")" = "$(stat -L -c %d:%i "/proc/$pid/fd/1")" ] ||
    skip "the container's /dev/null is not the host's node here"
  rt checkpoint --image-path "$IMG" "$id"
  n=$(last_of "$TMP/alive" alive)
  (cd "$BUNDLE" && rt restore -d --image-path "$IMG" "$id-r" < /dev/null > "$OUT2" 2>&1)
  wait_for "$TMP/alive" "^alive $((n + 3))"
  cat "$OUT2"
  # fd 6 is the container's /dev/null again: not the restorer's stdout,
  # nor its stdin (where a write fails)
  ! grep -q '^leak' "$OUT2"
  [ ! -e "$TMP/errs" ]
}
