# Shared by the namespace-less bats files (nsless.bats, nsless-domain.bats):
# an ordinary user for whom the test itself makes user namespaces
# unavailable (tests/helpers/nouserns) runs the runtime on a busybox bundle
# in $D.  Load after ../lib/common.

nsless_setup() {
  require_root
  [ -x "$SANDLOCK_HELPERS/nouserns" ] || skip "build the helpers (make helpers)"
  "$SANDLOCK_OCI" check | grep -q '^isolation landlock (no namespaces): yes' \
    || skip "namespace-less mode unavailable here: $("$SANDLOCK_OCI" check | grep '^isolation landlock')"
  D=$(mktemp -d /tmp/sandlock-nsless.XXXXXX)
  chmod 755 "$D"
  make_rootfs "$D/bundle/rootfs"
  mkdir -p "$D/xdg" "$D/devnull"
  (cd "$D/bundle" && "$SANDLOCK_OCI" spec)
  jq '.process.terminal=false | .root.readonly=false | del(.hostname)
      | .process.user={uid:65534,gid:65534}' "$D/bundle/config.json" > "$D/c"
  mv "$D/c" "$D/bundle/config.json"
  chown -R nobody "$D"
  # The notify supervisor opens /dev/null; where the host's is not
  # writable by an ordinary user, a private mount namespace of the test
  # gets a good one (nothing of the host changes).
  cat > "$D/enter.sh" <<EOF
#!/bin/sh
if ! su nobody -s /bin/sh -c 'test -w /dev/null'; then
  mount -t tmpfs none $D/devnull && mknod -m 666 $D/devnull/null c 1 3 \
    && mount --bind $D/devnull/null /dev/null || exit 99
fi
exec su nobody -s /bin/sh -c "cd $D/bundle && XDG_RUNTIME_DIR=$D/xdg exec $SANDLOCK_HELPERS/nouserns $SANDLOCK_OCI --root $D/state \$*"
EOF
  chmod 755 "$D/enter.sh"
}

nsless_teardown() {
  [ -n "${LISTENER:-}" ] && kill "$LISTENER" 2>/dev/null
  if [ -d "${D:-}/state" ]; then
    for id in $(as_user list -q 2>/dev/null); do as_user delete -f "$id"; done
  fi
  # as_root's containers (a test that failed half-way leaves them running)
  if [ -d "${D:-}/rstate" ]; then
    for id in $("$SANDLOCK_OCI" --root "$D/rstate" list -q 2>/dev/null); do
      "$SANDLOCK_OCI" --root "$D/rstate" delete -f "$id"
    done
  fi
  rm -rf "$D"
}

# The bundle's rootfs.
R() { echo "$D/bundle/rootfs"; }
# The runtime as root, namespace-less by choice (--isolation landlock), on
# the same bundle with a state root of its own.
as_root() { "$SANDLOCK_OCI" --root "$D/rstate" run --isolation landlock -b "$D/bundle" "$@"; }
# The rootfs owned by root, as an image unpacked by root is (nsless_setup
# gives it to nobody).
root_rootfs() { chown -R 0:0 "$D/bundle/rootfs"; chmod 1777 "$D/bundle/rootfs/tmp"; }
# Runs shell text $1 as nobody with user namespaces unavailable; $RT is the
# runtime with this test's --root, the cwd the bundle.
as_user_sh() {
  printf '%s\n' "RT=\"$SANDLOCK_OCI --root $D/state\"" "$1" > "$D/cmd.sh"
  chown nobody "$D/cmd.sh"
  unshare -m --propagation private su nobody -s /bin/sh -c \
    "cd $D/bundle && HOME=$D XDG_RUNTIME_DIR=$D/xdg exec $SANDLOCK_HELPERS/nouserns sh $D/cmd.sh"
}
# Copies the host's dynamic /bin/echo and its libraries into the rootfs.
dyn_echo() {
  local f
  mkdir -p "$(R)/opt"
  cp /bin/echo "$(R)/opt/dynecho"
  for f in $(ldd /bin/echo | grep -o '/[^ ]*'); do
    mkdir -p "$(R)$(dirname "$f")"; cp -L "$f" "$(R)$f"
  done
}
# The runtime as nobody, user namespaces unavailable.
as_user() { unshare -m --propagation private "$D/enter.sh" "$@"; }
# Edits the bundle's config.json with jq filter $1 (kept nobody's).
jqc() { jq "$1" "$D/bundle/config.json" > "$D/c" && mv "$D/c" "$D/bundle/config.json" && chown nobody "$D/bundle/config.json"; }
# Sets process.args.
args() {
  local a='[]' x
  for x in "$@"; do a=$(jq -c --arg x "$x" '. + [$x]' <<<"$a"); done
  jqc ".process.args=$a"
}
