#!/usr/bin/env bats
# Device escape: a container with CAP_MKNOD (the default under Docker,
# containerd and CRI) must not reach the host's raw disk or /dev/kmsg, on
# the hybrid layout of this host (v1 devices controller), on a pure cgroup
# v2 layout (BPF device program; imitated in a private mount namespace with
# only cgroup2 at /sys/fs/cgroup), and with no cgroup at all (fail closed).
# Every test opens a node and never reads or writes through it.
load ../lib/common

setup_file() { common_setup_file; }

setup() {
  require_root
  common_setup
  pick_disk
  cfg '.root.readonly=false | .process.capabilities |= with_entries(.value += ["CAP_MKNOD"])'
}
teardown() { common_teardown; }

# A host block device that root on the host can open: the one / lives on
# when the host lets root open it (this VM's does not: EPERM), else zram0
# or loop0.  DMAJ/DMIN.
pick_disk() {
  local d n=$BATS_TEST_TMPDIR/probe
  for d in "$(mountpoint -d /)" \
           "$(stat -c '%Hr:%Lr' /dev/zram0 2>/dev/null)" \
           "$(stat -c '%Hr:%Lr' /dev/loop0 2>/dev/null)"; do
    [ -n "$d" ] && [ -e "/sys/dev/block/$d" ] || continue
    rm -f "$n"
    mknod "$n" b "${d%:*}" "${d#*:}" || continue
    if [ "$("$SANDLOCK_HELPERS/sysc" open "$n" r)" = OK ]; then
      rm -f "$n"
      DMAJ=${d%:*} DMIN=${d#*:}
      return 0
    fi
  done
  rm -f "$n"
  skip "no host block device that root can open"
}

# containerd's linux.resources.devices (/work/shared/samples), as CRI and
# Docker send it: deny all, then the default devices.
CONTAINERD_DEVICES='[{"allow":false,"access":"rwm"},
 {"allow":true,"type":"c","major":1,"minor":3,"access":"rwm"},
 {"allow":true,"type":"c","major":1,"minor":8,"access":"rwm"},
 {"allow":true,"type":"c","major":1,"minor":7,"access":"rwm"},
 {"allow":true,"type":"c","major":5,"minor":0,"access":"rwm"},
 {"allow":true,"type":"c","major":1,"minor":5,"access":"rwm"},
 {"allow":true,"type":"c","major":1,"minor":9,"access":"rwm"},
 {"allow":true,"type":"c","major":5,"minor":1,"access":"rwm"},
 {"allow":true,"type":"c","major":136,"access":"rwm"},
 {"allow":true,"type":"c","major":5,"minor":2,"access":"rwm"}]'
# Docker adds mknod of any node.
MKNOD_ANY='[{"allow":true,"type":"c","access":"m"},{"allow":true,"type":"b","access":"m"}]'

# Nodes placed in the rootfs by the host: what a container could have made
# with mknod, without depending on mknod being allowed.
plant_nodes() {
  mknod "$BUNDLE/rootfs/tmp/disk" b "$DMAJ" "$DMIN"
  mknod "$BUNDLE/rootfs/tmp/kmsg" c 1 11
}

# The opens that must fail, and the default devices that must work.
ATTACK='sysc open /tmp/disk r; sysc open /tmp/disk w; sysc open /tmp/kmsg w'
DEFAULTS='sysc open /dev/null rw; sysc open /dev/zero r; sysc open /dev/full w; sysc open /dev/urandom r; sysc open /dev/random r; sysc open /dev/ptmx rw; sysc open /dev/tty rw'

check_defaults() { # lines from $1 on: the DEFAULTS results
  local i=$1
  for _ in 1 2 3 4 5 6; do
    [ "${lines[$i]}" = OK ] || { echo "line $i: ${lines[$i]}"; return 1; }
    i=$((i + 1))
  done
  # No controlling terminal: the tty driver says ENXIO, after the device
  # cgroup let the open through.
  [ "${lines[$i]}" = ENXIO ]
}

