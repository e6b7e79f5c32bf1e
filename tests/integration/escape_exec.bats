#!/usr/bin/env bats
# exec gets exactly the init's Landlock rules, whatever the container did to
# the paths the rules name; an image cannot widen the init's rules either;
# a 40k-path fs_readable still works.  docs/security.md "exec and the
# init's rules".
load ../lib/common

setup_file() { common_setup_file; }
setup() {
  require_root
  [ "$("$SANDLOCK_OCI" check 2>/dev/null | grep -c '^landlock.fs: available')" = 1 ] \
    || skip "Landlock fs protection unavailable on this kernel"
  common_setup
  ID=$(cid)
  echo orig > "$BUNDLE/rootfs/etc/victim"
}
teardown() { common_teardown; }

# A writable root that Landlock makes read-only: a write that succeeds can
# only come from a widened rule.
readonly_by_landlock() {
  cfg '.root.readonly=false | .annotations["run.oci.sandlock.fs_readable"]="/"'
}

# Runs the container detached; its init performs "$1" and then says so
# through a fifo on a bind mount, so the test waits without polling.
start_attacker() {
  mkdir -p "$BATS_TEST_TMPDIR/sig"
  mkfifo "$BATS_TEST_TMPDIR/sig/ready"
  cfg ".mounts += [{\"destination\":\"/sig\",\"type\":\"bind\",\"source\":\"$BATS_TEST_TMPDIR/sig\",\"options\":[\"rbind\"]}]"
  cmd sh -c "$1; echo done > /sig/ready; exec sleep 300"
  rt run -d -b "$BUNDLE" "$ID"
  local line
  read -r -t 20 line < "$BATS_TEST_TMPDIR/sig/ready"
  [ "$line" = done ]
}

@test "exec: /dev/full replaced by a symlink to / gives exec no write access to /" {
  readonly_by_landlock
  start_attacker 'rm -f /dev/full && ln -s / /dev/full'
  run rt exec "$ID" sh -c 'echo pwned >> /etc/victim'
  [ "$status" -ne 0 ]
  [[ "$output" == *"ermission denied"* ]]
  [ "$(cat "$BUNDLE/rootfs/etc/victim")" = orig ]
  # A legitimate exec still works, with the container's rules.
  run rt exec "$ID" sh -c 'cat /etc/victim; echo ok > /dev/null && echo w; echo x > /dev/shm/x && cat /dev/shm/x'
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = orig ]
  [ "${lines[1]}" = w ]
  [ "${lines[2]}" = x ]
}

@test "exec: /dev/tty replaced by a symlink to / gives exec no write (or ioctl) access to /" {
  readonly_by_landlock
  start_attacker 'rm -f /dev/tty && ln -s / /dev/tty'
  run rt exec "$ID" sh -c 'echo pwned >> /etc/victim'
  [ "$status" -ne 0 ]
  [[ "$output" == *"ermission denied"* ]]
  [ "$(cat "$BUNDLE/rootfs/etc/victim")" = orig ]
  run rt exec "$ID" cat /etc/victim
  [ "$status" -eq 0 ]
  [ "$output" = orig ]
}

@test "exec: a mount's path re-pointed (parent renamed, symlink put in) gives exec nothing there" {
  # /v/x/inner is a mount inside the volume /v.  The container moves /v/x
  # away (the mount goes with it) and puts /v/x/inner -> /etc in its place:
  # re-resolving the mount's path at exec would make /etc writable.
  readonly_by_landlock
  cfg '.mounts += [{"destination":"/v","type":"tmpfs","source":"tmpfs","options":["rw"]},
                   {"destination":"/v/x/inner","type":"tmpfs","source":"tmpfs","options":["rw"]}]'
  start_attacker 'mv /v/x /v/y && mkdir /v/x && ln -s /etc /v/x/inner'
  run rt exec "$ID" sh -c 'echo pwned >> /etc/victim'
  [ "$status" -ne 0 ]
  [[ "$output" == *"ermission denied"* ]]
  [ "$(cat "$BUNDLE/rootfs/etc/victim")" = orig ]
  # The mount itself, now at /v/y/inner, is still writable through /v.
  run rt exec "$ID" sh -c 'echo z > /v/y/inner/z && cat /v/y/inner/z'
  [ "$status" -eq 0 ]
  [ "$output" = z ]
}

# Without a /dev tmpfs the image's own /dev is used as shipped.
no_dev_mounts() {
  cfg 'del(.mounts[] | select(.destination | startswith("/dev")))'
  mknod "$BUNDLE/rootfs/dev/null" c 1 3   # maskedPaths bind it
}

@test "create: an image shipping /dev/full or /dev/tty as a symlink to / does not widen the init's rules" {
  readonly_by_landlock
  no_dev_mounts
  local n
  for n in full tty; do
    rm -rf "$BUNDLE/rootfs/dev/$n"
    ln -s / "$BUNDLE/rootfs/dev/$n"
    cmd sh -c 'echo pwned >> /etc/victim'
    run rt run -b "$BUNDLE" "$ID-$n"
    [ "$status" -ne 0 ]
    [[ "$output" == *"ermission denied"* ]]
    [ "$(cat "$BUNDLE/rootfs/etc/victim")" = orig ]
    rm "$BUNDLE/rootfs/dev/$n"
  done
  # The control: the same container may read, and write where granted.
  cmd sh -c 'cat /etc/victim && echo x > /dev/null && echo w'
  run rt run -b "$BUNDLE" "$ID-ok"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = orig ]
  [ "${lines[1]}" = w ]
}

