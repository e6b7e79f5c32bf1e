#!/usr/bin/env bats
# checkpoint/restore of file state beyond regular files and pipes
# (docs/checkpoint.md): eventfd, timerfd, signalfd, epoll, listening
# sockets, named FIFOs, pipe status flags, the container's tmpfs mounts.
# tests/helpers/cl_fds.c holds the objects and reports their state on
# SIGUSR1; each test fails on a criu-lite that refuses or drops the kind.

load ../lib/common

setup_file() { common_setup_file; }
setup() {
  common_setup
  require_root
  OUT=$BATS_TEST_TMPDIR/out
  OUT2=$BATS_TEST_TMPDIR/out2
  IMG=$BATS_TEST_TMPDIR/img
}
teardown() { common_teardown; }

# Waits (up to 5 s) for a line matching $2 in file $1.
wait_for() { # file regex
  local i
  for i in $(seq 50); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

pid_of() { rt state "$1" | jq -r .pid; }

# Runs the bundle as $1, waits for "ready", checkpoints it (extra flags
# after the id) and restores it as $1-r, its stdout in $OUT2.
cycle() { # id [checkpoint flags...]
  local id=$1; shift
  (cd "$BUNDLE" && rt run -d "$id" < /dev/null > "$OUT" 2>&1)
  wait_for "$OUT" "^ready"
  rt checkpoint "$@" --image-path "$IMG" "$id"
  (cd "$BUNDLE" && rt restore -d --image-path "$IMG" "$id-r" < /dev/null > "$OUT2" 2>&1)
}

# SIGUSR1 to the restored container's init, then its report ($N: which).
report() { # id n
  kill -USR1 "$(pid_of "$1-r")"
  local i
  for i in $(seq 50); do
    [ "$(grep -c '^report done' "$OUT2")" -ge "$2" ] && return 0
    sleep 0.1
  done
  return 1
}

@test "restore: an eventfd keeps its count, a signalfd still receives, an epoll set still reports" {
  cmd /bin/cl_fds -e -s -E
  id=$(cid)
  run cycle "$id"
  echo "$output"
  [ "$status" -eq 0 ]
  kill -USR2 "$(pid_of "$id-r")"
  report "$id" 1
  cat "$OUT2"
  grep -q '^epoll n=1 data=e1e1$' "$OUT2"
  grep -q '^eventfd count=41 nonblock=1$' "$OUT2"
  grep -q '^signalfd sig=12$' "$OUT2"
}

@test "restore: a timerfd keeps firing at its interval" {
  cmd /bin/cl_fds -t
  id=$(cid)
  run cycle "$id"
  [ "$status" -eq 0 ]
  report "$id" 1
  sleep 0.2
  report "$id" 2
  cat "$OUT2"
  # the second read: expirations that came after the restore
  [ "$(grep '^timerfd' "$OUT2" | sed -n 2p | sed 's/.*ticks=\([0-9]*\).*/\1/')" -ge 3 ]
  grep -q 'interval_ms=20$' "$OUT2"
}

@test "restore: a nonblocking pipe is still nonblocking, its bytes still there" {
  cmd /bin/cl_fds -p
  id=$(cid)
  run cycle "$id"
  [ "$status" -eq 0 ]
  report "$id" 1
  cat "$OUT2"
  grep -q '^pipe nonblock=1/1 data=pipe-bytes$' "$OUT2"
}

@test "restore: a named FIFO comes back with its bytes and flags" {
  # on the bundle's own rootfs (the tmpfs case is below)
  cfg '.root.readonly=false'
  cmd /bin/cl_fds -f /tmp/fifo
  id=$(cid)
  run cycle "$id"
  echo "$output"
  [ "$status" -eq 0 ]
  report "$id" 1
  cat "$OUT2"
  grep -q '^fifo nonblock=1/0 data=fifo-bytes$' "$OUT2"
}

@test "restore: listening TCP, TCP6 and unix sockets accept connections made after restore" {
  cfg '.root.readonly=false'
  cmd /bin/cl_fds -l tcp:7001 -l tcp6:7002 -l unix:/tmp/l.sock -l unix:@cl-fds-abs
  id=$(cid)
  run cycle "$id"
  echo "$output"
  [ "$status" -eq 0 ]
  pid=$(pid_of "$id-r")
  for spec in tcp:7001 tcp6:7002 unix:@cl-fds-abs; do
    run nsenter -t "$pid" -n "$SANDLOCK_HELPERS/cl_fds" -C "$spec"
    echo "$output"
    [ "$output" = "hello $spec" ]
  done
  run "$SANDLOCK_HELPERS/cl_fds" -C "unix:/proc/$pid/root/tmp/l.sock"
  [ "$output" = "hello unix:/tmp/l.sock" ]
  report "$id" 1
  cat "$OUT2"
  for spec in tcp:7001 tcp6:7002 unix:/tmp/l.sock unix:@cl-fds-abs; do
    grep -q "^accepted $spec\$" "$OUT2"
    grep -q "^listen $spec nonblock=1 reuseaddr=1\$" "$OUT2"
  done
}

@test "checkpoint: a connected socket still fails by name; --skip-unsupported lists it" {
  cmd /bin/cl_fds -P -l tcp:7003
  id=$(cid)
  (cd "$BUNDLE" && rt run -d "$id" < /dev/null > "$OUT" 2>&1)
  wait_for "$OUT" "^ready"
  run rt checkpoint --leave-running --image-path "$IMG" "$id"
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"fd 30 is a socket that is not listening (connected or unbound)"* ]]
  [ ! -e "$IMG/tree.img" ]
  run rt checkpoint --skip-unsupported --image-path "$IMG" "$id"
  [ "$status" -eq 0 ]
  (cd "$BUNDLE" && rt restore -d --image-path "$IMG" "$id-r" < /dev/null > "$OUT2" 2>&1)
  grep -q "not restored: fd 30 (socket that is not listening" "$OUT2"
  grep -q "not restored: fd 31 (socket that is not listening" "$OUT2"
  # the listener beside them is back
  run nsenter -t "$(pid_of "$id-r")" -n "$SANDLOCK_HELPERS/cl_fds" -C tcp:7003
  [ "$output" = "hello tcp:7003" ]
}
