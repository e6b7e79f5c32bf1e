#!/usr/bin/env bats
# The namespace-less mode as its users meet it (docs/nsless.md): `run
# --image` from a local registry, `exec` into a running container, the
# create-time warnings for what the mode ignores, HOME from the container's
# passwd, startContainer hooks resolved in the view.  Everything runs as
# `nobody` with user namespaces made unavailable by the test itself
# (tests/lib/nsless.bash, tests/helpers/nouserns).
load ../lib/common
load ../lib/nsless
load ../lib/registry
bats_require_minimum_version 1.5.0   # run --separate-stderr

MK="python3 $SANDLOCK_TESTS_DIR/lib/mkimage.py"

setup_file() {
  [ "$(id -u)" = 0 ] || return 0
  command -v skopeo >/dev/null && [ -x /usr/bin/docker-registry ] || return 0
  local F=$BATS_FILE_TMPDIR l=$BATS_FILE_TMPDIR/l1
  mkdir -p "$l/bin" "$l/etc" "$l/data"
  cp "$BUSYBOX" "$l/bin/busybox"
  for a in sh ls cat echo true id sleep; do ln -s busybox "$l/bin/$a"; done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home/img-nobody:/bin/sh\n' > "$l/etc/passwd"
  echo in-image > "$l/data/f"
  $MK image "$F/lay" "$l" --tag bb --cmd '["echo","hello from image"]' >/dev/null
  reg_start PLAIN "$F/reg"
  push "$F/lay:bb" "$REG_PLAIN_PORT" test/busybox:bb
  echo "$REG_PLAIN_PORT" > "$F/port"
}

teardown_file() { reg_stop_all "$BATS_FILE_TMPDIR"; }

setup() {
  nsless_setup
  printf 'HOST-SECRET\n' > "$D/secret"
  chown nobody "$D/secret"
}

teardown() { nsless_teardown; }


@test "nsless run --image: pulled from a local registry, run as nobody in a copy, no namespace" {
  [ -f "$BATS_FILE_TMPDIR/port" ] || skip "skopeo or docker-registry missing"
  P="127.0.0.1:$(cat "$BATS_FILE_TMPDIR/port")/test/busybox:bb"
  run as_user_sh "\$RT --debug run --cache-dir $D/cache --image docker://$P demo -- sh -c 'echo hi; id -u; cat /data/f; ls /; cat $D/secret'"
  echo "$output"
  [[ "$output" == *"isolation: landlock"* ]]
  # the copy, said once, and why
  [ "$(grep -c 'copying the cached rootfs: the namespace-less mode cannot mount an overlay' <<<"$output")" = 1 ]
  [[ "$output" == *$'hi\n65534\nin-image\nbin\ndata\ndev\netc\nproc'* ]]
  # the host file is not in the view
  [[ "$output" == *"can't open '$D/secret'"* ]]
  [ "$status" -eq 1 ]
  # the image's Cmd, and the bundle goes with the container
  run as_user_sh "\$RT run --cache-dir $D/cache --image docker://$P demo2"
  [ "$status" -eq 0 ]
  [[ "$output" == *"hello from image"* ]]
  [ -z "$(ls -A "$D/state/image-bundles" 2>/dev/null)" ]
}

@test "nsless hooks: startContainer resolves in the view, createContainer in the runtime's namespace" {
  # Only in the rootfs: a host path of that name does not exist.
  printf '#!/bin/sh\nread -r s\necho "start saw $(head -1 /etc/passwd) $(pwd)" > /tmp/start-hook\n' > "$D/bundle/rootfs/bin/sandlock-start-hook"
  # Only on the host.
  printf '#!/bin/sh\necho create-ran > %s/create-hook\n' "$D" > "$D/create-hook.sh"
  chmod 755 "$D/bundle/rootfs/bin/sandlock-start-hook" "$D/create-hook.sh"
  chown nobody "$D/bundle/rootfs/bin/sandlock-start-hook" "$D/create-hook.sh"
  [ ! -e /bin/sandlock-start-hook ]
  jqc ".hooks={startContainer:[{path:\"/bin/sandlock-start-hook\"}],createContainer:[{path:\"$D/create-hook.sh\"}]} | .process.cwd=\"/tmp\""
  args true
  run as_user run h1
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(cat "$D/create-hook")" = create-ran ]
  [ "$(cat "$D/bundle/rootfs/tmp/start-hook")" = "start saw root:x:0:0:root:/root:/bin/sh /tmp" ]
}

