#!/usr/bin/env bats
# Hostile review of the namespace-less mode (docs/nsless.md "Threat
# model"): each test performs an attack as an ordinary user with user
# namespaces unavailable (tests/lib/nsless.bash) and checks it is refused.
load ../lib/common
load ../lib/nsless
bats_require_minimum_version 1.5.0

setup() {
  nsless_setup
  printf 'HOST-SECRET\n' > "$D/secret"
  chown nobody "$D/secret"
}

teardown() { nsless_teardown; }

# A listening unix socket at $1 the container's user may connect to.
host_listener() {
  python3 -c "
import socket, os, sys
s = socket.socket(socket.AF_UNIX); s.bind('$1'); os.chmod('$1', 0o777); s.listen(8)
sys.stdout.close()
while True: s.accept()[0].close()" &
  LISTENER=$!
  for _ in $(seq 50); do [ -S "$1" ] && break; read -rt 0.1 <> <(:) || true; done
}

@test "nsless red: a seccomp listener of the container's own cannot CONTINUE past the view" {
  host_listener "$D/host.sock"
  # Control: the same user outside reaches the socket.
  su nobody -s /bin/sh -c "$SANDLOCK_HELPERS/sysc uconnect $D/host.sock" | grep -q OK
  args sh -c "redprobe nested-connect $D/host.sock; redprobe nested-open /proc/1/cmdline; redprobe listener"
  run --separate-stderr as_user run r1
  echo "$output"; echo "$stderr"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" != OK ]      # the host socket by its host path
  [ "${lines[1]}" != OK ]      # a host pid's /proc
  [ "${lines[2]}" = EBUSY ]    # the kernel: one listener per filter chain
}

@test "nsless red: a read-only path's fd is not reopened for writing through /proc/self/fd" {
  mkdir -p "$D/bundle/rootfs/ro"
  printf 'keep\n' > "$D/bundle/rootfs/ro/f"
  chown -R nobody "$D/bundle/rootfs/ro"
  jqc '.linux.readonlyPaths += ["/ro"]'
  args sh -c 'echo y >> /ro/f; redprobe reopen-write /ro/f
    exec 3</ro/f 4</ro; echo y >> /proc/self/fd/3; echo y >> /proc/self/fd/4/f
    echo y >> /proc/$$/fd/3; sysc truncate /proc/self/fd/3; cat /ro/f'
  run --separate-stderr as_user run r2
  echo "$output"; echo "$stderr"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = EROFS ]
  [ "${lines[1]}" != OK ]   # truncate(2) of the link
  [ "${lines[2]}" = keep ]
  [ "$(cat "$D/bundle/rootfs/ro/f")" = keep ]
}

@test "nsless red: renaming a directory does not carry masked or read-only paths out from under their names" {
  mkdir -p "$D/bundle/rootfs/data/m" "$D/bundle/rootfs/data/ro" "$D/bundle/rootfs/other"
  printf 'MASKED\n' > "$D/bundle/rootfs/data/m/s"
  printf 'keep\n' > "$D/bundle/rootfs/data/ro/f"
  chown -R nobody "$D/bundle/rootfs/data" "$D/bundle/rootfs/other"
  jqc '.linux.maskedPaths += ["/data/m"] | .linux.readonlyPaths += ["/data/ro"]'
  args sh -c 'redprobe exchange /data /other; cat /other/m/s; echo y >> /other/ro/f
    sysc rename /data /d2; cat /d2/m/s; echo y >> /d2/ro/f
    cat /data/m/s; echo y >> /data/ro/f; mv /data/ro /data/x; echo done'
  run --separate-stderr as_user run r3
  echo "$output"; echo "$stderr"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = EBUSY ]
  [ "${lines[1]}" = EBUSY ]
  [[ "$output" != *MASKED* ]]
  [ "$(cat "$D/bundle/rootfs/data/ro/f")" = keep ]
  [[ "$output" == *done* ]]
}

# TCP and UDP listeners on the host's loopback; their ports in $TPORT, $UPORT.
host_inet() {
  python3 -c "
import socket, sys, time
t = socket.socket(); t.bind(('127.0.0.1', 0)); t.listen(8)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(('127.0.0.1', 0))
open('$D/ports.tmp', 'w').write('%d %d\n' % (t.getsockname()[1], u.getsockname()[1]))
__import__('os').rename('$D/ports.tmp', '$D/ports')
sys.stdout.close()
time.sleep(120)" &
  LISTENER=$!
  for _ in $(seq 50); do [ -s "$D/ports" ] && break; read -rt 0.1 <> <(:) || true; done
  read -r TPORT UPORT < "$D/ports"
}

@test "nsless red: the network namespace config.json asks for keeps the host's loopback closed" {
  host_inet
  # Controls: the same user outside reaches both.
  [ "$(su nobody -s /bin/sh -c "$SANDLOCK_HELPERS/sysc connect $TPORT")" = OK ]
  [ "$(su nobody -s /bin/sh -c "$SANDLOCK_HELPERS/redprobe udp $UPORT")" = OK ]
  jq -e '.linux.namespaces[] | select(.type == "network")' "$D/bundle/config.json"
  args sh -c "sysc connect $TPORT; redprobe udp $UPORT; redprobe tfo $TPORT; sysc bind 0; sysc uconnect @nothing-$$; redprobe listen-auto; sysc ulisten @red-$$ & sleep 0.2; sysc uconnect @red-$$"
  run --separate-stderr as_user run r4
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = EACCES ]   # TCP
  [ "${lines[1]}" = EACCES ]   # UDP
  [ "${lines[2]}" = EACCES ]   # TCP Fast Open
  [ "${lines[3]}" = EACCES ]   # a TCP port on the host
  [ "${lines[4]}" = ECONNREFUSED ]   # unix sockets are the view's business
  [ "${lines[5]}" = EACCES ]   # listen(2) would bind a host port
  [[ "$output" == *READY* ]]   # a unix socket listens (on-behalf)
  # Without a network namespace in config.json the host's network is what
  # was asked for.
  jqc 'del(.linux.namespaces[] | select(.type == "network"))'
  args sh -c "sysc connect $TPORT; redprobe udp $UPORT; redprobe listen-auto"
  run --separate-stderr as_user run r5
  echo "$output"
  [ "${lines[0]}" = OK ]
  [ "${lines[1]}" = OK ]
  [[ "${lines[2]}" == OK:* ]]
}