# Runs the bundle in a private mount namespace where /sys/fs/cgroup is a
# plain cgroup2 mount (a pure-v2 host), or nothing (MODE=none), or the
# hybrid layout without the v1 devices hierarchy (MODE=nodevices).
run_in_ns() {
  local mode=${MODE:-v2} prep
  case $mode in
    v2) prep='umount -l /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup' ;;
    none) prep='umount -l /sys/fs/cgroup' ;;
    nodevices) prep='umount -l /sys/fs/cgroup/devices' ;;
  esac
  run unshare -m --propagation private sh -c "$prep && exec ${WRAP:-} \"\$0\" --root \"\$1\" run -b \"\$2\" \"\$3\"" \
    "$SANDLOCK_OCI" "$ROOT" "$BUNDLE" "$(cid "$mode")"
}

need_ns_v2() {
  unshare -m --propagation private sh -c 'umount -l /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup' 2>/dev/null \
    || skip "cannot mount cgroup2 in a private mount namespace"
}

@test "host layout, no device rules: a planted host disk and /dev/kmsg cannot be opened" {
  plant_nodes
  cmd sh -c "$ATTACK; $DEFAULTS"
  run rt run -b "$BUNDLE" "$(cid)"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = EPERM ]
  [ "${lines[1]}" = EPERM ]
  [ "${lines[2]}" = EPERM ]
  check_defaults 3
}

@test "host layout, containerd's rules + mknod allowed: mknod of the host disk succeeds, opening it is EPERM" {
  cfg ".linux.resources.devices=($CONTAINERD_DEVICES + $MKNOD_ANY)"
  cmd sh -c "mknod /tmp/disk b $DMAJ $DMIN && mknod /tmp/kmsg c 1 11 && echo made; $ATTACK; $DEFAULTS"
  run rt run -b "$BUNDLE" "$(cid)"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = made ]
  [ "${lines[1]}" = EPERM ]
  [ "${lines[2]}" = EPERM ]
  [ "${lines[3]}" = EPERM ]
  check_defaults 4
}

@test "pure cgroup v2, no device rules: the BPF program denies the host disk and /dev/kmsg" {
  need_ns_v2
  plant_nodes
  cmd sh -c "$ATTACK; $DEFAULTS"
  MODE=v2 run_in_ns
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = EPERM ]
  [ "${lines[1]}" = EPERM ]
  [ "${lines[2]}" = EPERM ]
  check_defaults 3
}

@test "pure cgroup v2, containerd's real config: mknod + open of the host disk is EPERM" {
  need_ns_v2
  # containerd's config as shipped, minus cpu.shares (the cpu controller is
  # bound to v1 here), plus Docker's mknod rules so mknod gets that far.
  jq --argjson mk "$MKNOD_ANY" '.process.args=["sh","-c","mknod /tmp/disk b '"$DMAJ $DMIN"' && mknod /tmp/kmsg c 1 11 && echo made; '"$ATTACK; $DEFAULTS"'"]
      | .process.terminal=false | .root.path="rootfs" | .root.readonly=false
      | del(.linux.resources.cpu) | del(.linux.cgroupsPath) | del(.linux.seccomp)
      | .linux.resources.devices += $mk
      | .linux.namespaces |= map(select(.path == null))
      | .mounts |= map(select(.source == null or (.source | startswith("/var/lib") | not)))' \
    /work/shared/samples/containerd-config.json > "$BUNDLE/config.json" \
    || skip "containerd sample config not available"
  MODE=v2 run_in_ns
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = made ]
  [ "${lines[1]}" = EPERM ]
  [ "${lines[2]}" = EPERM ]
  [ "${lines[3]}" = EPERM ]
  check_defaults 4
}

