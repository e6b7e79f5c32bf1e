#!/usr/bin/env bats
# Each config.json field, with its effect asserted from inside the container.
load ../lib/common

setup_file() { common_setup_file; }
setup() { require_root; common_setup; }
teardown() { common_teardown; }

crun_() { run rt run -b "$BUNDLE" "$(cid)"; }

@test "process.user uid/gid/additionalGids and umask" {
  cfg '.process.user={"uid":1000,"gid":1000,"additionalGids":[5,65534],"umask":63}'
  cmd sh -c 'id -u; id -g; id -G; umask'
  crun_
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 1000 ]
  [ "${lines[1]}" = 1000 ]
  [[ "${lines[2]}" == *5* && "${lines[2]}" == *65534* ]]
  [ "${lines[3]}" = 0077 ]
}

@test "process.env and process.cwd" {
  cfg '.process.env=["FOO=bar baz","PATH=/bin"] | .process.cwd="/etc"'
  cmd sh -c 'echo "$FOO"; pwd'
  crun_
  [ "${lines[0]}" = "bar baz" ]
  [ "${lines[1]}" = /etc ]
  cfg '.process.cwd="relative"'
  crun_
  [ "$status" -eq 1 ]
  [[ "$output" == *"process.cwd: must be an absolute path"* ]]
}

@test "process.rlimits are applied; a bad one is named" {
  cfg '.process.rlimits=[{"type":"RLIMIT_NOFILE","soft":123,"hard":456},{"type":"RLIMIT_CORE","soft":0,"hard":0}]'
  cmd sh -c 'ulimit -n; ulimit -Hn; ulimit -c'
  crun_
  [ "${lines[0]}" = 123 ]
  [ "${lines[1]}" = 456 ]
  [ "${lines[2]}" = 0 ]
  cfg '.process.rlimits=[{"type":"RLIMIT_NOFILE","soft":30000,"hard":30000}]'
  crun_
  [ "$status" -eq 1 ]
  [[ "$output" == *"RLIMIT_NOFILE"* ]]
  cfg '.process.rlimits=[{"type":"RLIMIT_BOGUS","soft":1,"hard":1}]'
  crun_
  [[ "$output" == *'process.rlimits[0].type: unknown "RLIMIT_BOGUS"'* ]]
}

@test "process.noNewPrivileges and capabilities are visible in /proc/self/status" {
  cfg '.process.noNewPrivileges=true | .process.capabilities={"bounding":["CAP_KILL","CAP_CHOWN"],"effective":["CAP_KILL"],"permitted":["CAP_KILL"]}'
  cmd grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs):' /proc/self/status
  crun_
  [[ "$output" == *"CapEff:	0000000000000020"* ]]
  [[ "$output" == *"CapPrm:	0000000000000020"* ]]
  [[ "$output" == *"CapBnd:	0000000000000021"* ]]
  [[ "$output" == *"NoNewPrivs:	1"* ]]
  cfg '.process.noNewPrivileges=false'
  crun_
  [[ "$output" == *"NoNewPrivs:	0"* ]]
}

@test "process.oomScoreAdj" {
  cfg '.process.oomScoreAdj=500'
  cmd cat /proc/self/oom_score_adj
  crun_
  [ "$output" = 500 ]
}

@test "hostname and domainname need and use a uts namespace" {
  cfg '.hostname="box1" | .domainname="example.test"'
  cmd sh -c 'hostname; cat /proc/sys/kernel/domainname'
  crun_
  [ "${lines[0]}" = box1 ]
  [ "${lines[1]}" = example.test ]
  cfg '.linux.namespaces |= map(select(.type != "uts"))'
  crun_
  [ "$status" -eq 1 ]
  [[ "$output" == *'needs a new "uts" namespace'* ]]
}

@test "root.readonly refuses writes; root.path may be absolute" {
  cfg ".root.readonly=true | .root.path=\"$BUNDLE/rootfs\""
  cmd sh -c 'touch /x 2>&1; echo rc=$?'
  crun_
  [[ "$output" == *"Read-only file system"* ]]
  [[ "$output" == *"rc=1"* ]]
}