@test "create: an fs_writable path that is a symlink in the image is refused, nothing left behind" {
  ln -s /etc "$BUNDLE/rootfs/w"
  cfg '.root.readonly=false | .annotations["run.oci.sandlock.fs_readable"]="/"
       | .annotations["run.oci.sandlock.fs_writable"]="/w"'
  cmd sh -c 'echo pwned >> /etc/victim'
  run rt run -b "$BUNDLE" "$ID"
  [ "$status" -ne 0 ]
  [[ "$output" == *'annotation run.oci.sandlock.fs_writable: "/w" goes through a symlink in the container'* ]]
  [ "$(cat "$BUNDLE/rootfs/etc/victim")" = orig ]
  [ -z "$(rt list -q)" ]
}

@test "create: a volume whose path is a symlink in the image: the rule is on the volume, not the rootfs" {
  # The mount is resolved inside the rootfs (/vol -> /etc lands on /etc),
  # and the rule follows the same way onto the mounted tmpfs; the rootfs's
  # own /etc stays read-only.
  readonly_by_landlock
  ln -s /etc "$BUNDLE/rootfs/vol"
  echo orig > "$BUNDLE/rootfs/home/victim"
  cfg '.mounts += [{"destination":"/vol","type":"tmpfs","source":"tmpfs","options":["rw"]}]'
  cmd sh -c 'echo pwned >> /etc/victim && cat /etc/victim; echo x >> /home/victim'
  run rt run -b "$BUNDLE" "$ID"
  [ "${lines[0]}" = pwned ]      # written into the volume
  [[ "$output" == *"ermission denied"* ]]
  [ "$(cat "$BUNDLE/rootfs/etc/victim")" = orig ]
  [ "$(cat "$BUNDLE/rootfs/home/victim")" = orig ]
}

@test "exec: a 40k-path fs_readable annotation runs, and exec gets the same rules" {
  seq 0 39999 | sed 's|^|/r/|' | paste -sd, > "$BATS_TEST_TMPDIR/list"
  mkdir -p "$BUNDLE/rootfs/r/39999"
  jq --rawfile l "$BATS_TEST_TMPDIR/list" \
    '.root.readonly=false | .annotations["run.oci.sandlock.fs_readable"]=("/," + ($l|rtrimstr("\n")))' \
    "$BUNDLE/config.json" > "$BATS_TEST_TMPDIR/c.json"
  mv "$BATS_TEST_TMPDIR/c.json" "$BUNDLE/config.json"
  cmd sleep 300
  rt run -d -b "$BUNDLE" "$ID"
  run rt exec "$ID" sh -c 'ls -d /r/39999; echo x >> /etc/victim'
  [ "${lines[0]}" = /r/39999 ]
  [[ "$output" == *"ermission denied"* ]]
  [ "$(cat "$BUNDLE/rootfs/etc/victim")" = orig ]
}

# Decided (docs/security.md): an exec'd process has a Landlock domain of its
# own, a sibling of the init's; Landlock lets a process ptrace (and read
# /proc/PID/environ, mem, ...) only of processes in its domain or below.
# So an exec session cannot read the container's processes, and, the part
# that matters, the container cannot read or trace the exec session.
@test "exec: exec session and container processes cannot ptrace-read each other; own children can" {
  mkdir -p "$BATS_TEST_TMPDIR/sig"
  mkfifo "$BATS_TEST_TMPDIR/sig/pid" "$BATS_TEST_TMPDIR/sig/ready"
  cfg ".mounts += [{\"destination\":\"/sig\",\"type\":\"bind\",\"source\":\"$BATS_TEST_TMPDIR/sig\",\"options\":[\"rbind\"]}]"
  cfg '.process.env += ["INIT_SECRET=i"]'
  cmd sh -c 'read p < /sig/pid; cat /proc/$p/environ >/dev/null 2>&1; echo "rc=$?" > /sig/ready; exec sleep 300'
  rt run -d -b "$BUNDLE" "$ID"
  run rt exec "$ID" cat /proc/1/environ
  [ "$status" -ne 0 ]
  [[ "$output" == *"ermission denied"* ]]
  # the child's environ is read only once it has exec'd: cat opens the fifo
  # after its execve, and the writer's open returns only then (reading a
  # process's environ while it execs can find no mm and read nothing)
  mkfifo "$BATS_TEST_TMPDIR/sig/child"
  run rt exec "$ID" sh -c 'cat /sig/child >/dev/null & exec 3>/sig/child
    tr "\0" "\n" < /proc/$!/environ | grep -c ^PATH=; exec 3>&-; wait'
  [ "$status" -eq 0 ]
  [ "$output" = 1 ]
  rt exec -d -e EXEC_SECRET=e "$ID" sh -c 'echo $$ > /sig/pid; exec sleep 300'
  local line
  read -r -t 20 line < "$BATS_TEST_TMPDIR/sig/ready"
  [ "$line" = "rc=1" ]
}

@test "exec: works into a container with every protection disabled (no rules, empty record)" {
  cfg '.annotations["run.oci.sandlock.disable"]="fs,scope-signal,scope-abstract-unix,seccomp"'
  cmd sleep 300
  rt run -d -b "$BUNDLE" "$ID"
  run rt exec "$ID" echo exec-ok
  echo "$output"
  [ "$status" -eq 0 ]
  [ "$output" = exec-ok ]
}
