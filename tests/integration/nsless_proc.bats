#!/usr/bin/env bats
# /proc in the namespace-less view (docs/nsless.md "The view", "Threat
# model"): the mount table and the socket tables the container reads are
# drawn from the view, never the host's; as an ordinary user with user
# namespaces unavailable (tests/lib/nsless.bash) and as root with
# --isolation landlock.
load ../lib/common
load ../lib/nsless
bats_require_minimum_version 1.5.0

setup() {
  nsless_setup
  mkdir -p "$D/data"
  chown nobody "$D/data"
}

teardown() { nsless_teardown; }

# As root, namespace-less, in a private mount namespace of the test.
as_root() {
  unshare -m --propagation private sh -c \
    "cd $D/bundle && $SANDLOCK_OCI --root $D/rootstate $*"
}

MOUNTS_PROBE='cat /proc/self/mountinfo; echo ==; cat /proc/mounts; echo ==
cat /proc/$$/task/$$/mountinfo /proc/self/mounts /proc/self/mountstats | wc -l; echo ==
mount | head -3; df /data >/dev/null && echo DF-OK'

check_mounts() {
  [[ "$output" != *"$D"* ]]             # no host path: rootfs, bind source
  [[ "$output" != *" /sys/fs/cgroup"* ]]  # no host mount
  local info
  info=$(sed -n '1,/^==$/p' <<<"$output" | head -n -1)
  # The root first, its parent outside the table; /proc as proc; the
  # bind at its destination, read-only and noexec as drawn, of the
  # source's own type; the tmpfs stand-in as tmpfs.
  head -1 <<<"$info" | grep -Eq '^1000 999 [0-9]+:[0-9]+ / / rw,nosuid,nodev,relatime - [a-z0-9]+ [a-z0-9]+ rw$'
  grep -Eq '^[0-9]+ 1000 [0-9:]+ / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw$' <<<"$info"
  grep -Eq '^[0-9]+ 1000 [0-9:]+ / /data ro,nosuid,nodev,noexec,relatime - [a-z0-9]+ [a-z0-9]+ r[ow]$' <<<"$info"
  grep -Eq '^[0-9]+ 1000 [0-9:]+ / /dev rw,nosuid,nodev,relatime - tmpfs tmpfs rw$' <<<"$info"
  # /dev/null, a bound device node: no nodev, its parent /dev's id.
  devid=$(awk '$5 == "/dev" { print $1 }' <<<"$info")
  grep -Eq "^[0-9]+ $devid [0-9:]+ / /dev/null rw,nosuid,relatime - devtmpfs devtmpfs rw$" <<<"$info"
  # mounts: the same table, getmntent's format; mount and df parse it.
  grep -q '^proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0$' <<<"$output"
  grep -q ' /data .* ro,nosuid,nodev,noexec,relatime 0 0$' <<<"$output"
  [[ "$output" == *DF-OK* ]]
}

@test "nsless proc: mountinfo and mounts are the view's table, as nobody" {
  jqc ".mounts += [{destination: \"/data\", type: \"bind\", source: \"$D/data\", options: [\"rbind\", \"ro\", \"noexec\"]}]"
  args sh -c "$MOUNTS_PROBE"
  run --separate-stderr as_user run p1
  echo "$output"; echo "$stderr"
  [ "$status" -eq 0 ]
  check_mounts
}

@test "nsless proc: mountinfo and mounts are the view's table, as root" {
  jqc ".mounts += [{destination: \"/data\", type: \"bind\", source: \"$D/data\", options: [\"rbind\", \"ro\", \"noexec\"]}]
       | .process.user={uid:0,gid:0}"
  args sh -c "$MOUNTS_PROBE"
  run --separate-stderr as_root run --isolation landlock p2
  echo "$output"; echo "$stderr"
  [ "$status" -eq 0 ]
  check_mounts
}

