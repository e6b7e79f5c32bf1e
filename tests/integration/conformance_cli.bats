#!/usr/bin/env bats
# Runtime conformance found by runtime-tools, crun's tests and real engines
# (issue 16): hooks, exec's session, the CLI flags engines pass, and the
# child's real error reaching the caller.
load ../lib/common

setup_file() { common_setup_file; }
setup() { require_root; common_setup; }
teardown() { common_teardown; }

# A host shell hook (hooks run on the host) as a JSON object.
hook() { jq -nc --arg s "$1" '{path:"/bin/sh",args:["sh","-c",$s]}'; }

# ---- hooks ---------------------------------------------------------------

@test "hooks: a failing poststart hook is a warning and the next one still runs (ociVersion < 1.3)" {
  id=$(cid)
  m=$BATS_TEST_TMPDIR/marker
  cmd sleep 30
  cfg ".ociVersion=\"1.2.0\" | .hooks.poststart=[$(hook 'exit 3'), $(hook "echo ran > $m")]"
  rt create -b "$BUNDLE" "$id"
  run rt start "$id"
  [ "$status" -eq 0 ]
  [[ "$output" == *"warning: poststart hook 0"*"exited with status 3"* ]]
  [ "$(cat "$m")" = ran ]
  [ "$(rt state "$id" | jq -r .status)" = running ]
}

@test "hooks: every failing poststop hook is logged and the rest still run" {
  id=$(cid)
  m=$BATS_TEST_TMPDIR/marker
  cfg ".hooks.poststop=[$(hook 'exit 4'), $(hook 'exit 5'), $(hook "echo ran > $m")]"
  rt create -b "$BUNDLE" "$id"
  run rt --log "$BATS_TEST_TMPDIR/log" delete -f "$id"
  [ "$status" -eq 0 ]
  [ "$(cat "$m")" = ran ]
  grep -q 'warning: poststop hook 0.*status 4' "$BATS_TEST_TMPDIR/log"
  grep -q 'warning: poststop hook 1.*status 5' "$BATS_TEST_TMPDIR/log"
}

@test "hooks: a hook without env gets the runtime's environment (runc, crun)" {
  id=$(cid)
  e=$BATS_TEST_TMPDIR/env
  cfg ".hooks.prestart=[$(hook "env > $e.prestart")] | .hooks.poststart=[$(hook "env > $e.poststart")]"
  SANDLOCK_HOOK_PROBE=yes rt run -b "$BUNDLE" "$id"
  grep -qx 'SANDLOCK_HOOK_PROBE=yes' "$e.prestart"
  grep -q '^PATH=' "$e.prestart"
  grep -qx 'SANDLOCK_HOOK_PROBE=yes' "$e.poststart"
}

@test "hooks: a hook's own env replaces the runtime's" {
  id=$(cid)
  e=$BATS_TEST_TMPDIR/env
  cfg ".hooks.prestart=[$(hook "env > $e") + {env:[\"ONLY=this\"]}]"
  SANDLOCK_HOOK_PROBE=yes rt run -b "$BUNDLE" "$id"
  grep -qx 'ONLY=this' "$e"
  ! grep -q SANDLOCK_HOOK_PROBE "$e" || false
}

# ---- exec ----------------------------------------------------------------

@test "exec without a terminal: the process leads its own session and group (runc, crun)" {
  id=$(cid)
  cmd sleep 30
  rt run -d -b "$BUNDLE" "$id"
  # fields 5 and 6 of /proc/PID/stat: process group and session
  run rt exec "$id" sh -c 'read -r p c s pp pg sid rest < /proc/$$/stat; echo "$$ $pg $sid"'
  [ "$status" -eq 0 ]
  set -- $output
  [ "$1" != 0 ]
  [ "$2" = "$1" ]
  [ "$3" = "$1" ]
}

# ---- the child's real error ------------------------------------------------

@test "create: a namespace path that is not that namespace is named, not a broken pipe" {
  cfg '.linux.namespaces |= map(if .type == "ipc" then .path = "/etc/hostname" else . end)'
  run rt create -b "$BUNDLE" "$(cid)"
  [ "$status" -eq 1 ]
  [[ "$output" == *'linux.namespaces['*'].path `/etc/hostname`: not a "ipc" namespace'* ]]
  cfg '.linux.namespaces |= map(if .type == "ipc" then .path = "/proc/self/ns/uts" else . end)'
  run rt create -b "$BUNDLE" "$(cid)"
  [ "$status" -eq 1 ]
  [[ "$output" == *'.path `/proc/self/ns/uts`: not a "ipc" namespace'* ]]
  [ -z "$(ls "$ROOT")" ]
}

