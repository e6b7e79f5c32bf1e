#!/usr/bin/env bats
# Namespace-less mode: the notify supervisor runs under its own Landlock
# domain (docs/nsless.md "The supervisor's domain"), so what it does on the
# container's behalf is no wider than the container's own grants.  As
# nsless.bats: an ordinary user, user namespaces made unavailable by
# tests/helpers/nouserns.
load ../lib/common
load ../lib/nsless
bats_require_minimum_version 1.5.0   # run --separate-stderr: create-time warnings are on stderr

setup() { nsless_setup; }
teardown() { nsless_teardown; }

# A TCP listener on the host's loopback; prints its port.
tcp_listener() {
  python3 -c "
import socket, sys
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(8)
print(s.getsockname()[1]); sys.stdout.flush(); sys.stdout.close()
while True: s.accept()[0].close()" > "$D/port" 3>&- &
  LISTENER=$!
  for _ in $(seq 50); do [ -s "$D/port" ] && break; read -rt 0.1 <> <(:) || true; done
  cat "$D/port"
}

@test "nsless domain: an on-behalf TCP connect obeys the container's net_allow_connect" {
  port=$(tcp_listener)
  [ -n "$port" ]
  # Control: the same user reaches the listener outside the container.
  su nobody -s /bin/sh -c "$SANDLOCK_HELPERS/sysc connect $port" | grep -qx OK
  # connect is serviced by the supervisor (done on a dup of the caller's
  # socket): an unconfined supervisor connects wherever the container's
  # own domain would have refused.
  jqc '.annotations["run.oci.sandlock.net_allow_connect"]="7"'
  args sh -c "sysc connect $port; sysc connect 7"
  run --separate-stderr as_user run nd1
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = EACCES ]
  [ "${lines[1]}" = ECONNREFUSED ]   # an allowed port is still reached
}

@test "nsless domain: an on-behalf TCP bind obeys the container's net_allow_bind" {
  jqc '.annotations["run.oci.sandlock.net_allow_bind"]="7"'
  args sh -c 'sysc bind 20123'
  run --separate-stderr as_user run nd2
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = EACCES ]
}

@test "nsless domain: the container still runs: busybox, a cwd, /dev/null, a created container starts" {
  jqc '.process.cwd="/tmp/w"'
  args sh -c 'pwd; echo x > /dev/null && echo null-ok; ls / >/dev/null && echo ls-ok'
  run as_user run nd3
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *$'/tmp/w\nnull-ok\nls-ok'* ]]
  args sh -c 'echo started > /tmp/started'
  as_user create nd4 </dev/null >/dev/null 2>&1
  as_user start nd4 </dev/null >/dev/null 2>&1
  for _ in $(seq 50); do [ -s "$D/bundle/rootfs/tmp/started" ] && break; read -rt 0.1 <> <(:) || true; done
  [ "$(cat "$D/bundle/rootfs/tmp/started")" = started ]
  run as_user delete -f nd4
  [ "$status" -eq 0 ]
}

@test "nsless uname: the default spec's hostname is drawn by uname, sethostname refused" {
  # The bundle as `spec` writes it (hostname and all), but for the user
  # (this mode runs as the caller) and the terminal (output read here).
  (cd "$D/bundle" && rm config.json && "$SANDLOCK_OCI" spec)
  jqc '.process.terminal=false | .process.user={uid:65534,gid:65534}
       | .hostname="box.example" | .domainname="example"'
  args sh -c 'uname -n; hostname; cat /proc/sys/kernel/domainname >/dev/null; sysc sethostname 0 0; uname -s'
  run --separate-stderr as_user run nu1
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = box.example ]
  [ "${lines[1]}" = box.example ]
  [ "${lines[2]}" = EPERM ]
  [ "${lines[3]}" = Linux ]
  # The default spec's own hostname, unchanged, runs too.
  (cd "$D/bundle" && rm config.json && "$SANDLOCK_OCI" spec)
  jqc '.process.terminal=false | .process.user={uid:65534,gid:65534}'
  want=$(jq -r .hostname "$D/bundle/config.json")
  args uname -n
  run --separate-stderr as_user run nu2
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "$want" ]
}

@test "nsless: an orderly run says nothing of the supervisor (delete waits for it to leave)" {
  # As root, where the watcher can reach the cgroup: delete used to kill
  # the supervisor before it noticed the hang-up, and its watcher reported
  # a death and tried to kill a removed cgroup.
  jq '.process.user={uid:0,gid:0} | .process.args=["/bin/true"]' "$D/bundle/config.json" > "$D/c"
  mv "$D/c" "$D/bundle/config.json"
  for i in 1 2 3 4 5 6 7 8; do
    run "$SANDLOCK_OCI" --root "$D/rstate" run --isolation landlock -b "$D/bundle" "o$i"
    echo "$output"
    [ "$status" -eq 0 ]
    # (the create-time warnings for what the mode ignores are not about it)
    [ -z "$(grep -v '^sandlock-oci: warning: ' <<<"$output")" ]
  done
}

@test "nsless: the host's device nodes in the view keep their mode, owner and times" {
  # The /dev defaults are bound from the host: a root container's chmod or
  # touch of /dev/null used to change the host's node (the supervisor did
  # it on its behalf).  A namespaced container changes only its own copy.
  before=$(stat -c '%a %u %g %Y' /dev/null /dev/random)
  jq '.process.user={uid:0,gid:0} | .process.args=["/bin/sh","-c","chmod 755 /dev/null; echo chmod=$?; touch -d 2001-01-01 /dev/random; echo touch=$?; chown 1 /dev/null; echo chown=$?"]' \
    "$D/bundle/config.json" > "$D/c"
  mv "$D/c" "$D/bundle/config.json"
  run "$SANDLOCK_OCI" --root "$D/rstate" run --isolation landlock -b "$D/bundle" devmeta
  echo "$output"
  after=$(stat -c '%a %u %g %Y' /dev/null /dev/random)
  # put the host right before asserting, whatever happened
  chmod 666 /dev/null /dev/random
  [ "$before" = "$after" ]
  [[ "$output" == *"chmod=1"* ]]
  [[ "$output" == *"touch=1"* ]]
}

@test "nsless: root.path of the host's / is refused, as in the namespaced mode" {
  jq '.root.path="/" | .process.user={uid:0,gid:0} | .process.args=["/bin/true"]' \
    "$D/bundle/config.json" > "$D/c"
  mv "$D/c" "$D/bundle/config.json"
  run "$SANDLOCK_OCI" --root "$D/rstate" run --isolation landlock -b "$D/bundle" hostroot
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"root.path"*"host's root directory"* ]]
  [ -z "$(ls -A "$D/rstate" 2>/dev/null)" ]
}