@test "pure cgroup v2: wildcards, access letters and last-match-wins ordering" {
  need_ns_v2
  plant_nodes
  # (/dev/kmsg opened for reading needs CAP_SYSLOG; write-only does not)
  cmd sh -c 'sysc open /tmp/disk r; sysc open /tmp/disk w; sysc open /tmp/disk rw; sysc open /tmp/kmsg w'
  # type b, any major/minor, read only
  cfg '.linux.resources.devices=[{"allow":false,"access":"rwm"},{"allow":true,"type":"b","access":"r"}]'
  MODE=v2 run_in_ns
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[*]}" = "OK EPERM EPERM EPERM" ]
  # type a (every device), then a later deny of writes to the disk's major
  cfg ".linux.resources.devices=[{\"allow\":true,\"type\":\"a\",\"access\":\"rwm\"},{\"allow\":false,\"type\":\"b\",\"major\":$DMAJ,\"access\":\"w\"}]"
  MODE=v2 run_in_ns
  echo "$output"
  [ "${lines[*]}" = "OK EPERM EPERM OK" ]
  # a deny followed by an allow of the same node: the allow wins
  cfg ".linux.resources.devices=[{\"allow\":false,\"type\":\"b\",\"major\":$DMAJ,\"minor\":$DMIN,\"access\":\"rwm\"},{\"allow\":true,\"type\":\"b\",\"major\":$DMAJ,\"minor\":$DMIN,\"access\":\"rw\"}]"
  MODE=v2 run_in_ns
  echo "$output"
  [ "${lines[*]}" = "OK OK OK EPERM" ]
  # an allow followed by a deny: the deny wins
  cfg ".linux.resources.devices=[{\"allow\":true,\"type\":\"b\",\"major\":$DMAJ,\"minor\":$DMIN,\"access\":\"rw\"},{\"allow\":false,\"type\":\"b\",\"major\":$DMAJ,\"access\":\"r\"}]"
  MODE=v2 run_in_ns
  echo "$output"
  [ "${lines[*]}" = "EPERM OK EPERM EPERM" ]
}

@test "an explicit allow rule and a linux.devices entry still work (host layout and pure v2)" {
  cfg ".linux.devices=[{\"path\":\"/dev/hostdisk\",\"type\":\"b\",\"major\":$DMAJ,\"minor\":$DMIN,\"fileMode\":384,\"uid\":0,\"gid\":0}]
       | .linux.resources.devices=($CONTAINERD_DEVICES + [{\"allow\":true,\"type\":\"b\",\"major\":$DMAJ,\"minor\":$DMIN,\"access\":\"r\"}])"
  cmd sh -c 'sysc open /dev/hostdisk r; sysc open /dev/hostdisk w; sysc open /dev/null rw'
  run rt run -b "$BUNDLE" "$(cid)"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[*]}" = "OK EPERM OK" ]
  need_ns_v2
  MODE=v2 run_in_ns
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[*]}" = "OK EPERM OK" ]
}

@test "hybrid without a v1 devices hierarchy: the BPF program goes on the unified tree" {
  [ -d /sys/fs/cgroup/devices ] && [ -d /sys/fs/cgroup/unified ] \
    || skip "not a hybrid host with a v1 devices hierarchy"
  plant_nodes
  cmd sh -c "$ATTACK; $DEFAULTS"
  MODE=nodevices run_in_ns
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = EPERM ]
  [ "${lines[1]}" = EPERM ]
  [ "${lines[2]}" = EPERM ]
  check_defaults 3
}

@test "no cgroup at all: CAP_MKNOD without a user namespace fails closed; without CAP_MKNOD it runs" {
  plant_nodes
  cmd sysc open /tmp/disk r
  MODE=none run_in_ns
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"devices"*"CAP_MKNOD"* ]]
  [ -z "$(rt list -q)" ]
  cfg '.process.capabilities |= with_entries(.value -= ["CAP_MKNOD"])'
  MODE=none run_in_ns
  echo "$output"
  [ "$status" -eq 0 ]
  # A runtime that lacks CAP_MKNOD itself cannot hand it on: no failure.
  command -v setpriv >/dev/null || skip "no setpriv"
  cfg '.process.capabilities.bounding += ["CAP_MKNOD"]'
  WRAP="setpriv --bounding-set -mknod" MODE=none run_in_ns
  echo "$output"
  [ "$status" -eq 0 ]
}

@test "pure cgroup v2, bpf(2) refused: CAP_MKNOD without a user namespace fails closed, nothing left" {
  need_ns_v2
  command -v setpriv >/dev/null || skip "no setpriv"
  [ -d /sys/fs/cgroup/unified ] || skip "needs the hybrid unified tree to look for leftovers"
  cmd true
  WRAP="setpriv --bounding-set -bpf,-sys_admin" MODE=v2 run_in_ns
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"devices: the container may mknod"*"BPF_PROG_LOAD"* ]]
  [ -z "$(rt list -q)" ]
  [ ! -e "/sys/fs/cgroup/unified/sandlock-oci/$(cid v2)" ]
}

