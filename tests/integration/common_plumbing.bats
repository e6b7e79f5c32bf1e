#!/usr/bin/env bats
# The shared plumbing of common/ seen from a container: tmpcopyup goes
# through the one tree copier (common/copy.c), which keeps what the image
# copy keeps — hardlinks, times — not only data, modes and owners.
load ../lib/common

setup_file() { common_setup_file; }
setup() { require_root; common_setup; }
teardown() { common_teardown; }

@test "tmpcopyup keeps hardlinks, times, modes, owners and symlinks (control: /data is a tmpfs)" {
  r=$BUNDLE/rootfs
  mkdir -p "$r/data/sub"
  echo one > "$r/data/a"
  ln "$r/data/a" "$r/data/b"
  ln -s /etc/passwd "$r/data/link"
  chmod 0750 "$r/data/sub"
  chown 123:456 "$r/data/sub"
  touch -h -d @1000000000 "$r/data/a" "$r/data/sub" "$r/data/link"
  cfg '.mounts += [{"destination":"/data","type":"tmpfs","source":"tmpfs","options":["tmpcopyup"]}]'
  cmd sh -c 'grep " /data tmpfs " /proc/mounts | wc -l; stat -c "%i" /data/a /data/b; stat -c "%Y %a %u:%g" /data/a /data/sub; readlink /data/link; cat /data/b'
  run rt run -b "$BUNDLE" "$(cid)"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 1 ]                        # the copy is on the tmpfs
  [ "${lines[1]}" = "${lines[2]}" ]            # one inode for a and b
  [ "${lines[3]}" = "1000000000 644 0:0" ]
  [ "${lines[4]}" = "1000000000 750 123:456" ]
  [ "${lines[5]}" = /etc/passwd ]
  [ "${lines[6]}" = one ]
}

# Without openat2 (tests/helpers/no_openat2: ENOSYS from a seccomp filter),
# the runtime takes cm_openat2's fallback walk: containers still start, and
# a mount destination through an absolute symlink still lands inside the
# rootfs, never on the host.
@test "no openat2: check says so; a mount through an absolute symlink stays in the rootfs" {
  no=$SANDLOCK_HELPERS/no_openat2
  [ -x "$no" ] || skip "tests/helpers/no_openat2 not built (make helpers)"
  run "$no" "$SANDLOCK_OCI" check
  [[ "$output" == *"openat2: no (mount destinations resolved in root: by a component-by-component walk)"* ]]
  mkdir -p "$BUNDLE/rootfs/data"
  ln -s / "$BUNDLE/rootfs/data/up"
  host=$BATS_TEST_TMPDIR/hostside
  mkdir -p "$host"
  mkdir -p "$BUNDLE/rootfs$host"
  cfg ".mounts += [{\"destination\":\"/data/up$host\",\"type\":\"tmpfs\",\"source\":\"tmpfs\"}]"
  cmd sh -c "grep -c ' $host tmpfs ' /proc/mounts; touch $host/inside && echo wrote"
  run "$no" "$SANDLOCK_OCI" --root "$ROOT" run -b "$BUNDLE" "$(cid)"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = 1 ]                  # mounted at $host inside the rootfs
  [ "${lines[1]}" = wrote ]
  [ ! -e "$host/inside" ]                # the host's directory is untouched
  ! grep -q " $host tmpfs " /proc/mounts || false
}
