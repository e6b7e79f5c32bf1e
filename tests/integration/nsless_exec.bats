#!/usr/bin/env bats
# Namespace-less `exec` (docs/nsless.md "exec"): the process's own user,
# groups, capabilities and rlimits, applied by the container's exec server
# within what the container itself holds, refused by field name beyond
# it; the exec server out of the container's /proc and out of a wait for
# any child in its init.  Tests marked "as root" run the runtime as root
# (process.user 0, the only user it may then have); the others run as
# nobody with user namespaces made unavailable (tests/lib/nsless.bash).
load ../lib/common
load ../lib/nsless

setup() {
  nsless_setup
  require_helper waitany
}

teardown() {
  if [ -d "${D:-}/rstate" ]; then
    for id in $(rootrt list -q 2>/dev/null); do rootrt delete -f "$id"; done
  fi
  nsless_teardown
}

require_helper() {
  [ -x "$SANDLOCK_HELPERS/$1" ] || skip "build the helpers (make helpers)"
}

rootrt() { "$SANDLOCK_OCI" --root "$D/rstate" "$@"; }

# The docker-like default set: a root container that may switch users
# (without CAP_NET_RAW: with the spec's network namespace listed, the mode
# refuses it at create, docs/nsless.md "Capabilities and the host's
# namespaces").
DOCKER_CAPS='["CAP_CHOWN","CAP_DAC_OVERRIDE","CAP_FSETID","CAP_FOWNER","CAP_MKNOD","CAP_SETGID","CAP_SETUID","CAP_SETFCAP","CAP_SETPCAP","CAP_NET_BIND_SERVICE","CAP_SYS_CHROOT","CAP_KILL","CAP_AUDIT_WRITE"]'

# A running root container $1 of `sleep 300`, root-owned rootfs, with
# capability sets $2 (a jq array; default: the spec's) and jq filter $3.
start_root() {
  chown -R 0:0 "$D/bundle/rootfs"
  chmod 1777 "$D/bundle/rootfs/tmp"
  jqc ".process.user={uid:0,gid:0} | .process.args=[\"sleep\",\"300\"] ${2:+| .process.capabilities |= with_entries(.value = $2)} ${3:+| $3}"
  rootrt run -d --isolation landlock -b "$D/bundle" "$1" </dev/null >/dev/null 2>&1
  [ "$(rootrt state "$1" | jq -r .status)" = running ]
}

# A running container $1 of `sleep 300` as nobody.
start_user() {
  args sleep 300
  as_user run -d "$1" </dev/null >/dev/null 2>&1
  [ "$(as_user state "$1" | jq -r .status)" = running ]
}

# A --process file $D/p.json from jq filter $1 on a base: args $2 (shell text), cwd /, PATH.
process_file() {
  jq -n --arg s "$2" "{args:[\"sh\",\"-c\",\$s],cwd:\"/\",env:[\"PATH=/bin\"],user:{uid:0,gid:0}} | $1" > "$D/p.json"
  chmod 644 "$D/p.json"
}

# The exec server: the init's child that is not a process of the container
# (on a binary without the change it is the init's only child).
server_pid() {
  local ipid=$1 c
  for c in $(cat "/proc/$ipid/task/$ipid/children"); do
    [ "$(tr '\0' ' ' < "/proc/$c/cmdline")" != "sleep 300 " ] && { echo "$c"; return; }
  done
}

@test "nsless exec (as root): --user 1000:1000 runs as that user, without root's capabilities" {
  echo root-only > "$D/bundle/rootfs/root/secret"
  start_root u1 "$DOCKER_CAPS"
  chmod 600 "$D/bundle/rootfs/root/secret"; chmod 755 "$D/bundle/rootfs/root"
  run rootrt exec --user 1000:1000 u1 sh -c 'id; grep ^CapEff /proc/self/status; cat /root/secret || echo denied'
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"uid=1000(user) gid=1000(user)"* ]]
  [[ "$output" == *$'CapEff:\t0000000000000000'* ]]
  [[ "$output" != *root-only* ]]
  [[ "$output" == *denied* ]]
  # --additional-gids, and HOME from the container's passwd for that uid
  run rootrt exec --user 1000:1000 -g 5 u1 sh -c 'id; echo HOME=$HOME'
  echo "$output"
  [[ "$output" == *"uid=1000(user) gid=1000(user) groups=5(tty)"* ]]
  [[ "$output" == *HOME=/home* ]]
  # root's exec keeps the container's own
  run rootrt exec u1 sh -c 'id -u; cat /root/secret'
  [[ "$output" == *$'0\nroot-only'* ]]
}