@test "create: a root.path that is a regular file says so, not 'exited during setup'" {
  touch "$BUNDLE/rootfile"
  cfg '.root.path = "rootfile"'
  for i in 1 2 3; do
    run rt create -b "$BUNDLE" "$(cid)-$i"
    [ "$status" -eq 1 ]
    [[ "$output" == *"rootfile"*"Not a directory"* ]]
  done
  [ -z "$(ls "$ROOT")" ]
}

# ---- rootless hints --------------------------------------------------------

@test "run as an ordinary user with a rootful config says to use spec --rootless" {
  su nobody -s /bin/sh -c true 2>/dev/null || skip "no nobody user to switch to"
  D=$(mktemp -d /tmp/sandlock-cli.XXXXXX)
  chmod 755 "$D"
  make_bundle "$D/b"
  chown -R nobody "$D"
  run su nobody -s /bin/sh -c "cd $D/b && $SANDLOCK_OCI --root $D/state run x"
  rm -rf "$D"
  [ "$status" -eq 1 ]
  [[ "$output" == *"Operation not permitted: creating namespaces needs root or a user namespace: use \`sandlock-oci spec --rootless\`"* ]]
}

# ---- CLI flags engines and crun's tests use --------------------------------

@test "--log: a path that cannot be opened fails up front, naming it" {
  run rt --log /nonexistent-dir/x.log list
  [ "$status" -eq 1 ]
  [[ "$output" == *"--log \`/nonexistent-dir/x.log\`: No such file or directory"* ]]
}

@test "run --keep: the container stays stopped after run, and delete removes it" {
  id=$(cid)
  cmd sh -c 'exit 7'
  run rt run --keep -b "$BUNDLE" "$id"
  [ "$status" -eq 7 ]
  [ "$(rt state "$id" | jq -r .status)" = stopped ]
  rt delete "$id"
  [ -z "$(rt list -q)" ]
}

@test "create/run --config: that file is used instead of BUNDLE/config.json" {
  cmd echo from-bundle
  jq '.process.args=["echo","from-config"]' "$BUNDLE/config.json" > "$BATS_TEST_TMPDIR/other.json"
  run rt run --config "$BATS_TEST_TMPDIR/other.json" -b "$BUNDLE" "$(cid)"
  [ "$status" -eq 0 ]
  [ "$output" = from-config ]
  run rt create --config "$BATS_TEST_TMPDIR/missing.json" -b "$BUNDLE" "$(cid 2)"
  [ "$status" -eq 1 ]
  [[ "$output" == *missing.json* ]]
  [ -z "$(ls "$ROOT")" ]
}

@test "--cgroup-manager: systemd reads cgroupsPath as slice:prefix:name, cgroupfs as a path, anything else is refused" {
  id=$(cid)
  cmd sh -c 'grep pids /proc/self/cgroup'
  cfg ".linux.namespaces |= map(select(.type != \"cgroup\")) | .linux.cgroupsPath=\"system.slice:cli:$id\""
  run rt --cgroup-manager systemd run -b "$BUNDLE" "$id"
  [ "$status" -eq 0 ]
  [[ "$output" == *":pids:/system.slice/cli-$id.scope" ]]
  run rt --cgroup-manager cgroupfs run -b "$BUNDLE" "$id"
  [ "$status" -eq 0 ]
  [[ "$output" == *":pids:/system.slice:cli:$id" ]]
  run rt --cgroup-manager bogus list
  [ "$status" -eq 1 ]
  [[ "$output" == *"--cgroup-manager: expected cgroupfs, systemd or disabled"* ]]
}

@test "--cgroup-manager disabled: no cgroup is made; linux.resources are refused" {
  id=$(cid)
  cmd sh -c 'cat /proc/self/cgroup'
  cfg '.linux.namespaces |= map(select(.type != "cgroup"))'
  run rt --cgroup-manager disabled run -b "$BUNDLE" "$id"
  [ "$status" -eq 0 ]
  [ "$output" = "$(cat /proc/self/cgroup)" ]
  cfg '.linux.resources={"pids":{"limit":10}}'
  run rt --cgroup-manager disabled run -b "$BUNDLE" "$id"
  [ "$status" -eq 1 ]
  [[ "$output" == *"linux.resources: cannot be applied with --cgroup-manager disabled"* ]]
  [ -z "$(ls "$ROOT")" ]
}

# ---- linux.resources that used to be parsed and dropped ---------------------

