# Shared by the checkpoint bats files (docs/checkpoint.md): load after
# ../lib/common.

# Root and the common per-test setup; the container's output goes to
# $OUT, a restored one's to $OUT2, the image to $IMG.
checkpoint_setup() {
  common_setup
  require_root
  OUT=$BATS_TEST_TMPDIR/out
  OUT2=$BATS_TEST_TMPDIR/out2
  IMG=$BATS_TEST_TMPDIR/img
}

# Runs the bundle detached as $1 with stdout to $OUT (stdin /dev/null).
start() { # id
  (cd "$BUNDLE" && rt run -d "$1" < /dev/null > "$OUT" 2>&1)
}

# Restores $IMG as container $1 (detached), its stdout to file $2.
restore_as() { # id out
  (cd "$BUNDLE" && rt restore -d --image-path "$IMG" "$1" < /dev/null > "$2" 2>&1)
}

# Waits (up to 5 s) for a line matching $2 in file $1.
wait_for() { # file regex
  local i
  for i in $(seq 50); do
    grep -q -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# Waits (up to 5 s) for a line matching $1 in the container's output.
wait_out() { wait_for "$OUT" "$1"; } # regex

status_of() { rt state "$1" | jq -r .status; }

# Tells every thread of cl_procs (tests/helpers) to do $1 (with argument
# $2), through $CMDDIR/cmd; $SEQ numbers the commands.
say_cmd() { # word [arg]
  SEQ=$((SEQ + 1))
  echo "$SEQ $1 ${2:-}" > "$CMDDIR/cmd.new"
  mv "$CMDDIR/cmd.new" "$CMDDIR/cmd"
}
