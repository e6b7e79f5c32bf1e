#!/usr/bin/env bats
# Copy-on-write branches over host directories (docs/cow.md): a bind mount
# with option "cow" is an overlay whose writes land in a branch; the
# branch is committed, aborted, kept or deferred when the container is
# gone, and outlives `delete` until decided.

load ../lib/common
load ../lib/cow

setup_file() { common_setup_file; }

setup() {
  cow_common_setup
  HOST=$BATS_TEST_TMPDIR/host
  mkdir -p "$HOST/d"
  echo old > "$HOST/f"
  echo gone > "$HOST/g"
  echo keep > "$HOST/k"
  echo "rename me please" > "$HOST/r"
  cow_mount "$BUNDLE" "$HOST"
}

teardown() { common_teardown; }

# Adds a cow bind mount of $2 at /data to bundle $1.
cow_mount() {
  cfg_in "$1" ".mounts += [{\"destination\":\"/data\",\"type\":\"bind\",
    \"source\":\"$2\",\"options\":[\"bind\",\"cow\"]}]"
}
# (one line: cmd splits its arguments at newlines)
WRITE='echo new > /data/f; rm /data/g; echo add > /data/n; mv /data/r /data/r2; chmod 600 /data/k; ln -s k /data/s; mkfifo /data/p; mkdir /data/d/x'

@test "cow: writes land in the branch, the host directory is untouched until commit" {
  ann on_exit defer
  cmd sh -c "$WRITE; cat /data/f /data/n"
  before=$(tree "$HOST")
  run rt run -b "$BUNDLE" "$(cid)"
  [ "$status" -eq 0 ]
  [[ "$output" == *new*add* ]]
  [[ "$output" == *"deferred branch"* ]]
  [ "$(tree "$HOST")" = "$before" ]
  run rt branches
  [[ "$output" == *"$(cid)"*deferred*/data*"$HOST"* ]]
  rt commit "$(cid)"
  [ "$(cat "$HOST/f")" = new ]
  [ ! -e "$HOST/g" ]
  [ "$(cat "$HOST/n")" = add ]
  [ ! -e "$HOST/r" ]
  [ "$(cat "$HOST/r2")" = "rename me please" ]
  [ "$(stat -c %a "$HOST/k")" = 600 ]
  [ "$(readlink "$HOST/s")" = k ]
  [ -p "$HOST/p" ]
  [ -d "$HOST/d/x" ]
  run rt branches
  [[ "$output" != *"$(cid)"* ]]
}

@test "cow: changes --format json, field by field" {
  ann on_exit defer
  cmd sh -c "$WRITE"
  rt run -b "$BUNDLE" "$(cid)" 2>/dev/null
  j=$(rt changes --format json "$(cid)")
  [ "$(jq -r '.[0].mount' <<<"$j")" = /data ]
  [ "$(jq -r '.[0].lower' <<<"$j")" = "$HOST" ]
  [ "$(jq -r '.[0].state' <<<"$j")" = deferred ]
  c() { jq -c ".[0].changes[] | select(.path==\"$1\") | $2" <<<"$j"; }
  [ "$(c f .op)" = '"modified"' ]
  [ "$(c f .before.sha256)" = "\"$(echo old | sha256sum | cut -d' ' -f1)\"" ]
  [ "$(c f .after.sha256)" = "\"$(echo new | sha256sum | cut -d' ' -f1)\"" ]
  [ "$(c f .after.size)" = 4 ]
  [ "$(c f .after.kind)" = '"file"' ]
  [ "$(c f .after.mode)" = 420 ]
  [ "$(c f .after.uid)" = 0 ]
  [ "$(c g .op)" = '"deleted"' ]
  [ "$(c g .after)" = null ]
  [ "$(c n .op)" = '"added"' ]
  [ "$(c n .before)" = null ]
  [ "$(c r2 .op)" = '"renamed"' ]
  [ "$(c r2 .from)" = '"r"' ]
  [ -z "$(c r .op)" ]
  [ "$(c k .before.mode)" = 420 ]
  [ "$(c k .after.mode)" = 384 ]
  [ "$(c k '.before.sha256 == .after.sha256')" = true ]
  [ "$(c s .after.kind)" = '"symlink"' ]
  [ "$(c s .after.target)" = '"k"' ]
  [ "$(c p .after.kind)" = '"fifo"' ]
  [ "$(c d/x .after.kind)" = '"dir"' ]
  run rt changes "$(cid)"
  [[ "$output" == *"renamed   file"*"r2 (from r)"* ]]
}

