#!/usr/bin/env bats
# /dev/tty in namespace-less mode (docs/nsless.md "process.terminal"): the
# supervisor answers an open of /dev/tty with the caller's controlling
# terminal, reopened from an fd the caller holds of it; no controlling
# terminal is ENXIO, as the kernel says, whatever tty fds the caller holds.
# As nobody without user namespaces (tests/lib/nsless.bash) and as root
# with --isolation landlock.
load ../lib/common
load ../lib/nsless

setup() { nsless_setup; }
teardown() { nsless_teardown; }

# Writes to /dev/tty, reads a line from it, and shows that a process that
# left the session (setsid: no controlling terminal, the pty still its
# fds 0-2) gets ENXIO, not the terminal.
DEVTTY_SH='echo via-devtty > /dev/tty || echo devtty-failed; read x < /dev/tty; echo "got:$x"; setsid sh -c "echo leaked > /dev/tty"; exit 4'

# Runs shell text $1 as nobody with user namespaces unavailable; $RT is the
# runtime with this test's --root, the cwd the bundle.
as_user_sh() {
  printf '%s\n' "RT=\"$SANDLOCK_OCI --root $D/state\"" "$1" > "$D/cmd.sh"
  chown nobody "$D/cmd.sh"
  unshare -m --propagation private su nobody -s /bin/sh -c \
    "cd $D/bundle && HOME=$D XDG_RUNTIME_DIR=$D/xdg exec $SANDLOCK_HELPERS/nouserns sh $D/cmd.sh"
}

# recvtty on $D/c.sock as user $1, typing "typed" and a newline; its
# output in $D/tty.out; RPID set.
listen() {
  sock=$D/c.sock
  setpriv --reuid="$1" --regid="$2" --clear-groups "$SANDLOCK_HELPERS/recvtty" "$sock" 'typed
' > "$D/tty.out" & RPID=$!
  until [ -S "$sock" ]; do sleep 0.02; done
}

check_devtty_out() {
  out=$(tr -d '\r' < "$D/tty.out")
  echo "$out"
  [[ "$out" == *via-devtty* ]]
  [[ "$out" != *devtty-failed* ]]
  [[ "$out" == *got:typed* ]]
  [[ "$out" != *leaked* ]]
  [[ "$out" == *"No such device or address"* ]]
}

@test "nsless devtty: the init's /dev/tty is its terminal (create --console-socket + start as nobody)" {
  jqc '.process.terminal=true'
  args sh -c "$DEVTTY_SH"
  listen nobody nogroup
  as_user_sh "\$RT create --console-socket $D/c.sock t1 && \$RT start t1" \
    || { kill $RPID; false; }
  wait $RPID
  check_devtty_out
}

@test "nsless devtty: exec -t's /dev/tty is its pty" {
  args sleep 300
  as_user run -d x1 </dev/null >/dev/null 2>&1
  [ "$(as_user state x1 | jq -r .status)" = running ]
  listen nobody nogroup
  run as_user_sh "\$RT exec -t --console-socket $D/c.sock x1 sh -c '$DEVTTY_SH'"
  echo "$output"
  [ "$status" -eq 4 ] || { kill $RPID; false; }
  wait $RPID
  check_devtty_out
}

@test "nsless devtty: root with --isolation landlock, a terminal init's /dev/tty" {
  jq '.process.user={uid:0,gid:0} | .process.terminal=true' \
    "$D/bundle/config.json" > "$D/c"
  mv "$D/c" "$D/bundle/config.json"
  args sh -c "$DEVTTY_SH"
  listen 0 0
  "$SANDLOCK_OCI" --root "$D/rs" create --isolation landlock -b "$D/bundle" \
      --console-socket "$D/c.sock" r1 || { kill $RPID; false; }
  "$SANDLOCK_OCI" --root "$D/rs" start r1
  wait $RPID
  check_devtty_out
  "$SANDLOCK_OCI" --root "$D/rs" delete -f r1
}

# A guard: main's supervisor said ENXIO to every /dev/tty open; this one
# must still, where the caller has no controlling terminal.
@test "nsless devtty: no terminal is ENXIO, though the runtime's caller has one and its pty is the container's stdio" {
  command -v script >/dev/null || skip "script(1) missing"
  args sh -c 'echo leaked > /dev/tty; echo "status=$?"'
  run as_user_sh "script -qec \"\$RT run t2\" /dev/null"
  echo "$output"
  [[ "$output" == *"No such device or address"* ]]
  [[ "$output" == *status=* ]]
  [[ "$output" != *leaked* ]]
}

@test "nsless devtty: the init's /dev/tty is a new open file description of its pty, with the flags asked for" {
  jqc '.process.terminal=true'
  args sh -c 'exec 3</dev/tty; exec sleep 300'
  listen nobody nogroup
  as_user_sh "\$RT create --console-socket $D/c.sock t3 && \$RT start t3" \
    || { kill $RPID; false; }
  pid=$(jq -r .pid "$D/state/t3/state.json")
  for _ in $(seq 50); do [ -e "/proc/$pid/fd/3" ] && break; read -rt 0.1 <> <(:) || true; done
  # the same pty as fds 0-2 ...
  [ "$(readlink "/proc/$pid/fd/3")" = "$(readlink "/proc/$pid/fd/0")" ]
  [[ "$(readlink "/proc/$pid/fd/3")" == /dev/pts/* ]]
  # ... opened read-only (fd 0's description is O_RDWR): not a dup of it
  f3=$(awk '/^flags:/{print $2}' "/proc/$pid/fdinfo/3")
  f0=$(awk '/^flags:/{print $2}' "/proc/$pid/fdinfo/0")
  echo "fd 3 flags $f3, fd 0 flags $f0"
  [ $(( 0$f3 & 3 )) -eq 0 ]
  [ $(( 0$f0 & 3 )) -eq 2 ]
  as_user delete -f t3
  kill $RPID 2>/dev/null || true
}
