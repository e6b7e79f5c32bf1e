#!/usr/bin/env bats
# Landlock + seccomp + capabilities from inside real containers (issue 3).
# Each forbidden thing is tried with build/helpers/sysc, which prints the
# errno name, and each has a control case where the same call works.

load ../lib/common

setup_file() { common_setup_file; }

setup() {
  require_root
  [ -x "$SANDLOCK_HELPERS/sysc" ] || skip "build/helpers/sysc not built"
  common_setup
  SYSC_HOST=$SANDLOCK_HELPERS/sysc
}

teardown() {
  local p
  for p in ${BG_PIDS:-}; do kill "$p" 2>/dev/null || true; done
  common_teardown
}

ann() { cfg ".annotations[\"run.oci.sandlock.$1\"]=\"$2\""; }
no_ns() { cfg ".linux.namespaces |= map(select(.type != \"$1\"))"; }
# Runs "$@" in a fresh container; output in $output, status in $status.
# A fresh container id for each run in a test (called in $(...), so no
# counter: a subshell would not keep it).
nid() { cid "$RANDOM$RANDOM"; }
crun_() {
  cmd "$@"
  run rt run --bundle "$BUNDLE" "$(nid)"
  # the runtime's own advice (e.g. CAP_SYS_ADMIN under Landlock) is not
  # the container's output
  output=$(printf '%s\n' "$output" | grep -v '^sandlock-oci: warning: ')
  mapfile -t lines <<< "$output"
}
# Runs a shell script in the container.
csh() { crun_ sh -c "$1"; }
lines_are() { # expected lines...
  local want
  want=$(printf '%s\n' "$@")
  if [ "$output" != "$want" ]; then
    echo "got:"; echo "$output"; echo "want:"; echo "$want"
    return 1
  fi
}
add_tmpfs() { # destination [ro|rw]
  cfg ".mounts += [{\"destination\":\"$1\",\"type\":\"tmpfs\",\"source\":\"tmpfs\",\"options\":[\"${2:-rw}\",\"nosuid\"]}]"
}

# ---- Landlock: filesystem ---------------------------------------------

@test "landlock: a rw mount that the policy makes read-only: EACCES (control: writable)" {
  add_tmpfs /data rw
  csh 'sysc write /data/x; sysc mkdir /data/d'
  [ "$status" -eq 0 ]
  lines_are OK OK
  ann fs_readable /data
  csh 'sysc write /data/x; sysc mkdir /data/d; sysc mknod-fifo /data/f; cat /proc/self/status >/dev/null && echo READ'
  [ "$status" -eq 0 ]
  lines_are EACCES EACCES EACCES READ
}

@test "landlock: truncate on a read-only place is EACCES even as root" {
  add_tmpfs /data rw
  cfg '.process.args=["sh","-c","echo hi > /data/f; sysc truncate /data/f"]'
  run rt run --bundle "$BUNDLE" "$(nid)"
  lines_are OK
  # A hook cannot pre-create files; the rootfs is read-only: write it to
  # the image and make only /data/sub read-only by policy.
  ann fs_readable /data/sub
  csh 'mkdir /data/sub 2>/dev/null; sysc truncate /etc/passwd; sysc open /etc/passwd w'
  lines_are EROFS EROFS
}

@test "landlock: writable rootfs, fs_denied hides a file and a directory" {
  cfg '.root.readonly=false'
  echo secret > "$BUNDLE/rootfs/etc/secret"
  mkdir -p "$BUNDLE/rootfs/opt/hidden" && echo x > "$BUNDLE/rootfs/opt/hidden/f"
  csh 'sysc write /newfile; cat /etc/secret; ls /opt/hidden'
  lines_are OK secret f
  ann fs_denied "/etc/secret,/opt/hidden"
  # The file reads as empty (/dev/null over it, read-only); the directory
  # is an empty mode-000 tmpfs: without CAP_DAC_OVERRIDE, EACCES.
  csh 'sysc write /newfile2; echo "[$(cat /etc/secret)]"; sysc open /opt/hidden dir; sysc open /opt/hidden/f r; sysc write /etc/secret'
  # A write goes to /dev/null (a device ignores MS_RDONLY): nothing lands.
  lines_are OK "[]" EACCES EACCES OK
  [ "$(cat "$BUNDLE/rootfs/etc/secret")" = secret ]
}

