#!/bin/bash
# Image pull + unpack from a local registry (issue 5): sandlock-oci pull
# against `skopeo copy docker://… oci:…` + `umoci raw unpack`, on
#   (a) ~300 MB in 8 incompressible gzip layers,
#   (b) ~40 MB of gzip unpacking to ~190 MB in ~12k files (/usr/include and
#       /usr/lib/python3.*),
#   (c) a busybox image.
# Every run gets a fresh cache / target directory (never a just-deleted
# tree).  The two sides run interleaved, round by round
# (tests/bench/interleave.py: the VM's speed drifts by minutes, and a
# batch of one command after a batch of the other measured the drift);
# median wall time and median CPU time (user+sys of each program, from
# wait4), reported as ratios skopeo+umoci / sandlock-oci (> 1: we are
# faster), and the median peak RSS of each side in MB (wait4's ru_maxrss;
# for skopeo+umoci the larger of the two programs').
#   SANDLOCK_OCI=./sandlock-oci RUNS=5 [IMAGES="a b c"] tests/bench/image.sh
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
for t in skopeo umoci python3 /usr/bin/docker-registry jq; do
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

printf '%-4s %10s %10s %8s   %10s %10s %8s   %8s %8s\n' image ours_s theirs_s wall_x ours_cpu theirs_cpu cpu_x ours_rss their_rss
# Each timed run gets a fresh $cur, made by the prepare step outside the
# timing: the previous one is synced (no run pays for the writeback of
# the runs before it), its page cache dropped (tests/bench/evict.py: this
# VM hands free memory back to its host, and writing into such pages cost
# a host fault each -- runs kept getting slower as the page cache grew),
# and renamed away, not deleted (ext4 creates files slowly next to
# thousands just deleted); then 0.2 s for the registry to go idle (right
# behind a skopeo+umoci run it was still busy, 2-3 ms slower on (c)).
cur=$dir/runs/cur
prep="sync; python3 tests/bench/evict.py $cur; mv $cur $dir/runs/old.\$(date +%s%N) 2>/dev/null; mkdir $cur; sleep 0.2"
for t in ${IMAGES:-a b c}; do
  ref="docker://127.0.0.1:$REG_B_PORT/bench/img:$t"
  runs=$RUNS
  [ "$t" = c ] && runs=${RUNS_C:-$((RUNS * 6))}   # ~35 ms each: more runs, steadier median
  python3 tests/bench/interleave.py --runs "$runs" --warmup 2 --prepare "$prep" \
    --json "$dir/$t.json" \
    "ours=$SANDLOCK_OCI pull -q --cache-dir $cur/cache $ref" \
    "theirs=skopeo copy -q --src-tls-verify=false $ref oci:$cur/lay:x && umoci raw unpack --image $cur/lay:x $cur/rootfs" \
    >/dev/null
  jq -r --arg t "$t" 'def med: sort | if length % 2 == 1 then .[(length/2|floor)] else (.[(length/2-1)] + .[(length/2)]) / 2 end;
     [(.ours.wall|med), (.theirs.wall|med), (.ours.cpu|med), (.theirs.cpu|med), (.ours.rss|med), (.theirs.rss|med)] |
     "\($t)    \(.[0]*1000|floor)ms \(.[1]*1000|floor)ms \(.[1]/.[0]*100|floor/100)x   \(.[2]*1000|floor)ms \(.[3]*1000|floor)ms \(.[3]/.[2]*100|floor/100)x   \(.[4]/1024|floor)MB \(.[5]/1024|floor)MB"' \
     "$dir/$t.json" | awk '{printf "%-4s %10s %10s %8s   %10s %10s %8s   %8s %8s\n", $1,$2,$3,$4,$5,$6,$7,$8,$9}'
done