@test "nsless exec (as root): --process capabilities are applied, --cap adds within the container's bounding set" {
  start_root c1 "$DOCKER_CAPS"
  process_file '.capabilities={bounding:["CAP_KILL"],effective:["CAP_KILL"],permitted:["CAP_KILL"]}' \
    'grep -E "^Cap(Eff|Bnd)" /proc/self/status'
  run rootrt exec --process "$D/p.json" c1
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *$'CapEff:\t0000000000000020'* ]]     # CAP_KILL only
  [[ "$output" == *$'CapBnd:\t0000000000000020'* ]]
  run rootrt exec --process "$D/p.json" --cap CAP_CHOWN c1
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *$'CapEff:\t0000000000000021'* ]]     # + CAP_CHOWN
  [[ "$output" == *$'CapBnd:\t0000000000000021'* ]]
  # beyond the container's bounding set: refused, named, nothing runs
  run rootrt exec --cap CAP_SYS_ADMIN c1 touch /tmp/ran
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"process.capabilities.bounding: CAP_SYS_ADMIN is not in the container's bounding set"* ]]
  [ ! -e "$D/bundle/rootfs/tmp/ran" ]
}

@test "nsless exec (as root): what the container's own credentials cannot give is refused by field" {
  # the spec's set: no CAP_SETUID, CAP_SETGID, CAP_SETPCAP
  start_root r1
  run rootrt exec --user 1000:1000 r1 touch /tmp/ran
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"process.user.uid: 1000, but the container runs as 0 without CAP_SETUID"* ]]
  run rootrt exec -g 5 r1 touch /tmp/ran
  [ "$status" -ne 0 ]
  [[ "$output" == *"process.user.additionalGids"* ]]
  # a smaller bounding set needs CAP_SETPCAP: the process would keep more
  # than the namespaced exec gives it, so it is refused
  process_file '.capabilities={bounding:["CAP_KILL"],effective:["CAP_KILL"],permitted:["CAP_KILL"]}' 'touch /tmp/ran'
  run rootrt exec --process "$D/p.json" r1
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"process.capabilities.bounding: CAP_NET_BIND_SERVICE would be dropped, which needs CAP_SETPCAP"* ]]
  [ ! -e "$D/bundle/rootfs/tmp/ran" ]
  # the container's own sets as they are still run
  run rootrt exec r1 sh -c 'grep ^CapEff /proc/self/status'
  [ "$status" -eq 0 ]
  [[ "$output" == *$'CapEff:\t0000000020000420'* ]]
}

@test "nsless exec (as root): --process rlimits are applied; a hard limit above the container's is refused" {
  start_root l1 "" '.process.rlimits=[{type:"RLIMIT_NOFILE",soft:8192,hard:8192}]'
  caps='["CAP_AUDIT_WRITE","CAP_KILL","CAP_NET_BIND_SERVICE"]'
  process_file ".capabilities={bounding:$caps,effective:$caps,permitted:$caps}
    | .rlimits=[{type:\"RLIMIT_CORE\",soft:0,hard:0},{type:\"RLIMIT_NOFILE\",soft:2048,hard:4096}]" \
    'grep -E "^Max (open files|core)" /proc/self/limits'
  run rootrt exec --process "$D/p.json" l1
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"Max open files            2048                 4096"* ]]
  process_file ".capabilities={bounding:$caps,effective:$caps,permitted:$caps}
    | .rlimits=[{type:\"RLIMIT_CORE\",soft:0,hard:0},{type:\"RLIMIT_NOFILE\",soft:9000,hard:9000}]" 'touch /tmp/ran'
  run rootrt exec --process "$D/p.json" l1
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"process.rlimits[1]: RLIMIT_NOFILE hard 9000 is above the container's 8192"* ]]
  [ ! -e "$D/bundle/rootfs/tmp/ran" ]
}

@test "nsless exec (as nobody): rlimits lowered, another user or a capability refused by field" {
  jqc '.process.rlimits=[{type:"RLIMIT_NOFILE",soft:8192,hard:8192}]'
  start_user n1
  process_file '.user={uid:65534,gid:65534} | .rlimits=[{type:"RLIMIT_NOFILE",soft:3000,hard:3000}]' \
    'id -u; grep "^Max open files" /proc/self/limits'
  run as_user exec --process "$D/p.json" n1
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"65534"* ]]
  [[ "$output" == *"Max open files            3000                 3000"* ]]
  run as_user exec -u 0:0 n1 true
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"process.user.uid: 0, but the container runs as 65534 without CAP_SETUID"* ]]
  run as_user exec --cap CAP_NET_RAW n1 true
  [ "$status" -ne 0 ]
  [[ "$output" == *"--cap CAP_NET_RAW: process.capabilities"* ]]
}

