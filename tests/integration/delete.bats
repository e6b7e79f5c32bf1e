#!/usr/bin/env bats
# delete and delete -f against processes that do not die on time: a parent
# cgroup frozen by someone else (the wait is bounded, the container stays
# for a retry) and processes forking as the container exits (every delete
# removes every cgroup directory).

load ../lib/common

setup_file() { common_setup_file; }

setup() {
  require_root
  common_setup
  LAYOUT=$("$SANDLOCK_OCI" check 2>/dev/null | sed -n 's/^cgroup layout: //p')
  [ -n "$LAYOUT" ] && [ "$LAYOUT" != none ] || skip "no cgroups mounted"
  PARENT=/sandlock-del-$$-$BATS_TEST_NUMBER
}

# every directory of cgroup $1 on every hierarchy the host has
cgdirs() {
  local d
  for d in /sys/fs/cgroup/*"$1" /sys/fs/cgroup"$1"; do
    [ -d "$d" ] && echo "$d"
  done
  true
}

teardown() {
  local f d
  for f in /sys/fs/cgroup/freezer"$PARENT"/freezer.state; do
    [ -e "$f" ] && echo THAWED > "$f"
  done
  [ -e /sys/fs/cgroup"$PARENT"/cgroup.freeze ] \
    && echo 0 > /sys/fs/cgroup"$PARENT"/cgroup.freeze
  common_teardown
  for d in $(cgdirs "$PARENT" | sort -r); do
    find "$d" -depth -mindepth 1 -type d -exec rmdir {} + 2>/dev/null
    rmdir "$d" 2>/dev/null
  done
  true
}

run_d() { # id
  rt run -d --bundle "$BUNDLE" "$1" >"$BATS_TEST_TMPDIR/run.out" 2>&1 </dev/null 3>&-
}

@test "delete -f: a parent cgroup frozen from outside bounds the wait, names what is left, keeps the container" {
  # The v1 freezer holds SIGKILL until thawed; the v2 freezer lets fatal
  # signals through, so only the v1 freezer can make a process undying.
  [ -d /sys/fs/cgroup/freezer ] || skip "no v1 freezer hierarchy: a frozen v2 cgroup does not stop SIGKILL"
  id=$(cid)
  cfg ".linux.cgroupsPath=\"$PARENT/$id\""
  cmd sleep 1000
  run_d "$id"
  pid=$(rt state "$id" | jq .pid)
  echo FROZEN > /sys/fs/cgroup/freezer"$PARENT"/freezer.state
  start=$SECONDS
  run timeout 60 "$SANDLOCK_OCI" --root "$ROOT" delete -f "$id"
  echo "$output"
  [ "$status" -ne 0 ]
  [ "$status" -ne 124 ]
  [ $((SECONDS - start)) -le 30 ]
  [[ "$output" == *"$pid"* ]]
  [[ "$output" == *"$PARENT/$id"* ]]
  # Not half-deleted: still listed, its cgroup still there.
  rt list -q | grep -qx "$id"
  rt state "$id" >/dev/null
  [ -d /sys/fs/cgroup/freezer"$PARENT/$id" ]
  echo THAWED > /sys/fs/cgroup/freezer"$PARENT"/freezer.state
  run timeout 60 "$SANDLOCK_OCI" --root "$ROOT" delete -f "$id"
  echo "$output"
  [ "$status" -eq 0 ]
  [ -z "$(rt list -q | grep -x "$id")" ]
  [ -z "$(cgdirs "$PARENT/$id")" ]
}

# 30 rounds: each container forks children as it is told to stop, without a
# pid namespace so they outlive init; `delete` of the stopped container must
# take them down and leave no cgroup directory on any hierarchy.
@test "delete: a stopped container whose processes fork at exit is removed everywhere (30 rounds)" {
  cfg 'del(.linux.namespaces[] | select(.type == "pid"))'
  cmd sh -c 'trap "for i in 1 2 3 4 5 6 7 8; do sh -c \"sleep 30\" & done; exit 0" TERM; while :; do sleep 0.05; done'
  for i in $(seq 1 30); do
    id=$(cid "$i")
    cfg ".linux.cgroupsPath=\"$PARENT/$id\""
    run_d "$id"
    rt kill "$id" TERM
    for _ in $(seq 1 200); do
      [ "$(rt state "$id" | jq -r .status)" = stopped ] && break
      sleep 0.05
    done
    run timeout 60 "$SANDLOCK_OCI" --root "$ROOT" delete "$id"
    [ "$status" -eq 0 ] || { echo "round $i: $output"; false; }
    [ -z "$(rt list -q | grep -x "$id")" ]
    [ -z "$(cgdirs "$PARENT/$id")" ] || { echo "round $i left: $(cgdirs "$PARENT/$id")"; false; }
  done
}

# On a hybrid host a process can be in the container's cgroup of one v1
# hierarchy only: cgroup.kill and the wait on the unified tree missed it,
# and its rmdir failed with EBUSY, leaving the other hierarchies' state.
@test "delete -f: a process in the container's v1 pids cgroup only is killed, every directory goes" {
  [ "$LAYOUT" = hybrid ] && [ -d /sys/fs/cgroup/pids ] \
    || skip "needs a hybrid host with a v1 pids hierarchy (layout: $LAYOUT)"
  id=$(cid)
  cfg ".linux.cgroupsPath=\"$PARENT/$id\""
  cmd sleep 1000
  run_d "$id"
  sleep 1000 </dev/null >/dev/null 2>&1 3>&- &
  straggler=$!
  echo "$straggler" > /sys/fs/cgroup/pids"$PARENT/$id"/cgroup.procs
  run timeout 60 "$SANDLOCK_OCI" --root "$ROOT" delete -f "$id"
  echo "$output"
  kill -9 "$straggler" 2>/dev/null && echo "straggler $straggler survived"
  wait "$straggler" || true
  [ "$status" -eq 0 ]
  [ -z "$(rt list -q | grep -x "$id")" ]
  [ -z "$(cgdirs "$PARENT/$id")" ]
}