@test "cow: defaults: exit 0 commits, failure aborts" {
  cmd sh -c 'echo new > /data/f'
  rt run -b "$BUNDLE" "$(cid a)"
  [ "$(cat "$HOST/f")" = new ]
  cmd sh -c 'echo bad > /data/f; exit 3'
  run rt run -b "$BUNDLE" "$(cid b)"
  [ "$status" -eq 3 ]
  [ "$(cat "$HOST/f")" = new ]
  [ ! -e "$ROOT/cow-branches/$(cid b)" ]
  run rt branches
  [ "${#lines[@]}" -eq 1 ]
}

@test "cow: killed by a signal is a failure; keep and defer stay undecided" {
  ann on_error keep
  cmd sh -c 'echo bad > /data/f; exec sleep 100'
  rt run -b "$BUNDLE" "$(cid a)" > "$BATS_TEST_TMPDIR/out" 2>&1 &
  for _ in $(seq 200); do
    [ -e "$ROOT/cow-branches/$(cid a)/7/upper/f" ] && break
    sleep 0.05
  done
  rt kill "$(cid a)" KILL
  st=0
  wait $! || st=$?
  [ "$st" -eq 137 ]
  [[ "$(cat "$BATS_TEST_TMPDIR/out")" == *"kept branch"* ]]
  [ "$(cat "$HOST/f")" = old ]
  run rt branches
  [[ "$output" == *"$(cid a)"*kept* ]]
  rt abort "$(cid a)"
  [ ! -e "$ROOT/cow-branches/$(cid a)" ]
  [ "$(cat "$HOST/f")" = old ]
  # the run flags override the annotations, for exit 0 too
  cmd sh -c 'echo ok > /data/f'
  run rt run --cow-on-exit keep -b "$BUNDLE" "$(cid b)"
  [ "$status" -eq 0 ]
  [[ "$output" == *"kept branch"* ]]
  [ "$(cat "$HOST/f")" = old ]
  cmd sh -c 'echo x > /data/f; exit 1'
  run rt run --cow-on-error commit -b "$BUNDLE" "$(cid c)"
  [ "$status" -eq 1 ]
  [ "$(cat "$HOST/f")" = x ]
  run rt commit "$(cid b)"
  [ "$status" -ne 0 ]
  [[ "$output" == *"f"* && "$output" == *"--force"* ]]
  [ "$(cat "$HOST/f")" = x ]
  rt commit --force "$(cid b)"
  [ "$(cat "$HOST/f")" = ok ]
}

@test "cow: a branch outlives delete; delete says so; commit afterwards" {
  cmd sh -c 'echo engine > /data/f; exec sleep 100'
  rt create -b "$BUNDLE" "$(cid)"
  rt start "$(cid)"
  run rt commit "$(cid)"
  [ "$status" -ne 0 ]
  [[ "$output" == *"is running: its branches are decided once it has stopped"* ]]
  rt kill "$(cid)" KILL
  for _ in $(seq 100); do
    [ "$(rt state "$(cid)" | jq -r .status)" = stopped ] && break
    sleep 0.05
  done
  run rt delete "$(cid)"
  [ "$status" -eq 0 ]
  # the exit status was reaped by the caller: on_exit (commit) and
  # on_error (abort) differ, so the branch is deferred
  [[ "$output" == *deferred*"exit status is unknown"* ]]
  [ "$(cat "$HOST/f")" = old ]
  run rt state "$(cid)"
  [ "$status" -ne 0 ]
  run rt changes "$(cid)"
  [[ "$output" == *"modified  file"*" f"* ]]
  rt commit "$(cid)"
  [ "$(cat "$HOST/f")" = engine ]
}

@test "cow: run --keep: delete applies the decision of the recorded exit code" {
  cmd sh -c 'echo kept > /data/f'
  rt run --keep -b "$BUNDLE" "$(cid)"
  [ "$(cat "$HOST/f")" = old ]
  rt delete "$(cid)"
  [ "$(cat "$HOST/f")" = kept ]
}