@test "landlock: exec from a read-only mount works (EXECUTE granted)" {
  mkdir -p "$BATS_TEST_TMPDIR/bin"
  cp "$SYSC_HOST" "$BATS_TEST_TMPDIR/bin/sysc2"
  cfg ".mounts += [{\"destination\":\"/opt/bin\",\"type\":\"bind\",\"source\":\"$BATS_TEST_TMPDIR/bin\",\"options\":[\"bind\",\"ro\"]}]"
  mkdir -p "$BUNDLE/rootfs/opt/bin"
  crun_ /opt/bin/sysc2 getpid
  [ "$status" -eq 0 ]
  lines_are OK
  crun_ sysc write /opt/bin/new
  lines_are EROFS
}

@test "landlock: IOCTL_DEV only on ttys (TCGETS on /dev/null: EACCES; on ptmx: OK)" {
  csh 'sysc ioctl /dev/null 0x5401; sysc ioctl /dev/ptmx 0x5401'
  lines_are EACCES OK
  ann degrade ""
  ann disable fs-ioctl-dev
  csh 'sysc ioctl /dev/null 0x5401'
  lines_are ENOTTY
}

# ---- Landlock: IPC scoping ----------------------------------------------

@test "landlock: host-network container cannot reach a host abstract socket (control: disable=scope-abstract-unix)" {
  local name="@sandlock-test-$$-$RANDOM"
  ( "$SYSC_HOST" ulisten "$name" > "$BATS_TEST_TMPDIR/l1" ) & BG_PIDS="$!"
  until grep -q READY "$BATS_TEST_TMPDIR/l1" 2>/dev/null; do sleep 0.05; done
  no_ns network
  crun_ sysc uconnect "$name"
  lines_are EPERM
  ann disable scope-abstract-unix
  crun_ sysc uconnect "$name"
  lines_are OK
}

@test "landlock: container in the host pid namespace cannot signal a host process even as root with CAP_KILL" {
  sleep 600 & local victim=$!
  BG_PIDS="$victim"
  no_ns pid
  crun_ sysc kill "$victim" 0
  lines_are EPERM
  ann disable scope-signal
  crun_ sysc kill "$victim" 0
  lines_are OK
  kill -0 "$victim"
}

# ---- Landlock: TCP -------------------------------------------------------

@test "landlock: net_allow_bind / net_allow_connect (EACCES outside the list)" {
  ann net_allow_bind "8080,9000-9001"
  csh 'sysc bind 8080; sysc bind 9001; sysc bind 8081'
  lines_are OK OK EACCES
  ann net_allow_connect "7"
  # The container's own netns has lo up and nothing listening: allowed =>
  # ECONNREFUSED.
  csh 'sysc connect 7; sysc connect 8'
  lines_are ECONNREFUSED EACCES
}

@test "landlock: without net_allow_* the network is not restricted" {
  csh 'sysc bind 8081; sysc connect 9'
  lines_are OK ECONNREFUSED
}

# ---- annotations: errors -------------------------------------------------

@test "annotations: bad values are refused at create with a clear error" {
  ann fs_readable "relative/path"
  run rt run --bundle "$BUNDLE" "$(nid)"
  [ "$status" -ne 0 ]
  [[ "$output" == *'annotation run.oci.sandlock.fs_readable: "relative/path" is not an absolute path'* ]]
  ann fs_readable "/ok"
  ann net_allow_bind "80,http"
  run rt run --bundle "$BUNDLE" "$(nid)"
  [ "$status" -ne 0 ]
  [[ "$output" == *'annotation run.oci.sandlock.net_allow_bind: "http" is not a TCP port'* ]]
  cfg 'del(.annotations["run.oci.sandlock.net_allow_bind"])'
  ann degrade "fs,teleport"
  run rt run --bundle "$BUNDLE" "$(nid)"
  [ "$status" -ne 0 ]
  [[ "$output" == *'annotation run.oci.sandlock.degrade: unknown protection "teleport"'* ]]
}

@test "landlock: disable=fs lets a privileged container mount" {
  cfg '.process.capabilities.bounding += ["CAP_SYS_ADMIN"] | .process.capabilities.effective += ["CAP_SYS_ADMIN"] | .process.capabilities.permitted += ["CAP_SYS_ADMIN"]'
  csh 'mount -t tmpfs none /tmp 2>/dev/null && echo MOUNTED || echo FAILED'
  lines_are FAILED
  ann disable fs
  csh 'mount -t tmpfs none /tmp 2>/dev/null && echo MOUNTED || echo FAILED'
  lines_are MOUNTED
}

