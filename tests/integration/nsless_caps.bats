#!/usr/bin/env bats
# Namespace-less mode: capabilities that a namespaced container holds over
# its OWN namespace act on the host's when the namespace is not created
# (docs/nsless.md "Capabilities and the host's namespaces",
# runtime/vroot-caps.c).  Where config.json lists the namespace they are
# refused at create, naming the field; where it does not, the container
# asked for the host's and keeps them.  The rest are contained by Landlock
# or the trap filter: each is performed here against a host object the
# test owns.  As root with --isolation landlock (an ordinary caller's
# container holds no capability).  Nothing of the host is left changed:
# teardown puts back lo's MTU and the hostname and kills the host
# processes the tests started.
load ../lib/common
load ../lib/nsless
bats_require_minimum_version 1.5.0   # run --separate-stderr: create-time warnings are on stderr

setup() {
  nsless_setup
  MTU0=$(cat /sys/class/net/lo/mtu)
  HOST0=$(hostname)
  HOSTPID=
  root_rootfs
}
teardown() {
  [ "$(cat /sys/class/net/lo/mtu)" = "$MTU0" ] || ip link set lo mtu "$MTU0"
  [ "$(hostname)" = "$HOST0" ] || hostname "$HOST0"
  [ -n "$HOSTPID" ] && kill -9 "$HOSTPID" 2>/dev/null
  nsless_teardown
}

# process.user root, process.args $@, every set the spec's default plus
# $CAPS (a jq array of names).
root_run() {
  local a='[]' x
  for x in "$@"; do a=$(jq -c --arg x "$x" '. + [$x]' <<<"$a"); done
  jqc ".process.user={uid:0,gid:0} | .process.args=$a
       | .process.capabilities |= with_entries(.value += ${CAPS:-[]} | .value |= unique)"
}
# Drops namespace $1 from linux.namespaces.
unlist() { jqc "del(.linux.namespaces[] | select(.type == \"$1\"))"; }
# A host process owned by root, the target of the pid tests.
host_sleep() { sleep 1000 & HOSTPID=$!; }
nice_of() { awk '{print $19}' "/proc/$1/stat"; }
no_state() { [ -z "$("$SANDLOCK_OCI" --root "$D/rstate" list -q 2>/dev/null)" ]; }

# socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL))
PACKET=(sysc socket 17 3 768)

@test "nsless caps: CAP_NET_RAW with a network namespace listed is refused at create, naming the field" {
  CAPS='["CAP_NET_RAW"]' root_run "${PACKET[@]}"
  run --separate-stderr as_root caps1
  echo "out: $output"; echo "err: $stderr"
  [ "$status" -ne 0 ]
  [[ "$stderr" == *"process.capabilities.bounding: CAP_NET_RAW would act on the host's network"*"does not create the network namespace that linux.namespaces lists"* ]]
  [[ "$output" != *OK* ]]
  no_state
}

@test "nsless caps: CAP_NET_RAW named in a set other than bounding is refused too, naming that set" {
  jqc '.process.capabilities.effective += ["CAP_NET_RAW"] | .process.capabilities.permitted += ["CAP_NET_RAW"]'
  root_run "${PACKET[@]}"
  run --separate-stderr as_root caps1b
  echo "out: $output"; echo "err: $stderr"
  [ "$status" -ne 0 ]
  [[ "$stderr" == *"process.capabilities.effective: CAP_NET_RAW would act on the host's network"* ]]
  [[ "$output" != *OK* ]]
}

@test "nsless caps: without a network namespace listed, CAP_NET_RAW opens a packet socket (the host's network was asked for)" {
  unlist network
  CAPS='["CAP_NET_RAW"]' root_run "${PACKET[@]}"
  run --separate-stderr as_root caps2
  echo "out: $output"; echo "err: $stderr"
  [ "$status" -eq 0 ]
  [ "$output" = OK ]
}

@test "nsless caps: CAP_NET_ADMIN cannot change a host interface (lo's MTU)" {
  [ "$MTU0" != 1280 ] || skip "lo's MTU is already 1280"
  CAPS='["CAP_NET_ADMIN"]' root_run ip link set lo mtu 1280
  run --separate-stderr as_root caps3
  echo "out: $output"; echo "err: $stderr"
  [ "$(cat /sys/class/net/lo/mtu)" = "$MTU0" ]
  [ "$status" -ne 0 ]
  [[ "$stderr" == *"process.capabilities.bounding: CAP_NET_ADMIN would act on the host's network"* ]]
  no_state
}