@test "cow: a symlink planted in the branch, or swapped into the host, never carries commit out" {
  mkdir -p "$BATS_TEST_TMPDIR/outside"
  echo "root:x:0:0" > "$BATS_TEST_TMPDIR/outside/passwd"
  hash0=$(sha256sum /etc/passwd)
  ann on_exit defer
  cmd sh -c 'ln -s /etc /data/a; echo pwned > /data/a/passwd 2>/dev/null; echo pwned > /data/d/passwd'
  rt run -b "$BUNDLE" "$(cid)" 2>/dev/null
  # after the branch: the host directory d becomes a symlink out
  rm -r "$HOST/d"
  ln -s "$BATS_TEST_TMPDIR/outside" "$HOST/d"
  run rt commit "$(cid)"
  [ "$status" -ne 0 ]
  [[ "$output" == *"d"*"--force"* ]]
  rt commit --force "$(cid)"
  [ "$(sha256sum /etc/passwd)" = "$hash0" ]
  [ "$(cat "$BATS_TEST_TMPDIR/outside/passwd")" = "root:x:0:0" ]
  [ "$(readlink "$HOST/a")" = /etc ]
  [ ! -L "$HOST/d" ]
  [ "$(cat "$HOST/d/passwd")" = pwned ]
}

@test "cow: two branches of one directory: conflicts only where both touch" {
  ann on_exit defer
  cp -a "$BUNDLE" "$BATS_TEST_TMPDIR/b2"
  cmd sh -c 'echo one > /data/f; echo one > /data/n1'
  cfg_in "$BATS_TEST_TMPDIR/b2" '.process.args=["sh","-c","echo two > /data/k; echo two > /data/n2"]'
  cp -a "$BATS_TEST_TMPDIR/b2" "$BATS_TEST_TMPDIR/b3"
  cfg_in "$BATS_TEST_TMPDIR/b3" '.process.args=["sh","-c","echo three > /data/f"]'
  rt run -b "$BUNDLE" "$(cid a)" 2>/dev/null
  rt run -b "$BATS_TEST_TMPDIR/b2" "$(cid b)" 2>/dev/null
  rt run -b "$BATS_TEST_TMPDIR/b3" "$(cid c)" 2>/dev/null
  rt commit "$(cid a)"
  rt commit "$(cid b)"
  [ "$(cat "$HOST/f")" = one ]
  [ "$(cat "$HOST/k")" = two ]
  [ -e "$HOST/n1" ]
  [ -e "$HOST/n2" ]
  run rt commit "$(cid c)"
  [ "$status" -ne 0 ]
  [[ "$output" == *"conflict: $HOST/f"* ]]
  [ "$(cat "$HOST/f")" = one ]
  rt commit --force "$(cid c)"
  [ "$(cat "$HOST/f")" = three ]
}

@test "cow: storage annotation puts the branch there" {
  mkdir -p "$BATS_TEST_TMPDIR/store"
  ann storage "$BATS_TEST_TMPDIR/store"
  ann on_exit defer
  cmd sh -c 'echo s > /data/f'
  rt run -b "$BUNDLE" "$(cid)" 2>/dev/null
  [ -d "$BATS_TEST_TMPDIR/store/$(cid).7/upper" ] || ls -R "$BATS_TEST_TMPDIR/store"
  [ "$(cat "$BATS_TEST_TMPDIR/store/$(cid).7/upper/f")" = s ]
  rt abort "$(cid)"
  [ -z "$(ls "$BATS_TEST_TMPDIR/store")" ]
}

# bad input: an error naming the key, nothing created
bad() {
  run rt create -b "$BUNDLE" "$(cid)"
  [ "$status" -ne 0 ]
  [[ "$output" == *"$1"* ]]
  [ ! -e "$ROOT/$(cid)" ]
  [ -z "$(ls "$ROOT/cow-branches" 2>/dev/null)" ]
}

