#!/bin/bash
# Container start: `run` of a busybox bundle executing /bin/true with
# sandlock-oci, crun and runc, interleaved run by run (interleave.py: a VM
# whose speed drifts slows every runtime alike), reported as medians and
# ratios to crun.  Same conditions for all three, in one private mount
# namespace: the state roots on a tmpfs (as /run is on a real host), and
# two cgroup set-ups — cgroup v1 only (/sys/fs/cgroup/unified unmounted:
# crun 1.8.1 refuses hybrid cgroups) and pure cgroup v2 (a cgroup2 mount
# over /sys/fs/cgroup).  A plain fork+exec of the static binary is the floor.
# RUNS=40 by default.
set -e
cd "$(dirname "$0")/../.."
[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 0; }
RUNS=${RUNS:-40}
export SANDLOCK_OCI=$PWD/sandlock-oci
dir=$(mktemp -d /tmp/sandlock-bench.XXXXXX)
trap 'rm -rf "$dir"' EXIT
source tests/lib/common.bash
make_rootfs "$dir/bundle/rootfs"
(cd "$dir/bundle" && "$SANDLOCK_OCI" spec)
jq '.ociVersion="1.0.2" | .process.terminal=false | .process.args=["/bin/true"]' "$dir/bundle/config.json" > "$dir/c" && mv "$dir/c" "$dir/bundle/config.json"
mkdir "$dir/roots"
cmds=("sandlock-oci=$SANDLOCK_OCI --root $dir/roots/s run -b $dir/bundle bench")
command -v crun >/dev/null && cmds+=("crun=crun --root $dir/roots/c run -b $dir/bundle bench")
command -v runc >/dev/null && cmds+=("runc=runc --root $dir/roots/r run -b $dir/bundle bench")
cmds+=("fork+exec=$dir/bundle/rootfs/bin/busybox true")
export dir RUNS
for cg in v1 v2; do
  echo "### cgroup $cg"
  unshare -m bash -c '
    mount -t tmpfs tmpfs "$dir/roots"
    if [ "$0" = v2 ]; then
      umount -l /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup
    else
      umount /sys/fs/cgroup/unified 2>/dev/null || true
    fi
    python3 tests/bench/interleave.py --runs "$RUNS" --warmup 3 \
      --json "$dir/$0.json" "$@" >/dev/null
  ' "$cg" "${cmds[@]}"
  python3 - "$dir/$cg.json" <<'PY'
import json, statistics, sys
r = json.load(open(sys.argv[1]))
med = {n: statistics.median(v["wall"]) * 1e3 for n, v in r.items()}
cpu = {n: statistics.median(v["cpu"]) * 1e3 for n, v in r.items()}
base = med.get("crun")
print("| runtime | median wall ms | median cpu ms | vs crun |")
print("|---|---|---|---|")
for n in r:
    ratio = f"{med[n] / base:.2f}x" if base else "-"
    print(f"| {n} | {med[n]:.2f} | {cpu[n]:.2f} | {ratio} |")
PY
done
