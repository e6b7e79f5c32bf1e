#!/usr/bin/env bats
bats_require_minimum_version 1.5.0
# checkpoint/restore gaps closed one by one (docs/checkpoint.md): a file
# lock held through a mapping only; the configurations restore refuses;
# shared anonymous memory saved once.

load ../lib/common
load ../lib/checkpoint

setup_file() { common_setup_file; }
setup() { checkpoint_setup; }
teardown() { common_teardown; }

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
    [ -z "$(grep '^lock:' /proc/"$pid"/fdinfo/*)" ]
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

# Nothing of container $1 is left: no state, no cgroup on any hierarchy.
nothing_left() { # id
  run rt state "$1"
  [ "$status" -ne 0 ]
  [ ! -e "$ROOT/$1" ]
  ! ls -d /sys/fs/cgroup/sandlock-oci/"$1" /sys/fs/cgroup/*/sandlock-oci/"$1" 2>/dev/null
}

# restore -d of image $IMG as $1, its output (and the restored
# container's, were it to run) in a file: never a pipe a container keeps.
restore_out() { # id
  local rc=0
  restore_as "$1" "$BATS_TEST_TMPDIR/restore.out" || rc=$?
  cat "$BATS_TEST_TMPDIR/restore.out"
  return $rc
}

# An image of a cl_counter container, left running.
image_of_counter() {
  cmd /bin/cl_counter -m 1
  id=$(cid)
  start "$id"
  wait_out '^count '
  rt checkpoint --image-path "$IMG" "$id"
}

# The restored filter is loaded by every restored thread (the stub's
# seal): one listener could not be handed over for each, so a config with
# a seccomp listenerPath is refused by that name, before anything runs and
# before the agent is handed a listener.
@test "restore: a seccomp listenerPath is refused naming the field, nothing left" {
  local sock=$BATS_TEST_TMPDIR/agent.sock agent=$BATS_TEST_TMPDIR/agent.out
  image_of_counter
  ( "$SANDLOCK_HELPERS/sysc" listen-notify "$sock" > "$agent" ) & AGENT=$!
  until grep -q READY "$agent" 2>/dev/null; do sleep 0.05; done
  cfg ".linux.seccomp = {\"defaultAction\":\"SCMP_ACT_ALLOW\",\"listenerPath\":\"$sock\",\"syscalls\":[{\"names\":[\"getppid\"],\"action\":\"SCMP_ACT_NOTIFY\"}]}"
  id2=$(cid r)
  run restore_out "$id2"
  kill "$AGENT" 2>/dev/null || true
  wait "$AGENT" || true
  [ "$status" -ne 0 ]
  [[ "$output" == *"linux.seccomp.listenerPath: not supported by this payload"* ]]
  nothing_left "$id2"
  [ -z "$(grep '^STATE' "$agent")" ]
  # the same image restores once the field is gone
  cfg 'del(.linux.seccomp)'
  restore_as "$id2" "$OUT"
  [ "$(status_of "$id2")" = running ]
  # where nothing_left looks is where its cgroup is
  ls -d /sys/fs/cgroup/sandlock-oci/"$id2" /sys/fs/cgroup/*/sandlock-oci/"$id2" 2>/dev/null | grep -q .
}

# The namespace-less mode's supervisor filter must be in place before the
# container runs anything, which the restored tree (unfiltered until the
# stub seals it) cannot honour: refused by name.
@test "restore: the namespace-less mode is refused naming it, nothing left" {
  image_of_counter
  cfg '.annotations["run.oci.sandlock.isolation"] = "landlock"'
  id2=$(cid r)
  run restore_out "$id2"
  [ "$status" -ne 0 ]
  [[ "$output" == *"the namespace-less mode cannot run a sealed payload (a restore)"* ]]
  nothing_left "$id2"
}

# cl_procs (tests/helpers): a parent and its child sharing $1 MiB of
# anonymous memory, every page written; commands through $CMDDIR/cmd.
procs_shared() { # mib
  mkdir -p "$BUNDLE/rootfs/run/clp"
  CMDDIR=$BUNDLE/rootfs/run/clp
  SEQ=0
  cmd /bin/cl_procs -d /run/clp -t 1 -s "$1"
}

# Shared anonymous memory is saved once, by the first process of the tree
# that maps it; the other names that process (section shmem).  16 MiB
# shared by two processes: one pages.img holds them, the other does not.
@test "checkpoint: shared anonymous memory mapped by two processes is saved once" {
  procs_shared 16
  id=$(cid)
  start "$id"
  wait_out '^ready child'
  wait_out '^ready parent'
  say_cmd write 5
  wait_out '^W child 5'
  rt checkpoint --image-path "$IMG" "$id"
  ls -l "$IMG"/*/pages.img
  [ "$(ls "$IMG"/*/pages.img | wc -l)" -eq 2 ]
  big=0 small=0
  for f in "$IMG"/*/pages.img; do
    sz=$(stat -c %s "$f")
    if [ "$sz" -ge $((16 << 20)) ]; then big=$((big + 1)); fi
    if [ "$sz" -lt $((4 << 20)) ]; then small=$((small + 1)); fi
  done
  [ "$big" -eq 1 ]
  [ "$small" -eq 1 ]
  # and it comes back whole, shared again
  : > "$OUT"
  restore_as "$(cid r)" "$OUT"
  say_cmd check
  wait_out '^C parent '
  grep -q '^C parent ok$' "$OUT"
  say_cmd read
  wait_out '^R parent 5$'
  say_cmd write 9
  wait_out '^W child 9$'
  say_cmd read
  wait_out '^R parent 9$'
}
