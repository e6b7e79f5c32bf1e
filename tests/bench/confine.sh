#!/bin/bash
# Cost of confinement (issue 3): container start with and without
# Landlock + seccomp, and a syscall-heavy loop (getpid + open/close) inside
# a confined container vs on the host, reported as ratios.
#   SANDLOCK_OCI=./sandlock-oci SANDLOCK_HELPERS=build/helpers tests/bench/confine.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
export SANDLOCK_OCI=${SANDLOCK_OCI:-$PWD/sandlock-oci}
export SANDLOCK_HELPERS=${SANDLOCK_HELPERS:-$PWD/build/helpers}
RUNS=${RUNS:-30}
ITERS=${ITERS:-200000}
[ "$(id -u)" = 0 ] || { echo "# skip: needs root"; exit 0; }
command -v hyperfine >/dev/null || { echo "# skip: hyperfine not installed"; exit 0; }
# shellcheck source=../lib/common.bash
. tests/lib/common.bash
dir=$(mktemp -d /tmp/sandlock-bench-confine.XXXXXX)
trap 'rm -rf "$dir"' EXIT
make_bundle "$dir/on" true
make_bundle "$dir/off" true
cfg_in "$dir/off" '.annotations["run.oci.sandlock.disable"]="fs,fs-truncate,fs-ioctl-dev,net-tcp,scope-signal,scope-abstract-unix,seccomp"'

hyperfine -N --warmup 3 --runs "$RUNS" --export-json "$dir/start.json" \
  "$SANDLOCK_OCI --root $dir/state run --bundle $dir/on  bench-on" \
  "$SANDLOCK_OCI --root $dir/state run --bundle $dir/off bench-off" >/dev/null
on=$(jq '.results[0].mean * 1000' "$dir/start.json")
off=$(jq '.results[1].mean * 1000' "$dir/start.json")
printf 'start, confined:      %.2f ms\n' "$on"
printf 'start, unconfined:    %.2f ms\n' "$off"
printf 'start ratio:          %.3f\n' "$(echo "$on / $off" | bc -l)"

cfg_in "$dir/on" ".process.args=[\"sysc\",\"loop\",\"$ITERS\"]"
cfg_in "$dir/off" ".process.args=[\"sysc\",\"loop\",\"$ITERS\"]"
in_on=$("$SANDLOCK_OCI" --root "$dir/state" run --bundle "$dir/on" loop-on)
in_off=$("$SANDLOCK_OCI" --root "$dir/state" run --bundle "$dir/off" loop-off)
host=$("$SANDLOCK_HELPERS/sysc" loop "$ITERS")
printf 'loop ns/iter, host:        %s\n' "$host"
printf 'loop ns/iter, unconfined:  %s\n' "$in_off"
printf 'loop ns/iter, confined:    %s\n' "$in_on"
printf 'loop ratio confined/host:  %.3f\n' "$(echo "$in_on / $host" | bc -l)"
printf 'loop ratio confined/unconfined: %.3f\n' "$(echo "$in_on / $in_off" | bc -l)"