@test "nsless red: TCP Fast Open does not pass net_allow_connect" {
  host_inet
  jqc '.annotations["run.oci.sandlock.net_allow_connect"]="7"'
  args sh -c "sysc connect $TPORT; redprobe tfo $TPORT; sysc connect 7"
  run --separate-stderr as_user run r6
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = EACCES ]
  [ "${lines[1]}" = EACCES ]
  [ "${lines[2]}" = ECONNREFUSED ]   # the allowed port is reached
}

@test "nsless red: /proc/<pid>/maps, smaps, numa_maps name the view's paths, never the rootfs's host path" {
  args sh -c "cat /proc/self/maps; cat /proc/self/smaps /proc/\$\$/numa_maps /proc/\$\$/task/\$\$/maps | grep -c $D; grep -c ' /bin/busybox' /proc/\$\$/maps"
  run --separate-stderr as_user run r7
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" != *"$D"* ]]
  [ "${lines[-2]}" = 0 ]
  [ "${lines[-1]}" -ge 1 ]
  [[ "$output" == *"[stack]"* ]]
}

@test "nsless red: openat2 RESOLVE_BENEATH and RESOLVE_IN_ROOT keep a jail at its dirfd" {
  r=$D/bundle/rootfs
  mkdir -p "$r/srv/etc"; echo jail > "$r/srv/etc/passwd"
  ln -s /etc/passwd "$r/srv/abs"; ln -s ../etc/passwd "$r/srv/rel"
  chown -R nobody "$r/srv"
  cat > "$r/probe.sh" <<'EOS'
for p in ../etc/passwd /etc/passwd abs rel etc/passwd /proc/self/status; do
  echo "$p $(redprobe openat2 /srv $p 8) $(redprobe openat2 /srv $p 0x10)"
done
echo "$(redprobe openat2 /srv etc/passwd 0x18) $(redprobe openat2 /srv etc/passwd 0x40) $(redprobe openat2 /srv etc/passwd/ 0x10) $(redprobe openat2 /srv '' 8)"
echo "$(redprobe openat2 /srv etc/passwd 0 32+) $(redprobe openat2 /srv etc/passwd 0 9000) $(redprobe openat2 /srv etc/passwd 0 40)"
EOS
  args sh /probe.sh
  run --separate-stderr as_user run r8
  echo "$output"
  [ "$status" -eq 0 ]
  # BENEATH: out of the jail is EXDEV; IN_ROOT: resolved in the jail, or
  # EXDEV where a symlink leads out (docs/nsless.md) — never the root's.
  [ "${lines[0]}" = "../etc/passwd EXDEV OK:jail" ]
  [ "${lines[1]}" = "/etc/passwd EXDEV OK:jail" ]
  [ "${lines[2]}" = "abs EXDEV EXDEV" ]
  [ "${lines[3]}" = "rel EXDEV EXDEV" ]
  [ "${lines[4]}" = "etc/passwd OK:jail OK:jail" ]
  [ "${lines[5]}" = "/proc/self/status EXDEV ENOENT" ]
  # The kernel's answers to a bad open_how: both scopes, an unknown flag
  # (a file with a trailing slash, an empty path: as the kernel); a
  # larger struct with a non-zero tail, or past a page.
  [ "${lines[6]}" = "EINVAL EINVAL ENOTDIR ENOENT" ]
  [ "${lines[7]}" = "E2BIG E2BIG OK:jail" ]
  [[ "$output" != *root* ]]
}

@test "nsless red: a device node in the rootfs is not the host's device (as nobody and as root)" {
  # An image unpacked by root carries its device nodes (image/unpack.c);
  # c 1:11 is the host's /dev/kmsg, c 1:3 the default /dev/null.
  mknod -m 666 "$D/bundle/rootfs/kmsg" c 1 11
  mknod -m 666 "$D/bundle/rootfs/null2" c 1 3
  m=sandlock-red-$$-$RANDOM
  args sh -c "echo $m > /kmsg; echo \$?; echo x > /null2; echo \$?; ls -l /kmsg | cut -c1"
  run --separate-stderr as_user run r9
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 1 ]        # EPERM, as the device cgroup answers
  [ "${lines[1]}" = 0 ]        # a default device by its number
  [ "${lines[2]}" = c ]        # it is there, only not opened
  jqc '.process.user={uid:0,gid:0}'
  run --separate-stderr unshare -m --propagation private sh -c \
    "cd $D/bundle && $SANDLOCK_OCI --root $D/rootstate run --isolation landlock r10"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 1 ]
  [ "${lines[1]}" = 0 ]
  if dmesg >/dev/null 2>&1; then ! dmesg | grep -q "$m"; fi
}