# The host's cgroup layout, the first real disk's major:minor, and a private
# cgroup path for this test.
res_setup() {
  LAYOUT=$("$SANDLOCK_OCI" check 2>/dev/null | sed -n 's/^cgroup layout: //p')
  [ -n "$LAYOUT" ] && [ "$LAYOUT" != none ] || skip "no cgroups mounted"
  local b
  DEV=
  for b in /sys/block/*; do
    case ${b##*/} in loop*|ram*|zram*|nbd*) continue ;; esac
    DEV=$(cat "$b/dev") && break
  done
  [ -n "$DEV" ] || skip "no block device to throttle"
  MAJ=${DEV%:*} MIN=${DEV#*:}
  CG=/sandlock-cli-$$-$BATS_TEST_NUMBER
  cfg ".linux.cgroupsPath=\"$CG\""
}
# run create with its output in a file: a parked init that holds bats' pipe
# would make `run` wait for it.
create_st() { # id
  status=0
  rt create -b "$BUNDLE" "$1" >"$BATS_TEST_TMPDIR/create.out" 2>&1 </dev/null 3>&- || status=$?
  output=$(cat "$BATS_TEST_TMPDIR/create.out")
}
io_dir() { if [ "$LAYOUT" = v2 ]; then echo "/sys/fs/cgroup$CG"; else echo "/sys/fs/cgroup/blkio$CG"; fi; }
io_has() { # v1-file v2-key rate
  if [ "$LAYOUT" = v2 ]; then grep -q "^$DEV .*$2=$3" "$(io_dir)/io.max"
  else grep -qx "$DEV $3" "$(io_dir)/blkio.throttle.$1_device"; fi
}

@test "resources: blockIO throttle lists land in blkio.throttle.* (v1) / io.max (v2)" {
  res_setup
  id=$(cid)
  cfg ".linux.resources.blockIO={\"throttleReadBpsDevice\":[{\"major\":$MAJ,\"minor\":$MIN,\"rate\":1048576}],\"throttleWriteIOPSDevice\":[{\"major\":$MAJ,\"minor\":$MIN,\"rate\":100}]}"
  rt create -b "$BUNDLE" "$id" </dev/null >/dev/null 2>&1 3>&-
  io_has read_bps rbps 1048576
  io_has write_iops wiops 100
}

@test "resources: update -r changes the blockIO throttle" {
  res_setup
  id=$(cid)
  cmd sleep 30
  rt create -b "$BUNDLE" "$id" </dev/null >/dev/null 2>&1 3>&-
  echo "{\"blockIO\":{\"throttleWriteBpsDevice\":[{\"major\":$MAJ,\"minor\":$MIN,\"rate\":2097152}]}}" > "$BATS_TEST_TMPDIR/r.json"
  rt update -r "$BATS_TEST_TMPDIR/r.json" "$id"
  io_has write_bps wbps 2097152
}

@test "resources: blockIO.weightDevice is applied or create fails naming it, never dropped" {
  res_setup
  id=$(cid)
  cfg ".linux.resources.blockIO={\"weightDevice\":[{\"major\":$MAJ,\"minor\":$MIN,\"weight\":300}]}"
  create_st "$id"
  if [ "$status" -eq 0 ]; then
    grep -q "^$DEV 300" "$(io_dir)"/*weight_device "$(io_dir)"/io.*weight 2>/dev/null
  else
    [[ "$output" == *"linux.resources.blockIO.weightDevice[0]"* ]]
    [ -z "$(ls "$ROOT")" ]
  fi
}

# hugepageLimits, network, rdma: applied where the controller is mounted
# (the unit test test_cgroup_limits checks the files), else create fails
# naming the field and the controller.
res_refused_or_applied() { # json controller field file expected
  local id; id=$(cid)
  cfg ".linux.resources=$1"
  create_st "$id"
  if [ "$LAYOUT" != v2 ] && [ -d "/sys/fs/cgroup/$2" ]; then
    [ "$status" -eq 0 ]
    [ "$(cat "/sys/fs/cgroup/$2$CG/$4")" = "$5" ]
  elif [ "$LAYOUT" = v2 ] && grep -qw "$2" /sys/fs/cgroup/cgroup.controllers; then
    [ "$status" -eq 0 ]
  else
    [ "$status" -eq 1 ]
    [[ "$output" == *"linux.resources.$3"*"$2"* ]]
    [ -z "$(ls "$ROOT")" ]
  fi
}

@test "resources: hugepageLimits are applied or refused naming hugetlb" {
  res_setup
  res_refused_or_applied '{"hugepageLimits":[{"pageSize":"2MB","limit":4194304}]}' \
    hugetlb hugepageLimits hugetlb.2MB.limit_in_bytes 4194304
}

@test "resources: network.classID is applied or refused naming net_cls" {
  res_setup
  res_refused_or_applied '{"network":{"classID":1048577}}' \
    net_cls network.classID net_cls.classid 1048577
}

@test "resources: rdma is applied or refused naming rdma" {
  res_setup
  res_refused_or_applied '{"rdma":{"mlx5_0":{"hcaHandles":3}}}' \
    rdma rdma rdma.max "mlx5_0 hca_handle=3 hca_object=max"
}
