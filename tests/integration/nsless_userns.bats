#!/usr/bin/env bats
# Namespace-less mode: no user namespace of the container's own.  A thread
# in a user namespace it made holds every capability *there*, and
# /proc/<tid>/status shows them; a root runtime's supervisor acts in its
# callers' credentials in its own namespace, so it would lend them
# host-wide.  The trap filter refuses the ways in (clone and unshare with
# CLONE_NEWUSER: EPERM; clone3, whose flags BPF cannot read: ENOSYS, and
# libc falls back to clone; setns: EPERM).  The attack: a root container
# with CAP_SYS_ADMIN (so its seccomp profile allows unshare) drops to uid
# 1000 with no capability and tries to read root's 0600 file from a new
# user namespace (tests/helpers/credt userns).
load ../lib/common
load ../lib/nsless
bats_require_minimum_version 1.5.0   # run --separate-stderr: create-time warnings are on stderr

setup() { nsless_setup; }
teardown() { nsless_teardown; }

@test "nsless userns (as root): a dropped process gains no capability from a user namespace of its own" {
  chown -R 0:0 "$(R)"
  echo s > "$(R)/s"; chmod 600 "$(R)/s"
  jqc '.process.user={uid:0,gid:0} | .process.args=["credt","userns","/s"]
       | .process.capabilities |= with_entries(.value += ["CAP_SETUID","CAP_SETGID","CAP_SYS_ADMIN"] | .value |= unique)'
  run --separate-stderr as_root userns1
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = $'EACCES\nunshare: EPERM\nEACCES\nclone: EPERM\nclone3: ENOSYS' ]
}

@test "nsless userns (as root): threads and forks still work with clone3 refused" {
  jqc '.process.user={uid:0,gid:0} | .process.args=["sh","-c","credt thread-setresuid /etc/passwd; (echo sub) | cat"]
       | .process.capabilities |= with_entries(.value += ["CAP_SETUID"] | .value |= unique)'
  run --separate-stderr as_root userns2
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = $'OK\nOK\nOK\nOK\nsub' ]
}