@test "mknod of a char or block device is refused (Landlock) unless a device rule allows m" {
  cmd sh -c "mknod /tmp/disk b $DMAJ $DMIN || echo blk-refused; mknod /dev/kmsg2 c 1 11 || echo chr-refused; mknod /tmp/fifo p && echo fifo-ok; mknod /tmp/zero c 1 5 || echo zero-refused"
  run rt run -b "$BUNDLE" "$(cid)"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *blk-refused* ]]
  [[ "$output" == *chr-refused* ]]
  [[ "$output" == *fifo-ok* ]]
  [[ "$output" == *zero-refused* ]]
  [[ "$output" == *"Permission denied"* ]]
  [ ! -e "$BUNDLE/rootfs/tmp/disk" ]
  # "c *:* m" opens char nodes only
  cfg '.linux.resources.devices=[{"allow":true,"type":"c","access":"m"}]'
  run rt run -b "$BUNDLE" "$(cid 2)"
  echo "$output"
  [[ "$output" == *blk-refused* ]]
  [[ "$output" != *chr-refused* ]]
  [[ "$output" != *zero-refused* ]]
}

@test "bad device rules are named and leave nothing behind" {
  cfg '.linux.resources.devices=[{"allow":false,"access":"rwm"},{"allow":true,"type":"x","access":"r"}]'
  run rt run -b "$BUNDLE" "$(cid)"
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *'linux.resources.devices[1].type'* ]]
  [ -z "$(rt list -q)" ]
  [ ! -e "/sys/fs/cgroup/devices/sandlock-oci/$(cid)" ]
  [ ! -e "/sys/fs/cgroup/unified/sandlock-oci/$(cid)" ]
  cfg '.linux.resources.devices=[{"allow":true,"type":"c","major":1,"minor":3,"access":"rwx"}]'
  run rt run -b "$BUNDLE" "$(cid 2)"
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *'linux.resources.devices[0].access'* ]]
}

@test "rootless: in a user namespace mknod of a device is refused by the kernel" {
  su nobody -s /bin/sh -c 'unshare -Ur true' 2>/dev/null || skip "unprivileged user namespaces are not available"
  D=$(mktemp -d /tmp/sandlock-escdev.XXXXXX)
  chmod 755 "$D"
  cp -a "$BUNDLE" "$D/bundle" && rm "$D/bundle/config.json"
  chown -R nobody "$D"
  su nobody -s /bin/sh -c "cd $D/bundle && $SANDLOCK_OCI spec --rootless"
  (cd "$D/bundle" && mv config.json c.json \
     && jq --argjson mk "$MKNOD_ANY" ".process.terminal=false | .root.readonly=false
        | .process.capabilities |= with_entries(.value += [\"CAP_MKNOD\"])
        | .linux.resources.devices=\$mk
        | .process.args=[\"sh\",\"-c\",\"mknod /tmp/disk b $DMAJ $DMIN || echo refused\"]" c.json > config.json)
  chown -R nobody "$D"
  run su nobody -s /bin/sh -c "cd $D/bundle && $SANDLOCK_OCI --root $D/state run r1"
  echo "$output"
  rm -rf "$D"
  [ "$status" -eq 0 ]
  [[ "$output" == *refused* ]]
}

@test "check and features say how device access is restricted" {
  run rt check
  echo "$output"
  [ "$status" -eq 0 ]
  if [ -d /sys/fs/cgroup/devices ]; then
    [[ "$output" == *"device access: cgroup v1 devices controller"* ]]
  fi
  [[ "$output" == *'refused by Landlock unless a linux.resources.devices rule allows "m"'* ]]
  run rt features
  [ "$status" -eq 0 ]
  echo "$output" | jq -e '.annotations["org.sandlock-oci.devices"] | length > 0'
  need_ns_v2
  run unshare -m --propagation private sh -c 'umount -l /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup && exec "$0" check' "$SANDLOCK_OCI"
  echo "$output"
  [[ "$output" == *"device access: cgroup v2 BPF device program"* ]]
  run unshare -m --propagation private sh -c 'umount -l /sys/fs/cgroup && exec "$0" check' "$SANDLOCK_OCI"
  [[ "$output" == *"device access: not restricted"*"CAP_MKNOD"*"refused"* ]]
}
