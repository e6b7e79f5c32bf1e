#!/usr/bin/env bats
# What the build promises about the binary: the image libraries (libcurl,
# openssl, libzstd, libarchive) are dlopened by a pull, never loaded by a
# container's lifecycle commands, whatever the toolchain's linker default.
load ../lib/common

setup() { common_setup; }
teardown() { common_teardown; }

@test "build: state loads no image library (LD_DEBUG=libs)" {
  run env LD_DEBUG=libs "$SANDLOCK_OCI" --root "$BATS_TEST_TMPDIR/root" state nosuch
  [ "$status" -ne 0 ]
  [[ "$output" == *"libseccomp"* ]]     # control: the trace is there
  [[ "$output" != *libcurl* && "$output" != *libssl* && "$output" != *libarchive* ]]
}

@test "build: linked --as-needed even where the toolchain's default is not (LDFLAGS=-Wl,--no-as-needed)" {
  top=$SANDLOCK_TESTS_DIR/..
  [ -f "$top/build/obj/oci/main.o" ] || skip "needs the objects of a built tree"
  line=$(make -s -C "$top" --no-print-directory -n -W oci/main.c sandlock-oci \
           LDFLAGS=-Wl,--no-as-needed | grep -- ' -o sandlock-oci ')
  [ -n "$line" ]
  (cd "$top" && eval "${line/ -o sandlock-oci / -o $BATS_TEST_TMPDIR/sl }")
  run readelf -d "$BATS_TEST_TMPDIR/sl"
  [[ "$output" == *libseccomp* ]]       # control: NEEDED entries are listed
  [[ "$output" != *libcurl* && "$output" != *libssl* && "$output" != *libzstd* ]]
}

@test "build: no call or include loop between the files of a folder; oci/ sees only runtime.h and config.h" {
  top=$SANDLOCK_TESTS_DIR/..
  [ -f "$top/build/obj/runtime/container.o" ] || skip "needs the objects of a built tree"
  command -v nm >/dev/null || skip "nm (binutils) missing"
  run python3 "$SANDLOCK_TESTS_DIR/lib/layering.py" "$top"
  echo "$output"
  [ "$status" -eq 0 ]
  [[ "$output" == *"0 violation(s)"* ]]
}