@test "nsless HOME: from the container's /etc/passwd in the view, not the host's" {
  # The host says /nonexistent (or something else); the rootfs says:
  sed -i 's|^nobody:.*|nobody:x:65534:65534:nobody:/home/in-view:/bin/sh|' "$D/bundle/rootfs/etc/passwd"
  [ "$(getent passwd nobody | cut -d: -f6)" != /home/in-view ]
  args sh -c 'echo "HOME=$HOME"'
  run as_user run home1
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"HOME=/home/in-view"* ]]
  # process.env's HOME wins, as in the namespaced mode
  jqc '.process.env += ["HOME=/given"]'
  run as_user run home2
  [[ "$output" == *"HOME=/given"* ]]
}

@test "nsless warnings: what the mode ignores is named once at create, on stderr or in --log" {
  # The default spec's namespaces and mounts, plus the fields it ignores.
  jqc '.linux.rootfsPropagation="rprivate" | .linux.timeOffsets={monotonic:{secs:1}}
       | .mounts += [{destination:"/mnt",type:"bind",source:"/tmp",options:["rbind","ro","nodev","relatime"]}]'
  args true
  run --separate-stderr as_user run w1
  echo "$stderr"
  [ "$status" -eq 0 ]
  once() { [ "$(grep -cF -- "$1" <<<"$2")" = 1 ]; }
  once 'warning: linux.namespaces: pid, network, ipc, uts, mount, cgroup not created' "$stderr"
  once 'warning: linux.timeOffsets: ignored' "$stderr"
  once 'warning: linux.rootfsPropagation: ignored' "$stderr"
  once 'warning: mounts[2] (/dev/pts, type devpts): left out' "$stderr"
  once 'warning: mounts[4] (/dev/mqueue, type mqueue): left out' "$stderr"
  once 'warning: mounts[5] (/sys, type sysfs): left out' "$stderr"
  once 'warning: mounts[6] (/sys/fs/cgroup, type cgroup): left out' "$stderr"
  once 'warning: mounts[1].options (/dev): "strictatime", "mode=755", "size=65536k" not honoured' "$stderr"
  # a bind's nodev is not drawn (a host source may hold device nodes); ro is
  once 'warning: mounts[7].options (/mnt): "nodev", "relatime" not honoured' "$stderr"
  [ "$(grep -c 'warning: ' <<<"$stderr")" = 10 ]   # the proc mount: all honoured
  # With --log, to the log in its format (as every warning: not on stderr,
  # where an engine's shim would take it for the container's output).
  run --separate-stderr as_user --log "$D/log.json" --log-format json run w2
  [ "$status" -eq 0 ]
  [ -z "$stderr" ]
  jq -e -s '[.[] | select(.level == "warning")] | length == 10' "$D/log.json"
  jq -e -s '[.[] | select(.msg | startswith("linux.timeOffsets: ignored"))] | length == 1' "$D/log.json"
  # Refusals stay refusals.
  jqc '.linux.namespaces += [{type:"network",path:"/proc/1/ns/net"}]'
  run as_user run w3
  [ "$status" -ne 0 ]
  [[ "$output" == *"linux.namespaces[6].path: joining a namespace needs privileges"* ]]
}

# A running container of `sleep 300`, created as nobody.
start_sleeper() {
  args sleep 300
  as_user run -d "$1" </dev/null >/dev/null 2>&1
  [ "$(as_user state "$1" | jq -r .status)" = running ]
}

@test "nsless exec: the process is in the view, in the container's domain and filters, with its exit status" {
  echo in-rootfs > "$D/bundle/rootfs/etc/f"
  start_sleeper x1
  ipid=$(jq -r .pid "$D/state/x1/state.json")
  run as_user_sh "\$RT exec x1 sh -c 'ls /; cat /etc/f; cat $D/secret; echo HOME=\$HOME; cd /etc && pwd; exit 7'"
  echo "$output"
  [ "$status" -eq 7 ]
  [[ "$output" == *$'bin\ndev\netc\nhome'* ]]
  [[ "$output" == *in-rootfs* ]]
  [[ "$output" == *"can't open '$D/secret'"* ]]
  [[ "$output" != *HOST-SECRET* ]]
  [[ "$output" == *HOME=/home* ]]    # the rootfs's passwd: nobody's home
  [[ "$output" == *$'\n/etc'* ]]
  # The same confinement as the init's: same Landlock domain and seccomp
  # filters (NoNewPrivs, Seccomp_filters), and a descendant of the init.
  run as_user_sh "\$RT exec x1 sh -c 'grep -E \"^(NoNewPrivs|Seccomp|Seccomp_filters):\" /proc/self/status; echo PPID=\$PPID'"
  echo "$output"
  [ "$status" -eq 0 ]
  want=$(grep -E "^(NoNewPrivs|Seccomp|Seccomp_filters):" "/proc/$ipid/status")
  [[ "$output" == *"$want"* ]]
  # the process's parent is under the init (the exec server's handler)
  ppid=$(sed -n 's/^PPID=//p' <<<"$output")
  gp=$(awk '/^PPid:/{print $2}' "/proc/$ppid/status" 2>/dev/null || true)
  # (the handler may be gone already; when it is there its parent's parent is the init)
  [ -z "$gp" ] || [ "$(awk '/^PPid:/{print $2}' "/proc/$gp/status")" = "$ipid" ]
  # The same Landlock domain, not a copy of its rules: signal scoping lets
  # a process signal its own domain (the init) and nothing outside it.
  setsid su nobody -s /bin/sh -c 'exec sleep 60' </dev/null >/dev/null 2>&1 &
  for _ in $(seq 50); do hp=$(pgrep -u nobody -x -f 'sleep 60' | head -1); [ -n "$hp" ] && break; read -rt 0.1 <> <(:) || true; done
  su nobody -s /bin/sh -c "kill -0 $hp"   # control: the same user outside reaches it
  run as_user_sh "\$RT exec x1 sh -c 'kill -0 $ipid && echo init-reached; kill -0 $hp 2>/dev/null || echo host-refused'"
  kill "$hp"
  echo "$output"
  [[ "$output" == *$'init-reached\nhost-refused'* ]]
  # A host binary by its host path is not there.
  run as_user exec x1 /usr/bin/env true
  [ "$status" -ne 0 ]
  [[ "$output" == *'exec: "/usr/bin/env": no such file or directory'* ]]
  # What the mode cannot give is refused, named.
  run as_user exec -u 0:0 x1 true
  [ "$status" -ne 0 ]
  [[ "$output" == *"process.user.uid: 0, but the container runs as 65534 without CAP_SETUID"* ]]
  run as_user exec --cap CAP_SYS_ADMIN x1 true
  [ "$status" -ne 0 ]
  [[ "$output" == *"--cap"* ]]
}

