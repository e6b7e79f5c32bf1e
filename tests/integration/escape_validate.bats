#!/usr/bin/env bats
# Bad or dangerous config values are refused at create, by name, and nothing
# reaches the host: host-global sysctls, sysctls in the host's namespaces, a
# sysctl write steered out of /proc/sys, ...
load ../lib/common

setup_file() { common_setup_file; }
setup() { require_root; common_setup; }
teardown() {
  common_teardown
  [ -n "${NETNS_PID:-}" ] && kill "$NETNS_PID" 2>/dev/null || true
}

crun_() { run rt run -b "$BUNDLE" "$(cid)"; }

# A created-and-refused container leaves no state behind.
no_state_left() { [ -z "$(rt list -q)" ]; }

@test "sysctl: host-global keys are refused by name, the host is untouched" {
  local key val
  for key in vm.swappiness kernel.core_pattern kernel.randomize_va_space; do
    # The host's own value: even a runtime that wrote it would not change
    # the host, but it must not get that far.
    val=$(cat "/proc/sys/${key//.//}")
    cfg ".linux.sysctl={\"$key\": $(jq -Rn --arg v "$val" '$v')}"
    crun_
    [ "$status" -ne 0 ]
    [[ "$output" == *"linux.sysctl.\"$key\": not a namespaced sysctl"* ]]
    [ "$(cat "/proc/sys/${key//.//}")" = "$val" ]
    no_state_left
  done
}

@test "sysctl: namespaced keys need the container's own namespace" {
  local fwd
  fwd=$(cat /proc/sys/net/ipv4/ip_forward)
  cfg ".linux.sysctl={\"net.ipv4.ip_forward\":\"$fwd\"} | .linux.namespaces |= map(select(.type != \"network\"))"
  crun_
  [ "$status" -ne 0 ]
  [[ "$output" == *'linux.sysctl."net.ipv4.ip_forward": needs the container'"'"'s own "network" namespace'* ]]
  cfg '.linux.sysctl={"kernel.shmmni":"4000"} | .linux.namespaces |= map(select(.type != "ipc"))'
  crun_
  [ "$status" -ne 0 ]
  [[ "$output" == *'linux.sysctl."kernel.shmmni": needs the container'"'"'s own "ipc" namespace'* ]]
  cfg '.linux.sysctl={"fs.mqueue.msg_max":"20"}'
  crun_
  [ "$status" -ne 0 ]
  [[ "$output" == *'"fs.mqueue.msg_max": needs'* ]]
  no_state_left
}

@test "sysctl: a network namespace joined by path counts only if it is not the host's" {
  local fwd
  fwd=$(cat /proc/sys/net/ipv4/ip_forward)
  cfg ".linux.sysctl={\"net.ipv4.ip_forward\":\"$fwd\"} | .linux.namespaces |= map(if .type == \"network\" then .path = \"/proc/$$/ns/net\" else . end)"
  crun_
  [ "$status" -ne 0 ]
  [[ "$output" == *'"net.ipv4.ip_forward": needs the container'"'"'s own "network" namespace'* ]]
  # A namespace of its own, joined by path: the key is written there.
  unshare --net sleep 60 & NETNS_PID=$!
  while [ "$(readlink /proc/$NETNS_PID/ns/net)" = "$(readlink /proc/self/ns/net)" ]; do :; done
  cfg ".linux.sysctl={\"net.ipv4.ip_forward\":\"1\"} | .linux.namespaces |= map(if .type == \"network\" then .path = \"/proc/$NETNS_PID/ns/net\" else . end)"
  cmd cat /proc/sys/net/ipv4/ip_forward
  crun_
  [ "$status" -eq 0 ]
  [ "$output" = 1 ]
  [ "$(cat /proc/sys/net/ipv4/ip_forward)" = "$fwd" ]
}

@test "sysctl: the namespaced set is written inside; kernel.hostname is the hostname field" {
  cfg '.linux.sysctl={"kernel.shmmni":"4000","fs.mqueue.msg_max":"20","kernel.domainname":"sysctl.test","net.ipv4.ip_forward":"1"}'
  cmd sh -c 'cat /proc/sys/kernel/shmmni /proc/sys/fs/mqueue/msg_max /proc/sys/kernel/domainname /proc/sys/net/ipv4/ip_forward'
  crun_
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 4000 ]
  [ "${lines[1]}" = 20 ]
  [ "${lines[2]}" = sysctl.test ]
  [ "${lines[3]}" = 1 ]
  cfg '.linux.sysctl={"kernel.hostname":"x"}'
  crun_
  [ "$status" -ne 0 ]
  [[ "$output" == *'linux.sysctl."kernel.hostname": conflicts with the "hostname" field'* ]]
}

@test "sysctl: keys with '..' or empty names are refused; sysctl(8)'s '/' form works" {
  local k
  for k in 'net.ipv4..ip_forward' 'net.ipv4.' '.net.ipv4' 'net.ipv4.conf.all/../../../../kernel.core_pattern' 'net/ipv4/../../kernel/core_pattern' 'net.ipv4.//.//.kernel.core_pattern' 'net.ipv4.conf./.forwarding'; do
    cfg ".linux.sysctl={$(jq -Rn --arg k "$k" '$k'):\"1\"}"
    crun_
    [ "$status" -ne 0 ]
    [[ "$output" == *"linux.sysctl.\"$k\": invalid key"* ]]
  done
  no_state_left
  # '/' as the separator (then '.' is part of a name, as in eth0.100)
  cfg '.linux.sysctl={"net/ipv4/ip_forward":"1","net/ipv4/conf/lo/forwarding":"1"}'
  cmd cat /proc/sys/net/ipv4/ip_forward /proc/sys/net/ipv4/conf/lo/forwarding
  crun_
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 1 ]
  [ "${lines[1]}" = 1 ]
}