@test "cow: bad annotations and mounts are refused at create" {
  ann on_exit merge
  bad 'run.oci.sandlock.cow.on_exit: expected commit, abort, keep or defer, got "merge"'
  ann on_exit commit
  ann on_error x
  bad 'run.oci.sandlock.cow.on_error'
  ann on_error abort
  ann storage relative/dir
  bad 'run.oci.sandlock.cow.storage: "relative/dir" must be an absolute path'
  ann storage "$HOST/../host/d"
  bad 'run.oci.sandlock.cow.storage'
  ann storage "$HOST/d"
  bad 'overlap'
  cfg 'del(.annotations["run.oci.sandlock.cow.storage"])'
  ann no_such_key 1
  bad 'run.oci.sandlock.cow.no_such_key: unknown'
  cfg 'del(.annotations["run.oci.sandlock.cow.no_such_key"])'
  cfg '.mounts += [{"destination":"/t","type":"tmpfs","source":"tmpfs","options":["cow"]}]'
  bad 'options: "cow" needs a bind mount'
  cfg 'del(.mounts[-1])'
  run rt run --cow-on-exit sometimes -b "$BUNDLE" "$(cid)"
  [ "$status" -ne 0 ]
  [[ "$output" == *'--cow-on-exit: expected commit, abort, keep or defer, got "sometimes"'* ]]
  # a create that fails in the runtime leaves no branch behind
  cfg '.mounts += [{"destination":"relative","type":"tmpfs","source":"tmpfs"}]'
  bad 'destination'
}

# An image in an OCI layout, built here: busybox and a few files.
make_image() {
  local l=$BATS_TEST_TMPDIR/l1 a
  mkdir -p "$l"/{bin,etc,data/sub}
  cp "$BUSYBOX" "$l/bin/busybox"
  for a in sh ls cat echo true rm mv chmod chown mkdir touch ln grep sleep; do
    ln -s busybox "$l/bin/$a"
  done
  echo orig > "$l/data/f"; echo deep > "$l/data/sub/g"; echo h > "$l/etc/hosts"
  python3 "$SANDLOCK_TESTS_DIR/lib/mkimage.py" image "$BATS_TEST_TMPDIR/lay" \
    "$l" --tag t >/dev/null
  IMG="oci:$BATS_TEST_TMPDIR/lay:t"
  CACHE=$BATS_TEST_TMPDIR/cache
}
cache_tree() { tree "$(echo "$CACHE"/rootfs/*)"; }

@test "cow: run --image mounts the cached rootfs as a lower; the cache is never written" {
  command -v python3 >/dev/null || skip "python3 missing"
  make_image
  rt pull --cache-dir "$CACHE" "$IMG" >/dev/null
  before=$(cache_tree)
  run rt run --image "$IMG" --cache-dir "$CACHE" "$(cid)" -- sh -c \
    'grep " / / " /proc/self/mountinfo | grep -c " - overlay overlay "; echo w > /data/f; echo n > /data/new; rm /etc/hosts; rm -r /data/sub; mv /bin/ls /bin/ls2; chmod 700 /data; chown 1:1 /data/f; touch -d 2001-01-01 /bin/sh; ln /data/f /data/hl; cat /data/f'
  [ "$status" -eq 0 ]
  [[ "$output" != *"copying the cached rootfs"* ]]
  [ "${lines[0]}" = 1 ]
  [ "${lines[-1]}" = w ]
  [ "$(cache_tree)" = "$before" ]
  # the layer went with the container
  [ ! -e "$ROOT/image-bundles/$(cid)" ]
  # a second container sees the image as it was
  run rt run --image "$IMG" --cache-dir "$CACHE" "$(cid b)" -- cat /data/f /data/sub/g
  [ "$output" = "$(printf 'orig\ndeep')" ]
}

@test "cow: run --image -d: the upper is per container and goes with delete" {
  command -v python3 >/dev/null || skip "python3 missing"
  make_image
  rt run -d --image "$IMG" --cache-dir "$CACHE" "$(cid)" -- sh -c 'echo mine > /data/f; exec sleep 100'
  for _ in $(seq 200); do
    [ -e "$ROOT/$(cid)/layer/upper/data/f" ] && break
    sleep 0.05
  done
  [ "$(cat "$ROOT/$(cid)/layer/upper/data/f")" = mine ]
  [ "$(cat "$CACHE"/rootfs/*/data/f)" = orig ]
  rt delete -f "$(cid)"
  [ ! -e "$ROOT/image-bundles/$(cid)" ]
  [ ! -e "$ROOT/$(cid)" ]
}