@test "nsless caps: CAP_SYS_NICE cannot raise a host process's priority" {
  host_sleep
  [ "$(nice_of "$HOSTPID")" = 0 ]
  # setpriority(PRIO_PROCESS, pid, -5)
  CAPS='["CAP_SYS_NICE"]' root_run sysc setpriority 0 "$HOSTPID" -5
  run --separate-stderr as_root caps4
  echo "out: $output"; echo "err: $stderr"
  [ "$(nice_of "$HOSTPID")" = 0 ]
  [ "$status" -ne 0 ]
  [[ "$stderr" == *"process.capabilities.bounding: CAP_SYS_NICE would act on the host's processes"*"the pid namespace"* ]]
}

@test "nsless caps: CAP_SYS_BOOT with a pid namespace listed is refused at create" {
  # The container only runs `true`: on a runtime that let it through,
  # nothing reboots; the refusal is what is checked.
  CAPS='["CAP_SYS_BOOT"]' root_run true
  run --separate-stderr as_root caps5
  echo "out: $output"; echo "err: $stderr"
  [ "$status" -ne 0 ]
  [[ "$stderr" == *"process.capabilities.bounding: CAP_SYS_BOOT would act on the host's processes"* ]]
}

@test "nsless caps: without a pid namespace listed, CAP_SYS_NICE is kept" {
  unlist pid
  # setpriority(PRIO_PROCESS, the shell, -5), then the shell's nice value
  CAPS='["CAP_SYS_NICE"]' root_run sh -c 'sysc setpriority 0 $$ -5 && cut -d" " -f19 /proc/$$/stat'
  run --separate-stderr as_root caps6
  echo "out: $output"; echo "err: $stderr"
  [ "$status" -eq 0 ]
  [ "$output" = $'OK\n-5' ]
}

@test "nsless caps: CAP_KILL does not reach a host process (Landlock's signal scope)" {
  host_sleep
  CAPS='["CAP_KILL"]' root_run sysc kill "$HOSTPID" 9
  run --separate-stderr as_root caps7
  echo "out: $output"; echo "err: $stderr"
  [ "$output" = EPERM ]
  kill -0 "$HOSTPID"
}

@test "nsless caps: CAP_SYS_PTRACE does not reach a host process (Landlock's ptrace rule)" {
  host_sleep
  # ptrace(PTRACE_SEIZE, pid, 0, 0)
  CAPS='["CAP_SYS_PTRACE"]' root_run sysc ptrace 0x4206 "$HOSTPID" 0 0
  run --separate-stderr as_root caps8
  echo "out: $output"; echo "err: $stderr"
  [ "$output" = EPERM ]
  ! grep -q '^TracerPid:[[:space:]]*[1-9]' "/proc/$HOSTPID/status"
}

@test "nsless caps: CAP_SYS_ADMIN with uts listed cannot rename the host" {
  CAPS='["CAP_SYS_ADMIN"]' root_run sh -c 'hostname caps-renamed; hostname'
  run --separate-stderr as_root caps9
  echo "out: $output"; echo "err: $stderr"
  [ "$(hostname)" = "$HOST0" ]
  [[ "$output" != *caps-renamed* ]]
}

@test "nsless caps: CAP_IPC_OWNER does not reach the host's SysV IPC objects" {
  # a segment of the host's, mode 0600, owned by another user
  local id
  id=$(python3 -c 'import ctypes,sys; l=ctypes.CDLL(None); i=l.shmget(0x5a17c0de, 4096, 0o1600); print(i)')
  [ "$id" -ge 0 ] || skip "shmget on the host failed"
  python3 -c "import ctypes; l=ctypes.CDLL(None)
class P(ctypes.Structure): _fields_=[('key',ctypes.c_int),('uid',ctypes.c_uint),('gid',ctypes.c_uint),('cuid',ctypes.c_uint),('cgid',ctypes.c_uint),('mode',ctypes.c_ushort)]
class D(ctypes.Structure): _fields_=[('perm',P),('pad',ctypes.c_char*256)]
d=D(); l.shmctl($id, 2, ctypes.byref(d)); d.perm.uid=1000; d.perm.gid=1000; l.shmctl($id, 1, ctypes.byref(d))"
  # shmget of its key, then shmctl(IPC_RMID) of its id
  CAPS='["CAP_IPC_OWNER","CAP_SYS_ADMIN"]' root_run sh -c "sysc shmget 0x5a17c0de 0 0; sysc shmctl $id 0 0"
  run --separate-stderr as_root caps10
  echo "out: $output"; echo "err: $stderr"
  local left; left=$(ipcs -m | awk -v id="$id" '$2 == id' | wc -l)
  python3 -c "import ctypes; ctypes.CDLL(None).shmctl($id, 0, None)"
  [ "$output" = $'EPERM\nEPERM' ]
  [ "$left" = 1 ]
}