@test "nsless exec: the exec server and its handlers are not in the container's /proc" {
  start_user p1
  ipid=$(jq -r .pid "$D/state/p1/state.json")
  spid=$(server_pid "$ipid")
  [ -n "$spid" ]
  # the exec'd shell lists /proc while its handler waits for it
  cat > "$D/bundle/rootfs/t.sh" <<EOF
ls /proc 2>/dev/null | grep -E '^[0-9]+\$' | sort -n | tr '\n' ' '; echo
ls -d /proc/$spid 2>&1
ps -o pid,comm
echo PPID=\$PPID
ls -d /proc/\$PPID 2>&1
true
EOF
  run as_user exec p1 sh /t.sh
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"/proc/$spid: No such file or directory"* ]]
  pids=$(sed -n 1p <<<"$output")
  [[ " $pids " == *" $ipid "* ]]
  [[ " $pids " != *" $spid "* ]]
  [[ "$output" != *"sandlock-oci"* ]]              # not in ps
  hp=$(sed -n 's/^PPID=//p' <<<"$output")         # the handler
  [[ " $pids " != *" $hp "* ]]
  [[ "$output" == *"/proc/$hp: No such file or directory"* ]]
  # from outside, `sandlock-oci ps` lists every process under the init,
  # the exec server included
  run as_user ps --format json p1
  [ "$(jq "index($spid) != null" <<<"$output")" = true ]
}

@test "nsless: an init that waits for any child is not held by the exec server" {
  args waitany
  run as_user run w1
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"reaped 1 ECHILD"* ]]
}

@test "nsless exec: a soft RLIMIT_NOFILE below 1024 runs (exec and create)" {
  # It was refused by field: every exec'd binary was handed over at fd
  # 1023 (EBADF at or above the soft limit).  The view's exec now takes
  # free numbers below the limit (runtime/vroot-execfd.c,
  # nsless_fifo.bats).
  start_user f1
  process_file '.user={uid:65534,gid:65534} | .rlimits=[{type:"RLIMIT_NOFILE",soft:512,hard:512}]' 'ulimit -n > /tmp/ran'
  run as_user exec --process "$D/p.json" f1
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$(cat "$D/bundle/rootfs/tmp/ran")" = 512 ]
  jqc '.process.rlimits=[{type:"RLIMIT_NOFILE",soft:100,hard:100}]'
  args sh -c 'ulimit -n; /bin/true && echo ran'
  run as_user run f2
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"100"*"ran"* ]]
}

@test "nsless exec (as root): the exec server takes only a request of its version, whole" {
  start_root v1
  # Requests straight to the server (runtime/vroot-xs.h): one in the
  # previous layout (magic, nargs, nenv, nfds, terminal; cwd, args), which
  # the server used to take and run; the current one with a byte after
  # its last string, or with a count over its limit — all refused; then
  # the same request whole, which runs.
  cat > "$D/req.py" <<'PY'
import socket, struct, sys
def ask(body):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sys.argv[1])
    socket.send_fds(s, [body], [0, 1, 2])
    m = s.recv(1024)
    print(struct.unpack("=I", m[:4])[0], m[12:].split(b"\0")[0].decode())
    s.close()
M = 0x73786c76
caps = 0x20000420   # the spec's set: the container's own
def v2(nrlimits=0):
    return (struct.pack("=12I5Q6I3Q", M, 2, 2, 0, 3, 0, 0, 0, 0o22, 0,
                        nrlimits, 0, caps, caps, caps, 0, 0,
                        0, 0, 0, 0, 0, 0, 0, 0, 0)
            + b"\0" * (24 * nrlimits))
cmd = b"/\0touch\0/tmp/ran\0"
ask(struct.pack("=5I", M, 2, 0, 3, 0) + cmd)
ask(v2() + cmd + b"x")
ask(v2(65) + cmd)
ask(v2() + cmd)
PY
  run python3 "$D/req.py" "$D/rstate/v1/vroot/exec.sock"
  echo "$output"
  [ "${lines[0]}" = "2 exec server: bad request" ]     # VR_XS_ERROR
  [ "${lines[1]}" = "2 exec server: bad request" ]
  [ "${lines[2]}" = "2 exec server: bad request" ]
  [ "${lines[3]}" = "1 " ]                               # VR_XS_STARTED
  for _ in $(seq 50); do [ -e "$D/bundle/rootfs/tmp/ran" ] && break; read -rt 0.1 <> <(:) || true; done
  [ -e "$D/bundle/rootfs/tmp/ran" ]
  run rootrt exec v1 echo still-served
  [ "$output" = still-served ]
}

@test "nsless exec: --process scheduler and ioPriority are applied" {
  start_user s1
  process_file '.user={uid:65534,gid:65534}
    | .scheduler={policy:"SCHED_BATCH",nice:7} | .ioPriority={class:"IOPRIO_CLASS_IDLE",priority:0}' \
    'cut -d" " -f19,41 /proc/self/stat; ionice'
  run as_user exec --process "$D/p.json" s1
  echo "$output"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "7 3" ]              # nice 7, policy 3 (SCHED_BATCH)
  [ "${lines[1]}" = idle ]
  process_file '.user={uid:65534,gid:65534} | .scheduler={policy:"SCHED_NOPE"}' 'touch /tmp/ran'
  run as_user exec --process "$D/p.json" s1
  [ "$status" -ne 0 ]
  [[ "$output" == *'process.scheduler.policy: unknown "SCHED_NOPE"'* ]]
  [ ! -e "$D/bundle/rootfs/tmp/ran" ]
}