@test "nsless exec -d: ps, kill --all and delete see the exec'd process" {
  start_sleeper x2
  as_user exec -d --pid-file "$D/xpid" x2 sleep 250 </dev/null >/dev/null 2>&1
  xpid=$(cat "$D/xpid")
  [ "$(tr '\0' ' ' < "/proc/$xpid/cmdline")" = "sleep 250 " ]
  run as_user ps --format json x2
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(jq "index($xpid) != null" <<<"$output")" = true ]
  # kill --all reaches it (SIGSTOP: it stays there to look at)
  as_user kill --all x2 STOP
  for _ in $(seq 50); do [ "$(awk '/^State:/{print $2}' "/proc/$xpid/status")" = T ] && break; read -rt 0.1 <> <(:) || true; done
  [ "$(awk '/^State:/{print $2}' "/proc/$xpid/status")" = T ]
  as_user kill --all x2 CONT
  # delete -f takes it along
  as_user delete -f x2
  for _ in $(seq 50); do [ -d "/proc/$xpid" ] || break; read -rt 0.1 <> <(:) || true; done
  [ ! -d "/proc/$xpid" ] || [ "$(awk '/^State:/{print $2}' "/proc/$xpid/status")" = Z ]
}

@test "nsless exec -t: a pty over --console-socket" {
  start_sleeper x3
  sock=$D/c.sock
  setpriv --reuid=nobody --regid=nogroup --clear-groups "$SANDLOCK_HELPERS/recvtty" "$sock" > "$D/tty.out" & rpid=$!
  until [ -S "$sock" ]; do sleep 0.02; done
  as_user_sh "\$RT exec -t --console-socket $sock x3 sh -c '[ -t 0 ] && [ -t 1 ] && echo isatty; ls /bin/busybox'" \
    || { kill $rpid; false; }
  wait $rpid
  out=$(tr -d '\r' < "$D/tty.out")
  echo "$out"
  [[ "$out" == *isatty* ]]
  [[ "$out" == */bin/busybox* ]]
  run as_user exec -t x3 true
  [ "$status" -ne 0 ]
  [[ "$output" == *"--console-socket"* ]]
}

@test "nsless: the container cannot signal its user's host processes (no pid namespace is made, the signal scope stays)" {
  setsid su nobody -s /bin/sh -c 'exec sleep 61' </dev/null >/dev/null 2>&1 &
  for _ in $(seq 50); do hp=$(pgrep -u nobody -x -f 'sleep 61' | head -1); [ -n "$hp" ] && break; read -rt 0.1 <> <(:) || true; done
  [ -n "$hp" ]
  su nobody -s /bin/sh -c "kill -0 $hp"   # control: the same user outside reaches it
  # The spec's config lists a pid namespace, which this mode does not make.
  jq -e '.linux.namespaces | map(.type) | index("pid") != null' "$D/bundle/config.json"
  args sh -c "kill -0 $hp 2>/dev/null && echo REACHED || echo refused; kill -0 \$\$ && echo self-ok"
  run --separate-stderr as_user run sig1
  kill "$hp"
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = refused ]
  [ "${lines[1]}" = self-ok ]
}
