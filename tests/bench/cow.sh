#!/bin/bash
# 1. run --image start with the copy-on-write layer (the cached rootfs as an
# overlay lower) against the copy it replaces (`bundle` + `run -b`, what
# run --image did before) and against `run -b` of a ready bundle (the
# floor), side by side in one hyperfine run.  The image: busybox plus FILES
# files totalling SIZE_MB MiB (defaults 12000 / 200: ~12k files, ~200 MB).
# RUNS=20 by default.
set -e
cd "$(dirname "$0")/../.."
[ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 0; }
command -v hyperfine >/dev/null || { echo "skip: hyperfine missing"; exit 0; }
RUNS=${RUNS:-20} FILES=${FILES:-12000} SIZE_MB=${SIZE_MB:-200}
S=$PWD/sandlock-oci
dir=$(mktemp -d /var/tmp/sandlock-bench-cow.XXXXXX)
trap 'rm -rf "$dir"' EXIT
source tests/lib/common.bash
# BENCH=image, BENCH=copyup or BENCH=commit runs one part (default all)
if [ "${BENCH:-all}" = all ] || [ "${BENCH:-all}" = image ]; then
make_rootfs "$dir/l"
python3 - "$dir/l/data" "$FILES" "$SIZE_MB" <<'PY'
import os, sys
top, n, mb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
per = mb * 1024 * 1024 // max(n, 1)
for i in range(n):
    d = os.path.join(top, "d%03d" % (i // 100))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d" % i), "wb") as f:
        f.write(os.urandom(per))
PY
python3 tests/lib/mkimage.py image "$dir/lay" "$dir/l" --tag t --level 1 >/dev/null
img="oci:$dir/lay:t" cache=$dir/cache
"$S" --root "$dir/s" pull --cache-dir "$cache" "$img" >/dev/null
"$S" --root "$dir/s" bundle --cache-dir "$cache" "$img" "$dir/ready" -- /bin/true >/dev/null
"$S" --root "$dir/s" run --image "$img" --cache-dir "$cache" probe -- /bin/true 2>"$dir/warn"
mode=overlay; grep -q "copying the cached rootfs" "$dir/warn" && mode="copy (no overlayfs here)"
hyperfine -N --warmup 2 --runs "$RUNS" --export-json "$dir/h.json" \
  "$S --root $dir/s run --image $img --cache-dir $cache c1 -- /bin/true" \
  --prepare "rm -rf $dir/b2" \
  "sh -c '$S --root $dir/s bundle --cache-dir $cache $img $dir/b2 -- /bin/true >/dev/null && $S --root $dir/s run -b $dir/b2 c2'" \
  "$S --root $dir/s run -b $dir/ready c3" >/dev/null 2>&1
echo "image: $FILES files, $SIZE_MB MiB; run --image rootfs: $mode"
python3 - "$dir/h.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
names = ["run --image (cow layer)", "bundle (copy) + run -b", "run -b ready bundle"]
floor = r[2]["median"]
print("| start | median ms | mean ms | stddev ms | minus ready bundle |")
print("|---|---|---|---|---|")
for n, x in zip(names, r):
    print(f"| {n} | {x['median']*1e3:.2f} | {x['mean']*1e3:.2f} | {x['stddev']*1e3:.2f} | {(x['median']-floor)*1e3:+.2f} ms |")
PY
fi

# 2. copy-up: the first write to a COPYUP_MB (default 100) MiB file of a
# `cow` mount (overlayfs copies the whole file into the upper) against `cp`
# of the same file on the same filesystem.  A container that appends one
# byte to the big file, against the same container appending to a 1-byte
# file (the floor: start, a tiny copy-up, exit); the branch is kept, so no
# removal is timed, and aborted in --prepare.  copy-up = big - floor.
# Also `cp` followed by an fsync of the copy: overlayfs fsyncs a copied-up
# file before it links it into the upper.
if [ "${BENCH:-all}" = all ] || [ "${BENCH:-all}" = copyup ]; then
u=$dir/copyup MB=${COPYUP_MB:-100}
mkdir -p "$u/host" "$u/s"
head -c $((MB * 1024 * 1024)) /dev/urandom > "$u/host/big"
echo x > "$u/host/small"
for w in big small; do
  make_bundle "$u/b-$w" sh -c "echo >> /data/$w" >/dev/null
  jq --arg h "$u/host" '.mounts += [{"destination":"/data","type":"bind","source":$h,"options":["bind","cow"]}]
    | .annotations["run.oci.sandlock.cow.on_exit"]="keep"' "$u/b-$w/config.json" > "$u/j" && mv "$u/j" "$u/b-$w/config.json"
done
cat "$u/host/big" > /dev/null   # both sides read it from the page cache
hyperfine -N --runs "${COPYUP_RUNS:-10}" --export-json "$dir/u.json" \
  --prepare "sh -c '$S --root $u/s abort cu 2>/dev/null; sync; true'" \
  "$S --root $u/s run -b $u/b-big cu" \
  --prepare "sh -c '$S --root $u/s abort cu 2>/dev/null; sync; true'" \
  "$S --root $u/s run -b $u/b-small cu" \
  --prepare "sh -c 'rm -f $u/host/copy; sync'" \
  "cp $u/host/big $u/host/copy" \
  --prepare "sh -c 'rm -f $u/host/copy; sync'" \
  "sh -c 'cp $u/host/big $u/host/copy && sync $u/host/copy'" >/dev/null 2>&1
"$S" --root "$u/s" abort cu 2>/dev/null || true
echo "copy-up of a $MB MiB file (first write) vs cp"
python3 - "$dir/u.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
big, small, cp, cps = (x["median"] for x in r)
print("| | median ms | mean ms | stddev ms |")
print("|---|---|---|---|")
for n, x in zip(["container: first write to the big file", "container: first write to a 1-byte file", "cp of the big file", "cp, then fsync of the copy"], r):
    print(f"| {n} | {x['median']*1e3:.1f} | {x['mean']*1e3:.1f} | {x['stddev']*1e3:.1f} |")
print(f"| copy-up (big - 1-byte) | {(big-small)*1e3:.1f} | | |")
print(f"copy-up / cp: {(big-small)/cp:.2f}x; copy-up / (cp + fsync): {(big-small)/cps:.2f}x")
PY
fi
[ "${BENCH:-all}" = all ] || [ "${BENCH:-all}" = commit ] || exit 0

# commit of a change set of COMMIT_FILES new files (1 KiB, 100 per
# directory) vs `rsync -a` of the same upper into the same host tree, and
# vs `rsync -a --remove-source-files` (a commit consumes its upper too) and
# `rsync -a --fsync` (a commit is durable).
command -v rsync >/dev/null || { echo "skip commit bench: rsync missing"; exit 0; }
N=${COMMIT_FILES:-10000}
c=$dir/commit
mkdir -p "$c/host0" "$c/state0"
make_bundle "$c/bundle" sh -c "i=0; while [ \$i -lt $N ]; do d=/data/d\$((i/100)); [ -d \$d ] || mkdir \$d; head -c 1024 /bin/busybox > \$d/f\$i; i=\$((i+1)); done" >/dev/null
jq --arg h "$c/host" '.mounts += [{"destination":"/data","type":"bind","source":$h,"options":["bind","cow"]}]
  | .annotations["run.oci.sandlock.cow.on_exit"]="defer"' "$c/bundle/config.json" > "$c/j" && mv "$c/j" "$c/bundle/config.json"
cp -a "$c/host0" "$c/host"
"$S" --root "$c/state0" run -b "$c/bundle" cb 2>/dev/null
cp -a "$c/state0" "$c/statep"   # the record names state0's storage: restore it
upper=$(echo "$c"/statep/cow-branches/cb/*/upper)
hyperfine -N --runs "${COMMIT_RUNS:-5}" --export-json "$dir/c.json" \
  --prepare "sh -c 'rm -rf $c/host $c/state0 && cp -a $c/host0 $c/host && cp -a $c/statep $c/state0'" \
  "$S --root $c/state0 commit cb" \
  --prepare "sh -c 'rm -rf $c/host && cp -a $c/host0 $c/host'" \
  "rsync -a $upper/ $c/host/" \
  --prepare "sh -c 'rm -rf $c/host $c/up && cp -a $c/host0 $c/host && cp -a $upper $c/up'" \
  "rsync -a --remove-source-files $c/up/ $c/host/" \
  --prepare "sh -c 'rm -rf $c/host && cp -a $c/host0 $c/host'" \
  "rsync -a --fsync $upper/ $c/host/" >/dev/null 2>&1
[ -f "$c/host/d0/f0" ] || { echo "commit bench: nothing landed"; exit 1; }
echo "commit of $N new files (1 KiB each, $((N / 100)) directories)"
python3 - "$dir/c.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
print("| merge | median ms | mean ms | stddev ms | vs rsync -a |")
print("|---|---|---|---|---|")
for n, x in zip(["sandlock-oci commit", "rsync -a", "rsync -a --remove-source-files", "rsync -a --fsync"], r):
    print(f"| {n} | {x['median']*1e3:.1f} | {x['mean']*1e3:.1f} | {x['stddev']*1e3:.1f} | {x['median']/r[1]['median']:.2f}x |")
PY
