#!/usr/bin/env bats
# Namespace-less mode (docs/nsless.md): an ordinary user for whom the test
# itself makes user namespaces unavailable (tests/helpers/nouserns: a
# seccomp filter on unshare/clone(CLONE_NEWUSER), inherited by the runtime
# and everything it starts) runs busybox containers whose rootfs and mounts
# are a view drawn by the notify supervisor, confined by Landlock alone.
load ../lib/common
load ../lib/nsless
bats_require_minimum_version 1.5.0   # run --separate-stderr: create-time warnings are on stderr

setup() {
  nsless_setup
  printf 'HOST-SECRET\n' > "$D/secret"
  ln -s "$D" "$D/bundle/rootfs/abs"
  ln -s "../../../../../../../../../..$D" "$D/bundle/rootfs/rel"
  printf '#!/bin/sh -e\necho script-ran "$@" "$0"\n' > "$D/bundle/rootfs/bin/s.sh"
  cp "$D/bundle/rootfs/bin/s.sh" "$D/bundle/rootfs/usr/bin/long-script.sh"
  chmod 755 "$D/bundle/rootfs/bin/s.sh" "$D/bundle/rootfs/usr/bin/long-script.sh"
  chown -R nobody "$D/secret" "$D/bundle/rootfs/bin/s.sh" "$D/bundle/rootfs/usr/bin/long-script.sh"
}

teardown() { nsless_teardown; }

@test "nsless: auto picks the view when user namespaces are unavailable; busybox scripts run in it" {
  args sh -c 'echo hi; pwd; cd /bin; pwd; cd ..; cd ..; cd ..; pwd; id -u; head -1 /etc/passwd; echo x > /tmp/f && cat /tmp/f'
  run as_user --debug run n1
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"isolation: landlock"* ]]
  [[ "$output" == *$'hi\n/\n/bin\n/\n65534\nroot:x:0:0:root:/root:/bin/sh\nx'* ]]
  [ -f "$D/bundle/rootfs/tmp/f" ]   # the write landed in the rootfs
}

@test "nsless: state says which isolation; create, start, kill, delete" {
  args sleep 100
  as_user create n2 </dev/null >/dev/null 2>&1   # the init keeps stdio
  run as_user state n2
  [ "$(echo "$output" | jq -r '.annotations["run.oci.sandlock.isolation.effective"]')" = landlock ]
  [ "$(echo "$output" | jq -r .status)" = created ]
  as_user start n2 </dev/null >/dev/null 2>&1
  [ "$(as_user state n2 | jq -r .status)" = running ]
  # exec goes through the container's exec server (nsless_user.bats).
  run as_user exec n2 true
  [ "$status" -eq 0 ]
  as_user kill n2 KILL
  run as_user delete -f n2
  [ "$status" -eq 0 ]
  [ ! -d "$D/state/n2" ]
}

@test "nsless: state.json names the notify supervisor; delete leaves no supervisor behind" {
  args sleep 100
  as_user create n4 </dev/null >/dev/null 2>&1
  spid=$(jq -r '.supervisor_pid // 0' "$D/state/n4/state.json")
  ipid=$(jq -r .pid "$D/state/n4/state.json")
  [ "$spid" -gt 0 ]
  [ "$spid" != "$ipid" ]
  [ -d "/proc/$spid" ]
  # never the init's parent (the engine reaps the init)
  [ "$(awk '/^PPid:/{print $2}' "/proc/$ipid/status")" != "$spid" ]
  run as_user delete -f n4
  [ "$status" -eq 0 ]
  [ ! -d "/proc/$ipid" ] || [ "$(awk '/^State:/{print $2}' "/proc/$ipid/status")" = Z ]
  for _ in $(seq 50); do [ -d "/proc/$spid" ] || break; read -rt 0.1 <> <(:) || true; done
  [ ! -d "/proc/$spid" ] || [ "$(awk '/^State:/{print $2}' "/proc/$spid/status")" = Z ]
}

