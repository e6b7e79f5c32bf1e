#!/usr/bin/env bats
# process.terminal in namespace-less mode (docs/nsless.md): the init gets a
# pty of the host's devpts, opened by the runtime; the master goes to
# --console-socket (create + start) or is relayed by a foreground `run`;
# the slave is the init's stdio and controlling terminal, sized by
# process.consoleSize.  As nobody without user namespaces
# (tests/lib/nsless.bash) and as root with --isolation landlock.
load ../lib/common
load ../lib/nsless

setup() { nsless_setup; }
teardown() { nsless_teardown; }

# What the container prints about its terminal; exit 4 to see the status.
TTY_SH='[ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo isatty; stty size; tty; readlink /proc/self/fd/0; ls /dev/pts; exit 4'


# recvtty on $D/c.sock as user $1 (its output in $D/tty.out); RPID set.
listen() {
  sock=$D/c.sock
  setpriv --reuid="$1" --regid="$2" --clear-groups "$SANDLOCK_HELPERS/recvtty" "$sock" > "$D/tty.out" & RPID=$!
  until [ -S "$sock" ]; do sleep 0.02; done
}

check_tty_out() {
  out=$(tr -d '\r' < "$D/tty.out")
  echo "$out"
  [[ "$out" == *"winsize 33x101"* ]]    # sized before the master is sent
  [[ "$out" == *isatty* ]]
  [[ "$out" == *"33 101"* ]]            # stty size in the container
}

@test "nsless tty: create --console-socket + start as nobody: the pty master arrives, consoleSize applies" {
  jqc '.process.terminal=true | .process.consoleSize={"height":33,"width":101}'
  args sh -c "$TTY_SH"
  listen nobody nogroup
  as_user_sh "\$RT create --console-socket $D/c.sock t1 && \$RT start t1" \
    || { kill $RPID; false; }
  wait $RPID
  check_tty_out
  # the slave is an fd of the host's devpts, not a path in the view:
  # ttyname finds no name (the fd's link is not shown), no /dev/pts
  [[ "$out" == *"not a tty"* ]]
  [[ "$out" != *"/dev/pts/"* ]]
  # a terminal container without a console socket is refused, named
  run as_user create t2
  [ "$status" -ne 0 ]
  [[ "$output" == *"--console-socket"* ]]
  [ "$(as_user list -q)" = t1 ]   # nothing of t2 left
}

@test "nsless tty: a foreground run as nobody relays the pty (exit status kept)" {
  command -v script >/dev/null || skip "script(1) missing"
  jqc '.process.terminal=true'
  args sh -c "$TTY_SH"
  run as_user_sh "script -qec \"stty rows 30 cols 90; \$RT run t3\" /dev/null"
  echo "$output"
  [ "$status" -eq 4 ]
  out=$(echo "$output" | tr -d '\r')
  [[ "$out" == *isatty* ]]
  [[ "$out" == *"30 90"* ]]
  # without a tty on our side it still runs and relays the output
  run as_user run t4 </dev/null
  echo "$output"
  [ "$status" -eq 4 ]
  [[ "$output" == *isatty* ]]
}

@test "nsless tty: root with --isolation landlock, create --console-socket + start and foreground run" {
  jq '.process.user={uid:0,gid:0} | .process.terminal=true
      | .process.consoleSize={"height":33,"width":101}' "$D/bundle/config.json" > "$D/c"
  mv "$D/c" "$D/bundle/config.json"
  args sh -c "$TTY_SH"
  listen 0 0
  "$SANDLOCK_OCI" --root "$D/rs" create --isolation landlock -b "$D/bundle" \
      --console-socket "$D/c.sock" r1 || { kill $RPID; false; }
  "$SANDLOCK_OCI" --root "$D/rs" start r1
  wait $RPID
  check_tty_out
  "$SANDLOCK_OCI" --root "$D/rs" delete -f r1
  run "$SANDLOCK_OCI" --root "$D/rs" run --isolation landlock -b "$D/bundle" r2 </dev/null
  echo "$output"
  [ "$status" -eq 4 ]
  [[ "$output" == *isatty* ]]
  [[ "$output" == *"33 101"* ]]
}
