#!/usr/bin/env bats
# cgroups through the CLI: resources land in the host's files, the init
# process is in the container's cgroup, limits hold inside the container,
# kill --all reaches every process, delete removes the directories.
# Layout-aware: hybrid/v1 read the v1 files, v2 the unified ones.

load ../lib/common

setup_file() { common_setup_file; }

setup() {
  require_root
  common_setup
  LAYOUT=$("$SANDLOCK_OCI" check 2>/dev/null | sed -n 's/^cgroup layout: //p')
  [ -n "$LAYOUT" ] && [ "$LAYOUT" != none ] || skip "no cgroups mounted"
  CG=/sandlock-bats-$$-$BATS_TEST_NUMBER
  cfg ".linux.cgroupsPath=\"$CG\""
}

teardown() {
  common_teardown
  local d
  for d in /sys/fs/cgroup/*"$CG" /sys/fs/cgroup"$CG"; do
    [ -d "$d" ] && rmdir "$d" 2>/dev/null
  done
  true
}

# dir of controller $1 for this container
cgdir() {
  if [ "$LAYOUT" = v2 ]; then echo "/sys/fs/cgroup$CG"; else echo "/sys/fs/cgroup/$1$CG"; fi
}

# create, with the parked init's stdio and bats' fd 3 kept off bats' pipes
# (a process still holding them makes bats wait for it)
mk() { # id
  rt create --bundle "$BUNDLE" "$1" >"$BATS_TEST_TMPDIR/create.out" 2>&1 </dev/null 3>&-
}

limits() {
  cfg '.linux.resources={"memory":{"limit":67108864},"pids":{"limit":20},"cpu":{"quota":50000,"period":100000}}'
}

@test "cgroup: create applies limits and moves init in; delete removes it" {
  limits
  cmd sleep 100
  id=$(cid)
  mk "$id" || { cat "$BATS_TEST_TMPDIR/create.out"; false; }
  pid=$(rt state "$id" | jq .pid)
  if [ "$LAYOUT" = v2 ]; then
    [ "$(cat "$(cgdir memory)/memory.max")" = 67108864 ]
    [ "$(cat "$(cgdir cpu)/cpu.max")" = "50000 100000" ]
  else
    [ "$(cat "$(cgdir memory)/memory.limit_in_bytes")" = 67108864 ]
    [ "$(cat "$(cgdir cpu)/cpu.cfs_quota_us")" = 50000 ]
  fi
  [ "$(cat "$(cgdir pids)/pids.max")" = 20 ]
  grep -qx "$pid" "$(cgdir pids)/cgroup.procs"
  grep -qx "$pid" "$(cgdir memory)/cgroup.procs"
  run rt delete -f "$id"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ ! -e "$(cgdir memory)" ]
  [ ! -e "$(cgdir pids)" ]
}

@test "cgroup: pids.limit holds inside the container" {
  cfg '.linux.resources={"pids":{"limit":8}}'
  cmd sh -c 'i=0; while [ $i -lt 20 ]; do sleep 30 & i=$((i+1)); done; echo all-started'
  run rt run --bundle "$BUNDLE" "$(cid)" 3>&-
  echo "status $status: $output"
  [[ "$output" == *"can't fork"* ]]
  [[ "$output" != *all-started* ]]
  # control: the same script runs to the end without the limit
  cfg 'del(.linux.resources)'
  run rt run --bundle "$BUNDLE" "$(cid)" 3>&-
  [[ "$output" == *all-started* ]]
}

@test "cgroup: kill --all reaches every process of the container" {
  cmd sh -c 'sleep 100 & sleep 100 & wait'
  id=$(cid)
  mk "$id"
  rt start "$id" 3>&-
  procs=$(cgdir pids)/cgroup.procs
  for _ in $(seq 1000); do [ "$(wc -l < "$procs")" -ge 3 ] && break; done
  [ "$(wc -l < "$procs")" -eq 3 ]
  run rt kill --all "$id" KILL
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  run rt delete -f "$id"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ ! -e "$(cgdir pids)" ]
}

@test "cgroup: a refused resource fails create and leaves no directory" {
  if [ "$LAYOUT" = v2 ]; then
    cfg '.linux.resources={"cpu":{"cpus":"4095"}}'
    want=cpuset.cpus
  else
    cfg '.linux.resources={"unified":{"memory.high":"1000000"}}'
    want="needs a cgroup v2 host"
  fi
  run mk "$(cid)"
  [ "$status" -ne 0 ]
  output=$(cat "$BATS_TEST_TMPDIR/create.out")
  [[ "$output" == *"$want"* ]] || { echo "$output"; false; }
  [ ! -e "$(cgdir memory)" ]
  [ ! -e "$(cgdir pids)" ]
}

@test "cgroup: without cgroupsPath the container goes to /sandlock-oci/<id>" {
  cfg 'del(.linux.cgroupsPath)'
  cmd sleep 100
  id=$(cid)
  mk "$id"
  CG=/sandlock-oci/$id
  pid=$(rt state "$id" | jq .pid)
  grep -qx "$pid" "$(cgdir pids)/cgroup.procs"
  rt delete -f "$id"
  [ ! -e "$(cgdir pids)" ]
}
