#!/usr/bin/env bats
# checkpoint and restore of whole process trees (docs/checkpoint.md):
# every pid and tid, parent, session and process group as they were; the
# restored processes confined like a fresh container's, seen from inside
# each of them; pending signals; shared anonymous memory shared again.

load ../lib/common
load ../lib/checkpoint

setup_file() { common_setup_file; }
setup() {
  checkpoint_setup
  SEQ=0
}
teardown() { common_teardown; }

# Waits (up to 5 s) until file $1 has at least $3 lines matching $2.
wait_lines() { # file regex n
  local i
  for i in $(seq 100); do
    [ "$(grep -c "$2" "$1" 2>/dev/null || true)" -ge "$3" ] && return 0
    sleep 0.05
  done
  echo "wanted $3 lines /$2/ in $1:" >&2
  cat "$1" >&2
  return 1
}

# pid ppid pgid sid and the tids of every process, read from the
# container's /proc by a process exec'd into it (itself left out).
tree_of() { # id
  rt exec "$1" sh -c 'for d in /proc/[0-9]*; do
      read -r l < $d/stat || continue; set -- $l
      [ "$1" = $$ ] && continue
      echo "$1 $2 ppid=$4 pgid=$5 sid=$6 tids=$(ls $d/task | sort -n | tr "\n" ,)"
    done' | sort -n
}

# Starts the bundle as $1, waits (up to 5 s) until `$2 $1` lists $3
# processes, and keeps that list in $BATS_TEST_TMPDIR/before.
start_listed() { # id lister n
  local i
  start "$1"
  for i in $(seq 50); do
    [ "$("$2" "$1" | wc -l)" -ge "$3" ] && break
    sleep 0.1
  done
  "$2" "$1" > "$BATS_TEST_TMPDIR/before"
  cat "$BATS_TEST_TMPDIR/before"
  [ "$(wc -l < "$BATS_TEST_TMPDIR/before")" -eq "$3" ]
}

# Checkpoints container $1 and restores it as $(cid r), its stdout in
# $OUT2: the restore must succeed.
checkpoint_restore() { # id
  rt checkpoint --image-path "$IMG" "$1"
  run restore_as "$(cid r)" "$OUT2"
  echo "$output"
  [ "$status" -eq 0 ]
}

# cl_procs (tests/helpers) in a container whose /data is writable by its
# mount but read-only by Landlock: "landlock=EACCES" in its reports.
procs_bundle() {
  mkdir -p "$BUNDLE/rootfs/run/clp"
  CMDDIR=$BUNDLE/rootfs/run/clp
  cfg '.mounts += [{"destination":"/data","type":"tmpfs","source":"tmpfs","options":["rw","nosuid"]}]'
  cfg '.annotations["run.oci.sandlock.fs_readable"]="/data"'
  cmd /bin/cl_procs -d /run/clp -t 3 -p /data/probe
}

@test "restore: a sh -c tree with a double fork and a setsid child keeps every pid, ppid, pgid, sid and tid" {
  # sh (1) runs: a sleep; a setsid sh with a sleep of its own (a new
  # session); a sh that leaves a sleep behind (double fork: the orphan's
  # parent becomes 1); cl_counter in a process group of its own, with
  # three threads and a child in that group
  cmd /bin/sh -c 'sleep 1000 & setsid sh -c "sleep 1000 & wait" & sh -c "sleep 1000 & exit 0"; /bin/cl_counter -c -t 3 -m 1 > /dev/null & wait'
  id=$(cid)
  start_listed "$id" tree_of 7
  # the shapes the test is about are there
  grep -q 'ppid=3 pgid=3 sid=3' "$BATS_TEST_TMPDIR/before"       # setsid's child
  grep -q '(sleep) ppid=1 pgid=1 sid=1' "$BATS_TEST_TMPDIR/before"
  grep -q '(cl_counter) ppid=1 pgid=\([0-9]*\) sid=1 tids=.*,.*,.*,' "$BATS_TEST_TMPDIR/before"
  checkpoint_restore "$id"
  tree_of "$(cid r)" > "$BATS_TEST_TMPDIR/after"
  diff "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
}