@test "cow: bundle --cow: each container of the bundle gets its own upper" {
  command -v python3 >/dev/null || skip "python3 missing"
  make_image
  rt bundle --cow --cache-dir "$CACHE" "$IMG" "$BATS_TEST_TMPDIR/cb" -- sh -c 'cat /data/f; echo "$0" > /data/f; exec sleep 100' >/dev/null
  [ -z "$(ls -A "$BATS_TEST_TMPDIR/cb/rootfs")" ]
  [ "$(jq -r '.annotations["run.oci.sandlock.cow.rootfs_lower"]' "$BATS_TEST_TMPDIR/cb/config.json")" = "$(echo "$CACHE"/rootfs/*)" ]
  [ "$(jq -r .root.readonly "$BATS_TEST_TMPDIR/cb/config.json")" = false ]
  rt run -d -b "$BATS_TEST_TMPDIR/cb" "$(cid a)"
  rt run -d -b "$BATS_TEST_TMPDIR/cb" "$(cid b)"
  for c in a b; do
    for _ in $(seq 200); do
      [ -e "$ROOT/$(cid $c)/layer/upper/data/f" ] && break
      sleep 0.05
    done
    [ -e "$ROOT/$(cid $c)/layer/upper/data/f" ]
  done
  [ "$(cat "$CACHE"/rootfs/*/data/f)" = orig ]
  [ -z "$(ls -A "$BATS_TEST_TMPDIR/cb/rootfs")" ]
  rt delete -f "$(cid a)"
  [ ! -e "$ROOT/$(cid a)" ]
  [ "$(rt state "$(cid b)" | jq -r .status)" = running ]
}

@test "cow: rootfs_lower is validated at create" {
  cfg '.annotations["run.oci.sandlock.cow.rootfs_lower"]="relative"'
  bad 'run.oci.sandlock.cow.rootfs_lower: "relative" must be an absolute path'
  cfg ".annotations[\"run.oci.sandlock.cow.rootfs_lower\"]=\"$BATS_TEST_TMPDIR/nope\""
  bad 'run.oci.sandlock.cow.rootfs_lower'
}

@test "cow: check says how run --image gets its rootfs" {
  run rt check
  [ "$status" -eq 0 ]
  [[ "$output" == *"run --image rootfs: overlay over the cached rootfs"* ]]
}

@test "cow: rootless: a cow mount in a user namespace (userxattr), changes, commit" {
  su nobody -s /bin/sh -c 'unshare -Ur true' 2>/dev/null \
    || skip "unprivileged user namespaces are not available"
  local R
  R=$(mktemp -d /tmp/sandlock-cowrl.XXXXXX)
  chmod 755 "$R"
  make_rootfs "$R/bundle/rootfs"
  mkdir -p "$R/host/d"
  echo old > "$R/host/f"; echo gone > "$R/host/g"; echo in > "$R/host/d/x"
  # the caller's own files: the user namespace maps only the caller
  chown -R nobody:nogroup "$R"
  su nobody -s /bin/sh -c "cd $R/bundle && $SANDLOCK_OCI spec --rootless"
  jq --arg h "$R/host" '.process.terminal=false
    | .process.args=["sh","-c","echo new > /data/f; rm /data/g; rm -r /data/d; mkdir /data/d; echo n > /data/d/y"]
    | .mounts += [{"destination":"/data","type":"bind","source":$h,"options":["bind","cow"]}]
    | .annotations["run.oci.sandlock.cow.on_exit"]="defer"' \
    "$R/bundle/config.json" > "$R/c"
  chown nobody "$R/c"; mv "$R/c" "$R/bundle/config.json"
  nb() { su nobody -s /bin/sh -c "$SANDLOCK_OCI --root $R/state $*"; }
  run nb run -b "$R/bundle" rl1
  [ "$status" -eq 0 ]
  [ "$(cat "$R/host/f")" = old ]
  # whiteouts and the opaque directory are user.overlay.* xattrs here
  run nb changes --format json rl1
  [ "$status" -eq 0 ]
  j=$output
  [ "$(jq -r '.[0].changes[] | select(.path=="g") | .op' <<<"$j")" = deleted ]
  [ "$(jq -r '.[0].changes[] | select(.path=="d/x") | .op' <<<"$j")" = deleted ]
  [ "$(jq -r '.[0].changes[] | select(.path=="d/y") | .op' <<<"$j")" = added ]
  run nb commit rl1
  [ "$status" -eq 0 ]
  [ "$(cat "$R/host/f")" = new ]
  [ ! -e "$R/host/g" ]
  [ ! -e "$R/host/d/x" ]
  [ -e "$R/host/d/y" ]
  [ ! -e "$R/state/cow-branches/rl1" ]
  rm -rf "$R"
}

