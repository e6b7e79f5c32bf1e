#!/bin/bash
# Image pull + unpack from a local registry (issue 5): sandlock-oci pull
# against `skopeo copy docker://… oci:…` + `umoci raw unpack`, on
#   (a) ~300 MB in 8 incompressible gzip layers,
#   (b) ~40 MB of gzip unpacking to ~190 MB in ~12k files (/usr/include and
#       /usr/lib/python3.*),
#   (c) a busybox image.
# Every run gets a fresh cache / target directory (never a just-deleted
# tree).  Median wall time and mean CPU time (user+sys) from hyperfine,
# reported as ratios skopeo+umoci / sandlock-oci (> 1: we are faster).
#   SANDLOCK_OCI=./sandlock-oci RUNS=5 tests/bench/image.sh
# Start it when nothing has deleted many files for a few minutes (a
# previous run's cleanup included): ext4 without a journal skips inodes
# freed in the last 60 s (360 s while their table is unwritten) when it
# allocates new ones, scanning past them, and file creation then runs
# several times slower -- whichever tool runs first pays most of it.
set -euo pipefail
# skopeo as root rewrites /var/lib/containers/cache/blob-info-cache-v1.boltdb
# on every copy: the whole bench (both tools alike) runs in a private mount
# namespace with a tmpfs there, so the host's state is left alone.
if [ "$(id -u)" = 0 ] && [ -z "${SANDLOCK_BENCH_NS:-}" ] && command -v unshare >/dev/null; then
  over=/var/lib/containers
  [ -d "$over" ] || over=/var/lib
  export SANDLOCK_BENCH_NS=1
  exec unshare -m --propagation private \
    sh -c 'mount -t tmpfs tmpfs "$0" && exec "$@"' "$over" bash "$0" "$@"
fi
cd "$(dirname "$0")/../.."
export SANDLOCK_OCI=${SANDLOCK_OCI:-$PWD/sandlock-oci}
export SANDLOCK_TESTS_DIR=$PWD/tests
RUNS=${RUNS:-5}
for t in skopeo umoci hyperfine /usr/bin/docker-registry jq; do
  command -v "$t" >/dev/null || { echo "# skip: $t not installed"; exit 0; }
done
# shellcheck source=../lib/registry.bash
. tests/lib/registry.bash
dir=$(mktemp -d /var/tmp/sandlock-bench-image.XXXXXX)
trap 'reg_stop_all "$dir"; rm -rf "$dir"' EXIT
MK="python3 tests/lib/mkimage.py"

echo "# building fixtures in $dir" >&2
mkdir -p "$dir/a"
for i in 1 2 3 4 5 6 7 8; do
  mkdir -p "$dir/a/l$i" && head -c 37M /dev/urandom > "$dir/a/l$i/blob$i"
done
$MK image "$dir/lay" "$dir"/a/l{1,2,3,4,5,6,7,8} --tag a --level 1 >/dev/null
rm -rf "$dir/a"
py=$(cd / && ls -d usr/lib/python3.* | head -1)
tar -C / -cf "$dir/b.tar" usr/include "$py"
$MK image "$dir/lay" "$dir/b.tar" --tag b >/dev/null
rm -f "$dir/b.tar"
mkdir -p "$dir/c/bin"
cp "${BUSYBOX:-/bin/busybox}" "$dir/c/bin/busybox"
for a in sh ls cat; do ln -s busybox "$dir/c/bin/$a"; done
$MK image "$dir/lay" "$dir/c" --tag c >/dev/null
reg_start B "$dir/reg"
for t in a b c; do push "$dir/lay:$t" "$REG_B_PORT" "bench/img:$t"; done
rm -rf "$dir/lay"
mkdir -p "$dir/runs"

printf '%-4s %10s %10s %8s   %10s %10s %8s\n' image ours_s theirs_s wall_x ours_cpu theirs_cpu cpu_x
# Each timed run gets a fresh $cur, made by --prepare outside the timing: the
# previous one is renamed away, not deleted (ext4 creates files slowly next
# to thousands just deleted), and synced, so that no run pays for the
# writeback of the runs before it (the (a) runs leave GBs of dirty pages,
# which made whichever tool ran next look several times slower on (b)).
cur=$dir/runs/cur
prep="mv $cur $dir/runs/old.\$(date +%s%N) 2>/dev/null; mkdir $cur; sync"
for t in a b c; do
  ref="docker://127.0.0.1:$REG_B_PORT/bench/img:$t"
  runs=$RUNS
  [ "$t" = c ] && runs=${RUNS_C:-$((RUNS * 6))}   # ~35 ms each: more runs, steadier median
  hyperfine --runs "$runs" --warmup 2 --export-json "$dir/$t.json" --prepare "$prep" \
    "$SANDLOCK_OCI pull -q --cache-dir $cur/cache $ref" \
    "skopeo copy -q --src-tls-verify=false $ref oci:$cur/lay:x && umoci raw unpack --image $cur/lay:x $cur/rootfs" \
    >/dev/null
  jq -r --arg t "$t" '.results as $r |
     [$r[0].median, $r[1].median, ($r[0].user + $r[0].system), ($r[1].user + $r[1].system)] |
     "\($t)    \(.[0]*1000|floor)ms \(.[1]*1000|floor)ms \(.[1]/.[0]*100|floor/100)x   \(.[2]*1000|floor)ms \(.[3]*1000|floor)ms \(.[3]/.[2]*100|floor/100)x"' \
     "$dir/$t.json" | awk '{printf "%-4s %10s %10s %8s   %10s %10s %8s\n", $1,$2,$3,$4,$5,$6,$7}'
done