@test "nsless: the escape matrix fails or stays inside" {
  python3 -c "
import socket, os, sys
s = socket.socket(socket.AF_UNIX); s.bind('$D/host.sock'); os.chmod('$D/host.sock', 0o777); s.listen(8)
sys.stdout.close()
while True: s.accept()[0].close()" &
  LISTENER=$!
  for i in 1 2 3 4 5 6 7 8 9 10; do [ -S "$D/host.sock" ] && break; sleep 0.1; done
  # Controls: outside the container the same user reaches both.
  su nobody -s /bin/sh -c "cat $D/secret" | grep -q HOST-SECRET
  su nobody -s /bin/sh -c "$SANDLOCK_HELPERS/sysc uconnect $D/host.sock" | grep -q OK
  su nobody -s /bin/sh -c "cat /proc/keys" >/dev/null   # maskedPaths has it
  args sh -c "
    cat $D/secret && echo LEAK-absolute
    cat /abs/secret && echo LEAK-absolute-symlink
    cat /rel/secret && echo LEAK-relative-symlink
    cat /../../../..$D/secret && echo LEAK-dotdot
    cd /bin && cat ../../../..$D/secret && echo LEAK-relative-dotdot; cd /
    ls /proc/1/root/ >/dev/null && echo LEAK-proc-host-pid
    cat /proc/self/root$D/secret && echo LEAK-proc-self-root
    cat /proc/self/cwd/../../..$D/secret && echo LEAK-proc-self-cwd
    exec 7</etc/passwd; cat /proc/self/fd/7/../../..$D/secret && echo LEAK-proc-self-fd
    ln $D/secret /tmp/hl && echo LEAK-hardlink
    ln /abs/secret /tmp/hl2 && echo LEAK-hardlink-symlink
    sysc uconnect $D/host.sock | grep -q OK && echo LEAK-unix-socket
    sysc uconnect /abs/host.sock | grep -q OK && echo LEAK-unix-socket-symlink
    sysc open $D/secret r | grep -q OK && echo LEAK-raw-open
    ls /proc | grep -qx 1 && echo LEAK-host-pids
    cat /proc/keys >/dev/null && echo LEAK-masked-path
    echo done"
  run as_user run n3
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *done* ]]
  [[ "$output" != *LEAK* ]]
  [ ! -e "$D/hl" ]
  [ ! -e "$D/bundle/rootfs$D" ]
}

@test "nsless: exec family: #! scripts, /proc/self/exe, ls -l /proc/self/fd" {
  args sh -c '/usr/bin/long-script.sh a b; /bin/s.sh c; readlink /proc/self/exe; ls -l /proc/self/fd/ 2>/dev/null | grep -c -- "->"'
  run --separate-stderr as_user run n4
  echo "$output"
  [ "$status" -eq 0 ]
  # A path long enough runs the copy naming the view's interpreter; a
  # shorter one gets ENOEXEC and the shell runs it itself (docs/nsless.md).
  [ "${lines[0]}" = "script-ran a b /dev/fd/1021" ]
  [ "${lines[1]}" = "script-ran c /bin/s.sh" ]
  [ "${lines[2]}" = /bin/busybox ]
  [ "${lines[3]}" -ge 3 ]
}

@test "nsless: the same bundle sees the same tree in both modes" {
  args sh -c 'ls -lR /bin /etc /usr | md5sum; grep -E "^(NoNewPrivs|Seccomp):" /proc/self/status'
  jq '.process.user={uid:0,gid:0}' "$D/bundle/config.json" > "$D/c" && mv "$D/c" "$D/bundle/config.json"
  ns=$("$SANDLOCK_OCI" --root "$D/rs" run --isolation namespaces -b "$D/bundle" n5)
  ll=$("$SANDLOCK_OCI" --root "$D/rs" run --isolation landlock -b "$D/bundle" n6)
  echo "namespaces: $ns"; echo "landlock: $ll"
  [ "$ns" = "$ll" ]
}

@test "nsless: what needs privilege is refused, naming the field" {
  args true
  jq 'del(.hostname) | .mounts += [{"destination":"/n","type":"nfs","source":"x"}]' \
    "$D/bundle/config.json" > "$D/c" && mv "$D/c" "$D/bundle/config.json"
  chown nobody "$D/bundle/config.json"
  run as_user run n8
  [ "$status" -ne 0 ]
  [[ "$output" == *"mounts["*"].type"* ]]
  run as_user run --isolation bogus n9
  [ "$status" -ne 0 ]
  [[ "$output" == *"--isolation"* ]]
  # Landlock is the boundary of the view: it cannot be turned off here.
  jq '.mounts |= map(select(.type != "nfs"))
      | .annotations["run.oci.sandlock.disable"]="fs"' \
    "$D/bundle/config.json" > "$D/c" && mv "$D/c" "$D/bundle/config.json"
  chown nobody "$D/bundle/config.json"
  run as_user run n10
  [ "$status" -ne 0 ]
  [[ "$output" == *"namespace-less mode needs Landlock"* ]]
  [ -z "$(as_user list -q)" ]
}
