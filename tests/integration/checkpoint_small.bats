#!/usr/bin/env bats
bats_require_minimum_version 1.5.0
# checkpoint/restore gaps closed one by one (docs/checkpoint.md): a file
# lock held through a mapping only; the configurations restore refuses;
# shared anonymous memory saved once.

load ../lib/common

setup_file() { common_setup_file; }
setup() {
  common_setup
  require_root
  OUT=$BATS_TEST_TMPDIR/out
  IMG=$BATS_TEST_TMPDIR/img
}
teardown() { common_teardown; }

start() { # id
  (cd "$BUNDLE" && rt run -d "$1" < /dev/null > "$OUT" 2>&1)
}

# Waits (up to 5 s) for a line matching $1 in the container's output.
wait_out() { # regex
  local i
  for i in $(seq 50); do
    grep -q -- "$1" "$OUT" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

status_of() { rt state "$1" | jq -r .status; }

# flock and OFD locks belong to the open file description: a process that
# maps the file and closes its fd keeps the lock, and fdinfo no longer
# shows it.  The checkpoint must still refuse it rather than drop it.
@test "checkpoint: a flock or OFD lock held through a mapping only is refused naming the file, and the container runs on" {
  for kind in flock ofd; do
    cmd /bin/cl_counter -m 1 -L "$kind:/dev/shm/lock"
    id=$(cid "$kind")
    : > "$OUT"
    start "$id"
    wait_out '^count '
    # the lock is there, with no fd of the container naming the file
    pid=$(rt state "$id" | jq -r .pid)
    ! grep -q '^lock:' /proc/"$pid"/fdinfo/*
    [ -z "$(ls -l /proc/"$pid"/fd | grep /dev/shm/lock)" ]
    grep -q "$(stat -Lc %i /proc/"$pid"/root/dev/shm/lock) " <(awk '{ split($6, a, ":"); print a[3], $0 }' /proc/locks)
    run rt checkpoint --image-path "$IMG" "$id"
    [ "$status" -eq 1 ]
    want=FLOCK; [ "$kind" = flock ] || want=OFDLCK
    [[ "$output" == *"a file lock ($want "*"is held on \`/dev/shm/lock\`, mapped at "*"with no fd, which criu-lite cannot save or restore"* ]]
    [ "$(status_of "$id")" = running ]
    [ ! -e "$IMG/1/pages.img" ]
    n=$(grep -c '^count ' "$OUT")
    wait_out "^count $((n + 5))\$"
    rt delete -f "$id"
  done
}
