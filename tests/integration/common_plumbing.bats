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