# A listening unix socket on the host, its path in $HOSTSOCK, and a host
# TCP listener on 127.0.0.1 ($TPORT).
host_sockets() {
  HOSTSOCK=$D/host-$RANDOM.sock
  python3 -c "
import socket, os, sys
u = socket.socket(socket.AF_UNIX); u.bind('$HOSTSOCK'); u.listen(1)
t = socket.socket(); t.bind(('127.0.0.1', 0)); t.listen(1)
print(t.getsockname()[1]); sys.stdout.flush(); sys.stdout.close()
while True: u.accept()" > "$D/port" &
  LISTENER=$!
  for _ in $(seq 50); do [ -s "$D/port" ] && [ -S "$HOSTSOCK" ] && break; read -rt 0.1 <> <(:) || true; done
  TPORT=$(cat "$D/port")
  TPORT_HEX=$(printf '%04X' "$TPORT")
  grep -q "$HOSTSOCK" /proc/net/unix          # control: the host sees it
}

# The container listens on a unix socket of its own and reads the tables.
NET_PROBE='s=/tmp/own-$$.sock; sysc ulisten $s >/dev/null & for i in $(seq 50); do [ -S $s ] && break; sleep 0.1; done
cat /proc/net/unix; echo ==; cat /proc/net/tcp /proc/self/net/tcp6 /proc/$$/task/$$/net/udp; echo ==
wc -l < /proc/net/unix; kill %1'

@test "nsless proc: /proc/net socket tables are the container's own when config.json lists a network namespace" {
  command -v python3 >/dev/null || skip "python3 needed for the host sockets"
  host_sockets
  args sh -c "$NET_PROBE"
  run --separate-stderr as_user run n1
  echo "$output"; echo "$stderr"
  [ "$status" -eq 0 ]
  [[ "$output" != *"$HOSTSOCK"* ]]        # a host socket's path
  [[ "$output" != *":$TPORT_HEX "* ]]     # a host TCP listener
  [[ "$output" == *"Num       RefCount Protocol Flags"* ]]   # the header
  [[ "$output" == *"sl  local_address"* ]]
  [ "${lines[-1]}" -ge 2 ]                # its own socket, after the header
  # As root too.
  jqc '.process.user={uid:0,gid:0}'
  run --separate-stderr as_root run --isolation landlock n2
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" != *"$HOSTSOCK"* ]]
  [[ "$output" != *":$TPORT_HEX "* ]]
  [ "${lines[-1]}" -ge 2 ]
}

@test "nsless proc: /proc/net stays the host's when config.json asks for the host's network" {
  command -v python3 >/dev/null || skip "python3 needed for the host sockets"
  host_sockets
  jqc 'del(.linux.namespaces[] | select(.type == "network"))'
  args sh -c 'cat /proc/net/unix /proc/net/tcp'
  run --separate-stderr as_user run n3
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"$HOSTSOCK"* ]]
  [[ "$output" == *":$TPORT_HEX "* ]]
}

# A unix socket bound in the view is bound by the supervisor through
# /proc/self/fd/<parent>/<name>: that is the name the kernel keeps.
SOCKNAME_PROBE='sockname /tmp/named-$$.sock'

check_sockname() {
  [ "$status" -eq 0 ]
  [[ "$output" != *"/proc/self/fd"* ]]
  [[ "${lines[0]}" =~ ^"sock /tmp/named-"[0-9]+".sock"$ ]]
  [ "${lines[1]}" = "peer ${lines[0]#sock }" ]
  [ "${lines[2]}" = "acc ${lines[0]#sock }" ]
  [ "${lines[3]}" = "unix ${lines[0]#sock }" ]   # /proc/net/unix: the view path
}

@test "nsless proc: getsockname and getpeername of a unix socket bound in the view give its view path" {
  args sh -c "$SOCKNAME_PROBE"
  run --separate-stderr as_user run g1
  echo "$output"; echo "$stderr"
  check_sockname
  jqc '.process.user={uid:0,gid:0}'
  run --separate-stderr as_root run --isolation landlock g2
  echo "$output"
  check_sockname
}