# ---- seccomp: linux.seccomp ----------------------------------------------

@test "seccomp: every comparison operator, errnoRet and default errno" {
  cfg '.linux.seccomp = {"defaultAction":"SCMP_ACT_ALLOW","architectures":["SCMP_ARCH_X86_64"],"syscalls":[
    {"names":["dup"],"action":"SCMP_ACT_ERRNO","errnoRet":42,"args":[{"index":0,"value":100,"op":"SCMP_CMP_EQ"}]},
    {"names":["getpriority"],"action":"SCMP_ACT_ERRNO","errnoRet":43,"args":[{"index":1,"value":0,"op":"SCMP_CMP_NE"}]},
    {"names":["getsid"],"action":"SCMP_ACT_ERRNO","errnoRet":44,"args":[{"index":0,"value":5,"op":"SCMP_CMP_LT"}]},
    {"names":["fchmod"],"action":"SCMP_ACT_ERRNO","errnoRet":45,"args":[{"index":0,"value":200,"op":"SCMP_CMP_LE"}]},
    {"names":["mkdirat"],"action":"SCMP_ACT_ERRNO","errnoRet":46,"args":[{"index":0,"value":1000,"op":"SCMP_CMP_GE"}]},
    {"names":["getcwd"],"action":"SCMP_ACT_ERRNO","errnoRet":47,"args":[{"index":1,"value":100000,"op":"SCMP_CMP_GT"}]},
    {"names":["close"],"action":"SCMP_ACT_ERRNO","errnoRet":49,"args":[{"index":0,"value":65280,"valueTwo":4608,"op":"SCMP_CMP_MASKED_EQ"}]},
    {"names":["getppid"],"action":"SCMP_ACT_ERRNO"},
    {"names":["getpgid"],"action":"SCMP_ACT_ERRNO","errnoRet":50,"args":[{"index":0,"value":100,"op":"SCMP_CMP_EQ"},{"index":0,"value":200,"op":"SCMP_CMP_EQ"}]},
    {"names":["setpgid"],"action":"SCMP_ACT_ERRNO","errnoRet":51,"args":[{"index":0,"value":7,"op":"SCMP_CMP_EQ"},{"index":1,"value":8,"op":"SCMP_CMP_EQ"}]},
    {"names":["no_such_syscall_at_all"],"action":"SCMP_ACT_ERRNO"}]}'
  # One line: cmd() turns each line into its own argument.
  csh 'sysc dup 100; sysc dup 101; sysc getpriority 0 5; sysc getpriority 0 0; sysc getsid 4; sysc getsid 99999; sysc fchmod 200 0; sysc fchmod 201 0; sysc mkdirat 1000 0 0; sysc mkdirat 999 0 0; sysc getcwd 0 100001; sysc getcwd 0 100; sysc close 0x1234; sysc close 0x1334; sysc getppid; sysc getpgid 100; sysc getpgid 200; sysc getpgid 300; sysc setpgid 7 8; sysc setpgid 7 9'
  [ "$status" -eq 0 ]
  # ...; same-argument comparisons are "any of", different arguments "all of".
  lines_are ENOMSG EBADF EIDRM OK ECHRNG ESRCH EL2NSYNC EBADF EL3HLT EFAULT EL3RST EFAULT EUNATCH EBADF EPERM \
    ENOCSI ENOCSI ESRCH EL2HLT ESRCH
}

@test "seccomp: actions KILL, KILL_THREAD, KILL_PROCESS, TRAP end the process with SIGSYS; TRACE is ENOSYS; LOG allows" {
  cfg '.linux.seccomp = {"defaultAction":"SCMP_ACT_ALLOW","defaultErrnoRet":1,"flags":["SECCOMP_FILTER_FLAG_LOG","SECCOMP_FILTER_FLAG_SPEC_ALLOW"],"syscalls":[
    {"names":["getuid"],"action":"SCMP_ACT_KILL"},
    {"names":["getgid"],"action":"SCMP_ACT_KILL_THREAD"},
    {"names":["getsid"],"action":"SCMP_ACT_KILL_PROCESS"},
    {"names":["getppid"],"action":"SCMP_ACT_TRAP"},
    {"names":["getpriority"],"action":"SCMP_ACT_TRACE"},
    {"names":["sched_yield"],"action":"SCMP_ACT_LOG"}]}'
  local s
  for s in getuid getgid getsid getppid; do
    crun_ sysc "$s"
    [ "$status" -eq 159 ] || { echo "$s: status $status"; false; }
  done
  crun_ sysc getpriority 0 0
  lines_are ENOSYS
  crun_ sysc sched_yield
  lines_are OK
}