@test "bind mounts: rw, ro (refuses writes), a file, relative source" {
  mkdir -p "$BATS_TEST_TMPDIR/rw" "$BATS_TEST_TMPDIR/ro"
  echo file-content > "$BATS_TEST_TMPDIR/f"
  echo in-bundle > "$BUNDLE/rel.txt"
  cfg ".mounts += [
    {\"destination\":\"/mnt/rw\",\"type\":\"bind\",\"source\":\"$BATS_TEST_TMPDIR/rw\",\"options\":[\"rbind\",\"rw\"]},
    {\"destination\":\"/mnt/ro\",\"type\":\"bind\",\"source\":\"$BATS_TEST_TMPDIR/ro\",\"options\":[\"bind\",\"ro\",\"nosuid\"]},
    {\"destination\":\"/new/dir/f\",\"type\":\"bind\",\"source\":\"$BATS_TEST_TMPDIR/f\",\"options\":[\"bind\",\"ro\"]},
    {\"destination\":\"/rel.txt\",\"source\":\"rel.txt\",\"options\":[\"bind\"]}]"
  cmd sh -c 'echo w > /mnt/rw/x && echo rw-ok; (echo w > /mnt/ro/x) 2>/dev/null || echo ro-refused; cat /new/dir/f; cat /rel.txt; grep " /mnt/ro " /proc/self/mountinfo'
  crun_
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = rw-ok ]
  [ "${lines[1]}" = ro-refused ]
  [ "${lines[2]}" = file-content ]
  [ "${lines[3]}" = in-bundle ]
  [[ "${lines[4]}" == *" ro,nosuid"* ]]
  [ "$(cat "$BATS_TEST_TMPDIR/rw/x")" = w ]
}

@test "a symlink in the rootfs cannot point a mount outside it" {
  mkdir -p "$BATS_TEST_TMPDIR/outside" "$BATS_TEST_TMPDIR/src"
  ln -s "$BATS_TEST_TMPDIR/outside" "$BUNDLE/rootfs/escape"
  cfg ".mounts += [{\"destination\":\"/escape/m\",\"type\":\"tmpfs\",\"source\":\"tmpfs\",\"options\":[]}]"
  cmd true
  crun_
  # resolved inside the root: the host directory stays untouched
  [ ! -e "$BATS_TEST_TMPDIR/outside/m" ]
  ! grep -q "$BATS_TEST_TMPDIR/outside" /proc/self/mountinfo || false
}

@test "tmpfs with options, proc, sysfs read-only, mqueue, devpts" {
  cfg '.mounts += [{"destination":"/scratch","type":"tmpfs","source":"tmpfs","options":["size=1m","mode=700"]}]'
  cmd sh -c 'stat -c %a /scratch; grep " /scratch " /proc/self/mountinfo; grep -E "^[0-9]+ [0-9]+ [0-9:]+ / /sys " /proc/self/mountinfo; ls -d /proc/1; grep -c " /dev/mqueue \| /dev/pts " /proc/self/mountinfo'
  crun_
  [ "${lines[0]}" = 700 ]
  [[ "${lines[1]}" == *"size=1024k"* ]]
  [[ "${lines[2]}" == *" ro,"* ]]
  [ "${lines[3]}" = /proc/1 ]
  [ "${lines[4]}" = 2 ]
}

@test "maskedPaths read empty; readonlyPaths refuse writes" {
  cfg '.root.readonly=false | .linux.maskedPaths=["/proc/kcore","/proc/acpi","/etc/secret"] | .linux.readonlyPaths=["/proc/sys","/etc/ro"]'
  echo top > "$BUNDLE/rootfs/etc/secret"
  mkdir -p "$BUNDLE/rootfs/etc/ro"
  cmd sh -c 'wc -c < /etc/secret; ls /proc/acpi | wc -l; touch /etc/ro/x 2>/dev/null || echo ro-refused; (echo 1 > /proc/sys/kernel/ns_last_pid) 2>/dev/null || echo sys-refused'
  crun_
  [ "${lines[0]}" = 0 ]
  [ "${lines[1]}" = 0 ]
  [ "${lines[2]}" = ro-refused ]
  [ "${lines[3]}" = sys-refused ]
}

@test "default devices exist and work; linux.devices adds one" {
  cfg '.linux.devices=[{"path":"/dev/mynull","type":"c","major":1,"minor":3,"fileMode":438,"uid":0,"gid":0}]'
  cmd sh -c 'for d in null zero full random urandom tty mynull; do [ -c /dev/$d ] && echo $d; done; echo x > /dev/null && echo null-ok; head -c 4 /dev/zero | wc -c; readlink /dev/fd; readlink /dev/ptmx'
  crun_
  [ "$status" -eq 0 ]
  for d in null zero full random urandom tty mynull; do [[ "$output" == *"$d"* ]]; done
  [[ "$output" == *null-ok* ]]
  [[ "$output" == *"/proc/self/fd"* ]]
  [[ "$output" == *"pts/ptmx"* ]]
}

@test "linux.sysctl is written; a bad key is named" {
  cfg '.linux.sysctl={"net.ipv4.ip_forward":"1","kernel.shmmax":"12345678"}'
  cmd sh -c 'cat /proc/sys/net/ipv4/ip_forward /proc/sys/kernel/shmmax'
  crun_
  [ "${lines[0]}" = 1 ]
  [ "${lines[1]}" = 12345678 ]
  cfg '.linux.sysctl={"kernel.no_such_sysctl":"1"}'
  crun_
  [ "$status" -eq 1 ]
  [[ "$output" == *"kernel.no_such_sysctl"* ]]
}

@test "namespaces: pid (init is 1), network (only lo), ipc, joining by path" {
  cmd sh -c 'echo $$; ls /sys/class/net | tr "\n" " "'
  crun_
  [ "${lines[0]}" = 1 ]
  [ "${lines[1]}" = "lo " ]
  # join the network namespace of a running container by path
  id=$(cid holder)
  cmd sleep 30
  rt run -d -b "$BUNDLE" "$id"
  pid=$(rt state "$id" | jq -r .pid)
  b2=$BATS_TEST_TMPDIR/b2; make_bundle "$b2" sh -c 'readlink /proc/self/ns/net'
  cfg_in "$b2" ".linux.namespaces |= map(if .type==\"network\" then .path=\"/proc/$pid/ns/net\" else . end)"
  run rt run -b "$b2" "$(cid joiner)"
  [ "$output" = "$(readlink /proc/$pid/ns/net)" ]
  cfg '.linux.namespaces += [{"type":"bogus"}]'
  crun_
  [[ "$output" == *'unknown namespace "bogus"'* ]]
}

@test "user namespace with uid/gid mappings" {
  [ -e /proc/self/ns/user ] || skip "no user namespaces"
  chown -R 100000:100000 "$BUNDLE/rootfs"
  # the mapped root must be able to reach the rootfs: bats makes 0700 dirs
  d=$BUNDLE; while [ "$d" != / ]; do chmod o+x "$d"; d=$(dirname "$d"); done
  cfg '.linux.namespaces += [{"type":"user"}] | .linux.uidMappings=[{"containerID":0,"hostID":100000,"size":65536}] | .linux.gidMappings=[{"containerID":0,"hostID":100000,"size":65536}]'
  cmd sh -c 'id -u; cat /proc/self/uid_map'
  crun_
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 0 ]
  [[ "${lines[1]}" == *"100000"*"65536"* ]]
}

@test "time namespace offsets" {
  [ -e /proc/self/ns/time ] || skip "no time namespaces"
  cfg '.linux.namespaces += [{"type":"time"}] | .linux.timeOffsets={"monotonic":{"secs":864000,"nanosecs":0},"boottime":{"secs":864000,"nanosecs":0}}'
  cmd cat /proc/uptime
  crun_
  [ "$status" -eq 0 ]
  up=${output%%.*}
  [ "$up" -ge 864000 ]
}

@test "hooks: each kind runs with the state on stdin; a failing prestart aborts create" {
  log=$BATS_TEST_TMPDIR/hooks
  cat > "$BATS_TEST_TMPDIR/hook.sh" <<EOS
#!/bin/sh
echo "\$1 \$(cat)" >> $log
EOS
  chmod +x "$BATS_TEST_TMPDIR/hook.sh"
  h="$BATS_TEST_TMPDIR/hook.sh"
  mkdir -p "$BUNDLE/rootfs$(dirname "$h")"; cp "$h" "$BUNDLE/rootfs$h"
  # startContainer runs inside the container: it needs its own log path there
  cfg ".hooks={
    \"prestart\":[{\"path\":\"$h\",\"args\":[\"hook\",\"prestart\"]}],
    \"createRuntime\":[{\"path\":\"$h\",\"args\":[\"hook\",\"createRuntime\"]}],
    \"createContainer\":[{\"path\":\"$h\",\"args\":[\"hook\",\"createContainer\"]}],
    \"poststart\":[{\"path\":\"$h\",\"args\":[\"hook\",\"poststart\"]}],
    \"poststop\":[{\"path\":\"$h\",\"args\":[\"hook\",\"poststop\"]}]}"
  id=$(cid)
  cmd true
  rt run -b "$BUNDLE" "$id"
  for k in prestart createRuntime createContainer poststart poststop; do
    line=$(grep "^$k " "$log")
    echo "${line#* }" | jq -e ".id == \"$id\" and .bundle == \"$BUNDLE\""
  done
  # order
  [ "$(cut -d' ' -f1 "$log" | tr '\n' ' ')" = "prestart createRuntime createContainer poststart poststop " ]
  # a failing prestart hook fails create and leaves nothing
  cfg '.hooks={"prestart":[{"path":"/bin/false"}]}'
  run rt create -b "$BUNDLE" "$(cid f)"
  [ "$status" -eq 1 ]
  [[ "$output" == *"prestart hook 0"* ]]
  [ -z "$(ls "$ROOT")" ]
  # a hook timeout is enforced
  cfg '.hooks={"createRuntime":[{"path":"/bin/sleep","args":["sleep","30"],"timeout":1}]}'
  SECONDS=0
  run rt create -b "$BUNDLE" "$(cid t)"
  [ "$status" -eq 1 ]
  [[ "$output" == *"timed out after 1s"* ]]
  [ "$SECONDS" -lt 10 ]
}

@test "console socket: the pty master arrives over SCM_RIGHTS with consoleSize" {
  sock=$BATS_TEST_TMPDIR/console.sock
  cfg '.process.terminal=true | .process.consoleSize={"height":33,"width":101}'
  cmd sh -c 'tty; stty size; [ -t 0 ] && echo isatty'
  "$SANDLOCK_HELPERS/recvtty" "$sock" > "$BATS_TEST_TMPDIR/tty.out" &
  rpid=$!
  until [ -S "$sock" ]; do sleep 0.02; done
  id=$(cid)
  rt create -b "$BUNDLE" --console-socket "$sock" "$id"
  rt start "$id"
  wait $rpid
  out=$(tr -d '\r' < "$BATS_TEST_TMPDIR/tty.out")
  [[ "$out" == *"winsize 33x101"* ]]
  [[ "$out" == *"/dev/pts/"* ]]
  [[ "$out" == *"33 101"* ]]
  [[ "$out" == *isatty* ]]
  # without a console socket, create refuses a terminal container
  run rt create -b "$BUNDLE" "$(cid b)"
  [ "$status" -eq 1 ]
  [[ "$output" == *"--console-socket"* ]]
}

@test "--preserve-fds passes fds 3.. to the container" {
  cmd sh -c 'cat <&3; cat <&4'
  echo three > "$BATS_TEST_TMPDIR/3"; echo four > "$BATS_TEST_TMPDIR/4"
  run rt run -b "$BUNDLE" --preserve-fds 2 "$(cid)" 3<"$BATS_TEST_TMPDIR/3" 4<"$BATS_TEST_TMPDIR/4"
  [ "${lines[0]}" = three ]
  [ "${lines[1]}" = four ]
  # not preserved: fd 3 is closed
  cmd sh -c 'cat <&3 || echo closed'
  run rt run -b "$BUNDLE" "$(cid b)" 3<"$BATS_TEST_TMPDIR/3"
  [[ "$output" == *closed* ]]
}

@test "--no-pivot uses chroot and still runs" {
  cmd sh -c 'ls / | head -3'
  run rt run --no-pivot -b "$BUNDLE" "$(cid)"
  [ "$status" -eq 0 ]
  [[ "$output" == *bin* ]]
}

@test "cgroups: memory and pids limits are visible from inside and on the host" {
  # the default spec has a cgroup namespace and a /sys/fs/cgroup mount
  cfg '.linux.resources={"memory":{"limit":67108864},"pids":{"limit":42},"cpu":{"quota":50000,"period":100000}}'
  cmd sh -c 'cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max; cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max'
  id=$(cid)
  run rt run -b "$BUNDLE" "$id"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 67108864 ]
  [ "${lines[1]}" = 42 ]
  # gone from the host when the container is
  ! ls -d /sys/fs/cgroup/*/sandlock-oci/"$id" 2>/dev/null || false
}

@test "cgroupsPath is honoured" {
  cfg '.linux.cgroupsPath="/sandlock-test/mygroup" | .linux.resources={"pids":{"limit":17}}'
  cmd sleep 30
  id=$(cid)
  rt run -d -b "$BUNDLE" "$id"
  pid=$(rt state "$id" | jq -r .pid)
  if [ -d /sys/fs/cgroup/pids ]; then f=/sys/fs/cgroup/pids/sandlock-test/mygroup; else f=/sys/fs/cgroup/sandlock-test/mygroup; fi
  [ "$(cat $f/pids.max)" = 17 ]
  grep -qx "$pid" $f/cgroup.procs
  rt delete -f "$id"
  [ ! -d "$f" ]
  rmdir /sys/fs/cgroup/*/sandlock-test 2>/dev/null || true
}

@test "the podman and containerd sample configs run with only host paths rewritten" {
  for f in podman containerd; do
    s="$SANDLOCK_TESTS_DIR/fixtures/samples/$f-config.json"
    d=$BATS_TEST_TMPDIR/$f
    mkdir -p "$d/ud"
    # host files the engine would have made for the bind mounts
    for m in hostname resolv.conf hosts .containerenv; do echo "$m" > "$d/ud/$m"; done
    mkdir -p "$d/ud/shm"
    # a network namespace where podman's netns file would be
    touch "$d/netns"
    unshare --net="$d/netns" true
    jq --arg r "$BUNDLE/rootfs" --arg ud "$d/ud" --arg ns "$d/netns" '
      .root.path = $r
      | .mounts |= map(if .type == "bind" then .source = ($ud + "/" + (.source | split("/") | last)) else . end)
      | .linux.namespaces |= map(if .path then .path = $ns else . end)
      | .process.args = ["sh", "-c", "echo hello-accept; grep -E \"^(Seccomp|NoNewPrivs):\" /proc/self/status"]' "$s" > "$d/config.json"
    run rt run -b "$d" "$(cid $f)"
    umount "$d/netns" 2>/dev/null || true
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = hello-accept ]
    [[ "$output" == *"Seccomp:	2"* ]]
  done
  rmdir /sys/fs/cgroup/*/libpod_parent 2>/dev/null || true
}

@test "CAP_SYS_ADMIN with Landlock on: create warns that mounting needs disable=fs" {
  cfg '.process.capabilities.effective += ["CAP_SYS_ADMIN"] | .process.capabilities.permitted += ["CAP_SYS_ADMIN"] | .process.capabilities.bounding += ["CAP_SYS_ADMIN"]'
  cfg '.mounts += [{"destination":"/mnt","type":"tmpfs","source":"tmpfs","options":[]}]'
  cmd sh -c 'mount -t tmpfs none /mnt 2>&1; echo rc=$?'
  run rt run -b "$BUNDLE" "$(cid)"
  [[ "$output" == *"run.oci.sandlock.disable=fs"* ]]
  [[ "$output" == *"rc=1"* || "$output" == *"rc=255"* ]]
  # with --log (engines) the warning goes only there, as runc's do: the
  # containerd shim hands the container's stdio to the runtime
  run rt --log "$BATS_TEST_TMPDIR/log" --log-format json run -b "$BUNDLE" "$(cid l)"
  [[ "$output" != *"disable=fs"* ]]
  jq -e 'select(.level == "warning") | .msg | test("disable=fs")' "$BATS_TEST_TMPDIR/log"
  # with fs disabled the mount works and there is no warning
  cfg '.annotations={"run.oci.sandlock.disable":"fs"}'
  run rt run -b "$BUNDLE" "$(cid b)"
  [[ "$output" != *"disable=fs"* ]]
  [[ "$output" == *"rc=0"* ]]
}
