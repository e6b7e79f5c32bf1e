#!/usr/bin/env bats
# runtime-spec conformance (runtime-tools validation, crun's tests, real
# engines): each test fails on a runtime that does not follow the spec.
load ../lib/common

setup_file() { common_setup_file; }
setup() { require_root; common_setup; }
teardown() {
  common_teardown
  prop_teardown
  if [ -n "${RT_PARENT:-}" ]; then
    rmdir /sys/fs/cgroup/*/"$RT_PARENT" 2>/dev/null || true
  fi
}

crun_() { run rt run -b "$BUNDLE" "$(cid)"; }

@test "ociVersion 1.3.0 runs; a later 1.x warns and runs; 2.x is refused" {
  cmd echo ran
  cfg '.ociVersion="1.3.0"'
  crun_
  [ "$status" -eq 0 ]
  [ "$output" = ran ]
  cfg '.ociVersion="1.4.0"'
  crun_
  [ "$status" -eq 0 ]
  [[ "$output" == *'warning: ociVersion "1.4.0" is newer'* ]]
  [[ "$output" == *ran* ]]
  cfg '.ociVersion="2.0.0"'
  crun_
  [ "$status" -ne 0 ]
  [[ "$output" == *'ociVersion: unsupported version "2.0.0"'* ]]
}

@test "runtime-spec 1.3 fields that are not implemented are refused by path" {
  cfg '.ociVersion="1.3.0" | .linux.netDevices={"eth9":{"name":"eth9"}}'
  crun_
  [ "$status" -ne 0 ]
  [[ "$output" == *"linux.netDevices: not supported"* ]]
  cfg 'del(.linux.netDevices) | .linux.memoryPolicy={"mode":"MPOL_BIND","nodes":"0"}'
  crun_
  [ "$status" -ne 0 ]
  [[ "$output" == *"linux.memoryPolicy: not supported"* ]]
  [ -z "$(ls "$ROOT")" ]
}

@test "HOME comes from the container's /etc/passwd, else /, for create and exec" {
  cfg '.process.env=["PATH=/bin"] | .process.user.uid=1000 | .process.user.gid=1000'
  echo 'user:x:1000:1000:user:/home/user:/bin/sh' >> "$BUNDLE/rootfs/etc/passwd"
  sed -i '/^user:x:1000:1000:user:\/home:/d' "$BUNDLE/rootfs/etc/passwd"
  cmd sh -c 'echo "HOME=$HOME"'
  crun_
  [ "$status" -eq 0 ]
  [ "$output" = "HOME=/home/user" ]
  cfg '.process.user.uid=4242'
  crun_
  [ "$output" = "HOME=/" ]
  # an explicit HOME wins
  cfg '.process.env=["PATH=/bin","HOME=/x"]'
  crun_
  [ "$output" = "HOME=/x" ]
  cfg '.process.env=["PATH=/bin"] | .process.user.uid=0'
  cmd sleep 100
  rt run -d -b "$BUNDLE" "$(cid)" 
  run rt exec "$(cid)" sh -c 'echo "HOME=$HOME"'
  [ "$status" -eq 0 ]
  [ "$output" = "HOME=/root" ]
  run rt exec --user 1000:1000 "$(cid)" sh -c 'echo "HOME=$HOME"'
  [ "$output" = "HOME=/home/user" ]
}

@test "a missing process.cwd is created (0755, owned by root), as runc does" {
  cfg '.process.cwd="/new/deep/dir" | .process.user.uid=1000 | .process.user.gid=1000'
  cmd sh -c 'pwd; stat -c "%a %u" /new/deep/dir /new'
  crun_
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = /new/deep/dir ]
  [ "${lines[1]}" = "755 0" ]
  [ "${lines[2]}" = "755 0" ]
}

@test "hostname with a uts namespace joined by path; never the runtime's own" {
  command -v unshare >/dev/null || skip "needs unshare(1)"
  local before holder
  before=$(hostname)
  unshare --uts sleep 100 &
  holder=$!
  # wait until the holder has unshared (its uts differs from ours)
  for _ in $(seq 100); do
    [ "$(readlink /proc/$holder/ns/uts)" != "$(readlink /proc/self/ns/uts)" ] && break
    sleep 0.05
  done
  cfg ".hostname=\"joined1\" | .linux.namespaces |= map(if .type == \"uts\" then .path=\"/proc/$holder/ns/uts\" else . end)"
  cmd hostname
  crun_
  local st=$status out=$output
  local joined
  joined=$(nsenter --uts=/proc/$holder/ns/uts hostname)
  kill $holder; wait $holder || true
  [ "$st" -eq 0 ]
  [ "$out" = joined1 ]
  [ "$joined" = joined1 ]
  [ "$(hostname)" = "$before" ]
  # the runtime's own (here: the host's) uts namespace is refused
  cfg ".linux.namespaces |= map(if .type == \"uts\" then .path=\"/proc/$$/ns/uts\" else . end)"
  crun_
  [ "$status" -ne 0 ]
  [[ "$output" == *"the runtime's own UTS namespace"* ]]
  [ "$(hostname)" = "$before" ]
  [ -z "$(ls "$ROOT")" ]
}

# Propagation both ways through a bind of $PROP/src at /mnt, with bind
# option $1 and rootfsPropagation $2 (or ""): prints "h2c=yes|no c2h=yes|no".
# $PROP is a private mount made shared for the test (its own peer group,
# unconnected to the host's), unmounted by teardown.
prop_setup() {
  PROP=$BATS_TEST_TMPDIR/prop
  mkdir -p "$PROP"
  mount --bind "$PROP" "$PROP"
  mount --make-private "$PROP"
  mount --make-shared "$PROP"
}
prop_teardown() {
  [ -n "${PROP:-}" ] && umount -R "$PROP" 2>/dev/null || true
}
prop_case() {
  local opt=$1 rootprop=$2 id h2c=no c2h=no
  id=$(cid "$opt$rootprop")
  rm -rf "$BUNDLE/rootfs/tmp/ready"
  mkdir -p "$PROP/src/a" "$PROP/src/b"
  cfg ".mounts += [{\"destination\":\"/mnt\",\"type\":\"bind\",\"source\":\"$PROP/src\",\"options\":[\"rbind\",\"$opt\"]}] | .annotations={\"run.oci.sandlock.disable\":\"fs\"}"
  cfg '.process.capabilities.effective += ["CAP_SYS_ADMIN"] | .process.capabilities.permitted += ["CAP_SYS_ADMIN"] | .process.capabilities.bounding += ["CAP_SYS_ADMIN"]'
  if [ -n "$rootprop" ]; then cfg ".linux.rootfsPropagation=\"$rootprop\""; fi
  cfg ".root.readonly=false"
  cmd sh -c 'mount -t tmpfs ctrfs /mnt/b && touch /mnt/b/fromctr && touch /tmp/ready; exec sleep 100'
  rt run -d -b "$BUNDLE" "$id" || return 1
  for _ in $(seq 100); do
    [ -e "$BUNDLE/rootfs/tmp/ready" ] && break
    sleep 0.05
  done
  [ -e "$BUNDLE/rootfs/tmp/ready" ] || return 1
  mount -t tmpfs hostfs "$PROP/src/a"
  touch "$PROP/src/a/fromhost"
  rt exec "$id" test -e /mnt/a/fromhost && h2c=yes
  [ -e "$PROP/src/b/fromctr" ] && c2h=yes
  rt delete -f "$id" >/dev/null
  umount "$PROP/src/a"
  umount "$PROP/src/b" 2>/dev/null || true
  cfg 'del(.mounts[-1]) | del(.linux.rootfsPropagation)'
  echo "h2c=$h2c c2h=$c2h"
}

@test "mount propagation: rshared/shared reach the host both ways, slave one way, private none" {
  prop_setup
  run prop_case rshared rshared
  [ "$output" = "h2c=yes c2h=yes" ]
  run prop_case shared shared
  [ "$output" = "h2c=yes c2h=yes" ]
  run prop_case rslave ""
  [ "$output" = "h2c=yes c2h=no" ]
  run prop_case slave rslave
  [ "$output" = "h2c=yes c2h=no" ]
  run prop_case rprivate ""
  [ "$output" = "h2c=no c2h=no" ]
  run prop_case private private
  [ "$output" = "h2c=no c2h=no" ]
  # nothing the containers did is left on the host
  [ "$(grep -c " $PROP/" /proc/self/mountinfo)" -eq 0 ]
}

@test "linux.devices path with a trailing slash names the node, not an empty name" {
  cfg '.linux.devices=[{"path":"/dev/mynull/","type":"c","major":1,"minor":3,"fileMode":438}] | .linux.resources.devices += [{"allow":true,"type":"c","major":1,"minor":3,"access":"rwm"}]'
  cmd sh -c 'stat -c "%F %t:%T" /dev/mynull && echo hi > /dev/mynull && echo ok'
  crun_
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "character special file 1:3" ]
  [ "${lines[1]}" = ok ]
  cfg '.linux.devices=[{"path":"//./","type":"c","major":1,"minor":3}]'
  crun_
  [ "$status" -ne 0 ]
  [[ "$output" == *"linux.devices[0].path"* ]]
}

@test "lo is up in a new network namespace (crun's net-device-loopback)" {
  cmd sh -c 'cat /sys/class/net/lo/flags; nc 127.0.0.1 1 </dev/null 2>&1; true'
  cfg '.linux.namespaces |= (map(select(.type != "network")) + [{"type":"network"}])'
  crun_
  [ "$status" -eq 0 ]
  # IFF_UP is bit 0 of the flags; a closed port refuses (a down lo would
  # say "Network is unreachable")
  [ $(( ${lines[0]} & 1 )) -eq 1 ]
  [[ "${lines[1]}" == *"Connection refused"* ]]
}

@test "without a mount namespace: the runtime's is inherited, root.path is the root, mounts are refused" {
  cfg '.linux.namespaces |= map(select(.type != "mount")) | .mounts=[] | .linux.maskedPaths=[] | .linux.readonlyPaths=[] | .root.readonly=false'
  cmd sh -c 'readlink /proc/self/ns/mnt 2>/dev/null; ls /; cat /etc/passwd | head -1; exec sleep 100'
  rt run -d -b "$BUNDLE" "$(cid)"
  local pid
  pid=$(rt state "$(cid)" | jq -r .pid)
  # the same mount namespace as the runtime's (spec: inherited)
  [ "$(readlink /proc/$pid/ns/mnt)" = "$(readlink /proc/self/ns/mnt)" ]
  # but its root is the bundle's rootfs, and nothing was mounted on the host
  [ "$(stat -L -c %d:%i /proc/$pid/root)" = "$(stat -c %d:%i "$BUNDLE/rootfs")" ]
  [ "$(grep -c "$BUNDLE" /proc/self/mountinfo)" -eq 0 ]
  # exec lands in the same root
  run rt exec "$(cid)" sh -c 'ls /bin/busybox && test ! -e /work'
  [ "$status" -eq 0 ]
  rt delete -f "$(cid)"
  # anything that would mount on the host's tree is refused, by name
  cfg '.mounts=[{"destination":"/proc","type":"proc","source":"proc"}]'
  crun_
  [ "$status" -ne 0 ]
  [[ "$output" == *'mounts: 1 entries: needs a "mount" namespace'* ]]
  cfg '.mounts=[] | .root.readonly=true'
  crun_
  [[ "$output" == *'root.readonly: needs a "mount" namespace'* ]]
  cfg '.root.readonly=false | .linux.maskedPaths=["/etc"]'
  crun_
  [[ "$output" == *'linux.maskedPaths: needs a "mount" namespace'* ]]
  [ "$(grep -c "$BUNDLE" /proc/self/mountinfo)" -eq 0 ]
  [ -z "$(ls "$ROOT")" ]
}

@test "realtime: cpu.realtimeRuntime gets a budget under our parent cgroup; SCHED_FIFO then works" {
  [ -f /sys/fs/cgroup/cpu/cpu.rt_runtime_us ] \
    || skip "needs cgroup v1 cpu with RT group scheduling (CONFIG_RT_GROUP_SCHED)"
  # a parent of our own, created by the runtime with no budget (as
  # /sandlock-oci is on a fresh host); removed below
  RT_PARENT=sandlock-oci-rtspec-$$
  cfg ".linux.cgroupsPath=\"/$RT_PARENT/$(cid)\""
  cfg '.linux.resources.cpu={"realtimeRuntime":20000,"realtimePeriod":1000000} | .process.scheduler={"policy":"SCHED_FIFO","priority":10}'
  cmd sh -c 'awk "{print \$41}" /proc/self/stat'
  crun_
  local budget
  budget=$(cat /sys/fs/cgroup/cpu/$RT_PARENT/cpu.rt_runtime_us 2>/dev/null || echo none)
  [ "$status" -eq 0 ]
  [ "$budget" = 20000 ]
  [ "$output" = 1 ]              # SCHED_FIFO
  # without a budget the refusal says what to set
  cfg 'del(.linux.resources.cpu)'
  crun_
  [ "$status" -ne 0 ]
  [[ "$output" == *"process.scheduler: set SCHED_FIFO"*"linux.resources.cpu.realtimeRuntime"* ]]
}

@test "linux.intelRdt (not implemented) is refused by path, not ignored" {
  cfg '.ociVersion="1.3.0" | .linux.intelRdt={"closID":"guaranteed","schemata":["L3:0=ff"],"enableMonitoring":true}'
  crun_
  [ "$status" -ne 0 ]
  [[ "$output" == *"linux.intelRdt: not supported"* ]]
  [ -z "$(ls "$ROOT")" ]
}

@test "pids.limit 0: no new tasks under runtime-spec 1.3, unlimited before" {
  [ -d /sys/fs/cgroup/pids ] || skip "needs the cgroup v1 pids controller"
  cfg '.ociVersion="1.3.0" | .linux.resources.pids={"limit":0}'
  cmd sh -c 'cat /proc/self/cgroup >/dev/null; /bin/true && echo forked'
  crun_
  [[ "$output" != *forked* ]]
  cfg '.ociVersion="1.2.0"'
  crun_
  [ "$status" -eq 0 ]
  [[ "$output" == *forked* ]]
}

@test "poststart failure: an error and a stopped container under 1.3, a warning before" {
  cfg '.ociVersion="1.3.0" | .hooks.poststart=[{"path":"/bin/false"}]'
  cmd sleep 100
  rt create -b "$BUNDLE" "$(cid)"
  run rt start "$(cid)"
  [ "$status" -ne 0 ]
  [[ "$output" == *poststart* ]]
  [ "$(rt state "$(cid)" | jq -r .status)" = stopped ]
  rt delete "$(cid)"
  cfg '.ociVersion="1.2.0"'
  rt create -b "$BUNDLE" "$(cid b)"
  run rt start "$(cid b)"
  [ "$status" -eq 0 ]
  [[ "$output" == *poststart* ]]
  [ "$(rt state "$(cid b)" | jq -r .status)" = running ]
}