@test "seccomp: defaultAction ERRNO with defaultErrnoRet, allowlist rules" {
  # Allow what busybox sh and sysc need; everything else returns errno 38.
  cfg '.linux.seccomp = {"defaultAction":"SCMP_ACT_ERRNO","defaultErrnoRet":38,"syscalls":[{"names":["execve","brk","arch_prctl","set_tid_address","set_robust_list","rseq","prlimit64","mprotect","readlinkat","getrandom","write","exit_group","uname","openat","close","read","fstat","newfstatat","mmap","munmap","getpid"],"action":"SCMP_ACT_ALLOW"}]}'
  crun_ sysc getpid
  lines_are OK
  crun_ sysc getppid
  lines_are ENOSYS
}

@test "seccomp: SCMP_ACT_NOTIFY sends the listener fd and state to listenerPath" {
  local sock="$BATS_TEST_TMPDIR/agent.sock"
  ( "$SYSC_HOST" listen-notify "$sock" > "$BATS_TEST_TMPDIR/agent.out" ) & BG_PIDS="$!"
  until grep -q READY "$BATS_TEST_TMPDIR/agent.out" 2>/dev/null; do sleep 0.05; done
  cfg ".linux.seccomp = {\"defaultAction\":\"SCMP_ACT_ALLOW\",\"listenerPath\":\"$sock\",\"listenerMetadata\":\"meta-42\",\"flags\":[\"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV\"],\"syscalls\":[{\"names\":[\"getppid\"],\"action\":\"SCMP_ACT_NOTIFY\"}]}"
  crun_ sysc getppid
  lines_are EPERM
  wait "$BG_PIDS" || true
  grep -q '"fds":\["seccompFd"\]' "$BATS_TEST_TMPDIR/agent.out"
  grep -q '"metadata":"meta-42"' "$BATS_TEST_TMPDIR/agent.out"
  grep -q "NOTIFIED $(printf '%d' 110)" "$BATS_TEST_TMPDIR/agent.out"
}

@test "seccomp: bad profiles are refused naming the JSON path" {
  cfg '.linux.seccomp = {"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["getpid"],"action":"SCMP_ACT_EXPLODE"}]}'
  run rt run --bundle "$BUNDLE" "$(nid)"
  [ "$status" -ne 0 ]
  [[ "$output" == *'linux.seccomp.syscalls[0].action: unknown action "SCMP_ACT_EXPLODE"'* ]]
  cfg '.linux.seccomp = {"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["getpid"],"action":"SCMP_ACT_NOTIFY"}]}'
  run rt run --bundle "$BUNDLE" "$(nid)"
  [ "$status" -ne 0 ]
  [[ "$output" == *'linux.seccomp.listenerPath: required'* ]]
}

@test "seccomp: podman's own profile loads and the container runs (noNewPrivileges false)" {
  local sample="$SANDLOCK_TESTS_DIR/fixtures/samples/podman-config.json"
  [ -f "$sample" ] || skip "no podman sample"
  cfg ".linux.seccomp = $(jq -c .linux.seccomp "$sample") | .process.noNewPrivileges=false"
  csh 'sysc getpid; sysc bpf 0 0 0; echo done'
  [ "$status" -eq 0 ]
  lines_are OK EPERM done
}

# ---- seccomp: the default blocklist ---------------------------------------

@test "seccomp default: every blocklist entry is refused (control: disable=seccomp)" {
  local names="init_module finit_module delete_module kexec_load kexec_file_load bpf perf_event_open userfaultfd keyctl add_key request_key reboot swapon swapoff open_by_handle_at name_to_handle_at clock_settime clock_adjtime settimeofday adjtimex iopl ioperm acct quotactl quotactl_fd lookup_dcookie nfsservctl uselib _sysctl syslog io_uring_setup io_uring_enter io_uring_register mount umount2 pivot_root fsopen fsconfig fsmount fspick move_mount open_tree mount_setattr setns"
  local script="" n want=()
  # Bad pointers and ids everywhere: without the filter each call fails
  # harmlessly (EFAULT, EINVAL, EBADF, ...) instead of doing anything.
  for n in $names; do script+="sysc $n 999 1 1 1 1 1; "; want+=(EPERM); done
  csh "$script"
  [ "$status" -eq 0 ]
  lines_are "${want[@]}"
  ann disable seccomp
  csh "sysc bpf 999 1 1; sysc io_uring_setup 1 1; sysc clone3 0"
  lines_are EFAULT EFAULT OK
}