@test "nsless caps: a namespaced sysctl written through /proc/sys does not reach the host's (kernel/domainname, readonlyPaths removed)" {
  DOM0=$(cat /proc/sys/kernel/domainname)
  jqc 'del(.linux.readonlyPaths)'
  CAPS='["CAP_SYS_ADMIN","CAP_DAC_OVERRIDE"]' root_run sh -c 'echo caps-dom > /proc/sys/kernel/domainname; cat /proc/sys/kernel/domainname'
  run --separate-stderr as_root caps11
  echo "out: $output"; echo "err: $stderr"
  local now; now=$(cat /proc/sys/kernel/domainname)
  [ "$now" = "$DOM0" ] || echo "$DOM0" > /proc/sys/kernel/domainname
  [ "$now" = "$DOM0" ]
  [[ "$output" != *caps-dom* ]]
}

@test "nsless caps: a host abstract unix socket is out of reach with the network namespace listed (Landlock's scope)" {
  "$SANDLOCK_HELPERS/sysc" ulisten "@nsless-caps-$$" > "$D/listen.out" &
  LISTENER=$!
  for _ in $(seq 50); do grep -q READY "$D/listen.out" && break; sleep 0.1; done
  root_run sysc uconnect "@nsless-caps-$$"
  run --separate-stderr as_root caps12
  echo "out: $output"; echo "err: $stderr"
  [ "$output" = EPERM ]
}

@test "nsless caps: the container has a session of its own: TIOCSTI cannot type into the caller's terminal" {
  command -v script >/dev/null || skip "script (util-linux) is needed for a controlling terminal"
  # A config filter that allows every ioctl (the default one refuses
  # TIOCSTI): the session is what must hold.
  jqc '.linux.seccomp={"defaultAction":"SCMP_ACT_ALLOW"}'
  root_run sysc tiocsti
  run script -qec "$SANDLOCK_OCI --root $D/rstate run --isolation landlock -b $D/bundle caps13 2>/dev/null" /dev/null </dev/null
  echo "out: $output"
  [[ "$output" == *EPERM* ]]
  [[ "$output" != *xOK* ]]
}

@test "nsless caps: with a pid namespace listed, prlimit and setpriority reach no host process (the caller itself still works)" {
  host_sleep
  local lim0; lim0=$(grep 'open files' "/proc/$HOSTPID/limits")
  # prlimit64(host, RLIMIT_NOFILE, 100) — no capability needed on a
  # process of the same uid; then on itself (0); setpriority of the
  # container's uid (PRIO_USER) and of itself.
  root_run sh -c "sysc prlimit $HOSTPID 7 100 100; sysc prlimit 0 7 1000 1000; sysc setpriority 2 0 5; sysc setpriority 0 0 5"
  run --separate-stderr as_root caps14
  echo "out: $output"; echo "err: $stderr"
  [ "$(grep 'open files' "/proc/$HOSTPID/limits")" = "$lim0" ]
  [ "$(nice_of "$HOSTPID")" = 0 ]
  # ESRCH: not a process of the container (runtime/vroot-pid.c)
  [ "$output" = $'ESRCH\nOK\nEPERM\nOK' ]
}

@test "nsless caps: without a pid namespace listed, prlimit on another process is kept" {
  unlist pid
  root_run sh -c 'sleep 100 & sysc prlimit $! 7 100 100; grep "open files" /proc/$!/limits; kill $!'
  run --separate-stderr as_root caps15
  echo "out: $output"; echo "err: $stderr"
  [[ "$output" == OK*"Max open files"*100*100* ]]
}