@test "cow: features lists the cow mount option and annotations" {
  run rt features
  [ "$status" -eq 0 ]
  [ "$(jq '.mountOptions | index("cow") != null' <<<"$output")" = true ]
  for k in on_exit on_error storage rootfs_lower; do
    [ "$(jq --arg k "run.oci.sandlock.cow.$k" '.annotations | has($k)' <<<"$output")" = true ]
  done
}

@test "cow: abort after exit 0, defer after a failure" {
  ann on_exit abort
  ann on_error defer
  cmd sh -c 'echo x > /data/f'
  rt run -b "$BUNDLE" "$(cid a)"
  [ "$(cat "$HOST/f")" = old ]
  [ ! -e "$ROOT/cow-branches/$(cid a)" ]
  cmd sh -c 'echo y > /data/f; exit 2'
  run rt run -b "$BUNDLE" "$(cid b)"
  [ "$status" -eq 2 ]
  [[ "$output" == *"deferred branch"* ]]
  run rt branches
  [[ "$output" == *"$(cid b)"*deferred* ]]
  [ "$(cat "$HOST/f")" = old ]
}

@test "cow: a directory renamed in the branch (mv copies: EXDEV) commits as the rename" {
  mkdir -p "$HOST/dirA/sub"; echo a1 > "$HOST/dirA/a1"; echo s1 > "$HOST/dirA/sub/s1"
  ann on_exit defer
  cmd sh -c 'mv /data/dirA /data/dirB && ls /data'
  run rt run -b "$BUNDLE" "$(cid)"
  [ "$status" -eq 0 ]
  j=$(rt changes --format json "$(cid)")
  [ "$(jq -r '.[0].changes[] | select(.path=="dirB/a1") | .op + " " + .from' <<<"$j")" = "renamed dirA/a1" ]
  [ "$(jq -r '.[0].changes[] | select(.path=="dirB/sub/s1") | .op + " " + .from' <<<"$j")" = "renamed dirA/sub/s1" ]
  [ "$(jq -r '.[0].changes[] | select(.path=="dirA") | .op' <<<"$j")" = deleted ]
  rt commit "$(cid)"
  [ ! -e "$HOST/dirA" ]
  [ "$(cat "$HOST/dirB/a1")" = a1 ]
  [ "$(cat "$HOST/dirB/sub/s1")" = s1 ]
}

@test "cow: rootless: a rootfs_lower container is deleted whole" {
  su nobody -s /bin/sh -c 'unshare -Ur true' 2>/dev/null \
    || skip "unprivileged user namespaces are not available"
  local R
  R=$(mktemp -d /tmp/sandlock-cowrl.XXXXXX)
  chmod 755 "$R"
  make_rootfs "$R/lower"
  mkdir -p "$R/bundle/rootfs"
  chown -R nobody:nogroup "$R"
  su nobody -s /bin/sh -c "cd $R/bundle && $SANDLOCK_OCI spec --rootless"
  jq --arg l "$R/lower" '.process.terminal=false | .root.readonly=false
    | .process.args=["sh","-c","echo w > /etc/hosts; rm /bin/ls; cat /etc/hosts"]
    | .annotations["run.oci.sandlock.cow.rootfs_lower"]=$l' \
    "$R/bundle/config.json" > "$R/c"
  chown nobody "$R/c"; mv "$R/c" "$R/bundle/config.json"
  run su nobody -s /bin/sh -c "$SANDLOCK_OCI --root $R/state run -b $R/bundle rl2"
  [ "$status" -eq 0 ]
  [ "$output" = w ]
  [ -e "$R/lower/bin/ls" ]
  [ ! -e "$R/lower/etc/hosts" ]
  [ ! -e "$R/state/rl2" ]
  rm -rf "$R"
}

@test "cow: an overlay rootfs (rootfs_lower) in the namespace-less mode is refused, naming the annotation" {
  lower=$BATS_TEST_TMPDIR/lower
  cp -a "$BUNDLE/rootfs" "$lower"
  cfg '.annotations["run.oci.sandlock.cow.rootfs_lower"]="'"$lower"'"'
  run rt create --isolation landlock -b "$BUNDLE" "$(cid)" </dev/null
  echo "$output"
  [ "$status" -ne 0 ]
  [[ "$output" == *"run.oci.sandlock.cow.rootfs_lower"*"mount namespace"* ]]
  [ -z "$(ls "$ROOT" | grep -v cow-branches)" ]
}