@test "restore: every thread of every process keeps its tid, and is confined like a fresh container's, seen from inside" {
  procs_bundle
  id=$(cid)
  start "$id"
  wait_lines "$OUT" '^ready' 2
  say_cmd report
  wait_lines "$OUT" '^T ' 6
  grep '^T ' "$OUT" | sort > "$BATS_TEST_TMPDIR/before"
  # a fresh container's threads: Landlock denies /data, seccomp filtered
  [ "$(grep -c 'landlock=EACCES seccomp=2 ' "$BATS_TEST_TMPDIR/before")" -eq 6 ]
  checkpoint_restore "$id"
  say_cmd report
  wait_lines "$OUT2" '^T ' 6
  grep '^T ' "$OUT2" | sort > "$BATS_TEST_TMPDIR/after"
  # same pid, ppid and tid in every thread; same Landlock verdict, seccomp
  # mode, effective capabilities and no_new_privs
  diff "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
  # the host's view agrees: NSpid's last field is the saved pid
  r=$(rt state "$(cid r)" | jq -r .pid)
  [ "$(grep '^NSpid:' /proc/$r/status | awk '{print $NF}')" = 1 ]
}
# Uid..Seccomp lines of every process, read inside the container.
creds_of() { # id
  rt exec "$1" sh -c 'for d in /proc/[0-9]*; do
      [ "${d#/proc/}" = $$ ] && continue
      echo "${d#/proc/} $(grep -E "^(Uid|Gid|Groups|CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):" $d/status | tr -s "\t\n" "  ")"
    done' | sort -n
}

@test "restore: a non-root container's processes get back no capability their execve dropped" {
  # uid 1000 with a supplementary group: a fresh container's processes
  # hold no permitted or effective capability (execve cleared them)
  cfg '.process.user.uid=1000 | .process.user.gid=1000 | .process.user.additionalGids=[5]'
  cmd /bin/sh -c '/bin/cl_counter -t 2 -m 1 > /dev/null & exec /bin/cl_counter -m 1'
  id=$(cid)
  start_listed "$id" creds_of 2
  grep -q 'CapPrm: 0000000000000000 CapEff: 0000000000000000' "$BATS_TEST_TMPDIR/before"
  checkpoint_restore "$id"
  creds_of "$(cid r)" > "$BATS_TEST_TMPDIR/after"
  diff "$BATS_TEST_TMPDIR/before" "$BATS_TEST_TMPDIR/after"
}

@test "restore: signals pending at the checkpoint (per thread and shared) are delivered once unblocked" {
  procs_bundle
  id=$(cid)
  start "$id"
  wait_lines "$OUT" '^ready' 2
  say_cmd pend
  sleep 0.2
  # nothing was delivered: every one of them is blocked
  ! grep -q '^S ' "$OUT" || false
  checkpoint_restore "$id"
  say_cmd unblock
  # six threads, each its own SIGRTMIN+i with its value; SIGUSR2 (-2)
  # with 77, once, in some thread of the parent
  wait_lines "$OUT2" '^S ' 7
  cat "$OUT2"
  for role in parent child; do
    for i in 0 1 2; do
      grep -q "^S $role [0-9]* $i 100$i\$" "$OUT2"
    done
  done
  [ "$(grep -c '^S parent [0-9]* -2 77$' "$OUT2")" -eq 1 ]
  [ "$(grep -c '^S ' "$OUT2")" -eq 7 ]
}