@test "seccomp default: clone3 is ENOSYS, namespace flags EPERM, plain clone and fork work" {
  # 0x10000000 NEWUSER, 0x20000 NEWNS, 0x40000000 NEWNET, 0x20000000 NEWPID
  csh 'sysc clone3 0; sysc clone 0x10000000; sysc clone 0x20000; sysc unshare 0x40000000; sysc unshare 0x20000000; sysc unshare 0x80; sysc clone 0; sysc unshare 0x200; echo $(echo sub)'
  lines_are ENOSYS EPERM EPERM EPERM EPERM EPERM OK OK sub
}

@test "seccomp default: x32 syscall numbers kill the process; personality and TIOCSTI" {
  crun_ sysc x32 getpid
  [ "$status" -eq 159 ]
  csh 'sysc personality 0x40000; sysc personality 0x400000; sysc personality 0xffffffff; sysc personality 8; sysc personality 0; sysc tiocsti'
  lines_are EPERM EPERM OK OK OK EPERM
}

@test "seccomp default: CAP_SYS_ADMIN in the bounding set allows namespaces (privileged)" {
  cfg '.process.capabilities.bounding += ["CAP_SYS_ADMIN"] | .process.capabilities.effective += ["CAP_SYS_ADMIN"] | .process.capabilities.permitted += ["CAP_SYS_ADMIN"]'
  csh 'sysc unshare 0x20000; sysc clone3 0; sysc bpf 999 1 1'
  lines_are OK ENOSYS EPERM
}

# ---- capabilities --------------------------------------------------------

@test "caps: the configured sets are exactly what /proc/self/status shows" {
  cfg '.process.capabilities = {"bounding":["CAP_KILL","CAP_CHOWN","CAP_NET_BIND_SERVICE"],"effective":["CAP_KILL"],"permitted":["CAP_KILL","CAP_NET_BIND_SERVICE"],"inheritable":["CAP_NET_BIND_SERVICE"],"ambient":["CAP_NET_BIND_SERVICE"]} | .process.user.uid=1000 | .process.user.gid=1000'
  crun_ sh -c 'grep ^Cap /proc/self/status'
  [ "$status" -eq 0 ]
  # CHOWN=0 KILL=5 NET_BIND_SERVICE=10; non-root after exec: ambient only.
  lines_are "CapInh:	0000000000000400" "CapPrm:	0000000000000400" \
    "CapEff:	0000000000000400" "CapBnd:	0000000000000421" "CapAmb:	0000000000000400"
}

@test "caps: uid 0 with no capabilities really has none (securebits)" {
  cfg '.process.capabilities = {"bounding":["CAP_KILL","CAP_SYS_CHROOT"]}'
  crun_ sh -c 'grep -E "^Cap(Prm|Eff|Bnd)" /proc/self/status; id -u'
  lines_are "CapPrm:	0000000000000000" "CapEff:	0000000000000000" \
    "CapBnd:	0000000000040020" 0
  cfg 'del(.process.capabilities)'
  crun_ sh -c 'grep -E "^Cap(Prm|Eff|Bnd)" /proc/self/status'
  lines_are "CapPrm:	0000000000000000" "CapEff:	0000000000000000" \
    "CapBnd:	0000000000000000"
}

@test "caps: an unknown capability name is refused at create" {
  cfg '.process.capabilities.bounding = ["CAP_KILL","CAP_CHOWN","CAP_SETUID","CAP_FOO"]'
  run rt run --bundle "$BUNDLE" "$(nid)"
  [ "$status" -ne 0 ]
  [[ "$output" == *'process.capabilities.bounding[3]: unknown capability "CAP_FOO"'* ]]
}

@test "check: prints each protection's status" {
  run "$SANDLOCK_OCI" check
  [[ "$output" == *"landlock.fs:"* ]]
  [[ "$output" == *"landlock.scope-abstract-unix:"* ]]
  [[ "$output" == *"seccomp: available"* ]]
}
