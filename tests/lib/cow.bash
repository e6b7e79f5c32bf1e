# Shared by the cow bats files (docs/cow.md): load after ../lib/common.

# Root and a kernel with overlayfs, then the common per-test setup.
cow_common_setup() {
  require_root
  grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null \
    || skip "no overlayfs in this kernel"
  common_setup
}

# Sets cow annotation run.oci.sandlock.cow.$1 to $2 in $BUNDLE.
ann() { cfg ".annotations[\"run.oci.sandlock.cow.$1\"]=\"$2\""; }

# Every path of tree $1 with its type, mode and size, then every file's
# sha256: two trees print the same iff they hold the same.
tree() { (cd "$1" && find . -printf '%p %y %m %s\n' | sort; \
          find . -type f -exec sha256sum {} + | sort); }