@test "restore: anonymous shared memory between a parent and its child is shared again" {
  procs_bundle
  id=$(cid)
  start "$id"
  wait_lines "$OUT" '^ready' 2
  say_cmd write 5
  wait_lines "$OUT" '^W child 5' 1
  say_cmd read
  wait_lines "$OUT" '^R parent 5' 1
  checkpoint_restore "$id"
  # the content came back once...
  say_cmd read
  wait_lines "$OUT2" '^R parent 5' 1
  # ...and the child's write is the parent's again
  say_cmd write 9
  wait_lines "$OUT2" '^W child 9' 1
  say_cmd read
  wait_lines "$OUT2" '^R parent 9' 1
}

# The container's freezer control file, from the host: v1 freezer.state,
# else v2 cgroup.freeze; empty when there is none.
freezer_file() { # pid
  local l base
  l=$(grep ':freezer:' "/proc/$1/cgroup" || true)
  if [ -n "$l" ] && [ -f "/sys/fs/cgroup/freezer${l#*:freezer:}/freezer.state" ]; then
    echo "/sys/fs/cgroup/freezer${l#*:freezer:}/freezer.state"
    return
  fi
  l=$(grep '^0::' "/proc/$1/cgroup" || true)
  for base in /sys/fs/cgroup/unified /sys/fs/cgroup; do
    if [ -n "$l" ] && [ -f "$base${l#0::}/cgroup.freeze" ]; then
      echo "$base${l#0::}/cgroup.freeze"
      return
    fi
  done
}

# Runs a shell counter as $1, waits for its first count, and sets $F to
# its cgroup's freezer file (skips where it has none).
counter_freezer() { # id
  cmd /bin/sh -c 'while :; do echo count $((n=n+1)); sleep 0.01; done'
  start "$1"
  wait_lines "$OUT" '^count' 1
  F=$(freezer_file "$(rt state "$1" | jq -r .pid)")
  [ -n "$F" ] || skip "the container has no cgroup freezer here"
}

# checkpoint --leave-running of $1 while cl_watch waits for $2 writes to
# $F (up to 10 s); its report in $BATS_TEST_TMPDIR/watch.
watched_checkpoint() { # id writes
  local watcher
  "$SANDLOCK_HELPERS/cl_watch" "$F" "$2" 10000 > "$BATS_TEST_TMPDIR/watch" &
  watcher=$!
  wait_lines "$BATS_TEST_TMPDIR/watch" '^ready' 1
  rt checkpoint --leave-running --image-path "$IMG" "$1"
  wait "$watcher"
  cat "$BATS_TEST_TMPDIR/watch"
}

@test "checkpoint: the cgroup freezer holds the container while it is seized, and lets it go after" {
  id=$(cid)
  counter_freezer "$id"
  watched_checkpoint "$id" 2
  # frozen, then thawed: two writes to the freezer
  [ "$(sed -n 's/^modified //p' "$BATS_TEST_TMPDIR/watch")" -ge 2 ]
  # and it runs on, not paused
  [ "$(rt state "$id" | jq -r .status)" = running ]
  n=$(grep -c '^count' "$OUT")
  wait_lines "$OUT" '^count' $((n + 3))
}

@test "checkpoint: a paused container is seized under its freezer and stays paused" {
  id=$(cid)
  counter_freezer "$id"
  rt pause "$id"
  n=$(grep -c '^count' "$OUT")
  watched_checkpoint "$id" 3
  # frozen (already), thawed once every thread is seized, frozen again
  [ "$(sed -n 's/^modified //p' "$BATS_TEST_TMPDIR/watch")" -ge 3 ]
  [ "$(rt state "$id" | jq -r .status)" = paused ]
  [ -f "$IMG/tree.img" ]
  # the image is of the paused tree: restored, it counts on from there
  run restore_as "$(cid r)" "$OUT2"
  [ "$status" -eq 0 ]
  wait_lines "$OUT2" '^count' 1
  [ "$(grep -m1 '^count' "$OUT2" | cut -d' ' -f2)" -le $((n + 2)) ]
  rt resume "$id"
  wait_lines "$OUT" '^count' $((n + 3))
}
