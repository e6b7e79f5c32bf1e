#!/usr/bin/env bats
# Namespace-less mode, a root runtime: the supervisor acts in each
# caller's effective capabilities (docs/nsless.md "Whose rights").  It
# keeps the container's capabilities permitted (not effective:
# rt_notify_ops.keep_permitted), so a caller's CAP_CHOWN or CAP_FOWNER
# acts on-behalf as it would in the kernel (before, the supervisor could
# take only the few it kept for itself: a Docker-like root container got
# EPERM from chown), and no more than the caller's: without them, EPERM.
# With the caller's permitted set a subset of the supervisor's, reading
# the caller's memory needs no CAP_SYS_PTRACE raised: no capset per call.
load ../lib/common
load ../lib/nsless
bats_require_minimum_version 1.5.0   # run --separate-stderr: create-time warnings are on stderr

setup() { nsless_setup; }
teardown() { nsless_teardown; }

# process.user root, "sh -c $1", capabilities the spec's plus $CAPS.
root_sh() {
  jqc ".process.user={uid:0,gid:0} | .process.args=[\"sh\",\"-c\",$(jq -Rn --arg s "$1" '$s')]
       | .process.capabilities |= with_entries(.value += ${CAPS:-[]} | .value |= unique)"
}

@test "nsless rights (as root): a caller's CAP_CHOWN and CAP_FOWNER act through the view" {
  root_rootfs
  CAPS='["CAP_CHOWN","CAP_FOWNER"]' root_sh 'touch /tmp/c && chown 1000:1000 /tmp/c && chmod 600 /tmp/c && chown 0:0 /tmp/c && stat -c "%u:%g %a" /tmp/c'
  run --separate-stderr as_root rights1
  echo "$output"; echo "$stderr"
  [ "$status" -eq 0 ]
  [ "$output" = "0:0 600" ]
}

@test "nsless rights (as root): without them, chown and another uid's chmod are refused" {
  root_rootfs
  install -o 1000 -g 1000 -m 644 /dev/null "$(R)/tmp/o"
  root_sh 'chown 0:0 /tmp/o; echo "chown=$?"; chmod 600 /tmp/o; echo "chmod=$?"; stat -c "%u:%g %a" /tmp/o'
  run --separate-stderr as_root rights2
  echo "$output"
  [ "$output" = $'chown=1\nchmod=1\n1000:1000 644' ]
}

@test "nsless rights (as root): a root caller's loop makes no capset in the supervisor" {
  command -v strace >/dev/null || skip "strace not installed"
  local sup tr i n
  root_rootfs
  jqc '.process.user={uid:0,gid:0} | .process.args=["sysc","sloop","300","/etc/passwd"]'
  "$SANDLOCK_OCI" --root "$D/rstate" create --isolation landlock -b "$D/bundle" rights3 \
    </dev/null >"$D/out" 2>&1
  sup=$(jq -r .supervisor_pid "$D/rstate/rights3/state.json")
  strace -e trace=capset,process_vm_readv -o "$D/tr" -p "$sup" 2>/dev/null &
  tr=$!
  for i in $(seq 500); do grep -q '^TracerPid:[[:space:]]*[1-9]' "/proc/$sup/status" && break; sleep 0.01; done
  "$SANDLOCK_OCI" --root "$D/rstate" start rights3
  wait "$tr"
  "$SANDLOCK_OCI" --root "$D/rstate" delete -f rights3 >/dev/null 2>&1 || true
  n=$(grep -c '^capset' "$D/tr" || true)
  echo "capsets: $n, memory reads: $(grep -c '^process_vm_readv' "$D/tr")"
  [ "$(grep -c '^process_vm_readv' "$D/tr")" -ge 600 ]
  # Before: two per memory access (CAP_SYS_PTRACE up and down), ≥ 1200.
  # Now: the switches into and out of the caller's credentials only.
  [ "$n" -le 10 ]
}