@test "sysctl: a /proc that is not procfs cannot steer the write (symlink out of /proc/sys)" {
  # The rootfs brings its own /proc/sys/net/ipv4/ip_forward: a symlink to a
  # host file bind-mounted into the container.
  local hostdir=$BATS_TEST_TMPDIR/hostdir
  mkdir -p "$hostdir" "$BUNDLE/rootfs/proc/sys/net/ipv4" "$BUNDLE/rootfs/mnt/host"
  : > "$hostdir/victim"
  ln -s /mnt/host/victim "$BUNDLE/rootfs/proc/sys/net/ipv4/ip_forward"
  cfg ".mounts |= map(select(.destination != \"/proc\")) | .mounts += [{\"destination\":\"/mnt/host\",\"type\":\"bind\",\"source\":\"$hostdir\",\"options\":[\"rbind\",\"rw\"]}] | .linux.maskedPaths=[] | .linux.readonlyPaths=[] | .linux.sysctl={\"net.ipv4.ip_forward\":\"pwned\"}"
  crun_
  [ "$status" -ne 0 ]
  [[ "$output" == *"/proc/sys is not procfs"* ]]
  [ ! -s "$hostdir/victim" ]
  no_state_left
}

@test "hooks: a failing startContainer hook fails start, the container is stopped" {
  local id log=$BATS_TEST_TMPDIR/poststart
  id=$(cid)
  cfg ".hooks={\"startContainer\":[{\"path\":\"/bin/false\"}],\"poststart\":[{\"path\":\"/bin/touch\",\"args\":[\"touch\",\"$log\"]}]}"
  cmd sleep 100
  rt create -b "$BUNDLE" "$id"
  run rt start "$id"
  [ "$status" -ne 0 ]
  [[ "$output" == *"startContainer hook 0"* ]]
  [ "$(rt state "$id" | jq -r .status)" = stopped ]
  [ ! -e "$log" ]
  rt delete "$id"
  # run reports it too and leaves nothing behind
  run rt run -b "$BUNDLE" "$(cid r)"
  [ "$status" -ne 0 ]
  [[ "$output" == *"startContainer hook 0"* ]]
  no_state_left
}

@test "hooks: start returns once a passing startContainer hook has run and the program exec'd" {
  local id
  id=$(cid)
  cfg '.hooks={"startContainer":[{"path":"/bin/sh","args":["sh","-c","echo hooked > /dev/shm/mark"]}]}'
  cmd sh -c 'cat /dev/shm/mark; sleep 100'
  rt create -b "$BUNDLE" "$id"
  rt start "$id"
  [ "$(rt state "$id" | jq -r .status)" = running ]
  # the program exec'd: the init's comm is no longer the runtime's
  [ "$(cat /proc/"$(rt state "$id" | jq -r .pid)"/comm)" != sandlock-oci ]
  rt delete -f "$id"
}

@test "seccomp: an errnoRet that does not fit SECCOMP_RET_DATA is refused, not a fake success" {
  # 65536 & 0xffff is 0: mkdir would "succeed" without making anything.
  cfg '.linux.seccomp={"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["mkdir","mkdirat"],"action":"SCMP_ACT_ERRNO","errnoRet":65536}]}'
  cmd sh -c 'mkdir /dev/shm/d && test -d /dev/shm/d && echo made'
  crun_
  [ "$status" -ne 0 ]
  [[ "$output" == *"linux.seccomp.syscalls[0].errnoRet: 65536 is out of range for SCMP_ACT_ERRNO (0..4094)"* ]]
  cfg '.linux.seccomp.syscalls[0].errnoRet=4094'
  crun_
  [[ "$output" == *"Unknown error 4094"* ]]
  no_state_left
}

