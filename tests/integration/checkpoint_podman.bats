#!/usr/bin/env bats
bats_require_minimum_version 1.5.0
# podman 4.3 + conmon driving sandlock-oci's checkpoint (docs/checkpoint.md,
# "Not there yet"): podman's checkpoint goes through the runtime; its
# restore stops before the runtime, at CRIU's own inventory.img, which
# criu-lite does not fake.
load ../lib/common
load ../lib/engines

setup_file() {
  podman_setup_file
  command -v criu >/dev/null || skip "podman refuses to checkpoint without the criu package"
}
teardown_file() { podman_teardown_file; }
setup() { require_root; }

wait_log() { # name text
  local i
  for i in $(seq 100); do
    pm logs "$1" 2>&1 | grep -q -- "$2" && return 0
    sleep 0.1
  done
  return 1
}

ckdir() { # name
  echo "$ENG_DIR/root/overlay-containers/$(pm inspect -f '{{.Id}}' "$1")/userdata/checkpoint"
}

@test "podman container checkpoint: saved by sandlock-oci, the container exits" {
  pm run -d --name ck "$ENGINE_IMAGE" /bin/cl_counter -m 1
  wait_log ck "count "
  run pm container checkpoint ck
  [ "$status" -eq 0 ]
  d=$(ckdir ck)
  [ -f "$d/tree.img" ]
  [ -f "$d/1/core.img" ]
  [ "$(pm inspect -f '{{.State.Status}}' ck)" = exited ]
  # podman restore wants CRIU's inventory.img and stops before the runtime
  run pm container restore ck
  [ "$status" -ne 0 ]
  [[ "$output" == *inventory.img* ]]
}

@test "podman container checkpoint --leave-running: the container runs on" {
  pm run -d --name ck2 "$ENGINE_IMAGE" /bin/cl_counter -m 1
  wait_log ck2 "count "
  run pm container checkpoint --leave-running ck2
  [ "$status" -eq 0 ]
  [ -f "$(ckdir ck2)/1/core.img" ]
  [ "$(pm inspect -f '{{.State.Status}}' ck2)" = running ]
  n=$(pm logs ck2 | grep -c '^count ')
  sleep 0.3
  [ "$(pm logs ck2 | grep -c '^count ')" -gt "$n" ]
  pm rm -f -t 0 ck2 >/dev/null
}