@test "container id: longer than a directory name (NAME_MAX) is refused up front; 255 works" {
  local long
  long=$(printf 'a%.0s' $(seq 1024))
  run rt create -b "$BUNDLE" "$long"
  [ "$status" -ne 0 ]
  [[ "$output" == *'invalid container id "aaaa'*'(1 to 255 characters, got 1024)'* ]]
  run rt create -b "$BUNDLE" "${long:0:256}"
  [[ "$output" == *"(1 to 255 characters, got 256)"* ]]
  no_state_left
  run rt run -b "$BUNDLE" "${long:0:255}"
  [ "$status" -eq 0 ]
  no_state_left
}

@test "root.path that is the host's root is refused at once (no endless v1 cgroup mounting)" {
  local before after
  before=$(wc -l < /proc/self/mountinfo)
  cfg '.root.path="/"'
  # run blocks and forwards SIGTERM: only SIGKILL bounds a runtime that
  # loops (its child dies with it, PR_SET_PDEATHSIG).
  run timeout -s KILL 20 "$SANDLOCK_OCI" --root "$ROOT" run -b "$BUNDLE" "$(cid)"
  [ "$status" -ne 137 ]
  [ "$status" -ne 0 ]
  [[ "$output" == *"root.path \`/\` is the host's root directory"* ]]
  # a symlink to / is the same directory
  ln -s / "$BUNDLE/hostroot"
  cfg '.root.path="hostroot"'
  run timeout -s KILL 20 "$SANDLOCK_OCI" --root "$ROOT" run -b "$BUNDLE" "$(cid s)"
  [ "$status" -ne 137 ]
  [[ "$output" == *"is the host's root directory"* ]]
  no_state_left
  after=$(wc -l < /proc/self/mountinfo)
  [ "$before" = "$after" ]
}

@test "linux.personality: LINUX32 is applied; an unknown domain or a flag is refused" {
  local id
  cfg '.linux.personality={"domain":"LINUX32"}'
  cmd uname -m
  crun_
  [ "$status" -eq 0 ]
  [[ "$output" == i?86 ]]
  # and so does a process exec'd into the container
  id=$(cid e)
  cmd sleep 300
  rt run -d -b "$BUNDLE" "$id"
  run rt exec "$id" uname -m
  [[ "$output" == i?86 ]]
  rt delete -f "$id"
  cmd uname -m
  cfg '.linux.personality={"domain":"LINUX"}'
  crun_
  [ "$output" = "$(uname -m)" ]
  cfg '.linux.personality={"domain":"BSD"}'
  crun_
  [ "$status" -ne 0 ]
  [[ "$output" == *'linux.personality.domain: unknown "BSD" (LINUX or LINUX32)'* ]]
  cfg '.linux.personality={"domain":"LINUX","flags":["ADDR_NO_RANDOMIZE"]}'
  crun_
  [ "$status" -ne 0 ]
  [[ "$output" == *'linux.personality.flags[0]: "ADDR_NO_RANDOMIZE" is not supported'* ]]
  no_state_left
}

@test "linux.intelRdt.closID that is a path is refused" {
  local clos
  for clos in .. . ../../sys/fs/resctrl a/b; do
    cfg ".linux.intelRdt={\"closID\":\"$clos\"}"
    crun_
    [ "$status" -ne 0 ]
    [[ "$output" == *"linux.intelRdt.closID: invalid \"$clos\": a name, not a path"* ]]
  done
  no_state_left
}

@test "process.rlimits: a tiny RLIMIT_NOFILE applies after the runtime's own setup" {
  local n
  for n in 0 3; do
    cfg ".process.rlimits=[{\"type\":\"RLIMIT_NOFILE\",\"soft\":$n,\"hard\":$n}]"
    cmd sh -c 'ulimit -n'
    crun_
    [ "$status" -eq 0 ]
    [ "$output" = "$n" ]
  done
  # what then cannot work says which limit broke it
  cfg '.hooks={"startContainer":[{"path":"/bin/true"}]}'
  crun_
  [ "$status" -ne 0 ]
  [[ "$output" == *"startContainer hook 0: pipe: Too many open files"* ]]
}

@test "exec: a tiny RLIMIT_NOFILE in process.json applies after the runtime's own setup" {
  local id
  id=$(cid)
  cmd sleep 300
  rt run -d -b "$BUNDLE" "$id"
  jq -n '{"args":["sh","-c","ulimit -n"],"cwd":"/","env":["PATH=/bin"],"user":{"uid":0,"gid":0},"rlimits":[{"type":"RLIMIT_NOFILE","soft":3,"hard":3}]}' > "$BATS_TEST_TMPDIR/p.json"
  run rt exec --process "$BATS_TEST_TMPDIR/p.json" "$id"
  [ "$status" -eq 0 ]
  [ "$output" = 3 ]
}
